// vgpu-taskprolog: Slurm's TaskProlog (the job's user, before each task).
// Prints "export NAME=VALUE" lines, which Slurm sets in the task: the
// interposer in LD_PRELOAD (unless /etc/ld.so.preload loads it already)
// and the hardware slices' ids in the vendor's visibility variable
// (task_env.h). Prints nothing for a job without vgpu on this node. Which
// job: the task's cgroup, not SLURM_JOB_ID, which the user controls.
#include <cstdio>

#include "jobs/job_identity.h"
#include "jobs/task_env.h"
#include "program.h"
#include "util/read_file.h"

namespace vgpu {
namespace {

int TaskProlog() {
  // A SLUID without a tie: nothing to export (vgpu-prolog ties every job,
  // so this one never met it and has no run directory either).
  const uint32_t job_id = ResolveProcessJob(ProcSelfCgroup(), VGPU_RUN_DIR, CurrentUserNamespace()).job_id;
  if (job_id == 0) return 0;
  auto preload = ReadTextFile("/etc/ld.so.preload");
  for (const auto& [name, value] :
       TaskExportsForJob(VGPU_RUN_DIR, job_id, VGPU_INTERPOSER_PATH, preload.ok() ? *preload : "", ProcessEnv))
    std::printf("export %s=%s\n", name.c_str(), value.c_str());
  return 0;
}

}  // namespace
}  // namespace vgpu

int main() { return vgpu::RunMain("vgpu-taskprolog", vgpu::TaskProlog); }
