/* The part of Huawei's AscendCL runtime (acl/acl_rt.h, acl/acl_mdl.h,
 * acl/acl_op.h; libascendcl.so) that slurm-vgpu's interposer hooks and its
 * stub implements. Declared here from the public CANN API reference: no
 * CANN header is installable from Debian's archive. Only what is used is
 * declared. Plain C, shared by the C stub and test programs and the C++
 * library. */
#ifndef VGPU_INTERPOSER_VENDOR_ACL_API_H_
#define VGPU_INTERPOSER_VENDOR_ACL_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
enum {
  ACL_SUCCESS = 0,
  ACL_ERROR_INVALID_PARAM = 100000,
  ACL_ERROR_UNINITIALIZE = 100001,
  ACL_ERROR_INVALID_DEVICE = 100005,
  ACL_ERROR_RT_PARAM_INVALID = 107000,
  ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000,
  ACL_ERROR_RT_MEMORY_ALLOCATION = 207001,
  ACL_ERROR_RT_NO_DEVICE = 207004
};

typedef void* aclrtStream;
typedef void* aclrtEvent;
typedef void* aclrtContext;
typedef void* aclrtFuncHandle;
typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclTensorDesc aclTensorDesc;
typedef struct aclDataBuffer aclDataBuffer;
typedef struct aclopAttr aclopAttr;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2
} aclrtMemMallocPolicy;

/* aclrtGetMemInfo (CANN 8.5 acl_rt.h): the DDR kinds are host-side memory,
 * the HBM kinds (P2P and 1 GiB pages too) the device's. The ACL_MEM_*
 * kinds name a page size only, for aclrtMallocPhysical (HBM on a device,
 * DDR on the host); aclrtGetMemInfo refuses them. */
typedef enum aclrtMemAttr {
  ACL_DDR_MEM = 0,
  ACL_HBM_MEM = 1,
  ACL_DDR_MEM_HUGE = 2,
  ACL_DDR_MEM_NORMAL = 3,
  ACL_HBM_MEM_HUGE = 4,
  ACL_HBM_MEM_NORMAL = 5,
  ACL_DDR_MEM_P2P_HUGE = 6,
  ACL_DDR_MEM_P2P_NORMAL = 7,
  ACL_HBM_MEM_P2P_HUGE = 8,
  ACL_HBM_MEM_P2P_NORMAL = 9,
  ACL_HBM_MEM_HUGE1G = 10,
  ACL_HBM_MEM_P2P_HUGE1G = 11,
  ACL_MEM_NORMAL = 12,
  ACL_MEM_HUGE = 13,
  ACL_MEM_HUGE1G = 14,
  ACL_MEM_P2P_NORMAL = 15,
  ACL_MEM_P2P_HUGE = 16,
  ACL_MEM_P2P_HUGE1G = 17
} aclrtMemAttr;

/* What aclrtMallocWithCfg's and aclrtMallocForTaskScheduler's config points
 * to (declared void* below). ACL_RT_MEM_ATTR_DEVICE_ID must name the current
 * device: the runtime refuses any other (ApiImpl::DevMalloc). */
typedef enum {
  ACL_RT_MEM_ATTR_RSV = 0,
  ACL_RT_MEM_ATTR_MODULE_ID = 1,
  ACL_RT_MEM_ATTR_DEVICE_ID = 2,
  ACL_RT_MEM_ATTR_VA_FLAG = 3
} aclrtMallocAttrType;
typedef union {
  uint16_t moduleId;
  uint32_t deviceId;
  uint32_t vaFlag;
  uint8_t rsv[8];
} aclrtMallocAttrValue;
typedef struct {
  aclrtMallocAttrType attr;
  aclrtMallocAttrValue value;
} aclrtMallocAttribute;
typedef struct {
  aclrtMallocAttribute* attrs;
  size_t numAttrs;
} aclrtMallocConfig;

/* Virtual memory (CANN 7+; torch_npu's expandable segments): physical
 * memory made by aclrtMallocPhysical on location.id (a logical device,
 * type ACL_MEM_LOCATION_TYPE_DEVICE) and mapped into a reserved range. */
typedef void* aclrtDrvMemHandle;
typedef enum aclrtMemLocationType {
  ACL_MEM_LOCATION_TYPE_HOST = 0,
  ACL_MEM_LOCATION_TYPE_DEVICE = 1
} aclrtMemLocationType;
typedef struct aclrtMemLocation {
  uint32_t id;
  aclrtMemLocationType type;
} aclrtMemLocation;
typedef struct aclrtPhysicalMemProp {
  int handleType;     /* ACL_MEM_HANDLE_TYPE_NONE = 0 */
  int allocationType; /* ACL_MEM_ALLOCATION_TYPE_PINNED = 0 */
  aclrtMemAttr memAttr;
  aclrtMemLocation location;
  uint64_t reserve;
} aclrtPhysicalMemProp;

typedef enum aclrtEventRecordedStatus {
  ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
  ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

/* Devices. */
aclError aclInit(const char* config_path);
aclError aclrtGetDeviceCount(uint32_t* count);
aclError aclrtSetDevice(int32_t device);
aclError aclrtGetDevice(int32_t* device);
aclError aclrtGetPhyDevIdByLogicDevId(int32_t logic_device, int32_t* physical_device);

/* Device memory. */
aclError aclrtMalloc(void** ptr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocCached(void** ptr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocWithCfg(void** ptr, size_t size, aclrtMemMallocPolicy policy, void* config);
aclError aclrtMallocAlign32(void** ptr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocForTaskScheduler(void** ptr, size_t size, aclrtMemMallocPolicy policy, void* config);
aclError aclrtFree(void* ptr);
/* aclrtFree after a device synchronisation (memory of aclrtMalloc only). */
aclError aclrtFreeWithDevSync(void* ptr);
aclError aclrtReserveMemAddress(void** va, size_t size, size_t alignment, void* expected, uint64_t flags);
aclError aclrtReleaseMemAddress(void* va);
aclError aclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size, const aclrtPhysicalMemProp* prop,
                             uint64_t flags);
aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
aclError aclrtMapMem(void* va, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags);
aclError aclrtUnmapMem(void* va);
/* The handle mapped at `va`, with another reference: aclrtFreePhysical must
 * be called once more for it. */
aclError aclrtMemRetainAllocationHandle(void* va, aclrtDrvMemHandle* handle);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free_bytes, size_t* total_bytes);

/* Work on the device: kernels, models, single operators. */
aclError aclrtLaunchKernel(aclrtFuncHandle function, uint32_t blocks, const void* args, size_t args_size,
                           aclrtStream stream);
aclError aclmdlExecute(uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output);
aclError aclmdlExecuteAsync(uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output,
                            aclrtStream stream);
aclError aclopExecuteV2(const char* op_type, int num_inputs, aclTensorDesc* input_desc[],
                        aclDataBuffer* inputs[], int num_outputs, aclTensorDesc* output_desc[],
                        aclDataBuffer* outputs[], aclopAttr* attr, aclrtStream stream);
/* Kernel launches of CANN 8.5+ (configuration, host-side arguments) and
 * the other single-operator entry points. */
typedef struct aclrtLaunchKernelCfg aclrtLaunchKernelCfg;
typedef void* aclrtArgsHandle;
typedef struct aclrtPlaceHolderInfo {
  uint32_t addrOffset;
  uint32_t dataOffset;
} aclrtPlaceHolderInfo;
typedef void* aclopHandle;
typedef int aclopEngineType;
typedef int aclopCompileType;
aclError aclrtLaunchKernelV2(aclrtFuncHandle function, uint32_t blocks, const void* args, size_t args_size,
                             aclrtLaunchKernelCfg* cfg, aclrtStream stream);
aclError aclrtLaunchKernelWithConfig(aclrtFuncHandle function, uint32_t blocks, aclrtStream stream,
                                     aclrtLaunchKernelCfg* cfg, aclrtArgsHandle args, void* reserve);
aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle function, uint32_t blocks, aclrtStream stream,
                                       aclrtLaunchKernelCfg* cfg, void* host_args, size_t args_size,
                                       aclrtPlaceHolderInfo* placeholders, size_t placeholder_count);
aclError aclrtLaunchKernelWithArgsArray(void* function, uint32_t blocks, aclrtStream stream,
                                        aclrtLaunchKernelCfg* cfg, void** args);
aclError aclopExecute(const char* op_type, int num_inputs, const aclTensorDesc* const input_desc[],
                      const aclDataBuffer* const inputs[], int num_outputs, const aclTensorDesc* const output_desc[],
                      aclDataBuffer* const outputs[], const aclopAttr* attr, aclrtStream stream);
aclError aclopExecWithHandle(aclopHandle handle, int num_inputs, const aclDataBuffer* const inputs[],
                             int num_outputs, aclDataBuffer* const outputs[], aclrtStream stream);
aclError aclopCompileAndExecute(const char* op_type, int num_inputs, const aclTensorDesc* const input_desc[],
                                const aclDataBuffer* const inputs[], int num_outputs,
                                const aclTensorDesc* const output_desc[], aclDataBuffer* const outputs[],
                                const aclopAttr* attr, aclopEngineType engine, aclopCompileType compile,
                                const char* op_path, aclrtStream stream);
aclError aclopCompileAndExecuteV2(const char* op_type, int num_inputs, aclTensorDesc* input_desc[],
                                  aclDataBuffer* inputs[], int num_outputs, aclTensorDesc* output_desc[],
                                  aclDataBuffer* outputs[], aclopAttr* attr, aclopEngineType engine,
                                  aclopCompileType compile, const char* op_path, aclrtStream stream);
/* Work of CANN 8.x: model runtime instances (a captured or built task
 * graph, torch_npu's NPUGraph; aclmdlRIExecute runs it on the default
 * stream and waits), the model executions with a config handle
 * (aclmdlExecuteV2 waits for the stream) and the cast operator. */
typedef void* aclmdlRI;
typedef struct aclmdlExecConfigHandle aclmdlExecConfigHandle;
/* Capture of a stream into a model RI (torch_npu's NPUGraph): as CUDA's
 * stream capture, modes 0 global, 1 thread-local, 2 relaxed. */
typedef enum {
  ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
  ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL = 1,
  ACL_MODEL_RI_CAPTURE_MODE_RELAXED = 2
} aclmdlRICaptureMode;
typedef enum {
  ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
  ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE = 1,
  ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED = 2
} aclmdlRICaptureStatus;
enum { ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED = 507903 };
aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode);
aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus* status, aclmdlRI* model_ri);
aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI* model_ri);
aclError aclmdlRIExecuteAsync(aclmdlRI model_ri, aclrtStream stream);
aclError aclmdlRIExecute(aclmdlRI model_ri, int32_t timeout);
aclError aclmdlExecuteV2(uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output, aclrtStream stream,
                         const aclmdlExecConfigHandle* handle);
aclError aclmdlExecuteAsyncV2(uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output,
                              aclrtStream stream, const aclmdlExecConfigHandle* handle);
aclError aclopCast(const aclTensorDesc* src_desc, const aclDataBuffer* src_buffer, const aclTensorDesc* dst_desc,
                   aclDataBuffer* dst_buffer, uint8_t truncate, aclrtStream stream);
/* Offline models: loads whose work and weight memory the runtime
 * allocates (how much: aclmdlQuerySize), the WithMem loads where the
 * program hands in either (a null pointer: the runtime allocates that one),
 * and loads described by a config handle (aclmdlConfigAttr values). */
typedef struct aclmdlConfigHandle aclmdlConfigHandle;
typedef enum {
  ACL_MDL_LOAD_TYPE_SIZET = 1,
  ACL_MDL_PATH_PTR = 2,
  ACL_MDL_MEM_ADDR_PTR = 3,
  ACL_MDL_MEM_SIZET = 4,
  ACL_MDL_WEIGHT_ADDR_PTR = 5,
  ACL_MDL_WEIGHT_SIZET = 6,
  ACL_MDL_WORKSPACE_ADDR_PTR = 7,
  ACL_MDL_WORKSPACE_SIZET = 8,
  /* The other partitions a program may hand in (aclmdlExeOMDesc). */
  ACL_MDL_MODEL_DESC_PTR = 15,
  ACL_MDL_KERNEL_PTR = 17,
  ACL_MDL_KERNEL_ARGS_PTR = 19,
  ACL_MDL_STATIC_TASK_PTR = 21,
  ACL_MDL_DYNAMIC_TASK_PTR = 23,
  ACL_MDL_FIFO_PTR = 26
} aclmdlConfigAttr;
/* The device memory a model file's load takes, partition by partition
 * (aclmdlQueryExeOMDesc, CANN 8.x acl_mdl.h; answered by the runtimes that
 * load *.exeom models, others lack the call or refuse). */
typedef struct aclmdlExeOMDesc {
  size_t workSize;
  size_t weightSize;
  size_t modelDescSize;
  size_t kernelSize;
  size_t kernelArgsSize;
  size_t staticTaskSize;
  size_t dynamicTaskSize;
  size_t fifoTaskSize;
  size_t reserved[8];
} aclmdlExeOMDesc;
aclError aclmdlQueryExeOMDesc(const char* path, aclmdlExeOMDesc* desc);
/* Bundles (several models in one file, loaded together): the runtime
 * allocates their memory and no call sizes it beforehand. */
aclError aclmdlBundleLoadFromFile(const char* path, uint32_t* bundle_id);
aclError aclmdlBundleLoadFromMem(const void* model, size_t model_size, uint32_t* bundle_id);
aclError aclmdlBundleUnload(uint32_t bundle_id);
enum { ACL_MDL_LOAD_FROM_FILE = 1, ACL_MDL_LOAD_FROM_FILE_WITH_MEM = 2, ACL_MDL_LOAD_FROM_MEM = 3,
       ACL_MDL_LOAD_FROM_MEM_WITH_MEM = 4 };
aclError aclmdlQuerySize(const char* path, size_t* work_size, size_t* weight_size);
aclError aclmdlQuerySizeFromMem(const void* model, size_t model_size, size_t* work_size, size_t* weight_size);
aclError aclmdlLoadFromFile(const char* path, uint32_t* model_id);
aclError aclmdlLoadFromMem(const void* model, size_t model_size, uint32_t* model_id);
aclError aclmdlLoadFromFileWithMem(const char* path, uint32_t* model_id, void* work, size_t work_size, void* weight,
                                   size_t weight_size);
aclError aclmdlLoadFromMemWithMem(const void* model, size_t model_size, uint32_t* model_id, void* work,
                                  size_t work_size, void* weight, size_t weight_size);
aclError aclmdlLoadFromFileWithQ(const char* path, uint32_t* model_id, const uint32_t* input_q, size_t input_q_count,
                                 const uint32_t* output_q, size_t output_q_count);
aclError aclmdlLoadFromMemWithQ(const void* model, size_t model_size, uint32_t* model_id, const uint32_t* input_q,
                                size_t input_q_count, const uint32_t* output_q, size_t output_q_count);
aclmdlConfigHandle* aclmdlCreateConfigHandle(void);
aclError aclmdlDestroyConfigHandle(aclmdlConfigHandle* handle);
aclError aclmdlSetConfigOpt(aclmdlConfigHandle* handle, aclmdlConfigAttr attr, const void* value, size_t value_size);
aclError aclmdlLoadWithConfig(const aclmdlConfigHandle* handle, uint32_t* model_id);
aclError aclmdlUnload(uint32_t model_id);
aclError aclrtSynchronizeDevice(void);
aclError aclrtSynchronizeStream(aclrtStream stream);

/* Events. */
aclError aclrtCreateEvent(aclrtEvent* event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtEventElapsedTime(float* milliseconds, aclrtEvent start, aclrtEvent end);

#ifdef __cplusplus
}
#endif

#endif /* VGPU_INTERPOSER_VENDOR_ACL_API_H_ */
