// Helpers shared by the slice drivers (hardware_slice_mig.cc,
// hardware_slice_vnpu.cc). Not part of the public interface of libvgpucore.
#ifndef VGPU_JOBS_HARDWARE_SLICE_INTERNAL_H_
#define VGPU_JOBS_HARDWARE_SLICE_INTERNAL_H_

#include <cstddef>
#include <memory>
#include <string>

#include "devices/discovery.h"
#include "devices/discovery_internal.h"
#include "util/status.h"

namespace vgpu {
namespace slice_internal {

// Opens `library` with DiscoveryEnv::Default() (dlopen, dlclose when the
// handle is destroyed). The error names the library, dlerror's reason and
// `fix`, what the administrator should do.
inline Result<std::unique_ptr<DynamicLibrary>> OpenLibrary(const std::string& library, const std::string& fix) {
  auto lib = DiscoveryEnv::Default().OpenLibrary(library);
  if (!lib.ok()) {
    return Result<std::unique_ptr<DynamicLibrary>>::Error("cannot load " + library + " (" + lib.message() +
                                                          "); " + fix);
  }
  return lib;
}

// One symbol a driver binds (with discovery_internal::Bind), and whether the
// library exports it.
struct Need {
  const char* symbol;
  bool ok;
};

// OK when every symbol of `needs` is bound; else an error that names the
// library, the first missing symbol and `fix`.
template <size_t N>
Status CheckBound(const std::string& library, const Need (&needs)[N], const std::string& fix) {
  for (const Need& n : needs) {
    if (!n.ok) return Status::Error(discovery_internal::MissingSymbolError(library, n.symbol) + "; " + fix);
  }
  return Status::Ok();
}

}  // namespace slice_internal
}  // namespace vgpu

#endif  // VGPU_JOBS_HARDWARE_SLICE_INTERNAL_H_
