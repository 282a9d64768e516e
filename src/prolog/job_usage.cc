#include "job_usage.h"

#include <json/json.h>
#include <sys/stat.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "jobs/job_limits.h"
#include "jobs/usage_region.h"
#include "util/read_file.h"

namespace vgpu {
namespace {

// Seconds with 0.1 s resolution: enough for share-hours, short in the comment.
double Tenths(double s) { return std::round(s * 10) / 10; }

}  // namespace

Result<NodeUsage> ReadNodeUsage(const std::string& run_dir, const JobAllocation& job,
                                const std::vector<HardwareSlice>& slices, const std::string& node,
                                time_t now) {
  using R = Result<NodeUsage>;
  const std::string path = JobLimitsPath(run_dir, job.job_id);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return R::Error("no usage for job " + std::to_string(job.job_id) + ": " + path + ": " +
                    std::strerror(errno));
  auto text = ReadTextFile(path);
  if (!text.ok()) return R::Error(text.message());
  auto limits = JobLimits::Parse(*text, path);
  if (!limits.ok()) return R::Error(limits.message());
  NodeUsage usage;
  usage.node = node;
  usage.wall_s = now > st.st_mtime ? static_cast<double>(now - st.st_mtime) : 0;
  for (const DeviceLimit& l : limits->devices) {
    DeviceUsage d;
    d.index = l.index;
    if (l.index < job.devices.size()) {
      d.type = job.devices[l.index].type;
      d.model = job.devices[l.index].model;
      d.shares = job.devices[l.index].shares;
    }
    d.of = l.shares_per_device;
    if (d.shares == 0) d.shares = l.shares;
    d.memory_quota = l.memory_bytes;
    for (const HardwareSlice& s : slices)
      if (s.job_device == l.index) d.slice = s.profile;
    auto region = UsageRegion::Open(UsageRegionPath(run_dir, job.job_id, l.index));
    if (!region.ok()) return R::Error(region.message());
    d.memory_peak = (*region)->Peak();
    d.busy_s = static_cast<double>((*region)->BusyNs()) / 1e9;
    usage.devices.push_back(std::move(d));
  }
  return usage;
}

Result<std::string> MergeUsageComment(const std::string& existing, const NodeUsage& usage) {
  using R = Result<std::string>;
  Json::Value root(Json::objectValue);
  if (!existing.empty()) {
    Json::CharReaderBuilder rb;
    std::unique_ptr<Json::CharReader> reader(rb.newCharReader());
    std::string errs;
    Json::Value parsed;
    if (!reader->parse(existing.data(), existing.data() + existing.size(), &parsed, &errs) ||
        !parsed.isObject() || !parsed.isMember("vgpu") || !parsed["nodes"].isObject())
      return R::Error("the job's AdminComment holds other text (\"" + existing.substr(0, 60) +
                      "\"); vgpu usage is not written over it");
    root = parsed;
  }
  root["vgpu"] = 1;
  Json::Value node(Json::objectValue);
  node["wall_s"] = Tenths(usage.wall_s);
  Json::Value devices(Json::arrayValue);
  for (const DeviceUsage& d : usage.devices) {
    Json::Value v(Json::objectValue);
    v["index"] = d.index;
    v["type"] = d.type;
    v["model"] = d.model;
    v["shares"] = d.shares;
    v["of"] = d.of;
    v["memory_quota"] = Json::UInt64(d.memory_quota);
    v["memory_peak"] = Json::UInt64(d.memory_peak);
    v["busy_s"] = Tenths(d.busy_s);
    if (!d.slice.empty()) v["slice"] = d.slice;
    devices.append(v);
  }
  node["devices"] = devices;
  root["nodes"][usage.node] = node;
  Json::StreamWriterBuilder wb;
  wb["indentation"] = "";
  wb["precisionType"] = "decimal";
  wb["precision"] = 1;
  return Json::writeString(wb, root);
}

Status RecordUsage(CommentStore& store, const NodeUsage& usage, int rank, int nodes,
                   const std::function<void(int)>& sleep_ms) {
  if (nodes > 1) sleep_ms(std::min(rank, 100) * 200);
  std::string why;
  int not_there = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string existing;
    const int rc = store.Get(&existing, &why);
    if (rc == CommentStore::kNoJob && ++not_there < 5) {
      sleep_ms(1000);
      continue;
    }
    if (rc != CommentStore::kOk) break;
    auto merged = MergeUsageComment(existing, usage);
    if (!merged.ok()) return Status::Error(merged.message());
    if (*merged == existing) return Status::Ok();  // our entry is in
    if (store.Set(*merged, &why) != CommentStore::kOk) break;
    if (nodes == 1) return Status::Ok();
    sleep_ms(300);  // a node that read before our write writes meanwhile
  }
  return Status::Error(why.empty() ? "other nodes kept writing over this node's entry" : why);
}

}  // namespace vgpu
