// HIP stream-ordered allocation hooks (hipMallocAsync, hipMallocFromPoolAsync):
// charged as what their pool reserves, as for CUDA (pool_charges.h), to the
// device the pool is on. Where the runtime cannot report a pool's size, and
// when failing closed, allocations are charged one by one.
#include <mutex>
#include <unordered_map>

#include "accounting.h"
#include "enforcer.h"
#include "export.h"
#include "graph_charges.h"
#include "hip_api.h"
#include "hip_device.h"
#include "hooks.h"
#include "pool_charges.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

constexpr Vendor kHip = Vendor::kHip;
using Kind = Enforcer::Kind;

uint64_t Key(const void* p) { return reinterpret_cast<uint64_t>(p); }

bool Attribute(void* pool, hipMemPoolAttr attr, uint64_t* bytes) {
  VGPU_REAL(kHip, hipMemPoolGetAttribute);
  uint64_t v = 0;
  if (!real || real(static_cast<hipMemPool_t>(pool), attr, &v) != hipSuccess) return false;
  *bytes = v;
  return true;
}

const PoolOps kHipPools = {
    [](void* pool, uint64_t* bytes) { return Attribute(pool, hipMemPoolAttrReservedMemCurrent, bytes); },
    [](void* pool, uint64_t* bytes) { return Attribute(pool, hipMemPoolAttrUsedMemCurrent, bytes); },
    [](void* pool) {
      VGPU_REAL(kHip, hipMemPoolTrimTo);
      if (real) real(static_cast<hipMemPool_t>(pool), 0);
    },
};

PoolCharges& Charges() { return PoolCharges::For(kHipPools); }

// The device each pool is on. HIP has no call that says: pools made by
// hipMemPoolCreate are remembered with their location, a device's default
// pool is found by asking each device (and remembered: it lives as long as
// the process). Any other pool (imported from another process, which cannot
// allocate) is taken as the current device's.
class PoolDevices {
 public:
  static PoolDevices& Get() {
    static PoolDevices* const devices = new PoolDevices();  // never freed: hooks may run at exit
    return *devices;
  }

  void Created(void* pool, int dev) {
    std::lock_guard<std::mutex> hold(lock_);
    devices_[pool] = dev;
  }
  void Destroyed(void* pool) {
    std::lock_guard<std::mutex> hold(lock_);
    devices_.erase(pool);
  }

  int Of(void* pool) {
    {
      std::lock_guard<std::mutex> hold(lock_);
      auto it = devices_.find(pool);
      if (it != devices_.end()) return it->second;
    }
    static const auto count = RealAs<decltype(&hipGetDeviceCount)>(kHip, "hipGetDeviceCount");
    static const auto default_pool = RealAs<decltype(&hipDeviceGetDefaultMemPool)>(kHip, "hipDeviceGetDefaultMemPool");
    int n = 0;
    if (pool && count && default_pool && count(&n) == hipSuccess) {
      for (int dev = 0; dev < n; ++dev) {
        hipMemPool_t p = nullptr;
        if (default_pool(&p, dev) == hipSuccess && p == pool) {
          Created(pool, dev);
          return dev;
        }
      }
    }
    return HipCurrentDevice();
  }

 private:
  std::mutex lock_;
  std::unordered_map<void*, int> devices_;
};

// A stream-ordered allocation of `bytes` from `pool` on device `dev` by
// `allocate()`; `stream` is where it is undone.
template <typename Allocate>
hipError_t PoolAllocate(hipMemPool_t pool, int dev, size_t bytes, void** ptr, hipStream_t stream,
                        Allocate allocate) {
  // Outside a job, failing closed, or a runtime without pool sizes: charged
  // one by one.
  auto one_by_one = [&]() -> hipError_t {
    Gate g;
    if (bytes && HipAdmitOn(dev, bytes, &g) != hipSuccess) return hipErrorOutOfMemory;
    hipError_t rc = allocate();
    Settle(g, rc == hipSuccess, Kind::kPointer, ptr ? Key(*ptr) : 0);
    return rc;
  };
  Enforcer& e = Enforcer::Get();
  if (!e.active() || !ptr || bytes == 0) return one_by_one();
  DeviceAccount* account = HipAccountOf(dev);
  if (!account) return hipErrorOutOfMemory;
  hipError_t rc = hipSuccess;
  PoolCharges::Hold hold(Charges());
  const auto outcome = Charges().Allocate(
      pool, account, bytes,
      [&](uint64_t* key) {
        rc = allocate();
        *key = Key(*ptr);
        return rc == hipSuccess;
      },
      [&](uint64_t key) {
        VGPU_REAL(kHip, hipFreeAsync);
        if (real) real(reinterpret_cast<void*>(key), stream);
      });
  if (outcome == PoolCharges::Outcome::kUnmeasured) return one_by_one();
  return outcome == PoolCharges::Outcome::kRefused ? hipErrorOutOfMemory : rc;
}

// If `stream` is in capture, the allocation becomes a node of the capture's
// graph, charged when the graph runs (graph_charges.h): true, *rc the
// runtime's answer.
template <typename Allocate>
bool Captured(hipStream_t stream, int dev, size_t bytes, Allocate allocate, hipError_t* rc) {
  if (!Enforcer::Get().active()) return false;
  const uint64_t capture = HipCaptureOf(stream, false);
  if (!capture) return false;
  if (!HipGraphMemoryAtLaunch()) {
    *rc = hipErrorNotSupported;
    return true;
  }
  *rc = allocate();
  if (*rc == hipSuccess) HipGraphCharges().Captured(capture, dev, bytes);
  return true;
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

// The current pool of the stream's device.
VGPU_HOOK hipError_t hipMallocAsync(void** ptr, size_t size, hipStream_t stream) {
  VGPU_REAL(kHip, hipMallocAsync);
  if (!real) return hipErrorNotInitialized;
  static const auto current_pool = RealAs<decltype(&hipDeviceGetMemPool)>(kHip, "hipDeviceGetMemPool");
  const int dev = Enforcer::Get().active() ? HipStreamDevice(stream) : -1;  // else no device is charged
  hipError_t captured = hipSuccess;
  if (Captured(stream, dev, size, [&] { return real(ptr, size, stream); }, &captured)) return captured;
  hipMemPool_t pool = nullptr;
  const bool pooled =
      Enforcer::Get().active() && current_pool && current_pool(&pool, dev) == hipSuccess && pool != nullptr;
  if (!pooled) {  // charged one by one
    Gate g;
    if (size && HipAdmitOn(dev, size, &g) != hipSuccess) return hipErrorOutOfMemory;
    hipError_t rc = real(ptr, size, stream);
    Settle(g, rc == hipSuccess, Kind::kPointer, ptr ? Key(*ptr) : 0);
    return rc;
  }
  return PoolAllocate(pool, dev, size, ptr, stream, [&] { return real(ptr, size, stream); });
}

// On the pool's device, whatever the stream's and the current device.
VGPU_HOOK hipError_t hipMallocFromPoolAsync(void** ptr, size_t size, hipMemPool_t pool, hipStream_t stream) {
  VGPU_REAL(kHip, hipMallocFromPoolAsync);
  if (!real) return hipErrorNotInitialized;
  const int dev = Enforcer::Get().active() ? PoolDevices::Get().Of(pool) : -1;  // else no device is charged
  hipError_t captured = hipSuccess;
  if (Captured(stream, dev, size, [&] { return real(ptr, size, pool, stream); }, &captured)) return captured;
  return PoolAllocate(pool, dev, size, ptr, stream, [&] { return real(ptr, size, pool, stream); });
}

// A free captured into a graph frees nothing until the graph runs (clr adds
// a free node), so the charge stays (until the process ends: the graph's
// free is not seen).
VGPU_HOOK hipError_t hipFreeAsync(void* ptr, hipStream_t stream) {
  VGPU_REAL(kHip, hipFreeAsync);
  if (!real) return hipErrorNotInitialized;
  if (!Enforcer::Get().active() || HipCaptureOf(stream, false)) return real(ptr, stream);
  PoolCharges::Hold hold(Charges());
  hipError_t rc = real(ptr, stream);
  if (rc == hipSuccess && ptr && !Charges().Freed(Key(ptr))) Freed(Kind::kPointer, Key(ptr));
  return rc;
}

// Calls after which the pool may reserve less.
#define VGPU_HIP_POOL_SETTLE(name, params, args)    \
  VGPU_HOOK hipError_t name params {                \
    VGPU_REAL(kHip, name);                          \
    if (!real) return hipErrorNotInitialized;       \
    if (!Enforcer::Get().active()) return real args; \
    PoolCharges::Hold hold(Charges());              \
    hipError_t rc = real args;                      \
    if (rc == hipSuccess) Charges().Settle(pool);   \
    return rc;                                      \
  }
VGPU_HIP_POOL_SETTLE(hipMemPoolTrimTo, (hipMemPool_t pool, size_t keep), (pool, keep))
VGPU_HIP_POOL_SETTLE(hipMemPoolSetAttribute, (hipMemPool_t pool, hipMemPoolAttr attr, void* value),
                     (pool, attr, value))

// A pool holds nothing until something is allocated from it; its device is
// remembered (PoolDevices).
VGPU_HOOK hipError_t hipMemPoolCreate(hipMemPool_t* pool, const hipMemPoolProps* props) {
  VGPU_REAL(kHip, hipMemPoolCreate);
  if (!real) return hipErrorNotInitialized;
  hipError_t rc = real(pool, props);
  if (rc == hipSuccess && pool && props && props->location.type == hipMemLocationTypeDevice &&
      Enforcer::Get().active())
    PoolDevices::Get().Created(*pool, props->location.id);
  return rc;
}

VGPU_HOOK hipError_t hipMemPoolDestroy(hipMemPool_t pool) {
  VGPU_REAL(kHip, hipMemPoolDestroy);
  if (!real) return hipErrorNotInitialized;
  if (!Enforcer::Get().active()) return real(pool);
  PoolCharges::Hold hold(Charges());
  hipError_t rc = real(pool);
  if (rc == hipSuccess) {
    Charges().Destroyed(pool);
    PoolDevices::Get().Destroyed(pool);
  }
  return rc;
}

namespace vgpu {
namespace interposer {

#define VGPU_HIP_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kHipPoolHooks[] = {
    VGPU_HIP_ENTRY(hipMallocAsync),   VGPU_HIP_ENTRY(hipMallocFromPoolAsync), VGPU_HIP_ENTRY(hipFreeAsync),
    VGPU_HIP_ENTRY(hipMemPoolTrimTo), VGPU_HIP_ENTRY(hipMemPoolSetAttribute), VGPU_HIP_ENTRY(hipMemPoolDestroy),
    VGPU_HIP_ENTRY(hipMemPoolCreate),
};
const size_t kHipPoolHookCount = sizeof(kHipPoolHooks) / sizeof(kHipPoolHooks[0]);

}  // namespace interposer
}  // namespace vgpu
