#include "job_usage.h"

#include <dirent.h>
#include <json/json.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
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
  // The steps' own regions: their directories are named step_<n>.
  if (DIR* dir = opendir(JobRunDir(run_dir, job.job_id).c_str())) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name.rfind("step_", 0) != 0 || name.find_first_not_of("0123456789", 5) != std::string::npos ||
          name.size() == 5)
        continue;
      const std::string step_dir = JobRunDir(run_dir, job.job_id) + "/" + name;
      auto step_text = ReadTextFile(step_dir + "/limits");
      auto step_limits = step_text.ok() ? JobLimits::Parse(*step_text, step_dir + "/limits")
                                        : Result<JobLimits>(step_text.status());
      if (!step_limits.ok()) continue;  // half made by a task that died: nothing to report
      StepUsage step;
      step.step = static_cast<uint32_t>(std::strtoul(name.c_str() + 5, nullptr, 10));
      for (const DeviceLimit& l : step_limits->devices) {
        if (l.shares == 0) continue;
        auto region = UsageRegion::Open(step_dir + "/" + UsageRegionName(l.index));
        if (!region.ok()) continue;
        DeviceUsage d;
        d.index = l.index;
        d.shares = l.shares;
        d.of = l.shares_per_device;
        d.memory_quota = l.memory_bytes;
        d.memory_peak = (*region)->Peak();
        d.busy_s = static_cast<double>((*region)->BusyNs()) / 1e9;
        step.devices.push_back(std::move(d));
      }
      usage.steps.push_back(std::move(step));
    }
    closedir(dir);
  }
  std::sort(usage.steps.begin(), usage.steps.end(),
            [](const StepUsage& a, const StepUsage& b) { return a.step < b.step; });
  return usage;
}

// Contract: nothing throws out of here (jsoncpp's parser throws for nesting
// past its stack limit: that comment is not ours either), and the other
// nodes' entries are written back as they were read: numbers keep 15
// significant digits, so a value such as "of":0.04 is not rounded to 0,
// which would make the whole record unreadable for vgpuctl report. This
// node's own figures are rounded to tenths (Tenths) before they are written.
namespace {

// `text` parsed when it is one of our comments ({"vgpu":1,"nodes":{...}}).
bool ParseOurComment(const std::string& text, Json::Value* parsed) {
  Json::CharReaderBuilder rb;
  std::unique_ptr<Json::CharReader> reader(rb.newCharReader());
  std::string errs;
  try {
    return reader->parse(text.data(), text.data() + text.size(), parsed, &errs) && parsed->isObject() &&
           parsed->isMember("vgpu") && (*parsed)["nodes"].isObject();
  } catch (const Json::Exception&) {
    return false;
  }
}

std::string Compact(const Json::Value& root) {
  Json::StreamWriterBuilder wb;
  wb["indentation"] = "";
  wb["precisionType"] = "significant";
  wb["precision"] = 15;
  return Json::writeString(wb, root);
}

}  // namespace

std::string NodeComment(const NodeUsage& usage) {
  Json::Value root(Json::objectValue);
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
  if (!usage.steps.empty()) {
    Json::Value steps(Json::objectValue);
    for (const StepUsage& st : usage.steps) {
      Json::Value list(Json::arrayValue);
      for (const DeviceUsage& d : st.devices) {
        Json::Value v(Json::objectValue);
        v["index"] = d.index;
        v["shares"] = d.shares;
        v["memory_quota"] = Json::UInt64(d.memory_quota);
        v["memory_peak"] = Json::UInt64(d.memory_peak);
        v["busy_s"] = Tenths(d.busy_s);
        list.append(v);
      }
      steps[std::to_string(st.step)] = list;
    }
    node["steps"] = steps;
  }
  root["nodes"][usage.node] = node;
  return Compact(root);
}

Result<std::string> MergeNodeComment(const std::string& existing, const std::string& node_comment) {
  using R = Result<std::string>;
  Json::Value root(Json::objectValue), add;
  if (!ParseOurComment(node_comment, &add))
    return R::Error("not a vgpu usage record: \"" + node_comment.substr(0, 60) + "\"");
  if (!existing.empty() && !ParseOurComment(existing, &root))
    return R::Error("the job's AdminComment holds other text (\"" + existing.substr(0, 60) +
                    "\"); vgpu usage is not written over it");
  root["vgpu"] = 1;
  for (const std::string& node : add["nodes"].getMemberNames()) root["nodes"][node] = add["nodes"][node];
  return Compact(root);
}

Result<std::string> MergeUsageComment(const std::string& existing, const NodeUsage& usage) {
  return MergeNodeComment(existing, NodeComment(usage));
}

Status RecordUsage(CommentStore& store, const NodeUsage& usage, int rank, int nodes,
                   const std::function<void(int)>& sleep_ms, UsageRetry* retry) {
  if (retry) *retry = UsageRetry::kNever;
  const std::string node_comment = NodeComment(usage);
  if (nodes > 1) sleep_ms(std::min(rank, 100) * 200);
  std::string why;
  int not_there = 0, rc = CommentStore::kError;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string existing;
    rc = store.Get(&existing, &why);
    if (rc == CommentStore::kNoJob && ++not_there < 5) {
      sleep_ms(1000);
      continue;
    }
    if (rc != CommentStore::kOk) break;
    auto merged = MergeNodeComment(existing, node_comment);
    if (!merged.ok()) return Status::Error(merged.message());  // never better later
    if (*merged == existing) return Status::Ok();  // our entry is in
    if (store.Set(*merged, &why) != CommentStore::kOk) {
      rc = CommentStore::kError;
      break;
    }
    if (nodes == 1) return Status::Ok();
    sleep_ms(300);  // a node that read before our write writes meanwhile
  }
  if (retry) *retry = rc == CommentStore::kError ? UsageRetry::kDatabaseAway : UsageRetry::kNotYet;
  if (why.empty())
    why = rc == CommentStore::kNoJob ? "the job is not in the accounting database yet"
                                     : "other nodes kept writing over this node's entry";
  return Status::Error(why);
}

}  // namespace vgpu
