// Rewriting of a node's merged gres.conf records so that each share of a
// device is one GRES bit: every Name=vgpu File= record becomes one record
// per device with Count=S, Slurm's file-less remainder records are dropped,
// and records of other GRES pass through untouched and in order.
//
// Any inconsistency (unknown type, missing file, totals that disagree with
// slurm.conf, more than 1,024 bits) is reported as an error naming the
// gres.conf line and the fix, and the records concerned are left out. The
// node then reports fewer vgpu than slurm.conf says, so slurmctld drains it
// instead of scheduling shares onto a layout nobody intended. slurmd itself
// keeps running.
#ifndef VGPU_DEVICES_SHARE_LAYOUT_H_
#define VGPU_DEVICES_SHARE_LAYOUT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "devices/chip_catalog.h"
#include "devices/device.h"
#include "devices/device_table.h"
#include "devices/gres_conf_locator.h"
#include "devices/gres_record.h"

namespace vgpu {

// Slurm's limit on the bits of one File-based GRES per node (MAX_GRES_BITMAP).
constexpr uint32_t kMaxGresBitsPerNode = 1024;
constexpr const char kGresName[] = "vgpu";

struct ShareLayoutInput {
  std::string node_name;
  uint32_t shares_per_device = 100;
  const ChipCatalog* catalog = nullptr;        // required
  std::vector<Device> discovered;              // from DiscoverDevices()
  std::function<bool(const std::string&)> file_exists;  // required
  const GresConfLocator* locator = nullptr;    // optional, for line numbers
};

struct ShareLayout {
  std::vector<GresRecord> records;  // what Slurm should use, in order
  DeviceTable table;                // the vgpu devices in bit order
  std::vector<std::string> errors;  // each names the line and the fix
  std::vector<std::string> notes;   // facts worth an info line
};

ShareLayout BuildShareLayout(const std::vector<GresRecord>& merged, const ShareLayoutInput& in);

}  // namespace vgpu

#endif  // VGPU_DEVICES_SHARE_LAYOUT_H_
