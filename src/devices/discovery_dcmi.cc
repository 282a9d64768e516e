// Huawei Ascend backend: DCMI, loaded with dlopen (libdcmi.so).
//
// No Huawei header is used (see devices/dcmi_api.h); the structures below
// are repeated field for field from the DCMI API reference.
//
// Contract:
// - name: chip_type + chip_name of dcmi_get_device_chip_info, e.g.
//   "Ascend" + "910B3" = "Ascend910B3" (what the catalog's names list).
// - vendor_index: the logic id (the numbering ASCEND_RT_VISIBLE_DEVICES uses).
// - device_number: the physical id (/dev/davinci<phy id>), from
//   dcmi_get_device_phyid_from_logicid; the logic id when the library lacks it.
// - memory: HBM size (dcmi_get_device_hbm_info, 910 series); when that is not
//   available (310P has DDR), dcmi_get_device_memory_info_v3.
#include <algorithm>
#include <string>
#include <vector>

#include "devices/dcmi_api.h"
#include "devices/discovery.h"
#include "devices/discovery_internal.h"

namespace vgpu {
namespace {

using dcmi_api::DcmiNpus;
using dcmi_api::NpuAddress;

// --- DCMI API (dcmi_interface_api.h) ---------------------------------------
constexpr int kChipNameLen = 32;  // MAX_CHIP_NAME_LEN

struct dcmi_chip_info {
  unsigned char chip_type[kChipNameLen];
  unsigned char chip_name[kChipNameLen];
  unsigned char chip_ver[kChipNameLen];
  unsigned int aicore_cnt;
};

struct dcmi_hbm_info {
  unsigned long long memory_size;  // MB
  unsigned int freq;
  unsigned long long memory_usage;
  int temp;
  unsigned int bandwith_util_rate;
};

struct dcmi_get_memory_info_stru {
  unsigned long long memory_size;  // MB
  unsigned long long memory_available;
  unsigned int freq;
  unsigned long hugepagesize;
  unsigned long hugepages_total;
  unsigned long hugepages_free;
  unsigned int utiliza;
  unsigned char reserve[60];
};

struct dcmi_pcie_info_all {
  unsigned int venderid;
  unsigned int subvenderid;
  unsigned int deviceid;
  unsigned int subdeviceid;
  int domain;
  unsigned int bdf_busid;
  unsigned int bdf_deviceid;
  unsigned int bdf_funcid;
  unsigned char reserve[32];
};

struct DcmiDevices : DcmiNpus {
  using DcmiNpus::DcmiNpus;

  Entry<int (*)(int, int, dcmi_chip_info*)> chip_info{lib, "dcmi_get_device_chip_info"};
  // Absent in some driver versions.
  Entry<int (*)(int, int, dcmi_hbm_info*)> hbm_info{lib, "dcmi_get_device_hbm_info", kOptional};
  Entry<int (*)(int, int, dcmi_get_memory_info_stru*)> mem_info{lib, "dcmi_get_device_memory_info_v3", kOptional};
  Entry<int (*)(int, int, dcmi_pcie_info_all*)> pcie_info{lib, "dcmi_get_device_pcie_info_v2", kOptional};

  // What DCMI says of the NPU at `npu`.
  Result<RawDevice> Describe(const NpuAddress& npu) const;
};
// -----------------------------------------------------------------------------

std::string CString(const unsigned char* chars, size_t size) {
  const char* p = reinterpret_cast<const char*>(chars);
  return std::string(p, std::find(p, p + size, '\0'));
}

}  // namespace

Result<std::vector<RawDevice>> discovery_internal::ListDcmiDevices(VendorLibrary& library) {
  const DcmiDevices api(library);
  Status bound = library.CheckRequired();
  if (!bound.ok()) return bound;
  int rc = api.init();
  if (rc != 0) return Result<std::vector<RawDevice>>::Error(DcmiNpus::Failed("dcmi_init()", rc));
  std::vector<RawDevice> out;
  Status listed = api.ForEach([&](const NpuAddress& npu) {
    Result<RawDevice> r = api.Describe(npu);
    if (r.ok()) out.push_back(std::move(*r));
    return r.status();
  });
  if (!listed.ok()) return listed;
  // Logic ids are the runtime's numbering; DCMI lists by card.
  std::sort(out.begin(), out.end(),
            [](const RawDevice& a, const RawDevice& b) { return a.vendor_index < b.vendor_index; });
  return out;
}

Result<RawDevice> DcmiDevices::Describe(const NpuAddress& npu) const {
  using R = Result<RawDevice>;
  const int card = npu.card, dev = npu.device;
  const std::string at = "(card " + std::to_string(card) + ", device " + std::to_string(dev) + ")";
  RawDevice r;
  r.vendor_index = npu.logic_id;
  r.device_number = npu.physical_id;

  dcmi_chip_info chip = {};
  int rc = chip_info(card, dev, &chip);
  if (rc != 0) return R::Error(Failed("dcmi_get_device_chip_info" + at, rc));
  r.name = CString(chip.chip_type, sizeof(chip.chip_type)) + CString(chip.chip_name, sizeof(chip.chip_name));

  int hbm_rc = -1;
  if (hbm_info != nullptr) {
    dcmi_hbm_info hbm = {};
    hbm_rc = hbm_info(card, dev, &hbm);
    if (hbm_rc == 0) r.memory_bytes = hbm.memory_size << 20;
  }
  if (r.memory_bytes == 0 && mem_info != nullptr) {
    dcmi_get_memory_info_stru mem = {};
    rc = mem_info(card, dev, &mem);
    if (rc != 0) return R::Error(Failed("dcmi_get_device_memory_info_v3" + at, rc));
    r.memory_bytes = mem.memory_size << 20;
  } else if (r.memory_bytes == 0 && hbm_info != nullptr && hbm_rc != 0) {
    return R::Error(Failed("dcmi_get_device_hbm_info" + at, hbm_rc));
  }

  if (pcie_info != nullptr) {
    dcmi_pcie_info_all pci = {};
    rc = pcie_info(card, dev, &pci);
    if (rc != 0) return R::Error(Failed("dcmi_get_device_pcie_info_v2" + at, rc));
    r.pci_bus_id = discovery_internal::FormatPciBusId(static_cast<uint32_t>(pci.domain), pci.bdf_busid,
                                                      pci.bdf_deviceid, pci.bdf_funcid);
  }
  return r;
}

}  // namespace vgpu
