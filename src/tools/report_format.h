// vgpuctl report's outputs: text tables, CSV, JSON and the bar chart of a
// Summary (usage_report.h).
//
// Columns of every table and CSV row: the key (user, account or type),
// jobs, jobs with usage, requested share-hours, used share-hours, used %
// (used over what jobs with usage requested), memory peak and quota (GiB,
// 2^30 bytes) and memory efficiency % (peak over quota). 100 shares are one
// device, so 100 share-hours are one device-hour. An undefined ratio is "-"
// in tables, an empty field in CSV and null in JSON.
#ifndef VGPU_TOOLS_REPORT_FORMAT_H_
#define VGPU_TOOLS_REPORT_FORMAT_H_

#include <string>
#include <vector>

#include "svg_plot.h"
#include "usage_report.h"

namespace vgpu::report {

// Where the jobs came from, for the headings.
struct ReportSource {
  std::string since, until;  // as given to sacct; "" = not given
  std::string input;         // the file read instead of sacct; "" = sacct
};

// One table per group, in the order given, each with a heading line, a
// header, a row per key and a "total" row, tables separated by a blank
// line. Share-hours with 2 decimals, % with 1, GiB with 2.
std::string FormatTable(const Summary& s, const std::vector<GroupBy>& groups, const ReportSource& source);

// A header line
//   group,key,jobs,jobs_with_usage,requested_share_hours,used_share_hours,
//   used_percent,memory_peak_gib,memory_quota_gib,memory_efficiency_percent
// then a row per key of each group (group = "user", "account", "type") and
// one row "total,total,...". Share-hours with 4 decimals, % with 2, GiB
// with 4; keys quoted per RFC 4180 where they need it.
std::string FormatCsv(const Summary& s, const std::vector<GroupBy>& groups);

// {"source": {"since", "until", "input"}, "records": N,
//  "usage_without_vgpu_tres": N,
//  "by_user": [ROW...], "by_account": [...], "by_type": [...] (the groups
//  asked for), "total": ROW}
// ROW = {"key", "jobs", "jobs_with_usage", "requested_share_hours",
//        "requested_share_hours_with_usage", "used_share_hours",
//        "used_percent", "memory_peak_bytes", "memory_quota_bytes",
//        "memory_efficiency_percent"}; bytes are exact integers.
std::string FormatJson(const Summary& s, const std::vector<GroupBy>& groups, const ReportSource& source);

// Requested and used share-hours per user, the `max_users` users that
// requested most, the others summed into one last bar "others (N users)".
sim::BarChartSpec MakeUserChart(const Summary& s, size_t max_users = 30);

}  // namespace vgpu::report

#endif  // VGPU_TOOLS_REPORT_FORMAT_H_
