// Tests of vgpu-exporter: the usage read from real job run directories
// and regions, the metrics built from a pool and that usage, node totals
// that outlive jobs, the /status page, the options, the collection cache
// (a fake clock and pool) and the HTTP server on a free loopback port.
#include <cppunit/extensions/HelperMacros.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "exporter_metrics.h"
#include "exporter_options.h"
#include "exporter_page.h"
#include "exporter_server.h"
#include "exporter_usage.h"
#include "jobs/job_limits.h"
#include "jobs/job_run_dir.h"
#include "jobs/usage_region.h"
#include "temp_dir.h"

namespace vgpu::exporter {
namespace {

constexpr uint64_t kGiB = 1024ull * 1024 * 1024;

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// n1: 2 nvidia devices (S=100), job 7 holds 30 shares of device 1; n2:
// drained by an admin with a reason, 1 dcu device, idle; one job pending
// 20 nvidia shares and one 10 untyped.
const char kNodes[] = R"js({"meta": {}, "errors": [], "nodes": [
  {"name": "n1", "state": "mixed", "partitions": ["debug"], "gres": "vgpu:nvidia:200(S:0)",
   "gres_used": "vgpu:nvidia:30(IDX:100-129)"},
  {"name": "n2", "state": "idle+drain", "reason": "vgpu: <prolog> failed", "partitions": ["debug"],
   "gres": "vgpu:dcu:100", "gres_used": "vgpu:dcu:0(IDX:N/A)"}]})js";
const char kJobs[] = R"js({"meta": {}, "errors": [], "jobs": [
  {"job_id": 7, "user_name": "alice", "job_state": "RUNNING", "nodes": "n1",
   "gres_detail": ["vgpu:nvidia:30(IDX:100-129)"], "tres_per_node": "gres:vgpu:nvidia:30"},
  {"job_id": 8, "user_name": "bob", "job_state": "PENDING", "nodes": "", "node_count": 1,
   "tres_per_node": "gres:vgpu:nvidia:20"},
  {"job_id": 9, "user_name": "bob", "job_state": "PENDING", "nodes": "", "node_count": 1,
   "tres_per_node": "gres:vgpu:10"}]})js";

status::PoolStatus TestPool() {
  status::ModelTable models{{"nvidia", {"a100-80g", 80 * kGiB}}};
  auto pool = status::ReadPool(kNodes, kJobs, 100, models);
  CPPUNIT_ASSERT_MESSAGE(pool.message(), pool.ok());
  return *pool;
}

// Job `id`'s run directory with one nvidia device of `shares` x 80 GiB/100,
// node device index 1, made as the prolog makes it.
void MakeJob(const std::string& run_dir, uint32_t id, uint32_t shares) {
  JobLimits limits;
  limits.job_id = id;
  DeviceLimit d;
  d.index = 0;
  d.vendor = "nvidia";
  d.shares = shares;
  d.shares_per_device = 100;
  d.memory_bytes = shares * (80 * kGiB / 100);
  d.node_index = 1;
  limits.devices.push_back(d);
  Status st = CreateJobRunDir(run_dir, limits, getuid(), getgid());
  CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
}

JobDeviceUsage Usage(uint32_t job, uint64_t busy_ns, uint64_t refusals) {
  JobDeviceUsage u;
  u.job_id = job;
  u.stats.busy_ns = busy_ns;
  u.stats.refusals = refusals;
  return u;
}

// One request to 127.0.0.1:port; the whole reply ("" when it cannot connect).
std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) reply.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return reply;
}

}  // namespace

class ExporterTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ExporterTest);
  CPPUNIT_TEST(UsageFromRunDirectories);
  CPPUNIT_TEST(MetricsOfPoolAndJobs);
  CPPUNIT_TEST(NodeTotalsOutliveJobs);
  CPPUNIT_TEST(NodesOutOfThePool);
  CPPUNIT_TEST(StatusPageShowsThePool);
  CPPUNIT_TEST(OptionsAndTheirErrors);
  CPPUNIT_TEST(CollectsOncePerInterval);
  CPPUNIT_TEST(ServesOverHttp);
  CPPUNIT_TEST_SUITE_END();

 public:
  // Two jobs, one with memory held and refusals; a job directory without a
  // limits file yet (prolog still at work) is skipped, a corrupt one named.
  void UsageFromRunDirectories() {
    TempDir dir;
    MakeJob(dir.path(), 7, 30);
    MakeJob(dir.path(), 12, 10);
    auto region = UsageRegion::Open(UsageRegionPath(dir.path(), 7, 0));
    CPPUNIT_ASSERT_MESSAGE(region.message(), region.ok());
    CPPUNIT_ASSERT((*region)->Reserve(3 * kGiB, 24 * kGiB) == UsageRegion::Reservation::kOk);
    CPPUNIT_ASSERT((*region)->Reserve(30 * kGiB, 24 * kGiB) == UsageRegion::Reservation::kOverLimit);
    (*region)->ChargeBusy(2500000000ull);
    CPPUNIT_ASSERT(mkdir((dir.path() + "/job_13").c_str(), 0755) == 0);
    CPPUNIT_ASSERT(mkdir((dir.path() + "/job_14").c_str(), 0755) == 0);
    dir.Write("job_14/limits", "not a limits file\n");
    dir.Write("jobs.txt", "");

    std::vector<std::string> problems;
    std::vector<JobDeviceUsage> usage = ReadRunDirUsage(dir.path(), &problems);
    CPPUNIT_ASSERT_EQUAL(size_t(2), usage.size());
    CPPUNIT_ASSERT_EQUAL(uint32_t{7}, usage[0].job_id);
    CPPUNIT_ASSERT_EQUAL(int32_t{1}, usage[0].node_device);
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), usage[0].vendor);
    CPPUNIT_ASSERT_EQUAL(uint32_t{30}, usage[0].shares);
    CPPUNIT_ASSERT_EQUAL(30 * (80 * kGiB / 100), usage[0].memory_quota);
    CPPUNIT_ASSERT_EQUAL(3 * kGiB, usage[0].stats.used_bytes);
    CPPUNIT_ASSERT_EQUAL(uint64_t{1}, usage[0].stats.refusals);
    CPPUNIT_ASSERT_EQUAL(uint64_t{2500000000ull}, usage[0].stats.busy_ns);
    CPPUNIT_ASSERT_EQUAL(uint32_t{1}, usage[0].stats.processes);
    CPPUNIT_ASSERT(!usage[0].user.empty());
    CPPUNIT_ASSERT_EQUAL(uint32_t{12}, usage[1].job_id);
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, usage[1].stats.used_bytes);
    CPPUNIT_ASSERT_EQUAL(size_t(1), problems.size());
    CPPUNIT_ASSERT_MESSAGE(problems[0], Has(problems[0], "job_14"));

    problems.clear();
    CPPUNIT_ASSERT(ReadRunDirUsage(dir.path() + "/none", &problems).empty());
    CPPUNIT_ASSERT_EQUAL(size_t(1), problems.size());
    CPPUNIT_ASSERT_MESSAGE(problems[0], Has(problems[0], "run directory"));
  }

  void MetricsOfPoolAndJobs() {
    Snapshot s;
    s.pool_asked = s.usage_asked = true;
    s.pool = TestPool();
    s.node_name = "n1";
    JobDeviceUsage u = Usage(7, 1500000000ull, 3);
    u.user = "alice";
    u.vendor = "nvidia";
    u.node_device = 1;
    u.shares = 30;
    u.memory_quota = 24 * kGiB;
    u.stats.used_bytes = 2 * kGiB;
    u.stats.peak_bytes = 5 * kGiB;
    u.stats.processes = 2;
    s.usage = {u};
    NodeTotals totals;
    totals.Add(s);
    const std::string text = MetricsText(BuildMetrics(s, totals));

    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_exporter_slurm_up 1"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_type_shares{type=\"nvidia\"} 200"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_type_free_shares{type=\"nvidia\"} 170"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_type_free_shares{type=\"dcu\"} 100"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_type_pending_shares{type=\"nvidia\"} 20"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_type_pending_shares{type=\"any\"} 10"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "# TYPE slurm_vgpu_type_shares gauge"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_device_allocated_shares{node=\"n1\",device=\"1\","
                                           "type=\"nvidia\",model=\"a100-80g\"} 30"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_device_memory_quota_bytes{node=\"n1\",device=\"1\","
                                           "type=\"nvidia\",model=\"a100-80g\"} " +
                                               std::to_string(80 * kGiB * 30 / 100)));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_node_out_of_pool{node=\"n2\",state=\"idle+drain\","
                                           "reason=\"vgpu: <prolog> failed\"} 1"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_node_out_of_pool{node=\"n1\",state=\"mixed\",reason=\"\"} 0"));
    const std::string job = "{node=\"n1\",jobid=\"7\",user=\"alice\",device=\"1\",vendor=\"nvidia\"}";
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_job_device_memory_used_bytes" + job + " " +
                                               std::to_string(2 * kGiB)));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_job_device_processes" + job + " 2"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_job_device_busy_seconds_total" + job + " 1.5"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_job_oom_refusals_total" + job + " 3"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "# TYPE slurm_vgpu_job_oom_refusals_total counter"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_node_oom_refusals_total{node=\"n1\"} 3"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_node_device_busy_seconds_total{node=\"n1\"} 1.5"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "slurm_vgpu_exporter_usage_read_errors 0"));

    // slurmctld away: slurm_up 0 and no pool series; the node part stays.
    s.pool.reset();
    s.pool_error = "slurm_load_node: Unable to contact slurm controller";
    const std::string away = MetricsText(BuildMetrics(s, totals));
    CPPUNIT_ASSERT_MESSAGE(away, Has(away, "slurm_vgpu_exporter_slurm_up 0"));
    CPPUNIT_ASSERT_MESSAGE(away, !Has(away, "slurm_vgpu_type_shares"));
    CPPUNIT_ASSERT_MESSAGE(away, Has(away, "slurm_vgpu_job_device_memory_used_bytes{node=\"n1\",jobid=\"7\""));
    // --no-node: no usage series at all.
    s.usage_asked = false;
    CPPUNIT_ASSERT(!Has(MetricsText(BuildMetrics(s, totals)), "slurm_vgpu_node_device"));
  }

  void NodeTotalsOutliveJobs() {
    Snapshot s;
    s.node_name = "n1";
    NodeTotals totals;
    s.usage = {Usage(7, 2000000000ull, 1), Usage(8, 1000000000ull, 0)};
    totals.Add(s);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(3.0, totals.busy_seconds("n1"), 1e-9);
    s.usage = {Usage(7, 5000000000ull, 4), Usage(8, 1000000000ull, 0)};
    totals.Add(s);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(6.0, totals.busy_seconds("n1"), 1e-9);
    CPPUNIT_ASSERT_EQUAL(uint64_t{4}, totals.refusals("n1"));
    s.usage.clear();  // both ended: the counters keep what they counted
    totals.Add(s);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(6.0, totals.busy_seconds("n1"), 1e-9);
    CPPUNIT_ASSERT_EQUAL(uint64_t{4}, totals.refusals("n1"));
    s.usage = {Usage(7, 1000000000ull, 1)};  // job 7 again (requeued): all of it is new
    totals.Add(s);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(7.0, totals.busy_seconds("n1"), 1e-9);
    CPPUNIT_ASSERT_EQUAL(uint64_t{5}, totals.refusals("n1"));
    // With a pool the job's node is the pool's, not this host's.
    s.pool = TestPool();
    s.node_name = "lab-host";
    s.usage = {Usage(7, 3000000000ull, 1)};
    totals.Add(s);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(9.0, totals.busy_seconds("n1"), 1e-9);
    CPPUNIT_ASSERT_EQUAL(std::string("n1"), NodeOfJob(s, 7));
    CPPUNIT_ASSERT_EQUAL(std::string("lab-host"), NodeOfJob(s, 99));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, totals.busy_seconds("lab-host"), 1e-9);
  }

  void NodesOutOfThePool() {
    for (const char* out : {"down", "idle+drain", "mixed+draining", "down+not_responding", "allocated+fail",
                            "idle+maint", "future", "inval"})
      CPPUNIT_ASSERT_MESSAGE(out, OutOfPool(out));
    for (const char* in : {"idle", "mixed", "allocated", "completing", "idle+power_save", "mixed+planned", ""})
      CPPUNIT_ASSERT_MESSAGE(in, !OutOfPool(in));
  }

  void StatusPageShowsThePool() {
    Snapshot s;
    s.pool_asked = true;
    s.pool = TestPool();
    const std::string page = StatusPage(s, "2026-12-06 10:00:00 UTC", 30);
    CPPUNIT_ASSERT(Has(page, "<meta http-equiv=\"refresh\" content=\"30\">"));
    CPPUNIT_ASSERT(Has(page, "2026-12-06 10:00:00 UTC"));
    CPPUNIT_ASSERT_MESSAGE(page, Has(page, "<tr data-type=\"nvidia\"><td>nvidia</td><td>200</td><td>30</td>"
                                           "<td class=\"free\">170</td><td>85</td><td>20</td></tr>"));
    CPPUNIT_ASSERT_MESSAGE(page, Has(page, "<li data-node=\"n2\">n2: idle+drain (vgpu: &lt;prolog&gt; failed)</li>"));
    CPPUNIT_ASSERT(!Has(page, "<prolog>"));  // escaped everywhere
    CPPUNIT_ASSERT(Has(page, "<div id=\"map\">\n<svg"));
    CPPUNIT_ASSERT(!Has(page, "<script"));
    CPPUNIT_ASSERT(!Has(page, "id=\"error\""));

    s.pool.reset();
    s.pool_error = "Unable to contact slurm controller";
    const std::string away = StatusPage(s, "now", 0);
    CPPUNIT_ASSERT(Has(away, "id=\"error\">slurmctld did not answer: Unable to contact slurm controller"));
    CPPUNIT_ASSERT(!Has(away, "http-equiv"));
    s.pool_asked = false;
    CPPUNIT_ASSERT(Has(StatusPage(s, "now", 0), "--no-pool"));
  }

  void OptionsAndTheirErrors() {
    ExporterOptions defaults;
    defaults.run_dir = "/run/vgpu";
    auto o = ParseExporterArgs({"--listen", "127.0.0.1:9999", "--interval=30", "--no-pool", "--node-name", "gpu01"},
                               defaults);
    CPPUNIT_ASSERT_MESSAGE(o.message(), o.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("127.0.0.1:9999"), o->listen);
    CPPUNIT_ASSERT_EQUAL(30, o->interval_s);
    CPPUNIT_ASSERT(!o->pool && o->node);
    CPPUNIT_ASSERT_EQUAL(std::string("gpu01"), o->node_name);
    CPPUNIT_ASSERT_EQUAL(std::string("/run/vgpu"), o->run_dir);
    CPPUNIT_ASSERT(ParseExporterArgs({"--help"}, defaults)->help);

    struct Bad {
      std::vector<std::string> args;
      const char* says;
    };
    for (const Bad& b : {Bad{{"--interval", "0"}, "1 to 3600"}, Bad{{"--interval=5s"}, "1 to 3600"},
                         Bad{{"--listen"}, "--listen needs a value"}, Bad{{"--run-dir="}, "--run-dir needs a value"},
                         Bad{{"--no-pool", "--no-node"}, "nothing to export"}, Bad{{"--pool"}, "unknown argument"}}) {
      auto r = ParseExporterArgs(b.args, defaults);
      CPPUNIT_ASSERT(!r.ok());
      CPPUNIT_ASSERT_MESSAGE(r.message(), Has(r.message(), b.says));
    }
  }

  // Scrapes within the interval reuse the collection; slurmctld failing
  // shows as slurm_up 0 and comes back with it.
  void CollectsOncePerInterval() {
    TempDir dir;
    ExporterOptions o;
    o.run_dir = dir.path();
    o.node_name = "n1";
    o.interval_s = 10;
    time_t now = 1000;
    int loads = 0;
    bool fail = false;
    Collector c(
        o,
        [&]() -> Result<status::PoolStatus> {
          ++loads;
          if (fail) return Result<status::PoolStatus>::Error("slurmctld away");
          return TestPool();
        },
        [&] { return now; });
    auto first = c.Current();
    CPPUNIT_ASSERT_EQUAL(1, loads);
    now = 1009;
    CPPUNIT_ASSERT(c.Current() == first);
    CPPUNIT_ASSERT_EQUAL(1, loads);
    now = 1010;
    fail = true;
    auto second = c.Current();
    CPPUNIT_ASSERT_EQUAL(2, loads);
    CPPUNIT_ASSERT(Has(second->metrics_text, "slurm_vgpu_exporter_slurm_up 0"));
    CPPUNIT_ASSERT_EQUAL(std::string("slurmctld away"), second->snapshot.pool_error);
    now = 900;  // the clock went back: collect again rather than serve the future's
    fail = false;
    CPPUNIT_ASSERT(Has(c.Current()->metrics_text, "slurm_vgpu_exporter_slurm_up 1"));
    CPPUNIT_ASSERT_EQUAL(3, loads);
  }

  void ServesOverHttp() {
    TempDir dir;
    MakeJob(dir.path(), 7, 30);
    ExporterOptions o;
    o.run_dir = dir.path();
    o.node_name = "n1";
    Collector c(o, [] { return Result<status::PoolStatus>(TestPool()); });
    auto server = ExporterServer::Start("127.0.0.1:0", &c);
    CPPUNIT_ASSERT_MESSAGE(server.message(), server.ok());
    const std::vector<int> ports = (*server)->ports();
    CPPUNIT_ASSERT_EQUAL(size_t(1), ports.size());
    CPPUNIT_ASSERT(ports[0] > 0);

    const std::string metrics = HttpGet(ports[0], "/metrics");
    CPPUNIT_ASSERT_MESSAGE(metrics, metrics.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CPPUNIT_ASSERT_MESSAGE(metrics, Has(metrics, "Content-Type: text/plain; version=0.0.4"));
    CPPUNIT_ASSERT_MESSAGE(metrics, Has(metrics, "slurm_vgpu_type_free_shares{type=\"nvidia\"} 170"));
    CPPUNIT_ASSERT_MESSAGE(metrics, Has(metrics, "slurm_vgpu_job_device_shares{node=\"n1\",jobid=\"7\""));
    const std::string page = HttpGet(ports[0], "/status");
    CPPUNIT_ASSERT_MESSAGE(page, Has(page, "Content-Type: text/html") && Has(page, "<div id=\"map\">"));
    CPPUNIT_ASSERT(Has(HttpGet(ports[0], "/"), "href=\"/metrics\""));
    CPPUNIT_ASSERT(HttpGet(ports[0], "/nope").rfind("HTTP/1.1 404", 0) == 0);

    // The same port again: an error naming it, not a crash.
    auto twice = ExporterServer::Start("127.0.0.1:" + std::to_string(ports[0]), &c);
    CPPUNIT_ASSERT(!twice.ok());
    CPPUNIT_ASSERT_MESSAGE(twice.message(), Has(twice.message(), "cannot listen on 127.0.0.1:" +
                                                                     std::to_string(ports[0])));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ExporterTest);

}  // namespace vgpu::exporter
