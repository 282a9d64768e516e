// CUDA virtual memory management hooks: cuMemCreate charges the job when
// the physical memory is made, and the charge is given back only when the
// memory is really gone, that is when its handle is released and no
// mapping or multicast binding of it remains (physical_ledger.h).
// cuMemAddressReserve,
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

// Multicast bindings hold the bound memory until unbound. The handle's
// device is not needed here: the ledger knows each allocation's account.
VGPU_HOOK CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mc, size_t mc_offset,
                                      CUmemGenericAllocationHandle mem, size_t mem_offset, size_t size,
                                      unsigned long long flags) {
  VGPU_REAL(kCuda, cuMulticastBindMem);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(mc, mc_offset, mem, mem_offset, size, flags);
  if (rc == CUDA_SUCCESS) PhysicalLedger::Get().Bound(mc, mc_offset, size, mem);
  return rc;
}

VGPU_HOOK CUresult cuMulticastBindMem_v2(CUmemGenericAllocationHandle mc, CUdevice dev, size_t mc_offset,
                                         CUmemGenericAllocationHandle mem, size_t mem_offset, size_t size,
                                         unsigned long long flags) {
  VGPU_REAL(kCuda, cuMulticastBindMem_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(mc, dev, mc_offset, mem, mem_offset, size, flags);
  if (rc == CUDA_SUCCESS) PhysicalLedger::Get().Bound(mc, mc_offset, size, mem);
  return rc;
}

// Memory bound by its address: the allocation mapped there (memory of a
// stream-ordered pool is not in the ledger; it is charged as its pool).
static void BoundAt(CUmemGenericAllocationHandle mc, size_t mc_offset, CUdeviceptr ptr, size_t size) {
  uint64_t mem = 0;
  if (PhysicalLedger::Get().HandleAt(ptr, &mem)) PhysicalLedger::Get().Bound(mc, mc_offset, size, mem);
}

VGPU_HOOK CUresult cuMulticastBindAddr(CUmemGenericAllocationHandle mc, size_t mc_offset, CUdeviceptr ptr,
                                       size_t size, unsigned long long flags) {
  VGPU_REAL(kCuda, cuMulticastBindAddr);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(mc, mc_offset, ptr, size, flags);
  if (rc == CUDA_SUCCESS) BoundAt(mc, mc_offset, ptr, size);
  return rc;
}

VGPU_HOOK CUresult cuMulticastBindAddr_v2(CUmemGenericAllocationHandle mc, CUdevice dev, size_t mc_offset,
                                          CUdeviceptr ptr, size_t size, unsigned long long flags) {
  VGPU_REAL(kCuda, cuMulticastBindAddr_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(mc, dev, mc_offset, ptr, size, flags);
  if (rc == CUDA_SUCCESS) BoundAt(mc, mc_offset, ptr, size);
  return rc;
}

VGPU_HOOK CUresult cuMulticastUnbind(CUmemGenericAllocationHandle mc, CUdevice dev, size_t mc_offset, size_t size) {
  VGPU_REAL(kCuda, cuMulticastUnbind);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(mc, dev, mc_offset, size);
  if (rc == CUDA_SUCCESS) {
    // An account of a device the job does not hold is null, as are the
    // (unrecorded) allocations there.
    DeviceAccount* account = AccountOf(Enforcer::Get(), dev);
    if (account) GiveBack(PhysicalLedger::Get().Unbound(mc, account, mc_offset, size));
  }
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
    VGPU_HOOK_ENTRY(cuMulticastBindMem),
    VGPU_HOOK_ENTRY(cuMulticastBindMem_v2),
    VGPU_HOOK_ENTRY(cuMulticastBindAddr),
    VGPU_HOOK_ENTRY(cuMulticastBindAddr_v2),
    VGPU_HOOK_ENTRY(cuMulticastUnbind),
};
const size_t kCudaVmmHookCount = sizeof(kCudaVmmHooks) / sizeof(kCudaVmmHooks[0]);

}  // namespace interposer
}  // namespace vgpu
