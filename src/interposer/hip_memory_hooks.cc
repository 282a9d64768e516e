// HIP allocation paths beyond hipMalloc's family (hip_hooks.cc): pitched
// and 3D memory (hipMallocPitch, hipMemAllocPitch, hipMalloc3D), arrays (textures, mipmaps) and virtual memory management.
// Each is counted against the job's limit on the current device (a VMM
// allocation: on its location) and refused past it with
// hipErrorOutOfMemory, as hipMalloc is.
#include <algorithm>

#include "accounting.h"
#include "enforcer.h"
#include "export.h"
#include "hip_api.h"
#include "hip_device.h"
#include "hooks.h"
#include "limit_charges.h"
#include "physical_ledger.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

using Kind = Enforcer::Kind;
constexpr Vendor kHip = Vendor::kHip;

uint64_t Key(const void* p) { return reinterpret_cast<uint64_t>(p); }
uint64_t AtLeastOne(size_t n) { return n ? n : 1; }

// Bytes per element of a channel description (bits of all channels).
uint64_t ElementBytes(const hipChannelFormatDesc* desc) {
  if (!desc) return 0;
  const int bits = desc->x + desc->y + desc->z + desc->w;
  return bits > 0 ? (static_cast<uint64_t>(bits) + 7) / 8 : 0;
}

uint64_t ElementBytes(hipArray_Format format, unsigned int channels) {
  uint64_t per = 4;  // 32-bit formats; unknown ones are counted as these
  switch (format) {
    case HIP_AD_FORMAT_UNSIGNED_INT8:
    case HIP_AD_FORMAT_SIGNED_INT8:
      per = 1;
      break;
    case HIP_AD_FORMAT_UNSIGNED_INT16:
    case HIP_AD_FORMAT_SIGNED_INT16:
    case HIP_AD_FORMAT_HALF:
      per = 2;
      break;
    default:
      break;
  }
  return per * AtLeastOne(channels);
}

// A pitched allocation by `call()` of `rows` rows of `width` bytes, whose
// pitch the runtime writes to *pitch: admitted with a guess, settled once
// the pitch is known (as for CUDA); freed with hipFree.
template <typename Call>
hipError_t Pitched(size_t width, uint64_t rows, void** ptr, const size_t* pitch, Call call) {
  const uint64_t guess = PitchGuess(width, rows);
  if (guess == 0 || !ptr || !pitch) return call();
  Gate g;
  if (hipError_t refused = HipAdmitHere(guess, &g)) return refused;
  hipError_t rc = call();
  if (rc == hipSuccess && !SettlePitch(&g, guess, static_cast<uint64_t>(*pitch) * rows)) {
    VGPU_REAL(kHip, hipFree);
    if (real) real(*ptr);
    return hipErrorOutOfMemory;
  }
  Settle(g, rc == hipSuccess, Kind::kPointer, Key(*ptr));
  return rc;
}

// An array of `elements` of `element_bytes` made by `create()` (which
// returns the array as a key): admitted, then kept or given back.
template <typename Create>
hipError_t ArrayAlloc(uint64_t elements, uint64_t element_bytes, Create create) {
  const uint64_t bytes = elements * element_bytes;
  if (bytes == 0) return create(nullptr);  // the runtime's own error
  Gate g;
  if (hipError_t refused = HipAdmitHere(bytes, &g)) return refused;
  uint64_t key = 0;
  const hipError_t rc = create(&key);
  Settle(g, rc == hipSuccess, Kind::kArray, key);
  return rc;
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

VGPU_HOOK hipError_t hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  VGPU_REAL(kHip, hipMallocPitch);
  if (!real) return hipErrorNotInitialized;
  return Pitched(width, height, ptr, pitch, [&] { return real(ptr, pitch, width, height); });
}

VGPU_HOOK hipError_t hipMemAllocPitch(hipDeviceptr_t* ptr, size_t* pitch, size_t width_bytes, size_t height,
                                      unsigned int element_bytes) {
  VGPU_REAL(kHip, hipMemAllocPitch);
  if (!real) return hipErrorNotInitialized;
  return Pitched(width_bytes, height, ptr, pitch, [&] { return real(ptr, pitch, width_bytes, height, element_bytes); });
}

// Rows of extent.width bytes, height x depth of them.
VGPU_HOOK hipError_t hipMalloc3D(hipPitchedPtr* pitched, hipExtent extent) {
  VGPU_REAL(kHip, hipMalloc3D);
  if (!real) return hipErrorNotInitialized;
  if (!pitched) return real(pitched, extent);
  const uint64_t rows = AtLeastOne(extent.height) * AtLeastOne(extent.depth);
  return Pitched(extent.width, rows, &pitched->ptr, &pitched->pitch, [&] { return real(pitched, extent); });
}

VGPU_HOOK hipError_t hipMallocArray(hipArray_t* array, const hipChannelFormatDesc* desc, size_t width,
                                    size_t height, unsigned int flags) {
  VGPU_REAL(kHip, hipMallocArray);
  if (!real) return hipErrorNotInitialized;
  return ArrayAlloc(static_cast<uint64_t>(width) * AtLeastOne(height), ElementBytes(desc), [&](uint64_t* key) {
    hipError_t rc = real(array, desc, width, height, flags);
    if (key && array) *key = Key(*array);
    return rc;
  });
}

VGPU_HOOK hipError_t hipMalloc3DArray(hipArray_t* array, const hipChannelFormatDesc* desc, hipExtent e,
                                      unsigned int flags) {
  VGPU_REAL(kHip, hipMalloc3DArray);
  if (!real) return hipErrorNotInitialized;
  const uint64_t elements = static_cast<uint64_t>(e.width) * AtLeastOne(e.height) * AtLeastOne(e.depth);
  return ArrayAlloc(elements, ElementBytes(desc), [&](uint64_t* key) {
    hipError_t rc = real(array, desc, e, flags);
    if (key && array) *key = Key(*array);
    return rc;
  });
}

VGPU_HOOK hipError_t hipArrayCreate(hipArray_t* array, const HIP_ARRAY_DESCRIPTOR* d) {
  VGPU_REAL(kHip, hipArrayCreate);
  if (!real) return hipErrorNotInitialized;
  if (!d) return real(array, d);
  return ArrayAlloc(static_cast<uint64_t>(d->Width) * AtLeastOne(d->Height), ElementBytes(d->Format, d->NumChannels),
                    [&](uint64_t* key) {
                      hipError_t rc = real(array, d);
                      if (key && array) *key = Key(*array);
                      return rc;
                    });
}

VGPU_HOOK hipError_t hipArray3DCreate(hipArray_t* array, const HIP_ARRAY3D_DESCRIPTOR* d) {
  VGPU_REAL(kHip, hipArray3DCreate);
  if (!real) return hipErrorNotInitialized;
  if (!d) return real(array, d);
  const uint64_t elements = static_cast<uint64_t>(d->Width) * AtLeastOne(d->Height) * AtLeastOne(d->Depth);
  return ArrayAlloc(elements, ElementBytes(d->Format, d->NumChannels), [&](uint64_t* key) {
    hipError_t rc = real(array, d);
    if (key && array) *key = Key(*array);
    return rc;
  });
}

// Every level counts: each halves every dimension, never below 1.
VGPU_HOOK hipError_t hipMallocMipmappedArray(hipMipmappedArray_t* array, const hipChannelFormatDesc* desc,
                                             hipExtent e, unsigned int levels, unsigned int flags) {
  VGPU_REAL(kHip, hipMallocMipmappedArray);
  if (!real) return hipErrorNotInitialized;
  uint64_t elements = 0, w = e.width, h = AtLeastOne(e.height), d = AtLeastOne(e.depth);
  for (unsigned int l = 0; l < std::max(levels, 1u) && w; ++l) {
    elements += w * h * d;
    w = std::max<uint64_t>(w / 2, 1), h = std::max<uint64_t>(h / 2, 1), d = std::max<uint64_t>(d / 2, 1);
  }
  return ArrayAlloc(elements, ElementBytes(desc), [&](uint64_t* key) {
    hipError_t rc = real(array, desc, e, levels, flags);
    if (key && array) *key = Key(*array);
    return rc;
  });
}

#define VGPU_HIP_FREE_ARRAY(name, Type)                 \
  VGPU_HOOK hipError_t name(Type array) {               \
    VGPU_REAL(kHip, name);                              \
    if (!real) return hipErrorNotInitialized;           \
    hipError_t rc = real(array);                        \
    if (rc == hipSuccess) Freed(Kind::kArray, Key(array)); \
    return rc;                                          \
  }
VGPU_HIP_FREE_ARRAY(hipFreeArray, hipArray_t)
VGPU_HIP_FREE_ARRAY(hipArrayDestroy, hipArray_t)
VGPU_HIP_FREE_ARRAY(hipFreeMipmappedArray, hipMipmappedArray_t)

// Virtual memory management: as CUDA's (cuda_vmm_hooks.cc).
VGPU_HOOK hipError_t hipMemCreate(hipMemGenericAllocationHandle_t* handle, size_t size,
                                  const hipMemAllocationProp* prop, unsigned long long flags) {
  VGPU_REAL(kHip, hipMemCreate);
  if (!real) return hipErrorNotInitialized;
  Gate g;
  if (prop && prop->location.type == hipMemLocationTypeDevice && size > 0) {
    if (hipError_t refused = HipAdmitOn(prop->location.id, size, &g)) return refused;
  }
  hipError_t rc = real(handle, size, prop, flags);
  SettleCreated(g, rc == hipSuccess && handle, handle ? Key(*handle) : 0);
  return rc;
}

VGPU_HOOK hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle) {
  VGPU_REAL(kHip, hipMemRelease);
  if (!real) return hipErrorNotInitialized;
  hipError_t rc = real(handle);
  if (rc == hipSuccess) GiveBack(PhysicalLedger::Get().Released(Key(handle)));
  return rc;
}

VGPU_HOOK hipError_t hipMemMap(void* ptr, size_t size, size_t offset, hipMemGenericAllocationHandle_t handle,
                               unsigned long long flags) {
  VGPU_REAL(kHip, hipMemMap);
  if (!real) return hipErrorNotInitialized;
  hipError_t rc = real(ptr, size, offset, handle, flags);
  if (rc == hipSuccess) PhysicalLedger::Get().Mapped(Key(handle), Key(ptr), size);
  return rc;
}

VGPU_HOOK hipError_t hipMemUnmap(void* ptr, size_t size) {
  VGPU_REAL(kHip, hipMemUnmap);
  if (!real) return hipErrorNotInitialized;
  hipError_t rc = real(ptr, size);
  if (rc == hipSuccess) GiveBack(PhysicalLedger::Get().Unmapped(Key(ptr), size));
  return rc;
}

VGPU_HOOK hipError_t hipMemRetainAllocationHandle(hipMemGenericAllocationHandle_t* handle, void* addr) {
  VGPU_REAL(kHip, hipMemRetainAllocationHandle);
  if (!real) return hipErrorNotInitialized;
  hipError_t rc = real(handle, addr);
  if (rc == hipSuccess && handle) PhysicalLedger::Get().Retained(Key(*handle));
  return rc;
}

// hipDeviceSetLimit, charged as limit_charges.h says, for the malloc heap
// and the printf buffer. Stacks (per-thread scratch, which the runtime
// sizes per launch) are not counted.
VGPU_HOOK hipError_t hipDeviceSetLimit(hipLimit_t limit, size_t value) {
  VGPU_REAL(kHip, hipDeviceSetLimit);
  if (!real) return hipErrorNotInitialized;
  const int dev = HipCurrentDevice();
  DeviceAccount* account = Enforcer::Get().active() && limit != hipLimitStackSize ? HipAccountOf(dev) : nullptr;
  if (!account) return real(limit, value);
  hipError_t rc = hipSuccess;
  const auto outcome = LimitCharges::Get().Charge(
      account, limit, value, 1,
      [&]() -> uint64_t {
        VGPU_REAL(kHip, hipDeviceGetLimit);
        size_t before = 0;
        return real && real(&before, limit) == hipSuccess ? before : 0;
      },
      [&] { return (rc = real(limit, value)) == hipSuccess; });
  return outcome == LimitCharges::Outcome::kRefused ? hipErrorOutOfMemory : rc;
}

namespace vgpu {
namespace interposer {

#define VGPU_HIP_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kHipMemoryHooks[] = {
    VGPU_HIP_ENTRY(hipMallocPitch),     VGPU_HIP_ENTRY(hipMemAllocPitch),  VGPU_HIP_ENTRY(hipMalloc3D),       VGPU_HIP_ENTRY(hipMallocArray),
    VGPU_HIP_ENTRY(hipMalloc3DArray),   VGPU_HIP_ENTRY(hipArrayCreate),    VGPU_HIP_ENTRY(hipArray3DCreate),
    VGPU_HIP_ENTRY(hipMallocMipmappedArray), VGPU_HIP_ENTRY(hipFreeArray), VGPU_HIP_ENTRY(hipArrayDestroy),
    VGPU_HIP_ENTRY(hipFreeMipmappedArray), VGPU_HIP_ENTRY(hipMemCreate),   VGPU_HIP_ENTRY(hipMemRelease),
    VGPU_HIP_ENTRY(hipMemMap),          VGPU_HIP_ENTRY(hipMemUnmap),       VGPU_HIP_ENTRY(hipMemRetainAllocationHandle),
    VGPU_HIP_ENTRY(hipDeviceSetLimit),
};
const size_t kHipMemoryHookCount = sizeof(kHipMemoryHooks) / sizeof(kHipMemoryHooks[0]);

}  // namespace interposer
}  // namespace vgpu
