// cuCtxSetLimit: the driver reserves device memory for a context's
// in-kernel malloc heap, printf buffer and the stacks of every thread the
// device can hold at once (stack size x multiprocessors x threads per
// multiprocessor). What a limit was before the process first changed it is
// part of the context, like the rest of its memory (not counted); growth
// over that is charged to the job, and refused past its limit with
// CUDA_ERROR_OUT_OF_MEMORY before the driver is asked.
#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "cuda_api.h"
#include "cuda_device.h"
#include "enforcer.h"
#include "export.h"
#include "hooks.h"
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

// Per device and limit: the value before the process first set it, and
// what is charged for the growth over it. Never freed: hooks may run at exit.
struct LimitState {
  uint64_t baseline;
  uint64_t charged;
};
std::mutex g_limits_lock;
std::map<std::pair<DeviceAccount*, int>, LimitState>& Limits() {
  static auto* limits = new std::map<std::pair<DeviceAccount*, int>, LimitState>();
  return *limits;
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
  std::lock_guard<std::mutex> hold(g_limits_lock);
  const auto key = std::make_pair(account, static_cast<int>(limit));
  auto it = Limits().find(key);
  if (it == Limits().end()) {
    VGPU_REAL(kCuda, cuCtxGetLimit);
    size_t before = 0;
    if (!real || real(&before, limit) != CUDA_SUCCESS) before = 0;
    it = Limits().emplace(key, LimitState{before, 0}).first;
  }
  LimitState& state = it->second;
  const uint64_t growth = value > state.baseline ? (value - state.baseline) * BytesPerUnit(limit, dev) : 0;
  if (growth > state.charged && !e.Reserve(account, growth - state.charged)) return CUDA_ERROR_OUT_OF_MEMORY;
  const CUresult rc = real(limit, value);
  const uint64_t keep = rc == CUDA_SUCCESS ? growth : state.charged;
  // Give back what is no longer charged (the reservation above, on failure).
  const uint64_t held = std::max(growth, state.charged);
  if (held > keep) e.Release(account, held - keep);
  state.charged = keep;
  return rc;
}

namespace vgpu {
namespace interposer {

const Hook kCudaLimitHooks[] = {
    {"cuCtxSetLimit", reinterpret_cast<void*>(&::cuCtxSetLimit)},
};
const size_t kCudaLimitHookCount = sizeof(kCudaLimitHooks) / sizeof(kCudaLimitHooks[0]);

}  // namespace interposer
}  // namespace vgpu
