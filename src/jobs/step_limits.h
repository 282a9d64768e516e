// A job step's part of its job's devices: `srun --gres=vgpu:20` inside a job
// of 50 shares gets 20 of them, and is held to 20 (memory and pace) while the
// job as a whole stays held to its 50. The step's limits file has the job's
// format and devices (same indices, so that a process matches devices the
// same way); a device the step holds no share of gets memory 0 and shares 0.
// It lives in <run_dir>/job_<id>/step_<s>/ with the step's usage regions,
// made by spank_vgpu.so (root, in slurmstepd) for the step's first task and
// removed with the job's directory.
#ifndef VGPU_JOBS_STEP_LIMITS_H_
#define VGPU_JOBS_STEP_LIMITS_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobs/job_limits.h"
#include "util/status.h"

namespace vgpu {

// The step's limits from the job's and the step's environment as slurmstepd
// gives it (VGPU_DEVICES, VGPU_UUIDS and VGPU_SHARES, aligned lists:
// gres/vgpu's step_set_env). A step's device is matched to the job's by its
// index on the node, else (limits files without it) by vendor id. Each device's shares are capped at the job's, and its
// memory is the job's memory x step shares / job shares. Nothing (no error)
// when the step holds all of the job's shares: the job's limits are the
// step's. An error when a device of the step is not one of the job's or the
// lists do not line up.
Result<std::optional<JobLimits>> StepLimitsFor(const JobLimits& job, const std::string& step_devices,
                                               const std::string& step_uuids, const std::string& step_shares);

// Makes <run_dir>/job_<id>/step_<s> with `limits` and one usage region per
// device (the job user's), all at once: another task of the step that got
// there first wins, and this call then leaves its copy alone (Ok).
Status CreateStepRunDir(const std::string& run_dir, uint32_t step_id, const JobLimits& limits, uid_t user,
                        gid_t group);

}  // namespace vgpu

#endif  // VGPU_JOBS_STEP_LIMITS_H_
