/* The part of the CUDA driver API (cuda.h) that slurm-vgpu's interposer
 * hooks and its stub driver implements, declared here from NVIDIA's public
 * API reference: no CUDA header is installable from Debian's archive, and
 * the interposer must build without one. Types and values are those of the
 * driver ABI (CUDA 11.3 to 13); only what is used is declared.
 * Plain C, so the C stub and test programs share it with the C++ library. */
#ifndef VGPU_INTERPOSER_VENDOR_CUDA_API_H_
#define VGPU_INTERPOSER_VENDOR_CUDA_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int CUresult;
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906
};

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef uint64_t cuuint64_t;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUarray_st* CUarray;
typedef struct CUmemPoolHandle_st* CUmemoryPool;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUmipmappedArray_st* CUmipmappedArray;
/* The 32-bit device pointers of the v1 entry points (cuMemAlloc, ...),
 * which libcuda still exports for programs built before CUDA 3.2. */
typedef unsigned int CUdeviceptr_v1;
typedef struct CUevent_st* CUevent;

typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;

/* cuMemCreate: location.type 1 = CU_MEM_LOCATION_TYPE_DEVICE, id = ordinal. */
enum { CU_MEM_LOCATION_TYPE_DEVICE = 1, CU_MEM_ALLOCATION_TYPE_PINNED = 1 };
typedef struct CUmemLocation_st {
  int type;
  int id;
} CUmemLocation;
typedef struct CUmemAllocationProp_st {
  int type;
  int requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp;
/* cuMemSetAccess: flags 3 = CU_MEM_ACCESS_FLAGS_PROT_READWRITE. */
enum { CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3 };
/* Memory pools: attributes as CUDA numbers them (values are cuuint64_t). */
typedef enum CUmemPool_attribute_enum {
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
  CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
  CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7
} CUmemPool_attribute;
typedef struct CUmemPoolProps_st {
  int allocType;
  int handleTypes;
  CUmemLocation location;
  void* win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
} CUmemPoolProps;
typedef struct CUmemAccessDesc_st {
  CUmemLocation location;
  int flags;
} CUmemAccessDesc;

/* cuEventCreate flags (CUevent_flags). */
enum { CU_EVENT_DEFAULT = 0, CU_EVENT_DISABLE_TIMING = 2 };

/* Array formats (CUarray_format) and descriptors. */
enum {
  CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
  CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
  CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
  CU_AD_FORMAT_SIGNED_INT8 = 0x08,
  CU_AD_FORMAT_SIGNED_INT16 = 0x09,
  CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
  CU_AD_FORMAT_HALF = 0x10,
  CU_AD_FORMAT_FLOAT = 0x20
};
typedef struct CUDA_ARRAY_DESCRIPTOR_st {
  size_t Width;
  size_t Height;
  int Format;
  unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR;
typedef struct CUDA_ARRAY3D_DESCRIPTOR_st {
  size_t Width;
  size_t Height;
  size_t Depth;
  int Format;
  unsigned int NumChannels;
  unsigned int Flags;
} CUDA_ARRAY3D_DESCRIPTOR;
/* Flags: a layered array's Depth is its number of layers. */
enum { CUDA_ARRAY3D_LAYERED = 0x01 };

/* cuLaunchKernelEx */
typedef struct CUlaunchAttribute_st CUlaunchAttribute;
typedef struct CUlaunchConfig_st {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned int numAttrs;
} CUlaunchConfig;

/* cuGetProcAddress */
enum {
  CU_GET_PROC_ADDRESS_DEFAULT = 0,
  CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2
};
typedef enum CUdriverProcAddressQueryResult_enum {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} CUdriverProcAddressQueryResult;

/* Entry points, by the names libcuda.so.1 exports. */
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int* version);
CUresult cuDeviceGetCount(int* count);
CUresult cuDeviceGet(CUdevice* device, int ordinal);
CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device);
CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device);
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device);
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device);
CUresult cuCtxCreate_v2(CUcontext* ctx, unsigned int flags, CUdevice device);
CUresult cuCtxDestroy_v2(CUcontext ctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxGetCurrent(CUcontext* ctx);
CUresult cuCtxGetDevice(CUdevice* device);
CUresult cuCtxSynchronize(void);
CUresult cuStreamSynchronize(CUstream stream);
/* Streams belong to a context; a launch into a stream of another context
 * than the current one runs there (a CUkernel may be launched so). */
CUresult cuStreamCreate(CUstream* stream, unsigned int flags);
CUresult cuStreamDestroy_v2(CUstream stream);
CUresult cuStreamGetCtx(CUstream stream, CUcontext* ctx);
CUresult cuStreamGetCtx_ptsz(CUstream stream, CUcontext* ctx);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent_v2(CUcontext* ctx);
CUresult cuModuleLoadData(CUmodule* module, const void* image);
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name);

CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes);
CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes);
CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width_bytes, size_t height,
                            unsigned int element_bytes);
CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytes, unsigned int flags);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t bytes, const CUmemAllocationProp* prop,
                     unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags);
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count);
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr);
CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle);
/* Multicast objects (NVLink SHARP): memory made by cuMemCreate is bound to
 * one; the _v2 forms (CUDA 13.1+) name the device the binding is for. */
typedef struct CUmulticastObjectProp_st {
  unsigned int numDevices;
  size_t size;
  unsigned long long handleTypes;
  unsigned long long flags;
} CUmulticastObjectProp;
CUresult cuMulticastCreate(CUmemGenericAllocationHandle* mc, const CUmulticastObjectProp* prop);
CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle mc, CUdevice dev);
CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mc, size_t mc_offset, CUmemGenericAllocationHandle mem,
                            size_t mem_offset, size_t size, unsigned long long flags);
CUresult cuMulticastBindMem_v2(CUmemGenericAllocationHandle mc, CUdevice dev, size_t mc_offset,
                               CUmemGenericAllocationHandle mem, size_t mem_offset, size_t size,
                               unsigned long long flags);
CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle mc, size_t mc_offset, CUdeviceptr ptr, size_t size,
                             unsigned long long flags);
CUresult cuMulticastBindAddr_v2(CUmemGenericAllocationHandle mc, CUdevice dev, size_t mc_offset, CUdeviceptr ptr,
                                size_t size, unsigned long long flags);
CUresult cuMulticastUnbind(CUmemGenericAllocationHandle mc, CUdevice dev, size_t mc_offset, size_t size);
CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytes, CUstream stream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytes, CUstream stream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream stream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream stream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream);
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice device);
CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice device);
CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props);
CUresult cuMemPoolDestroy(CUmemoryPool pool);
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t min_bytes_to_keep);
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value);
CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value);
CUresult cuArrayCreate_v2(CUarray* array, const CUDA_ARRAY_DESCRIPTOR* desc);
CUresult cuArray3DCreate_v2(CUarray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc);
CUresult cuArrayDestroy(CUarray array);
CUresult cuMipmappedArrayCreate(CUmipmappedArray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc, unsigned int levels);
CUresult cuMipmappedArrayDestroy(CUmipmappedArray array);
/* v1 (pre-3.2) allocation entry points. */
CUresult cuMemAlloc(CUdeviceptr_v1* dptr, unsigned int bytes);
CUresult cuMemAllocPitch(CUdeviceptr_v1* dptr, unsigned int* pitch, unsigned int width_bytes, unsigned int height,
                         unsigned int element_bytes);
CUresult cuArrayCreate(CUarray* array, const void* desc_v1);
CUresult cuArray3DCreate(CUarray* array, const void* desc_v1);

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shared_bytes, CUstream stream,
                        void** params, void** extra);
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared_bytes,
                             CUstream stream, void** params, void** extra);
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params, void** extra);
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                   unsigned int bx, unsigned int by, unsigned int bz,
                                   unsigned int shared_bytes, CUstream stream, void** params);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz,
                                        unsigned int shared_bytes, CUstream stream, void** params);
CUresult cuGraphLaunch(CUgraphExec graph, CUstream stream);
/* Context limits: memory the driver reserves on the device for in-kernel
 * stacks (per resident thread), printf and malloc. */
typedef enum CUlimit_enum {
  CU_LIMIT_STACK_SIZE = 0,
  CU_LIMIT_PRINTF_FIFO_SIZE = 1,
  CU_LIMIT_MALLOC_HEAP_SIZE = 2
} CUlimit;
CUresult cuCtxSetLimit(CUlimit limit, size_t value);
CUresult cuCtxGetLimit(size_t* value, CUlimit limit);
enum {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39
};
CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device);

/* Launches before cuLaunchKernel (CUDA 4.0), and the multi-device one. */
CUresult cuLaunch(CUfunction f);
CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height);
CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream stream);
typedef struct CUDA_LAUNCH_PARAMS_st {
  CUfunction function;
  unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream;
  void** kernelParams;
} CUDA_LAUNCH_PARAMS;
CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS* list, unsigned int count, unsigned int flags);
CUresult cuGraphLaunch_ptsz(CUgraphExec graph, CUstream stream);

/* Graphs that allocate memory (CUDA 11.4+): allocation nodes, stream
 * capture, instantiation, and the device's graph memory pool. */
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphNode_st* CUgraphNode;
typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_st {
  CUmemPoolProps poolProps; /* poolProps.location.id: the device */
  const CUmemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  CUdeviceptr dptr; /* out */
} CUDA_MEM_ALLOC_NODE_PARAMS;
/* cuGraphAddNode's parameters (12.2+): a type, then a union whose alloc
 * member is a CUDA_MEM_ALLOC_NODE_PARAMS and whose graph member a child
 * graph (one with allocation nodes must be moved into its parent, ownership
 * 1: cuGraphClone and cuGraphAddChildGraphNode refuse such graphs). */
enum { CU_GRAPH_NODE_TYPE_GRAPH = 4, CU_GRAPH_NODE_TYPE_MEM_ALLOC = 10 };
typedef struct CUgraphNodeParams_st {
  int type;
  int reserved0[3];
  union {
    long long reserved1[29];
    CUDA_MEM_ALLOC_NODE_PARAMS alloc;
    struct {
      struct CUgraph_st* graph;
      int ownership;
    } graph;
  };
  long long reserved2;
} CUgraphNodeParams;
typedef struct CUgraphEdgeData_st CUgraphEdgeData;
/* cuGraphInstantiateWithParams: flag 2 (CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)
 * uploads the instance to hUploadStream as cuGraphUpload does; result_out
 * 1 is CUDA_GRAPH_INSTANTIATE_ERROR. */
enum { CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD = 2, CUDA_GRAPH_INSTANTIATE_ERROR = 1 };
typedef struct CUDA_GRAPH_INSTANTIATE_PARAMS_st {
  cuuint64_t flags;
  CUstream hUploadStream;
  CUgraphNode hErrNode_out;
  int result_out;
} CUDA_GRAPH_INSTANTIATE_PARAMS;
typedef enum CUstreamCaptureStatus_enum { CU_STREAM_CAPTURE_STATUS_NONE = 0, CU_STREAM_CAPTURE_STATUS_ACTIVE = 1 } CUstreamCaptureStatus;
typedef enum CUgraphMem_attribute_enum {
  CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT = 0,
  CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT = 2
} CUgraphMem_attribute;
CUresult cuGraphCreate(CUgraph* graph, unsigned int flags);
CUresult cuGraphDestroy(CUgraph graph);
CUresult cuGraphAddMemAllocNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t ndeps,
                                CUDA_MEM_ALLOC_NODE_PARAMS* params);
CUresult cuGraphAddNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t ndeps,
                        CUgraphNodeParams* params);
CUresult cuGraphAddNode_v2(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, const CUgraphEdgeData* edges,
                           size_t ndeps, CUgraphNodeParams* params);
/* cuGraphInstantiate and _v2: the signature before CUDA 12. */
CUresult cuGraphInstantiate(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log, size_t log_size);
CUresult cuGraphInstantiate_v2(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log,
                               size_t log_size);
CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags);
CUresult cuGraphInstantiateWithParams(CUgraphExec* exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params);
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec* exec, CUgraph graph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS* params);
CUresult cuGraphExecDestroy(CUgraphExec exec);
/* Backs the instance's allocations from the device's graph pool without
 * running it. */
CUresult cuGraphUpload(CUgraphExec exec, CUstream stream);
CUresult cuGraphUpload_ptsz(CUgraphExec exec, CUstream stream);
/* cuStreamBeginCaptureToGraph's edges are not modelled by the stub. */
/* Capture modes: 0 global, 1 thread-local, 2 relaxed. cuStreamBeginCapture
 * is CUDA 10.0's, without a mode (global). */
CUresult cuStreamBeginCapture(CUstream stream);
CUresult cuStreamBeginCapture_v2(CUstream stream, int mode);
CUresult cuStreamBeginCapture_ptsz(CUstream stream, int mode);
CUresult cuStreamBeginCaptureToGraph(CUstream stream, CUgraph graph, const CUgraphNode* deps,
                                     const CUgraphEdgeData* edges, size_t ndeps, int mode);
CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream stream, CUgraph graph, const CUgraphNode* deps,
                                          const CUgraphEdgeData* edges, size_t ndeps, int mode);
CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph);
CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph);
/* The first signature, still exported (later ones add graph and edges). */
CUresult cuStreamGetCaptureInfo(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id);
CUresult cuStreamGetCaptureInfo_ptsz(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id);
CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value);
CUresult cuDeviceGraphMemTrim(CUdevice device);

CUresult cuEventCreate(CUevent* event, unsigned int flags);
CUresult cuEventDestroy_v2(CUevent event);
CUresult cuEventRecord(CUevent event, CUstream stream);
CUresult cuEventRecord_ptsz(CUevent event, CUstream stream);
CUresult cuEventQuery(CUevent event);
CUresult cuEventSynchronize(CUevent event);
CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end);

CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags);
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status);

#ifdef __cplusplus
}
#endif

#endif /* VGPU_INTERPOSER_VENDOR_CUDA_API_H_ */
