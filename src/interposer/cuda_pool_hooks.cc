// CUDA stream-ordered allocation hooks (cuMemAllocAsync, cudaMallocAsync's
// driver half). A stream-ordered allocation comes out of a memory pool, and
// the device memory is the pool's: a free puts the allocation back in the
// pool, which keeps it up to its release threshold (PyTorch's cudaMallocAsync
// backend sets UINT64_MAX, so a pool never gives anything back). So the job
// is charged what each pool reserves on the device (the driver's
// CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), not what is allocated from it:
//
//  * an allocation is admitted if the growth it may cause (in use + asked -
//    reserved) fits; afterwards the charge is set to what the pool reserves;
//  * frees, cuMemPoolTrimTo, a lowered threshold and cuMemPoolDestroy set it
//    again;
//  * a pool shrinks on its own at a synchronisation, which is not hooked:
//    when a reservation would be refused, every pool's charge is brought
//    down to what it reserves first (Enforcer::SetReclaimer).
//
// One lock serialises this process's stream-ordered allocations and frees
// (the driver is called with it held, so that charge and reservation agree);
// no other hook takes it. Where the driver cannot report a pool's size (an
// old driver), allocations are charged one by one, as before.
#include <pthread.h>

#include <mutex>
#include <new>
#include <unordered_map>

#include "accounting.h"
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
using Kind = Enforcer::Kind;

// What the pool reserves on its device now; false if the driver cannot say.
bool Reserved(CUmemoryPool pool, uint64_t* bytes) {
  VGPU_REAL(kCuda, cuMemPoolGetAttribute);
  cuuint64_t v = 0;
  if (!real || real(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v) != CUDA_SUCCESS) return false;
  *bytes = v;
  return true;
}

bool InUse(CUmemoryPool pool, uint64_t* bytes) {
  VGPU_REAL(kCuda, cuMemPoolGetAttribute);
  cuuint64_t v = 0;
  if (!real || real(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v) != CUDA_SUCCESS) return false;
  *bytes = v;
  return true;
}

class PoolCharges {
 public:
  static PoolCharges& Get() {
    static PoolCharges* const charges = [] {
      auto* c = new PoolCharges();  // never freed: hooks may run at exit
      Enforcer::Get().SetReclaimer([] { PoolCharges::Get().Reclaim(); });
      // A child starts with no device memory and its own usage slot.
      pthread_atfork(nullptr, nullptr, [] { PoolCharges::Get().ClearAfterFork(); });
      return c;
    }();
    return *charges;
  }

  std::mutex& lock() { return lock_; }

  // Sets the pool's charge to what it reserves (lock() held); false if that
  // is more than the job's limit lets it have. `give_back_only`: only ever
  // lower the charge (the reclaimer's rule).
  bool Settle(CUmemoryPool pool, bool give_back_only = false) {
    auto it = pools_.find(pool);
    uint64_t reserved = 0;
    if (it == pools_.end() || !Reserved(pool, &reserved)) return true;
    Pool& p = it->second;
    Enforcer& e = Enforcer::Get();
    if (reserved < p.charged) {
      e.Release(p.account, p.charged - reserved);
      p.charged = reserved;
    } else if (reserved > p.charged && !give_back_only) {
      if (!e.Reserve(p.account, reserved - p.charged)) return false;
      p.charged = reserved;
    }
    return true;
  }

  // `bytes` more of `account` charged to `pool` (pool_lock held); false if
  // they do not fit even once every pool is settled.
  bool Grow(CUmemoryPool pool, DeviceAccount* account, uint64_t bytes) {
    Pool& p = pools_.try_emplace(pool, Pool{account, 0}).first->second;
    Enforcer& e = Enforcer::Get();
    if (bytes && !e.Reserve(account, bytes)) {
      for (auto& [other, ignored] : pools_) Settle(other, true);
      if (!e.Reserve(account, bytes)) return false;
    }
    p.charged += bytes;
    return true;
  }

  void Forget(CUmemoryPool pool) {
    auto it = pools_.find(pool);
    if (it == pools_.end()) return;
    Enforcer::Get().Release(it->second.account, it->second.charged);
    pools_.erase(it);
  }

  void ClearAfterFork() {
    new (&lock_) std::mutex();
    pools_.clear();
    owners_.clear();
  }

  // Pointers handed out by a pool we charge, and which pool.
  std::unordered_map<CUdeviceptr, CUmemoryPool>& owners() { return owners_; }

 private:
  struct Pool {
    DeviceAccount* account;
    uint64_t charged;
  };

  // Skipped when the lock is held (by an allocation, which settles itself).
  void Reclaim() {
    std::unique_lock<std::mutex> hold(lock_, std::try_to_lock);
    if (!hold) return;
    for (auto& [pool, ignored] : pools_) Settle(pool, true);
  }

  std::mutex lock_;
  std::unordered_map<CUmemoryPool, Pool> pools_;
  std::unordered_map<CUdeviceptr, CUmemoryPool> owners_;
};

// The driver's own cuMemFreeAsync (undoing an allocation that does not fit).
void FreeReal(CUdeviceptr p, CUstream stream) {
  VGPU_REAL(kCuda, cuMemFreeAsync);
  if (real) real(p, stream);
}

// The pool cuMemAllocAsync takes from: the current device's current pool.
CUresult CurrentPool(CUdevice* dev, CUmemoryPool* pool) {
  VGPU_REAL(kCuda, cuDeviceGetMemPool);
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult rc = CurrentDevice(dev);
  return rc == CUDA_SUCCESS ? real(pool, *dev) : rc;
}

// A stream-ordered allocation of `bytes` from `pool` (on device `dev`) by
// `allocate()`; `free_async(ptr)` undoes it. Outside a vgpu job it only
// calls through.
template <typename Allocate, typename FreeAsync>
CUresult PoolAllocate(CUmemoryPool pool, CUdevice dev, size_t bytes, CUdeviceptr* dptr, Allocate allocate,
                      FreeAsync free_async) {
  Enforcer& e = Enforcer::Get();
  uint64_t used = 0, reserved = 0;
  if (!e.active() || !InUse(pool, &used) || !Reserved(pool, &reserved)) {
    // Failed closed, or a driver without pool attributes: one by one.
    Gate g;
    if (CUresult refused = AdmitOnDevice(&dev, bytes, &g)) return refused;
    CUresult rc = allocate();
    Settle(g, rc == CUDA_SUCCESS, Kind::kPointer, dptr ? *dptr : 0);
    return rc;
  }
  DeviceAccount* account = AccountOf(e, dev);
  if (!account) return CUDA_ERROR_OUT_OF_MEMORY;
  PoolCharges& charges = PoolCharges::Get();
  std::lock_guard<std::mutex> hold(charges.lock());
  const uint64_t growth = used + bytes > reserved ? used + bytes - reserved : 0;
  if (!charges.Grow(pool, account, growth)) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult rc = allocate();
  if (rc != CUDA_SUCCESS || !dptr) {
    charges.Settle(pool);
    return rc;
  }
  if (!charges.Settle(pool)) {
    // The pool grew by more than was admitted (drivers grow pools in large
    // steps) and the rest does not fit: undo, and let the pool give it back.
    VGPU_REAL(kCuda, cuMemPoolTrimTo);
    free_async(*dptr);
    if (real) real(pool, 0);
    charges.Settle(pool, true);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  charges.owners()[*dptr] = pool;
  return rc;
}

CUresult AllocAsync(CUdeviceptr* dptr, size_t bytes, CUresult (*real)(CUdeviceptr*, size_t, CUstream),
                    CUstream stream) {
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUdevice dev = 0;
  CUmemoryPool pool = nullptr;
  if (!Enforcer::Get().active() || CurrentPool(&dev, &pool) != CUDA_SUCCESS) {
    Gate g;
    if (CUresult refused = AdmitOnDevice(nullptr, bytes, &g)) return refused;
    CUresult rc = real(dptr, bytes, stream);
    Settle(g, rc == CUDA_SUCCESS, Kind::kPointer, dptr ? *dptr : 0);
    return rc;
  }
  return PoolAllocate(pool, dev, bytes, dptr, [&] { return real(dptr, bytes, stream); },
                      [&](CUdeviceptr p) { FreeReal(p, stream); });
}

CUresult AllocFromPool(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool,
                       CUresult (*real)(CUdeviceptr*, size_t, CUmemoryPool, CUstream), CUstream stream) {
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  // The stub and most programs allocate from a pool of the current device.
  CUdevice dev = 0;
  CUresult rc = CurrentDevice(&dev);
  if (rc != CUDA_SUCCESS && Enforcer::Get().active()) return rc;
  return PoolAllocate(pool, dev, bytes, dptr, [&] { return real(dptr, bytes, pool, stream); },
                      [&](CUdeviceptr p) { FreeReal(p, stream); });
}

CUresult FreeAsync(CUdeviceptr dptr, CUresult (*real)(CUdeviceptr, CUstream), CUstream stream) {
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  if (!Enforcer::Get().active()) return real(dptr, stream);
  PoolCharges& charges = PoolCharges::Get();
  std::lock_guard<std::mutex> hold(charges.lock());
  CUresult rc = real(dptr, stream);
  if (rc != CUDA_SUCCESS) return rc;
  auto it = charges.owners().find(dptr);
  if (it == charges.owners().end()) {
    Freed(Kind::kPointer, dptr);  // charged one by one
    return rc;
  }
  CUmemoryPool pool = it->second;
  charges.owners().erase(it);
  charges.Settle(pool);
  return rc;
}

// A call after which the pool may reserve less.
template <typename Call>
CUresult ThenSettle(CUmemoryPool pool, Call call) {
  if (!Enforcer::Get().active()) return call();
  PoolCharges& charges = PoolCharges::Get();
  std::lock_guard<std::mutex> hold(charges.lock());
  CUresult rc = call();
  if (rc == CUDA_SUCCESS) charges.Settle(pool);
  return rc;
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

#define VGPU_ALLOC_ASYNC(name)                                                \
  VGPU_HOOK CUresult name(CUdeviceptr* dptr, size_t bytes, CUstream stream) { \
    VGPU_REAL(kCuda, name);                                                   \
    return AllocAsync(dptr, bytes, real, stream);                             \
  }
VGPU_ALLOC_ASYNC(cuMemAllocAsync)
VGPU_ALLOC_ASYNC(cuMemAllocAsync_ptsz)

#define VGPU_ALLOC_FROM_POOL(name)                                                                 \
  VGPU_HOOK CUresult name(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream stream) { \
    VGPU_REAL(kCuda, name);                                                                      \
    return AllocFromPool(dptr, bytes, pool, real, stream);                                       \
  }
VGPU_ALLOC_FROM_POOL(cuMemAllocFromPoolAsync)
VGPU_ALLOC_FROM_POOL(cuMemAllocFromPoolAsync_ptsz)

#define VGPU_FREE_ASYNC(name)                                  \
  VGPU_HOOK CUresult name(CUdeviceptr dptr, CUstream stream) { \
    VGPU_REAL(kCuda, name);                                    \
    return FreeAsync(dptr, real, stream);                      \
  }
VGPU_FREE_ASYNC(cuMemFreeAsync)
VGPU_FREE_ASYNC(cuMemFreeAsync_ptsz)

VGPU_HOOK CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
  VGPU_REAL(kCuda, cuMemPoolTrimTo);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return ThenSettle(pool, [&] { return real(pool, keep); });
}

VGPU_HOOK CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  VGPU_REAL(kCuda, cuMemPoolSetAttribute);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return ThenSettle(pool, [&] { return real(pool, attr, value); });
}

VGPU_HOOK CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  VGPU_REAL(kCuda, cuMemPoolDestroy);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  if (!Enforcer::Get().active()) return real(pool);
  PoolCharges& charges = PoolCharges::Get();
  std::lock_guard<std::mutex> hold(charges.lock());
  CUresult rc = real(pool);
  if (rc == CUDA_SUCCESS) charges.Forget(pool);
  return rc;
}

namespace vgpu {
namespace interposer {

#define VGPU_HOOK_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kCudaPoolHooks[] = {
    VGPU_HOOK_ENTRY(cuMemAllocAsync),         VGPU_HOOK_ENTRY(cuMemAllocAsync_ptsz),
    VGPU_HOOK_ENTRY(cuMemAllocFromPoolAsync), VGPU_HOOK_ENTRY(cuMemAllocFromPoolAsync_ptsz),
    VGPU_HOOK_ENTRY(cuMemFreeAsync),          VGPU_HOOK_ENTRY(cuMemFreeAsync_ptsz),
    VGPU_HOOK_ENTRY(cuMemPoolTrimTo),         VGPU_HOOK_ENTRY(cuMemPoolSetAttribute),
    VGPU_HOOK_ENTRY(cuMemPoolDestroy),
};
const size_t kCudaPoolHookCount = sizeof(kCudaPoolHooks) / sizeof(kCudaPoolHooks[0]);

}  // namespace interposer
}  // namespace vgpu
