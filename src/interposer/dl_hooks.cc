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

void* HookByName(const char* name) {
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
                                 {kAclHooks, kAclHookCount}, {kAclModelHooks, kAclModelHookCount}};
  for (const Table& t : tables)
    for (size_t i = 0; i < t.count; ++i)
      if (std::strcmp(t.hooks[i].name, name) == 0) return t.hooks[i].function;
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

// dlvsym as dlsym: a vendor library's symbols carry no version, and glibc
// accepts any version asked for such a symbol, so without this hook
// dlvsym(handle, "cuMemAlloc_v2", "x") would hand out the unguarded one.
VGPU_HOOK void* dlvsym(void* handle, const char* name, const char* version) {
  using namespace vgpu::interposer;
  if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && MaybeVendorSymbol(name)) {
    void* real = RealDlvsym()(handle, name, version);
    void* ours = real ? HookByName(name) : nullptr;
    return ours ? ours : AclnnOperatorHook(handle, name, real);
  }
  return RealDlvsym()(handle, name, version);
}
