/* The part of the HIP runtime API (hip_runtime_api.h, libamdhip64.so) that
 * slurm-vgpu's interposer hooks and its stub implements, for Hygon DCU and
 * AMD GPUs. Declared here from AMD's public HIP reference: no ROCm header
 * is installable from Debian's archive. Only what is used is declared.
 * Plain C, shared by the C stub and test programs and the C++ library. */
#ifndef VGPU_INTERPOSER_VENDOR_HIP_API_H_
#define VGPU_INTERPOSER_VENDOR_HIP_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int hipError_t;
enum {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorNotInitialized = 3,
  hipErrorInvalidConfiguration = 9,
  hipErrorInvalidDeviceFunction = 98,
  hipErrorNoDevice = 100,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidHandle = 400,
  hipErrorNotFound = 500,
  hipErrorNotReady = 600,
  hipErrorNotSupported = 801,
  hipErrorStreamCaptureUnsupported = 900,
  hipErrorStreamCaptureInvalidated = 901,
  hipErrorStreamCaptureImplicit = 906
};

typedef int hipDevice_t;
typedef struct ihipStream_t* hipStream_t;
typedef struct ihipEvent_t* hipEvent_t;
typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
typedef struct ihipMemPoolHandle_t* hipMemPool_t;
typedef struct hipGraphExec* hipGraphExec_t;

typedef struct dim3 {
  uint32_t x, y, z;
} dim3;

/* Arrays (textures): bytes = elements x channel bits / 8. */
typedef struct hipArray* hipArray_t;
typedef struct hipMipmappedArray* hipMipmappedArray_t;
typedef void* hipDeviceptr_t;
typedef enum hipChannelFormatKind {
  hipChannelFormatKindSigned = 0,
  hipChannelFormatKindUnsigned = 1,
  hipChannelFormatKindFloat = 2,
  hipChannelFormatKindNone = 3
} hipChannelFormatKind;
typedef struct hipChannelFormatDesc {
  int x, y, z, w; /* bits per channel */
  hipChannelFormatKind f;
} hipChannelFormatDesc;
typedef struct hipExtent {
  size_t width, height, depth;
} hipExtent;
typedef struct hipPitchedPtr {
  void* ptr;
  size_t pitch, xsize, ysize;
} hipPitchedPtr;

/* Copies and fills. hipMemcpyDeviceToDeviceNoCU asks for the DMA engines. */
typedef int hipMemcpyKind;
enum {
  hipMemcpyHostToHost = 0,
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  hipMemcpyDeviceToDevice = 3,
  hipMemcpyDefault = 4,
  hipMemcpyDeviceToDeviceNoCU = 1024
};
typedef struct hipMemcpy3DParms hipMemcpy3DParms; /* not looked into */
#define VGPU_HIP_COPY_DECLS(S)                                                                                     \
  hipError_t hipMemset##S(void* dst, int value, size_t bytes);                                                     \
  hipError_t hipMemsetAsync##S(void* dst, int value, size_t bytes, hipStream_t stream);                            \
  hipError_t hipMemset2D##S(void* dst, size_t pitch, int value, size_t width, size_t height);                      \
  hipError_t hipMemset2DAsync##S(void* dst, size_t pitch, int value, size_t width, size_t height,                  \
                                 hipStream_t stream);                                                              \
  hipError_t hipMemset3D##S(hipPitchedPtr dst, int value, hipExtent extent);                                       \
  hipError_t hipMemset3DAsync##S(hipPitchedPtr dst, int value, hipExtent extent, hipStream_t stream);              \
  hipError_t hipMemcpy##S(void* dst, const void* src, size_t bytes, hipMemcpyKind kind);                           \
  hipError_t hipMemcpyAsync##S(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t stream);  \
  hipError_t hipMemcpy2D##S(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, \
                            hipMemcpyKind kind);                                                                   \
  hipError_t hipMemcpy2DAsync##S(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,           \
                                 size_t height, hipMemcpyKind kind, hipStream_t stream);                           \
  hipError_t hipMemcpy3D##S(const hipMemcpy3DParms* p);                                                            \
  hipError_t hipMemcpy3DAsync##S(const hipMemcpy3DParms* p, hipStream_t stream);
VGPU_HIP_COPY_DECLS()
VGPU_HIP_COPY_DECLS(_spt)
#undef VGPU_HIP_COPY_DECLS
hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char value, size_t count);
hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count, hipStream_t stream);
hipError_t hipMemsetD16(hipDeviceptr_t dst, unsigned short value, size_t count);
hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short value, size_t count, hipStream_t stream);
hipError_t hipMemsetD32(hipDeviceptr_t dst, int value, size_t count);
hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream);
hipError_t hipMemcpyWithStream(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t bytes);
hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t bytes, hipStream_t stream);
hipError_t hipMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t bytes);
hipError_t hipMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                              hipStream_t stream);
typedef enum hipArray_Format {
  HIP_AD_FORMAT_UNSIGNED_INT8 = 0x01,
  HIP_AD_FORMAT_UNSIGNED_INT16 = 0x02,
  HIP_AD_FORMAT_UNSIGNED_INT32 = 0x03,
  HIP_AD_FORMAT_SIGNED_INT8 = 0x08,
  HIP_AD_FORMAT_SIGNED_INT16 = 0x09,
  HIP_AD_FORMAT_SIGNED_INT32 = 0x0a,
  HIP_AD_FORMAT_HALF = 0x10,
  HIP_AD_FORMAT_FLOAT = 0x20
} hipArray_Format;
typedef struct HIP_ARRAY_DESCRIPTOR {
  size_t Width, Height;
  hipArray_Format Format;
  unsigned int NumChannels;
} HIP_ARRAY_DESCRIPTOR;
typedef struct HIP_ARRAY3D_DESCRIPTOR {
  size_t Width, Height, Depth;
  hipArray_Format Format;
  unsigned int NumChannels;
  unsigned int Flags;
} HIP_ARRAY3D_DESCRIPTOR;

/* Virtual memory management: as CUDA's, location.type 1 = a device. */
typedef struct ihipMemGenericAllocationHandle* hipMemGenericAllocationHandle_t;
enum { hipMemLocationTypeDevice = 1, hipMemAllocationTypePinned = 1 };
typedef struct hipMemLocation {
  int type;
  int id;
} hipMemLocation;
typedef struct hipMemAllocationProp {
  int type;
  int requestedHandleType;
  hipMemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType, gpuDirectRDMACapable;
    unsigned short usage;
  } allocFlags;
} hipMemAllocationProp;

/* Device identity and memory. */
hipError_t hipGetDeviceCount(int* count);
hipError_t hipGetDevice(int* device);
hipError_t hipSetDevice(int device);
hipError_t hipDeviceGetPCIBusId(char* bus_id, int length, int device);
hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device);
hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total_bytes);
hipError_t hipMalloc(void** ptr, size_t size);
hipError_t hipExtMallocWithFlags(void** ptr, size_t size, unsigned int flags);
hipError_t hipMallocManaged(void** ptr, size_t size, unsigned int flags);
hipError_t hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height);
hipError_t hipMallocAsync(void** ptr, size_t size, hipStream_t stream);
hipError_t hipMallocFromPoolAsync(void** ptr, size_t size, hipMemPool_t pool, hipStream_t stream);
hipError_t hipFree(void* ptr);
hipError_t hipMemAllocPitch(hipDeviceptr_t* ptr, size_t* pitch, size_t width_bytes, size_t height,
                            unsigned int element_bytes);
hipError_t hipMalloc3D(hipPitchedPtr* pitched, hipExtent extent);
hipError_t hipMallocArray(hipArray_t* array, const hipChannelFormatDesc* desc, size_t width, size_t height,
                          unsigned int flags);
hipError_t hipMalloc3DArray(hipArray_t* array, const hipChannelFormatDesc* desc, hipExtent extent,
                            unsigned int flags);
hipError_t hipArrayCreate(hipArray_t* array, const HIP_ARRAY_DESCRIPTOR* desc);
hipError_t hipArray3DCreate(hipArray_t* array, const HIP_ARRAY3D_DESCRIPTOR* desc);
hipError_t hipMallocMipmappedArray(hipMipmappedArray_t* array, const hipChannelFormatDesc* desc, hipExtent extent,
                                   unsigned int levels, unsigned int flags);
hipError_t hipFreeArray(hipArray_t array);
hipError_t hipArrayDestroy(hipArray_t array);
hipError_t hipFreeMipmappedArray(hipMipmappedArray_t array);
/* The driver-style twins (HIP_ARRAY3D_DESCRIPTOR); either free call frees
 * a mipmapped array made either way. With hipArrayLayered, Depth is the
 * number of layers, which the levels do not halve. */
enum { hipArrayLayered = 0x01 };
hipError_t hipMipmappedArrayCreate(hipMipmappedArray_t* array, HIP_ARRAY3D_DESCRIPTOR* desc, unsigned int levels);
hipError_t hipMipmappedArrayDestroy(hipMipmappedArray_t array);
/* Compiler ABI (not in the public headers): a program's module constructor
 * registers each __managed__ variable; the runtime allocates `size` bytes
 * of managed memory for it into *pointer and copies init_value there. */
void __hipRegisterManagedVar(void* hip_module, void** pointer, void* init_value, const char* name, size_t size,
                             unsigned align);
hipError_t hipMemCreate(hipMemGenericAllocationHandle_t* handle, size_t size, const hipMemAllocationProp* prop,
                        unsigned long long flags);
hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle);
hipError_t hipMemAddressReserve(void** ptr, size_t size, size_t alignment, void* addr, unsigned long long flags);
hipError_t hipMemMap(void* ptr, size_t size, size_t offset, hipMemGenericAllocationHandle_t handle,
                     unsigned long long flags);
hipError_t hipMemUnmap(void* ptr, size_t size);
hipError_t hipMemRetainAllocationHandle(hipMemGenericAllocationHandle_t* handle, void* addr);
hipError_t hipFreeAsync(void* ptr, hipStream_t stream);
/* Stream-ordered pools: attributes as CUDA numbers them (values uint64_t). */
typedef enum hipMemPoolAttr {
  hipMemPoolAttrReleaseThreshold = 4,
  hipMemPoolAttrReservedMemCurrent = 5,
  hipMemPoolAttrUsedMemCurrent = 7
} hipMemPoolAttr;
hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t* pool, int device);
hipError_t hipDeviceGetMemPool(hipMemPool_t* pool, int device);
hipError_t hipMemPoolTrimTo(hipMemPool_t pool, size_t min_bytes_to_keep);
hipError_t hipMemPoolSetAttribute(hipMemPool_t pool, hipMemPoolAttr attr, void* value);
hipError_t hipMemPoolGetAttribute(hipMemPool_t pool, hipMemPoolAttr attr, void* value);
hipError_t hipMemPoolDestroy(hipMemPool_t pool);

/* Kernels, modules, graphs. */
hipError_t hipModuleLoadData(hipModule_t* module, const void* image);
hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name);
hipError_t hipLaunchKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                           hipStream_t stream);
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared_bytes,
                                 hipStream_t stream, void** params, void** extra);
/* The launch API before hip-clang: a configuration pushed per thread,
 * arguments staged, then launched (popped). */
hipError_t hipConfigureCall(dim3 grid, dim3 block, size_t shared_bytes, hipStream_t stream);
hipError_t hipSetupArgument(const void* arg, size_t size, size_t offset);
hipError_t hipLaunchByPtr(const void* function);
/* Graphs that allocate memory: as CUDA's (allocation nodes, stream
 * capture, instantiation, the device's graph memory pool). */
typedef struct ihipGraph* hipGraph_t;
typedef struct hipGraphNode* hipGraphNode_t;
typedef struct hipMemPoolProps {
  int allocType;
  int handleTypes;
  hipMemLocation location; /* location.id: the device */
  void* win32SecurityAttributes;
  size_t maxSize;
  unsigned char reserved[56];
} hipMemPoolProps;
typedef struct hipMemAccessDesc hipMemAccessDesc;
typedef struct hipMemAllocNodeParams {
  hipMemPoolProps poolProps;
  const hipMemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr; /* out */
} hipMemAllocNodeParams;
enum { hipGraphNodeTypeGraph = 4, hipGraphNodeTypeMemAlloc = 10 };
typedef struct hipChildGraphNodeParams {
  hipGraph_t graph; /* cloned into the parent */
} hipChildGraphNodeParams;
typedef struct hipGraphNodeParams {
  int type;
  int reserved0[3];
  union {
    long long reserved1[29];
    hipMemAllocNodeParams alloc;
    hipChildGraphNodeParams graph;
  };
  long long reserved2;
} hipGraphNodeParams;
/* hipGraphInstantiateWithParams: flag 2 (hipGraphInstantiateFlagUpload)
 * uploads the instance to uploadStream as hipGraphUpload does; result_out
 * 1 is hipGraphInstantiateError. HIP orders the fields unlike CUDA. */
enum { hipGraphInstantiateFlagUpload = 2, hipGraphInstantiateError = 1 };
typedef struct hipGraphInstantiateParams {
  hipGraphNode_t errNode_out;
  unsigned long long flags;
  int result_out;
  hipStream_t uploadStream;
} hipGraphInstantiateParams;
typedef enum hipStreamCaptureStatus { hipStreamCaptureStatusNone = 0, hipStreamCaptureStatusActive = 1 } hipStreamCaptureStatus;
typedef enum hipGraphMemAttributeType {
  hipGraphMemAttrUsedMemCurrent = 0,
  hipGraphMemAttrReservedMemCurrent = 2
} hipGraphMemAttributeType;
hipError_t hipMemPoolCreate(hipMemPool_t* pool, const hipMemPoolProps* props);
hipError_t hipGraphCreate(hipGraph_t* graph, unsigned int flags);
hipError_t hipGraphDestroy(hipGraph_t graph);
hipError_t hipGraphAddMemAllocNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps, size_t ndeps,
                                   hipMemAllocNodeParams* params);
hipError_t hipGraphAddNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps, size_t ndeps,
                           hipGraphNodeParams* params);
/* Unlike CUDA's driver, HIP's runtime clones graphs with allocation nodes,
 * into child graph nodes and with hipGraphClone. */
hipError_t hipGraphAddChildGraphNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                     size_t ndeps, hipGraph_t child);
hipError_t hipGraphClone(hipGraph_t* clone, hipGraph_t original);
hipError_t hipGraphInstantiate(hipGraphExec_t* exec, hipGraph_t graph, hipGraphNode_t* error_node, char* log,
                               size_t log_size);
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph, unsigned long long flags);
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t* exec, hipGraph_t graph, hipGraphInstantiateParams* params);
hipError_t hipGraphExecDestroy(hipGraphExec_t exec);
hipError_t hipGraphUpload(hipGraphExec_t exec, hipStream_t stream);
/* Capture modes: 0 global, 1 thread-local, 2 relaxed. */
hipError_t hipStreamBeginCapture(hipStream_t stream, int mode);
hipError_t hipStreamBeginCapture_spt(hipStream_t stream, int mode);
/* edges: const hipGraphEdgeData*, not modelled. */
hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph, const hipGraphNode_t* deps,
                                        const void* edges, size_t ndeps, int mode);
hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* graph);
hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t* graph);
hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus* status, unsigned long long* id);
hipError_t hipStreamGetCaptureInfo_spt(hipStream_t stream, hipStreamCaptureStatus* status, unsigned long long* id);
hipError_t hipDeviceGetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void* value);
hipError_t hipDeviceGraphMemTrim(int device);
hipError_t hipGraphLaunch(hipGraphExec_t graph, hipStream_t stream);
hipError_t hipGraphLaunch_spt(hipGraphExec_t graph, hipStream_t stream);
hipError_t hipLaunchKernel_spt(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                               hipStream_t stream);
hipError_t hipExtLaunchKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                              hipStream_t stream, hipEvent_t start, hipEvent_t stop, int flags);
hipError_t hipLaunchCooperativeKernel(const void* function, dim3 grid, dim3 block, void** args,
                                      unsigned int shared_bytes, hipStream_t stream);
hipError_t hipLaunchCooperativeKernel_spt(const void* function, dim3 grid, dim3 block, void** args,
                                          uint32_t shared_bytes, hipStream_t stream);
/* MIOpen's launch path: global work sizes (grid x block), as OpenCL. */
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t global_x, uint32_t global_y, uint32_t global_z,
                                    uint32_t local_x, uint32_t local_y, uint32_t local_z, size_t shared_bytes,
                                    hipStream_t stream, void** params, void** extra, hipEvent_t start,
                                    hipEvent_t stop, uint32_t flags);
hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t global_x, uint32_t global_y, uint32_t global_z,
                                    uint32_t local_x, uint32_t local_y, uint32_t local_z, size_t shared_bytes,
                                    hipStream_t stream, void** params, void** extra, hipEvent_t start,
                                    hipEvent_t stop);
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                            unsigned int bx, unsigned int by, unsigned int bz,
                                            unsigned int shared_bytes, hipStream_t stream, void** params);
/* Multi-device launches: one entry per device, each on its own stream. */
typedef struct hipLaunchParams_t {
  void* func;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  hipStream_t stream;
} hipLaunchParams;
typedef struct hipFunctionLaunchParams_t {
  hipFunction_t function;
  unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  hipStream_t hStream;
  void** kernelParams;
} hipFunctionLaunchParams;
hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams* list, int count, unsigned int flags);
hipError_t hipExtLaunchMultiKernelMultiDevice(hipLaunchParams* list, int count, unsigned int flags);
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams* list, unsigned int count,
                                                       unsigned int flags);
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device);
hipError_t hipStreamCreate(hipStream_t* stream);
hipError_t hipStreamDestroy(hipStream_t stream);
/* Launches with a configuration (ROCm 6.2+); attributes are passed through. */
typedef struct hipLaunchAttribute_st hipLaunchAttribute;
typedef struct hipLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  hipStream_t stream;
  hipLaunchAttribute* attrs;
  unsigned int numAttrs;
} hipLaunchConfig_t;
typedef struct HIP_LAUNCH_CONFIG_st {
  unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  hipStream_t hStream;
  hipLaunchAttribute* attrs;
  unsigned int numAttrs;
} HIP_LAUNCH_CONFIG;
hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* function, void** args);
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG* config, hipFunction_t f, void** params, void** extra);

/* Device limits: memory the runtime reserves for in-kernel malloc and
 * printf (and stacks). */
typedef enum hipLimit_t {
  hipLimitStackSize = 0,
  hipLimitPrintfFifoSize = 1,
  hipLimitMallocHeapSize = 2
} hipLimit_t;
hipError_t hipDeviceSetLimit(hipLimit_t limit, size_t value);
hipError_t hipDeviceGetLimit(size_t* value, hipLimit_t limit);

/* hipGetProcAddress (ROCm 6.2+), as CUDA's cuGetProcAddress_v2. */
enum {
  HIP_GET_PROC_ADDRESS_DEFAULT = 0,
  HIP_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
  HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2
};
typedef enum hipDriverProcAddressQueryResult {
  HIP_GET_PROC_ADDRESS_SUCCESS = 0,
  HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} hipDriverProcAddressQueryResult;
hipError_t hipGetProcAddress(const char* symbol, void** pfn, int hip_version, uint64_t flags,
                             hipDriverProcAddressQueryResult* status);
hipError_t hipDeviceSynchronize(void);
hipError_t hipStreamSynchronize(hipStream_t stream);

/* Events. */
hipError_t hipEventCreate(hipEvent_t* event);
hipError_t hipEventDestroy(hipEvent_t event);
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
hipError_t hipEventQuery(hipEvent_t event);
hipError_t hipEventSynchronize(hipEvent_t event);
hipError_t hipEventElapsedTime(float* milliseconds, hipEvent_t start, hipEvent_t stop);

#ifdef __cplusplus
}
#endif

#endif /* VGPU_INTERPOSER_VENDOR_HIP_API_H_ */
