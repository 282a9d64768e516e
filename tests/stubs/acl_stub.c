/* Stub AscendCL runtime (built as stubs/libascendcl.so) for the interposer
 * tests. Devices and memory are simulated; work only occupies a simulated
 * device clock. Entry points: src/interposer/vendor/acl_api.h; the model,
 * shared with cuda_stub.c and hip_stub.c: stub_accel.h.
 *
 *   VGPU_STUB_ACL_DEVICES    "<physical_id>,<memory_bytes>;..."
 *       e.g. "3,68719476736": logical device 0 is /dev/davinci3. The
 *       logical order is the list's (as ASCEND_RT_VISIBLE_DEVICES would make
 *       it); aclrtGetPhyDevIdByLogicDevId maps back. Read by aclInit, once;
 *       every other call before a successful aclInit gives
 *       ACL_ERROR_UNINITIALIZE. No record: ACL_ERROR_RT_NO_DEVICE.
 *   VGPU_STUB_ACL_CLOCK_DIR  a directory for the shared device clocks
 *       (<dir>/<physical_id>.clock), as in the other stubs.
 *
 * Current device: per thread, 0 until aclrtSetDevice.
 * Memory: aclrtMalloc, aclrtMallocCached and aclrtMallocWithCfg take the
 *   bytes asked on the current device (0: ACL_ERROR_INVALID_PARAM, as the
 *   real runtime); ACL_ERROR_RT_MEMORY_ALLOCATION past the device's memory.
 *   A config's ACL_RT_MEM_ATTR_DEVICE_ID must name the current device, as
 *   CANN 8.5's runtime requires (else ACL_ERROR_RT_PARAM_INVALID).
 *   aclrtFreeWithDevSync waits for the device, then frees as aclrtFree.
 *   aclrtGetMemInfo reports the current device for the HBM kinds and a
 *   fixed 64 GiB (32 GiB free) of host memory for the DDR kinds (CANN 8.5's
 *   numbering); ACL_ERROR_RT_PARAM_INVALID for the others, as the runtime.
 *   As CANN 8.5's libacl_rt.so, aclrtMalloc and aclrtGetDevice only call
 *   their exported twins aclrtMallocImpl and aclrtGetDeviceImpl.
 * Work: a kernel, model or operator of N microseconds is, in this stub,
 *   the function handle vgpu_stub_acl_kernel(N) (aclrtLaunchKernel), model
 *   id N (aclmdlExecuteAsync; aclmdlExecute also waits for it) or operator
 *   type "busy_<N>us" (aclopExecuteV2). A model runtime instance of N us
 *   (aclmdlRIExecuteAsync; aclmdlRIExecute also waits) and a cast's source
 *   descriptor (aclopCast) are the kernel handle; aclmdlExecuteV2 and
 *   aclmdlExecuteAsyncV2 take model ids (V2 waits). Work is queued on the
 *   current device's clock and returns at once; aclrtSynchronizeDevice/Stream
 *   wait for this process's last work there. Test exports:
 *   vgpu_stub_acl_kernel(), vgpu_stub_acl_busy_ns(),
 *   vgpu_stub_acl_internal_launch() (the runtime's internal launch, for the
 *   stub operator library opapi_stub.c).
 * Models that take memory when loaded: acl_stub_models.h.
 * Events: as in the other stubs; aclrtQueryEventStatus reports
 *   ACL_EVENT_RECORDED_STATUS_COMPLETE once the event's time has come.
 *
 * Build with -Wl,-Bsymbolic (see cuda_stub.c). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_api.h"

/* Internal only: what stub_accel.h says of an event not yet complete; ACL
 * reports it through aclrtQueryEventStatus's status instead. */
#define ACL_STUB_NOT_READY 507000
#define ACCEL_OK ACL_SUCCESS
#define ACCEL_INVALID_VALUE ACL_ERROR_INVALID_PARAM
#define ACCEL_INVALID_DEVICE ACL_ERROR_INVALID_DEVICE
#define ACCEL_INVALID_HANDLE ACL_ERROR_INVALID_PARAM
#define ACCEL_OUT_OF_MEMORY ACL_ERROR_RT_MEMORY_ALLOCATION
#define ACCEL_NOT_READY ACL_STUB_NOT_READY
#define ACCEL_NOT_FOUND ACL_ERROR_INVALID_PARAM
#define ACCEL_NO_DEVICE ACL_ERROR_RT_NO_DEVICE
#define ACCEL_NO_CLOCK ACL_ERROR_UNINITIALIZE
/* Capture (stub_graph.h's rules): an unsafe call in capture is the stub's
 * own code (CANN names no single one), an invalidated capture CANN's. */
#define ACCEL_CAPTURE_UNSUPPORTED 507099
#define ACCEL_CAPTURE_INVALIDATED ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
#define ACCEL_CAPTURE_IMPLICIT ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
#include "stub_accel.h"
#include "stub_vmm.h"
#include "stub_pool.h"
#include "stub_graph.h"
#define CAPTURED(stream) graph_capturing((uint64_t)(uintptr_t)(stream))

/* Arguments the simulation does not model are ignored. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

aclrtFuncHandle vgpu_stub_acl_kernel(unsigned int duration_us);
aclError vgpu_stub_acl_internal_launch(unsigned int duration_us);
unsigned long long vgpu_stub_acl_busy_ns(void);
/* libacl_rt_impl.so's twins (no installed header declares them). */
aclError aclrtMallocImpl(void** ptr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtGetDeviceImpl(int32_t* device);

static pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_ready;                 /* aclInit succeeded */
static _Thread_local int t_current; /* the current device */

static int parse_physical_id(const char* s, int device) {
  char* end;
  long v = strtol(s, &end, 10);
  return (*s == '\0' || *end != '\0' || v < 0 || v > 1023) ? -1 : 0;
}

static aclError api_ready(void) { return __atomic_load_n(&g_ready, __ATOMIC_ACQUIRE) ? ACL_SUCCESS : ACL_ERROR_UNINITIALIZE; }

static aclError api_current_device(int* device) {
  TRY(api_ready());
  *device = t_current;
  return ACL_SUCCESS;
}

/* A second aclInit keeps the state (the real one answers "repeat init"). */
aclError aclInit(const char* config_path) {
  aclError rc = ACL_SUCCESS;
  pthread_mutex_lock(&g_init_mu);
  if (!g_ready) {
    rc = accel_load("acl_stub", "VGPU_STUB_ACL_DEVICES", "VGPU_STUB_ACL_CLOCK_DIR", parse_physical_id);
    if (rc == ACL_SUCCESS) __atomic_store_n(&g_ready, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_init_mu);
  return rc;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
  TRY(api_ready());
  if (count == NULL) return ACL_ERROR_INVALID_PARAM;
  *count = (uint32_t)g_count;
  return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t device) {
  TRY(accel_device_call("", device));
  t_current = device;
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceImpl(int32_t* device) { return accel_get_device(device); }
aclError aclrtGetDevice(int32_t* device) { return aclrtGetDeviceImpl(device); }

aclError aclrtGetPhyDevIdByLogicDevId(int32_t logic_device, int32_t* physical_device) {
  TRY(accel_device_call(physical_device, logic_device));
  *physical_device = (int32_t)strtol(g_dev[logic_device].id, NULL, 10);
  return ACL_SUCCESS;
}

static aclError alloc_current(void** ptr, size_t size) {
  int device;
  uint64_t key;
  TRY(api_current_device(&device));
  if (ptr == NULL || size == 0) return ACL_ERROR_INVALID_PARAM;
  TRY(accel_reserve(KIND_PTR, device, size, &key));
  *ptr = (void*)(uintptr_t)key;
  return ACL_SUCCESS;
}

aclError aclrtMallocImpl(void** ptr, size_t size, aclrtMemMallocPolicy policy) { return alloc_current(ptr, size); }
aclError aclrtMalloc(void** ptr, size_t size, aclrtMemMallocPolicy policy) { return aclrtMallocImpl(ptr, size, policy); }
aclError aclrtMallocCached(void** ptr, size_t size, aclrtMemMallocPolicy policy) { return alloc_current(ptr, size); }

/* A config's device (the last ACL_RT_MEM_ATTR_DEVICE_ID) must be the current
 * one: CANN 8.5's DevMalloc refuses any other. */
static aclError alloc_with_config(void** ptr, size_t size, const void* config) {
  const aclrtMallocConfig* cfg = config;
  int device;
  uint32_t named;
  TRY(api_current_device(&device));
  if (cfg != NULL && cfg->numAttrs > 0 && cfg->attrs == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  named = (uint32_t)device;
  for (size_t i = 0; cfg != NULL && i < cfg->numAttrs; ++i)
    if (cfg->attrs[i].attr == ACL_RT_MEM_ATTR_DEVICE_ID) named = cfg->attrs[i].value.deviceId;
  return named == (uint32_t)device ? alloc_current(ptr, size) : ACL_ERROR_RT_PARAM_INVALID;
}
aclError aclrtMallocWithCfg(void** ptr, size_t size, aclrtMemMallocPolicy policy, void* config) {
  return alloc_with_config(ptr, size, config);
}

/* 32-byte aligned (torch_npu's caching allocator): as aclrtMalloc here. */
aclError aclrtMallocAlign32(void** ptr, size_t size, aclrtMemMallocPolicy policy) { return alloc_current(ptr, size); }
aclError aclrtMallocForTaskScheduler(void** ptr, size_t size, aclrtMemMallocPolicy policy, void* config) {
  return alloc_with_config(ptr, size, config);
}

/* Virtual memory (stub_vmm.h): physical memory lives until it is freed and
 * unmapped. aclrtUnmapMem unmaps the mapping that starts at `va`. */
aclError aclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size, const aclrtPhysicalMemProp* prop,
                             uint64_t flags) {
  uint64_t h;
  TRY(api_ready());
  if (handle == NULL || prop == NULL || prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
    return ACL_ERROR_INVALID_PARAM;
  if (!accel_valid_device((int)prop->location.id)) return ACL_ERROR_INVALID_DEVICE;
  TRY(vmm_create((int)prop->location.id, size, &h));
  *handle = (aclrtDrvMemHandle)(uintptr_t)h;
  return ACL_SUCCESS;
}
aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
  TRY(api_ready());
  return vmm_release((uint64_t)(uintptr_t)handle);
}
aclError aclrtReserveMemAddress(void** va, size_t size, size_t alignment, void* expected, uint64_t flags) {
  uint64_t v;
  TRY(api_ready());
  if (va == NULL) return ACL_ERROR_INVALID_PARAM;
  TRY(vmm_reserve_va(size, &v));
  *va = (void*)(uintptr_t)v;
  return ACL_SUCCESS;
}
aclError aclrtReleaseMemAddress(void* va) { return api_ready(); }
aclError aclrtMapMem(void* va, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags) {
  TRY(api_ready());
  return vmm_map_handle((uint64_t)(uintptr_t)va, size, (uint64_t)(uintptr_t)handle);
}
aclError aclrtUnmapMem(void* va) {
  TRY(api_ready());
  return vmm_unmap((uint64_t)(uintptr_t)va, 1);
}
/* Another reference to the handle mapped at `va` (CANN's VMM reference: one
 * more aclrtFreePhysical is needed). */
aclError aclrtMemRetainAllocationHandle(void* va, aclrtDrvMemHandle* handle) {
  uint64_t h = 0;
  TRY(api_ready());
  if (handle == NULL) return ACL_ERROR_INVALID_PARAM;
  TRY(vmm_retain((uint64_t)(uintptr_t)va, &h));
  *handle = (aclrtDrvMemHandle)(uintptr_t)h;
  return ACL_SUCCESS;
}

aclError aclrtFree(void* ptr) {
  TRY(api_ready());
  if (ptr == NULL) return ACL_ERROR_INVALID_PARAM;
  return accel_release(KIND_PTR, (uintptr_t)ptr);
}
aclError aclrtFreeWithDevSync(void* ptr) {
  TRY(api_ready());
  if (ptr == NULL) return ACL_ERROR_INVALID_PARAM;
  TRY(accel_synchronize());
  return accel_release(KIND_PTR, (uintptr_t)ptr);
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free_bytes, size_t* total_bytes) {
  switch (attr) {
    case ACL_DDR_MEM: case ACL_DDR_MEM_HUGE: case ACL_DDR_MEM_NORMAL: case ACL_DDR_MEM_P2P_HUGE:
    case ACL_DDR_MEM_P2P_NORMAL:
      TRY(api_ready());
      if (free_bytes == NULL || total_bytes == NULL) return ACL_ERROR_INVALID_PARAM;
      *total_bytes = 64ULL << 30;
      *free_bytes = 32ULL << 30;
      return ACL_SUCCESS;
    case ACL_HBM_MEM: case ACL_HBM_MEM_HUGE: case ACL_HBM_MEM_NORMAL: case ACL_HBM_MEM_P2P_HUGE:
    case ACL_HBM_MEM_P2P_NORMAL: case ACL_HBM_MEM_HUGE1G: case ACL_HBM_MEM_P2P_HUGE1G:
      return accel_mem_info(free_bytes, total_bytes);
    default:
      TRY(api_ready());
      return ACL_ERROR_RT_PARAM_INVALID;
  }
}

/* Work of N microseconds as a kernel handle of stub_accel.h. */
static aclError work_of(uint64_t us, uint64_t* handle) {
  char name[48];
  snprintf(name, sizeof(name), "busy_%lluus", (unsigned long long)us);
  return accel_function(1, 1, name, handle);
}

aclrtFuncHandle vgpu_stub_acl_kernel(unsigned int duration_us) {
  uint64_t f = 0;
  return work_of(duration_us, &f) == ACL_SUCCESS ? (aclrtFuncHandle)(uintptr_t)f : NULL;
}

/* The runtime's internal launch, which operator libraries (libopapi.so,
 * opapi_stub.c) use and no public entry point shows: work of N us. */
aclError vgpu_stub_acl_internal_launch(unsigned int duration_us) {
  uint64_t f = 0;
  TRY(work_of(duration_us, &f));
  return accel_launch((const void*)(uintptr_t)f, TAG_FUNC, ACL_ERROR_INVALID_PARAM);
}

/* On a stream in capture nothing runs (stub_graph.h). */
aclError aclrtLaunchKernel(aclrtFuncHandle function, uint32_t blocks, const void* args, size_t args_size,
                           aclrtStream stream) {
  TRY(api_ready());
  return CAPTURED(stream) ? ACL_SUCCESS : accel_launch(function, TAG_FUNC, ACL_ERROR_INVALID_PARAM);
}

aclError aclmdlExecuteAsync(uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output,
                            aclrtStream stream) {
  uint64_t f;
  TRY(work_of(model_id, &f));
  return CAPTURED(stream) ? ACL_SUCCESS : accel_launch((const void*)(uintptr_t)f, TAG_FUNC, ACL_ERROR_INVALID_PARAM);
}

aclError aclmdlExecute(uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output) {
  TRY(aclmdlExecuteAsync(model_id, input, output, NULL));
  return accel_synchronize();
}

aclError aclopExecuteV2(const char* op_type, int num_inputs, aclTensorDesc* input_desc[], aclDataBuffer* inputs[],
                        int num_outputs, aclTensorDesc* output_desc[], aclDataBuffer* outputs[], aclopAttr* attr,
                        aclrtStream stream) {
  uint64_t f;
  TRY(accel_function(op_type != NULL, 1, op_type, &f));
  return CAPTURED(stream) ? ACL_SUCCESS : accel_launch((const void*)(uintptr_t)f, TAG_FUNC, ACL_ERROR_INVALID_PARAM);
}

/* The other launch forms and single-operator entry points: as
 * aclrtLaunchKernel (function handles, aclopExecWithHandle's handle too)
 * and aclopExecuteV2 (operator types). */
aclError aclrtLaunchKernelV2(aclrtFuncHandle function, uint32_t blocks, const void* args, size_t args_size,
                             aclrtLaunchKernelCfg* cfg, aclrtStream stream) {
  return aclrtLaunchKernel(function, blocks, args, args_size, stream);
}
aclError aclrtLaunchKernelWithConfig(aclrtFuncHandle function, uint32_t blocks, aclrtStream stream,
                                     aclrtLaunchKernelCfg* cfg, aclrtArgsHandle args, void* reserve) {
  return aclrtLaunchKernel(function, blocks, NULL, 0, stream);
}
aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle function, uint32_t blocks, aclrtStream stream,
                                       aclrtLaunchKernelCfg* cfg, void* host_args, size_t args_size,
                                       aclrtPlaceHolderInfo* placeholders, size_t placeholder_count) {
  return aclrtLaunchKernel(function, blocks, host_args, args_size, stream);
}
aclError aclrtLaunchKernelWithArgsArray(void* function, uint32_t blocks, aclrtStream stream,
                                        aclrtLaunchKernelCfg* cfg, void** args) {
  return aclrtLaunchKernel(function, blocks, NULL, 0, stream);
}
aclError aclopExecute(const char* op_type, int num_inputs, const aclTensorDesc* const input_desc[],
                      const aclDataBuffer* const inputs[], int num_outputs, const aclTensorDesc* const output_desc[],
                      aclDataBuffer* const outputs[], const aclopAttr* attr, aclrtStream stream) {
  return aclopExecuteV2(op_type, 0, NULL, NULL, 0, NULL, NULL, NULL, stream);
}
aclError aclopExecWithHandle(aclopHandle handle, int num_inputs, const aclDataBuffer* const inputs[],
                             int num_outputs, aclDataBuffer* const outputs[], aclrtStream stream) {
  return aclrtLaunchKernel(handle, 1, NULL, 0, stream);
}
aclError aclopCompileAndExecute(const char* op_type, int num_inputs, const aclTensorDesc* const input_desc[],
                                const aclDataBuffer* const inputs[], int num_outputs,
                                const aclTensorDesc* const output_desc[], aclDataBuffer* const outputs[],
                                const aclopAttr* attr, aclopEngineType engine, aclopCompileType compile,
                                const char* op_path, aclrtStream stream) {
  return aclopExecuteV2(op_type, 0, NULL, NULL, 0, NULL, NULL, NULL, stream);
}
aclError aclopCompileAndExecuteV2(const char* op_type, int num_inputs, aclTensorDesc* input_desc[],
                                  aclDataBuffer* inputs[], int num_outputs, aclTensorDesc* output_desc[],
                                  aclDataBuffer* outputs[], aclopAttr* attr, aclopEngineType engine,
                                  aclopCompileType compile, const char* op_path, aclrtStream stream) {
  return aclopExecuteV2(op_type, 0, NULL, NULL, 0, NULL, NULL, NULL, stream);
}

/* A captured RI (aclmdlRICaptureEnd's) runs nothing the stub times. */
aclError aclmdlRIExecuteAsync(aclmdlRI model_ri, aclrtStream stream) {
  TRY(api_ready());
  if (CAPTURED(stream)) return ACL_SUCCESS;
  if ((uint64_t)(uintptr_t)model_ri - GRAPH_HANDLE_BASE < GRAPH_MAX) return ACL_SUCCESS;
  return accel_launch(model_ri, TAG_FUNC, ACL_ERROR_INVALID_PARAM);
}
aclError aclmdlRIExecute(aclmdlRI model_ri, int32_t timeout) {
  TRY(aclmdlRIExecuteAsync(model_ri, NULL));
  return accel_synchronize();
}
aclError aclmdlExecuteAsyncV2(uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output,
                              aclrtStream stream, const aclmdlExecConfigHandle* handle) {
  return aclmdlExecuteAsync(model_id, input, output, stream);
}
aclError aclmdlExecuteV2(uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output, aclrtStream stream,
                         const aclmdlExecConfigHandle* handle) {
  TRY(aclmdlExecuteAsync(model_id, input, output, stream));
  return accel_synchronize();
}
aclError aclopCast(const aclTensorDesc* src_desc, const aclDataBuffer* src_buffer, const aclTensorDesc* dst_desc,
                   aclDataBuffer* dst_buffer, uint8_t truncate, aclrtStream stream) {
  return CAPTURED(stream) ? ACL_SUCCESS : accel_launch(src_desc, TAG_FUNC, ACL_ERROR_INVALID_PARAM);
}

aclError aclrtSynchronizeDevice(void) {
  TRY(graph_unsafe_call());
  return accel_synchronize();
}
aclError aclrtSynchronizeStream(aclrtStream stream) { return aclrtSynchronizeDevice(); }

/* Capture into a model RI: stub_graph.h's captures and rules. */
aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode) {
  TRY(api_ready());
  if (mode < 0 || mode > 2) return ACL_ERROR_INVALID_PARAM;
  return graph_capture_begin((uint64_t)(uintptr_t)stream, 0, mode);
}
aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus* status, aclmdlRI* model_ri) {
  int capturing = 0;
  TRY(api_ready());
  if (status == NULL) return ACL_ERROR_INVALID_PARAM;
  TRY(graph_capture_info((uint64_t)(uintptr_t)stream, &capturing, NULL));
  *status = capturing ? ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE : ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  if (model_ri != NULL) *model_ri = NULL;
  return ACL_SUCCESS;
}
aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI* model_ri) {
  uint64_t h = 0;
  TRY(api_ready());
  if (model_ri == NULL) return ACL_ERROR_INVALID_PARAM;
  TRY(graph_capture_end((uint64_t)(uintptr_t)stream, &h));
  *model_ri = (aclmdlRI)(uintptr_t)h;
  return ACL_SUCCESS;
}

aclError aclrtCreateEvent(aclrtEvent* event) {
  uint64_t key;
  aclError rc = accel_event_create(event != NULL, 0, &key);
  if (rc == ACL_SUCCESS) *event = (aclrtEvent)(uintptr_t)key;
  return rc;
}

aclError aclrtDestroyEvent(aclrtEvent event) { return accel_event_destroy((uintptr_t)event); }
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  int captured;
  TRY(graph_event_record((uint64_t)(uintptr_t)stream, (uintptr_t)event, &captured));
  return captured ? ACL_SUCCESS : accel_event_record((uintptr_t)event);
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status) {
  aclError rc;
  if (status == NULL) return ACL_ERROR_INVALID_PARAM;
  TRY(graph_event_use((uintptr_t)event));
  TRY(graph_unsafe_call());
  rc = accel_event_query((uintptr_t)event);
  if (rc != ACL_SUCCESS && rc != ACL_STUB_NOT_READY) return rc;
  *status = rc == ACL_SUCCESS ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  TRY(graph_event_use((uintptr_t)event));
  TRY(graph_unsafe_call());
  return accel_event_synchronize((uintptr_t)event);
}

aclError aclrtEventElapsedTime(float* milliseconds, aclrtEvent start, aclrtEvent end) {
  TRY(graph_event_use((uintptr_t)start));
  TRY(graph_event_use((uintptr_t)end));
  aclError rc = accel_event_elapsed(milliseconds, (uintptr_t)start, (uintptr_t)end);
  return rc == ACL_STUB_NOT_READY ? ACL_ERROR_INVALID_PARAM : rc;
}

unsigned long long vgpu_stub_acl_busy_ns(void) { return atomic_load(&g_busy_ns); }

#include "acl_stub_models.h"
