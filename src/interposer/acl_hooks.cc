// AscendCL hooks (Huawei Ascend NPUs): the same limits as for CUDA. Device
// memory is counted on every allocation path and refused past the job's
// limit with ACL_ERROR_RT_MEMORY_ALLOCATION; aclrtGetMemInfo reports the
// limit for device (HBM) memory; kernels (every launch form), models and
// single operators are paced, aclnn operators in aclnn_hooks.cc, model-RI
// replays and CANN 8.x's other work in acl_work_hooks.cc. A device is
// matched to the limits file by its physical device id (the N of
// /dev/davinciN, which ASCEND_RT_VISIBLE_DEVICES cannot change).
#include <string>

#include "accounting.h"
#include "acl_api.h"
#include "acl_device.h"
#include "enforcer.h"
#include "export.h"
#include "hooks.h"
#include "launch_pacer.h"
#include "physical_ledger.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

using Kind = Enforcer::Kind;
constexpr Vendor kAcl = Vendor::kAcl;


int32_t CurrentDevice() {
  static const auto get = RealAs<decltype(&aclrtGetDevice)>(kAcl, "aclrtGetDevice");
  int32_t dev = -1;
  return get && get(&dev) == ACL_SUCCESS ? dev : -1;
}

// The job's account of logical device `dev` (null: not the job's).
DeviceAccount* AccountOf(int32_t dev) {
  static DeviceAccounts& accounts = *new DeviceAccounts("Ascend");
  return accounts.Get(dev, [](int d, std::string* id) {
    static const auto physical =
        RealAs<decltype(&aclrtGetPhyDevIdByLogicDevId)>(kAcl, "aclrtGetPhyDevIdByLogicDevId");
    int32_t phy = d;
    // Runtimes older than the call have no remapping to undo.
    if (d < 0 || (physical && physical(d, &phy) != ACL_SUCCESS)) return false;
    *id = std::to_string(phy);
    return true;
  });
}


// The HBM kinds aclrtGetMemInfo answers: every one is the device's memory
// (P2P and 1 GiB pages are parts of it), so each reports the limit. The DDR
// kinds are host memory.
bool IsDeviceMemory(aclrtMemAttr attr) {
  switch (attr) {
    case ACL_HBM_MEM: case ACL_HBM_MEM_HUGE: case ACL_HBM_MEM_NORMAL: case ACL_HBM_MEM_P2P_HUGE:
    case ACL_HBM_MEM_P2P_NORMAL: case ACL_HBM_MEM_HUGE1G: case ACL_HBM_MEM_P2P_HUGE1G:
      return true;
    default:
      return false;
  }
}

const EventOps kAclEvents = {
    [](void) -> void* {
      const int32_t dev = CurrentDevice();
      return dev >= 0 ? reinterpret_cast<void*>(static_cast<uintptr_t>(dev) + 1) : nullptr;
    },
    [](void** event) {
      static const auto create = RealAs<decltype(&aclrtCreateEvent)>(kAcl, "aclrtCreateEvent");
      return create && create(event) == ACL_SUCCESS;
    },
    [](void* event, void* stream, bool) {
      static const auto record = RealAs<decltype(&aclrtRecordEvent)>(kAcl, "aclrtRecordEvent");
      return record && record(event, stream) == ACL_SUCCESS;
    },
    [](void* event) {
      static const auto query = RealAs<decltype(&aclrtQueryEventStatus)>(kAcl, "aclrtQueryEventStatus");
      aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
      if (!query || query(event, &status) != ACL_SUCCESS) return -1;
      return status == ACL_EVENT_RECORDED_STATUS_COMPLETE ? 1 : 0;
    },
    [](void* event) {
      static const auto wait = RealAs<decltype(&aclrtSynchronizeEvent)>(kAcl, "aclrtSynchronizeEvent");
      return wait && wait(event) == ACL_SUCCESS;
    },
    [](float* ms, void* start, void* end) {
      static const auto elapsed = RealAs<decltype(&aclrtEventElapsedTime)>(kAcl, "aclrtEventElapsedTime");
      return elapsed && elapsed(ms, start, end) == ACL_SUCCESS;
    },
    [](void* stream, bool) {
      static const auto info = RealAs<decltype(&aclmdlRICaptureGetInfo)>(kAcl, "aclmdlRICaptureGetInfo");
      aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
      aclmdlRI model = nullptr;
      return info && info(stream, &status, &model) == ACL_SUCCESS && status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    },
};

}  // namespace

// The process's pacer for AscendCL's events, looked up once.
LaunchPacer& AclPacer() {
  static LaunchPacer& pacer = LaunchPacer::For(kAclEvents);
  return pacer;
}

namespace {
LaunchPacer& PacerAclEvents() { return AclPacer(); }
}  // namespace

aclError AclAdmitHere(uint64_t bytes, Gate* g) {
  *g = Admit(bytes, [] { return AccountOf(CurrentDevice()); });
  return g->refused ? ACL_ERROR_RT_MEMORY_ALLOCATION : ACL_SUCCESS;
}

uint64_t AclPaceBefore(aclrtStream stream) {
  Enforcer& e = Enforcer::Get();
  if (!e.active()) return 0;
  DeviceAccount* account = AccountOf(CurrentDevice());
  return account ? PacerAclEvents().Before(account, stream, false) : 0;
}

void AclPaceAfter(uint64_t ticket, aclError rc, aclrtStream stream) {
  if (ticket) PacerAclEvents().After(ticket, rc == ACL_SUCCESS, stream, false);
}
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

VGPU_HOOK aclError aclInit(const char* config_path) {
  Enforcer& e = Enforcer::Get();
  if (e.failed_closed()) {
    e.ReportRefusal("aclInit");
    return ACL_ERROR_RT_NO_DEVICE;
  }
  VGPU_REAL(kAcl, aclInit);
  return real ? real(config_path) : ACL_ERROR_UNINITIALIZE;
}

#define VGPU_ACL_ALLOC(name, params, args)                                                \
  VGPU_HOOK aclError name params {                                                        \
    VGPU_REAL(kAcl, name);                                                                \
    if (!real) return ACL_ERROR_UNINITIALIZE;                                             \
    if (size == 0) return real args; /* refused by the runtime itself */                 \
    Gate g;                                                                               \
    if (aclError refused = AclAdmitHere(size, &g)) return refused;                           \
    aclError rc = real args;                                                              \
    Settle(g, rc == ACL_SUCCESS, Kind::kPointer, ptr ? reinterpret_cast<uint64_t>(*ptr) : 0); \
    return rc;                                                                            \
  }
VGPU_ACL_ALLOC(aclrtMalloc, (void** ptr, size_t size, aclrtMemMallocPolicy policy), (ptr, size, policy))
VGPU_ACL_ALLOC(aclrtMallocCached, (void** ptr, size_t size, aclrtMemMallocPolicy policy), (ptr, size, policy))
VGPU_ACL_ALLOC(aclrtMallocAlign32, (void** ptr, size_t size, aclrtMemMallocPolicy policy), (ptr, size, policy))
VGPU_ACL_ALLOC(aclrtMallocForTaskScheduler, (void** ptr, size_t size, aclrtMemMallocPolicy policy, void* config),
               (ptr, size, policy, config))
VGPU_ACL_ALLOC(aclrtMallocWithCfg, (void** ptr, size_t size, aclrtMemMallocPolicy policy, void* config),
               (ptr, size, policy, config))

VGPU_HOOK aclError aclrtFree(void* ptr) {
  VGPU_REAL(kAcl, aclrtFree);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  aclError rc = real(ptr);
  if (rc == ACL_SUCCESS && ptr) Freed(Kind::kPointer, reinterpret_cast<uint64_t>(ptr));
  return rc;
}

VGPU_HOOK aclError aclrtFreeWithDevSync(void* ptr) {
  VGPU_REAL(kAcl, aclrtFreeWithDevSync);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  aclError rc = real(ptr);
  if (rc == ACL_SUCCESS && ptr) Freed(Kind::kPointer, reinterpret_cast<uint64_t>(ptr));
  return rc;
}

// Virtual memory (torch_npu's expandable segments): charged when the
// physical memory is made, given back when it is freed and unmapped, in
// either order (physical_ledger.h).
VGPU_HOOK aclError aclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size, const aclrtPhysicalMemProp* prop,
                                       uint64_t flags) {
  VGPU_REAL(kAcl, aclrtMallocPhysical);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  Gate g;
  if (prop && prop->location.type == ACL_MEM_LOCATION_TYPE_DEVICE && size > 0) {
    const auto dev = static_cast<int32_t>(prop->location.id);
    g = Admit(size, [dev] { return AccountOf(dev); });
    if (g.refused) return ACL_ERROR_RT_MEMORY_ALLOCATION;
  }
  aclError rc = real(handle, size, prop, flags);
  SettleCreated(g, rc == ACL_SUCCESS && handle, handle ? reinterpret_cast<uint64_t>(*handle) : 0);
  return rc;
}

VGPU_HOOK aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
  VGPU_REAL(kAcl, aclrtFreePhysical);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  aclError rc = real(handle);
  if (rc == ACL_SUCCESS) GiveBack(PhysicalLedger::Get().Released(reinterpret_cast<uint64_t>(handle)));
  return rc;
}

VGPU_HOOK aclError aclrtMapMem(void* va, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags) {
  VGPU_REAL(kAcl, aclrtMapMem);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  aclError rc = real(va, size, offset, handle, flags);
  if (rc == ACL_SUCCESS)
    PhysicalLedger::Get().Mapped(reinterpret_cast<uint64_t>(handle), reinterpret_cast<uint64_t>(va), size);
  return rc;
}

// Another reference to the physical memory mapped at `va`, freed by an
// aclrtFreePhysical of its own: the memory lives until that free too.
VGPU_HOOK aclError aclrtMemRetainAllocationHandle(void* va, aclrtDrvMemHandle* handle) {
  VGPU_REAL(kAcl, aclrtMemRetainAllocationHandle);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  aclError rc = real(va, handle);
  if (rc == ACL_SUCCESS && handle) PhysicalLedger::Get().Retained(reinterpret_cast<uint64_t>(*handle));
  return rc;
}

// Unmaps the mapping that starts at `va`.
VGPU_HOOK aclError aclrtUnmapMem(void* va) {
  VGPU_REAL(kAcl, aclrtUnmapMem);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  aclError rc = real(va);
  if (rc == ACL_SUCCESS) GiveBack(PhysicalLedger::Get().Unmapped(reinterpret_cast<uint64_t>(va), 1));
  return rc;
}

VGPU_HOOK aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free_bytes, size_t* total_bytes) {
  VGPU_REAL(kAcl, aclrtGetMemInfo);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  aclError rc = real(attr, free_bytes, total_bytes);
  if (rc != ACL_SUCCESS || !IsDeviceMemory(attr) || !Enforcer::Get().active()) return rc;
  uint64_t free64 = free_bytes ? *free_bytes : UINT64_MAX, total64 = 0;
  JobMemory(AccountOf(CurrentDevice()), &free64, &total64);
  if (free_bytes) *free_bytes = static_cast<size_t>(free64);
  if (total_bytes) *total_bytes = static_cast<size_t>(total64);
  return rc;
}

// Work on a stream (VGPU_ACL_WORK, acl_device.h).
VGPU_ACL_WORK(aclrtLaunchKernel,
              (aclrtFuncHandle function, uint32_t blocks, const void* args, size_t args_size, aclrtStream stream),
              (function, blocks, args, args_size, stream), stream)
VGPU_ACL_WORK(aclmdlExecuteAsync,
              (uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output, aclrtStream stream),
              (model_id, input, output, stream), stream)
// Synchronous: runs on the default stream.
VGPU_ACL_WORK(aclmdlExecute, (uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output),
              (model_id, input, output), nullptr)
VGPU_ACL_WORK(aclopExecuteV2,
              (const char* op_type, int num_inputs, aclTensorDesc* input_desc[], aclDataBuffer* inputs[],
               int num_outputs, aclTensorDesc* output_desc[], aclDataBuffer* outputs[], aclopAttr* attr,
               aclrtStream stream),
              (op_type, num_inputs, input_desc, inputs, num_outputs, output_desc, outputs, attr, stream), stream)

VGPU_ACL_WORK(aclrtLaunchKernelV2,
              (aclrtFuncHandle function, uint32_t blocks, const void* args, size_t args_size,
               aclrtLaunchKernelCfg* cfg, aclrtStream stream),
              (function, blocks, args, args_size, cfg, stream), stream)
VGPU_ACL_WORK(aclrtLaunchKernelWithConfig,
              (aclrtFuncHandle function, uint32_t blocks, aclrtStream stream, aclrtLaunchKernelCfg* cfg,
               aclrtArgsHandle args, void* reserve),
              (function, blocks, stream, cfg, args, reserve), stream)
VGPU_ACL_WORK(aclrtLaunchKernelWithHostArgs,
              (aclrtFuncHandle function, uint32_t blocks, aclrtStream stream, aclrtLaunchKernelCfg* cfg,
               void* host_args, size_t args_size, aclrtPlaceHolderInfo* placeholders, size_t placeholder_count),
              (function, blocks, stream, cfg, host_args, args_size, placeholders, placeholder_count), stream)
VGPU_ACL_WORK(aclrtLaunchKernelWithArgsArray,
              (void* function, uint32_t blocks, aclrtStream stream, aclrtLaunchKernelCfg* cfg, void** args),
              (function, blocks, stream, cfg, args), stream)
VGPU_ACL_WORK(aclopExecute,
              (const char* op_type, int num_inputs, const aclTensorDesc* const input_desc[],
               const aclDataBuffer* const inputs[], int num_outputs, const aclTensorDesc* const output_desc[],
               aclDataBuffer* const outputs[], const aclopAttr* attr, aclrtStream stream),
              (op_type, num_inputs, input_desc, inputs, num_outputs, output_desc, outputs, attr, stream), stream)
VGPU_ACL_WORK(aclopExecWithHandle,
              (aclopHandle handle, int num_inputs, const aclDataBuffer* const inputs[], int num_outputs,
               aclDataBuffer* const outputs[], aclrtStream stream),
              (handle, num_inputs, inputs, num_outputs, outputs, stream), stream)
VGPU_ACL_WORK(aclopCompileAndExecute,
              (const char* op_type, int num_inputs, const aclTensorDesc* const input_desc[],
               const aclDataBuffer* const inputs[], int num_outputs, const aclTensorDesc* const output_desc[],
               aclDataBuffer* const outputs[], const aclopAttr* attr, aclopEngineType engine,
               aclopCompileType compile, const char* op_path, aclrtStream stream),
              (op_type, num_inputs, input_desc, inputs, num_outputs, output_desc, outputs, attr, engine, compile,
               op_path, stream),
              stream)
VGPU_ACL_WORK(aclopCompileAndExecuteV2,
              (const char* op_type, int num_inputs, aclTensorDesc* input_desc[], aclDataBuffer* inputs[],
               int num_outputs, aclTensorDesc* output_desc[], aclDataBuffer* outputs[], aclopAttr* attr,
               aclopEngineType engine, aclopCompileType compile, const char* op_path, aclrtStream stream),
              (op_type, num_inputs, input_desc, inputs, num_outputs, output_desc, outputs, attr, engine, compile,
               op_path, stream),
              stream)

namespace vgpu {
namespace interposer {

#define VGPU_ACL_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kAclHooks[] = {
    VGPU_ACL_ENTRY(aclInit),           VGPU_ACL_ENTRY(aclrtMalloc),      VGPU_ACL_ENTRY(aclrtMallocCached),
    VGPU_ACL_ENTRY(aclrtMallocWithCfg), VGPU_ACL_ENTRY(aclrtFree),       VGPU_ACL_ENTRY(aclrtGetMemInfo),
    VGPU_ACL_ENTRY(aclrtLaunchKernel), VGPU_ACL_ENTRY(aclmdlExecuteAsync), VGPU_ACL_ENTRY(aclmdlExecute),
    VGPU_ACL_ENTRY(aclopExecuteV2),    VGPU_ACL_ENTRY(aclrtMallocAlign32), VGPU_ACL_ENTRY(aclrtMallocPhysical),
    VGPU_ACL_ENTRY(aclrtFreePhysical), VGPU_ACL_ENTRY(aclrtMapMem),      VGPU_ACL_ENTRY(aclrtUnmapMem),
    VGPU_ACL_ENTRY(aclrtMallocForTaskScheduler), VGPU_ACL_ENTRY(aclrtLaunchKernelV2),
    VGPU_ACL_ENTRY(aclrtLaunchKernelWithConfig), VGPU_ACL_ENTRY(aclrtLaunchKernelWithHostArgs),
    VGPU_ACL_ENTRY(aclrtLaunchKernelWithArgsArray), VGPU_ACL_ENTRY(aclopExecute),
    VGPU_ACL_ENTRY(aclopExecWithHandle), VGPU_ACL_ENTRY(aclopCompileAndExecute),
    VGPU_ACL_ENTRY(aclopCompileAndExecuteV2), VGPU_ACL_ENTRY(aclrtFreeWithDevSync),
    VGPU_ACL_ENTRY(aclrtMemRetainAllocationHandle),
};
const size_t kAclHookCount = sizeof(kAclHooks) / sizeof(kAclHooks[0]);

}  // namespace interposer
}  // namespace vgpu
