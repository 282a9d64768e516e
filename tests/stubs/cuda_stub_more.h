/* Part of cuda_stub.c's translation unit (included once, after the entry
 * points it uses): stream-ordered pools over stub_pool.h, graphs with
 * memory over stub_graph.h, virtual memory
 * management over stub_vmm.h, mipmapped
 * arrays, and the entry points before CUDA 4.0 (v1 32-bit allocations,
 * cuLaunch and cuLaunchGrid) plus the multi-device cooperative launch. */
#ifndef VGPU_TESTS_CUDA_STUB_MORE_H_
#define VGPU_TESTS_CUDA_STUB_MORE_H_

/* Stream-ordered allocation happens at once, from the current device's
 * default pool or the one given (stub_pool.h). */
CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytes, CUstream s) {
  int device, rc;
  uint64_t pool, p;
  TRY(api_current_device(&device));
  if (dptr == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (graph_captured((uint64_t)(uintptr_t)s, device, bytes, &p, &rc)) { /* a node of the capture */
    if (rc == CUDA_SUCCESS) *dptr = p;
    return rc;
  }
  TRY(pool_of_device(device, &pool));
  TRY(pool_alloc(pool, bytes, &p));
  *dptr = p;
  return CUDA_SUCCESS;
}
CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytes, CUstream s) { return cuMemAllocAsync(dptr, bytes, s); }
CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream s) {
  uint64_t p;
  int device, rc;
  TRY(api_ready());
  if (dptr == NULL) return CUDA_ERROR_INVALID_VALUE;
  TRY(pool_device((uint64_t)(uintptr_t)pool, &device));
  if (graph_captured((uint64_t)(uintptr_t)s, device, bytes, &p, &rc)) {
    if (rc == CUDA_SUCCESS) *dptr = p;
    return rc;
  }
  TRY(pool_alloc((uint64_t)(uintptr_t)pool, bytes, &p));
  *dptr = p;
  return CUDA_SUCCESS;
}
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream s) {
  return cuMemAllocFromPoolAsync(dptr, bytes, pool, s);
}
/* Back to its pool (a graph's: to the graph pool); a cuMemAlloc pointer is freed as cuMemFree would. */
/* On a stream in capture: a free node, nothing freed (stub_graph.h does
 * not run free nodes). */
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s) {
  TRY(api_ready());
  if (graph_capturing((uint64_t)(uintptr_t)s)) return CUDA_SUCCESS;
  return graph_free(dptr) || pool_free(dptr) ? CUDA_SUCCESS : accel_release(KIND_PTR, dptr);
}
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s) { return cuMemFreeAsync(dptr, s); }

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice device) {
  uint64_t p;
  TRY(accel_device_call(pool, device));
  TRY(pool_of_device(device, &p));
  *pool = (CUmemoryPool)(uintptr_t)p;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice device) { return cuDeviceGetDefaultMemPool(pool, device); }
CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
  uint64_t p;
  TRY(api_ready());
  if (pool == NULL || props == NULL || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  TRY(pool_create(props->location.id, &p));
  *pool = (CUmemoryPool)(uintptr_t)p;
  return CUDA_SUCCESS;
}
CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  TRY(api_ready());
  return pool_destroy((uint64_t)(uintptr_t)pool);
}
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
  TRY(api_ready());
  return pool_trim((uint64_t)(uintptr_t)pool, keep);
}
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  TRY(api_ready());
  return pool_attribute((uint64_t)(uintptr_t)pool, attr, (uint64_t*)value, 1);
}
CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  TRY(api_ready());
  return pool_attribute((uint64_t)(uintptr_t)pool, attr, (uint64_t*)value, 0);
}

/* On device prop->location.id (location type must be a device). The
 * memory stays until the handle is released and unmapped (stub_vmm.h). */
CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t bytes, const CUmemAllocationProp* prop,
                     unsigned long long flags) {
  uint64_t h;
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (handle == NULL || prop == NULL || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  if (!accel_valid_device(prop->location.id)) return CUDA_ERROR_INVALID_DEVICE;
  TRY(vmm_create(prop->location.id, bytes, &h));
  *handle = h;
  return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  TRY(api_ready());
  return vmm_multicast_release(handle) ? CUDA_SUCCESS : vmm_release(handle);
}

/* Multicast objects (stub_vmm.h): every device may join; sizes and
 * offsets are not checked against the object. */
CUresult cuMulticastCreate(CUmemGenericAllocationHandle* mc, const CUmulticastObjectProp* prop) {
  uint64_t h;
  TRY(api_ready());
  if (mc == NULL || prop == NULL || prop->size == 0 || prop->numDevices == 0) return CUDA_ERROR_INVALID_VALUE;
  TRY(vmm_multicast_create(&h));
  *mc = h;
  return CUDA_SUCCESS;
}
CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle mc, CUdevice dev) {
  TRY(api_ready());
  return accel_valid_device(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mc, size_t mc_offset, CUmemGenericAllocationHandle mem,
                            size_t mem_offset, size_t size, unsigned long long flags) {
  TRY(api_ready());
  return vmm_bind(mc, mc_offset, mem, size);
}
CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle mc, size_t mc_offset, CUdeviceptr ptr, size_t size,
                             unsigned long long flags) {
  TRY(api_ready());
  return vmm_bind_addr(mc, mc_offset, ptr, size);
}
CUresult cuMulticastUnbind(CUmemGenericAllocationHandle mc, CUdevice dev, size_t mc_offset, size_t size) {
  TRY(api_ready());
  return vmm_unbind(mc, dev, mc_offset, size);
}

CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
  uint64_t va;
  TRY(api_ready());
  TRY(vmm_reserve_va(size, &va));
  *ptr = va;
  return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) { return api_ready(); }

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
  TRY(api_ready());
  return vmm_map_handle(ptr, size, handle);
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  TRY(api_ready());
  return vmm_unmap(ptr, size);
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  TRY(api_ready());
  return desc == NULL || count == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  uint64_t h;
  TRY(api_ready());
  if (handle == NULL) return CUDA_ERROR_INVALID_VALUE;
  TRY(vmm_retain((uint64_t)(uintptr_t)addr, &h));
  *handle = h;
  return CUDA_SUCCESS;
}


/* Every level: each halves every dimension, never below 1. */
CUresult cuMipmappedArrayCreate(CUmipmappedArray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc, unsigned int levels) {
  size_t elements = 0, w, h, d;
  if (desc == NULL) return ready() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  w = desc->Width, h = desc->Height ? desc->Height : 1, d = desc->Depth ? desc->Depth : 1;
  for (unsigned int l = 0; l < (levels ? levels : 1); ++l) {
    elements += w * h * d;
    w = w > 1 ? w / 2 : 1, h = h > 1 ? h / 2 : 1, d = d > 1 ? d / 2 : 1;
  }
  return array_create((CUarray*)array, elements, 1, 1, desc->Format, desc->NumChannels);
}
CUresult cuMipmappedArrayDestroy(CUmipmappedArray array) { return cuArrayDestroy((CUarray)array); }

/* v1 (32-bit) entry points: booked like their successors; the pointer is
 * the low 32 bits of the booking's (never freed: enough for the tests). */
CUresult cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytes) {
  CUdeviceptr p = 0;
  TRY(alloc_current(&p, bytes));
  *dptr = (CUdeviceptr_v1)p;
  return CUDA_SUCCESS;
}
CUresult cuMemAllocPitch(CUdeviceptr_v1* dptr, unsigned int* pitch, unsigned int width_bytes, unsigned int height,
                         unsigned int element_bytes) {
  size_t p64 = 0;
  CUdeviceptr p = 0;
  TRY(cuMemAllocPitch_v2(&p, &p64, width_bytes, height, element_bytes));
  *dptr = (CUdeviceptr_v1)p, *pitch = (unsigned int)p64;
  return CUDA_SUCCESS;
}
typedef struct {
  unsigned int Width, Height;
  int Format;
  unsigned int NumChannels;
} array_desc_v1;
typedef struct {
  unsigned int Width, Height, Depth;
  int Format;
  unsigned int NumChannels, Flags;
} array3d_desc_v1;
CUresult cuArrayCreate(CUarray* array, const void* desc) {
  const array_desc_v1* d = desc;
  if (d == NULL) return CUDA_ERROR_INVALID_VALUE;
  return array_create(array, d->Width, d->Height, 1, d->Format, d->NumChannels);
}
CUresult cuArray3DCreate(CUarray* array, const void* desc) {
  const array3d_desc_v1* d = desc;
  if (d == NULL) return CUDA_ERROR_INVALID_VALUE;
  return array_create(array, d->Width, d->Height, d->Depth, d->Format, d->NumChannels);
}

/* Pre-4.0 launches and the multi-device one (every entry on the current
 * device: the stub's streams carry none). */
CUresult cuLaunch(CUfunction f) { return launch_tagged(f, TAG_FUNC); }
CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height) { return launch_tagged(f, TAG_FUNC); }
CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream s) {
  return graph_capturing((uint64_t)(uintptr_t)s) ? CUDA_SUCCESS : launch_tagged(f, TAG_FUNC);
}
CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS* list, unsigned int count, unsigned int flags) {
  if (list == NULL || count == 0) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned int i = 0; i < count; ++i)
    if (!graph_capturing((uint64_t)(uintptr_t)list[i].hStream)) TRY(launch_tagged(list[i].function, TAG_FUNC));
  return CUDA_SUCCESS;
}

/* Context limits: kept per process and device (the stub reserves nothing
 * for them); defaults as a recent driver's: 1 KiB stack, 1 MiB printf FIFO,
 * 8 MiB malloc heap. A device of 132 multiprocessors of 2048 threads. */
static size_t g_limits[STUB_MAX_DEVICES][3];
CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  int d;
  TRY(api_current_device(&d));
  if ((int)limit < 0 || limit > CU_LIMIT_MALLOC_HEAP_SIZE) return CUDA_ERROR_INVALID_VALUE;
  g_limits[d][limit] = value;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetLimit(size_t* value, CUlimit limit) {
  static const size_t defaults[3] = {1024, 1 << 20, 8 << 20};
  int d;
  TRY(api_current_device(&d));
  if (value == NULL || (int)limit < 0 || limit > CU_LIMIT_MALLOC_HEAP_SIZE) return CUDA_ERROR_INVALID_VALUE;
  *value = g_limits[d][limit] ? g_limits[d][limit] : defaults[limit];
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  TRY(accel_device_call(value, device));
  if (attribute == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) *value = 132;
  else if (attribute == CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) *value = 2048;
  else return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* Graphs with memory (stub_graph.h). Streams are opaque values; capture
 * modes, dependencies and edges are not modelled. */
#define GRAPH_OUT(call, out, type)        \
  do {                                    \
    uint64_t h_;                          \
    TRY(api_ready());                     \
    if ((out) == NULL) return CUDA_ERROR_INVALID_VALUE; \
    TRY(call);                            \
    *(out) = (type)(uintptr_t)h_;         \
    return CUDA_SUCCESS;                  \
  } while (0)
#define H(x) ((uint64_t)(uintptr_t)(x))
CUresult cuGraphCreate(CUgraph* graph, unsigned int flags) { GRAPH_OUT(graph_create(&h_), graph, CUgraph); }
CUresult cuGraphDestroy(CUgraph graph) {
  TRY(api_ready());
  return graph_destroy(H(graph));
}
CUresult cuGraphAddMemAllocNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t ndeps,
                                CUDA_MEM_ALLOC_NODE_PARAMS* params) {
  uint64_t addr;
  TRY(api_ready());
  if (node == NULL || params == NULL || params->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  TRY(graph_add_alloc(H(graph), params->poolProps.location.id, params->bytesize, &addr));
  params->dptr = addr;
  *node = (CUgraphNode)(uintptr_t)addr;
  return CUDA_SUCCESS;
}
/* Allocation nodes, and child graphs moved into the parent (ownership 1:
 * the child's nodes become the parent's, the child handle is gone); no
 * other node type is modelled. */
CUresult cuGraphAddNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t ndeps,
                        CUgraphNodeParams* params) {
  TRY(api_ready());
  if (node == NULL || params == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (params->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) return cuGraphAddMemAllocNode(node, graph, deps, ndeps, &params->alloc);
  if (params->type != CU_GRAPH_NODE_TYPE_GRAPH || params->graph.ownership != 1) return CUDA_ERROR_NOT_SUPPORTED;
  TRY(graph_move_into(H(params->graph.graph), H(graph)));
  *node = (CUgraphNode)params->graph.graph;
  return CUDA_SUCCESS;
}
CUresult cuGraphAddNode_v2(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, const CUgraphEdgeData* edges,
                           size_t ndeps, CUgraphNodeParams* params) {
  return cuGraphAddNode(node, graph, deps, ndeps, params);
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  GRAPH_OUT(graph_instantiate(H(graph), &h_), exec, CUgraphExec);
}
CUresult cuGraphInstantiate(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log, size_t log_size) {
  return cuGraphInstantiateWithFlags(exec, graph, 0);
}
CUresult cuGraphInstantiate_v2(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log,
                               size_t log_size) {
  return cuGraphInstantiateWithFlags(exec, graph, 0);
}
/* An upload (cuGraphUpload); an executable graph without allocations (a
 * timed one) uploads nothing. The driver's own, which no hook sees. */
static CUresult graph_upload(CUgraphExec exec) {
  int rc;
  return graph_exec_upload(H(exec), &rc) ? rc : CUDA_SUCCESS;
}
/* CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD uploads the new instance inside the
 * call; a failed upload leaves none. */
CUresult cuGraphInstantiateWithParams(CUgraphExec* exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  CUresult rc = cuGraphInstantiateWithFlags(exec, graph, 0);
  if (rc == CUDA_SUCCESS && params != NULL && (params->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) {
    rc = graph_upload(*exec);
    if (rc != CUDA_SUCCESS) graph_exec_destroy(H(*exec)), *exec = NULL;
  }
  if (params != NULL) params->result_out = rc == CUDA_SUCCESS ? 0 : CUDA_GRAPH_INSTANTIATE_ERROR;
  return rc;
}
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec* exec, CUgraph graph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  return cuGraphInstantiateWithParams(exec, graph, params);
}
CUresult cuGraphUpload(CUgraphExec exec, CUstream stream) {
  TRY(api_ready());
  return graph_upload(exec);
}
CUresult cuGraphUpload_ptsz(CUgraphExec exec, CUstream stream) { return cuGraphUpload(exec, stream); }
CUresult cuGraphExecDestroy(CUgraphExec exec) {
  TRY(api_ready());
  return graph_exec_destroy(H(exec));
}
CUresult cuStreamBeginCapture_v2(CUstream stream, int mode) {
  TRY(api_ready());
  return mode < 0 || mode > 2 ? CUDA_ERROR_INVALID_VALUE : graph_capture_begin(H(stream), 0, mode);
}
CUresult cuStreamBeginCapture(CUstream stream) { return cuStreamBeginCapture_v2(stream, 0); }
CUresult cuStreamBeginCapture_ptsz(CUstream stream, int mode) { return cuStreamBeginCapture_v2(stream, mode); }
CUresult cuStreamBeginCaptureToGraph(CUstream stream, CUgraph graph, const CUgraphNode* deps,
                                     const CUgraphEdgeData* edges, size_t ndeps, int mode) {
  TRY(api_ready());
  if (graph == NULL || mode < 0 || mode > 2) return CUDA_ERROR_INVALID_VALUE;
  return graph_capture_begin(H(stream), H(graph), mode);
}
CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph) {
  GRAPH_OUT(graph_capture_end(H(stream), &h_), graph, CUgraph);
}
CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph) { return cuStreamEndCapture(stream, graph); }
CUresult cuStreamGetCaptureInfo(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id) {
  int capturing;
  TRY(api_ready());
  if (status == NULL) return CUDA_ERROR_INVALID_VALUE;
  TRY(graph_capture_info(H(stream), &capturing, id));
  *status = capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
CUresult cuStreamGetCaptureInfo_ptsz(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id) {
  return cuStreamGetCaptureInfo(stream, status, id);
}
CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value) {
  TRY(api_ready());
  return graph_attribute(device, attr, (uint64_t*)value);
}
CUresult cuDeviceGraphMemTrim(CUdevice device) {
  TRY(api_ready());
  return graph_trim(device);
}
#undef H
#undef GRAPH_OUT

#endif /* VGPU_TESTS_CUDA_STUB_MORE_H_ */
