// vgpu-exporter's metrics: what one scrape shows, built from a snapshot of
// the pool (slurmctld's view, tools/pool_status.h) and of this node's jobs
// (exporter_usage.h), as prometheus-cpp metric families. Names follow
// Prometheus' conventions: slurm_vgpu_*, units in the name, _total for
// counters. The list with their labels is in vgpu-exporter(8).
#ifndef VGPU_TOOLS_EXPORTER_METRICS_H_
#define VGPU_TOOLS_EXPORTER_METRICS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

#include "exporter_usage.h"
#include "pool_status.h"

namespace vgpu::exporter {

// What one collection found. A part not asked for (--pool or --node off)
// is left out of the metrics; a part that failed shows as *_up 0.
struct Snapshot {
  bool pool_asked = false;
  std::optional<status::PoolStatus> pool;
  std::string pool_error;
  bool usage_asked = false;
  std::vector<JobDeviceUsage> usage;
  std::vector<std::string> usage_problems;
  std::string node_name;  // this host's, for jobs the pool does not place
  double collect_seconds = 0;
};

// The node each job runs on, by the pool (first node of a job of several);
// jobs the pool does not know (no pool asked, or not running any more)
// are `fallback`'s.
std::string NodeOfJob(const Snapshot& s, uint32_t job_id);

// Device time and refusals of this node's jobs as counters that outlive
// the jobs: each collection adds what grew since the last one, so that a
// job's end does not lower the node's total. Keyed by node, since in the
// lab one host holds the run directories of several nodes.
class NodeTotals {
 public:
  void Add(const Snapshot& s);
  double busy_seconds(const std::string& node) const;
  uint64_t refusals(const std::string& node) const;
  std::vector<std::string> nodes() const;

 private:
  struct Seen {
    uint64_t busy_ns = 0, refusals = 0;
  };
  std::map<std::pair<uint32_t, uint32_t>, Seen> last_;  // (job, device) of the last collection
  std::map<std::string, Seen> totals_;
};

// Node states that take a node out of the pool (drained, down, failing,
// invalid, not responding): its shares cannot be allocated.
bool OutOfPool(const std::string& state);

std::vector<prometheus::MetricFamily> BuildMetrics(const Snapshot& s, const NodeTotals& totals);

// The families in Prometheus' text exposition format (version 0.0.4).
std::string MetricsText(const std::vector<prometheus::MetricFamily>& families);

}  // namespace vgpu::exporter

#endif  // VGPU_TOOLS_EXPORTER_METRICS_H_
