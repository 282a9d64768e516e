// The hook registry: every function libvgpu.so puts in front of a vendor
// library, by the name the vendor library exports it under. dlsym and
// cuGetProcAddress hand these out instead of the vendor's own.
#ifndef VGPU_INTERPOSER_HOOKS_H_
#define VGPU_INTERPOSER_HOOKS_H_

#include <cstddef>

#include "real_symbols.h"

namespace vgpu {
namespace interposer {

struct Hook {
  const char* name;  // exported name, e.g. "cuMemAlloc_v2"
  void* function;    // our hook
};

// Each vendor's hooks (cuda_hooks.cc, cuda_vmm_hooks.cc,
// cuda_pool_hooks.cc, cuda_graph_hooks.cc, cuda_legacy_hooks.cc, cuda_limit_hooks.cc, launch_hooks.cc, nvml_hooks.cc,
// hip_hooks.cc, hip_memory_hooks.cc, hip_pool_hooks.cc, hip_graph_hooks.cc, hip_copy_hooks.cc,
// acl_hooks.cc, acl_model_hooks.cc, acl_work_hooks.cc).
extern const Hook kCudaHooks[];
extern const size_t kCudaHookCount;
extern const Hook kCudaLimitHooks[];
extern const size_t kCudaLimitHookCount;
extern const Hook kCudaLegacyHooks[];
extern const size_t kCudaLegacyHookCount;
extern const Hook kCudaPoolHooks[];
extern const size_t kCudaPoolHookCount;
extern const Hook kCudaGraphHooks[];
extern const size_t kCudaGraphHookCount;
extern const Hook kCudaVmmHooks[];
extern const size_t kCudaVmmHookCount;
extern const Hook kCudaLaunchHooks[];
extern const size_t kCudaLaunchHookCount;
extern const Hook kNvmlHooks[];
extern const size_t kNvmlHookCount;
extern const Hook kHipHooks[];
extern const size_t kHipHookCount;
extern const Hook kHipMemoryHooks[];
extern const size_t kHipMemoryHookCount;
extern const Hook kHipPoolHooks[];
extern const size_t kHipPoolHookCount;
extern const Hook kHipCopyHooks[];
extern const size_t kHipCopyHookCount;
extern const Hook kHipGraphHooks[];
extern const size_t kHipGraphHookCount;
extern const Hook kAclHooks[];
extern const size_t kAclHookCount;
extern const Hook kAclModelHooks[];
extern const size_t kAclModelHookCount;
extern const Hook kAclWorkHooks[];
extern const size_t kAclWorkHookCount;

// Our hook for exported name `name`, or null. An AscendCL implementation
// twin (`<hooked name>Impl`) gets the hook of its public name.
void* HookByName(const char* name);
// What dlsym hands out for `name` found as `real` in `handle` when no hook
// has that name: a paced stand-in for an aclnn operator (aclnn_hooks.cc),
// else `real`.
void* AclnnOperatorHook(void* handle, const char* name, void* real);

// Whether `name` could be a hooked vendor symbol (cheap prefix test; "__hip"
// for HIP's compiler ABI).
inline bool MaybeVendorSymbol(const char* name) {
  return name && ((name[0] == 'c' && name[1] == 'u') ||
                  (name[0] == 'h' && name[1] == 'i' && name[2] == 'p') ||
                  (name[0] == '_' && name[1] == '_' && name[2] == 'h' && name[3] == 'i' && name[4] == 'p') ||
                  (name[0] == 'a' && name[1] == 'c' && name[2] == 'l') ||
                  (name[0] == 'n' && name[1] == 'v' && name[2] == 'm' && name[3] == 'l'));
}

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_HOOKS_H_
