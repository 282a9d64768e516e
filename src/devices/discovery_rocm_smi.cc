// Hygon DCU / AMD backend: ROCm SMI, loaded with dlopen (librocm_smi64.so.1;
// Hygon's DTK ships the same API).
//
// No AMD header is used. The declarations below follow rocm_smi.h:
// rsmi_status_t is an int-sized enum with RSMI_STATUS_SUCCESS = 0; device
// indexes are uint32_t.
//
// Contract: vendor_index is the ROCm SMI index (HIP_VISIBLE_DEVICES'
// numbering); device_number is the DRM render minor (/dev/dri/renderD<minor>,
// 128 and up); uuid is the unique id as "0x" + 16 hex digits.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "devices/discovery.h"
#include "devices/discovery_internal.h"

namespace vgpu {
namespace {

using discovery_internal::Bind;

// --- ROCm SMI API (rocm_smi.h) ---------------------------------------------
typedef int rsmi_status_t;
constexpr rsmi_status_t RSMI_STATUS_SUCCESS = 0;
constexpr rsmi_status_t RSMI_STATUS_NOT_SUPPORTED = 2;
constexpr int RSMI_MEM_TYPE_VRAM = 0;  // rsmi_memory_type_t

using InitFn = rsmi_status_t (*)(uint64_t init_flags);                      // rsmi_init
using ShutDownFn = rsmi_status_t (*)();                                     // rsmi_shut_down
using StatusStringFn = rsmi_status_t (*)(rsmi_status_t, const char**);      // rsmi_status_string
using NumDevicesFn = rsmi_status_t (*)(uint32_t* num_devices);              // rsmi_num_monitor_devices
using NameFn = rsmi_status_t (*)(uint32_t dv_ind, char* name, size_t len);  // rsmi_dev_name_get
using MemTotalFn = rsmi_status_t (*)(uint32_t, int mem_type, uint64_t*);    // rsmi_dev_memory_total_get
using PciIdFn = rsmi_status_t (*)(uint32_t, uint64_t* bdfid);               // rsmi_dev_pci_id_get
using RenderMinorFn = rsmi_status_t (*)(uint32_t, uint32_t* minor);         // rsmi_dev_drm_render_minor_get
using UniqueIdFn = rsmi_status_t (*)(uint32_t, uint64_t* id);               // rsmi_dev_unique_id_get
// -----------------------------------------------------------------------------

class RocmSmiBackend : public DiscoveryBackend {
 public:
  RocmSmiBackend(DiscoveryEnv& env, std::string library) : env_(env), library_(std::move(library)) {}

  std::string name() const override { return "rocm-smi"; }

  Result<std::vector<RawDevice>> Enumerate(std::string* note) override {
    auto lib = env_.OpenLibrary(library_);
    if (!lib.ok()) {
      if (note != nullptr) *note = discovery_internal::LibraryMissingNote(library_, "DCU/ROCm", lib.message());
      return std::vector<RawDevice>{};
    }
    const DynamicLibrary& l = **lib;
    InitFn init;
    ShutDownFn shut_down;
    NumDevicesFn num_devices;
    NameFn dev_name;
    MemTotalFn mem_total;
    PciIdFn pci_id;
    RenderMinorFn render_minor;
    UniqueIdFn unique_id;
    struct Need { const char* symbol; bool ok; } needs[] = {
        {"rsmi_init", Bind(l, "rsmi_init", &init)},
        {"rsmi_shut_down", Bind(l, "rsmi_shut_down", &shut_down)},
        {"rsmi_num_monitor_devices", Bind(l, "rsmi_num_monitor_devices", &num_devices)},
        {"rsmi_dev_name_get", Bind(l, "rsmi_dev_name_get", &dev_name)},
        {"rsmi_dev_memory_total_get", Bind(l, "rsmi_dev_memory_total_get", &mem_total)},
        {"rsmi_dev_pci_id_get", Bind(l, "rsmi_dev_pci_id_get", &pci_id)},
        {"rsmi_dev_drm_render_minor_get", Bind(l, "rsmi_dev_drm_render_minor_get", &render_minor)},
        {"rsmi_dev_unique_id_get", Bind(l, "rsmi_dev_unique_id_get", &unique_id)},
    };
    for (const Need& n : needs) {
      if (!n.ok) return Result<std::vector<RawDevice>>::Error(discovery_internal::MissingSymbolError(library_, n.symbol));
    }
    StatusStringFn status_string = nullptr;
    Bind(l, "rsmi_status_string", &status_string);  // optional: nicer messages
    auto Fail = [status_string](const std::string& call, rsmi_status_t rc) {
      std::string text = call + " failed: RSMI status " + std::to_string(rc);
      const char* s = nullptr;
      if (status_string != nullptr && status_string(rc, &s) == RSMI_STATUS_SUCCESS && s != nullptr) {
        text += std::string(" (") + s + ")";
      }
      return Result<std::vector<RawDevice>>::Error(text);
    };

    rsmi_status_t rc = init(0);
    if (rc != RSMI_STATUS_SUCCESS) return Fail("rsmi_init(0)", rc);
    struct Guard {
      ShutDownFn fn;
      ~Guard() { fn(); }
    } guard{shut_down};

    uint32_t count = 0;
    rc = num_devices(&count);
    if (rc != RSMI_STATUS_SUCCESS) return Fail("rsmi_num_monitor_devices()", rc);
    std::vector<RawDevice> out;
    for (uint32_t i = 0; i < count; ++i) {
      std::string at = "(" + std::to_string(i) + ")";
      RawDevice r;
      r.vendor_index = static_cast<int>(i);

      char buf[256] = {};
      rc = dev_name(i, buf, sizeof(buf));
      if (rc != RSMI_STATUS_SUCCESS) return Fail("rsmi_dev_name_get" + at, rc);
      buf[sizeof(buf) - 1] = '\0';
      r.name = buf;

      uint32_t minor = 0;
      rc = render_minor(i, &minor);
      if (rc != RSMI_STATUS_SUCCESS) return Fail("rsmi_dev_drm_render_minor_get" + at, rc);
      r.device_number = static_cast<int>(minor);

      // Optional facts: "not supported" leaves them unknown; other failures are errors.
      uint64_t total = 0;
      rc = mem_total(i, RSMI_MEM_TYPE_VRAM, &total);
      if (rc == RSMI_STATUS_SUCCESS) {
        r.memory_bytes = total;
      } else if (rc != RSMI_STATUS_NOT_SUPPORTED) {
        return Fail("rsmi_dev_memory_total_get" + at, rc);
      }

      uint64_t bdf = 0;
      rc = pci_id(i, &bdf);
      if (rc == RSMI_STATUS_SUCCESS) {
        // BDFID = domain << 32 | (partition << 28) | bus << 8 | device << 3 | function
        r.pci_bus_id = discovery_internal::FormatPciBusId(static_cast<uint32_t>(bdf >> 32),
                                                          static_cast<uint32_t>((bdf >> 8) & 0xff),
                                                          static_cast<uint32_t>((bdf >> 3) & 0x1f),
                                                          static_cast<uint32_t>(bdf & 0x7));
      } else if (rc != RSMI_STATUS_NOT_SUPPORTED) {
        return Fail("rsmi_dev_pci_id_get" + at, rc);
      }

      uint64_t id = 0;
      rc = unique_id(i, &id);
      if (rc == RSMI_STATUS_SUCCESS) {
        char hex[32];
        std::snprintf(hex, sizeof(hex), "0x%016" PRIx64, id);
        r.uuid = hex;
      } else if (rc != RSMI_STATUS_NOT_SUPPORTED) {
        return Fail("rsmi_dev_unique_id_get" + at, rc);
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

std::unique_ptr<DiscoveryBackend> MakeRocmSmiBackend(DiscoveryEnv& env, std::string library) {
  return std::unique_ptr<DiscoveryBackend>(new RocmSmiBackend(env, std::move(library)));
}

}  // namespace vgpu
