#include "spank_vgpu/task_handoff.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jobs/job_limits.h"
#include "jobs/step_limits.h"
#include "jobs/task_env.h"
#include "util/read_file.h"

namespace vgpu {

Result<TaskHandoff> PrepareTaskHandoff(uint32_t job_id, const std::string& run_dir, const std::string& interposer,
                                       const std::string& ld_so_preload,
                                       const std::function<const char*(const char*)>& getenv) {
  using R = Result<TaskHandoff>;
  TaskHandoff out;
  const std::string dir = JobRunDir(run_dir, job_id);
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      // No vgpu here, or (VGPU_SHARES set) its prolog did not run: then
      // LD_PRELOAD all the same, and libvgpu.so fails closed (task_env.h).
      out.exports = TaskExportsForJob(run_dir, job_id, interposer, ld_so_preload, getenv);
      return out;
    }
    return R::Error("cannot open " + dir + ": " + std::strerror(errno));
  }
  // Moved out of the way of small descriptor numbers, and kept across exec.
  out.run_dir_fd = fcntl(fd, F_DUPFD, kLowestHandoffFd);
  close(fd);
  if (out.run_dir_fd < 0) return R::Error("cannot keep " + dir + " open for the task: " + std::strerror(errno));
  out.vgpu_job = true;
  out.exports.emplace_back("VGPU_RUN_DIR_FD", std::to_string(out.run_dir_fd));
  for (auto& e : TaskExportsForJob(run_dir, job_id, interposer, ld_so_preload, getenv)) out.exports.push_back(std::move(e));
  return out;
}

Status PrepareStepLimits(uint32_t job_id, uint32_t step_id, const std::string& run_dir,
                         const std::string& step_devices, const std::string& step_uuids,
                         const std::string& step_shares, uid_t user, gid_t group) {
  const std::string limits_path = JobLimitsPath(run_dir, job_id);
  auto text = ReadTextFile(limits_path);
  if (!text.ok()) return text.status();
  auto job = JobLimits::Parse(*text, limits_path);
  if (!job.ok()) return job.status();
  auto step = StepLimitsFor(*job, step_devices, step_uuids, step_shares);
  if (!step.ok()) return Status::Error("step " + std::to_string(step_id) + ": " + step.message());
  if (!step->has_value()) return Status::Ok();
  return CreateStepRunDir(run_dir, step_id, **step, user, group);
}

}  // namespace vgpu
