#include "real_symbols.h"

#include <dlfcn.h>

namespace vgpu {
namespace interposer {
namespace {

void* Open(const char* soname) {
  // Loaded already (the program linked or dlopened it): use that copy.
  void* h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  return h ? h : dlopen(soname, RTLD_LAZY);
}

}  // namespace

DlsymFn RealDlsym() {
  static const DlsymFn real = [] {
    void* f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!f) f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return reinterpret_cast<DlsymFn>(f);
  }();
  return real;
}

void* RealSymbol(Vendor vendor, const char* name) {
  static void* const cuda = Open("libcuda.so.1");
  static void* const nvml = Open("libnvidia-ml.so.1");
  static void* const hip = Open("libamdhip64.so");
  static void* const acl = Open("libascendcl.so");
  void* handle = vendor == Vendor::kCuda  ? cuda
                 : vendor == Vendor::kNvml ? nvml
                 : vendor == Vendor::kHip  ? hip
                                           : acl;
  DlsymFn real_dlsym = RealDlsym();
  return handle && real_dlsym ? real_dlsym(handle, name) : nullptr;
}

}  // namespace interposer
}  // namespace vgpu
