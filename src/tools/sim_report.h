// vgpu-sim's reports: statistics over seeds, the text table, the JSON
// document and the plot of a set of runs (see sim_run.h).
#ifndef VGPU_TOOLS_SIM_REPORT_H_
#define VGPU_TOOLS_SIM_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim_run.h"
#include "svg_plot.h"

namespace vgpu::sim {

// Mean, extremes and (sample) standard deviation; NaN values are skipped,
// and with no value left every field is NaN and n is 0.
struct Stat {
  double mean = 0, min = 0, max = 0, stddev = 0;
  size_t n = 0;
};
Stat Summarise(const std::vector<double>& values);

// Nearest-rank percentile (0 < q <= 1) of `values`, which it reorders; 0 if
// empty.
double Percentile(std::vector<uint32_t>* values, double q);

// The headline readings.
constexpr uint32_t kMarks[] = {90, 100, 110, 130};

struct PolicySummary {
  std::string policy;
  size_t runs = 0;
  // Per arrived percent 0..stop, over seeds ("first reach" readings).
  std::vector<Stat> unallocated, allocation, frag_rate, frag, authors_unallocated;
  Stat tasks, failed, seconds;
  uint64_t decisions = 0;
  double latency_p50_us = 0, latency_p99_us = 0, latency_max_us = 0;
};

// Groups runs by policy, in order of first appearance.
std::vector<PolicySummary> SummariseRuns(const std::vector<RunResult>& runs);

struct ReportMeta {
  std::string nodes_path, pods_path;
  uint32_t shares_per_device = 0;
  std::vector<uint64_t> seeds;
  unsigned threads = 0;
  double wall_seconds = 0;
  size_t nodes = 0, devices = 0, tasks = 0;
  size_t classes_kept = 0;      // in fgd's (and the fragmentation metric's) model
  size_t classes_distinct = 0;  // in the pod list
};

// One table: a row per policy, unallocated % at 90/100/110/130 % arrived
// (mean, and min..max where there are several seeds), allocation and
// fragmentation rate at 100 %, failed tasks, decision latency p50/p99.
std::string FormatTable(const std::vector<PolicySummary>& s, const ReportMeta& meta);

// Everything: settings, per-policy statistics at the marks, the curve at
// every percent (mean/min/max unallocated), latency, and per-run figures.
std::string FormatJson(const std::vector<PolicySummary>& s, const std::vector<RunResult>& runs,
                       const ReportMeta& meta);

// Unallocated % against arrived % (from 80 %), a band of min..max over
// seeds per policy, a guide at 100 %.
PlotSpec MakePlot(const std::vector<PolicySummary>& s, const ReportMeta& meta);

}  // namespace vgpu::sim

#endif  // VGPU_TOOLS_SIM_REPORT_H_
