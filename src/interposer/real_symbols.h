// The real entry points behind the hooks: glibc's dlsym, and each vendor
// library's own functions, looked up in that library's handle (never in
// the global scope, where the hooks themselves would be found).
#ifndef VGPU_INTERPOSER_REAL_SYMBOLS_H_
#define VGPU_INTERPOSER_REAL_SYMBOLS_H_

namespace vgpu {
namespace interposer {

enum class Vendor { kCuda, kNvml, kHip, kAcl };

using DlsymFn = void* (*)(void*, const char*);
using DlvsymFn = void* (*)(void*, const char*, const char*);

// glibc's dlsym and dlvsym (this library exports its own of both).
DlsymFn RealDlsym();
DlvsymFn RealDlvsym();
// A symbol libc.so.6 defines, found in its own symbol table; null if none.
void* LibcSymbol(const char* name);

// `name` in the vendor's library (libcuda.so.1, libnvidia-ml.so.1,
// libamdhip64.so, libascendcl.so), or
// null if the library is not loaded in this process and cannot be, or has
// no such symbol.
void* RealSymbol(Vendor vendor, const char* name);

// RealSymbol as a function of type F.
template <typename F>
F RealAs(Vendor vendor, const char* name) {
  return reinterpret_cast<F>(RealSymbol(vendor, name));
}

}  // namespace interposer
}  // namespace vgpu

// Declares `real` as the vendor's `name`, of the type of our hook `name`,
// looked up once.
#define VGPU_REAL(vendor, name) \
  static const auto real = ::vgpu::interposer::RealAs<decltype(&name)>(vendor, #name)

#endif  // VGPU_INTERPOSER_REAL_SYMBOLS_H_
