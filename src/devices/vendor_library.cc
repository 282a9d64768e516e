#include "devices/vendor_library.h"

#include <utility>

namespace vgpu {

Result<VendorLibrary> VendorLibrary::Open(DiscoveryEnv& env, const std::string& soname) {
  Result<std::unique_ptr<DynamicLibrary>> handle = env.OpenLibrary(soname);
  if (!handle.ok()) return handle.status();
  if (*handle == nullptr) return Result<VendorLibrary>::Error(soname + ": no library handle");
  return VendorLibrary(std::move(*handle), soname);
}

Status VendorLibrary::CheckRequired() const {
  if (missing_.empty()) return Status::Ok();
  return Status::Error(soname_ + " does not export " + missing_ + ": unsupported library version");
}

std::string CallFailed(const std::string& call, const char* api_error, long long rc, const char* text) {
  std::string out = call + " failed: " + api_error + " " + std::to_string(rc);
  if (text != nullptr && *text != '\0') out += std::string(" (") + text + ")";
  return out;
}

}  // namespace vgpu
