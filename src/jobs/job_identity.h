// Which Slurm job a process belongs to, from its cgroup: the one fact a
// job's processes cannot change (moving to another cgroup needs root), so
// libvgpu.so trusts it where it trusts no environment variable.
#ifndef VGPU_JOBS_JOB_IDENTITY_H_
#define VGPU_JOBS_JOB_IDENTITY_H_

#include <cstdint>
#include <string>

namespace vgpu {

// The job id in the text of /proc/self/cgroup: the first path component
// "job_<id>" on any line (cgroup v1: "4:devices:/slurm/uid_1000/job_42/
// step_0/task_0", or "/slurm_n1/..." with several slurmd per host; v2:
// "0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0").
// 0 when there is none.
uint32_t JobIdFromCgroup(const std::string& proc_self_cgroup);

// The same for the calling process (reads /proc/self/cgroup).
uint32_t CurrentJobId();

// The job step of the text of /proc/self/cgroup: the component "step_<n>"
// right after "job_<id>" ("job_42/step_3/..."); -1 when there is none or it
// is not a number (step_batch, step_extern, step_interactive).
int64_t StepIdFromCgroup(const std::string& proc_self_cgroup);
// JobIdFromCgroup and StepIdFromCgroup of the calling process.
void CurrentJobAndStep(uint32_t* job_id, int64_t* step_id);

}  // namespace vgpu

#endif  // VGPU_JOBS_JOB_IDENTITY_H_
