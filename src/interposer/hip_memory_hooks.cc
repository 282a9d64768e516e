// HIP allocation paths beyond hipMalloc's family (hip_hooks.cc): pitched
// and 3D memory (hipMallocPitch, hipMemAllocPitch, hipMalloc3D), arrays (textures, mipmaps), virtual memory management
// and the runtime's allocations of a program's __managed__ variables.
// Each is counted against the job's limit on the current device (a VMM
// allocation: on its location) and refused past it with
// hipErrorOutOfMemory, as hipMalloc is.
#include <algorithm>
#include <string>

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

// The elements of every level of a mipmapped array: each level halves
// every dimension, never below 1, except a layered array's layers (its
// depth), of which every level has all.
uint64_t MipmapElements(size_t width, size_t height, size_t depth, unsigned int levels, unsigned int flags) {
  const bool layered = flags & hipArrayLayered;
  uint64_t elements = 0, w = width, h = AtLeastOne(height), d = AtLeastOne(depth);
  for (unsigned int l = 0; l < std::max(levels, 1u) && w; ++l) {
    elements += w * h * d;
    w = std::max<uint64_t>(w / 2, 1), h = std::max<uint64_t>(h / 2, 1);
    if (!layered) d = std::max<uint64_t>(d / 2, 1);
  }
  return elements;
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

// Every level counts (MipmapElements).
VGPU_HOOK hipError_t hipMallocMipmappedArray(hipMipmappedArray_t* array, const hipChannelFormatDesc* desc,
                                             hipExtent e, unsigned int levels, unsigned int flags) {
  VGPU_REAL(kHip, hipMallocMipmappedArray);
  if (!real) return hipErrorNotInitialized;
  return ArrayAlloc(MipmapElements(e.width, e.height, e.depth, levels, flags), ElementBytes(desc), [&](uint64_t* key) {
    hipError_t rc = real(array, desc, e, levels, flags);
    if (key && array) *key = Key(*array);
    return rc;
  });
}

// The runtime makes it as hipMallocMipmappedArray does, on the current
// device.
VGPU_HOOK hipError_t hipMipmappedArrayCreate(hipMipmappedArray_t* array, HIP_ARRAY3D_DESCRIPTOR* d,
                                             unsigned int levels) {
  VGPU_REAL(kHip, hipMipmappedArrayCreate);
  if (!real) return hipErrorNotInitialized;
  if (!d) return real(array, d, levels);
  return ArrayAlloc(MipmapElements(d->Width, d->Height, d->Depth, levels, d->Flags),
                    ElementBytes(d->Format, d->NumChannels), [&](uint64_t* key) {
                      hipError_t rc = real(array, d, levels);
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
// The runtime frees a mipmapped array with either call, however it was made.
VGPU_HIP_FREE_ARRAY(hipFreeMipmappedArray, hipMipmappedArray_t)
VGPU_HIP_FREE_ARRAY(hipMipmappedArrayDestroy, hipMipmappedArray_t)

// A __managed__ variable: the program's module constructor registers it,
// and the runtime allocates it as hipMallocManaged would (but not through
// it), so it is charged as hipMallocManaged is, for the life of the
// process. The runtime aborts the process when it cannot allocate one; a
// variable past the job's limit is instead not registered at all: its
// pointer stays null and the warning names it.
VGPU_HOOK void __hipRegisterManagedVar(void* hip_module, void** pointer, void* init_value, const char* name,
                                       size_t size, unsigned align) {
  VGPU_REAL(kHip, __hipRegisterManagedVar);
  if (!real) return;
  Gate g;
  const int dev = HipCurrentDevice();
  if (size > 0 && HipAdmitOn(dev, size, &g) != hipSuccess) {
    if (pointer) *pointer = nullptr;
    Enforcer& e = Enforcer::Get();
    DeviceAccount* account = e.active() ? HipAccountOf(dev) : nullptr;
    std::string why = "device memory refused";
    if (account)
      why = "past job " + std::to_string(e.job_id()) + "'s limit of " +
            std::to_string(account->held_to().memory_bytes) + " bytes on HIP device " + std::to_string(dev);
    e.WarnOnce("__managed__ variable " + std::string(name ? name : "(unnamed)") + " of " + std::to_string(size) +
               " bytes is not allocated (" + why + "): its pointer is null");
    return;
  }
  real(hip_module, pointer, init_value, name, size, align);
  Settle(g, pointer && *pointer, Kind::kPointer, pointer ? Key(*pointer) : 0);
}

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
    VGPU_HIP_ENTRY(hipDeviceSetLimit),  VGPU_HIP_ENTRY(hipMipmappedArrayCreate),
    VGPU_HIP_ENTRY(hipMipmappedArrayDestroy), VGPU_HIP_ENTRY(__hipRegisterManagedVar),
};
const size_t kHipMemoryHookCount = sizeof(kHipMemoryHooks) / sizeof(kHipMemoryHooks[0]);

}  // namespace interposer
}  // namespace vgpu
