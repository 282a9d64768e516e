// Statistics, table, JSON and plot of vgpu-sim runs (see sim_report.h).
#include "sim_report.h"

#include <json/json.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>

namespace vgpu::sim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Pad(const std::string& s, size_t width, bool left = false) {
  if (s.size() >= width) return s;
  return left ? s + std::string(width - s.size(), ' ') : std::string(width - s.size(), ' ') + s;
}

// JSON number or null (jsoncpp would write NaN as a bare token).
Json::Value Num(double v) { return std::isfinite(v) ? Json::Value(v) : Json::Value(); }

Json::Value StatJson(const Stat& s) {
  Json::Value v(Json::objectValue);
  v["mean"] = Num(s.mean);
  v["min"] = Num(s.min);
  v["max"] = Num(s.max);
  v["stddev"] = Num(s.stddev);
  v["n"] = Json::UInt64(s.n);
  return v;
}

std::string SeedText(const std::vector<uint64_t>& seeds) {
  if (seeds.empty()) return "none";
  if (seeds.size() == 1) return std::to_string(seeds[0]);
  return std::to_string(seeds.front()) + ".." + std::to_string(seeds.back());
}

}  // namespace

Stat Summarise(const std::vector<double>& values) {
  Stat s;
  double sum = 0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    if (s.n == 0 || v < s.min) s.min = v;
    if (s.n == 0 || v > s.max) s.max = v;
    sum += v;
    ++s.n;
  }
  if (s.n == 0) return Stat{kNaN, kNaN, kNaN, kNaN, 0};
  s.mean = sum / static_cast<double>(s.n);
  double sq = 0;
  for (double v : values)
    if (std::isfinite(v)) sq += (v - s.mean) * (v - s.mean);
  s.stddev = s.n > 1 ? std::sqrt(sq / static_cast<double>(s.n - 1)) : 0.0;
  return s;
}

double Percentile(std::vector<uint32_t>* values, double q) {
  if (values->empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values->size())));
  rank = std::min(std::max<size_t>(rank, 1), values->size()) - 1;
  std::nth_element(values->begin(), values->begin() + static_cast<std::ptrdiff_t>(rank), values->end());
  return (*values)[rank];
}

std::vector<PolicySummary> SummariseRuns(const std::vector<RunResult>& runs) {
  std::vector<std::string> order;
  for (const auto& r : runs)
    if (std::find(order.begin(), order.end(), r.policy) == order.end()) order.push_back(r.policy);
  std::vector<PolicySummary> out;
  for (const auto& name : order) {
    PolicySummary s;
    s.policy = name;
    std::vector<const RunResult*> mine;
    for (const auto& r : runs)
      if (r.policy == name) mine.push_back(&r);
    s.runs = mine.size();
    size_t points = 0;
    for (const auto* r : mine) points = std::max(points, r->curve.size());
    auto column = [&](auto get) {
      std::vector<Stat> col(points);
      std::vector<double> vals;
      for (size_t p = 0; p < points; ++p) {
        vals.clear();
        for (const auto* r : mine) vals.push_back(p < r->curve.size() ? get(*r, p) : kNaN);
        col[p] = Summarise(vals);
      }
      return col;
    };
    auto reached = [](const RunResult& r, size_t p, double v) { return r.curve[p].reached ? v : kNaN; };
    s.unallocated = column([&](const RunResult& r, size_t p) { return reached(r, p, r.curve[p].unallocated_pct); });
    s.allocation = column([&](const RunResult& r, size_t p) { return reached(r, p, r.curve[p].allocation_pct); });
    s.frag_rate = column([&](const RunResult& r, size_t p) { return reached(r, p, r.curve[p].frag_rate_pct); });
    s.frag = column([&](const RunResult& r, size_t p) { return reached(r, p, r.curve[p].frag_pct); });
    s.authors_unallocated = column([](const RunResult& r, size_t p) {
      return p < r.authors_unallocated_pct.size() ? r.authors_unallocated_pct[p] : kNaN;
    });
    std::vector<double> tasks, failed, seconds;
    std::vector<uint32_t> latency;
    for (const auto* r : mine) {
      tasks.push_back(static_cast<double>(r->tasks));
      failed.push_back(static_cast<double>(r->failed));
      seconds.push_back(r->seconds);
      latency.insert(latency.end(), r->latency_ns.begin(), r->latency_ns.end());
    }
    s.tasks = Summarise(tasks);
    s.failed = Summarise(failed);
    s.seconds = Summarise(seconds);
    s.decisions = latency.size();
    s.latency_p50_us = Percentile(&latency, 0.50) / 1000.0;
    s.latency_p99_us = Percentile(&latency, 0.99) / 1000.0;
    s.latency_max_us = Percentile(&latency, 1.0) / 1000.0;
    out.push_back(std::move(s));
  }
  return out;
}

std::string FormatTable(const std::vector<PolicySummary>& s, const ReportMeta& m) {
  std::ostringstream o;
  o << "vgpu-sim: " << m.nodes << " nodes, " << m.devices << " devices, S=" << m.shares_per_device
    << " shares per device; " << m.tasks << " tasks in " << m.classes_distinct << " classes (fgd models "
    << m.classes_kept << "); seeds " << SeedText(m.seeds) << "; " << m.threads
    << " threads; " << Fixed(m.wall_seconds, 1) << " s\n";
  const bool spread = std::any_of(s.begin(), s.end(), [](const PolicySummary& p) { return p.runs > 1; });
  o << "Unallocated % of device capacity when arrived demand first reaches 90/100/110/130 % of it"
    << (spread ? " (mean, min..max over seeds)" : "") << ";\nalloc = allocated/arrived and frag = "
    << "fragmentation/free shares at 100 %; failed = tasks that fit nowhere (mean per run).\n";
  const size_t wname = 16, wcell = spread ? 20 : 8;
  o << Pad("policy", wname, true);
  for (uint32_t mark : kMarks) o << Pad("@" + std::to_string(mark) + "%", wcell);
  o << Pad("alloc%", 8) << Pad("frag%", 8) << Pad("failed", 8) << Pad("p50 us", 9) << Pad("p99 us", 9)
    << Pad("max us", 9) << "\n";
  double best = std::numeric_limits<double>::infinity();
  for (const auto& p : s)
    if (p.unallocated.size() > 100 && p.unallocated[100].n) best = std::min(best, p.unallocated[100].mean);
  for (const auto& p : s) {
    const bool star = p.unallocated.size() > 100 && p.unallocated[100].n && p.unallocated[100].mean == best;
    o << Pad(p.policy + (star && s.size() > 1 ? " *" : ""), wname, true);
    for (uint32_t mark : kMarks) {
      std::string cell = "-";
      if (mark < p.unallocated.size() && p.unallocated[mark].n) {
        const Stat& st = p.unallocated[mark];
        cell = Fixed(st.mean, 2);
        if (spread) cell += " " + Fixed(st.min, 2) + ".." + Fixed(st.max, 2);
      }
      o << Pad(cell, wcell);
    }
    auto at100 = [&](const std::vector<Stat>& v) { return v.size() > 100 ? Fixed(v[100].mean, 2) : "-"; };
    o << Pad(at100(p.allocation), 8) << Pad(at100(p.frag_rate), 8) << Pad(Fixed(p.failed.mean, 0), 8)
      << Pad(Fixed(p.latency_p50_us, 1), 9) << Pad(Fixed(p.latency_p99_us, 1), 9)
      << Pad(Fixed(p.latency_max_us, 1), 9) << "\n";
  }
  if (s.size() > 1) o << "* least unallocated at 100 %\n";
  return o.str();
}

std::string FormatJson(const std::vector<PolicySummary>& s, const std::vector<RunResult>& runs,
                       const ReportMeta& m) {
  Json::Value root(Json::objectValue);
  root["nodes_file"] = m.nodes_path;
  root["pods_file"] = m.pods_path;
  root["shares_per_device"] = m.shares_per_device;
  root["seeds"] = Json::Value(Json::arrayValue);
  for (uint64_t seed : m.seeds) root["seeds"].append(Json::UInt64(seed));
  root["threads"] = m.threads;
  root["wall_seconds"] = m.wall_seconds;
  root["cluster"]["nodes"] = Json::UInt64(m.nodes);
  root["cluster"]["devices"] = Json::UInt64(m.devices);
  root["tasks"] = Json::UInt64(m.tasks);
  root["workload"]["classes_fgd"] = Json::UInt64(m.classes_kept);
  root["workload"]["classes_distinct"] = Json::UInt64(m.classes_distinct);
  root["method"] = "sampling inflation: uniform draws with replacement until arrived >= 130% of capacity; "
                   "readings at the task that first reaches each arrived percent";
  root["policies"] = Json::Value(Json::arrayValue);
  for (const auto& p : s) {
    Json::Value v(Json::objectValue);
    v["name"] = p.policy;
    v["runs"] = Json::UInt64(p.runs);
    for (uint32_t mark : kMarks) {
      if (mark >= p.unallocated.size()) continue;
      Json::Value at(Json::objectValue);
      at["unallocated_pct"] = StatJson(p.unallocated[mark]);
      at["allocation_pct"] = StatJson(p.allocation[mark]);
      at["frag_rate_pct"] = StatJson(p.frag_rate[mark]);
      at["frag_pct"] = StatJson(p.frag[mark]);
      at["authors_unallocated_pct"] = StatJson(p.authors_unallocated[mark]);
      v["at"][std::to_string(mark)] = at;
    }
    v["tasks"] = StatJson(p.tasks);
    v["failed"] = StatJson(p.failed);
    v["run_seconds"] = StatJson(p.seconds);
    v["decisions"] = Json::UInt64(p.decisions);
    v["latency_us"]["p50"] = p.latency_p50_us;
    v["latency_us"]["p99"] = p.latency_p99_us;
    v["latency_us"]["max"] = p.latency_max_us;
    Json::Value curve(Json::objectValue);
    for (const char* k : {"arrived_pct", "unallocated_mean", "unallocated_min", "unallocated_max",
                          "allocation_mean", "frag_rate_mean"})
      curve[k] = Json::Value(Json::arrayValue);
    for (size_t x = 0; x < p.unallocated.size(); ++x) {
      curve["arrived_pct"].append(Json::UInt64(x));
      curve["unallocated_mean"].append(Num(p.unallocated[x].mean));
      curve["unallocated_min"].append(Num(p.unallocated[x].min));
      curve["unallocated_max"].append(Num(p.unallocated[x].max));
      curve["allocation_mean"].append(Num(p.allocation[x].mean));
      curve["frag_rate_mean"].append(Num(p.frag_rate[x].mean));
    }
    v["curve"] = curve;
    v["per_run"] = Json::Value(Json::arrayValue);
    for (const auto& r : runs) {
      if (r.policy != p.policy) continue;
      Json::Value rv(Json::objectValue);
      rv["seed"] = Json::UInt64(r.seed);
      rv["tasks"] = Json::UInt64(r.tasks);
      rv["failed"] = Json::UInt64(r.failed);
      rv["seconds"] = r.seconds;
      for (uint32_t mark : kMarks)
        if (mark < r.curve.size() && r.curve[mark].reached)
          rv["unallocated_pct"][std::to_string(mark)] = r.curve[mark].unallocated_pct;
      v["per_run"].append(rv);
    }
    root["policies"].append(v);
  }
  Json::StreamWriterBuilder b;
  b["indentation"] = " ";
  return Json::writeString(b, root) + "\n";
}

PlotSpec MakePlot(const std::vector<PolicySummary>& s, const ReportMeta& m) {
  constexpr size_t kPlotFrom = 80;  // below, every policy places everything
  PlotSpec spec;
  std::string pods = m.pods_path.substr(m.pods_path.find_last_of('/') + 1);
  if (pods.rfind("openb_pod_list_", 0) == 0) pods = pods.substr(15);
  if (pods.size() > 4 && pods.substr(pods.size() - 4) == ".csv") pods.resize(pods.size() - 4);
  spec.title = "Unallocated vs arrived demand: " + pods + ", S=" + std::to_string(m.shares_per_device) +
               ", seeds " + SeedText(m.seeds);
  spec.x_label = "arrived demand (% of device capacity)";
  spec.y_label = "unallocated (% of device capacity)";
  spec.x_marks = {100};
  for (const auto& p : s) {
    Series se;
    se.label = p.policy;
    const bool band = p.runs > 1;
    for (size_t x = kPlotFrom; x < p.unallocated.size(); ++x) {
      if (!p.unallocated[x].n) continue;
      se.x.push_back(static_cast<double>(x));
      se.y.push_back(p.unallocated[x].mean);
      if (band) {
        se.y_low.push_back(p.unallocated[x].min);
        se.y_high.push_back(p.unallocated[x].max);
      }
    }
    spec.series.push_back(std::move(se));
  }
  return spec;
}

}  // namespace vgpu::sim
