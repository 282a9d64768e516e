// CUDA virtual memory management hooks: cuMemCreate charges the job when
// the physical memory is made, and the charge is given back only when the
// memory is really gone, that is when its handle is released and no
// mapping of it remains (physical_ledger.h). cuMemAddressReserve,
// cuMemAddressFree and cuMemSetAccess take no device memory and are not
// hooked.
#include "cuda_api.h"
#include "cuda_device.h"
#include "enforcer.h"
#include "export.h"
#include "hooks.h"
#include "physical_ledger.h"
#include "real_symbols.h"

using namespace vgpu::interposer;

namespace {
constexpr Vendor kCuda = Vendor::kCuda;
}  // namespace

VGPU_HOOK CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t bytes,
                               const CUmemAllocationProp* prop, unsigned long long flags) {
  VGPU_REAL(kCuda, cuMemCreate);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  Gate g;
  if (prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
    const CUdevice dev = prop->location.id;
    if (CUresult refused = AdmitOnDevice(&dev, bytes, &g)) return refused;
  }
  CUresult rc = real(handle, bytes, prop, flags);
  SettleCreated(g, rc == CUDA_SUCCESS && handle, handle ? *handle : 0);
  return rc;
}

VGPU_HOOK CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  VGPU_REAL(kCuda, cuMemRelease);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(handle);
  if (rc == CUDA_SUCCESS) GiveBack(PhysicalLedger::Get().Released(handle));
  return rc;
}

VGPU_HOOK CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                            unsigned long long flags) {
  VGPU_REAL(kCuda, cuMemMap);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(ptr, size, offset, handle, flags);
  if (rc == CUDA_SUCCESS) PhysicalLedger::Get().Mapped(handle, ptr, size);
  return rc;
}

VGPU_HOOK CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  VGPU_REAL(kCuda, cuMemUnmap);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(ptr, size);
  if (rc == CUDA_SUCCESS) GiveBack(PhysicalLedger::Get().Unmapped(ptr, size));
  return rc;
}

// Another reference to the allocation mapped at `addr`, to be released on
// its own: the memory lives until that release too.
VGPU_HOOK CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  VGPU_REAL(kCuda, cuMemRetainAllocationHandle);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(handle, addr);
  if (rc == CUDA_SUCCESS && handle) PhysicalLedger::Get().Retained(*handle);
  return rc;
}

namespace vgpu {
namespace interposer {

#define VGPU_HOOK_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kCudaVmmHooks[] = {
    VGPU_HOOK_ENTRY(cuMemCreate),
    VGPU_HOOK_ENTRY(cuMemRelease),
    VGPU_HOOK_ENTRY(cuMemMap),
    VGPU_HOOK_ENTRY(cuMemUnmap),
    VGPU_HOOK_ENTRY(cuMemRetainAllocationHandle),
};
const size_t kCudaVmmHookCount = sizeof(kCudaVmmHooks) / sizeof(kCudaVmmHooks[0]);

}  // namespace interposer
}  // namespace vgpu
