#include "jobs/job_place.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "jobs/job_limits.h"

namespace vgpu {
namespace {

uint32_t ParseJobId(const char* text) {
  if (!text || !*text) return 0;
  uint64_t id = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9' || p - text >= 10) return 0;
    id = id * 10 + static_cast<uint64_t>(*p - '0');
  }
  return id <= UINT32_MAX ? static_cast<uint32_t>(id) : 0;
}

bool NamesInterposer(const char* preload) {
  if (!preload) return false;
  const std::string list = preload;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of(": ", start);
    if (end == std::string::npos) end = list.size();
    const std::string entry = list.substr(start, end - start);
    const size_t slash = entry.rfind('/');
    if (entry.substr(slash == std::string::npos ? 0 : slash + 1) == "libvgpu.so") return true;
    start = end + 1;
  }
  return false;
}

JobPlace FailClosed(JobPlace place, std::string why) {
  place.kind = JobPlace::Kind::kFailClosed;
  place.failure = std::move(why);
  place.run_dir_fd = OwnedFd();
  place.limits_fd = OwnedFd();
  return place;
}

const char* kInNamespace =
    " in a user namespace (a container or unshare -U), where libvgpu cannot see the host as it is";

}  // namespace

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

OwnedFd::~OwnedFd() {
  if (fd_ >= 0) close(fd_);
}

ProcessFacts ProcessFacts::OfThisProcess() {
  ProcessFacts f;
  f.user_namespace = CurrentUserNamespace();
  f.cgroup = ParseJobCgroup(ProcSelfCgroup());
  f.env_job_id = ParseJobId(getenv("SLURM_JOB_ID"));
  if (const char* step = getenv("SLURM_STEP_ID"); step && *step) {
    const uint32_t id = ParseJobId(step);
    if (id != 0 || std::strcmp(step, "0") == 0) f.env_step_id = id;
  }
  const char* shares = getenv("VGPU_SHARES");
  f.vgpu_shares = shares ? shares : "";
  f.preloaded_by_env = NamesInterposer(getenv("LD_PRELOAD"));
  const char* handed = getenv("VGPU_RUN_DIR_FD");
  if (handed && *handed) {
    char* end = nullptr;
    long fd = std::strtol(handed, &end, 10);
    if (*end == '\0' && fd > 2 && fd < 65536 && fcntl(static_cast<int>(fd), F_GETFD) >= 0)
      f.run_dir_fd = static_cast<int>(fd);
  }
  return f;
}

JobPlace LocateJob(const ProcessFacts& facts, const std::string& run_dir_root) {
  JobPlace place;
  const bool nested = facts.user_namespace == UserNamespace::kNested;
  // In a namespace a missing job or run directory may be hidden rather
  // than absent; these say the process belongs to a vgpu job.
  const bool vgpu_signs =
      !facts.vgpu_shares.empty() || facts.run_dir_fd >= 0 || (nested && facts.preloaded_by_env);

  const ProcessJob from_cgroup = ResolveJobCgroup(facts.cgroup, run_dir_root, facts.user_namespace);
  place.job_id = from_cgroup.job_id;
  if (place.job_id == 0 && !from_cgroup.unproved.empty() && !nested) {
    // A Slurm job's cgroup without a provable job. vgpu-prolog ties every
    // job, so nothing here says this is no vgpu job: libvgpu.so in
    // LD_PRELOAD counts as a sign too (elsewhere on the host it need not:
    // it is inherited by jobs without vgpu).
    if (vgpu_signs || facts.preloaded_by_env)
      return FailClosed(std::move(place), "this process of a vgpu job cannot prove its job: " + from_cgroup.unproved);
    place.kind = JobPlace::Kind::kJobWithoutVgpu;
    return place;
  }
  // A cgroup namespace shows the job's cgroup as "/": the job id is then
  // taken from Slurm's variable, and must still match a trusted run
  // directory's limits file to count.
  if (place.job_id == 0 && nested) place.job_id = facts.env_job_id;
  if (place.job_id == 0) {
    if (nested && vgpu_signs)
      return FailClosed(std::move(place), std::string("this process of a vgpu job is") + kInNamespace +
                                              ", and neither its cgroup nor SLURM_JOB_ID names the job");
    return place;  // kNoJob
  }

  place.run_dir = JobRunDir(run_dir_root, place.job_id);
  const std::string limits_name = JobLimitsPath(run_dir_root, place.job_id);
  // Our own descriptor, so that the one handed over stays for children.
  place.run_dir_fd = OwnedFd(facts.run_dir_fd >= 0
                                 ? fcntl(facts.run_dir_fd, F_DUPFD_CLOEXEC, 3)
                                 : open(place.run_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  int missing_errno = 0;
  if (place.run_dir_fd.get() < 0) {
    missing_errno = errno;
  } else {
    place.limits_fd = OwnedFd(openat(place.run_dir_fd.get(), "limits", O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (place.limits_fd.get() < 0) missing_errno = errno;
  }
  if (missing_errno == ENOENT) {
    const std::string job = "job " + std::to_string(place.job_id);
    if (!facts.vgpu_shares.empty())
      return FailClosed(std::move(place), job + " holds vgpu shares (VGPU_SHARES=" + facts.vgpu_shares +
                                              ") but has no limits file " + limits_name +
                                              "; vgpu-prolog did not run on this node (ask the administrator)");
    if (vgpu_signs)
      return FailClosed(std::move(place), job + " has libvgpu.so preloaded but no limits file " + limits_name +
                                              " is visible" + kInNamespace +
                                              "; make /run/slurm-vgpu visible inside the container "
                                              "(read-write; the job still cannot write it), or enable "
                                              "spank_vgpu.so, which hands the task its run directory");
    place.run_dir_fd = OwnedFd();
    place.kind = JobPlace::Kind::kJobWithoutVgpu;
    return place;
  }
  if (missing_errno != 0)
    return FailClosed(std::move(place), "limits of job " + std::to_string(place.job_id) + " not trusted: " +
                                            limits_name + ": " + std::strerror(missing_errno));

  Status trusted = CheckHostRootOnly(place.run_dir_fd.get(), place.run_dir, true, facts.user_namespace);
  if (trusted.ok()) trusted = CheckHostRootOnly(place.limits_fd.get(), limits_name, false, facts.user_namespace);
  if (!trusted.ok())
    return FailClosed(std::move(place), "limits of job " + std::to_string(place.job_id) + " not trusted: " +
                                            trusted.message() + (nested ? std::string(";") + kInNamespace : ""));
  place.kind = JobPlace::Kind::kVgpuJob;

  // The step: the one the cgroup names; in a namespace that hides it,
  // SLURM_STEP_ID (only where the job id came from the cgroup's view too).
  place.step_id = from_cgroup.step_id;
  if (place.step_id < 0 && nested && from_cgroup.job_id == 0) place.step_id = facts.env_step_id;
  if (place.step_id < 0) return place;
  const std::string step_dir = place.run_dir + "/" + StepDirName(static_cast<uint32_t>(place.step_id));
  place.step_dir_fd = OwnedFd(openat(place.run_dir_fd.get(), StepDirName(static_cast<uint32_t>(place.step_id)).c_str(),
                                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (place.step_dir_fd.get() < 0) {
    if (errno == ENOENT) {
      place.step_id = -1;  // the step holds the job's whole part
      return place;
    }
    return FailClosed(std::move(place), "limits of step " + step_dir + " not trusted: " + std::strerror(errno));
  }
  place.step_limits_fd = OwnedFd(openat(place.step_dir_fd.get(), "limits", O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  Status step_trusted = place.step_limits_fd.get() < 0
                            ? Status::Error(step_dir + "/limits: " + std::strerror(errno))
                            : CheckHostRootOnly(place.step_dir_fd.get(), step_dir, true, facts.user_namespace);
  if (step_trusted.ok())
    step_trusted = CheckHostRootOnly(place.step_limits_fd.get(), step_dir + "/limits", false, facts.user_namespace);
  if (!step_trusted.ok())
    return FailClosed(std::move(place), "limits of step " + std::to_string(place.step_id) + " of job " +
                                            std::to_string(place.job_id) + " not trusted: " + step_trusted.message());
  return place;
}

}  // namespace vgpu
