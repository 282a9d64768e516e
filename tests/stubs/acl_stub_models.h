/* Part of acl_stub.c's translation unit (included after its entry points):
 * offline models that take device memory when loaded.
 *
 * A stub model names its sizes: a model file's name is
 * "model-<WORK>-<WEIGHT>[-<EXTRA>].om" (the file need not exist; the
 * directory part is ignored), a model in memory is the text
 * "model-<WORK>-<WEIGHT>[-<EXTRA>]" (model_size its length). EXTRA (0 if
 * left out) is the memory of the partitions besides work and weight, split
 * evenly over the six of aclmdlExeOMDesc (model description, kernels,
 * kernel arguments, static and dynamic tasks, FIFO; the last one takes the
 * remainder). aclmdlQuerySize(FromMem) answers WORK and WEIGHT, as the real
 * ones do; aclmdlQueryExeOMDesc every partition of a file (with
 * VGPU_STUB_ACL_NO_EXEOM_DESC=1 it answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
 * as a runtime that cannot say); anything else is ACL_ERROR_INVALID_PARAM.
 * A load takes, on the current device, every partition the program does not
 * hand in (the WithMem loads' non-null pointers, a config's
 * ACL_MDL_*_PTR options), ACL_ERROR_RT_MEMORY_ALLOCATION if the device has
 * less; aclmdlUnload gives it back. A bundle (aclmdlBundleLoadFromFile/Mem)
 * is, here, one model of such a name, loaded as aclmdlLoadFromFile/Mem
 * would; aclmdlBundleUnload unloads it. Model and bundle ids start at
 * MODEL_ID_BASE. */
#ifndef VGPU_TESTS_ACL_STUB_MODELS_H_
#define VGPU_TESTS_ACL_STUB_MODELS_H_

#define MODEL_MAX 64
#define MODEL_ID_BASE 5000
/* Partitions, in aclmdlExeOMDesc's order. */
enum { PART_WORK, PART_WEIGHT, PART_DESC, PART_KERNEL, PART_ARGS, PART_STATIC, PART_DYNAMIC, PART_FIFO, PARTS };

static struct {
  int loaded;
  uint64_t keys[PARTS]; /* 0: memory the program handed in */
} g_models[MODEL_MAX];
static pthread_mutex_t g_models_mu = PTHREAD_MUTEX_INITIALIZER;

struct aclmdlConfigHandle {
  size_t type, mem_size;
  const char* path;
  const void* mem;
  void* parts[PARTS]; /* handed in by the program */
};

/* The partitions of "model-<WORK>-<WEIGHT>[-<EXTRA>]" at the start of
 * `name`, up to `len` chars. */
static aclError model_parts(const char* name, size_t len, size_t parts[PARTS]) {
  char text[128], *end;
  unsigned long long w, g, extra = 0;
  if (name == NULL || len < 6 || len >= sizeof(text)) return ACL_ERROR_INVALID_PARAM;
  memcpy(text, name, len), text[len] = '\0';
  if (strncmp(text, "model-", 6) != 0) return ACL_ERROR_INVALID_PARAM;
  w = strtoull(text + 6, &end, 10);
  if (*end != '-') return ACL_ERROR_INVALID_PARAM;
  g = strtoull(end + 1, &end, 10);
  if (*end == '-') extra = strtoull(end + 1, &end, 10);
  if (*end != '\0' && strcmp(end, ".om") != 0) return ACL_ERROR_INVALID_PARAM;
  parts[PART_WORK] = w, parts[PART_WEIGHT] = g;
  for (int p = PART_DESC; p < PARTS; ++p) parts[p] = extra / 6;
  parts[PART_FIFO] += extra % 6;
  return ACL_SUCCESS;
}

static aclError file_parts(const char* path, size_t parts[PARTS]) {
  const char* base = path ? strrchr(path, '/') : NULL;
  base = base ? base + 1 : path;
  return model_parts(base, base ? strlen(base) : 0, parts);
}

aclError aclmdlQuerySize(const char* path, size_t* work_size, size_t* weight_size) {
  size_t parts[PARTS];
  TRY(api_ready());
  TRY(file_parts(path, parts));
  if (work_size) *work_size = parts[PART_WORK];
  if (weight_size) *weight_size = parts[PART_WEIGHT];
  return ACL_SUCCESS;
}
aclError aclmdlQuerySizeFromMem(const void* model, size_t model_size, size_t* work_size, size_t* weight_size) {
  size_t parts[PARTS];
  TRY(api_ready());
  TRY(model_parts(model, model_size, parts));
  if (work_size) *work_size = parts[PART_WORK];
  if (weight_size) *weight_size = parts[PART_WEIGHT];
  return ACL_SUCCESS;
}
aclError aclmdlQueryExeOMDesc(const char* path, aclmdlExeOMDesc* desc) {
  size_t parts[PARTS];
  const char* off = getenv("VGPU_STUB_ACL_NO_EXEOM_DESC");
  TRY(api_ready());
  if (off != NULL && strcmp(off, "1") == 0) return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
  if (desc == NULL) return ACL_ERROR_INVALID_PARAM;
  TRY(file_parts(path, parts));
  memset(desc, 0, sizeof(*desc));
  desc->workSize = parts[PART_WORK], desc->weightSize = parts[PART_WEIGHT];
  desc->modelDescSize = parts[PART_DESC], desc->kernelSize = parts[PART_KERNEL];
  desc->kernelArgsSize = parts[PART_ARGS], desc->staticTaskSize = parts[PART_STATIC];
  desc->dynamicTaskSize = parts[PART_DYNAMIC], desc->fifoTaskSize = parts[PART_FIFO];
  return ACL_SUCCESS;
}

/* Takes the partitions the program did not hand in (`parts` zeroed where it
 * did). */
static aclError model_load(const size_t parts[PARTS], uint32_t* model_id) {
  int d, slot = -1;
  uint64_t keys[PARTS] = {0};
  aclError rc = ACL_SUCCESS;
  TRY(api_current_device(&d));
  if (model_id == NULL) return ACL_ERROR_INVALID_PARAM;
  for (int p = 0; p < PARTS && rc == ACL_SUCCESS; ++p)
    if (parts[p] && accel_reserve(KIND_HANDLE, d, parts[p], &keys[p]) != ACL_SUCCESS) rc = ACL_ERROR_RT_MEMORY_ALLOCATION;
  if (rc == ACL_SUCCESS) {
    pthread_mutex_lock(&g_models_mu);
    for (int i = 0; i < MODEL_MAX && slot < 0; ++i)
      if (!g_models[i].loaded) slot = i;
    if (slot >= 0) g_models[slot].loaded = 1, memcpy(g_models[slot].keys, keys, sizeof(keys));
    pthread_mutex_unlock(&g_models_mu);
    if (slot < 0) rc = ACL_ERROR_RT_MEMORY_ALLOCATION;
  }
  if (rc != ACL_SUCCESS) {
    for (int p = 0; p < PARTS; ++p)
      if (keys[p]) accel_release(KIND_HANDLE, keys[p]);
    return rc;
  }
  *model_id = MODEL_ID_BASE + (uint32_t)slot;
  return ACL_SUCCESS;
}

aclError aclmdlLoadFromFile(const char* path, uint32_t* model_id) {
  size_t parts[PARTS];
  TRY(api_ready());
  TRY(file_parts(path, parts));
  return model_load(parts, model_id);
}
aclError aclmdlLoadFromMem(const void* model, size_t model_size, uint32_t* model_id) {
  size_t parts[PARTS];
  TRY(api_ready());
  TRY(model_parts(model, model_size, parts));
  return model_load(parts, model_id);
}
aclError aclmdlLoadFromFileWithMem(const char* path, uint32_t* model_id, void* work, size_t work_size, void* weight,
                                   size_t weight_size) {
  size_t parts[PARTS];
  TRY(api_ready());
  TRY(file_parts(path, parts));
  if (work) parts[PART_WORK] = 0;
  if (weight) parts[PART_WEIGHT] = 0;
  return model_load(parts, model_id);
}
aclError aclmdlLoadFromMemWithMem(const void* model, size_t model_size, uint32_t* model_id, void* work,
                                  size_t work_size, void* weight, size_t weight_size) {
  size_t parts[PARTS];
  TRY(api_ready());
  TRY(model_parts(model, model_size, parts));
  if (work) parts[PART_WORK] = 0;
  if (weight) parts[PART_WEIGHT] = 0;
  return model_load(parts, model_id);
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
    case ACL_MDL_WORKSPACE_ADDR_PTR: handle->parts[PART_WORK] = *(void* const*)value; break;
    case ACL_MDL_WEIGHT_ADDR_PTR: handle->parts[PART_WEIGHT] = *(void* const*)value; break;
    case ACL_MDL_MODEL_DESC_PTR: handle->parts[PART_DESC] = *(void* const*)value; break;
    case ACL_MDL_KERNEL_PTR: handle->parts[PART_KERNEL] = *(void* const*)value; break;
    case ACL_MDL_KERNEL_ARGS_PTR: handle->parts[PART_ARGS] = *(void* const*)value; break;
    case ACL_MDL_STATIC_TASK_PTR: handle->parts[PART_STATIC] = *(void* const*)value; break;
    case ACL_MDL_DYNAMIC_TASK_PTR: handle->parts[PART_DYNAMIC] = *(void* const*)value; break;
    case ACL_MDL_FIFO_PTR: handle->parts[PART_FIFO] = *(void* const*)value; break;
    default: break; /* sizes of the program's memory, priorities, queues */
  }
  return ACL_SUCCESS;
}
aclError aclmdlLoadWithConfig(const aclmdlConfigHandle* handle, uint32_t* model_id) {
  size_t parts[PARTS];
  TRY(api_ready());
  if (handle == NULL) return ACL_ERROR_INVALID_PARAM;
  if (handle->type == ACL_MDL_LOAD_FROM_FILE || handle->type == ACL_MDL_LOAD_FROM_FILE_WITH_MEM)
    TRY(file_parts(handle->path, parts));
  else if (handle->type == ACL_MDL_LOAD_FROM_MEM || handle->type == ACL_MDL_LOAD_FROM_MEM_WITH_MEM)
    TRY(model_parts(handle->mem, handle->mem_size, parts));
  else
    return ACL_ERROR_INVALID_PARAM;
  for (int p = 0; p < PARTS; ++p)
    if (handle->parts[p]) parts[p] = 0;
  return model_load(parts, model_id);
}

aclError aclmdlUnload(uint32_t model_id) {
  uint32_t slot = model_id - MODEL_ID_BASE;
  uint64_t keys[PARTS] = {0};
  TRY(api_ready());
  pthread_mutex_lock(&g_models_mu);
  int ok = slot < MODEL_MAX && g_models[slot].loaded;
  if (ok) memcpy(keys, g_models[slot].keys, sizeof(keys)), g_models[slot].loaded = 0;
  pthread_mutex_unlock(&g_models_mu);
  for (int p = 0; p < PARTS; ++p)
    if (keys[p]) accel_release(KIND_HANDLE, keys[p]);
  return ok ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

aclError aclmdlBundleLoadFromFile(const char* path, uint32_t* bundle_id) { return aclmdlLoadFromFile(path, bundle_id); }
aclError aclmdlBundleLoadFromMem(const void* model, size_t model_size, uint32_t* bundle_id) {
  return aclmdlLoadFromMem(model, model_size, bundle_id);
}
aclError aclmdlBundleUnload(uint32_t bundle_id) { return aclmdlUnload(bundle_id); }

#endif /* VGPU_TESTS_ACL_STUB_MODELS_H_ */
