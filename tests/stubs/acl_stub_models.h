/* Part of acl_stub.c's translation unit (included after its entry points):
 * offline models that take device memory when loaded.
 *
 * A stub model names its sizes: a model file's name is
 * "model-<WORK>-<WEIGHT>.om" (the file need not exist; the directory part
 * is ignored), a model in memory is the text "model-<WORK>-<WEIGHT>"
 * (model_size its length). aclmdlQuerySize(FromMem) answers WORK and
 * WEIGHT; anything else is ACL_ERROR_INVALID_PARAM. A load takes, on the
 * current device, the work and weight memory the program does not hand in
 * (the WithMem loads with a null pointer, a config without
 * ACL_MDL_WORKSPACE_ADDR_PTR / ACL_MDL_WEIGHT_ADDR_PTR, and every other
 * load), ACL_ERROR_RT_MEMORY_ALLOCATION if the device has less; aclmdlUnload
 * gives it back. Model ids start at MODEL_ID_BASE. */
#ifndef VGPU_TESTS_ACL_STUB_MODELS_H_
#define VGPU_TESTS_ACL_STUB_MODELS_H_

#define MODEL_MAX 64
#define MODEL_ID_BASE 5000

static struct {
  int loaded;
  uint64_t work_key, weight_key; /* 0: memory the program handed in */
} g_models[MODEL_MAX];
static pthread_mutex_t g_models_mu = PTHREAD_MUTEX_INITIALIZER;

struct aclmdlConfigHandle {
  size_t type, mem_size;
  const char* path;
  const void* mem;
  void *work, *weight;
};

/* "model-<WORK>-<WEIGHT>" at the start of `name`, up to `len` chars. */
static aclError model_sizes(const char* name, size_t len, size_t* work, size_t* weight) {
  char text[96], *end;
  if (name == NULL || len < 6 || len >= sizeof(text)) return ACL_ERROR_INVALID_PARAM;
  memcpy(text, name, len), text[len] = '\0';
  if (strncmp(text, "model-", 6) != 0) return ACL_ERROR_INVALID_PARAM;
  unsigned long long w = strtoull(text + 6, &end, 10), g;
  if (*end != '-') return ACL_ERROR_INVALID_PARAM;
  g = strtoull(end + 1, &end, 10);
  if (*end != '\0' && strcmp(end, ".om") != 0) return ACL_ERROR_INVALID_PARAM;
  if (work) *work = w;
  if (weight) *weight = g;
  return ACL_SUCCESS;
}

static aclError file_sizes(const char* path, size_t* work, size_t* weight) {
  const char* base = path ? strrchr(path, '/') : NULL;
  base = base ? base + 1 : path;
  return model_sizes(base, base ? strlen(base) : 0, work, weight);
}

aclError aclmdlQuerySize(const char* path, size_t* work_size, size_t* weight_size) {
  TRY(api_ready());
  return file_sizes(path, work_size, weight_size);
}
aclError aclmdlQuerySizeFromMem(const void* model, size_t model_size, size_t* work_size, size_t* weight_size) {
  TRY(api_ready());
  return model_sizes(model, model_size, work_size, weight_size);
}

/* Takes what the program did not hand in (a part's size, or 0 for none). */
static aclError model_load(size_t work, size_t weight, uint32_t* model_id) {
  int d, slot = -1;
  uint64_t work_key = 0, weight_key = 0;
  TRY(api_current_device(&d));
  if (model_id == NULL) return ACL_ERROR_INVALID_PARAM;
  if (work && accel_reserve(KIND_HANDLE, d, work, &work_key) != ACL_SUCCESS) return ACL_ERROR_RT_MEMORY_ALLOCATION;
  if (weight && accel_reserve(KIND_HANDLE, d, weight, &weight_key) != ACL_SUCCESS) {
    if (work_key) accel_release(KIND_HANDLE, work_key);
    return ACL_ERROR_RT_MEMORY_ALLOCATION;
  }
  pthread_mutex_lock(&g_models_mu);
  for (int i = 0; i < MODEL_MAX && slot < 0; ++i)
    if (!g_models[i].loaded) slot = i;
  if (slot >= 0) g_models[slot].loaded = 1, g_models[slot].work_key = work_key, g_models[slot].weight_key = weight_key;
  pthread_mutex_unlock(&g_models_mu);
  if (slot < 0) {
    if (work_key) accel_release(KIND_HANDLE, work_key);
    if (weight_key) accel_release(KIND_HANDLE, weight_key);
    return ACL_ERROR_RT_MEMORY_ALLOCATION;
  }
  *model_id = MODEL_ID_BASE + (uint32_t)slot;
  return ACL_SUCCESS;
}

aclError aclmdlLoadFromFile(const char* path, uint32_t* model_id) {
  size_t work, weight;
  TRY(aclmdlQuerySize(path, &work, &weight));
  return model_load(work, weight, model_id);
}
aclError aclmdlLoadFromMem(const void* model, size_t model_size, uint32_t* model_id) {
  size_t work, weight;
  TRY(aclmdlQuerySizeFromMem(model, model_size, &work, &weight));
  return model_load(work, weight, model_id);
}
aclError aclmdlLoadFromFileWithMem(const char* path, uint32_t* model_id, void* work, size_t work_size, void* weight,
                                   size_t weight_size) {
  size_t w, g;
  TRY(aclmdlQuerySize(path, &w, &g));
  return model_load(work ? 0 : w, weight ? 0 : g, model_id);
}
aclError aclmdlLoadFromMemWithMem(const void* model, size_t model_size, uint32_t* model_id, void* work,
                                  size_t work_size, void* weight, size_t weight_size) {
  size_t w, g;
  TRY(aclmdlQuerySizeFromMem(model, model_size, &w, &g));
  return model_load(work ? 0 : w, weight ? 0 : g, model_id);
}
aclError aclmdlLoadFromFileWithQ(const char* path, uint32_t* model_id, const uint32_t* input_q, size_t input_q_count,
                                 const uint32_t* output_q, size_t output_q_count) {
  return aclmdlLoadFromFile(path, model_id);
}
aclError aclmdlLoadFromMemWithQ(const void* model, size_t model_size, uint32_t* model_id, const uint32_t* input_q,
                                size_t input_q_count, const uint32_t* output_q, size_t output_q_count) {
  return aclmdlLoadFromMem(model, model_size, model_id);
}

aclmdlConfigHandle* aclmdlCreateConfigHandle(void) { return calloc(1, sizeof(aclmdlConfigHandle)); }
aclError aclmdlDestroyConfigHandle(aclmdlConfigHandle* handle) {
  if (handle == NULL) return ACL_ERROR_INVALID_PARAM;
  free(handle);
  return ACL_SUCCESS;
}
/* Pointers are passed by address and sizes as size_t, as the runtime wants. */
aclError aclmdlSetConfigOpt(aclmdlConfigHandle* handle, aclmdlConfigAttr attr, const void* value, size_t value_size) {
  if (handle == NULL || value == NULL || value_size != sizeof(void*)) return ACL_ERROR_INVALID_PARAM;
  switch (attr) {
    case ACL_MDL_LOAD_TYPE_SIZET: handle->type = *(const size_t*)value; break;
    case ACL_MDL_PATH_PTR: handle->path = *(const char* const*)value; break;
    case ACL_MDL_MEM_ADDR_PTR: handle->mem = *(const void* const*)value; break;
    case ACL_MDL_MEM_SIZET: handle->mem_size = *(const size_t*)value; break;
    case ACL_MDL_WEIGHT_ADDR_PTR: handle->weight = *(void* const*)value; break;
    case ACL_MDL_WORKSPACE_ADDR_PTR: handle->work = *(void* const*)value; break;
    default: break; /* sizes of the program's memory, priorities, queues */
  }
  return ACL_SUCCESS;
}
aclError aclmdlLoadWithConfig(const aclmdlConfigHandle* handle, uint32_t* model_id) {
  size_t w, g;
  if (handle == NULL) return ACL_ERROR_INVALID_PARAM;
  if (handle->type == ACL_MDL_LOAD_FROM_FILE || handle->type == ACL_MDL_LOAD_FROM_FILE_WITH_MEM)
    TRY(aclmdlQuerySize(handle->path, &w, &g));
  else if (handle->type == ACL_MDL_LOAD_FROM_MEM || handle->type == ACL_MDL_LOAD_FROM_MEM_WITH_MEM)
    TRY(aclmdlQuerySizeFromMem(handle->mem, handle->mem_size, &w, &g));
  else
    return ACL_ERROR_INVALID_PARAM;
  return model_load(handle->work ? 0 : w, handle->weight ? 0 : g, model_id);
}

aclError aclmdlUnload(uint32_t model_id) {
  uint32_t slot = model_id - MODEL_ID_BASE;
  uint64_t keys[2] = {0, 0};
  TRY(api_ready());
  pthread_mutex_lock(&g_models_mu);
  int ok = slot < MODEL_MAX && g_models[slot].loaded;
  if (ok) keys[0] = g_models[slot].work_key, keys[1] = g_models[slot].weight_key, g_models[slot].loaded = 0;
  pthread_mutex_unlock(&g_models_mu);
  for (int i = 0; i < 2; ++i)
    if (keys[i]) accel_release(KIND_HANDLE, keys[i]);
  return ok ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

#endif /* VGPU_TESTS_ACL_STUB_MODELS_H_ */
