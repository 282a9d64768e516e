// Tests of vgpuctl status: Slurm's GRES strings and hostlists, the pool
// built from node and job lists in 22.05's format (sinfo/squeue --json,
// openapi v0.0.38: plain numbers and strings) and in the data_parser
// format of 23.02 on (wrapped numbers, states as arrays), filters, the
// table, the JSON document and the SVG map, and the command on saved
// inputs.
#include <cppunit/extensions/HelperMacros.h>
#include <json/json.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "status_command.h"
#include "status_format.h"
#include "temp_dir.h"

namespace vgpu::status {
namespace {

constexpr uint64_t kGiB = 1024ull * 1024 * 1024;

// Three nodes as 22.05's sinfo --json lists them: n1 with 8 ascend
// devices, n2 with 4 nvidia then 4 dcu (dcu bits 400-799), n3 without vgpu.
const char kNodes2205[] = R"js({"meta": {}, "errors": [], "nodes": [
  {"name": "n2", "state": "mixed", "partitions": ["debug", "share"],
   "gres": "vgpu:nvidia:400,vgpu:dcu:400(S:0)",
   "gres_used": "vgpu:nvidia:50(IDX:0-49),vgpu:dcu:60(IDX:400-429,500-529)"},
  {"name": "n1", "state": "idle", "partitions": ["debug"],
   "gres": "vgpu:ascend:800(S:0-1)", "gres_used": "vgpu:ascend:0(IDX:N/A)"},
  {"name": "n3", "state": "idle", "partitions": ["debug"], "gres": "", "gres_used": ""}]})js";

const char kJobs2205[] = R"js({"meta": {}, "errors": [], "jobs": [
  {"job_id": 7, "user_name": "alice", "job_state": "RUNNING", "nodes": "n2",
   "gres_detail": ["vgpu:nvidia:50(IDX:0-49),vgpu:dcu:30(IDX:400-429)"], "tres_per_node": "gres:vgpu:50"},
  {"job_id": 8, "user_name": "bob", "job_state": "RUNNING", "nodes": "n2",
   "gres_detail": ["vgpu:dcu:30(IDX:500-529)"], "tres_per_node": "gres:vgpu:dcu:30"},
  {"job_id": 9, "user_name": "bob", "job_state": "PENDING", "nodes": "", "node_count": 1,
   "array_task_string": "0-9%2", "tres_per_node": "gres:vgpu:ascend:10"},
  {"job_id": 10, "user_name": "carol", "job_state": "PENDING", "nodes": "", "node_count": 2,
   "tres_per_node": "gres:vgpu:20"},
  {"job_id": 11, "user_name": "carol", "job_state": "COMPLETED", "nodes": "n1",
   "gres_detail": ["vgpu:ascend:10(IDX:0-9)"]}]})js";

// The same, as scontrol --json show nodes and squeue --json write from
// 23.02 on: states as arrays, numbers wrapped, "gres/" in tres_per_node.
const char kNodes2511[] = R"js({"meta": {}, "errors": [], "warnings": [], "nodes": [
  {"name": "n2", "state": ["MIXED"], "partitions": ["debug", "share"],
   "gres": "vgpu:nvidia:400,vgpu:dcu:400(S:0)",
   "gres_used": "vgpu:nvidia:50(IDX:0-49),vgpu:dcu:60(IDX:400-429,500-529)"},
  {"name": "n1", "state": ["IDLE", "DRAIN"], "partitions": ["debug"],
   "gres": "vgpu:ascend:800(S:0-1)", "gres_used": "vgpu:ascend:0(IDX:N/A)"}]})js";

const char kJobs2511[] = R"js({"meta": {}, "errors": [], "warnings": [], "jobs": [
  {"job_id": 7, "user_name": "alice", "job_state": ["RUNNING"], "nodes": "n2",
   "gres_detail": ["vgpu:nvidia:50(IDX:0-49),vgpu:dcu:30(IDX:400-429)"], "tres_per_node": "gres/vgpu:50"},
  {"job_id": 8, "user_name": "bob", "job_state": ["RUNNING"], "nodes": "n2",
   "gres_detail": ["vgpu:dcu:30(IDX:500-529)"], "tres_per_node": "gres/vgpu:dcu:30"},
  {"job_id": 9, "user_name": "bob", "job_state": ["PENDING"], "nodes": "",
   "node_count": {"set": true, "infinite": false, "number": 1},
   "array_task_string": "0-9%2", "tres_per_node": "gres/vgpu:ascend:10"}]})js";

ModelTable Models() { return {{"dcu", {"hygon-k100", 64 * kGiB}}, {"nvidia", {"", 80 * kGiB}}}; }

const TypeStatus* TypeOf(const PoolStatus& p, const std::string& type) {
  for (const TypeStatus& t : p.types)
    if (t.type == type) return &t;
  return nullptr;
}

class PoolStatusTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PoolStatusTest);
  CPPUNIT_TEST(GresStrings);
  CPPUNIT_TEST(Hostlists);
  CPPUNIT_TEST(ArrayTasks);
  CPPUNIT_TEST(PoolFrom2205);
  CPPUNIT_TEST(PoolFromLaterReleases);
  CPPUNIT_TEST(BadDocumentsAreNamed);
  CPPUNIT_TEST(Filters);
  CPPUNIT_TEST(TableAndJson);
  CPPUNIT_TEST(SvgMap);
  CPPUNIT_TEST(CommandOnSavedInputs);
  CPPUNIT_TEST_SUITE_END();

 public:
  void GresStrings() {
    auto g = ParseGres("gpu:2,vgpu:nvidia:400(S:0-1),vgpu:dcu:60(IDX:400-429,500-529),vgpu:800");
    CPPUNIT_ASSERT_EQUAL(size_t(4), g.size());
    CPPUNIT_ASSERT_EQUAL(std::string("gpu"), g[0].name);
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), g[1].type);
    CPPUNIT_ASSERT_EQUAL(std::string("0-1"), g[1].sockets);
    CPPUNIT_ASSERT_EQUAL(uint64_t(60), g[2].count);
    CPPUNIT_ASSERT_EQUAL(size_t(60), g[2].bits.size());
    CPPUNIT_ASSERT_EQUAL(uint64_t(529), g[2].bits.back());
    CPPUNIT_ASSERT_EQUAL(std::string(""), g[3].type);
    CPPUNIT_ASSERT(ParseGres("(null)").empty());
    CPPUNIT_ASSERT(ParseGres("vgpu:x:y,vgpu:a:5(IDX:9-1)").empty());  // malformed: skipped
  }

  void Hostlists() {
    const std::vector<std::string> want = {"n1", "n2", "n3", "n7", "gpu09", "gpu10", "login"};
    CPPUNIT_ASSERT(ExpandHostlist("n[1-3,7],gpu[09-10],login") == want);
    CPPUNIT_ASSERT(ExpandHostlist("").empty());
  }

  void ArrayTasks() {
    CPPUNIT_ASSERT_EQUAL(uint64_t(10), ArrayTaskCount("0-9%2"));
    CPPUNIT_ASSERT_EQUAL(uint64_t(5), ArrayTaskCount("1,3,5-7"));
    CPPUNIT_ASSERT_EQUAL(uint64_t(5), ArrayTaskCount("0-9:2"));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), ArrayTaskCount(""));
  }

  void PoolFrom2205() { CheckPool(ReadPool(kNodes2205, kJobs2205, 100, Models()), "idle"); }
  void PoolFromLaterReleases() { CheckPool(ReadPool(kNodes2511, kJobs2511, 100, Models()), "idle+drain"); }

  void CheckPool(const Result<PoolStatus>& got, const std::string& n1_state) {
    CPPUNIT_ASSERT_MESSAGE(got.message(), got.ok());
    const PoolStatus& p = *got;
    CPPUNIT_ASSERT_EQUAL(size_t(2), p.nodes.size());  // n3 has no vgpu
    CPPUNIT_ASSERT_EQUAL(std::string("n1"), p.nodes[0].name);
    CPPUNIT_ASSERT_EQUAL(n1_state, p.nodes[0].state);
    CPPUNIT_ASSERT_EQUAL(std::string("0-1"), p.nodes[0].devices[0].sockets);
    const NodeStatus& n2 = p.nodes[1];
    CPPUNIT_ASSERT_EQUAL(size_t(8), n2.devices.size());
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), n2.devices[3].type);
    CPPUNIT_ASSERT_EQUAL(std::string("dcu"), n2.devices[4].type);
    CPPUNIT_ASSERT_EQUAL(uint32_t(50), n2.devices[0].allocated);
    CPPUNIT_ASSERT_EQUAL(uint32_t(30), n2.devices[4].allocated);
    CPPUNIT_ASSERT_EQUAL(uint32_t(30), n2.devices[5].allocated);
    CPPUNIT_ASSERT_EQUAL(uint32_t(70), n2.devices[5].free());
    // Device 4: alice's 30 shares; device 5: bob's.
    CPPUNIT_ASSERT_EQUAL(size_t(1), n2.devices[4].jobs.size());
    CPPUNIT_ASSERT_EQUAL(uint64_t(7), n2.devices[4].jobs[0].job_id);
    CPPUNIT_ASSERT_EQUAL(std::string("alice"), n2.devices[4].jobs[0].user);
    CPPUNIT_ASSERT_EQUAL(std::string("bob"), n2.devices[5].jobs[0].user);
    // Models: dcu is one model; nvidia several of one size (memory, no id).
    CPPUNIT_ASSERT_EQUAL(std::string("hygon-k100"), n2.devices[4].model);
    CPPUNIT_ASSERT_EQUAL(64 * kGiB * 30 / 100, n2.devices[4].memory_quota());
    CPPUNIT_ASSERT_EQUAL(std::string(""), n2.devices[0].model);
    CPPUNIT_ASSERT_EQUAL(80 * kGiB / 2, n2.devices[0].memory_quota());
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), p.nodes[0].devices[0].memory_quota());  // ascend: unknown
    // Types: totals, allocated, pending (10 array tasks of 10 ascend shares).
    CPPUNIT_ASSERT_EQUAL(uint64_t(800), TypeOf(p, "ascend")->shares);
    CPPUNIT_ASSERT_EQUAL(uint64_t(100), TypeOf(p, "ascend")->pending);
    CPPUNIT_ASSERT_EQUAL(uint64_t(60), TypeOf(p, "dcu")->allocated);
    CPPUNIT_ASSERT_EQUAL(uint64_t(340), TypeOf(p, "dcu")->free());
    CPPUNIT_ASSERT_EQUAL(uint64_t(50), TypeOf(p, "nvidia")->allocated);
  }

  void BadDocumentsAreNamed() {
    auto empty = ReadPool("", kJobs2205, 100, {});
    CPPUNIT_ASSERT(!empty.ok());
    CPPUNIT_ASSERT(empty.message().find("node list is empty") != std::string::npos);
    auto garbage = ReadPool(kNodes2205, "{not json", 100, {});
    CPPUNIT_ASSERT(garbage.message().find("job list is not JSON") != std::string::npos);
    auto no_array = ReadPool(R"({"jobs": []})", kJobs2205, 100, {});
    CPPUNIT_ASSERT(no_array.message().find("no \"nodes\" array") != std::string::npos);
    auto errors = ReadPool(kNodes2205, R"({"errors": [{"description": "Unable to contact slurm controller"}], "jobs": []})",
                           100, {});
    CPPUNIT_ASSERT(errors.message().find("Unable to contact slurm controller") != std::string::npos);
    // A count that is not whole devices is a note, not a failure.
    auto odd = ReadPool(R"({"nodes": [{"name": "n9", "gres": "vgpu:ascend:150"}]})", R"({"jobs": []})", 100, {});
    CPPUNIT_ASSERT(odd.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(1), odd->nodes[0].devices.size());
    CPPUNIT_ASSERT_EQUAL(size_t(1), odd->notes.size());
  }

  void Filters() {
    PoolStatus p = *ReadPool(kNodes2205, kJobs2205, 100, Models());
    StatusOptions by_type;
    by_type.type = "dcu";
    PoolStatus dcu = Filter(p, by_type);
    CPPUNIT_ASSERT_EQUAL(size_t(1), dcu.nodes.size());
    CPPUNIT_ASSERT_EQUAL(size_t(4), dcu.nodes[0].devices.size());
    CPPUNIT_ASSERT_EQUAL(size_t(1), dcu.types.size());
    StatusOptions by_partition;
    by_partition.partition = "share";
    PoolStatus share = Filter(p, by_partition);
    CPPUNIT_ASSERT_EQUAL(size_t(1), share.nodes.size());
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), TypeOf(share, "ascend")->shares);  // n1 is not in share
    CPPUNIT_ASSERT_EQUAL(uint64_t(100), TypeOf(share, "ascend")->pending);
    StatusOptions by_node;
    by_node.nodes = ExpandHostlist("n[1,5]");
    CPPUNIT_ASSERT_EQUAL(std::string("n1"), Filter(p, by_node).nodes.at(0).name);
    CPPUNIT_ASSERT_EQUAL(size_t(1), Filter(p, by_node).nodes.size());
  }

  void TableAndJson() {
    PoolStatus p = *ReadPool(kNodes2205, kJobs2205, 100, Models());
    const std::string table = FormatTable(p);
    CPPUNIT_ASSERT(table.find("2 node(s), 16 device(s) of 100 shares") != std::string::npos);
    CPPUNIT_ASSERT(table.find("7:alice:30") != std::string::npos);
    CPPUNIT_ASSERT(table.find("pending jobs of any type ask 40 shares") != std::string::npos);
    Json::Value doc;
    std::istringstream in(FormatJson(p));
    in >> doc;
    CPPUNIT_ASSERT_EQUAL(kJsonVersion, doc["version"].asInt());
    CPPUNIT_ASSERT_EQUAL(40u, doc["pending_untyped"].asUInt());
    const Json::Value& dev = doc["nodes"][1]["devices"][4];
    CPPUNIT_ASSERT_EQUAL(std::string("dcu"), dev["type"].asString());
    CPPUNIT_ASSERT_EQUAL(30u, dev["allocated"].asUInt());
    CPPUNIT_ASSERT_EQUAL(70u, dev["free"].asUInt());
    CPPUNIT_ASSERT_EQUAL(Json::UInt64(64 * kGiB * 30 / 100), dev["memory_quota_bytes"].asUInt64());
    CPPUNIT_ASSERT_EQUAL(std::string("alice"), dev["jobs"][0]["user"].asString());
  }

  void SvgMap() {
    PoolStatus p = *ReadPool(kNodes2205, kJobs2205, 100, Models());
    p.nodes[0].name = "n1<&>";  // escaped
    const std::string svg = RenderPoolSvg(p);
    CPPUNIT_ASSERT_EQUAL(size_t(0), svg.find("<svg"));
    CPPUNIT_ASSERT(svg.find("n1&lt;&amp;&gt;") != std::string::npos);
    size_t cells = 0;
    for (size_t at = svg.find("class=\"device\""); at != std::string::npos; at = svg.find("class=\"device\"", at + 1))
      ++cells;
    CPPUNIT_ASSERT_EQUAL(size_t(16), cells);
    CPPUNIT_ASSERT(svg.find("data-allocated=\"30\"") != std::string::npos);
    CPPUNIT_ASSERT(!RenderPoolSvg(PoolStatus()).empty());
  }

  void CommandOnSavedInputs() {
    TempDir dir;
    const std::string nodes = dir.path() + "/nodes.json", jobs = dir.path() + "/jobs.json";
    std::ofstream(nodes) << kNodes2511;
    std::ofstream(jobs) << kJobs2511;
    std::ofstream(dir.path() + "/vgpu.conf") << "SharesPerDevice=100\nChipCatalogDir=" << dir.path() << "/none\n";
    const std::string conf = "--conf=" + dir.path() + "/slurm.conf";
    std::ostringstream out, err;
    CPPUNIT_ASSERT_EQUAL(0, RunStatus({conf, "--nodes-input", nodes, "--jobs-input", jobs, "--json", "--type=dcu",
                                       "--svg", dir.path() + "/map.svg"},
                                      out, err));
    Json::Value doc;
    std::istringstream in(out.str());
    in >> doc;
    CPPUNIT_ASSERT_EQUAL(60u, doc["types"][0]["allocated"].asUInt());
    std::ifstream svg(dir.path() + "/map.svg");
    CPPUNIT_ASSERT(svg.good());
    std::ostringstream out2, err2;
    CPPUNIT_ASSERT_EQUAL(2, RunStatus({"--nodes-input", nodes}, out2, err2));
    CPPUNIT_ASSERT(err2.str().find("go together") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(2, RunStatus({"--bogus"}, out2, err2));
    std::ostringstream out3, err3;
    CPPUNIT_ASSERT_EQUAL(1, RunStatus({conf, "--nodes-input", dir.path() + "/missing", "--jobs-input", jobs}, out3, err3));
    CPPUNIT_ASSERT(err3.str().find("missing") != std::string::npos);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PoolStatusTest);

}  // namespace
}  // namespace vgpu::status
