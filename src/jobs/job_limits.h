// The per-job limits file: what each process of a vgpu job may use of each
// of its devices. Written by root (vgpu-prolog) into the job's run
// directory, which the job's user cannot write; read by libvgpu.so, which
// trusts nothing else (environment variables never raise a limit).
//
// Text, one record per line, '#' comments:
//
//   vgpu-limits 1
//   job 1234
//   device 0 uuid=GPU-8f2c... vendor=nvidia memory=8589934592 shares=10 of=100
//
// `device N`: the job's N-th device (VGPU_DEVICES order). uuid: the
// vendor's id, which the interposer matches against the driver's (so that
// reordering CUDA_VISIBLE_DEVICES cannot swap two devices' limits); may be
// "-" when the vendor API has none, and then the device is matched by its
// position. memory: bytes the job may hold on the device, all processes
// together; 0 means no device memory at all. shares/of: the job's share of
// the device's compute; node (optional): the device's index on the node
// (VGPU_DEVICES), by which a job step's devices are matched; shares=0 (a job step's limits, for a device of its
// job the step holds nothing of: jobs/step_limits.h) means none of it.
#ifndef VGPU_JOBS_JOB_LIMITS_H_
#define VGPU_JOBS_JOB_LIMITS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu {

struct DeviceLimit {
  uint32_t index = 0;
  std::string uuid;    // "" when unknown ("-" in the file)
  std::string vendor;  // nvidia, ascend, dcu
  uint64_t memory_bytes = 0;
  uint32_t shares = 0;
  uint32_t shares_per_device = 0;
  int32_t node_index = -1;  // VGPU_DEVICES: the device's index on the node (-1: not recorded)

  // shares / shares_per_device, in [0, 1].
  double ComputeShare() const;
};

struct JobLimits {
  static constexpr int kVersion = 1;

  uint32_t job_id = 0;
  std::vector<DeviceLimit> devices;  // index 0..n-1, in order

  // Strict: an unknown key, a missing field, a number out of range or a
  // device listed twice is an error naming `source`, the line and the fix.
  static Result<JobLimits> Parse(const std::string& text, const std::string& source);
  std::string Serialize() const;

  // The device whose uuid is `uuid` (case-insensitive), or null.
  const DeviceLimit* FindByUuid(const std::string& uuid) const;
};

// <run_dir>/job_<id>: the job's run directory (limits file and usage
// regions), and the files in it.
std::string JobRunDir(const std::string& run_dir, uint32_t job_id);
std::string JobLimitsPath(const std::string& run_dir, uint32_t job_id);
std::string UsageRegionPath(const std::string& run_dir, uint32_t job_id, uint32_t device_index);
// The usage region's name inside the job's run directory ("usage.<index>").
std::string UsageRegionName(uint32_t device_index);
// A job step's directory inside the job's ("step_<s>"; jobs/step_limits.h).
std::string StepDirName(uint32_t step_id);

}  // namespace vgpu

#endif  // VGPU_JOBS_JOB_LIMITS_H_
