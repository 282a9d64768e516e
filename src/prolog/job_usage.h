// What a job used on this node, read by vgpu-epilog from the job's usage
// regions before they are removed, and the compact JSON it is recorded as
// in the job's AdminComment, where sacct and `vgpuctl report` show it:
//
//   {"vgpu":1,"nodes":{"n1":{"wall_s":61.2,"devices":[{"index":0,
//    "type":"ascend","model":"ascend-910b","shares":10,"of":100,
//    "memory_quota":6871947673,"memory_peak":1073741824,"busy_s":12.5,
//    "slice":"vir03_1c_8g"}]}}}
//
// One entry per node: each node's epilog merges its own into what the
// comment already holds. "slice" only for a device cut as a hardware slice.
// Steps that held part of the job's shares are kept apart under "steps":
//   "steps":{"0":[{"index":0,"shares":20,"memory_quota":...,
//    "memory_peak":...,"busy_s":...}]}
#ifndef VGPU_PROLOG_JOB_USAGE_H_
#define VGPU_PROLOG_JOB_USAGE_H_

#include <cstdint>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "jobs/hardware_slice.h"
#include "jobs/job_allocation.h"
#include "util/status.h"

namespace vgpu {

struct DeviceUsage {
  uint32_t index = 0;  // the job's device index (limits file order)
  std::string type, model;
  uint32_t shares = 0, of = 0;
  uint64_t memory_quota = 0;  // what the job could hold (the limit)
  uint64_t memory_peak = 0;   // the most the job's processes held at once
  double busy_s = 0;          // device time the job's kernels took
  std::string slice;          // the slice's profile, "" when none
};

// A job step that held part of the job's shares (jobs/step_limits.h):
// what it used of each device it held shares of (type, model and slice are
// the job's, not repeated).
struct StepUsage {
  uint32_t step = 0;
  std::vector<DeviceUsage> devices;
};

struct NodeUsage {
  std::string node;
  double wall_s = 0;  // since the prolog made the job's directory
  std::vector<DeviceUsage> devices;  // the job's, all its steps together
  std::vector<StepUsage> steps;      // in step order
};

// Reads the job's limits file and regions under `run_dir`. `now`: the
// epilog's time. An error when the job's directory is missing or bad.
Result<NodeUsage> ReadNodeUsage(const std::string& run_dir, const JobAllocation& job,
                                const std::vector<HardwareSlice>& slices, const std::string& node,
                                time_t now);

// The comment of this node's usage alone: {"vgpu":1,"nodes":{"<node>":{...}}}.
std::string NodeComment(const NodeUsage& usage);

// `existing` (the job's AdminComment, may be empty) with the node entries
// of `node_comment` (one of ours) added or replaced. An existing comment
// that is not ours is an error: it is the administrators', and is never
// overwritten.
Result<std::string> MergeNodeComment(const std::string& existing, const std::string& node_comment);
Result<std::string> MergeUsageComment(const std::string& existing, const NodeUsage& usage);

// The job's AdminComment where it is kept (the accounting database; a
// seam, so that tests interleave several nodes' writes).
class CommentStore {
 public:
  enum { kOk = 0, kNoJob = -2, kError = -1 };
  virtual ~CommentStore() = default;
  // kNoJob: the job is not there (yet). `why` gets the reason of a failure.
  virtual int Get(std::string* comment, std::string* why) = 0;
  virtual int Set(const std::string& comment, std::string* why) = 0;
};

// Merges this node's usage into the job's comment. A job not in the store
// yet (its record comes through slurmctld's queue) is waited for: five
// reads, 1 s apart. Read, merge and write is not atomic, and every node of
// a job writes the one comment: on a multi-node job (`nodes` > 1) the
// nodes take turns (200 ms apart by `rank`), and each reads the comment
// back 300 ms after writing, writing again when another node's write has
// lost its entry; best effort, 8 tries. `sleep_ms` waits (a seam for tests).
// On an error, `*retry` (when given) says whether a later try may
// succeed: never when the comment holds someone else's text; later when
// the database did not answer (kDatabaseAway), or answered but the write
// did not happen (kNotYet: the job's record may still be in slurmctld's
// queue, behind a backlog, or other nodes kept writing over this one's).
enum class UsageRetry { kNever, kDatabaseAway, kNotYet };
Status RecordUsage(CommentStore& store, const NodeUsage& usage, int rank, int nodes,
                   const std::function<void(int)>& sleep_ms, UsageRetry* retry = nullptr);

}  // namespace vgpu

#endif  // VGPU_PROLOG_JOB_USAGE_H_
