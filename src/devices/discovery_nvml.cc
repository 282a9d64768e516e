// NVIDIA backend: NVML, loaded with dlopen (libnvidia-ml.so.1).
//
// No NVIDIA header is used. The declarations below follow the NVML API
// reference (nvml.h): nvmlReturn_t is an int-sized enum with NVML_SUCCESS = 0;
// nvmlDevice_t is an opaque pointer; nvmlMemory_t (v1) and nvmlPciInfo_t (the
// layout nvmlDeviceGetPciInfo_v3 fills) are repeated field for field.
//
// Contract: vendor_index is the NVML index (CUDA's numbering when
// CUDA_DEVICE_ORDER=PCI_BUS_ID, which Slurm also assumes); device_number is
// the minor number (/dev/nvidia<minor>).
#include <algorithm>
#include <string>
#include <vector>

#include "devices/discovery.h"
#include "devices/discovery_internal.h"

namespace vgpu {
namespace {

using discovery_internal::Bind;

// --- NVML API (nvml.h) ------------------------------------------------------
typedef int nvmlReturn_t;  // enum nvmlReturn_enum
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
typedef struct nvmlDevice_st* nvmlDevice_t;

constexpr unsigned kNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

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

using InitFn = nvmlReturn_t (*)();                                          // nvmlInit_v2
using ShutdownFn = nvmlReturn_t (*)();                                      // nvmlShutdown
using ErrorStringFn = const char* (*)(nvmlReturn_t);                        // nvmlErrorString
using GetCountFn = nvmlReturn_t (*)(unsigned int*);                         // nvmlDeviceGetCount_v2
using GetHandleFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);          // ..GetHandleByIndex_v2
using GetStringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);    // ..GetName, ..GetUUID
using GetMemoryFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);          // ..GetMemoryInfo
using GetMinorFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);           // ..GetMinorNumber
using GetPciFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);            // ..GetPciInfo_v3
// -----------------------------------------------------------------------------

class NvmlBackend : public DiscoveryBackend {
 public:
  NvmlBackend(DiscoveryEnv& env, std::string library) : env_(env), library_(std::move(library)) {}

  std::string name() const override { return "nvml"; }

  Result<std::vector<RawDevice>> Enumerate(std::string* note) override {
    auto lib = env_.OpenLibrary(library_);
    if (!lib.ok()) {
      if (note != nullptr) *note = discovery_internal::LibraryMissingNote(library_, "NVIDIA", lib.message());
      return std::vector<RawDevice>{};
    }
    const DynamicLibrary& l = **lib;
    InitFn init;
    ShutdownFn shutdown;
    GetCountFn get_count;
    GetHandleFn get_handle;
    GetStringFn get_name, get_uuid;
    GetMemoryFn get_memory;
    GetMinorFn get_minor;
    GetPciFn get_pci;
    struct Need { const char* symbol; bool ok; } needs[] = {
        {"nvmlInit_v2", Bind(l, "nvmlInit_v2", &init)},
        {"nvmlShutdown", Bind(l, "nvmlShutdown", &shutdown)},
        {"nvmlDeviceGetCount_v2", Bind(l, "nvmlDeviceGetCount_v2", &get_count)},
        {"nvmlDeviceGetHandleByIndex_v2", Bind(l, "nvmlDeviceGetHandleByIndex_v2", &get_handle)},
        {"nvmlDeviceGetName", Bind(l, "nvmlDeviceGetName", &get_name)},
        {"nvmlDeviceGetUUID", Bind(l, "nvmlDeviceGetUUID", &get_uuid)},
        {"nvmlDeviceGetMemoryInfo", Bind(l, "nvmlDeviceGetMemoryInfo", &get_memory)},
        {"nvmlDeviceGetMinorNumber", Bind(l, "nvmlDeviceGetMinorNumber", &get_minor)},
        {"nvmlDeviceGetPciInfo_v3", Bind(l, "nvmlDeviceGetPciInfo_v3", &get_pci)},
    };
    for (const Need& n : needs) {
      if (!n.ok) return Result<std::vector<RawDevice>>::Error(discovery_internal::MissingSymbolError(library_, n.symbol));
    }
    ErrorStringFn error_string = nullptr;
    Bind(l, "nvmlErrorString", &error_string);  // optional: nicer messages
    auto Fail = [error_string](const std::string& call, nvmlReturn_t rc) {
      std::string text = call + " failed: NVML error " + std::to_string(rc);
      const char* s = error_string != nullptr ? error_string(rc) : nullptr;
      if (s != nullptr) text += std::string(" (") + s + ")";
      return Result<std::vector<RawDevice>>::Error(text);
    };

    nvmlReturn_t rc = init();
    if (rc != NVML_SUCCESS) return Fail("nvmlInit_v2()", rc);
    // Shut NVML down on every path out once it is up.
    struct Guard {
      ShutdownFn fn;
      ~Guard() { fn(); }
    } guard{shutdown};

    unsigned int count = 0;
    rc = get_count(&count);
    if (rc != NVML_SUCCESS) return Fail("nvmlDeviceGetCount_v2()", rc);
    std::vector<RawDevice> out;
    for (unsigned int i = 0; i < count; ++i) {
      std::string at = "(" + std::to_string(i) + ")";
      nvmlDevice_t dev = nullptr;
      rc = get_handle(i, &dev);
      if (rc != NVML_SUCCESS) return Fail("nvmlDeviceGetHandleByIndex_v2" + at, rc);
      RawDevice r;
      r.vendor_index = static_cast<int>(i);

      char buf[std::max(kNameBufferSize, kUuidBufferSize)] = {};
      rc = get_name(dev, buf, kNameBufferSize);
      if (rc != NVML_SUCCESS) return Fail("nvmlDeviceGetName" + at, rc);
      buf[sizeof(buf) - 1] = '\0';
      r.name = buf;

      unsigned int minor = 0;
      rc = get_minor(dev, &minor);
      if (rc != NVML_SUCCESS) return Fail("nvmlDeviceGetMinorNumber" + at, rc);
      r.device_number = static_cast<int>(minor);

      // Optional facts: "not supported" leaves them unknown; other failures are errors.
      std::fill(buf, buf + sizeof(buf), '\0');
      rc = get_uuid(dev, buf, kUuidBufferSize);
      if (rc == NVML_SUCCESS) {
        buf[sizeof(buf) - 1] = '\0';
        r.uuid = buf;
      } else if (rc != NVML_ERROR_NOT_SUPPORTED) {
        return Fail("nvmlDeviceGetUUID" + at, rc);
      }

      nvmlMemory_t mem = {};
      rc = get_memory(dev, &mem);
      if (rc == NVML_SUCCESS) {
        r.memory_bytes = mem.total;
      } else if (rc != NVML_ERROR_NOT_SUPPORTED) {
        return Fail("nvmlDeviceGetMemoryInfo" + at, rc);
      }

      nvmlPciInfo_t pci = {};
      rc = get_pci(dev, &pci);
      if (rc == NVML_SUCCESS) {
        pci.busId[sizeof(pci.busId) - 1] = '\0';
        // busId carries the function number, which the numeric fields lack.
        r.pci_bus_id = discovery_internal::NormalizePciBusId(pci.busId);
        if (r.pci_bus_id.empty()) {
          r.pci_bus_id = discovery_internal::FormatPciBusId(pci.domain, pci.bus, pci.device, 0);
        }
      } else if (rc != NVML_ERROR_NOT_SUPPORTED) {
        return Fail("nvmlDeviceGetPciInfo_v3" + at, rc);
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  DiscoveryEnv& env_;
  std::string library_;
};

}  // namespace

std::unique_ptr<DiscoveryBackend> MakeNvmlBackend(DiscoveryEnv& env, std::string library) {
  return std::unique_ptr<DiscoveryBackend>(new NvmlBackend(env, std::move(library)));
}

}  // namespace vgpu
