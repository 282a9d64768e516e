// NVML memory queries: inside a job, a device's memory is the job's limit
// and its use the job's (all processes), as nvidia-smi and frameworks that
// size themselves from NVML should see it.
#include <string>

#include "accounting.h"
#include "enforcer.h"
#include "export.h"
#include "hooks.h"
#include "nvml_api.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

constexpr Vendor kNvml = Vendor::kNvml;

// The job's account of `device`, or null (not the job's, or no uuid).
DeviceAccount* AccountOf(Enforcer& e, nvmlDevice_t device) {
  VGPU_REAL(kNvml, nvmlDeviceGetUUID);
  char uuid[96] = {0};
  if (!real || real(device, uuid, sizeof(uuid)) != NVML_SUCCESS) return nullptr;
  return e.Find(uuid);
}

// total, free, used of the job on `device`; false when NVML's own numbers
// stand (inactive).
bool JobNumbers(nvmlDevice_t device, unsigned long long* total, unsigned long long* free_bytes,
                unsigned long long* used) {
  Enforcer& e = Enforcer::Get();
  if (!e.active()) return false;
  DeviceAccount* account = AccountOf(e, device);
  uint64_t free64 = UINT64_MAX, total64 = 0;
  JobMemory(account, &free64, &total64);
  *total = total64;
  *free_bytes = free64;
  *used = total64 - free64;
  return true;
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

VGPU_HOOK nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  VGPU_REAL(kNvml, nvmlDeviceGetMemoryInfo);
  if (!real) return NVML_ERROR_NO_PERMISSION;
  nvmlReturn_t rc = real(device, memory);
  if (rc == NVML_SUCCESS && memory) JobNumbers(device, &memory->total, &memory->free, &memory->used);
  return rc;
}

VGPU_HOOK nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  VGPU_REAL(kNvml, nvmlDeviceGetMemoryInfo_v2);
  if (!real) return NVML_ERROR_NO_PERMISSION;
  nvmlReturn_t rc = real(device, memory);
  if (rc == NVML_SUCCESS && memory && JobNumbers(device, &memory->total, &memory->free, &memory->used))
    memory->reserved = 0;
  return rc;
}

namespace vgpu {
namespace interposer {

const Hook kNvmlHooks[] = {
    {"nvmlDeviceGetMemoryInfo", reinterpret_cast<void*>(&::nvmlDeviceGetMemoryInfo)},
    {"nvmlDeviceGetMemoryInfo_v2", reinterpret_cast<void*>(&::nvmlDeviceGetMemoryInfo_v2)},
};
const size_t kNvmlHookCount = sizeof(kNvmlHooks) / sizeof(kNvmlHooks[0]);

}  // namespace interposer
}  // namespace vgpu
