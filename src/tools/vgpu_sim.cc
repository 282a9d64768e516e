// vgpu-sim: replays a trace of the Alibaba openb format through the
// placement engine and reports how much device capacity each policy leaves
// unallocated (method: sim_run.h; manual: doc/vgpu-sim.1).
//
// Exit status: 0 on success, 2 on any error (bad option, unreadable or
// malformed file, unknown policy), which is one line on stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "placement/placement.h"
#include "placement/placement_fgd.h"
#include "sim_report.h"
#include "sim_run.h"
#include "slice_layout.h"
#include "svg_plot.h"
#include "trace_csv.h"

namespace {

using vgpu::Result;
using vgpu::Status;

const char kUsage[] =
    "usage: vgpu-sim --nodes NODES.csv --pods PODS.csv --policy NAME[,NAME...]|all\n"
    "                [--seed N] [--repeat R] [--shares-per-device S] [--threads N]\n"
    "                [--json FILE] [--plot FILE.svg] [--slice MODEL [--catalog DIRS]]\n"
    "Seeds are N..N+R-1 (default N=42, R=10: the paper's 42..51). S defaults to 1000.\n"
    "--slice: every device cut in hardware slices like MODEL of the chip catalog\n"
    "(MIG, vNPU: a task takes the smallest slice that holds it, where one fits).\n"
    "pool's parameters: --policy pool:resolution=1,cpu=1,cpu_ratio=1,used=0.5,coverage=1\n";

struct Args {
  std::string nodes, pods, policy, json, plot, slice;
  std::string catalog = VGPU_DEFAULT_CATALOG_DIR;
  uint64_t seed = 42;
  uint64_t repeat = 10;
  uint64_t shares = 1000;
  uint64_t threads = 0;
  bool help = false;
};

Result<uint64_t> Whole(const std::string& opt, const std::string& text, uint64_t lo, uint64_t hi) {
  bool ok = !text.empty() && text.size() <= 19 && text.find_first_not_of("0123456789") == std::string::npos;
  uint64_t v = ok ? std::stoull(text) : 0;
  if (!ok || v < lo || v > hi)
    return Result<uint64_t>::Error(opt + ": \"" + text + "\" is not a whole number in " + std::to_string(lo) +
                                   ".." + std::to_string(hi));
  return v;
}

Result<Args> Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string opt = argv[i];
    if (opt == "-h" || opt == "--help") {
      a.help = true;
      continue;
    }
    std::string value;
    size_t eq = opt.find('=');
    bool inline_value = opt.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) {
      value = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
    }
    static const char* const kKnown[] = {"--nodes", "--pods", "--policy", "--json", "--plot", "--seed",
                                         "--repeat", "--shares-per-device", "--threads", "--slice", "--catalog"};
    if (std::find(std::begin(kKnown), std::end(kKnown), opt) == std::end(kKnown))
      return Result<Args>::Error("unknown option " + opt + "; see --help");
    if (!inline_value) {
      if (i + 1 >= argc) return Result<Args>::Error(opt + " needs a value; see --help");
      value = argv[++i];
    }
    Result<uint64_t> n = uint64_t{0};
    if (opt == "--nodes") a.nodes = value;
    else if (opt == "--pods") a.pods = value;
    else if (opt == "--policy") a.policy = value;
    else if (opt == "--json") a.json = value;
    else if (opt == "--plot") a.plot = value;
    else if (opt == "--slice") a.slice = value;
    else if (opt == "--catalog") a.catalog = value;
    else if (opt == "--seed") { if ((n = Whole(opt, value, 0, UINT64_MAX / 2)).ok()) a.seed = *n; }
    else if (opt == "--repeat") { if ((n = Whole(opt, value, 1, 100000)).ok()) a.repeat = *n; }
    else if (opt == "--shares-per-device") { if ((n = Whole(opt, value, 1, vgpu::kMaxSharesPerDevice)).ok()) a.shares = *n; }
    else if (opt == "--threads") { if ((n = Whole(opt, value, 1, 1024)).ok()) a.threads = *n; }
    if (!n.ok()) return n.status();
  }
  if (a.help) return a;
  if (a.nodes.empty()) return Result<Args>::Error("--nodes NODES.csv is required; see --help");
  if (a.pods.empty()) return Result<Args>::Error("--pods PODS.csv is required; see --help");
  if (a.policy.empty()) return Result<Args>::Error("--policy NAME or --policy all is required; see --help");
  return a;
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Status::Error("cannot write " + path);
  return Status::Ok();
}

int Fail(const std::string& message) {
  std::cerr << "vgpu-sim: " << message << std::endl;
  return 2;
}

int Main(int argc, char** argv) {
  Result<Args> parsed = Parse(argc, argv);
  if (!parsed.ok()) return Fail(parsed.message());
  const Args& a = *parsed;
  if (a.help) {
    std::cout << kUsage;
    std::cout << "Policies:";
    for (const auto& p : vgpu::PolicyNames()) std::cout << " " << p;
    std::cout << " (default of the plugin: " << vgpu::kDefaultPolicy << ")\n";
    return 0;
  }

  std::vector<std::string> policies;
  if (a.policy == "all") {
    policies = vgpu::PolicyNames();
  } else {
    size_t from = 0;
    while (from <= a.policy.size()) {
      size_t comma = a.policy.find(',', from);
      if (comma == std::string::npos) comma = a.policy.size();
      policies.push_back(a.policy.substr(from, comma - from));
      from = comma + 1;
    }
  }
  vgpu::PolicyOptions probe;
  for (const auto& p : policies) {  // a name error before reading files
    auto made = vgpu::MakePolicy(p, probe);
    if (!made.ok() && made.message().rfind("unknown", 0) == 0) return Fail(made.message());
  }

  auto nodes = vgpu::sim::ReadNodeCsv(a.nodes);
  if (!nodes.ok()) return Fail(nodes.message());
  auto tasks = vgpu::sim::ReadTaskCsv(a.pods);
  if (!tasks.ok()) return Fail(tasks.message());
  const uint32_t s = static_cast<uint32_t>(a.shares);
  auto trace = vgpu::sim::PrepareTrace(*nodes, *tasks, s);
  if (!trace.ok()) return Fail(a.pods + ": " + trace.message());
  if (!a.slice.empty()) {
    Status sliced = vgpu::sim::SliceEveryDevice(&trace->cluster, a.catalog, a.slice);
    if (!sliced.ok()) return Fail(sliced.message());
  }

  vgpu::sim::SimOptions opt;
  opt.policies = policies;
  for (uint64_t i = 0; i < a.repeat; ++i) opt.seeds.push_back(a.seed + i);
  opt.threads = a.threads ? static_cast<unsigned>(a.threads) : std::thread::hardware_concurrency();
  if (opt.threads == 0) opt.threads = 1;

  const auto start = std::chrono::steady_clock::now();
  auto runs = vgpu::sim::RunAll(*trace, opt);
  if (!runs.ok()) return Fail(runs.message());
  vgpu::sim::ReportMeta meta;
  meta.nodes_path = a.nodes;
  meta.pods_path = a.pods;
  meta.shares_per_device = s;
  meta.seeds = opt.seeds;
  meta.threads = opt.threads;
  meta.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  meta.nodes = trace->cluster.size();
  meta.devices = trace->cluster.total_shares() / s;
  meta.tasks = trace->requests.size();
  meta.classes_kept = trace->frag_model->classes().size();
  meta.classes_distinct = trace->workload->distinct_classes();

  auto summaries = vgpu::sim::SummariseRuns(*runs);
  std::cout << vgpu::sim::FormatTable(summaries, meta) << std::flush;
  if (!a.json.empty()) {
    Status w = WriteFile(a.json, vgpu::sim::FormatJson(summaries, *runs, meta));
    if (!w.ok()) return Fail(w.message());
  }
  if (!a.plot.empty()) {
    Status w = WriteFile(a.plot, vgpu::sim::RenderSvg(vgpu::sim::MakePlot(summaries, meta)));
    if (!w.ok()) return Fail(w.message());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc: still one line, exit 2
    return Fail(std::string("internal error: ") + e.what());
  }
}
