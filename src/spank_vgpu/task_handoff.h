// What spank_vgpu.so gives a task of a vgpu job in slurmstepd, as root,
// before the task's program runs: its run directory as an open descriptor
// (so that libvgpu.so finds it in a container that does not show
// /run/slurm-vgpu, and cannot be shown another one by path), libvgpu.so in
// LD_PRELOAD and the visibility variables of hardware slices (what
// vgpu-taskprolog prints, without relying on TaskProlog).
#ifndef VGPU_SPANK_VGPU_TASK_HANDOFF_H_
#define VGPU_SPANK_VGPU_TASK_HANDOFF_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace vgpu {

struct TaskHandoff {
  bool vgpu_job = false;  // false: the job has no run directory; nothing to do
  // The descriptor left open across exec (not close-on-exec), at or above
  // kLowestFd so that it does not take a number a program expects free.
  int run_dir_fd = -1;
  std::vector<std::pair<std::string, std::string>> exports;  // VGPU_RUN_DIR_FD, LD_PRELOAD, ...
};

constexpr int kLowestHandoffFd = 100;

// For job `job_id`: opens <run_dir>/job_<id> and reads its limits and
// slices. `interposer` is libvgpu.so's path; `getenv` reads the task's
// environment; `ld_so_preload` is the text of /etc/ld.so.preload ("" if
// none). A job without a run directory is not an error (vgpu_job false);
// an unreadable or corrupt one is.
Result<TaskHandoff> PrepareTaskHandoff(uint32_t job_id, const std::string& run_dir, const std::string& interposer,
                                       const std::string& ld_so_preload,
                                       const std::function<const char*(const char*)>& getenv);

// For a job step (numbered steps only: not the batch, extern or
// interactive step) that holds part of the job's shares on this node, makes
// its directory of limits and usage regions (jobs/step_limits.h) from the
// job's limits and the step's VGPU_DEVICES, VGPU_UUIDS and VGPU_SHARES, which slurmstepd
// set from the step's allocation. Idempotent across the step's tasks.
Status PrepareStepLimits(uint32_t job_id, uint32_t step_id, const std::string& run_dir,
                         const std::string& step_devices, const std::string& step_uuids,
                         const std::string& step_shares, uid_t user, gid_t group);

}  // namespace vgpu

#endif  // VGPU_SPANK_VGPU_TASK_HANDOFF_H_
