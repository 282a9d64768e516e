// vgpu-sim's replay and reports on tiny synthetic traces.
#include <cppunit/extensions/HelperMacros.h>
#include <json/json.h>

#include <cmath>
#include <limits>
#include <memory>
#include <sstream>

#include "placement/placement.h"
#include "sim_report.h"
#include "sim_run.h"
#include "slice_layout.h"
#include "test_paths.h"

using vgpu::sim::RunResult;
using vgpu::sim::TraceNode;
using vgpu::sim::TraceTask;

namespace {

TraceNode Node(const std::string& name, uint32_t gpus, uint64_t cpu = 64000, const std::string& model = "G") {
  TraceNode n;
  n.name = name;
  n.cpu_milli = cpu;
  n.memory_mib = 1 << 20;
  n.gpus = gpus;
  n.model = model;
  return n;
}

TraceTask Task(const std::string& name, uint32_t num_gpu, uint32_t gpu_milli, uint64_t cpu = 1000,
               uint64_t mem = 1024) {
  TraceTask t;
  t.name = name;
  t.num_gpu = num_gpu;
  t.gpu_milli = gpu_milli;
  t.cpu_milli = cpu;
  t.memory_mib = mem;
  return t;
}

std::vector<TraceNode> FourByTwo() {
  return {Node("a", 2), Node("b", 2), Node("c", 2), Node("d", 2)};
}

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

class SimRunTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SimRunTest);
  CPPUNIT_TEST(TaskToRequest);
  CPPUNIT_TEST(PrepareErrors);
  CPPUNIT_TEST(WholeDeviceReplayByHand);
  CPPUNIT_TEST(RoundingWasteIsUnallocated);
  CPPUNIT_TEST(SlicedDevicesStrandWhatSlicesRoundUp);
  CPPUNIT_TEST(NeverFittingTasksAreCountedFailures);
  CPPUNIT_TEST(DeterministicAcrossThreads);
  CPPUNIT_TEST(UnknownPolicyIsAnError);
  CPPUNIT_TEST(Statistics);
  CPPUNIT_TEST(ReportsOfARun);
  CPPUNIT_TEST_SUITE_END();

 public:
  void TaskToRequest() {
    vgpu::ClusterState c(100);
    c.AddNode("n", 1000, 1000, {"T4", "P100"});
    auto share = vgpu::sim::TaskRequest(Task("t", 1, 455), c, 100);
    CPPUNIT_ASSERT(share.ok());
    CPPUNIT_ASSERT_EQUAL(46u, share->shares);  // rounded up
    CPPUNIT_ASSERT_EQUAL(46u, vgpu::sim::TaskRequest(Task("t", 1, 460), c, 100)->shares);
    CPPUNIT_ASSERT_EQUAL(1u, vgpu::sim::TaskRequest(Task("t", 1, 1), c, 100)->shares);
    CPPUNIT_ASSERT_EQUAL(100u, vgpu::sim::TaskRequest(Task("t", 1, 999), c, 100)->shares);
    CPPUNIT_ASSERT_EQUAL(455u, vgpu::sim::TaskRequest(Task("t", 1, 455), c, 1000)->shares);  // exact
    CPPUNIT_ASSERT_EQUAL(200u, vgpu::sim::TaskRequest(Task("t", 2, 1000), c, 100)->shares);
    auto cpu = vgpu::sim::TaskRequest(Task("t", 0, 0, 5000, 7), c, 100);
    CPPUNIT_ASSERT_EQUAL(0u, cpu->shares);
    CPPUNIT_ASSERT_EQUAL(uint64_t{5000}, cpu->cpu_milli);
    CPPUNIT_ASSERT_EQUAL(uint64_t{7}, cpu->memory_mib);
    CPPUNIT_ASSERT(Has(vgpu::sim::TaskRequest(Task("bad", 2, 500), c, 100).message(), "task bad"));
    CPPUNIT_ASSERT(!vgpu::sim::TaskRequest(Task("bad", 0, 5), c, 100).ok());
    TraceTask typed = Task("t", 1, 500);
    typed.gpu_spec = {"p100", "V100"};
    auto r = vgpu::sim::TaskRequest(typed, c, 100);
    CPPUNIT_ASSERT_EQUAL(size_t{2}, r->types.size());
    CPPUNIT_ASSERT_EQUAL(c.FindType("P100"), r->types[0]);
    CPPUNIT_ASSERT_EQUAL(vgpu::kUnknownType, r->types[1]);
  }

  void PrepareErrors() {
    std::vector<TraceTask> tasks = {Task("t", 1, 500)};
    CPPUNIT_ASSERT(Has(vgpu::sim::PrepareTrace({}, tasks, 100).message(), "no node"));
    CPPUNIT_ASSERT(Has(vgpu::sim::PrepareTrace({Node("n", 0, 1000, "")}, tasks, 100).message(), "no GPU"));
    CPPUNIT_ASSERT(Has(vgpu::sim::PrepareTrace(FourByTwo(), {Task("c", 0, 0)}, 100).message(), "never grow"));
    CPPUNIT_ASSERT(Has(vgpu::sim::PrepareTrace(FourByTwo(), {Task("x", 3, 10)}, 100).message(), "task x"));
    CPPUNIT_ASSERT(!vgpu::sim::PrepareTrace({Node("n", 1), Node("n", 1)}, tasks, 100).ok());
    auto ok = vgpu::sim::PrepareTrace(FourByTwo(), {Task("s", 1, 500), Task("w", 1, 1000), Task("c", 0, 0)}, 100);
    CPPUNIT_ASSERT(ok.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{3}, ok->requests.size());
    CPPUNIT_ASSERT_EQUAL(size_t{3}, ok->workload->classes().size());
    CPPUNIT_ASSERT_EQUAL(uint64_t{800}, ok->cluster.total_shares());
  }

  // Capacity 8 devices; every task takes one whole device. Arrived crosses
  // 130 % (10.4 devices) at the 11th task; the 9th to 11th fail.
  void WholeDeviceReplayByHand() {
    auto trace = vgpu::sim::PrepareTrace(FourByTwo(), {Task("w", 1, 1000)}, 1000);
    CPPUNIT_ASSERT(trace.ok());
    auto run = vgpu::sim::RunOne(*trace, "first-fit", 42);
    CPPUNIT_ASSERT_MESSAGE(run.message(), run.ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t{11}, run->tasks);
    CPPUNIT_ASSERT_EQUAL(uint64_t{3}, run->failed);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(137.5, run->arrived_pct, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, run->unallocated_pct, 1e-9);
    CPPUNIT_ASSERT_EQUAL(size_t{131}, run->curve.size());
    for (uint32_t p = 0; p <= 130; ++p) CPPUNIT_ASSERT(run->curve[p].reached);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(50.0, run->curve[50].unallocated_pct, 1e-9);     // 4th task
    CPPUNIT_ASSERT_DOUBLES_EQUAL(37.5, run->curve[51].unallocated_pct, 1e-9);     // 5th task
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, run->curve[90].unallocated_pct, 1e-9);      // 8th task
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, run->curve[100].unallocated_pct, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(100.0, run->curve[100].allocation_pct, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(100.0 * 8 / 11, run->curve[130].allocation_pct, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, run->curve[130].unallocated_pct, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, run->authors_unallocated_pct[100], 1e-9);  // 8th task only
    CPPUNIT_ASSERT(std::isnan(run->authors_unallocated_pct[99]));
    CPPUNIT_ASSERT_EQUAL(size_t{11}, run->latency_ns.size());
    CPPUNIT_ASSERT_EQUAL(std::string("first-fit"), run->policy);
  }

  // Demand is counted in what tasks asked, so shares rounded up beyond it
  // show as unallocated: 250-milli tasks fill 4 per GPU at S=1000 but take 3
  // shares of 10 at S=10, i.e. 3 per GPU and a quarter of each GPU unused.
  void RoundingWasteIsUnallocated() {
    for (uint32_t s : {1000u, 10u}) {
      auto trace = vgpu::sim::PrepareTrace(FourByTwo(), {Task("q", 1, 250)}, s);
      CPPUNIT_ASSERT_MESSAGE(trace.message(), trace.ok());
      auto run = vgpu::sim::RunOne(*trace, "first-fit", 42);
      CPPUNIT_ASSERT_MESSAGE(run.message(), run.ok());
      CPPUNIT_ASSERT_DOUBLES_EQUAL(s == 1000 ? 0.0 : 25.0, run->unallocated_pct, 1e-9);
      CPPUNIT_ASSERT_EQUAL(uint64_t{s == 1000 ? 10u : 18u}, run->failed);  // of 42 drawn
    }
  }

  // Every GPU an A100 cut in MIG instances (--slice): 0.1-GPU tasks take a
  // 1g.10gb each (seven per GPU, not ten), 0.25-GPU ones a 2g.20gb (three,
  // and one 1g.10gb position left that they cannot use).
  void SlicedDevicesStrandWhatSlicesRoundUp() {
    struct Case {
      uint32_t milli;
      double unallocated;
    } cases[] = {{100, 30.0}, {250, 25.0}};
    for (const Case& k : cases) {
      auto trace = vgpu::sim::PrepareTrace(FourByTwo(), {Task("q", 1, k.milli)}, 1000);
      CPPUNIT_ASSERT(trace.ok());
      auto plain = vgpu::sim::RunOne(*trace, "first-fit", 42);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, plain->unallocated_pct, 1e-9);
      vgpu::Status sliced = vgpu::sim::SliceEveryDevice(&trace->cluster, vgpu::CatalogDir(), "nvidia-a100-80g");
      CPPUNIT_ASSERT_MESSAGE(sliced.message(), sliced.ok());
      for (const auto& policy : {"first-fit", "pool"}) {
        auto run = vgpu::sim::RunOne(*trace, policy, 42);
        CPPUNIT_ASSERT_MESSAGE(run.message(), run.ok());
        CPPUNIT_ASSERT_DOUBLES_EQUAL(k.unallocated, run->unallocated_pct, 1e-9);
      }
    }
    auto trace = vgpu::sim::PrepareTrace(FourByTwo(), {Task("q", 1, 100)}, 1000);
    vgpu::Status none = vgpu::sim::SliceEveryDevice(&trace->cluster, vgpu::CatalogDir(), "hygon-k100");
    CPPUNIT_ASSERT(!none.ok() && Has(none.message(), "slice_slots"));
    vgpu::Status unknown = vgpu::sim::SliceEveryDevice(&trace->cluster, vgpu::CatalogDir(), "acme-x1");
    CPPUNIT_ASSERT(!unknown.ok() && Has(unknown.message(), "no such model"));
  }

  // Half the tasks ask for more memory than any node has.
  void NeverFittingTasksAreCountedFailures() {
    std::vector<TraceTask> tasks = {Task("ok", 1, 1000), Task("huge", 1, 1000, 1000, uint64_t{1} << 40)};
    auto trace = vgpu::sim::PrepareTrace(FourByTwo(), tasks, 100);
    for (const auto& name : vgpu::PolicyNames()) {
      auto run = vgpu::sim::RunOne(*trace, name, 7);
      CPPUNIT_ASSERT_MESSAGE(name + ": " + run.message(), run.ok());
      CPPUNIT_ASSERT(run->failed > 0);
      const double placed = static_cast<double>(run->tasks - run->failed);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(100.0 * (8 - placed) / 8, run->unallocated_pct, 1e-9);
      CPPUNIT_ASSERT(run->arrived_pct >= 130.0);
      CPPUNIT_ASSERT(run->arrived_pct < 130.0 + 12.5 + 1e-9);  // stopped at the crossing task
    }
  }

  void DeterministicAcrossThreads() {
    std::vector<TraceTask> tasks = {Task("s1", 1, 300, 2000), Task("s2", 1, 700, 4000), Task("w", 1, 1000, 3000),
                                    Task("w2", 2, 1000, 6000), Task("c", 0, 0, 8000)};
    auto trace = vgpu::sim::PrepareTrace(FourByTwo(), tasks, 100);
    vgpu::sim::SimOptions opt;
    opt.policies = {"fgd", "best-fit", "pool"};
    opt.seeds = {1, 2, 3};
    opt.threads = 1;
    auto one = vgpu::sim::RunAll(*trace, opt);
    opt.threads = 3;
    auto three = vgpu::sim::RunAll(*trace, opt);
    CPPUNIT_ASSERT(one.ok() && three.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{9}, one->size());
    for (size_t i = 0; i < one->size(); ++i) {
      const RunResult& a = (*one)[i];
      const RunResult& b = (*three)[i];
      CPPUNIT_ASSERT_EQUAL(opt.policies[i / 3], a.policy);
      CPPUNIT_ASSERT_EQUAL(opt.seeds[i % 3], a.seed);
      CPPUNIT_ASSERT_EQUAL(a.tasks, b.tasks);
      CPPUNIT_ASSERT_EQUAL(a.failed, b.failed);
      for (size_t p = 0; p < a.curve.size(); ++p)
        CPPUNIT_ASSERT_EQUAL(a.curve[p].unallocated_pct, b.curve[p].unallocated_pct);
    }
    CPPUNIT_ASSERT((*one)[0].tasks != (*one)[1].tasks || (*one)[0].failed != (*one)[1].failed ||
                   (*one)[0].curve[100].unallocated_pct != (*one)[1].curve[100].unallocated_pct ||
                   (*one)[0].curve[60].unallocated_pct != (*one)[1].curve[60].unallocated_pct);
  }

  void UnknownPolicyIsAnError() {
    auto trace = vgpu::sim::PrepareTrace(FourByTwo(), {Task("w", 1, 1000)}, 100);
    vgpu::sim::SimOptions opt;
    opt.policies = {"first-fit", "nope"};
    opt.seeds = {1};
    auto r = vgpu::sim::RunAll(*trace, opt);
    CPPUNIT_ASSERT(!r.ok());
    CPPUNIT_ASSERT(Has(r.message(), "unknown placement policy \"nope\""));
    CPPUNIT_ASSERT(!vgpu::sim::RunOne(*trace, "nope", 1).ok());
  }

  void Statistics() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto s = vgpu::sim::Summarise({1, 2, nan, 3});
    CPPUNIT_ASSERT_EQUAL(size_t{3}, s.n);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.0, s.mean, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, s.min, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(3.0, s.max, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, s.stddev, 1e-12);
    CPPUNIT_ASSERT(std::isnan(vgpu::sim::Summarise({nan}).mean));
    CPPUNIT_ASSERT_EQUAL(0.0, vgpu::sim::Summarise({4}).stddev);
    std::vector<uint32_t> v;
    for (uint32_t i = 100; i >= 1; --i) v.push_back(i);
    CPPUNIT_ASSERT_EQUAL(50.0, vgpu::sim::Percentile(&v, 0.5));
    CPPUNIT_ASSERT_EQUAL(99.0, vgpu::sim::Percentile(&v, 0.99));
    CPPUNIT_ASSERT_EQUAL(100.0, vgpu::sim::Percentile(&v, 1.0));
    std::vector<uint32_t> none;
    CPPUNIT_ASSERT_EQUAL(0.0, vgpu::sim::Percentile(&none, 0.5));
  }

  void ReportsOfARun() {
    std::vector<TraceTask> tasks = {Task("s", 1, 500), Task("w", 1, 1000)};
    auto trace = vgpu::sim::PrepareTrace(FourByTwo(), tasks, 1000);
    vgpu::sim::SimOptions opt;
    opt.policies = {"fgd", "first-fit"};
    opt.seeds = {42, 43};
    opt.threads = 2;
    auto runs = vgpu::sim::RunAll(*trace, opt);
    CPPUNIT_ASSERT(runs.ok());
    auto sum = vgpu::sim::SummariseRuns(*runs);
    CPPUNIT_ASSERT_EQUAL(size_t{2}, sum.size());
    CPPUNIT_ASSERT_EQUAL(std::string("fgd"), sum[0].policy);
    CPPUNIT_ASSERT_EQUAL(size_t{2}, sum[0].runs);
    CPPUNIT_ASSERT_EQUAL(size_t{131}, sum[0].unallocated.size());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, sum[0].unallocated[100].n);
    double mean100 = ((*runs)[0].curve[100].unallocated_pct + (*runs)[1].curve[100].unallocated_pct) / 2;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(mean100, sum[0].unallocated[100].mean, 1e-9);
    CPPUNIT_ASSERT(sum[0].decisions == (*runs)[0].tasks + (*runs)[1].tasks);

    vgpu::sim::ReportMeta meta;
    meta.nodes_path = "nodes.csv";
    meta.pods_path = "dir/pods.csv";
    meta.shares_per_device = 1000;
    meta.seeds = opt.seeds;
    meta.nodes = 4;
    meta.devices = 8;
    std::string table = vgpu::sim::FormatTable(sum, meta);
    CPPUNIT_ASSERT(Has(table, "fgd") && Has(table, "first-fit") && Has(table, "@100%"));
    CPPUNIT_ASSERT(Has(table, "seeds 42..43"));

    Json::Value root;
    std::istringstream in(vgpu::sim::FormatJson(sum, *runs, meta));
    std::string errors;
    CPPUNIT_ASSERT_MESSAGE(errors, Json::parseFromStream(Json::CharReaderBuilder(), in, &root, &errors));
    CPPUNIT_ASSERT_EQUAL(2u, root["policies"].size());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(mean100, root["policies"][0]["at"]["100"]["unallocated_pct"]["mean"].asDouble(), 1e-9);
    CPPUNIT_ASSERT_EQUAL(131u, root["policies"][0]["curve"]["unallocated_mean"].size());
    CPPUNIT_ASSERT_EQUAL(2u, root["policies"][1]["per_run"].size());
    CPPUNIT_ASSERT_EQUAL(1000u, root["shares_per_device"].asUInt());

    auto plot = vgpu::sim::MakePlot(sum, meta);
    CPPUNIT_ASSERT_EQUAL(size_t{2}, plot.series.size());
    CPPUNIT_ASSERT_EQUAL(80.0, plot.series[0].x.front());
    CPPUNIT_ASSERT_EQUAL(130.0, plot.series[0].x.back());
    CPPUNIT_ASSERT_EQUAL(plot.series[0].x.size(), plot.series[0].y_low.size());
    CPPUNIT_ASSERT(Has(plot.title, "pods, S=1000"));
    CPPUNIT_ASSERT(std::vector<double>{100} == plot.x_marks);
    CPPUNIT_ASSERT_EQUAL(std::string("<svg"), vgpu::sim::RenderSvg(plot).substr(0, 4));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SimRunTest);
