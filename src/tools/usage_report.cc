// Reading sacct --json and the epilog's AdminComment, and summing them (see
// usage_report.h).
#include "usage_report.h"

#include <json/json.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include "slurm_json.h"
#include "util/text.h"

namespace vgpu::report {

namespace {

using slurm_json::Get;
using slurm_json::Number;
using slurm_json::StringOr;
using slurm_json::Time;
using slurm_json::Whole;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One device of the record; nullopt when a required field is bad.
std::optional<DeviceUsage> ParseDevice(const std::string& node, const Json::Value& d) {
  if (!d.isObject()) return std::nullopt;
  DeviceUsage u;
  u.node = node;
  auto index = Whole(d["index"]);
  auto shares = Number(d["shares"]), of = Number(d["of"]), busy = Number(d["busy_s"]);
  auto quota = Whole(d["memory_quota"]), peak = Whole(d["memory_peak"]);
  if (!index || *index > UINT32_MAX || !d["type"].isString() || !shares || *shares < 0 || !of || *of <= 0 ||
      !busy || *busy < 0 || !quota || !peak)
    return std::nullopt;
  for (const char* optional : {"model", "slice"})
    if (d.isMember(optional) && !d[optional].isString() && !d[optional].isNull()) return std::nullopt;
  u.index = static_cast<uint32_t>(*index);
  u.type = Lower(d["type"].asString());
  u.model = Lower(StringOr(d["model"]));
  u.slice = StringOr(d["slice"]);
  u.shares = *shares;
  u.of = *of;
  u.busy_s = *busy;
  u.memory_quota = *quota;
  u.memory_peak = *peak;
  if (u.type.empty()) return std::nullopt;
  return u;
}

// The tres.allocated list into job->allocated.
void ReadAllocated(const Json::Value& list, JobRecord* job) {
  if (!list.isArray()) return;
  for (const Json::Value& t : list) {
    if (!t.isObject() || Lower(StringOr(t["type"])) != "gres") continue;
    std::string name = Lower(StringOr(t["name"]));
    std::optional<uint64_t> count = Whole(t["count"]);
    if (!count || *count == 0) continue;
    if (name == "vgpu") job->allocated[""] += *count;
    else if (name.rfind("vgpu:", 0) == 0 && name.size() > 5) job->allocated[name.substr(5)] += *count;
  }
}

}  // namespace

std::optional<std::vector<DeviceUsage>> ParseUsageComment(const std::string& comment) {
  std::string text = Trim(comment);
  if (text.empty() || text[0] != '{') return std::nullopt;
  Result<Json::Value> root = slurm_json::Parse(text);
  if (!root.ok() || !root->isObject()) return std::nullopt;
  std::optional<uint64_t> version = Whole((*root)["vgpu"]);
  const Json::Value& nodes = (*root)["nodes"];
  if (!version || *version != 1 || !nodes.isObject()) return std::nullopt;
  std::vector<DeviceUsage> devices;
  std::vector<std::string> names = nodes.getMemberNames();  // sorted
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const Json::Value& node = nodes[name];
    if (!node.isObject() || !node["devices"].isArray()) return std::nullopt;
    for (const Json::Value& d : node["devices"]) {
      std::optional<DeviceUsage> u = ParseDevice(name, d);
      if (!u) return std::nullopt;
      devices.push_back(std::move(*u));
    }
  }
  return devices;
}

bool JobRecord::HasVgpu() const {
  for (const auto& [type, count] : allocated)
    if (count > 0) return true;
  return false;
}

Result<std::vector<JobRecord>> ParseSacctJson(const std::string& text) {
  using R = Result<std::vector<JobRecord>>;
  Result<Json::Value> root = slurm_json::Parse(text);
  if (!root.ok()) return R::Error("is not JSON: " + root.message());
  if (!root->isObject() || !(*root)["jobs"].isArray())
    return R::Error("is not sacct --json output: it has no \"jobs\" list");
  std::string errors = slurm_json::Errors(*root);
  if (!errors.empty()) return R::Error("reports an error: " + errors);
  std::vector<JobRecord> jobs;
  const Json::Value& list = (*root)["jobs"];
  for (Json::ArrayIndex i = 0; i < list.size(); ++i) {
    const Json::Value& j = list[i];
    if (!j.isObject())
      return R::Error("is not sacct --json output: jobs[" + std::to_string(i) + "] is not an object");
    JobRecord job;
    job.job_id = Whole(j["job_id"]).value_or(0);
    job.user = StringOr(j["user"]);
    job.account = StringOr(j["account"]);
    const Json::Value& state = Get(j["state"], "current");
    job.state = state.isArray() && !state.empty() ? StringOr(state[0]) : StringOr(state);
    const Json::Value& time = j["time"];
    job.start = Time(Get(time, "start"));
    job.end = Time(Get(time, "end"));
    job.elapsed_s = std::max(0.0, Number(Get(time, "elapsed")).value_or(0));
    ReadAllocated(Get(j["tres"], "allocated"), &job);
    if (std::optional<std::vector<DeviceUsage>> usage = ParseUsageComment(StringOr(Get(j["comment"], "administrator")))) {
      job.has_usage = true;
      job.devices = std::move(*usage);
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

double Row::UsedPercent() const {
  return requested_sh_with_usage > 0 ? used_sh / requested_sh_with_usage * 100.0 : kNaN;
}

double Row::MemoryEfficiencyPercent() const {
  return memory_quota > 0 ? static_cast<double>(memory_peak) / static_cast<double>(memory_quota) * 100.0 : kNaN;
}

const char* GroupName(GroupBy g) {
  switch (g) {
    case GroupBy::kUser: return "user";
    case GroupBy::kAccount: return "account";
    case GroupBy::kType: return "type";
  }
  return "?";
}

const std::vector<Row>& Summary::Rows(GroupBy g) const {
  return g == GroupBy::kUser ? by_user : g == GroupBy::kAccount ? by_account : by_type;
}

namespace {

// A job's figures before grouping: one Row per type (key = type), each with
// jobs = 1.
std::map<std::string, Row> JobByType(const JobRecord& job) {
  std::map<std::string, Row> out;
  const double hours = job.elapsed_s / 3600.0;
  std::map<std::string, uint64_t> typed = job.allocated;
  uint64_t untyped = 0;
  if (auto it = typed.find(""); it != typed.end()) untyped = it->second, typed.erase(it);
  if (typed.empty() && untyped > 0) {  // only gres/vgpu tracked: the devices' type, if one
    std::set<std::string> types;
    for (const DeviceUsage& d : job.devices) types.insert(d.type);
    typed[types.size() == 1 ? *types.begin() : "untyped"] = untyped;
  }
  for (const auto& [type, count] : typed) out[type].requested_sh += static_cast<double>(count) * hours;
  for (const DeviceUsage& d : job.devices) {
    std::string key = typed.count(d.type) ? d.type : typed.count(d.model) ? d.model : d.type;
    Row& r = out[key];
    r.used_sh += d.busy_s / 3600.0 * d.of;
    r.memory_peak += d.memory_peak;
    r.memory_quota += d.memory_quota;
  }
  for (auto& [type, r] : out) {
    r.key = type;
    r.jobs = 1;
    r.jobs_with_usage = job.has_usage ? 1 : 0;
    r.requested_sh_with_usage = job.has_usage ? r.requested_sh : 0;
  }
  return out;
}

void Add(Row* into, const Row& r) {
  into->jobs += r.jobs;
  into->jobs_with_usage += r.jobs_with_usage;
  into->requested_sh += r.requested_sh;
  into->requested_sh_with_usage += r.requested_sh_with_usage;
  into->used_sh += r.used_sh;
  into->memory_peak += r.memory_peak;
  into->memory_quota += r.memory_quota;
}

// A job's types merged into one row (jobs = 1).
Row Merge(const std::map<std::string, Row>& by_type) {
  Row one;
  for (const auto& [type, r] : by_type) {
    Add(&one, r);
  }
  one.jobs = by_type.empty() ? 0 : 1;
  one.jobs_with_usage = by_type.empty() ? 0 : by_type.begin()->second.jobs_with_usage;
  return one;
}

std::vector<Row> Sorted(std::map<std::string, Row> rows) {
  std::vector<Row> out;
  for (auto& [key, r] : rows) {
    r.key = key;
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const Row& a, const Row& b) { return a.requested_sh > b.requested_sh; });
  return out;
}

std::string KeyOr(const std::string& key) { return key.empty() ? "(none)" : key; }

}  // namespace

Summary Summarise(const std::vector<JobRecord>& jobs) {
  Summary s;
  std::map<std::string, Row> users, accounts, types;
  s.total.key = "total";
  for (const JobRecord& job : jobs) {
    ++s.records;
    if (!job.HasVgpu()) {
      if (job.has_usage) ++s.usage_without_vgpu;
      continue;
    }
    std::map<std::string, Row> by_type = JobByType(job);
    Row one = Merge(by_type);
    Add(&users[KeyOr(job.user)], one);
    Add(&accounts[KeyOr(job.account)], one);
    Add(&s.total, one);
    for (const auto& [type, r] : by_type) Add(&types[type], r);
  }
  s.by_user = Sorted(std::move(users));
  s.by_account = Sorted(std::move(accounts));
  s.by_type = Sorted(std::move(types));
  return s;
}

}  // namespace vgpu::report
