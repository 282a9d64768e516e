// vgpu-taskprolog: Slurm's TaskProlog (the job's user, before each task).
// Prints "export NAME=VALUE" lines, which Slurm sets in the task: the
// interposer in LD_PRELOAD (unless /etc/ld.so.preload loads it already)
// and the hardware slices' ids in the vendor's visibility variable
// (task_env.h). Prints nothing for a job without vgpu on this node. Which
// job: the task's cgroup, not SLURM_JOB_ID, which the user controls.
#include <cstdio>

#include "job_setup.h"
#include "jobs/job_identity.h"
#include "jobs/job_limits.h"
#include "node_context.h"
#include "program.h"
#include "task_env.h"
#include "util/read_file.h"

#ifndef VGPU_INTERPOSER_PATH
#define VGPU_INTERPOSER_PATH "/usr/lib/slurm-vgpu/libvgpu.so"
#endif
#ifndef VGPU_RUN_DIR
#define VGPU_RUN_DIR "/run/slurm-vgpu"
#endif

namespace vgpu {
namespace {

int TaskProlog() {
  const uint32_t job_id = CurrentJobId();
  if (job_id == 0) return 0;
  auto text = ReadTextFile(JobLimitsPath(VGPU_RUN_DIR, job_id));
  if (!text.ok()) return 0;  // no vgpu here (libvgpu.so fails closed if there should be)
  TaskEnvInput in;
  auto limits = JobLimits::Parse(*text, JobLimitsPath(VGPU_RUN_DIR, job_id));
  if (limits.ok()) in.limits = *limits;
  auto slices = JobSlices(VGPU_RUN_DIR, job_id);
  if (slices.ok()) in.slices = *slices;
  in.interposer = VGPU_INTERPOSER_PATH;
  auto preload = ReadTextFile("/etc/ld.so.preload");
  in.preloaded_system_wide = preload.ok() && PreloadListsInterposer(*preload);
  in.getenv = ProcessEnv;
  for (const auto& [name, value] : TaskExports(in)) std::printf("export %s=%s\n", name.c_str(), value.c_str());
  return 0;
}

}  // namespace
}  // namespace vgpu

int main() { return vgpu::RunMain("vgpu-taskprolog", vgpu::TaskProlog); }
