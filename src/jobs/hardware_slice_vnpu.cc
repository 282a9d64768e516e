// Huawei Ascend vNPU slices through DCMI (libdcmi.so, loaded with dlopen).
//
// No Huawei header is used. The declarations below follow the DCMI API
// reference (dcmi_interface_api.h): every call returns int, 0 on success and
// a negative DCMI error code otherwise; dcmi_create_vdev_res_stru and
// dcmi_create_vdev_out are repeated field for field. A vdev_id or vfg_id of
// 0xFFFFFFFF in the request lets the driver choose.
#include <cstring>
#include <string>
#include <utility>

#include "jobs/hardware_slice.h"
#include "jobs/hardware_slice_internal.h"
#include "util/text.h"

namespace vgpu {
namespace {

using discovery_internal::Bind;
using slice_internal::Need;

// --- DCMI API (dcmi_interface_api.h) ---------------------------------------
constexpr int kMaxCards = 64;               // MAX_CARD_NUM
constexpr unsigned int kAutoId = 0xFFFFFFFFu;
constexpr int kTemplateNameLen = 32;
constexpr int kVdevReserve = 32;            // DCMI_VDEV_FOR_RESERVE
constexpr int DCMI_ERR_CODE_INVALID_PARAMETER = -8001;
constexpr int DCMI_ERR_CODE_OPER_NOT_PERMITTED = -8002;
constexpr int DCMI_ERR_CODE_DEVICE_NOT_EXIST = -8008;
constexpr int DCMI_ERR_CODE_RESOURCE_OCCUPIED = -8020;
constexpr int DCMI_ERR_CODE_NOT_SUPPORT = -8255;

struct dcmi_create_vdev_res_stru {
  unsigned int vdev_id;
  unsigned int vfg_id;
  char template_name[kTemplateNameLen];
  unsigned char reserved[64];
};

struct dcmi_create_vdev_out {
  unsigned int vdev_id;
  unsigned int pcie_bus;
  unsigned int pcie_device;
  unsigned int pcie_func;
  unsigned int vfg_id;
  unsigned char reserved[kVdevReserve];
};

struct Dcmi {
  int (*init)();                                                        // dcmi_init
  int (*card_list)(int* card_num, int* card_list, int list_len);        // dcmi_get_card_num_list
  int (*device_num)(int card_id, int* device_num);                      // dcmi_get_device_num_in_card
  int (*logic_id)(int* logic_id, int card_id, int device_id);           // dcmi_get_device_logic_id
  int (*phy_id)(unsigned int logic_id, unsigned int* phy_id) = nullptr;  // ..phyid_from_logicid (optional)
  int (*create)(int card_id, int device_id, dcmi_create_vdev_res_stru*, dcmi_create_vdev_out*);  // dcmi_create_vdevice
  int (*destroy)(int card_id, int device_id, unsigned int vdev_id);     // dcmi_set_destroy_vdevice
};
// -----------------------------------------------------------------------------

// "DCMI error -8020 (resource occupied)".
std::string DcmiError(int rc) {
  std::string text = "DCMI error " + std::to_string(rc);
  switch (rc) {
    case DCMI_ERR_CODE_INVALID_PARAMETER: return text + " (invalid parameter)";
    case DCMI_ERR_CODE_OPER_NOT_PERMITTED: return text + " (operation not permitted)";
    case DCMI_ERR_CODE_DEVICE_NOT_EXIST: return text + " (device does not exist)";
    case DCMI_ERR_CODE_RESOURCE_OCCUPIED: return text + " (resource occupied)";
    case DCMI_ERR_CODE_NOT_SUPPORT: return text + " (not supported)";
    default: return text;
  }
}

// Where an NPU is in DCMI's numbering.
struct CardDevice {
  int card = -1;
  int device = -1;
};

class VnpuDriver : public SliceDriver {
 public:
  VnpuDriver(std::unique_ptr<DynamicLibrary> lib, const Dcmi& api) : lib_(std::move(lib)), api_(api) {}
  VnpuDriver(const VnpuDriver&) = delete;
  VnpuDriver& operator=(const VnpuDriver&) = delete;

  Result<HardwareSlice> Create(const std::string& parent, const SliceProfile& profile) override;
  Status Destroy(const HardwareSlice& slice) override;

 private:
  // The (card, device) of physical id `phy`, found as discovery_dcmi.cc
  // numbers NPUs (physical id from the logic id; the logic id itself when
  // the library cannot map it). A value with card -1 when no NPU has it.
  Result<CardDevice> Locate(unsigned int phy) const;

  std::unique_ptr<DynamicLibrary> lib_;
  Dcmi api_;
};

Result<CardDevice> VnpuDriver::Locate(unsigned int phy) const {
  using R = Result<CardDevice>;
  int cards[kMaxCards] = {};
  int card_count = 0;
  int rc = api_.card_list(&card_count, cards, kMaxCards);
  if (rc != 0) return R::Error("dcmi_get_card_num_list failed: " + DcmiError(rc));
  for (int c = 0; c < card_count && c < kMaxCards; ++c) {
    int devices = 0;
    rc = api_.device_num(cards[c], &devices);
    if (rc != 0)
      return R::Error("dcmi_get_device_num_in_card(card " + std::to_string(cards[c]) + ") failed: " + DcmiError(rc));
    for (int d = 0; d < devices; ++d) {
      const std::string at = "(card " + std::to_string(cards[c]) + ", device " + std::to_string(d) + ")";
      int logic = -1;
      rc = api_.logic_id(&logic, cards[c], d);
      if (rc != 0) return R::Error("dcmi_get_device_logic_id" + at + " failed: " + DcmiError(rc));
      unsigned int id = static_cast<unsigned int>(logic);
      if (api_.phy_id != nullptr) {
        rc = api_.phy_id(static_cast<unsigned int>(logic), &id);
        if (rc != 0) return R::Error("dcmi_get_device_phyid_from_logicid" + at + " failed: " + DcmiError(rc));
      }
      if (id == phy) return CardDevice{cards[c], d};
    }
  }
  return CardDevice{};
}

// The physical id `text` names (decimal), or false.
bool ParsePhyId(const std::string& text, unsigned int* phy) {
  uint64_t v = 0;
  if (!ParseU64(text, UINT32_MAX, &v)) return false;
  *phy = static_cast<unsigned int>(v);
  return true;
}

Result<HardwareSlice> VnpuDriver::Create(const std::string& parent, const SliceProfile& profile) {
  using R = Result<HardwareSlice>;
  const std::string what = "vNPU " + profile.name + " on NPU " + parent + ": ";
  unsigned int phy = 0;
  if (!ParsePhyId(parent, &phy))
    return R::Error(what + "the NPU must be named by its physical id (N of /dev/davinciN)");
  if (profile.name.empty() || profile.name.size() >= static_cast<size_t>(kTemplateNameLen))
    return R::Error(what + "a vNPU template name has 1 to " + std::to_string(kTemplateNameLen - 1) +
                    " characters; fix the profile in chips.d (npu-smi info -t template-info lists the templates)");
  auto at = Locate(phy);
  if (!at.ok()) return R::Error(what + at.message());
  if (at->card < 0) return R::Error(what + "no NPU with this physical id on this node (npu-smi info lists them)");
  const std::string npu = "-i " + std::to_string(at->card) + " -c " + std::to_string(at->device);

  dcmi_create_vdev_res_stru request = {};
  request.vdev_id = kAutoId;
  request.vfg_id = kAutoId;
  std::memcpy(request.template_name, profile.name.data(), profile.name.size());
  dcmi_create_vdev_out out = {};
  const int rc = api_.create(at->card, at->device, &request, &out);
  if (rc != 0) {
    std::string text = what + "dcmi_create_vdevice failed: " + DcmiError(rc);
    switch (rc) {
      case DCMI_ERR_CODE_RESOURCE_OCCUPIED:
        return R::Error(text + ": the NPU's free AI cores do not fit this template; npu-smi info -t info-vnpu " + npu +
                        " lists the vNPUs in place (remove leftovers with npu-smi set -t destroy-vnpu)");
      case DCMI_ERR_CODE_INVALID_PARAMETER:
        return R::Error(text + ": the NPU may not know this template; npu-smi info -t template-info " + npu +
                        " lists its templates, make the chips.d profile match");
      case DCMI_ERR_CODE_OPER_NOT_PERMITTED:
        return R::Error(text + ": vNPUs are created by root on the host (or a privileged container on 910B)");
      case DCMI_ERR_CODE_NOT_SUPPORT:
        return R::Error(text + ": this NPU or driver has no vNPU support; check npu-smi info -t vnpu-mode");
      default:
        return R::Error(text);
    }
  }
  HardwareSlice s;
  s.vendor = "ascend";
  s.parent = parent;
  s.profile = profile.name;
  s.device = std::to_string(out.vdev_id);
  s.instance = out.vdev_id;
  return s;
}

Status VnpuDriver::Destroy(const HardwareSlice& slice) {
  if (slice.vendor != "ascend") return Status::Error("the vNPU driver cannot destroy a \"" + slice.vendor + "\" slice");
  const std::string what = "destroying vNPU " + std::to_string(slice.instance) + " (" + slice.profile + ") on NPU " +
                           slice.parent + ": ";
  unsigned int phy = 0;
  if (!ParsePhyId(slice.parent, &phy)) return Status::Error(what + "the parent is not a physical NPU id");
  auto at = Locate(phy);
  if (!at.ok()) return Status::Error(what + at.message());
  if (at->card < 0) return Status::Ok();  // the NPU is gone, and its vNPUs with it
  const int rc = api_.destroy(at->card, at->device, slice.instance);
  if (rc == 0 || rc == DCMI_ERR_CODE_DEVICE_NOT_EXIST) return Status::Ok();
  return Status::Error(what + "dcmi_set_destroy_vdevice failed: " + DcmiError(rc) +
                       "; stop the processes using it, then npu-smi set -t destroy-vnpu -i " +
                       std::to_string(at->card) + " -c " + std::to_string(at->device) + " -v " +
                       std::to_string(slice.instance));
}

}  // namespace

Result<std::unique_ptr<SliceDriver>> OpenVnpuDriver(const std::string& library) {
  using R = Result<std::unique_ptr<SliceDriver>>;
  const std::string name = library.empty() ? "libdcmi.so" : library;
  const std::string fix =
      "vNPU slices need the Ascend driver's DCMI library (libdcmi.so, in /usr/local/dcmi) on this node";
  auto lib = slice_internal::OpenLibrary(name, fix);
  if (!lib.ok()) return lib.status();
  const DynamicLibrary& l = **lib;
  Dcmi api;
  const Need needs[] = {
      {"dcmi_init", Bind(l, "dcmi_init", &api.init)},
      {"dcmi_get_card_num_list", Bind(l, "dcmi_get_card_num_list", &api.card_list)},
      {"dcmi_get_device_num_in_card", Bind(l, "dcmi_get_device_num_in_card", &api.device_num)},
      {"dcmi_get_device_logic_id", Bind(l, "dcmi_get_device_logic_id", &api.logic_id)},
      {"dcmi_create_vdevice", Bind(l, "dcmi_create_vdevice", &api.create)},
      {"dcmi_set_destroy_vdevice", Bind(l, "dcmi_set_destroy_vdevice", &api.destroy)},
  };
  Status bound = slice_internal::CheckBound(name, needs, fix);
  if (!bound.ok()) return bound;
  Bind(l, "dcmi_get_device_phyid_from_logicid", &api.phy_id);
  const int rc = api.init();
  if (rc != 0)
    return R::Error(name + ": dcmi_init failed: " + DcmiError(rc) +
                    "; check that the Ascend driver is loaded (npu-smi info) and that this runs as root");
  return std::unique_ptr<SliceDriver>(new VnpuDriver(std::move(*lib), api));
}

}  // namespace vgpu
