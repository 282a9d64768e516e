/* Part of hip_stub.c's translation unit (included once, after the entry
 * points it uses): 3D memory, arrays, virtual memory management over
 * stub_vmm.h, streams, stream-ordered pools over stub_pool.h, and the
 * runtime's allocation of a program's __managed__ variables. */
#ifndef VGPU_TESTS_HIP_STUB_MORE_H_
#define VGPU_TESTS_HIP_STUB_MORE_H_

/* Pitch rows of extent.width bytes, extent.height x extent.depth of them. */
hipError_t hipMalloc3D(hipPitchedPtr* pitched, hipExtent extent) {
  size_t pitch = 0;
  void* p = NULL;
  if (pitched == NULL) return hipErrorInvalidValue;
  TRY(hipMallocPitch(&p, &pitch, extent.width, extent.height * (extent.depth ? extent.depth : 1)));
  *pitched = (hipPitchedPtr){p, pitch, extent.width, extent.height};
  return hipSuccess;
}

/* Arrays: booked as KIND_ARRAY of elements x bytes per element. */
static hipError_t array_alloc(void** array, uint64_t elements, uint64_t element_bytes) {
  int d;
  uint64_t key, bytes;
  TRY(api_current_device(&d));
  if (array == NULL || elements == 0 || element_bytes == 0) return hipErrorInvalidValue;
  if (__builtin_mul_overflow(elements, element_bytes, &bytes)) return hipErrorOutOfMemory;
  TRY(accel_reserve(KIND_ARRAY, d, bytes, &key));
  *array = (void*)(uintptr_t)key;
  return hipSuccess;
}
static uint64_t desc_bytes(const hipChannelFormatDesc* desc) {
  return desc == NULL ? 0 : (uint64_t)(desc->x + desc->y + desc->z + desc->w) / 8;
}
static uint64_t format_bytes(hipArray_Format f) {
  return f == HIP_AD_FORMAT_UNSIGNED_INT8 || f == HIP_AD_FORMAT_SIGNED_INT8     ? 1
         : f == HIP_AD_FORMAT_UNSIGNED_INT16 || f == HIP_AD_FORMAT_SIGNED_INT16 || f == HIP_AD_FORMAT_HALF ? 2
                                                                                 : 4;
}
static uint64_t dim(size_t n) { return n ? n : 1; }
hipError_t hipMallocArray(hipArray_t* array, const hipChannelFormatDesc* desc, size_t width, size_t height,
                          unsigned int flags) {
  return array_alloc((void**)array, (uint64_t)width * dim(height), desc_bytes(desc));
}
hipError_t hipMalloc3DArray(hipArray_t* array, const hipChannelFormatDesc* desc, hipExtent e, unsigned int flags) {
  return array_alloc((void**)array, (uint64_t)e.width * dim(e.height) * dim(e.depth), desc_bytes(desc));
}
hipError_t hipArrayCreate(hipArray_t* array, const HIP_ARRAY_DESCRIPTOR* d) {
  if (d == NULL) return hipErrorInvalidValue;
  return array_alloc((void**)array, (uint64_t)d->Width * dim(d->Height), format_bytes(d->Format) * dim(d->NumChannels));
}
hipError_t hipArray3DCreate(hipArray_t* array, const HIP_ARRAY3D_DESCRIPTOR* d) {
  if (d == NULL) return hipErrorInvalidValue;
  return array_alloc((void**)array, (uint64_t)d->Width * dim(d->Height) * dim(d->Depth),
                     format_bytes(d->Format) * dim(d->NumChannels));
}
/* Every level: each halves every dimension (never below 1), except that a
 * layered array (hipArrayLayered) has all its layers (its depth) at every
 * level. */
static uint64_t mipmap_elements(size_t width, size_t height, size_t depth, unsigned int levels, unsigned int flags) {
  uint64_t elements = 0, w = width, h = dim(height), dd = dim(depth);
  for (unsigned int l = 0; l < (levels ? levels : 1); ++l) {
    elements += w * h * dd;
    w = w > 1 ? w / 2 : 1, h = h > 1 ? h / 2 : 1;
    if (!(flags & hipArrayLayered)) dd = dd > 1 ? dd / 2 : 1;
  }
  return elements;
}
hipError_t hipMallocMipmappedArray(hipMipmappedArray_t* array, const hipChannelFormatDesc* desc, hipExtent e,
                                   unsigned int levels, unsigned int flags) {
  return array_alloc((void**)array, mipmap_elements(e.width, e.height, e.depth, levels, flags), desc_bytes(desc));
}
/* As clr: the array hipMallocMipmappedArray makes; flags other than layered,
 * surface load/store (2) and texture gather (8): hipErrorInvalidValue. */
hipError_t hipMipmappedArrayCreate(hipMipmappedArray_t* array, HIP_ARRAY3D_DESCRIPTOR* d, unsigned int levels) {
  if (d == NULL || (d->Flags & ~(unsigned int)(hipArrayLayered | 0x2 | 0x8))) return hipErrorInvalidValue;
  return array_alloc((void**)array, mipmap_elements(d->Width, d->Height, d->Depth, levels, d->Flags),
                     format_bytes(d->Format) * dim(d->NumChannels));
}
hipError_t hipFreeArray(hipArray_t array) { return accel_release(KIND_ARRAY, (uintptr_t)array); }
hipError_t hipArrayDestroy(hipArray_t array) { return hipFreeArray(array); }
/* Either call frees a mipmapped array made either way, as in clr. */
hipError_t hipFreeMipmappedArray(hipMipmappedArray_t array) { return accel_release(KIND_ARRAY, (uintptr_t)array); }
hipError_t hipMipmappedArrayDestroy(hipMipmappedArray_t array) { return hipFreeMipmappedArray(array); }

/* A __managed__ variable, as clr registers it: managed memory of `size`
 * bytes on the current device, as hipMallocManaged takes (but not through
 * it), into *pointer; a failure aborts the process (clr's guarantee()).
 * init_value is not copied (the simulated memory has no contents) and the
 * module is not read. */
void __hipRegisterManagedVar(void* hip_module, void** pointer, void* init_value, const char* name, size_t size,
                             unsigned align) {
  hipError_t rc = alloc_current(pointer, size);
  if (rc != hipSuccess) {
    fprintf(stderr, "hip_stub: cannot allocate managed variable %s (error %d)\n", name ? name : "?", rc);
    abort();
  }
}

/* Virtual memory (stub_vmm.h). */
hipError_t hipMemCreate(hipMemGenericAllocationHandle_t* handle, size_t size, const hipMemAllocationProp* prop,
                        unsigned long long flags) {
  uint64_t h;
  TRY(api_ready());
  if (handle == NULL || prop == NULL || prop->location.type != hipMemLocationTypeDevice) return hipErrorInvalidValue;
  if (!accel_valid_device(prop->location.id)) return hipErrorInvalidDevice;
  TRY(vmm_create(prop->location.id, size, &h));
  *handle = (hipMemGenericAllocationHandle_t)(uintptr_t)h;
  return hipSuccess;
}
hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle) {
  TRY(api_ready());
  return vmm_release((uint64_t)(uintptr_t)handle);
}
hipError_t hipMemAddressReserve(void** ptr, size_t size, size_t alignment, void* addr, unsigned long long flags) {
  uint64_t va;
  TRY(api_ready());
  if (ptr == NULL) return hipErrorInvalidValue;
  TRY(vmm_reserve_va(size, &va));
  *ptr = (void*)(uintptr_t)va;
  return hipSuccess;
}
hipError_t hipMemMap(void* ptr, size_t size, size_t offset, hipMemGenericAllocationHandle_t handle,
                     unsigned long long flags) {
  TRY(api_ready());
  return vmm_map_handle((uint64_t)(uintptr_t)ptr, size, (uint64_t)(uintptr_t)handle);
}
hipError_t hipMemUnmap(void* ptr, size_t size) {
  TRY(api_ready());
  return vmm_unmap((uint64_t)(uintptr_t)ptr, size);
}
hipError_t hipMemRetainAllocationHandle(hipMemGenericAllocationHandle_t* handle, void* addr) {
  uint64_t h;
  TRY(api_ready());
  if (handle == NULL) return hipErrorInvalidValue;
  TRY(vmm_retain((uint64_t)(uintptr_t)addr, &h));
  *handle = (hipMemGenericAllocationHandle_t)(uintptr_t)h;
  return hipSuccess;
}

/* Streams: one made by hipStreamCreate belongs to the device current then,
 * whatever device is current later; any other value (NULL, values never
 * made here) is the current device's. Launches, hipStreamSynchronize,
 * hipEventRecord, hipStreamGetDevice and hipMallocAsync go by a stream's
 * device. */
#define HIP_STREAM_MAX 64
struct ihipStream_t {
  int device, alive;
};
static struct ihipStream_t g_hip_streams[HIP_STREAM_MAX];
static pthread_mutex_t g_hip_streams_mu = PTHREAD_MUTEX_INITIALIZER;

/* The device of stream `s` in *device. */
static hipError_t stream_device(hipStream_t s, int* device) {
  int d = -1;
  TRY(api_current_device(device));
  if (s < &g_hip_streams[0] || s >= &g_hip_streams[HIP_STREAM_MAX]) return hipSuccess;
  pthread_mutex_lock(&g_hip_streams_mu);
  if (s->alive) d = s->device;
  pthread_mutex_unlock(&g_hip_streams_mu);
  if (d >= 0) *device = d;
  return hipSuccess;
}
hipError_t hipStreamCreate(hipStream_t* s) {
  int d;
  hipError_t rc = hipErrorOutOfMemory;
  TRY(api_current_device(&d));
  if (s == NULL) return hipErrorInvalidValue;
  pthread_mutex_lock(&g_hip_streams_mu);
  for (int i = 0; i < HIP_STREAM_MAX && rc != hipSuccess; ++i) {
    if (g_hip_streams[i].alive) continue;
    g_hip_streams[i] = (struct ihipStream_t){d, 1};
    *s = &g_hip_streams[i];
    rc = hipSuccess;
  }
  pthread_mutex_unlock(&g_hip_streams_mu);
  return rc;
}
/* Not one made here (or destroyed): hipErrorInvalidHandle. */
hipError_t hipStreamDestroy(hipStream_t s) {
  hipError_t rc = hipErrorInvalidHandle;
  TRY(api_ready());
  if (s < &g_hip_streams[0] || s >= &g_hip_streams[HIP_STREAM_MAX]) return rc;
  pthread_mutex_lock(&g_hip_streams_mu);
  if (s->alive) s->alive = 0, rc = hipSuccess;
  pthread_mutex_unlock(&g_hip_streams_mu);
  return rc;
}
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device) {
  int d;
  TRY(stream_device(stream, &d));
  if (device == NULL) return hipErrorInvalidValue;
  *device = d;
  return hipSuccess;
}

/* Stream-ordered allocation happens at once, as clr allocates: from the
 * current pool of the stream's device (hip_stream->GetDevice(); the stub's
 * current pool is the default one), or from the pool given, on the pool's
 * device (stub_pool.h). */
hipError_t hipMallocAsync(void** ptr, size_t size, hipStream_t stream) {
  int d, rc;
  uint64_t pool, p;
  TRY(stream_device(stream, &d));
  TRY(pool_of_device(d, &pool));
  if (ptr == NULL) return hipErrorInvalidValue;
  if (graph_captured((uint64_t)(uintptr_t)stream, d, size, &p, &rc)) { /* a node of the capture */
    if (rc == hipSuccess) *ptr = (void*)(uintptr_t)p;
    return rc;
  }
  TRY(pool_alloc(pool, size, &p));
  *ptr = (void*)(uintptr_t)p;
  return hipSuccess;
}
hipError_t hipMallocFromPoolAsync(void** ptr, size_t size, hipMemPool_t pool, hipStream_t stream) {
  uint64_t p;
  int d, rc;
  TRY(api_ready());
  if (ptr == NULL) return hipErrorInvalidValue;
  TRY(pool_device((uint64_t)(uintptr_t)pool, &d));
  if (graph_captured((uint64_t)(uintptr_t)stream, d, size, &p, &rc)) {
    if (rc == hipSuccess) *ptr = (void*)(uintptr_t)p;
    return rc;
  }
  TRY(pool_alloc((uint64_t)(uintptr_t)pool, size, &p));
  *ptr = (void*)(uintptr_t)p;
  return hipSuccess;
}
hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t* pool, int device) {
  uint64_t p;
  TRY(api_ready());
  if (pool == NULL) return hipErrorInvalidValue;
  TRY(pool_of_device(device, &p));
  *pool = (hipMemPool_t)(uintptr_t)p;
  return hipSuccess;
}
hipError_t hipDeviceGetMemPool(hipMemPool_t* pool, int device) { return hipDeviceGetDefaultMemPool(pool, device); }
/* A pool of pinned memory on device props->location.id; anything else (a
 * bad device too): hipErrorInvalidValue, as clr. */
hipError_t hipMemPoolCreate(hipMemPool_t* pool, const hipMemPoolProps* props) {
  uint64_t p;
  TRY(api_ready());
  if (pool == NULL || props == NULL || props->allocType != hipMemAllocationTypePinned ||
      props->location.type != hipMemLocationTypeDevice || !accel_valid_device(props->location.id))
    return hipErrorInvalidValue;
  TRY(pool_create(props->location.id, &p));
  *pool = (hipMemPool_t)(uintptr_t)p;
  return hipSuccess;
}
hipError_t hipMemPoolTrimTo(hipMemPool_t pool, size_t keep) {
  TRY(api_ready());
  return pool_trim((uint64_t)(uintptr_t)pool, keep);
}
hipError_t hipMemPoolSetAttribute(hipMemPool_t pool, hipMemPoolAttr attr, void* value) {
  TRY(api_ready());
  return pool_attribute((uint64_t)(uintptr_t)pool, attr, (uint64_t*)value, 1);
}
hipError_t hipMemPoolGetAttribute(hipMemPool_t pool, hipMemPoolAttr attr, void* value) {
  TRY(api_ready());
  return pool_attribute((uint64_t)(uintptr_t)pool, attr, (uint64_t*)value, 0);
}
hipError_t hipMemPoolDestroy(hipMemPool_t pool) {
  TRY(api_ready());
  return pool_destroy((uint64_t)(uintptr_t)pool);
}

/* Device limits, kept per process and device (nothing reserved); defaults
 * 1 KiB stack, 1 MiB printf FIFO, 8 MiB malloc heap. */
static size_t g_limits[STUB_MAX_DEVICES][3];
hipError_t hipDeviceSetLimit(hipLimit_t limit, size_t value) {
  int d;
  TRY(api_current_device(&d));
  if ((int)limit < 0 || limit > hipLimitMallocHeapSize) return hipErrorInvalidValue;
  g_limits[d][limit] = value;
  return hipSuccess;
}
hipError_t hipDeviceGetLimit(size_t* value, hipLimit_t limit) {
  static const size_t defaults[3] = {1024, 1 << 20, 8 << 20};
  int d;
  TRY(api_current_device(&d));
  if (value == NULL || (int)limit < 0 || limit > hipLimitMallocHeapSize) return hipErrorInvalidValue;
  *value = g_limits[d][limit] ? g_limits[d][limit] : defaults[limit];
  return hipSuccess;
}

/* Graphs with memory (stub_graph.h). Streams are opaque values; capture
 * modes and dependencies are not modelled. */
#define H(x) ((uint64_t)(uintptr_t)(x))
hipError_t hipGraphCreate(hipGraph_t* graph, unsigned int flags) {
  uint64_t h;
  TRY(api_ready());
  if (graph == NULL) return hipErrorInvalidValue;
  TRY(graph_create(&h));
  *graph = (hipGraph_t)(uintptr_t)h;
  return hipSuccess;
}
hipError_t hipGraphDestroy(hipGraph_t graph) {
  TRY(api_ready());
  return graph_destroy(H(graph));
}
hipError_t hipGraphAddMemAllocNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps, size_t ndeps,
                                   hipMemAllocNodeParams* params) {
  uint64_t addr;
  TRY(api_ready());
  if (node == NULL || params == NULL || params->poolProps.location.type != hipMemLocationTypeDevice)
    return hipErrorInvalidValue;
  TRY(graph_add_alloc(H(graph), params->poolProps.location.id, params->bytesize, &addr));
  params->dptr = (void*)(uintptr_t)addr;
  *node = (hipGraphNode_t)(uintptr_t)addr;
  return hipSuccess;
}
/* Allocation nodes and child graphs are modelled. As clr: the child is
 * cloned, allocation nodes and all. */
hipError_t hipGraphAddChildGraphNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                     size_t ndeps, hipGraph_t child) {
  TRY(api_ready());
  if (node == NULL) return hipErrorInvalidValue;
  TRY(graph_copy_into(H(child), H(graph)));
  *node = (hipGraphNode_t)(uintptr_t)child;
  return hipSuccess;
}
hipError_t hipGraphClone(hipGraph_t* clone, hipGraph_t original) {
  uint64_t h;
  TRY(api_ready());
  if (clone == NULL) return hipErrorInvalidValue;
  TRY(graph_create(&h));
  TRY(graph_copy_into(H(original), h));
  *clone = (hipGraph_t)(uintptr_t)h;
  return hipSuccess;
}
hipError_t hipGraphAddNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps, size_t ndeps,
                           hipGraphNodeParams* params) {
  if (params != NULL && params->type == hipGraphNodeTypeGraph)
    return hipGraphAddChildGraphNode(node, graph, deps, ndeps, params->graph.graph);
  if (params == NULL || params->type != hipGraphNodeTypeMemAlloc) return hipErrorNotSupported;
  return hipGraphAddMemAllocNode(node, graph, deps, ndeps, &params->alloc);
}
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph, unsigned long long flags) {
  uint64_t h;
  TRY(api_ready());
  if (exec == NULL) return hipErrorInvalidValue;
  TRY(graph_instantiate(H(graph), &h));
  *exec = (hipGraphExec_t)(uintptr_t)h;
  return hipSuccess;
}
hipError_t hipGraphInstantiate(hipGraphExec_t* exec, hipGraph_t graph, hipGraphNode_t* error_node, char* log,
                               size_t log_size) {
  return hipGraphInstantiateWithFlags(exec, graph, 0);
}
/* An upload (hipGraphUpload); an executable graph without allocations (a
 * timed one) uploads nothing. The runtime's own, which no hook sees. */
static hipError_t graph_upload(hipGraphExec_t exec) {
  int rc;
  return graph_exec_upload(H(exec), &rc) ? rc : hipSuccess;
}
/* hipGraphInstantiateFlagUpload uploads the new instance inside the call;
 * a failed upload leaves none. */
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t* exec, hipGraph_t graph, hipGraphInstantiateParams* params) {
  hipError_t rc = hipGraphInstantiateWithFlags(exec, graph, 0);
  if (rc == hipSuccess && params != NULL && (params->flags & hipGraphInstantiateFlagUpload)) {
    rc = graph_upload(*exec);
    if (rc != hipSuccess) graph_exec_destroy(H(*exec)), *exec = NULL;
  }
  if (params != NULL) params->result_out = rc == hipSuccess ? 0 : hipGraphInstantiateError;
  return rc;
}
hipError_t hipGraphUpload(hipGraphExec_t exec, hipStream_t stream) {
  TRY(api_ready());
  return graph_upload(exec);
}
hipError_t hipGraphExecDestroy(hipGraphExec_t exec) {
  TRY(api_ready());
  return graph_exec_destroy(H(exec));
}
hipError_t hipStreamBeginCapture(hipStream_t stream, int mode) {
  TRY(api_ready());
  return mode < 0 || mode > 2 ? hipErrorInvalidValue : graph_capture_begin(H(stream), 0, mode);
}
hipError_t hipStreamBeginCapture_spt(hipStream_t stream, int mode) { return hipStreamBeginCapture(stream, mode); }
hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* graph) {
  uint64_t h;
  TRY(api_ready());
  if (graph == NULL) return hipErrorInvalidValue;
  TRY(graph_capture_end(H(stream), &h));
  *graph = (hipGraph_t)(uintptr_t)h;
  return hipSuccess;
}
hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t* graph) { return hipStreamEndCapture(stream, graph); }
hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus* status, unsigned long long* id) {
  int capturing;
  uint64_t v = 0;
  TRY(api_ready());
  if (status == NULL) return hipErrorInvalidValue;
  TRY(graph_capture_info(H(stream), &capturing, &v));
  *status = capturing ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
  if (id != NULL) *id = v;
  return hipSuccess;
}
hipError_t hipStreamGetCaptureInfo_spt(hipStream_t stream, hipStreamCaptureStatus* status, unsigned long long* id) {
  return hipStreamGetCaptureInfo(stream, status, id);
}
hipError_t hipDeviceGetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void* value) {
  TRY(api_ready());
  return graph_attribute(device, attr, (uint64_t*)value);
}
hipError_t hipDeviceGraphMemTrim(int device) {
  TRY(api_ready());
  return graph_trim(device);
}
#undef H

#endif /* VGPU_TESTS_HIP_STUB_MORE_H_ */
