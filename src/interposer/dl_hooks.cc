// dlsym and dlvsym: programs that dlopen a vendor library and look up its
// entry points (the CUDA runtime looks up cuGetProcAddress this way) get
// our hooks. Everything else goes to glibc's dlsym as a tail call, so that
// glibc still sees the original caller (RTLD_NEXT is relative to it).
#include <dlfcn.h>

#include <cstring>

#include "hooks.h"
#include "export.h"

namespace vgpu {
namespace interposer {

namespace {

// The hook named by the first `len` characters of `name`, or null.
void* FindHook(const char* name, size_t len) {
  struct Table {
    const Hook* hooks;
    const size_t& count;
  };
  static const Table tables[] = {{kCudaHooks, kCudaHookCount}, {kCudaVmmHooks, kCudaVmmHookCount},
                                 {kCudaPoolHooks, kCudaPoolHookCount}, {kCudaGraphHooks, kCudaGraphHookCount},
                                 {kCudaLegacyHooks, kCudaLegacyHookCount},
                                 {kCudaLimitHooks, kCudaLimitHookCount},
                                 {kCudaLaunchHooks, kCudaLaunchHookCount}, {kNvmlHooks, kNvmlHookCount},
                                 {kHipHooks, kHipHookCount}, {kHipMemoryHooks, kHipMemoryHookCount},
                                 {kHipPoolHooks, kHipPoolHookCount}, {kHipGraphHooks, kHipGraphHookCount},
                                 {kHipCopyHooks, kHipCopyHookCount},
                                 {kAclHooks, kAclHookCount}, {kAclModelHooks, kAclModelHookCount},
                                 {kAclWorkHooks, kAclWorkHookCount}};
  for (const Table& t : tables)
    for (size_t i = 0; i < t.count; ++i)
      if (std::strncmp(t.hooks[i].name, name, len) == 0 && t.hooks[i].name[len] == '\0')
        return t.hooks[i].function;
  return nullptr;
}

}  // namespace

void* HookByName(const char* name) {
  const size_t len = std::strlen(name);
  if (void* ours = FindHook(name, len)) return ours;
  // CANN 8.5 puts the body of every public aclrt* function in an exported
  // twin <name>Impl (libacl_rt_impl.so), and GE those of aclmdl* and aclop*;
  // the public function only calls its twin. So the hook of the public name,
  // whose real function is the public one, stands in for the twin.
  constexpr size_t kSuffix = 4;  // "Impl"
  if (len > 3 + kSuffix && std::strncmp(name, "acl", 3) == 0 && std::strcmp(name + len - kSuffix, "Impl") == 0)
    return FindHook(name, len - kSuffix);
  return nullptr;
}

namespace {

// Out of line, so that the exported dlsym stays a plain tail call.
__attribute__((noinline)) void* VendorLookup(void* handle, const char* name) {
  void* real = RealDlsym()(handle, name);
  if (!real) return nullptr;
  void* ours = HookByName(name);
  return ours ? ours : AclnnOperatorHook(handle, name, real);
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

VGPU_HOOK void* dlsym(void* handle, const char* name) {
  using namespace vgpu::interposer;
  if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && MaybeVendorSymbol(name))
    return VendorLookup(handle, name);
  return RealDlsym()(handle, name);
}

// dlvsym as dlsym, for vendor libraries whose symbols carry versions
// (ROCm's libamdhip64: hipMalloc@hip_4.2): without this hook a versioned
// lookup would hand out the unguarded function. (For a library without
// versions glibc answers dlvsym with NULL, whatever the version asked.)
VGPU_HOOK void* dlvsym(void* handle, const char* name, const char* version) {
  using namespace vgpu::interposer;
  if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && MaybeVendorSymbol(name)) {
    void* real = RealDlvsym()(handle, name, version);
    void* ours = real ? HookByName(name) : nullptr;
    return ours ? ours : AclnnOperatorHook(handle, name, real);
  }
  return RealDlvsym()(handle, name, version);
}
