#include "devices/dcmi_api.h"

#include <algorithm>

namespace vgpu {
namespace dcmi_api {
namespace {

const char* ErrorText(int rc) {
  switch (rc) {
    case DCMI_ERR_CODE_INVALID_PARAMETER: return "invalid parameter";
    case DCMI_ERR_CODE_OPER_NOT_PERMITTED: return "operation not permitted";
    case DCMI_ERR_CODE_DEVICE_NOT_EXIST: return "device does not exist";
    case DCMI_ERR_CODE_RESOURCE_OCCUPIED: return "resource occupied";
    case DCMI_ERR_CODE_NOT_SUPPORT: return "not supported";
    default: return nullptr;
  }
}

}  // namespace

std::string DcmiNpus::Failed(const std::string& call, int rc) {
  return CallFailed(call, "DCMI error", rc, ErrorText(rc));
}

Status DcmiNpus::ForEach(const std::function<Status(const NpuAddress&)>& visit) const {
  return Walk([&visit](const NpuAddress& npu, bool*) { return visit(npu); });
}

Result<NpuAddress> DcmiNpus::Find(unsigned int physical_id) const {
  NpuAddress found;
  Status walked = Walk([&](const NpuAddress& npu, bool* stop) {
    if (static_cast<unsigned int>(npu.physical_id) == physical_id) {
      found = npu;
      *stop = true;
    }
    return Status::Ok();
  });
  if (!walked.ok()) return walked;
  return found;
}

Status DcmiNpus::Walk(const std::function<Status(const NpuAddress&, bool* stop)>& visit) const {
  int cards[kMaxCards] = {};
  int card_count = 0;
  int rc = card_list(&card_count, cards, kMaxCards);
  if (rc != 0) return Status::Error(Failed("dcmi_get_card_num_list()", rc));
  card_count = std::min(std::max(card_count, 0), kMaxCards);
  for (int c = 0; c < card_count; ++c) {
    const int card = cards[c];
    int devices = 0;
    rc = device_num(card, &devices);
    if (rc != 0) return Status::Error(Failed("dcmi_get_device_num_in_card(card " + std::to_string(card) + ")", rc));
    for (int dev = 0; dev < devices; ++dev) {
      const std::string at = "(card " + std::to_string(card) + ", device " + std::to_string(dev) + ")";
      NpuAddress npu;
      npu.card = card;
      npu.device = dev;
      rc = logic_id(&npu.logic_id, card, dev);
      if (rc != 0) return Status::Error(Failed("dcmi_get_device_logic_id" + at, rc));
      npu.physical_id = npu.logic_id;
      if (phy_id != nullptr) {
        unsigned int phy = 0;
        rc = phy_id(static_cast<unsigned int>(npu.logic_id), &phy);
        if (rc != 0) return Status::Error(Failed("dcmi_get_device_phyid_from_logicid" + at, rc));
        npu.physical_id = static_cast<int>(phy);
      }
      bool stop = false;
      Status visited = visit(npu, &stop);
      if (!visited.ok() || stop) return visited;
    }
  }
  return Status::Ok();
}

}  // namespace dcmi_api
}  // namespace vgpu
