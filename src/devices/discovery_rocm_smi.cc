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
#include "devices/vendor_library.h"

namespace vgpu {
namespace {

// --- ROCm SMI API (rocm_smi.h) ---------------------------------------------
typedef int rsmi_status_t;
constexpr rsmi_status_t RSMI_STATUS_SUCCESS = 0;
constexpr rsmi_status_t RSMI_STATUS_NOT_SUPPORTED = 2;
constexpr int RSMI_MEM_TYPE_VRAM = 0;  // rsmi_memory_type_t

struct RocmSmi {
  explicit RocmSmi(VendorLibrary& library) : lib(library) {}

  VendorLibrary& lib;  // what the entries are bound from; outlives this
  Entry<rsmi_status_t (*)(uint64_t init_flags)> init{lib, "rsmi_init"};
  Entry<rsmi_status_t (*)()> shut_down{lib, "rsmi_shut_down"};
  Entry<rsmi_status_t (*)(uint32_t* num_devices)> num_devices{lib, "rsmi_num_monitor_devices"};
  Entry<rsmi_status_t (*)(uint32_t dv_ind, char* name, size_t len)> dev_name{lib, "rsmi_dev_name_get"};
  Entry<rsmi_status_t (*)(uint32_t, int mem_type, uint64_t*)> mem_total{lib, "rsmi_dev_memory_total_get"};
  Entry<rsmi_status_t (*)(uint32_t, uint64_t* bdfid)> pci_id{lib, "rsmi_dev_pci_id_get"};
  Entry<rsmi_status_t (*)(uint32_t, uint32_t* minor)> render_minor{lib, "rsmi_dev_drm_render_minor_get"};
  Entry<rsmi_status_t (*)(uint32_t, uint64_t* id)> unique_id{lib, "rsmi_dev_unique_id_get"};
  Entry<rsmi_status_t (*)(rsmi_status_t, const char**)> status_string{lib, "rsmi_status_string", kOptional};

  // What ListNumberedDevices calls.
  Status Start() const { return Check(init(0), "rsmi_init(0)"); }
  void Stop() const { shut_down(); }
  Status Count(uint32_t* count) const { return Check(num_devices(count), "rsmi_num_monitor_devices()"); }
  Result<RawDevice> Describe(uint32_t index) const;

  // OK when `rc` is success, else the failure of `call`
  // ("... failed: RSMI status 6 (RSMI_STATUS_INTERNAL_EXCEPTION)"). With
  // `optional`, "not supported" is OK too: it leaves an optional fact unknown.
  Status Check(rsmi_status_t rc, const std::string& call, bool optional = false) const {
    if (rc == RSMI_STATUS_SUCCESS || (optional && rc == RSMI_STATUS_NOT_SUPPORTED)) return Status::Ok();
    const char* text = nullptr;
    if (status_string != nullptr && status_string(rc, &text) != RSMI_STATUS_SUCCESS) text = nullptr;
    return Status::Error(CallFailed(call, "RSMI status", rc, text));
  }
};
// -----------------------------------------------------------------------------

Result<RawDevice> RocmSmi::Describe(uint32_t index) const {
  const std::string at = "(" + std::to_string(index) + ")";
  RawDevice r;
  r.vendor_index = static_cast<int>(index);

  char buf[256] = {};
  if (Status s = Check(dev_name(index, buf, sizeof(buf)), "rsmi_dev_name_get" + at); !s.ok()) return s;
  buf[sizeof(buf) - 1] = '\0';
  r.name = buf;

  uint32_t minor = 0;
  if (Status s = Check(render_minor(index, &minor), "rsmi_dev_drm_render_minor_get" + at); !s.ok()) return s;
  r.device_number = static_cast<int>(minor);

  // Optional facts: "not supported" leaves them unknown.
  uint64_t total = 0;
  rsmi_status_t rc = mem_total(index, RSMI_MEM_TYPE_VRAM, &total);
  if (Status s = Check(rc, "rsmi_dev_memory_total_get" + at, true); !s.ok()) return s;
  if (rc == RSMI_STATUS_SUCCESS) r.memory_bytes = total;

  uint64_t bdf = 0;
  rc = pci_id(index, &bdf);
  if (Status s = Check(rc, "rsmi_dev_pci_id_get" + at, true); !s.ok()) return s;
  if (rc == RSMI_STATUS_SUCCESS) {
    // BDFID = domain << 32 | (partition << 28) | bus << 8 | device << 3 | function
    r.pci_bus_id = discovery_internal::FormatPciBusId(static_cast<uint32_t>(bdf >> 32),
                                                      static_cast<uint32_t>((bdf >> 8) & 0xff),
                                                      static_cast<uint32_t>((bdf >> 3) & 0x1f),
                                                      static_cast<uint32_t>(bdf & 0x7));
  }

  uint64_t id = 0;
  rc = unique_id(index, &id);
  if (Status s = Check(rc, "rsmi_dev_unique_id_get" + at, true); !s.ok()) return s;
  if (rc == RSMI_STATUS_SUCCESS) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), "0x%016" PRIx64, id);
    r.uuid = hex;
  }
  return r;
}

}  // namespace

Result<std::vector<RawDevice>> discovery_internal::ListRocmSmiDevices(VendorLibrary& library) {
  return ListNumberedDevices<RocmSmi>(library);
}

}  // namespace vgpu
