#include "jobs/job_run_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jobs/usage_region.h"
#include "util/read_file.h"

namespace vgpu {
namespace {

Status Errno(const std::string& what) { return Status::Error(what + ": " + std::strerror(errno)); }

}  // namespace

Status CreateJobRunDir(const std::string& run_dir, const JobLimits& limits, uid_t user, gid_t group) {
  const std::string dir = JobRunDir(run_dir, limits.job_id);
  // Whatever a failed or crashed earlier attempt left goes first.
  Status cleared = RemoveJobRunDir(run_dir, limits.job_id);
  if (!cleared.ok()) return cleared;
  if (mkdir(dir.c_str(), 0755) != 0) return Errno("cannot create " + dir);
  auto fail = [&](Status st) {
    RemoveJobRunDir(run_dir, limits.job_id);
    return st;
  };
  if (chmod(dir.c_str(), 0755) != 0) return fail(Errno("cannot chmod " + dir));
  for (const auto& d : limits.devices) {
    const std::string region = UsageRegionPath(run_dir, limits.job_id, d.index);
    Status st = UsageRegion::Create(region);
    if (!st.ok()) return fail(st);
    if (chown(region.c_str(), user, group) != 0) return fail(Errno("cannot chown " + region));
  }
  // Last: libvgpu.so takes the job as a vgpu job once the limits file is
  // there, and then needs the regions.
  Status st = WriteFileAtomically(JobLimitsPath(run_dir, limits.job_id), limits.Serialize(), 0644);
  return st.ok() ? st : fail(st);
}

Status RemoveJobRunDir(const std::string& run_dir, uint32_t job_id) {
  const std::string dir = JobRunDir(run_dir, job_id);
  DIR* d = opendir(dir.c_str());
  if (!d) return errno == ENOENT ? Status::Ok() : Errno("cannot open " + dir);
  Status result = Status::Ok();
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    // Steps' directories (jobs/step_limits.h) hold files only.
    if (name.rfind("step_", 0) == 0) {
      const std::string sub = dir + "/" + name;
      if (DIR* s = opendir(sub.c_str())) {
        while (dirent* f = readdir(s))
          if (std::strcmp(f->d_name, ".") != 0 && std::strcmp(f->d_name, "..") != 0) unlinkat(dirfd(s), f->d_name, 0);
        closedir(s);
      }
      if (unlinkat(dirfd(d), name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) continue;
      if (errno != ENOTDIR) {
        if (result.ok()) result = Errno("cannot remove " + sub);
        continue;
      }
      // A file named step_*: removed as any other.
    }
    if (unlinkat(dirfd(d), name.c_str(), 0) != 0 && errno != ENOENT && result.ok())
      result = Errno("cannot remove " + dir + "/" + name);
  }
  closedir(d);
  if (rmdir(dir.c_str()) != 0 && errno != ENOENT && result.ok()) result = Errno("cannot remove " + dir);
  return result;
}

}  // namespace vgpu
