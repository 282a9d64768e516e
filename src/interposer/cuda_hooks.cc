// CUDA driver API hooks: device memory is counted against the job's limit
// on every allocation path and refused past it with the driver's own
// CUDA_ERROR_OUT_OF_MEMORY; memory queries report the limit; and
// cuGetProcAddress hands out these hooks, so the CUDA runtime (which finds
// every driver function through it) cannot go around them.
//
// Order on every path: reserve in the job's usage region, call the driver
// (no lock held), then keep the reservation or give it back.
#include <string>
#include <vector>

#include "cuda_api.h"
#include "accounting.h"
#include "cuda_device.h"
#include "enforcer.h"
#include "export.h"
#include "hooks.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

using Kind = Enforcer::Kind;
constexpr Vendor kCuda = Vendor::kCuda;

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML and the limits file
// spell it.
std::string UuidText(const CUuuid& u) {
  static const char hex[] = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    const auto b = static_cast<unsigned char>(u.bytes[i]);
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

}  // namespace

DeviceAccount* AccountOf(Enforcer&, CUdevice dev) {
  static DeviceAccounts& accounts = *new DeviceAccounts("CUDA");
  return accounts.Get(dev, [](int d, std::string* id) {
    auto get_uuid = RealAs<decltype(&cuDeviceGetUuid)>(kCuda, "cuDeviceGetUuid_v2");
    if (!get_uuid) get_uuid = RealAs<decltype(&cuDeviceGetUuid)>(kCuda, "cuDeviceGetUuid");
    CUuuid uuid{};
    if (!get_uuid || get_uuid(&uuid, d) != CUDA_SUCCESS) return false;
    *id = UuidText(uuid);
    return true;
  });
}

CUresult CurrentDevice(CUdevice* dev) {
  VGPU_REAL(kCuda, cuCtxGetDevice);
  return real ? real(dev) : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult AdmitOnDevice(const CUdevice* dev, uint64_t bytes, Gate* g) {
  CUresult context_rc = CUDA_SUCCESS;
  *g = Admit(bytes, [&]() -> DeviceAccount* {
    CUdevice d = 0;
    if (dev) {
      d = *dev;
    } else if ((context_rc = CurrentDevice(&d)) != CUDA_SUCCESS) {
      return nullptr;
    }
    return AccountOf(Enforcer::Get(), d);
  });
  if (!g->refused) return CUDA_SUCCESS;
  return context_rc != CUDA_SUCCESS ? context_rc : CUDA_ERROR_OUT_OF_MEMORY;
}

namespace {

CUresult AdmitOnCurrentDevice(uint64_t bytes, Gate* g) { return AdmitOnDevice(nullptr, bytes, g); }

uint64_t ElementBytes(int format) {
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
      return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
      return 4;
    default:
      return 16;  // formats not listed here: count generously
  }
}

uint64_t ArrayBytes(size_t w, size_t h, size_t d, unsigned channels, int format) {
  return static_cast<uint64_t>(w) * (h ? h : 1) * (d ? d : 1) * (channels ? channels : 1) *
         ElementBytes(format);
}

// The memory query of CUDA device `dev` in a job.
void ReportLimit(CUdevice dev, size_t* free_bytes, size_t* total_bytes) {
  Enforcer& e = Enforcer::Get();
  uint64_t free64 = free_bytes ? *free_bytes : UINT64_MAX, total64 = 0;
  if (!JobMemory(AccountOf(e, dev), &free64, &total64)) return;
  if (free_bytes) *free_bytes = static_cast<size_t>(free64);
  if (total_bytes) *total_bytes = static_cast<size_t>(total64);
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

VGPU_HOOK CUresult cuInit(unsigned int flags) {
  Enforcer& e = Enforcer::Get();
  if (e.failed_closed()) {
    e.ReportRefusal("cuInit");
    return CUDA_ERROR_NOT_PERMITTED;
  }
  VGPU_REAL(kCuda, cuInit);
  return real ? real(flags) : CUDA_ERROR_NOT_INITIALIZED;
}

VGPU_HOOK CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes) {
  VGPU_REAL(kCuda, cuMemAlloc_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  Gate g;
  if (CUresult refused = AdmitOnCurrentDevice(bytes, &g)) return refused;
  CUresult rc = real(dptr, bytes);
  Settle(g, rc == CUDA_SUCCESS, Kind::kPointer, dptr ? *dptr : 0);
  return rc;
}

VGPU_HOOK CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytes, unsigned int flags) {
  VGPU_REAL(kCuda, cuMemAllocManaged);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  // Managed memory can migrate out of the device; counted in full, as it
  // may all be resident at once.
  Gate g;
  if (CUresult refused = AdmitOnCurrentDevice(bytes, &g)) return refused;
  CUresult rc = real(dptr, bytes, flags);
  Settle(g, rc == CUDA_SUCCESS, Kind::kPointer, dptr ? *dptr : 0);
  return rc;
}

VGPU_HOOK CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height,
                                      unsigned int element_bytes) {
  VGPU_REAL(kCuda, cuMemAllocPitch_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  // The pitch is known only afterwards: admitted with a guess, settled.
  const uint64_t guess = PitchGuess(width, height);
  Gate g;
  if (CUresult refused = AdmitOnCurrentDevice(guess, &g)) return refused;
  CUresult rc = real(dptr, pitch, width, height, element_bytes);
  if (rc == CUDA_SUCCESS && pitch && !SettlePitch(&g, guess, static_cast<uint64_t>(*pitch) * height)) {
    VGPU_REAL(kCuda, cuMemFree_v2);
    if (real) real(*dptr);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  Settle(g, rc == CUDA_SUCCESS, Kind::kPointer, dptr ? *dptr : 0);
  return rc;
}


VGPU_HOOK CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  VGPU_REAL(kCuda, cuMemGetInfo_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(free_bytes, total_bytes);
  CUdevice dev = 0;
  if (rc == CUDA_SUCCESS && Enforcer::Get().active() && CurrentDevice(&dev) == CUDA_SUCCESS)
    ReportLimit(dev, free_bytes, total_bytes);
  return rc;
}

VGPU_HOOK CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  VGPU_REAL(kCuda, cuDeviceTotalMem_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(bytes, dev);
  if (rc == CUDA_SUCCESS && Enforcer::Get().active()) ReportLimit(dev, nullptr, bytes);
  return rc;
}

// Frees: the driver first; what it freed is given back to the job.
#define VGPU_FREE(name, Type, kind, key)                      \
  VGPU_HOOK CUresult name(Type x) {                          \
    VGPU_REAL(kCuda, name);                                  \
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;            \
    CUresult rc = real(x);                                   \
    if (rc == CUDA_SUCCESS) Freed(kind, key);                \
    return rc;                                               \
  }
VGPU_FREE(cuMemFree_v2, CUdeviceptr, Kind::kPointer, x)
VGPU_FREE(cuArrayDestroy, CUarray, Kind::kArray, reinterpret_cast<uint64_t>(x))

VGPU_HOOK CUresult cuArrayCreate_v2(CUarray* array, const CUDA_ARRAY_DESCRIPTOR* desc) {
  VGPU_REAL(kCuda, cuArrayCreate_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  Gate g;
  if (desc) {
    if (CUresult refused = AdmitOnCurrentDevice(ArrayBytes(desc->Width, desc->Height, 1, desc->NumChannels, desc->Format), &g))
      return refused;
  }
  CUresult rc = real(array, desc);
  Settle(g, rc == CUDA_SUCCESS, Kind::kArray, array ? reinterpret_cast<uint64_t>(*array) : 0);
  return rc;
}

VGPU_HOOK CUresult cuArray3DCreate_v2(CUarray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  VGPU_REAL(kCuda, cuArray3DCreate_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  Gate g;
  if (desc) {
    if (CUresult refused = AdmitOnCurrentDevice(
            ArrayBytes(desc->Width, desc->Height, desc->Depth, desc->NumChannels, desc->Format), &g))
      return refused;
  }
  CUresult rc = real(array, desc);
  Settle(g, rc == CUDA_SUCCESS, Kind::kArray, array ? reinterpret_cast<uint64_t>(*array) : 0);
  return rc;
}


// Every level counts: each halves every dimension, never below 1, except a
// layered array's depth, its layer count, which every level keeps.
VGPU_HOOK CUresult cuMipmappedArrayCreate(CUmipmappedArray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc,
                                          unsigned int levels) {
  VGPU_REAL(kCuda, cuMipmappedArrayCreate);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  Gate g;
  if (desc) {
    uint64_t bytes = 0;
    size_t w = desc->Width, h = desc->Height, d = desc->Depth;
    for (unsigned int l = 0; l < (levels ? levels : 1) && w; ++l) {
      bytes += ArrayBytes(w, h, d, desc->NumChannels, desc->Format);
      const bool layered = desc->Flags & CUDA_ARRAY3D_LAYERED;
      w = w > 1 ? w / 2 : 1, h = h > 1 ? h / 2 : h, d = d > 1 && !layered ? d / 2 : d;
    }
    if (CUresult refused = AdmitOnCurrentDevice(bytes, &g)) return refused;
  }
  CUresult rc = real(array, desc, levels);
  Settle(g, rc == CUDA_SUCCESS, Kind::kArray, array ? reinterpret_cast<uint64_t>(*array) : 0);
  return rc;
}
VGPU_FREE(cuMipmappedArrayDestroy, CUmipmappedArray, Kind::kArray, reinterpret_cast<uint64_t>(x))

// ---- cuGetProcAddress -------------------------------------------------------

namespace vgpu {
namespace interposer {
namespace {

// The entry points we hook, by the base name cuGetProcAddress is asked
// for: from CUDA version `since` on, the driver hands out the function
// exported as `exported` (`ptsz` with the per-thread default stream).
// Newest first. In a job, each of these must come out as our hook:
// handing out one we do not know (a future _v3) would let memory or time
// go uncounted.
struct Variant {
  const char* base;
  int since;
  const char* exported;
  const char* ptsz;
};
const Variant kVariants[] = {
    {"cuInit", 0, "cuInit", nullptr},
    {"cuMemAlloc", 3020, "cuMemAlloc_v2", nullptr},
    {"cuMemAlloc", 0, "cuMemAlloc", nullptr},
    {"cuMemAllocPitch", 3020, "cuMemAllocPitch_v2", nullptr},
    {"cuMemAllocPitch", 0, "cuMemAllocPitch", nullptr},
    {"cuMemAllocManaged", 0, "cuMemAllocManaged", nullptr},
    {"cuMemFree", 3020, "cuMemFree_v2", nullptr},
    {"cuCtxSetLimit", 0, "cuCtxSetLimit", nullptr},
    {"cuMemGetInfo", 3020, "cuMemGetInfo_v2", nullptr},
    {"cuDeviceTotalMem", 3020, "cuDeviceTotalMem_v2", nullptr},
    {"cuMemCreate", 0, "cuMemCreate", nullptr},
    {"cuMemRelease", 0, "cuMemRelease", nullptr},
    {"cuMemMap", 0, "cuMemMap", nullptr},
    {"cuMemUnmap", 0, "cuMemUnmap", nullptr},
    {"cuMemRetainAllocationHandle", 0, "cuMemRetainAllocationHandle", nullptr},
    {"cuMulticastBindMem", 0, "cuMulticastBindMem", nullptr},
    {"cuMulticastBindAddr", 0, "cuMulticastBindAddr", nullptr},
    {"cuMulticastUnbind", 0, "cuMulticastUnbind", nullptr},
    {"cuMemAllocAsync", 0, "cuMemAllocAsync", "cuMemAllocAsync_ptsz"},
    {"cuMemAllocFromPoolAsync", 0, "cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz"},
    {"cuMemFreeAsync", 0, "cuMemFreeAsync", "cuMemFreeAsync_ptsz"},
    {"cuMemPoolTrimTo", 0, "cuMemPoolTrimTo", nullptr},
    {"cuMemPoolSetAttribute", 0, "cuMemPoolSetAttribute", nullptr},
    {"cuMemPoolDestroy", 0, "cuMemPoolDestroy", nullptr},
    {"cuGraphAddMemAllocNode", 0, "cuGraphAddMemAllocNode", nullptr},
    {"cuGraphAddNode", 12030, "cuGraphAddNode_v2", nullptr},
    {"cuGraphAddNode", 0, "cuGraphAddNode", nullptr},
    {"cuGraphDestroy", 0, "cuGraphDestroy", nullptr},
    {"cuStreamBeginCapture", 10010, "cuStreamBeginCapture_v2", "cuStreamBeginCapture_ptsz"},
    {"cuStreamBeginCapture", 0, "cuStreamBeginCapture", nullptr},
    {"cuStreamBeginCaptureToGraph", 0, "cuStreamBeginCaptureToGraph", "cuStreamBeginCaptureToGraph_ptsz"},
    {"cuStreamEndCapture", 0, "cuStreamEndCapture", "cuStreamEndCapture_ptsz"},
    {"cuGraphInstantiate", 12000, "cuGraphInstantiateWithFlags", nullptr},
    {"cuGraphInstantiate", 11000, "cuGraphInstantiate_v2", nullptr},
    {"cuGraphInstantiate", 0, "cuGraphInstantiate", nullptr},
    {"cuGraphInstantiateWithFlags", 0, "cuGraphInstantiateWithFlags", nullptr},
    {"cuGraphInstantiateWithParams", 0, "cuGraphInstantiateWithParams", "cuGraphInstantiateWithParams_ptsz"},
    {"cuGraphExecDestroy", 0, "cuGraphExecDestroy", nullptr},
    {"cuGraphUpload", 0, "cuGraphUpload", "cuGraphUpload_ptsz"},
    {"cuDeviceGraphMemTrim", 0, "cuDeviceGraphMemTrim", nullptr},
    {"cuArrayCreate", 3020, "cuArrayCreate_v2", nullptr},
    {"cuArrayCreate", 0, "cuArrayCreate", nullptr},
    {"cuArray3DCreate", 3020, "cuArray3DCreate_v2", nullptr},
    {"cuArray3DCreate", 0, "cuArray3DCreate", nullptr},
    {"cuArrayDestroy", 0, "cuArrayDestroy", nullptr},
    {"cuMipmappedArrayCreate", 0, "cuMipmappedArrayCreate", nullptr},
    {"cuMipmappedArrayDestroy", 0, "cuMipmappedArrayDestroy", nullptr},
    {"cuLaunchKernel", 0, "cuLaunchKernel", "cuLaunchKernel_ptsz"},
    {"cuLaunchKernelEx", 0, "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz"},
    {"cuLaunchCooperativeKernel", 0, "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz"},
    {"cuGraphLaunch", 0, "cuGraphLaunch", "cuGraphLaunch_ptsz"},
    {"cuLaunch", 0, "cuLaunch", nullptr},
    {"cuLaunchGrid", 0, "cuLaunchGrid", nullptr},
    {"cuLaunchGridAsync", 0, "cuLaunchGridAsync", nullptr},
    {"cuLaunchCooperativeKernelMultiDevice", 0, "cuLaunchCooperativeKernelMultiDevice", nullptr},
    {"cuGetProcAddress", 12000, "cuGetProcAddress_v2", nullptr},
    {"cuGetProcAddress", 0, "cuGetProcAddress", nullptr},
};

bool Guarded(const char* symbol) {
  for (const auto& v : kVariants)
    if (std::string(v.base) == symbol) return true;
  return false;
}

// Our hook for what the driver gives for `symbol` at `version`, by name:
// for a driver that hands out internal entry points rather than its
// exported functions. Null if none (or a version older than ours).
void* HookForName(const char* symbol, int version, cuuint64_t flags) {
  for (const auto& v : kVariants) {
    if (std::string(v.base) != symbol) continue;
    if (version < v.since) continue;
    const char* name = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && v.ptsz ? v.ptsz : v.exported;
    return RealSymbol(kCuda, name) ? HookByName(name) : nullptr;
  }
  return nullptr;
}

// Our hook for the vendor entry point `real`, by address; null if none.
// (The driver's addresses are looked up once: cuGetProcAddress is called
// hundreds of times while the CUDA runtime starts.)
void* HookForAddress(void* real) {
  struct Table {
    const Hook* hooks;
    size_t count;
  };
  static const Table tables[] = {{kCudaHooks, kCudaHookCount},
                                 {kCudaVmmHooks, kCudaVmmHookCount},
                                 {kCudaPoolHooks, kCudaPoolHookCount},
                                 {kCudaGraphHooks, kCudaGraphHookCount},
                                 {kCudaLegacyHooks, kCudaLegacyHookCount},
                                 {kCudaLimitHooks, kCudaLimitHookCount},
                                 {kCudaLaunchHooks, kCudaLaunchHookCount}};
  // Never freed: the runtime may ask while the process exits.
  static const std::vector<std::vector<void*>>& addresses = *[] {
    auto* a = new std::vector<std::vector<void*>>();
    for (const auto& t : tables) {
      a->emplace_back(t.count);
      for (size_t i = 0; i < t.count; ++i) a->back()[i] = RealSymbol(kCuda, t.hooks[i].name);
    }
    return a;
  }();
  for (size_t k = 0; k < sizeof(tables) / sizeof(tables[0]); ++k)
    for (size_t i = 0; i < tables[k].count; ++i)
      if (addresses[k][i] == real) return tables[k].hooks[i].function;
  return nullptr;
}

// Replaces *pfn, which the driver gave for `symbol`, with our hook: found
// by the driver's address (it handed out an exported function), else by
// name and version.
CUresult Substitute(const char* symbol, void** pfn, int version, cuuint64_t flags,
                    CUdriverProcAddressQueryResult* status) {
  void* ours = HookForAddress(*pfn);
  if (!ours) ours = HookForName(symbol, version, flags);
  if (ours) {
    *pfn = ours;
    return CUDA_SUCCESS;
  }
  Enforcer& e = Enforcer::Get();
  if (!Guarded(symbol) || !e.active()) return CUDA_SUCCESS;
  e.WarnOnce("cuGetProcAddress(\"" + std::string(symbol) + "\", " + std::to_string(version) +
             ") gave an entry point libvgpu does not know; refused so that memory limits hold "
             "(this CUDA is newer than this slurm-vgpu: update slurm-vgpu)");
  *pfn = nullptr;
  if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

VGPU_HOOK CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  VGPU_REAL(kCuda, cuGetProcAddress);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(symbol, pfn, version, flags);
  if (rc != CUDA_SUCCESS || !pfn || !*pfn) return rc;
  return Substitute(symbol, pfn, version, flags, nullptr);
}

VGPU_HOOK CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                       CUdriverProcAddressQueryResult* status) {
  VGPU_REAL(kCuda, cuGetProcAddress_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = real(symbol, pfn, version, flags, status);
  if (rc != CUDA_SUCCESS || !pfn || !*pfn) return rc;
  return Substitute(symbol, pfn, version, flags, status);
}

namespace vgpu {
namespace interposer {

#define VGPU_HOOK_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kCudaHooks[] = {
    VGPU_HOOK_ENTRY(cuInit),
    VGPU_HOOK_ENTRY(cuMemAlloc_v2),
    VGPU_HOOK_ENTRY(cuMemAllocManaged),
    VGPU_HOOK_ENTRY(cuMemAllocPitch_v2),
    VGPU_HOOK_ENTRY(cuMemFree_v2),
    VGPU_HOOK_ENTRY(cuMemGetInfo_v2),
    VGPU_HOOK_ENTRY(cuDeviceTotalMem_v2),
    VGPU_HOOK_ENTRY(cuArrayCreate_v2),
    VGPU_HOOK_ENTRY(cuArray3DCreate_v2),
    VGPU_HOOK_ENTRY(cuArrayDestroy),
    VGPU_HOOK_ENTRY(cuMipmappedArrayCreate),
    VGPU_HOOK_ENTRY(cuMipmappedArrayDestroy),
    VGPU_HOOK_ENTRY(cuGetProcAddress),
    VGPU_HOOK_ENTRY(cuGetProcAddress_v2),
};
const size_t kCudaHookCount = sizeof(kCudaHooks) / sizeof(kCudaHooks[0]);

}  // namespace interposer
}  // namespace vgpu
