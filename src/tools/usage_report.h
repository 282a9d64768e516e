// vgpuctl report's data: the jobs of a `sacct --json` document joined with
// the usage that the slurm-vgpu epilog writes into each job's AdminComment,
// and their sums by user, account and accelerator type.
//
// Input format: Slurm 22.05's sacct --json, i.e. the openapi dbv0.0.38 job
// dump (src/plugins/openapi/dbv0.0.38/parse.c, parse_job[]):
//   {"meta": {...}, "errors": [{"description", "error_number", "error",
//    "source"}...],
//    "jobs": [{"job_id": 42, "user": "alice", "account": "physics",
//              "state": {"current": "COMPLETED", "reason": "None"},
//              "time": {"elapsed": 3600, "start": T, "end": T, ...},
//              "tres": {"allocated": [{"type": "gres", "name": "vgpu:ascend",
//                                      "id": 1002, "count": 10}, ...],
//                       "requested": [...]},
//              "comment": {"administrator": "...", "job": ..., "system": ...},
//              ...}]}
// where every string may be null and every number may be null (NO_VAL,
// INFINITE). A number written as {"set": true, "number": N} (the format of
// later Slurm releases) is read as N.
//
// The epilog's AdminComment (compact JSON, one object):
//   {"vgpu":1,"nodes":{"n1":{"wall_s":61.2,"devices":[{"index":0,
//    "type":"ascend","model":"ascend-910b","shares":10,"of":100,
//    "memory_quota":6871947673,"memory_peak":1073741824,"busy_s":12.5,
//    "slice":"vir03_1c_8g"}]}}}          ("model", "slice" optional)
#ifndef VGPU_TOOLS_USAGE_REPORT_H_
#define VGPU_TOOLS_USAGE_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu::report {

// One device a job used on one node, as the epilog recorded it.
struct DeviceUsage {
  std::string node;
  uint32_t index = 0;
  std::string type;             // chip family, lower case: "nvidia", "ascend", "dcu"
  std::string model;            // catalog id, e.g. "ascend-910b"; "" when not recorded
  std::string slice;            // vendor slice template, e.g. "vir03_1c_8g"; "" when none
  double shares = 0;            // shares of this device the job held
  double of = 0;                // shares of the whole device (> 0)
  uint64_t memory_quota = 0;    // bytes the job could allocate on the device
  uint64_t memory_peak = 0;     // bytes it allocated at most
  double busy_s = 0;            // seconds the device was busy with the job's work
};

// The epilog's record in `comment`, its devices in node-name order, then in
// the record's order. nullopt when `comment` is not such a record: empty,
// other text, other JSON, "vgpu" other than 1, or a field missing or of the
// wrong type. Never an error: an admin comment may hold anything.
std::optional<std::vector<DeviceUsage>> ParseUsageComment(const std::string& comment);

// One job record of sacct (a requeued job has several, an array task or a
// heterogeneous job component has its own).
struct JobRecord {
  uint64_t job_id = 0;
  std::string user, account;    // "" when sacct gave null
  std::string state;            // state.current, e.g. "COMPLETED"
  int64_t start = 0, end = 0;   // Unix time; 0 = not (yet)
  double elapsed_s = 0;         // time.elapsed
  // Shares allocated (tres.allocated, type "gres"), by the type of
  // "gres/vgpu:<type>" in lower case; an untyped "gres/vgpu" count is under
  // "" (Slurm lists both for a typed request when both are tracked).
  std::map<std::string, uint64_t> allocated;
  bool has_usage = false;       // comment.administrator is an epilog record
  std::vector<DeviceUsage> devices;  // from that record

  // Whether any vgpu shares were allocated (typed or not).
  bool HasVgpu() const;
};

// The jobs of a sacct --json document, in its order. Errors (one line each):
// not JSON ("... is not JSON: <parser message>"), no "jobs" list, a job
// that is not an object, or an entry in "errors" other than "Nothing found"
// (which sacct gives for an empty time window: no jobs, no error).
Result<std::vector<JobRecord>> ParseSacctJson(const std::string& text);

// Sums over a set of jobs (one row of a table).
struct Row {
  std::string key;
  uint64_t jobs = 0;                    // jobs with vgpu shares allocated
  uint64_t jobs_with_usage = 0;         // ... of which with an epilog record
  double requested_sh = 0;              // allocated shares x elapsed hours
  double requested_sh_with_usage = 0;   // ... over jobs with usage only
  double used_sh = 0;                   // sum of busy_s / 3600 x of
  uint64_t memory_peak = 0, memory_quota = 0;  // bytes, over recorded devices

  // used_sh / requested_sh_with_usage in %; NaN when the latter is 0.
  double UsedPercent() const;
  // memory_peak / memory_quota in %; NaN when memory_quota is 0.
  double MemoryEfficiencyPercent() const;
};

enum class GroupBy { kUser, kAccount, kType };
const char* GroupName(GroupBy g);  // "user", "account", "type"

// All sums of one set of jobs. Jobs without vgpu shares are left out of
// every row. Rows are ordered by requested_sh, largest first, then by key.
struct Summary {
  std::vector<Row> by_user, by_account, by_type;
  Row total;                         // every job once (key "total")
  uint64_t records = 0;              // job records read
  uint64_t usage_without_vgpu = 0;   // records with an epilog record but no
                                     // vgpu TRES (AccountingStorageTRES lacks gres/vgpu?)
  const std::vector<Row>& Rows(GroupBy g) const;
};

// How a job's devices and shares fall into types: a device counts for the
// allocated type equal to its type or, failing that, its model; a job with
// only an untyped count gives it to its devices' type when they all have
// one, else to "untyped"; a device of no allocated type counts under its
// own type with nothing requested. A job in several types counts once in
// each of their rows.
Summary Summarise(const std::vector<JobRecord>& jobs);

}  // namespace vgpu::report

#endif  // VGPU_TOOLS_USAGE_REPORT_H_
