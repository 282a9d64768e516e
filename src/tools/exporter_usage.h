// vgpu-exporter's node side: what the jobs on this node use now, read from
// their run directories (the limits file vgpu-prolog wrote and the usage
// regions libvgpu.so keeps), without taking part in them.
#ifndef VGPU_TOOLS_EXPORTER_USAGE_H_
#define VGPU_TOOLS_EXPORTER_USAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "jobs/usage_region.h"

namespace vgpu::exporter {

// One device of one job on this node.
struct JobDeviceUsage {
  uint32_t job_id = 0;
  uint32_t device = 0;        // the job's device index (limits file order)
  int32_t node_device = -1;   // the device's index on the node, -1 when not recorded
  std::string user;           // the job directory's owner
  std::string vendor;         // nvidia, ascend, dcu
  uint32_t shares = 0, shares_per_device = 0;
  uint64_t memory_quota = 0;  // bytes the job may hold on it
  UsageRegion::Stats stats;
};

// Every job directory (job_<id>) under `run_dir` whose limits file reads:
// one entry per device with a usage region, by job id and device. A job
// whose files cannot be read (removed while read, corrupt) is left out
// and named in `problems`; a missing `run_dir` is one problem.
std::vector<JobDeviceUsage> ReadRunDirUsage(const std::string& run_dir, std::vector<std::string>* problems);

}  // namespace vgpu::exporter

#endif  // VGPU_TOOLS_EXPORTER_USAGE_H_
