#include "jobs/job_identity.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/text.h"

namespace vgpu {
namespace {

// "<prefix><digits>" with 1-10 digits whose value is 1..max; 0 otherwise.
uint64_t NumberAfter(const std::string& text, const std::string& prefix, uint64_t max) {
  uint64_t n = 0;
  if (text.size() <= prefix.size() || text.size() > prefix.size() + 10 || text.compare(0, prefix.size(), prefix) != 0 ||
      !ParseU64(text.substr(prefix.size()), max, &n))
    return 0;
  return n;
}

bool EndsWith(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// The step below a job component: "step_<n>"; step_0 is step 0.
int64_t StepOf(const std::vector<std::string>& parts, size_t job_at) {
  if (job_at + 1 >= parts.size()) return -1;
  const std::string& c = parts[job_at + 1];
  if (c == "step_0") return 0;
  const uint64_t n = NumberAfter(c, "step_", UINT32_MAX);
  return n == 0 ? -1 : static_cast<int64_t>(n);
}

const char kTieDir[] = "sluid";
const char kTieTargetPrefix[] = "../job_";

Status Errno(const std::string& what) { return Status::Error(what + ": " + std::strerror(errno)); }

}  // namespace

bool IsSluid(const std::string& text) {
  if (text.size() != 14 || text[0] != 's') return false;
  for (size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    const bool digit = c >= '0' && c <= '9';
    const bool letter = c >= 'A' && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U';
    if (!digit && !letter) return false;
  }
  return true;
}

std::vector<CgroupLine> CgroupLines(const std::string& text) {
  std::vector<CgroupLine> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    lines.push_back({line.substr(0, first), line.substr(first + 1, second - first - 1), line.substr(second + 1)});
  }
  return lines;
}

JobCgroup ParseJobCgroup(const std::string& text) {
  JobCgroup found;
  for (const CgroupLine& line : CgroupLines(text)) {
    const std::vector<std::string> parts = Components(line.path);
    for (size_t i = 0; i < parts.size(); ++i) {
      if (const uint64_t id = NumberAfter(parts[i], "job_", UINT32_MAX)) {
        found.job_id = static_cast<uint32_t>(id);
      } else if (i > 0 && IsSluid(parts[i]) && EndsWith(parts[i - 1], "slurmstepd.scope")) {
        found.sluid = parts[i];
      } else {
        continue;
      }
      found.step_id = StepOf(parts, i);
      return found;
    }
  }
  return found;
}

std::string SluidTieDir(const std::string& run_dir) { return run_dir + "/" + kTieDir; }

std::string SluidTiePath(const std::string& run_dir, const std::string& sluid) {
  return SluidTieDir(run_dir) + "/" + sluid;
}

Status RecordSluidTie(const std::string& run_dir, const std::string& sluid, uint32_t job_id) {
  if (!IsSluid(sluid)) return Status::Error("\"" + sluid + "\" is not a SLUID (s and 13 base32 characters)");
  const std::string dir = SluidTieDir(run_dir);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Errno("cannot create " + dir);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open " + dir);
  Status st = CheckHostRootOnly(fd, dir, true, UserNamespace::kHost);
  if (st.ok()) {
    const std::string target = kTieTargetPrefix + std::to_string(job_id);
    const std::string temp = "." + sluid + "." + std::to_string(getpid());
    unlinkat(fd, temp.c_str(), 0);
    if (symlinkat(target.c_str(), fd, temp.c_str()) != 0) {
      st = Errno("cannot create " + dir + "/" + temp);
    } else if (renameat(fd, temp.c_str(), fd, sluid.c_str()) != 0) {
      st = Errno("cannot rename " + dir + "/" + temp + " to " + sluid);
      unlinkat(fd, temp.c_str(), 0);
    }
  }
  close(fd);
  return st;
}

Status ForgetSluidTies(const std::string& run_dir, uint32_t job_id) {
  const std::string dir = SluidTieDir(run_dir);
  DIR* d = opendir(dir.c_str());
  if (!d) return errno == ENOENT ? Status::Ok() : Errno("cannot open " + dir);
  const std::string target = kTieTargetPrefix + std::to_string(job_id);
  Status result;
  while (dirent* e = readdir(d)) {
    char link[64];
    const ssize_t n = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
    if (n < 0 || std::string(link, static_cast<size_t>(n)) != target) continue;
    if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT)
      result = Errno("cannot remove " + dir + "/" + e->d_name);
  }
  closedir(d);
  return result;
}

std::vector<uint32_t> TiedJobs(const std::string& run_dir) {
  std::vector<uint32_t> jobs;
  DIR* d = opendir(SluidTieDir(run_dir).c_str());
  if (!d) return jobs;
  while (dirent* e = readdir(d)) {
    char link[64];
    const ssize_t n = IsSluid(e->d_name) ? readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1) : -1;
    const uint64_t job = n < 0 ? 0 : NumberAfter(std::string(link, static_cast<size_t>(n)), kTieTargetPrefix, UINT32_MAX);
    if (job != 0) jobs.push_back(static_cast<uint32_t>(job));
  }
  closedir(d);
  return jobs;
}

Result<uint32_t> JobOfSluid(const std::string& run_dir, const std::string& sluid, UserNamespace ns) {
  if (!IsSluid(sluid)) return Result<uint32_t>::Error("\"" + sluid + "\" is not a SLUID");
  const std::string dir = SluidTieDir(run_dir);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0u;
    return Errno("cannot open " + dir);
  }
  Status trusted = CheckHostRootOnly(fd, dir, true, ns);
  char link[64];
  const ssize_t n = trusted.ok() ? readlinkat(fd, sluid.c_str(), link, sizeof(link) - 1) : -1;
  const int read_errno = errno;
  close(fd);
  if (!trusted.ok()) return trusted;
  if (n < 0) {
    if (read_errno == ENOENT) return 0u;
    errno = read_errno;
    return Errno("cannot read the link " + SluidTiePath(run_dir, sluid));
  }
  const uint64_t job = NumberAfter(std::string(link, static_cast<size_t>(n)), kTieTargetPrefix, UINT32_MAX);
  if (job == 0)
    return Result<uint32_t>::Error(SluidTiePath(run_dir, sluid) + " is not a link to ../job_<id>");
  return static_cast<uint32_t>(job);
}

ProcessJob ResolveProcessJob(const std::string& text, const std::string& run_dir, UserNamespace ns) {
  return ResolveJobCgroup(ParseJobCgroup(text), run_dir, ns);
}

ProcessJob ResolveJobCgroup(const JobCgroup& cgroup, const std::string& run_dir, UserNamespace ns) {
  ProcessJob job;
  job.step_id = cgroup.step_id;
  job.sluid = cgroup.sluid;
  if (cgroup.job_id != 0 || cgroup.sluid.empty()) {
    job.job_id = cgroup.job_id;
    if (job.job_id == 0) job.step_id = -1;
    return job;
  }
  auto tied = JobOfSluid(run_dir, cgroup.sluid, ns);
  if (!tied.ok()) {
    job.unproved = "the cgroup names Slurm job " + cgroup.sluid + ", whose tie to a job id is not trusted: " +
                   tied.message();
  } else if (*tied == 0) {
    job.unproved = "the cgroup names Slurm job " + cgroup.sluid +
                   " by SLUID (cgroup/v2 of Slurm 26.05), and " + SluidTiePath(run_dir, cgroup.sluid) +
                   ", which ties it to its job id, is missing: vgpu-prolog did not run for this job on this node "
                   "(Prolog= in slurm.conf), or is older than this libvgpu.so";
  } else {
    job.job_id = *tied;
    return job;
  }
  job.step_id = -1;
  return job;
}

std::string ProcSelfCgroup() {
  int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0 && text.size() < 65536) text.append(buf, static_cast<size_t>(n));
  close(fd);
  return text;
}

}  // namespace vgpu
