// CUDA stream-ordered allocation hooks (cuMemAllocAsync, cudaMallocAsync's
// driver half): charged as what their pool reserves (pool_charges.h). Where
// the driver cannot report a pool's size (an old driver), and when failing
// closed, allocations are charged one by one.
#include "accounting.h"
#include "cuda_api.h"
#include "cuda_device.h"
#include "enforcer.h"
#include "export.h"
#include "graph_charges.h"
#include "hooks.h"
#include "pool_charges.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

constexpr Vendor kCuda = Vendor::kCuda;
using Kind = Enforcer::Kind;

bool Attribute(void* pool, CUmemPool_attribute attr, uint64_t* bytes) {
  VGPU_REAL(kCuda, cuMemPoolGetAttribute);
  cuuint64_t v = 0;
  if (!real || real(static_cast<CUmemoryPool>(pool), attr, &v) != CUDA_SUCCESS) return false;
  *bytes = v;
  return true;
}

const PoolOps kCudaPools = {
    [](void* pool, uint64_t* bytes) { return Attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, bytes); },
    [](void* pool, uint64_t* bytes) { return Attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, bytes); },
    [](void* pool) {
      VGPU_REAL(kCuda, cuMemPoolTrimTo);
      if (real) real(static_cast<CUmemoryPool>(pool), 0);
    },
};

PoolCharges& Charges() { return PoolCharges::For(kCudaPools); }

// A stream-ordered allocation of `bytes` from `pool` on device `dev` by
// `allocate()`; `stream` is where it is undone.
template <typename Allocate>
CUresult PoolAllocate(CUmemoryPool pool, CUdevice dev, size_t bytes, CUdeviceptr* dptr, CUstream stream,
                      Allocate allocate) {
  // Outside a job, failing closed, or an old driver: charged one by one.
  auto one_by_one = [&]() -> CUresult {
    Gate g;
    if (CUresult refused = AdmitOnDevice(&dev, bytes, &g)) return refused;
    CUresult rc = allocate();
    Settle(g, rc == CUDA_SUCCESS, Kind::kPointer, dptr ? *dptr : 0);
    return rc;
  };
  Enforcer& e = Enforcer::Get();
  if (!e.active() || !dptr) return one_by_one();
  DeviceAccount* account = AccountOf(e, dev);
  if (!account) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult rc = CUDA_SUCCESS;
  PoolCharges::Hold hold(Charges());
  const auto outcome = Charges().Allocate(
      pool, account, bytes,
      [&](uint64_t* key) {
        rc = allocate();
        *key = *dptr;
        return rc == CUDA_SUCCESS;
      },
      [&](uint64_t key) {
        VGPU_REAL(kCuda, cuMemFreeAsync);
        if (real) real(key, stream);
      });
  if (outcome == PoolCharges::Outcome::kUnmeasured) return one_by_one();
  return outcome == PoolCharges::Outcome::kRefused ? CUDA_ERROR_OUT_OF_MEMORY : rc;
}

// The pool cuMemAllocAsync takes from: the current device's current pool.
CUresult CurrentPool(CUdevice* dev, CUmemoryPool* pool) {
  VGPU_REAL(kCuda, cuDeviceGetMemPool);
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult rc = CurrentDevice(dev);
  return rc == CUDA_SUCCESS ? real(pool, *dev) : rc;
}

// If `stream` is in capture, the allocation becomes a node of the capture's
// graph, charged when the graph runs (graph_charges.h): true, *rc the
// runtime's answer.
template <typename Allocate>
bool Captured(CUstream stream, bool per_thread, CUdevice dev, size_t bytes, Allocate allocate, CUresult* rc) {
  const uint64_t capture = CudaCaptureOf(stream, per_thread);
  if (!capture) return false;
  *rc = allocate();
  if (*rc == CUDA_SUCCESS) CudaGraphCharges().Captured(capture, dev, bytes);
  return true;
}

CUresult AllocAsync(CUdeviceptr* dptr, size_t bytes, CUresult (*real)(CUdeviceptr*, size_t, CUstream),
                    CUstream stream, bool per_thread) {
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUdevice dev = 0;
  CUmemoryPool pool = nullptr;
  CUresult rc = CUDA_SUCCESS;
  const bool active = Enforcer::Get().active();
  if (active && CurrentDevice(&dev) == CUDA_SUCCESS &&
      Captured(stream, per_thread, dev, bytes, [&] { return real(dptr, bytes, stream); }, &rc))
    return rc;
  if (!active || CurrentPool(&dev, &pool) != CUDA_SUCCESS) {
    Gate g;
    if (CUresult refused = AdmitOnDevice(nullptr, bytes, &g)) return refused;
    CUresult rc = real(dptr, bytes, stream);
    Settle(g, rc == CUDA_SUCCESS, Kind::kPointer, dptr ? *dptr : 0);
    return rc;
  }
  return PoolAllocate(pool, dev, bytes, dptr, stream, [&] { return real(dptr, bytes, stream); });
}

CUresult AllocFromPool(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool,
                       CUresult (*real)(CUdeviceptr*, size_t, CUmemoryPool, CUstream), CUstream stream,
                       bool per_thread) {
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  // Programs allocate from a pool of the current device (a pool does not
  // say which device it is on without a call per allocation).
  CUdevice dev = 0;
  CUresult rc = CurrentDevice(&dev);
  if (rc != CUDA_SUCCESS && Enforcer::Get().active()) return rc;
  if (Enforcer::Get().active() &&
      Captured(stream, per_thread, dev, bytes, [&] { return real(dptr, bytes, pool, stream); }, &rc))
    return rc;
  return PoolAllocate(pool, dev, bytes, dptr, stream, [&] { return real(dptr, bytes, pool, stream); });
}

// A free captured into a graph frees nothing until the graph runs, so the
// charge stays (until the process ends: the graph's free is not seen).
CUresult FreeAsync(CUdeviceptr dptr, CUresult (*real)(CUdeviceptr, CUstream), CUstream stream, bool per_thread) {
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  if (!Enforcer::Get().active()) return real(dptr, stream);
  if (CudaCaptureOf(stream, per_thread)) return real(dptr, stream);
  PoolCharges::Hold hold(Charges());
  CUresult rc = real(dptr, stream);
  if (rc == CUDA_SUCCESS && !Charges().Freed(dptr)) Freed(Kind::kPointer, dptr);  // charged one by one
  return rc;
}

// A call after which the pool may reserve less.
template <typename Call>
CUresult ThenSettle(CUmemoryPool pool, Call call) {
  if (!Enforcer::Get().active()) return call();
  PoolCharges::Hold hold(Charges());
  CUresult rc = call();
  if (rc == CUDA_SUCCESS) Charges().Settle(pool);
  return rc;
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

#define VGPU_ALLOC_ASYNC(name, per_thread)                                    \
  VGPU_HOOK CUresult name(CUdeviceptr* dptr, size_t bytes, CUstream stream) { \
    VGPU_REAL(kCuda, name);                                                   \
    return AllocAsync(dptr, bytes, real, stream, per_thread);                 \
  }
VGPU_ALLOC_ASYNC(cuMemAllocAsync, false)
VGPU_ALLOC_ASYNC(cuMemAllocAsync_ptsz, true)

#define VGPU_ALLOC_FROM_POOL(name, per_thread)                                                     \
  VGPU_HOOK CUresult name(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream stream) { \
    VGPU_REAL(kCuda, name);                                                                      \
    return AllocFromPool(dptr, bytes, pool, real, stream, per_thread);                           \
  }
VGPU_ALLOC_FROM_POOL(cuMemAllocFromPoolAsync, false)
VGPU_ALLOC_FROM_POOL(cuMemAllocFromPoolAsync_ptsz, true)

#define VGPU_FREE_ASYNC(name, per_thread)                      \
  VGPU_HOOK CUresult name(CUdeviceptr dptr, CUstream stream) { \
    VGPU_REAL(kCuda, name);                                    \
    return FreeAsync(dptr, real, stream, per_thread);          \
  }
VGPU_FREE_ASYNC(cuMemFreeAsync, false)
VGPU_FREE_ASYNC(cuMemFreeAsync_ptsz, true)

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
  PoolCharges::Hold hold(Charges());
  CUresult rc = real(pool);
  if (rc == CUDA_SUCCESS) Charges().Destroyed(pool);
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
