// Usage vgpu-epilog could not record because the accounting database did
// not answer (slurmdbd or MariaDB down, the job's record still in
// slurmctld's queue): kept on the node's disk as <job>.<node>.json (the
// node's comment, job_usage.h) in a directory of root's, and recorded by a
// later vgpu-epilog on the node once the database answers again. Records
// the database still does not know after `kMaxAgeSeconds` are dropped
// (the job's record never came; sacct would show no usage anyway).
#ifndef VGPU_PROLOG_PENDING_USAGE_H_
#define VGPU_PROLOG_PENDING_USAGE_H_

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "job_usage.h"
#include "util/status.h"

namespace vgpu {

class PendingUsage {
 public:
  static constexpr time_t kMaxAgeSeconds = 30 * 24 * 3600;

  explicit PendingUsage(std::string dir) : dir_(std::move(dir)) {}

  // Writes the record (the directory is made 0700 when missing). Returns
  // its path, for the log.
  Result<std::string> Keep(uint32_t job, const std::string& node, const std::string& node_comment) const;

  // Records what is kept, oldest first, each through `store_for(job)`, one
  // try each without waiting; stops at the first record the database does
  // not answer for (it is still away). Removes each record recorded, or
  // refused for good (the comment holds other text), or too old.
  // `log` gets one line per record dealt with.
  struct Flushed {
    int recorded = 0, dropped = 0, left = 0;
  };
  Flushed Flush(const std::function<std::unique_ptr<CommentStore>(uint32_t job)>& store_for, time_t now,
                std::vector<std::string>* log) const;

  // The jobs with a kept record, and their files.
  std::vector<std::pair<uint32_t, std::string>> Records() const;

 private:
  std::string dir_;
};

}  // namespace vgpu

#endif  // VGPU_PROLOG_PENDING_USAGE_H_
