#include "exporter_usage.h"

#include <dirent.h>
#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "jobs/job_limits.h"
#include "util/read_file.h"

namespace vgpu::exporter {
namespace {

// "job_123" -> 123; 0 when the name is not a job directory's.
uint32_t JobIdOf(const std::string& name) {
  if (name.rfind("job_", 0) != 0 || name.size() == 4 || name.size() > 14 ||
      name.find_first_not_of("0123456789", 4) != std::string::npos)
    return 0;
  const unsigned long long id = std::strtoull(name.c_str() + 4, nullptr, 10);
  return id > UINT32_MAX ? 0 : static_cast<uint32_t>(id);
}

std::string UserOf(uid_t uid) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) return found->pw_name;
  return std::to_string(uid);
}

}  // namespace

std::vector<JobDeviceUsage> ReadRunDirUsage(const std::string& run_dir, std::vector<std::string>* problems) {
  std::vector<JobDeviceUsage> out;
  std::vector<uint32_t> jobs;
  DIR* dir = opendir(run_dir.c_str());
  if (!dir) {
    problems->push_back("cannot read the run directory " + run_dir + ": " + std::strerror(errno));
    return out;
  }
  while (dirent* e = readdir(dir))
    if (uint32_t id = JobIdOf(e->d_name)) jobs.push_back(id);
  closedir(dir);
  std::sort(jobs.begin(), jobs.end());
  for (uint32_t id : jobs) {
    const std::string path = JobLimitsPath(run_dir, id);
    struct stat st {};
    if (stat(JobRunDir(run_dir, id).c_str(), &st) != 0) continue;  // ended meanwhile
    // The prolog writes the limits file last: a job being set up has none yet.
    struct stat limits_st {};
    if (stat(path.c_str(), &limits_st) != 0 && errno == ENOENT) continue;
    auto text = ReadTextFile(path);
    if (!text.ok()) {
      problems->push_back(text.message());
      continue;
    }
    auto limits = JobLimits::Parse(*text, path);
    if (!limits.ok()) {
      problems->push_back(limits.message());
      continue;
    }
    const std::string user = UserOf(st.st_uid);
    for (const DeviceLimit& l : limits->devices) {
      auto stats = UsageRegion::ReadStats(UsageRegionPath(run_dir, id, l.index));
      if (!stats.ok()) {
        problems->push_back(stats.message());
        continue;
      }
      JobDeviceUsage u;
      u.job_id = id;
      u.device = l.index;
      u.node_device = l.node_index;
      u.user = user;
      u.vendor = l.vendor;
      u.shares = l.shares;
      u.shares_per_device = l.shares_per_device;
      u.memory_quota = l.memory_bytes;
      u.stats = *stats;
      out.push_back(std::move(u));
    }
  }
  return out;
}

}  // namespace vgpu::exporter
