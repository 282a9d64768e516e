// A job's run directory, <run_dir>/job_<id>: made by vgpu-prolog (as root)
// before the job starts, removed by vgpu-epilog. Holds the limits file
// (root's, read-only to everyone else) and one usage region per device
// (the job user's, so that the job's processes can count their use).
#ifndef VGPU_JOBS_JOB_RUN_DIR_H_
#define VGPU_JOBS_JOB_RUN_DIR_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "jobs/job_limits.h"
#include "util/status.h"

namespace vgpu {

// Makes the job's directory (0755, owner of the process), writes the
// limits file (0644, replaced atomically) and a fresh usage region per
// device (0600, owned by `user`/`group`). `run_dir` must exist. On error
// nothing of the job's directory is left.
Status CreateJobRunDir(const std::string& run_dir, const JobLimits& limits, uid_t user, gid_t group);

// Removes the job's directory and everything in it; a directory that is
// not there is fine (idempotent).
Status RemoveJobRunDir(const std::string& run_dir, uint32_t job_id);

}  // namespace vgpu

#endif  // VGPU_JOBS_JOB_RUN_DIR_H_
