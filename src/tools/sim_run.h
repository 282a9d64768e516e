// vgpu-sim's replay: the "sampling inflation" method of Weng et al.
// (ATC '23) as shared/traces/alibaba-openb-2023/METHOD.md defines it. Tasks
// are drawn uniformly with replacement from the pod list (std::mt19937_64
// seeded with the run's seed) and placed one by one with the policy; a task
// that fits nowhere is counted as failed; nothing ever leaves. Drawing stops
// right after the task that makes the arrived device demand reach
// stop_percent of the capacity.
//
// Units. gpu_milli becomes shares at S by rounding up (exact at S=1000):
// a sharing task takes ceil(gpu_milli * S / 1000) shares of one device, a
// task of k whole GPUs k*S shares. Arrived and allocated demand are counted
// in what the tasks asked (GPU-milli: num_gpu * gpu_milli), as percentages of
// the capacity (all devices * 1000). The shares rounding takes beyond that
// are therefore unallocated: the figures show what a coarser S costs.
#ifndef VGPU_TOOLS_SIM_RUN_H_
#define VGPU_TOOLS_SIM_RUN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "placement/placement.h"
#include "trace_csv.h"
#include "util/status.h"

namespace vgpu::sim {

// A trace ready to replay at S shares per device.
struct SimTrace {
  ClusterState cluster;
  std::vector<Request> requests;  // one per task, in file order
  std::vector<std::string> names; // task names, same order
  std::vector<uint64_t> demand_milli;  // GPU-milli each task asks, same order
  // What fgd and pool learn from: the task classes of the trace's own pod
  // list (all of them by default; fgd keeps the top 95 % itself).
  std::shared_ptr<const WorkloadModel> workload;
  // The fragmentation measure of the reports: METHOD.md's target workload
  // (top 95 % of the classes, as fgd uses).
  std::shared_ptr<const WorkloadModel> frag_model;
};

// One task as a request at S (see Units). Error if the task breaks the
// trace's rules (e.g. num_gpu = 2 with gpu_milli = 500).
Result<Request> TaskRequest(const TraceTask& task, const ClusterState& cluster, uint32_t s);

// Cluster and requests at S. Errors: no node, no device, a bad task, or a
// pod list without any device demand (the replay would never stop).
Result<SimTrace> PrepareTrace(const std::vector<TraceNode>& nodes,
                              const std::vector<TraceTask>& tasks, uint32_t s,
                              double coverage = 1.0);

struct SimOptions {
  std::vector<std::string> policies;  // names for MakePolicy
  std::vector<uint64_t> seeds;
  unsigned threads = 0;               // 0: hardware concurrency
  uint32_t stop_percent = 130;
};

// The state right after the task that first made arrived >= p% of capacity.
struct CurvePoint {
  bool reached = false;
  double unallocated_pct = 0;  // (capacity - allocated) / capacity
  double allocation_pct = 0;   // allocated / arrived
  double frag_rate_pct = 0;    // cluster fragmentation / free shares
  double frag_pct = 0;         // cluster fragmentation / capacity
};

struct RunResult {
  std::string policy;
  uint64_t seed = 0;
  uint64_t tasks = 0;   // drawn
  uint64_t failed = 0;  // fitted nowhere
  double arrived_pct = 0;      // at the end
  double unallocated_pct = 0;  // at the end
  std::vector<CurvePoint> curve;   // index = percent, 0..stop_percent
  // The authors' reading: mean unallocated % over the tasks whose arrived %
  // rounds to the index (NaN where none).
  std::vector<double> authors_unallocated_pct;
  std::vector<uint32_t> latency_ns;  // per decision, in draw order
  double seconds = 0;                // wall time of the run
};

// One (policy, seed) replay. Errors: unknown policy, or a policy failure.
Result<RunResult> RunOne(const SimTrace& trace, const std::string& policy, uint64_t seed,
                         uint32_t stop_percent = 130);

// Every policy on every seed, spread over threads; results are ordered by
// policy (as given), then seed. The first error, if any, is returned.
Result<std::vector<RunResult>> RunAll(const SimTrace& trace, const SimOptions& options);

}  // namespace vgpu::sim

#endif  // VGPU_TOOLS_SIM_RUN_H_
