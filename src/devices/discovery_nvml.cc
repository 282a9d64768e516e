// NVIDIA backend: NVML, loaded with dlopen (libnvidia-ml.so.1).
//
// No NVIDIA header is used (see devices/nvml_api.h). nvmlMemory_t (v1) and
// nvmlPciInfo_t (the layout nvmlDeviceGetPciInfo_v3 fills) are repeated
// field for field from the NVML API reference.
//
// Contract: vendor_index is the NVML index (CUDA's numbering when
// CUDA_DEVICE_ORDER=PCI_BUS_ID, which Slurm also assumes); device_number is
// the minor number (/dev/nvidia<minor>).
#include <algorithm>
#include <string>
#include <vector>

#include "devices/discovery.h"
#include "devices/discovery_internal.h"
#include "devices/nvml_api.h"

namespace vgpu {
namespace {

using namespace nvml_api;  // NOLINT: NVML's own names, as nvml.h spells them

// --- NVML API (nvml.h) ------------------------------------------------------
struct nvmlMemory_t {  // nvmlMemory_st (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlPciInfo_t {  // nvmlPciInfo_st, as filled by nvmlDeviceGetPciInfo_v3
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};

struct NvmlDevices : NvmlSession {
  using NvmlSession::NvmlSession;

  Entry<nvmlReturn_t (*)(unsigned int*)> get_count{lib, "nvmlDeviceGetCount_v2"};
  Entry<nvmlReturn_t (*)(unsigned int, nvmlDevice_t*)> get_handle{lib, "nvmlDeviceGetHandleByIndex_v2"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int)> get_name{lib, "nvmlDeviceGetName"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int)> get_uuid{lib, "nvmlDeviceGetUUID"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*)> get_memory{lib, "nvmlDeviceGetMemoryInfo"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*)> get_minor{lib, "nvmlDeviceGetMinorNumber"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*)> get_pci{lib, "nvmlDeviceGetPciInfo_v3"};

  // What ListNumberedDevices calls: nvmlInit_v2, nvmlShutdown, the device
  // count and what NVML says of device `index`.
  Status Start() const { return Check(init(), "nvmlInit_v2()"); }
  void Stop() const { shutdown(); }
  Status Count(uint32_t* count) const { return Check(get_count(count), "nvmlDeviceGetCount_v2()"); }
  Result<RawDevice> Describe(uint32_t index) const;

  // OK when `rc` is success, else the failure of `call`. With `optional`,
  // "not supported" is OK too: it leaves an optional fact unknown.
  Status Check(nvmlReturn_t rc, const std::string& call, bool optional = false) const {
    if (rc == NVML_SUCCESS || (optional && rc == NVML_ERROR_NOT_SUPPORTED)) return Status::Ok();
    return Status::Error(Failed(call, rc));
  }
};
// -----------------------------------------------------------------------------

Result<RawDevice> NvmlDevices::Describe(uint32_t index) const {
  const std::string at = "(" + std::to_string(index) + ")";
  nvmlDevice_t dev = nullptr;
  if (Status s = Check(get_handle(index, &dev), "nvmlDeviceGetHandleByIndex_v2" + at); !s.ok()) return s;
  RawDevice r;
  r.vendor_index = static_cast<int>(index);

  char buf[std::max(kNameBufferSize, kUuidBufferSize)] = {};
  if (Status s = Check(get_name(dev, buf, kNameBufferSize), "nvmlDeviceGetName" + at); !s.ok()) return s;
  buf[sizeof(buf) - 1] = '\0';
  r.name = buf;

  unsigned int minor = 0;
  if (Status s = Check(get_minor(dev, &minor), "nvmlDeviceGetMinorNumber" + at); !s.ok()) return s;
  r.device_number = static_cast<int>(minor);

  // Optional facts: "not supported" leaves them unknown.
  std::fill(buf, buf + sizeof(buf), '\0');
  nvmlReturn_t rc = get_uuid(dev, buf, kUuidBufferSize);
  if (Status s = Check(rc, "nvmlDeviceGetUUID" + at, true); !s.ok()) return s;
  buf[sizeof(buf) - 1] = '\0';
  if (rc == NVML_SUCCESS) r.uuid = buf;

  nvmlMemory_t mem = {};
  rc = get_memory(dev, &mem);
  if (Status s = Check(rc, "nvmlDeviceGetMemoryInfo" + at, true); !s.ok()) return s;
  if (rc == NVML_SUCCESS) r.memory_bytes = mem.total;

  nvmlPciInfo_t pci = {};
  rc = get_pci(dev, &pci);
  if (Status s = Check(rc, "nvmlDeviceGetPciInfo_v3" + at, true); !s.ok()) return s;
  if (rc == NVML_SUCCESS) {
    pci.busId[sizeof(pci.busId) - 1] = '\0';
    // busId carries the function number, which the numeric fields lack.
    r.pci_bus_id = discovery_internal::NormalizePciBusId(pci.busId);
    if (r.pci_bus_id.empty()) r.pci_bus_id = discovery_internal::FormatPciBusId(pci.domain, pci.bus, pci.device, 0);
  }
  return r;
}

}  // namespace

Result<std::vector<RawDevice>> discovery_internal::ListNvmlDevices(VendorLibrary& library) {
  return ListNumberedDevices<NvmlDevices>(library);
}

}  // namespace vgpu
