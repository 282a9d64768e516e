// cuCtxSetLimit, charged as limit_charges.h says; a stack takes stack size x
// multiprocessors x threads per multiprocessor. Refused with
// CUDA_ERROR_OUT_OF_MEMORY.

#include "cuda_api.h"
#include "cuda_device.h"
#include "enforcer.h"
#include "export.h"
#include "hooks.h"
#include "limit_charges.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

constexpr Vendor kCuda = Vendor::kCuda;

// Bytes of device memory one unit of `limit` takes on `dev`.
uint64_t BytesPerUnit(CUlimit limit, CUdevice dev) {
  if (limit != CU_LIMIT_STACK_SIZE) return 1;
  VGPU_REAL(kCuda, cuDeviceGetAttribute);
  int sms = 0, threads = 0;
  if (!real || real(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS ||
      real(&threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev) != CUDA_SUCCESS)
    return 0;  // cannot say: not counted (see doc/enforcement.md)
  return static_cast<uint64_t>(sms) * static_cast<uint64_t>(threads);
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

VGPU_HOOK CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  VGPU_REAL(kCuda, cuCtxSetLimit);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  Enforcer& e = Enforcer::Get();
  CUdevice dev = 0;
  if (!e.active() || limit > CU_LIMIT_MALLOC_HEAP_SIZE || CurrentDevice(&dev) != CUDA_SUCCESS) return real(limit, value);
  DeviceAccount* account = AccountOf(e, dev);
  if (!account) return real(limit, value);
  CUresult rc = CUDA_SUCCESS;
  const auto outcome = LimitCharges::Get().Charge(
      account, limit, value, BytesPerUnit(limit, dev),
      [&]() -> uint64_t {
        VGPU_REAL(kCuda, cuCtxGetLimit);
        size_t before = 0;
        return real && real(&before, limit) == CUDA_SUCCESS ? before : 0;
      },
      [&] { return (rc = real(limit, value)) == CUDA_SUCCESS; });
  return outcome == LimitCharges::Outcome::kRefused ? CUDA_ERROR_OUT_OF_MEMORY : rc;
}

namespace vgpu {
namespace interposer {

const Hook kCudaLimitHooks[] = {
    {"cuCtxSetLimit", reinterpret_cast<void*>(&::cuCtxSetLimit)},
};
const size_t kCudaLimitHookCount = sizeof(kCudaLimitHooks) / sizeof(kCudaLimitHooks[0]);

}  // namespace interposer
}  // namespace vgpu
