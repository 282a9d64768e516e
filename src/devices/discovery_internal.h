// Helpers shared by the discovery backends (discovery_*.cc). Not part of the
// interface of the devices library.
#ifndef VGPU_DEVICES_DISCOVERY_INTERNAL_H_
#define VGPU_DEVICES_DISCOVERY_INTERNAL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "devices/discovery.h"
#include "devices/vendor_library.h"

namespace vgpu {
namespace discovery_internal {

// "dddd:bb:dd.f" in lower case, the form Device::pci_bus_id uses.
std::string FormatPciBusId(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function);

// Parses "bb:dd.f" or "dddd...:bb:dd.f" (any case, any domain width) and
// returns it in FormatPciBusId's form, or "" when `text` is not a bus id.
std::string NormalizePciBusId(const std::string& text);

// The note a backend gives when its library cannot be opened, e.g.
// "libnvidia-ml.so.1 not found: no NVIDIA devices discovered (<dlerror>)".
std::string LibraryMissingNote(const std::string& library, const std::string& vendor,
                               const std::string& detail);

// How a backend lists the devices of its vendor library, once the library
// is open: binds what it calls (an error naming the first entry point it
// lacks) and lists the devices. MakeNvmlBackend and its siblings
// (discovery.cc) open the library and call these.
Result<std::vector<RawDevice>> ListNvmlDevices(VendorLibrary& library);
Result<std::vector<RawDevice>> ListDcmiDevices(VendorLibrary& library);
Result<std::vector<RawDevice>> ListRocmSmiDevices(VendorLibrary& library);

// Calls `fn` when it goes out of scope: a library's shutdown on every path
// out once its init succeeded.
template <typename Fn>
class AtScopeExit {
 public:
  explicit AtScopeExit(Fn fn) : fn_(fn) {}
  ~AtScopeExit() { fn_(); }
  AtScopeExit(const AtScopeExit&) = delete;
  AtScopeExit& operator=(const AtScopeExit&) = delete;

 private:
  Fn fn_;
};

// The devices of a library that numbers them 0 .. count-1 (NVML, ROCm SMI).
// `Api` is a struct of the library's entries, built from it (an error when
// a required one is missing), with:
//   Status Start() const;                 // the library's init
//   void Stop() const;                    // its shutdown, once started
//   Status Count(uint32_t* count) const;
//   Result<RawDevice> Describe(uint32_t index) const;
// The first error ends the list.
template <typename Api>
Result<std::vector<RawDevice>> ListNumberedDevices(VendorLibrary& library) {
  const Api api(library);
  Status status = library.CheckRequired();
  if (status.ok()) status = api.Start();
  if (!status.ok()) return status;
  AtScopeExit stop([&api] { api.Stop(); });
  uint32_t count = 0;
  status = api.Count(&count);
  if (!status.ok()) return status;
  std::vector<RawDevice> out;
  for (uint32_t i = 0; i < count; ++i) {
    Result<RawDevice> device = api.Describe(i);
    if (!device.ok()) return device.status();
    out.push_back(std::move(*device));
  }
  return out;
}

}  // namespace discovery_internal
}  // namespace vgpu

#endif  // VGPU_DEVICES_DISCOVERY_INTERNAL_H_
