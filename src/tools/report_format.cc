// Tables, CSV, JSON and the chart of vgpuctl report (see report_format.h).
#include "report_format.h"

#include <json/json.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "util/text.h"

namespace vgpu::report {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// `v` with `digits` decimals, or `undefined` when it is not finite.
std::string Fixed(double v, int digits, const std::string& undefined) {
  if (!std::isfinite(v)) return undefined;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

double GiB(uint64_t bytes) { return static_cast<double>(bytes) / kGiB; }

// The cells of a row after the key; `decimals` for share-hours, % and GiB.
std::vector<std::string> Cells(const Row& r, int sh, int pct, int gib, const std::string& undefined) {
  return {std::to_string(r.jobs),
          std::to_string(r.jobs_with_usage),
          Fixed(r.requested_sh, sh, undefined),
          Fixed(r.used_sh, sh, undefined),
          Fixed(r.UsedPercent(), pct, undefined),
          Fixed(GiB(r.memory_peak), gib, undefined),
          Fixed(GiB(r.memory_quota), gib, undefined),
          Fixed(r.MemoryEfficiencyPercent(), pct, undefined)};
}

std::string Heading(GroupBy g, const ReportSource& src) {
  std::string h = std::string("vgpu usage by ") + GroupName(g) + ", ";
  if (!src.input.empty()) return h + "jobs from " + OneLine(src.input);
  h += "jobs since " + (src.since.empty() ? std::string("midnight") : src.since);
  return h + (src.until.empty() ? "" : " until " + src.until);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

Json::Value Num(double v) { return std::isfinite(v) ? Json::Value(v) : Json::Value(); }

Json::Value RowJson(const Row& r) {
  Json::Value v(Json::objectValue);
  v["key"] = r.key;
  v["jobs"] = Json::UInt64(r.jobs);
  v["jobs_with_usage"] = Json::UInt64(r.jobs_with_usage);
  v["requested_share_hours"] = Num(r.requested_sh);
  v["requested_share_hours_with_usage"] = Num(r.requested_sh_with_usage);
  v["used_share_hours"] = Num(r.used_sh);
  v["used_percent"] = Num(r.UsedPercent());
  v["memory_peak_bytes"] = Json::UInt64(r.memory_peak);
  v["memory_quota_bytes"] = Json::UInt64(r.memory_quota);
  v["memory_efficiency_percent"] = Num(r.MemoryEfficiencyPercent());
  return v;
}

}  // namespace

std::string FormatTable(const Summary& s, const std::vector<GroupBy>& groups, const ReportSource& source) {
  static const char* const kHeader[] = {"JOBS",         "WITH_USAGE",    "REQ_SHARE_H", "USED_SHARE_H", "USED_%",
                                        "MEM_PEAK_GIB", "MEM_QUOTA_GIB", "MEM_EFF_%"};
  std::string out;
  for (GroupBy g : groups) {
    std::vector<std::vector<std::string>> lines;
    std::string key_header = GroupName(g);
    for (char& c : key_header) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    lines.push_back({key_header});
    for (const char* h : kHeader) lines.back().push_back(h);
    std::vector<const Row*> rows;
    for (const Row& r : s.Rows(g)) rows.push_back(&r);
    rows.push_back(&s.total);
    for (const Row* r : rows) {
      lines.push_back({OneLine(r->key)});
      for (std::string& cell : Cells(*r, 2, 1, 2, "-")) lines.back().push_back(std::move(cell));
    }
    std::vector<size_t> width(lines[0].size(), 0);
    for (const auto& line : lines)
      for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
    if (!out.empty()) out += "\n";
    out += Heading(g, source) + "\n";
    for (const auto& line : lines) {
      std::string text;
      for (size_t i = 0; i < line.size(); ++i) {  // key left-aligned, numbers right-aligned
        std::string pad(width[i] - line[i].size(), ' ');
        text += i == 0 ? line[i] + pad : "  " + pad + line[i];
      }
      out += Trim(text) + "\n";
    }
  }
  return out;
}

std::string FormatCsv(const Summary& s, const std::vector<GroupBy>& groups) {
  std::string out =
      "group,key,jobs,jobs_with_usage,requested_share_hours,used_share_hours,used_percent,"
      "memory_peak_gib,memory_quota_gib,memory_efficiency_percent\n";
  auto line = [&](const std::string& group, const Row& r) {
    out += group + "," + CsvField(r.key);
    for (const std::string& cell : Cells(r, 4, 2, 4, "")) out += "," + cell;
    out += "\n";
  };
  for (GroupBy g : groups)
    for (const Row& r : s.Rows(g)) line(GroupName(g), r);
  line("total", s.total);
  return out;
}

std::string FormatJson(const Summary& s, const std::vector<GroupBy>& groups, const ReportSource& source) {
  Json::Value root(Json::objectValue);
  Json::Value& src = root["source"];
  src["since"] = source.since.empty() ? Json::Value() : Json::Value(source.since);
  src["until"] = source.until.empty() ? Json::Value() : Json::Value(source.until);
  src["input"] = source.input.empty() ? Json::Value() : Json::Value(source.input);
  root["records"] = Json::UInt64(s.records);
  root["usage_without_vgpu_tres"] = Json::UInt64(s.usage_without_vgpu);
  for (GroupBy g : groups) {
    Json::Value& rows = root[std::string("by_") + GroupName(g)] = Json::Value(Json::arrayValue);
    for (const Row& r : s.Rows(g)) rows.append(RowJson(r));
  }
  root["total"] = RowJson(s.total);
  Json::StreamWriterBuilder b;
  b["indentation"] = " ";
  b["precision"] = 12;  // 0.1 stays 0.1
  return Json::writeString(b, root) + "\n";
}

sim::BarChartSpec MakeUserChart(const Summary& s, size_t max_users) {
  sim::BarChartSpec spec;
  spec.title = "vgpu share-hours per user: requested and used";
  spec.y_label = "share-hours (100 = one device-hour)";
  spec.series = {"requested", "used"};
  std::vector<double> others = {0, 0};
  size_t rest = 0;
  for (const Row& r : s.by_user) {  // largest request first
    if (spec.categories.size() < max_users) {
      spec.categories.push_back(r.key);
      spec.values.push_back({r.requested_sh, r.used_sh});
    } else {
      others[0] += r.requested_sh, others[1] += r.used_sh, ++rest;
    }
  }
  if (rest > 0) {
    spec.categories.push_back("others (" + std::to_string(rest) + " users)");
    spec.values.push_back(others);
  }
  return spec;
}

}  // namespace vgpu::report
