// The node's vgpu device table: which GRES bits belong to which device.
// Built by slurmd from gres.conf (ShareLayout), shipped to slurmstepd as
// text, and used to turn a job's share bits into devices and share counts.
#ifndef VGPU_DEVICES_DEVICE_TABLE_H_
#define VGPU_DEVICES_DEVICE_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "devices/device.h"
#include "util/status.h"

namespace vgpu {

// One device in the node's bit layout: bits [first_bit, first_bit + shares).
struct ShareDevice {
  uint32_t first_bit = 0;
  uint32_t shares = 0;
  Device device;  // device.files[0] is the file gres.conf names
};

// How many of one device's shares a job holds.
struct DeviceShare {
  size_t device = 0;  // index into DeviceTable::devices()
  uint32_t shares = 0;
  uint32_t first_share = 0;  // the lowest share held, counted from the device's first bit
};

class DeviceTable {
 public:
  DeviceTable() = default;
  DeviceTable(std::vector<ShareDevice> devices, uint32_t shares_per_device);

  const std::vector<ShareDevice>& devices() const { return devices_; }
  uint32_t shares_per_device() const { return shares_per_device_; }
  uint32_t total_bits() const;
  bool empty() const { return devices_.empty(); }

  // Index of the device holding `bit`, or -1.
  int DeviceOfBit(uint32_t bit) const;

  // Groups set bits by device, in device order. Bits that fall on no device
  // are counted in *stray (a layout/bitmap disagreement the caller logs).
  std::vector<DeviceShare> Split(const std::vector<uint32_t>& bits, size_t* stray) const;

  // Text form for the slurmd -> slurmstepd hand-over (JSON).
  std::string Serialize() const;
  static Result<DeviceTable> Parse(const std::string& text);

 private:
  std::vector<ShareDevice> devices_;  // ordered by first_bit, contiguous
  uint32_t shares_per_device_ = 0;
};

}  // namespace vgpu

#endif  // VGPU_DEVICES_DEVICE_TABLE_H_
