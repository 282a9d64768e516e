// Huawei Ascend vNPU slices through DCMI (libdcmi.so, loaded with dlopen).
//
// No Huawei header is used (see devices/dcmi_api.h): dcmi_create_vdev_res_stru
// and dcmi_create_vdev_out are repeated field for field from the DCMI API
// reference. A vdev_id or vfg_id of
// 0xFFFFFFFF in the request lets the driver choose.
#include <cstring>
#include <string>
#include <utility>

#include "devices/dcmi_api.h"
#include "jobs/hardware_slice.h"
#include "jobs/hardware_slice_internal.h"
#include "util/text.h"

namespace vgpu {
namespace {

using namespace dcmi_api;  // NOLINT: DCMI's own names, as its header spells them

// --- DCMI API (dcmi_interface_api.h) ---------------------------------------
constexpr unsigned int kAutoId = 0xFFFFFFFFu;
constexpr int kTemplateNameLen = 32;
constexpr int kVdevReserve = 32;            // DCMI_VDEV_FOR_RESERVE

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

struct Dcmi : DcmiNpus {
  using DcmiNpus::DcmiNpus;

  Entry<int (*)(int card_id, int device_id, dcmi_create_vdev_res_stru*, dcmi_create_vdev_out*)> create{
      lib, "dcmi_create_vdevice"};
  Entry<int (*)(int card_id, int device_id, unsigned int vdev_id)> destroy{lib, "dcmi_set_destroy_vdevice"};
};
// -----------------------------------------------------------------------------

class VnpuDriver : public slice_internal::VendorSliceDriver<Dcmi> {
 public:
  using VendorSliceDriver::VendorSliceDriver;

  Status Start() override;
  // One DCMI call makes the vNPU: there is no partial state to report.
  Result<HardwareSlice> Create(const std::string& parent, const SliceProfile& profile, std::optional<uint32_t> start,
                               const MadeSoFar& made_so_far) override;
  Status Destroy(const HardwareSlice& slice) override;
};

Status VnpuDriver::Start() {
  const int rc = api_.init();
  if (rc == 0) return Status::Ok();
  return Status::Error(lib_.soname() + ": " + DcmiNpus::Failed("dcmi_init", rc) +
                       "; check that the Ascend driver is loaded (npu-smi info) and that this runs as root");
}

// The physical id `text` names (decimal), or false.
bool ParsePhyId(const std::string& text, unsigned int* phy) {
  uint64_t v = 0;
  if (!ParseU64(text, UINT32_MAX, &v)) return false;
  *phy = static_cast<unsigned int>(v);
  return true;
}

Result<HardwareSlice> VnpuDriver::Create(const std::string& parent, const SliceProfile& profile,
                                         std::optional<uint32_t> /*start*/,
                                         const MadeSoFar& /*made_so_far*/) {
  using R = Result<HardwareSlice>;
  const std::string what = "vNPU " + profile.name + " on NPU " + parent + ": ";
  unsigned int phy = 0;
  if (!ParsePhyId(parent, &phy))
    return R::Error(what + "the NPU must be named by its physical id (N of /dev/davinciN)");
  if (profile.name.empty() || profile.name.size() >= static_cast<size_t>(kTemplateNameLen))
    return R::Error(what + "a vNPU template name has 1 to " + std::to_string(kTemplateNameLen - 1) +
                    " characters; fix the profile in chips.d (npu-smi info -t template-info lists the templates)");
  auto at = api_.Find(phy);
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
    std::string text = what + DcmiNpus::Failed("dcmi_create_vdevice", rc);
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
  auto at = api_.Find(phy);
  if (!at.ok()) return Status::Error(what + at.message());
  if (at->card < 0) return Status::Ok();  // the NPU is gone, and its vNPUs with it
  const int rc = api_.destroy(at->card, at->device, slice.instance);
  if (rc == 0 || rc == DCMI_ERR_CODE_DEVICE_NOT_EXIST) return Status::Ok();
  return Status::Error(what + DcmiNpus::Failed("dcmi_set_destroy_vdevice", rc) +
                       "; stop the processes using it, then npu-smi set -t destroy-vnpu -i " +
                       std::to_string(at->card) + " -c " + std::to_string(at->device) + " -v " +
                       std::to_string(slice.instance));
}

}  // namespace

Result<std::unique_ptr<SliceDriver>> OpenVnpuDriver(const std::string& library) {
  return slice_internal::OpenDriver<VnpuDriver>(
      library.empty() ? "libdcmi.so" : library,
      "vNPU slices need the Ascend driver's DCMI library (libdcmi.so, in /usr/local/dcmi) on this node");
}

}  // namespace vgpu
