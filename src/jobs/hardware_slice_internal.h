// Helpers shared by the slice drivers (hardware_slice_mig.cc,
// hardware_slice_vnpu.cc). Not part of the interface of the jobs library.
#ifndef VGPU_JOBS_HARDWARE_SLICE_INTERNAL_H_
#define VGPU_JOBS_HARDWARE_SLICE_INTERNAL_H_

#include <memory>
#include <string>
#include <utility>

#include "devices/discovery.h"
#include "devices/vendor_library.h"
#include "jobs/hardware_slice.h"
#include "util/status.h"

namespace vgpu {
namespace slice_internal {

// A slice driver over one vendor library: owns the library and `Api`, the
// struct of the entries it calls, bound from that library.
template <typename Api>
class VendorSliceDriver : public SliceDriver {
 public:
  explicit VendorSliceDriver(VendorLibrary lib) : lib_(std::move(lib)), api_(lib_) {}
  VendorSliceDriver(const VendorSliceDriver&) = delete;
  VendorSliceDriver& operator=(const VendorSliceDriver&) = delete;

  const VendorLibrary& library() const { return lib_; }
  // Initialises the library once its entries are checked; an error says
  // what to check.
  virtual Status Start() = 0;

 protected:
  VendorLibrary lib_;  // declared first: closed last
  const Api api_;
};

// Opens `library` with DiscoveryEnv::Default() (dlopen; dlclose with the
// driver), makes a `Driver` (a VendorSliceDriver) of it and starts it. An
// error names the library, what is wrong
// (dlerror's reason, the first missing symbol, the failed init) and, for
// the first two, `fix`: what the administrator should do.
template <typename Driver>
Result<std::unique_ptr<SliceDriver>> OpenDriver(const std::string& library, const std::string& fix) {
  using R = Result<std::unique_ptr<SliceDriver>>;
  Result<VendorLibrary> lib = VendorLibrary::Open(DiscoveryEnv::Default(), library);
  if (!lib.ok()) return R::Error("cannot load " + library + " (" + lib.message() + "); " + fix);
  auto driver = std::make_unique<Driver>(std::move(*lib));
  Status bound = driver->library().CheckRequired();
  if (!bound.ok()) return R::Error(bound.message() + "; " + fix);
  Status started = driver->Start();
  if (!started.ok()) return started;
  return std::unique_ptr<SliceDriver>(std::move(driver));
}

}  // namespace slice_internal
}  // namespace vgpu

#endif  // VGPU_JOBS_HARDWARE_SLICE_INTERNAL_H_
