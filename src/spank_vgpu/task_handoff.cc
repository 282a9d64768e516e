#include "spank_vgpu/task_handoff.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jobs/job_limits.h"
#include "jobs/task_env.h"

namespace vgpu {

Result<TaskHandoff> PrepareTaskHandoff(uint32_t job_id, const std::string& run_dir, const std::string& interposer,
                                       const std::string& ld_so_preload,
                                       const std::function<const char*(const char*)>& getenv) {
  using R = Result<TaskHandoff>;
  TaskHandoff out;
  const std::string dir = JobRunDir(run_dir, job_id);
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return out;  // a job without vgpu on this node
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

}  // namespace vgpu
