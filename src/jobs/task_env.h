// What vgpu-taskprolog (Slurm's TaskProlog, run as the job's user before
// each task) prints for Slurm to export into the task: the interposer, and
// the visibility variable of devices cut as hardware slices.
#ifndef VGPU_JOBS_TASK_ENV_H_
#define VGPU_JOBS_TASK_ENV_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "jobs/hardware_slice.h"
#include "jobs/job_limits.h"

namespace vgpu {

struct TaskEnvInput {
  JobLimits limits;                   // the job's limits file
  std::vector<HardwareSlice> slices;  // the job's slices (job_device: which device)
  std::string interposer;             // path of libvgpu.so
  // True when /etc/ld.so.preload already loads libvgpu.so into every
  // process: then LD_PRELOAD is left alone.
  bool preloaded_system_wide = false;
  std::function<const char*(const char*)> getenv;  // the task's environment
};

// The variables to export, in order. LD_PRELOAD: the interposer first,
// then whatever the task had. A vendor's visibility variable is rewritten
// only when some device of that vendor is sliced: its item for a sliced
// device becomes the slice's id (MIG UUID, vNPU id).
std::vector<std::pair<std::string, std::string>> TaskExports(const TaskEnvInput& in);

// TaskExports for job `job_id`, from its limits and slices files under
// `run_dir`; `ld_so_preload` is the text of /etc/ld.so.preload ("" if
// none). Nothing when the job has no readable limits file there and
// VGPU_SHARES is unset (no vgpu on this node). A corrupt or missing limits
// file of a task that has VGPU_SHARES still gives LD_PRELOAD, so that
// libvgpu.so fails closed and says why.
std::vector<std::pair<std::string, std::string>> TaskExportsForJob(
    const std::string& run_dir, uint32_t job_id, const std::string& interposer, const std::string& ld_so_preload,
    std::function<const char*(const char*)> getenv);

// True if the text of /etc/ld.so.preload names a library whose file name
// is libvgpu.so (entries are separated by blanks or new lines).
bool PreloadListsInterposer(const std::string& ld_so_preload);

}  // namespace vgpu

#endif  // VGPU_JOBS_TASK_ENV_H_
