// The environment a job, step, Prolog or Epilog gets for its vgpu shares on
// one node. Variables (lists are comma-separated, aligned by device):
//   VGPU_DEVICES            node-local device indices (gres.conf order)
//   VGPU_DEVICE_FILES       the devices' files
//   VGPU_SHARES             shares held on each device
//   VGPU_SHARE_OFFSETS      the lowest share held on each device, counted
//                           from the device's first (where a slice goes,
//                           slice_geometry.h)
//   VGPU_SHARES_ON_NODE     their sum
//   VGPU_SHARES_PER_DEVICE  S
//   VGPU_MEMORY_QUOTA       bytes of device memory allowed on each device
//                           (shares x device memory / S; 0 = unknown)
//   VGPU_TYPES, VGPU_MODELS, VGPU_UUIDS, VGPU_PCI_BUS_IDS (the last two
//                           only when some device's is known; "" items
//                           for the others)
//   and each vendor's visibility variable (CUDA_VISIBLE_DEVICES,
//   ASCEND_RT_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES) listing that vendor's
//   devices the way Slurm's gres/gpu does: the local index 0..k-1 when the
//   device cgroup hides the others (ConstrainDevices=yes), else the vendor's
//   own ordinal.
#ifndef VGPU_JOBS_JOB_ENV_H_
#define VGPU_JOBS_JOB_ENV_H_

#include <string>
#include <utility>
#include <vector>

#include "devices/device_table.h"

namespace vgpu {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

struct JobEnvOptions {
  bool local_index = true;  // ConstrainDevices=yes
};

// Variables to set for `shares` (from DeviceTable::Split). Empty shares give
// an empty list.
EnvVars BuildJobEnv(const DeviceTable& table, const std::vector<DeviceShare>& shares,
                    const JobEnvOptions& options);

// Variables to remove when a job or step holds no vgpu on this node, so that
// an inherited environment cannot claim shares it does not have. Vendor
// visibility variables are not listed: gres/gpu may own them.
std::vector<std::string> JobEnvVariablesToClear();

}  // namespace vgpu

#endif  // VGPU_JOBS_JOB_ENV_H_
