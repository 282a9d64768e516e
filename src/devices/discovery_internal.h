// Helpers shared by the discovery backends (discovery_*.cc). Not part of the
// public interface of libvgpucore.
#ifndef VGPU_DEVICES_DISCOVERY_INTERNAL_H_
#define VGPU_DEVICES_DISCOVERY_INTERNAL_H_

#include <cstdint>
#include <string>

#include "devices/discovery.h"

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

// Looks up `symbol` in `lib` and stores it in `*fn`; returns false (and
// leaves *fn null) when the library does not export it.
template <typename Fn>
bool Bind(const DynamicLibrary& lib, const char* symbol, Fn* fn) {
  *fn = reinterpret_cast<Fn>(lib.Symbol(symbol));
  return *fn != nullptr;
}

// The error for a library that lacks a symbol every supported version has.
std::string MissingSymbolError(const std::string& library, const char* symbol);

}  // namespace discovery_internal
}  // namespace vgpu

#endif  // VGPU_DEVICES_DISCOVERY_INTERNAL_H_
