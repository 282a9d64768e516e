// The CUDA driver's v1 entry points (before CUDA 3.2: 32-bit device
// pointers and sizes), which libcuda still exports under the old names
// (cuMemAlloc, cuMemAllocPitch, cuArrayCreate, cuArray3DCreate). Nothing
// built since 2010 calls them, and counting memory through a 32-bit
// interface would be a second, untested copy of every path; so inside a
// vgpu job (and failing closed) they are refused with
// CUDA_ERROR_NOT_SUPPORTED and a line on stderr. Outside a job they only
// forward.
#include <string>

#include "cuda_api.h"
#include "enforcer.h"
#include "export.h"
#include "hooks.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

// True (after saying why, once) when `name` must be refused here.
bool RefuseV1(const char* name) {
  Enforcer& e = Enforcer::Get();
  if (!e.active() && !e.failed_closed()) return false;
  e.WarnOnce(std::string(name) + " (the CUDA v1 interface of 32-bit device pointers) is refused in a vgpu job: "
             "its memory could not be counted; rebuild the program against CUDA 3.2 or later");
  return true;
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

#define VGPU_V1(name, params, args)                       \
  VGPU_HOOK CUresult name params {                        \
    if (RefuseV1(#name)) return CUDA_ERROR_NOT_SUPPORTED; \
    VGPU_REAL(Vendor::kCuda, name);                       \
    return real ? real args : CUDA_ERROR_NOT_INITIALIZED; \
  }
VGPU_V1(cuMemAlloc, (CUdeviceptr_v1 * dptr, unsigned int bytes), (dptr, bytes))
VGPU_V1(cuMemAllocPitch,
        (CUdeviceptr_v1 * dptr, unsigned int* pitch, unsigned int width_bytes, unsigned int height,
         unsigned int element_bytes),
        (dptr, pitch, width_bytes, height, element_bytes))
VGPU_V1(cuArrayCreate, (CUarray * array, const void* desc), (array, desc))
VGPU_V1(cuArray3DCreate, (CUarray * array, const void* desc), (array, desc))

namespace vgpu {
namespace interposer {

#define VGPU_HOOK_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kCudaLegacyHooks[] = {
    VGPU_HOOK_ENTRY(cuMemAlloc),
    VGPU_HOOK_ENTRY(cuMemAllocPitch),
    VGPU_HOOK_ENTRY(cuArrayCreate),
    VGPU_HOOK_ENTRY(cuArray3DCreate),
};
const size_t kCudaLegacyHookCount = sizeof(kCudaLegacyHooks) / sizeof(kCudaLegacyHooks[0]);

}  // namespace interposer
}  // namespace vgpu
