// Where a process stands: outside any job, in a job without vgpu, in a
// vgpu job (its run directory open and trusted), or somewhere it cannot
// prove (fail closed). libvgpu.so decides this once per process.
//
// In the host's user namespace the job is the one its cgroup names: a job's
// processes cannot leave their cgroup, and without privilege they cannot
// make a cgroup or mount namespace to hide it. A cgroup that names the job
// by SLUID counts through the tie vgpu-prolog recorded (job_identity.h);
// without one, a process with signs of a vgpu job fails closed. A process in a user
// namespace (a container, or `unshare -U`) can: it may see a cgroup
// namespace ("0::/") and a private mount namespace with files it made
// itself. There the job id comes from the cgroup when it still shows one,
// else from SLURM_JOB_ID, and the run directory counts only if the host's
// root wrote it (host_trust.h). A process there that shows signs of a vgpu
// job (VGPU_SHARES, or libvgpu.so preloaded through LD_PRELOAD, which only
// vgpu jobs are given) but whose job or run directory cannot be found fails
// closed.
#ifndef VGPU_JOBS_JOB_PLACE_H_
#define VGPU_JOBS_JOB_PLACE_H_

#include <cstdint>
#include <string>

#include "jobs/host_trust.h"
#include "jobs/job_identity.h"

namespace vgpu {

// What a process knows of itself; OfThisProcess() reads it, tests make
// their own.
struct ProcessFacts {
  UserNamespace user_namespace = UserNamespace::kHost;
  JobCgroup cgroup;            // what /proc/self/cgroup names (job_identity.h)
  uint32_t env_job_id = 0;     // SLURM_JOB_ID; 0: unset or not a number
  int64_t env_step_id = -1;     // SLURM_STEP_ID; -1: unset or not a number
  std::string vgpu_shares;     // VGPU_SHARES
  bool preloaded_by_env = false;  // LD_PRELOAD names libvgpu.so
  // VGPU_RUN_DIR_FD: a descriptor of the job's run directory that
  // spank_vgpu.so opened in slurmstepd before exec; -1 when unset or not
  // an open descriptor. Used instead of the path (which a container may
  // not show) and held to the same trust; never closed here.
  int run_dir_fd = -1;

  static ProcessFacts OfThisProcess();
};

// An open file descriptor, closed with its owner.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.release()) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd();
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

struct JobPlace {
  enum class Kind { kNoJob, kJobWithoutVgpu, kVgpuJob, kFailClosed };
  Kind kind = Kind::kNoJob;
  uint32_t job_id = 0;
  std::string run_dir;      // <run_dir>/job_<id>, for messages
  OwnedFd run_dir_fd;       // kVgpuJob: the trusted directory
  OwnedFd limits_fd;        // kVgpuJob: its limits file, trusted
  // kVgpuJob in a step that holds part of the job's shares: the step's
  // directory and limits file (jobs/step_limits.h), trusted; else closed.
  int64_t step_id = -1;
  OwnedFd step_limits_fd;
  OwnedFd step_dir_fd;
  std::string failure;      // kFailClosed: why, and the fix
};

// Finds the job of a process with `facts` under `run_dir_root`
// (/run/slurm-vgpu) and opens its run directory and limits file.
JobPlace LocateJob(const ProcessFacts& facts, const std::string& run_dir_root);

}  // namespace vgpu

#endif  // VGPU_JOBS_JOB_PLACE_H_
