// A vendor's management library (NVML, DCMI, ROCm SMI) opened with dlopen,
// and the entry points a discovery backend or a slice driver takes from it.
// Nothing is linked against a vendor library: a node without one runs
// without that vendor's devices.
//
// Every user reports the same three failures the same way:
// - the library cannot be opened: Open's error, dlerror's text naming it;
// - it lacks an entry point every supported version has: the first one
//   Require() missed, in CheckRequired()'s error
//   ("libdcmi.so does not export dcmi_init: unsupported library version");
// - a call fails: CallFailed("nvmlInit_v2()", "NVML error", rc, text)
//   ("nvmlInit_v2() failed: NVML error 9 (Driver Not Loaded)").
#ifndef VGPU_DEVICES_VENDOR_LIBRARY_H_
#define VGPU_DEVICES_VENDOR_LIBRARY_H_

#include <memory>
#include <string>

#include "devices/discovery.h"
#include "util/status.h"

namespace vgpu {

class VendorLibrary {
 public:
  // Opens `soname` (or a path) through `env`, which tests point at stubs.
  static Result<VendorLibrary> Open(DiscoveryEnv& env, const std::string& soname);

  VendorLibrary(VendorLibrary&&) = default;
  VendorLibrary& operator=(VendorLibrary&&) = default;

  // The name it was opened by, for messages.
  const std::string& soname() const { return soname_; }

  // Binds `symbol` to *fn. When the library lacks it, *fn is null and the
  // symbol is remembered for CheckRequired() (the first one missed).
  template <typename Fn>
  void Require(const char* symbol, Fn* fn) {
    if (!Optional(symbol, fn) && missing_.empty()) missing_ = symbol;
  }

  // Binds `symbol` to *fn, or leaves *fn null: for entry points that some
  // versions lack and the caller can do without. True when bound.
  template <typename Fn>
  bool Optional(const char* symbol, Fn* fn) const {
    *fn = reinterpret_cast<Fn>(handle_->Symbol(symbol));
    return *fn != nullptr;
  }

  // OK when every Require()d symbol was bound; otherwise an error naming the
  // library and the first missing symbol.
  Status CheckRequired() const;

 private:
  VendorLibrary(std::unique_ptr<DynamicLibrary> handle, std::string soname)
      : handle_(std::move(handle)), soname_(std::move(soname)) {}

  std::unique_ptr<DynamicLibrary> handle_;  // never null; dlclose when destroyed
  std::string soname_;
  std::string missing_;
};

// Picks Entry's constructor for an entry point some versions lack.
struct OptionalEntry {};
constexpr OptionalEntry kOptional{};

// One entry point of a vendor library, bound when it is constructed: the
// function, or null when the library lacks it (a required one is then
// remembered for CheckRequired()). Called like the function itself, so an
// API is a struct of entries, each named once with its symbol:
//
//   struct Nvml {
//     explicit Nvml(VendorLibrary& library) : lib(library) {}
//     VendorLibrary& lib;
//     Entry<nvmlReturn_t (*)()> init{lib, "nvmlInit_v2"};
//     Entry<const char* (*)(nvmlReturn_t)> error_string{lib, "nvmlErrorString", kOptional};
//   };
template <typename Fn>
class Entry {
 public:
  Entry(VendorLibrary& library, const char* symbol) { library.Require(symbol, &fn_); }
  Entry(VendorLibrary& library, const char* symbol, OptionalEntry) { library.Optional(symbol, &fn_); }

  operator Fn() const { return fn_; }  // NOLINT: implicit by design, to call it and compare it with nullptr

 private:
  Fn fn_ = nullptr;
};

// "<call> failed: <api_error> <rc>", followed by " (<text>)" when the
// library explained the code (`text` not null and not empty). `api_error`
// says whose code it is: "NVML error", "DCMI error", "RSMI status".
std::string CallFailed(const std::string& call, const char* api_error, long long rc, const char* text = nullptr);

}  // namespace vgpu

#endif  // VGPU_DEVICES_VENDOR_LIBRARY_H_
