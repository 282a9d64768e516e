// Huawei Ascend backend: DCMI, loaded with dlopen (libdcmi.so).
//
// No Huawei header is used. The declarations below follow the DCMI API
// reference (dcmi_interface_api.h): every call returns int, 0 on success and
// a negative DCMI error code otherwise; structures are repeated field for
// field.
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

#include "devices/discovery.h"
#include "devices/discovery_internal.h"

namespace vgpu {
namespace {

using discovery_internal::Bind;

// --- DCMI API (dcmi_interface_api.h) ---------------------------------------
constexpr int kMaxCards = 64;        // MAX_CARD_NUM
constexpr int kChipNameLen = 32;     // MAX_CHIP_NAME_LEN

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

using InitFn = int (*)();                                                   // dcmi_init
using CardListFn = int (*)(int* card_num, int* card_list, int list_len);    // dcmi_get_card_num_list
using DeviceNumFn = int (*)(int card_id, int* device_num);                  // dcmi_get_device_num_in_card
using LogicIdFn = int (*)(int* logic_id, int card_id, int device_id);       // dcmi_get_device_logic_id
using ChipInfoFn = int (*)(int, int, dcmi_chip_info*);                      // dcmi_get_device_chip_info
using HbmInfoFn = int (*)(int, int, dcmi_hbm_info*);                        // dcmi_get_device_hbm_info
using MemInfoFn = int (*)(int, int, dcmi_get_memory_info_stru*);            // dcmi_get_device_memory_info_v3
using PcieInfoFn = int (*)(int, int, dcmi_pcie_info_all*);                  // dcmi_get_device_pcie_info_v2
using PhyIdFn = int (*)(unsigned int logic_id, unsigned int* phy_id);       // dcmi_get_device_phyid_from_logicid
// -----------------------------------------------------------------------------

std::string CString(const unsigned char* chars, size_t size) {
  const char* p = reinterpret_cast<const char*>(chars);
  return std::string(p, std::find(p, p + size, '\0'));
}

Result<std::vector<RawDevice>> Fail(const std::string& call, int rc) {
  return Result<std::vector<RawDevice>>::Error(call + " failed: DCMI error " + std::to_string(rc));
}

class DcmiBackend : public DiscoveryBackend {
 public:
  DcmiBackend(DiscoveryEnv& env, std::string library) : env_(env), library_(std::move(library)) {}

  std::string name() const override { return "dcmi"; }

  Result<std::vector<RawDevice>> Enumerate(std::string* note) override {
    auto lib = env_.OpenLibrary(library_);
    if (!lib.ok()) {
      if (note != nullptr) *note = discovery_internal::LibraryMissingNote(library_, "Ascend", lib.message());
      return std::vector<RawDevice>{};
    }
    const DynamicLibrary& l = **lib;
    InitFn init;
    CardListFn card_list;
    DeviceNumFn device_num;
    LogicIdFn logic_id;
    ChipInfoFn chip_info;
    struct Need { const char* symbol; bool ok; } needs[] = {
        {"dcmi_init", Bind(l, "dcmi_init", &init)},
        {"dcmi_get_card_num_list", Bind(l, "dcmi_get_card_num_list", &card_list)},
        {"dcmi_get_device_num_in_card", Bind(l, "dcmi_get_device_num_in_card", &device_num)},
        {"dcmi_get_device_logic_id", Bind(l, "dcmi_get_device_logic_id", &logic_id)},
        {"dcmi_get_device_chip_info", Bind(l, "dcmi_get_device_chip_info", &chip_info)},
    };
    for (const Need& n : needs) {
      if (!n.ok) return Result<std::vector<RawDevice>>::Error(discovery_internal::MissingSymbolError(library_, n.symbol));
    }
    // Optional: absent in some driver versions.
    HbmInfoFn hbm_info;
    MemInfoFn mem_info;
    PcieInfoFn pcie_info;
    PhyIdFn phy_id;
    Bind(l, "dcmi_get_device_hbm_info", &hbm_info);
    Bind(l, "dcmi_get_device_memory_info_v3", &mem_info);
    Bind(l, "dcmi_get_device_pcie_info_v2", &pcie_info);
    Bind(l, "dcmi_get_device_phyid_from_logicid", &phy_id);

    int rc = init();
    if (rc != 0) return Fail("dcmi_init()", rc);
    int cards[kMaxCards] = {};
    int card_count = 0;
    rc = card_list(&card_count, cards, kMaxCards);
    if (rc != 0) return Fail("dcmi_get_card_num_list()", rc);
    card_count = std::min(std::max(card_count, 0), kMaxCards);

    std::vector<RawDevice> out;
    for (int c = 0; c < card_count; ++c) {
      int card = cards[c];
      int devices = 0;
      rc = device_num(card, &devices);
      if (rc != 0) return Fail("dcmi_get_device_num_in_card(card " + std::to_string(card) + ")", rc);
      for (int dev = 0; dev < devices; ++dev) {
        std::string at = "(card " + std::to_string(card) + ", device " + std::to_string(dev) + ")";
        RawDevice r;
        int logic = -1;
        rc = logic_id(&logic, card, dev);
        if (rc != 0) return Fail("dcmi_get_device_logic_id" + at, rc);
        r.vendor_index = logic;
        r.device_number = logic;
        if (phy_id != nullptr) {
          unsigned int phy = 0;
          rc = phy_id(static_cast<unsigned int>(logic), &phy);
          if (rc != 0) return Fail("dcmi_get_device_phyid_from_logicid" + at, rc);
          r.device_number = static_cast<int>(phy);
        }

        dcmi_chip_info chip = {};
        rc = chip_info(card, dev, &chip);
        if (rc != 0) return Fail("dcmi_get_device_chip_info" + at, rc);
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
          if (rc != 0) return Fail("dcmi_get_device_memory_info_v3" + at, rc);
          r.memory_bytes = mem.memory_size << 20;
        } else if (r.memory_bytes == 0 && hbm_info != nullptr && hbm_rc != 0) {
          return Fail("dcmi_get_device_hbm_info" + at, hbm_rc);
        }

        if (pcie_info != nullptr) {
          dcmi_pcie_info_all pci = {};
          rc = pcie_info(card, dev, &pci);
          if (rc != 0) return Fail("dcmi_get_device_pcie_info_v2" + at, rc);
          r.pci_bus_id = discovery_internal::FormatPciBusId(static_cast<uint32_t>(pci.domain), pci.bdf_busid,
                                                            pci.bdf_deviceid, pci.bdf_funcid);
        }
        out.push_back(std::move(r));
      }
    }
    std::sort(out.begin(), out.end(),
              [](const RawDevice& a, const RawDevice& b) { return a.vendor_index < b.vendor_index; });
    return out;
  }

 private:
  DiscoveryEnv& env_;
  std::string library_;
};

}  // namespace

std::unique_ptr<DiscoveryBackend> MakeDcmiBackend(DiscoveryEnv& env, std::string library) {
  return std::unique_ptr<DiscoveryBackend>(new DcmiBackend(env, std::move(library)));
}

}  // namespace vgpu
