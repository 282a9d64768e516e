// Which Slurm job a process belongs to, from its cgroup: the one fact a
// job's processes cannot change (moving to another cgroup needs root), so
// libvgpu.so, vgpu-taskprolog and the prolog's sweep trust it where they
// trust no environment variable. This is the one rule for all of them.
//
// Slurm names a job's cgroup in two ways:
//  * by id, "job_<id>": cgroup v1 on every release ("4:devices:/slurm/
//    uid_1000/job_42/step_0/task_0", "/slurm_n1/..." with several slurmd
//    per host), cgroup v2 up to 25.11, and 26.05 with CgroupJobIdPaths=yes
//    ("0::/system.slice/n1_slurmstepd.scope/job_42/step_0/user/task_0");
//  * by SLUID, Slurm 26.05's cgroup/v2 default: "s" and 13 characters of
//    Crockford's base32 right under the slurmstepd scope
//    ("0::/system.slice/slurmstepd.scope/sBGSM98HZTST00/step_0/user/task_0").
//    A SLUID does not hold the job id. vgpu-prolog, which Slurm gives both
//    (SLURM_JOB_ID, SLURM_JOB_SLUID), records the tie as root in the run
//    directory: <run_dir>/sluid/<SLUID>, a symbolic link to "../job_<id>".
//    A job's process cannot write there, so it cannot forge the tie.
#ifndef VGPU_JOBS_JOB_IDENTITY_H_
#define VGPU_JOBS_JOB_IDENTITY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "jobs/host_trust.h"
#include "util/status.h"

namespace vgpu {

// The lines of /proc/PID/cgroup: "hierarchy-ID:controller-list:path"
// (v2's is "0::path"); lines of another shape are left out.
struct CgroupLine {
  std::string hierarchy;    // "0" for cgroup v2
  std::string controllers;  // "devices", "cpu,cpuacct", "name=systemd", "" for v2
  std::string path;         // may hold ':'
};
std::vector<CgroupLine> CgroupLines(const std::string& proc_cgroup_text);

// What the text of /proc/PID/cgroup names. The first job component of the
// first line that has one counts (a v1 host lists the same job on every
// controller's line); components below it (a cgroup a job made for
// itself where Slurm delegated one) never do.
struct JobCgroup {
  uint32_t job_id = 0;  // "job_<id>"; 0 when the job is named by SLUID or not at all
  std::string sluid;    // "s<13 base32>" (upper case, as Slurm prints it); empty unless named so
  int64_t step_id = -1; // the "step_<n>" right below; -1 for none or step_batch/extern/interactive
  bool names_job() const { return job_id != 0 || !sluid.empty(); }
};
JobCgroup ParseJobCgroup(const std::string& proc_cgroup_text);

// Whether `text` is a SLUID as Slurm prints it: "s" and 13 characters of
// Crockford's base32 alphabet (0-9 A-Z without I L O U).
bool IsSluid(const std::string& text);

// The tie of SLUID `sluid` to its job under `run_dir` (/run/slurm-vgpu).
std::string SluidTieDir(const std::string& run_dir);
std::string SluidTiePath(const std::string& run_dir, const std::string& sluid);
// Records it (vgpu-prolog, as root): makes SluidTieDir (root's, 0755) when
// missing and refuses one that anyone else could write; replaces a tie of
// the same SLUID atomically.
Status RecordSluidTie(const std::string& run_dir, const std::string& sluid, uint32_t job_id);
// Removes every tie that names job `job_id` (vgpu-epilog and the sweep;
// they do not know the SLUID). Idempotent.
Status ForgetSluidTies(const std::string& run_dir, uint32_t job_id);
// The jobs that ties under `run_dir` name (for the sweep), unsorted.
std::vector<uint32_t> TiedJobs(const std::string& run_dir);
// The job a SLUID names on this node: 0 when there is no tie. An error when
// the tie's directory is not the host root's alone (seen from `ns`) or the
// tie is not a link to "../job_<id>".
Result<uint32_t> JobOfSluid(const std::string& run_dir, const std::string& sluid, UserNamespace ns);

// The job of a process whose cgroup is `cgroup` (or whose cgroup text is
// `proc_cgroup_text`), a SLUID resolved through its tie under `run_dir`.
struct ProcessJob {
  uint32_t job_id = 0;   // 0: none proved
  int64_t step_id = -1;
  std::string sluid;     // the cgroup's SLUID, if it named the job so
  // Non-empty when the cgroup names a Slurm job that cannot be proved: a
  // SLUID without a tie, or a tie that is not trusted. Says why and what
  // fixes it; the caller decides whether that fails closed.
  std::string unproved;
};
ProcessJob ResolveJobCgroup(const JobCgroup& cgroup, const std::string& run_dir, UserNamespace ns);
ProcessJob ResolveProcessJob(const std::string& proc_cgroup_text, const std::string& run_dir, UserNamespace ns);

// The text of /proc/self/cgroup ("" when it cannot be read).
std::string ProcSelfCgroup();

}  // namespace vgpu

#endif  // VGPU_JOBS_JOB_IDENTITY_H_
