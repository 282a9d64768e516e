// What the NVML users (the NVIDIA discovery backend, the MIG slice driver in
// src/jobs) share of NVML (libnvidia-ml.so.1): its basic types and the
// entry points of a session.
//
// No NVIDIA header is used. The declarations follow the NVML API reference
// (nvml.h): nvmlReturn_t is an int-sized enum with NVML_SUCCESS = 0;
// nvmlDevice_t is an opaque pointer. Each user declares the rest of what it
// calls next to its code.
#ifndef VGPU_DEVICES_NVML_API_H_
#define VGPU_DEVICES_NVML_API_H_

#include <string>

#include "devices/vendor_library.h"

namespace vgpu {
namespace nvml_api {

typedef int nvmlReturn_t;  // enum nvmlReturn_enum
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
constexpr nvmlReturn_t NVML_ERROR_IN_USE = 19;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_RESOURCES = 23;
typedef struct nvmlDevice_st* nvmlDevice_t;

constexpr unsigned kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

// An NVML session: init and shut down, and the text of a return code. The
// NVML users derive from it and add the entries they call.
struct NvmlSession {
  explicit NvmlSession(VendorLibrary& library) : lib(library) {}

  VendorLibrary& lib;  // what the entries are bound from; outlives this
  Entry<nvmlReturn_t (*)()> init{lib, "nvmlInit_v2"};
  Entry<nvmlReturn_t (*)()> shutdown{lib, "nvmlShutdown"};
  Entry<const char* (*)(nvmlReturn_t)> error_string{lib, "nvmlErrorString", kOptional};  // nicer messages

  // "<call> failed: NVML error 23 (Insufficient Resources)".
  std::string Failed(const std::string& call, nvmlReturn_t rc) const {
    return CallFailed(call, "NVML error", rc, error_string != nullptr ? error_string(rc) : nullptr);
  }
};

}  // namespace nvml_api
}  // namespace vgpu

#endif  // VGPU_DEVICES_NVML_API_H_
