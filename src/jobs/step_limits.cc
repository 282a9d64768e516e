#include "jobs/step_limits.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "jobs/job_run_dir.h"
#include "jobs/usage_region.h"
#include "util/read_file.h"
#include "util/text.h"

namespace vgpu {
namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::istringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(Trim(item));
  if (!s.empty() && s.back() == ',') out.push_back("");
  return out;
}

// A step's usage region serves its processes only: fewer slots than a job's.
constexpr uint32_t kStepRegionSlots = 256;

}  // namespace

Result<std::optional<JobLimits>> StepLimitsFor(const JobLimits& job, const std::string& step_devices,
                                               const std::string& step_uuids, const std::string& step_shares) {
  using R = Result<std::optional<JobLimits>>;
  const auto nodes = SplitList(step_devices);
  auto uuids = SplitList(step_uuids);
  const auto shares = SplitList(step_shares);
  if (shares.empty()) return std::optional<JobLimits>();  // the step holds no vgpu: nothing of its own
  if (uuids.empty()) uuids.assign(shares.size(), "");  // no device's id is known
  if (uuids.size() != shares.size() || (!nodes.empty() && nodes.size() != shares.size()))
    return R::Error("the step's VGPU_DEVICES (" + std::to_string(nodes.size()) + " items), VGPU_UUIDS (" +
                    std::to_string(uuids.size()) + ") and VGPU_SHARES (" + std::to_string(shares.size()) +
                    ") do not line up");
  JobLimits step = job;
  for (auto& d : step.devices) {
    d.memory_bytes = 0;
    d.shares = 0;
  }
  bool whole = shares.size() == job.devices.size();
  for (size_t i = 0; i < shares.size(); ++i) {
    char* end = nullptr;
    errno = 0;
    const unsigned long n = std::strtoul(shares[i].c_str(), &end, 10);
    if (shares[i].empty() || *end != '\0' || errno != 0)
      return R::Error("the step's VGPU_SHARES item \"" + shares[i] + "\" is not a number");
    // Devices are matched by their index on the node; in a limits file
    // without it, by vendor id; without one, by position, which holds only
    // when the step has them all.
    const DeviceLimit* of_job = nullptr;
    if (!nodes.empty())
      for (const DeviceLimit& d : job.devices)
        if (d.node_index >= 0 && std::to_string(d.node_index) == nodes[i]) of_job = &d;
    if (!of_job && !uuids[i].empty()) of_job = job.FindByUuid(uuids[i]);
    if (!of_job && uuids[i].empty() && shares.size() == job.devices.size()) of_job = &job.devices[i];
    if (!of_job)
      return R::Error("the step's device " + (nodes.empty() ? "#" + std::to_string(i) : nodes[i]) +
                      (uuids[i].empty() ? "" : " (" + uuids[i] + ")") + " is not one of job " +
                      std::to_string(job.job_id) + "'s devices");
    DeviceLimit& d = step.devices[of_job->index];
    d.shares = std::min<uint32_t>(static_cast<uint32_t>(std::min<unsigned long>(n, UINT32_MAX)), of_job->shares);
    d.memory_bytes = of_job->shares == 0 ? 0
                                         : static_cast<uint64_t>(static_cast<long double>(of_job->memory_bytes) *
                                                                 d.shares / of_job->shares);
    whole = whole && d.shares == of_job->shares;
  }
  if (whole) return std::optional<JobLimits>();
  return std::optional<JobLimits>(step);
}

Status CreateStepRunDir(const std::string& run_dir, uint32_t step_id, const JobLimits& limits, uid_t user,
                        gid_t group) {
  const std::string job_dir = JobRunDir(run_dir, limits.job_id);
  const std::string final_dir = job_dir + "/" + StepDirName(step_id);
  struct stat st {};
  if (lstat(final_dir.c_str(), &st) == 0) return Status::Ok();  // another task made it
  // Made aside, then renamed into place: a process of the step never sees
  // a limits file without its regions, and two tasks cannot both make it.
  const std::string tmp = final_dir + ".new." + std::to_string(getpid());
  auto fail = [&](const std::string& why) {
    for (const auto& d : limits.devices) unlink((tmp + "/" + UsageRegionName(d.index)).c_str());
    unlink((tmp + "/limits").c_str());
    rmdir(tmp.c_str());
    return Status::Error(why);
  };
  if (mkdir(tmp.c_str(), 0755) != 0 || chmod(tmp.c_str(), 0755) != 0)
    return fail("cannot create " + tmp + ": " + std::strerror(errno));
  for (const auto& d : limits.devices) {
    const std::string region = tmp + "/" + UsageRegionName(d.index);
    Status made = UsageRegion::Create(region, kStepRegionSlots);
    if (!made.ok()) return fail(made.message());
    if (chown(region.c_str(), user, group) != 0) return fail("cannot chown " + region + ": " + std::strerror(errno));
  }
  Status written = WriteFileAtomically(tmp + "/limits", limits.Serialize(), 0644);
  if (!written.ok()) return fail(written.message());
  if (rename(tmp.c_str(), final_dir.c_str()) != 0) {
    const int err = errno;
    fail("");
    if (err == EEXIST || err == ENOTEMPTY) return Status::Ok();  // another task won
    return Status::Error("cannot rename into " + final_dir + ": " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace vgpu
