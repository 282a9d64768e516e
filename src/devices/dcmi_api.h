// What the DCMI users (the Ascend discovery backend, the vNPU slice driver in
// src/jobs) share of Huawei's DCMI (libdcmi.so): its error codes and how
// NPUs are found and numbered.
//
// No Huawei header is used. The declarations follow the DCMI API reference
// (dcmi_interface_api.h): every call returns int, 0 on success and a
// negative DCMI error code otherwise. Each user declares the rest of what it
// calls next to its code.
#ifndef VGPU_DEVICES_DCMI_API_H_
#define VGPU_DEVICES_DCMI_API_H_

#include <functional>
#include <string>

#include "devices/vendor_library.h"
#include "util/status.h"

namespace vgpu {
namespace dcmi_api {

constexpr int kMaxCards = 64;  // MAX_CARD_NUM
constexpr int DCMI_ERR_CODE_INVALID_PARAMETER = -8001;
constexpr int DCMI_ERR_CODE_OPER_NOT_PERMITTED = -8002;
constexpr int DCMI_ERR_CODE_DEVICE_NOT_EXIST = -8008;
constexpr int DCMI_ERR_CODE_RESOURCE_OCCUPIED = -8020;
constexpr int DCMI_ERR_CODE_NOT_SUPPORT = -8255;

// Where an NPU is: DCMI addresses it by (card, device); the runtime
// (ASCEND_RT_VISIBLE_DEVICES) by its logic id; /dev/davinci<N> by its
// physical id.
struct NpuAddress {
  int card = -1;
  int device = -1;
  int logic_id = -1;
  int physical_id = -1;  // the logic id when the library cannot map it
};

// The entry points that find NPUs, and the text of an error code. The DCMI
// users derive from it and add the entries they call.
struct DcmiNpus {
  explicit DcmiNpus(VendorLibrary& library) : lib(library) {}

  VendorLibrary& lib;  // what the entries are bound from; outlives this
  Entry<int (*)()> init{lib, "dcmi_init"};
  Entry<int (*)(int* card_num, int* card_list, int list_len)> card_list{lib, "dcmi_get_card_num_list"};
  Entry<int (*)(int card_id, int* device_num)> device_num{lib, "dcmi_get_device_num_in_card"};
  Entry<int (*)(int* logic_id, int card_id, int device_id)> logic_id{lib, "dcmi_get_device_logic_id"};
  // Absent in some driver versions: the logic id stands in for the physical id.
  Entry<int (*)(unsigned int logic_id, unsigned int* phy_id)> phy_id{lib, "dcmi_get_device_phyid_from_logicid",
                                                                      kOptional};

  // "<call> failed: DCMI error -8020 (resource occupied)"; the text only for
  // the codes whose meaning is documented.
  static std::string Failed(const std::string& call, int rc);

  // Calls `visit` for every NPU, card by card in the order DCMI lists them;
  // stops at the first error, of a DCMI call or of `visit`.
  Status ForEach(const std::function<Status(const NpuAddress&)>& visit) const;

  // The NPU whose physical id is `physical_id` (card -1 when none is), found
  // the way ForEach numbers NPUs; the walk stops there.
  Result<NpuAddress> Find(unsigned int physical_id) const;

 private:
  // ForEach's walk; `visit` sets *stop to end it early.
  Status Walk(const std::function<Status(const NpuAddress&, bool* stop)>& visit) const;
};

}  // namespace dcmi_api
}  // namespace vgpu

#endif  // VGPU_DEVICES_DCMI_API_H_
