// Tests of vgpuctl report: the epilog's AdminComment, Slurm 22.05's
// sacct --json (openapi dbv0.0.38 job dump), the sums by user, account and
// type, the CSV/JSON/table outputs, options, and running sacct (a stand-in
// script) end to end.
#include <cppunit/extensions/HelperMacros.h>
#include <json/json.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "report_command.h"
#include "report_format.h"
#include "temp_dir.h"
#include "usage_report.h"
#include "util/run_command.h"

namespace vgpu::report {
namespace {

constexpr uint64_t kGiB = 1024ull * 1024 * 1024;

// One job as sacct 22.05 dumps it (parse.c: parse_job[], in its order;
// null for NO_VAL and unset strings, TRES names "" for cpu/mem/node/billing).
// `tres` is the JSON list of tres.allocated, `admin` the AdminComment
// (nullptr: none). Steps are left empty: the report does not read them.
std::string Job(uint64_t id, const std::string& user, const std::string& account, uint32_t elapsed,
                const std::string& tres, const char* admin, const std::string& state = "COMPLETED") {
  const uint32_t start = 1718000000, end = start + elapsed;
  std::string e = std::to_string(elapsed), s = std::to_string(start), t = std::to_string(end);
  std::string comment = admin != nullptr ? Json::valueToQuotedString(admin) : "null";
  return R"({
      "account": ")" + account + R"(",
      "comment": {"administrator": )" + comment + R"(, "job": null, "system": null},
      "allocation_nodes": 1,
      "array": {"job_id": 0, "limits": {"max": {"running": {"tasks": 0}}}, "task": null, "task_id": null},
      "association": {"account": ")" + account + R"(", "cluster": "lab", "partition": null, "user": ")" + user + R"("},
      "cluster": "lab",
      "constraints": "",
      "container": null,
      "derived_exit_code": {"status": "SUCCESS", "return_code": 0},
      "time": {"elapsed": )" + e + R"(, "eligible": )" + s + R"(, "end": )" + t + R"(, "start": )" + s +
         R"(, "submission": )" + s + R"(, "suspended": 0, "system": {"seconds": 0, "microseconds": 4000},
               "limit": 120, "total": {"seconds": 1, "microseconds": 8000}, "user": {"seconds": 1, "microseconds": 4000}},
      "exit_code": {"status": "SUCCESS", "return_code": 0},
      "flags": ["CLEAR_SCHEDULING", "STARTED_ON_SCHEDULE"],
      "group": ")" + user + R"(",
      "het": {"job_id": 0, "job_offset": null},
      "job_id": )" + std::to_string(id) + R"(,
      "name": "train",
      "mcs": {"label": null},
      "nodes": "n1",
      "partition": "acc",
      "priority": 4294901759,
      "qos": "normal",
      "required": {"CPUs": 2, "memory": 0},
      "kill_request_user": null,
      "reservation": {"id": 0, "name": 0},
      "state": {"current": ")" + state + R"(", "reason": "None"},
      "steps": [],
      "tres": {"allocated": )" + tres + R"(,
               "requested": [{"type": "cpu", "name": "", "id": 1, "count": 2}]},
      "user": ")" + user + R"(",
      "wckey": {"wckey": "", "flags": []},
      "working_directory": "/home/)" + user + R"("
    })";
}

std::string Tres(const std::string& vgpu_type, uint64_t shares) {
  std::string t = R"([{"type": "cpu", "name": "", "id": 1, "count": 2},
      {"type": "mem", "name": "", "id": 2, "count": 4096},
      {"type": "node", "name": "", "id": 4, "count": 1},
      {"type": "billing", "name": "", "id": 5, "count": 2})";
  if (shares > 0) {
    std::string n = std::to_string(shares);
    t += R"(, {"type": "gres", "name": "vgpu", "id": 1001, "count": )" + n + "}";
    if (!vgpu_type.empty())
      t += R"(, {"type": "gres", "name": "vgpu:)" + vgpu_type + R"(", "id": 1002, "count": )" + n + "}";
  }
  return t + "]";
}

std::string Document(const std::vector<std::string>& jobs, const std::string& errors = "[]") {
  std::string doc = R"({
  "meta": {"plugin": {"type": "openapi\/dbv0.0.38", "name": "Slurm OpenAPI DB v0.0.38"},
           "Slurm": {"version": {"major": 22, "micro": 8, "minor": 5}, "release": "22.05.8"}},
  "errors": )" + errors + R"(,
  "jobs": [)";
  for (size_t i = 0; i < jobs.size(); ++i) doc += (i ? ",\n" : "\n") + jobs[i];
  return doc + "\n  ]\n}\n";
}

// Two nodes, one Ascend device each: 10 + 10 shares of 100, busy 1800 s and
// 900 s (50 + 25 share-h), peak 1 + 2 GiB of 4 + 4 GiB.
const char kTwoNodes[] =
    R"({"vgpu":1,"nodes":{"n2":{"wall_s":7200.5,"devices":[{"index":3,"type":"ascend","shares":10,"of":100,)"
    R"("memory_quota":4294967296,"memory_peak":2147483648,"busy_s":900}]},)"
    R"("n1":{"wall_s":7201.2,"devices":[{"index":0,"type":"ascend","model":"ascend-910b","shares":10,"of":100,)"
    R"("memory_quota":4294967296,"memory_peak":1073741824,"busy_s":1800,"slice":"vir03_1c_8g"}]}}})";
// One NVIDIA device, 25 shares, busy 450 s (12.5 share-h), peak 5 of 10 GiB.
const char kOneNvidia[] =
    R"({"vgpu":1,"nodes":{"n3":{"wall_s":3600,"devices":[{"index":1,"type":"nvidia","model":"nvidia-a100",)"
    R"("shares":25,"of":100,"memory_quota":10737418240,"memory_peak":5368709120,"busy_s":450}]}}})";

// 101 alice/physics ascend 20 shares x 2 h, usage on 2 nodes
// 102 bob/physics   nvidia 50 x 1 h, no AdminComment
// 103 alice/chem    nvidia 100 x 0.5 h, AdminComment unrelated text
// 104 carol/chem    CPU only (left out)
// 105 bob/physics   nvidia 25 x 1 h, usage
std::string Fixture() {
  return Document({Job(101, "alice", "physics", 7200, Tres("ascend", 20), kTwoNodes),
                   Job(102, "bob", "physics", 3600, Tres("nvidia", 50), nullptr),
                   Job(103, "alice", "chem", 1800, Tres("nvidia", 100), "requeued by admin: n3 drained", "FAILED"),
                   Job(104, "carol", "chem", 600, Tres("", 0), nullptr),
                   Job(105, "bob", "physics", 3600, Tres("nvidia", 25), kOneNvidia)});
}

const char kExpectedCsv[] =
    "group,key,jobs,jobs_with_usage,requested_share_hours,used_share_hours,used_percent,"
    "memory_peak_gib,memory_quota_gib,memory_efficiency_percent\n"
    "user,alice,2,1,90.0000,75.0000,187.50,3.0000,8.0000,37.50\n"
    "user,bob,2,1,75.0000,12.5000,50.00,5.0000,10.0000,50.00\n"
    "account,physics,3,2,115.0000,87.5000,134.62,8.0000,18.0000,44.44\n"
    "account,chem,1,0,50.0000,0.0000,,0.0000,0.0000,\n"
    "type,nvidia,3,1,125.0000,12.5000,50.00,5.0000,10.0000,50.00\n"
    "type,ascend,1,1,40.0000,75.0000,187.50,3.0000,8.0000,37.50\n"
    "total,total,4,2,165.0000,87.5000,134.62,8.0000,18.0000,44.44\n";

const std::vector<GroupBy> kAll = {GroupBy::kUser, GroupBy::kAccount, GroupBy::kType};

Summary FixtureSummary() {
  auto jobs = ParseSacctJson(Fixture());
  CPPUNIT_ASSERT_MESSAGE(jobs.message(), jobs.ok());
  return Summarise(*jobs);
}

// Each row's fields, "key jobs with_usage requested requested_with_usage
// used peak quota|", numbers exact (the fixture's are binary fractions).
std::string Fields(const std::vector<Row>& rows) {
  std::ostringstream o;
  o << std::setprecision(17);
  for (const Row& r : rows)
    o << r.key << ' ' << r.jobs << ' ' << r.jobs_with_usage << ' ' << r.requested_sh << ' '
      << r.requested_sh_with_usage << ' ' << r.used_sh << ' ' << r.memory_peak << ' ' << r.memory_quota << '|';
  return o.str();
}

struct Outcome {
  int status;
  std::string out, err;
};
Outcome Run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int status = RunReport(args, 1718000000, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace

class UsageReportTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(UsageReportTest);
  CPPUNIT_TEST(CommentOfTwoNodes);
  CPPUNIT_TEST(CommentsThatAreNotOurs);
  CPPUNIT_TEST(SacctJobFields);
  CPPUNIT_TEST(SacctErrors);
  CPPUNIT_TEST(SumsByUserAccountType);
  CPPUNIT_TEST(UntypedAndModelTypes);
  CPPUNIT_TEST(UsageWithoutVgpuTres);
  CPPUNIT_TEST(CsvOutput);
  CPPUNIT_TEST(JsonOutput);
  CPPUNIT_TEST(TableOutput);
  CPPUNIT_TEST(UserChart);
  CPPUNIT_TEST(Options);
  CPPUNIT_TEST(RunCommandCapturesBothStreams);
  CPPUNIT_TEST(ReportFromInputFile);
  CPPUNIT_TEST(ReportRunsSacct);
  CPPUNIT_TEST(ReportErrors);
  CPPUNIT_TEST_SUITE_END();

 public:
  void CommentOfTwoNodes() {
    auto d = ParseUsageComment(kTwoNodes);
    CPPUNIT_ASSERT(d.has_value());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, d->size());
    const DeviceUsage& a = (*d)[0];  // n1 before n2, whatever the record's order
    CPPUNIT_ASSERT_EQUAL(std::string("n1"), a.node);
    CPPUNIT_ASSERT_EQUAL(0u, a.index);
    CPPUNIT_ASSERT_EQUAL(std::string("ascend"), a.type);
    CPPUNIT_ASSERT_EQUAL(std::string("ascend-910b"), a.model);
    CPPUNIT_ASSERT_EQUAL(std::string("vir03_1c_8g"), a.slice);
    CPPUNIT_ASSERT_EQUAL(10.0, a.shares);
    CPPUNIT_ASSERT_EQUAL(100.0, a.of);
    CPPUNIT_ASSERT_EQUAL(uint64_t{4294967296}, a.memory_quota);
    CPPUNIT_ASSERT_EQUAL(uint64_t{1073741824}, a.memory_peak);
    CPPUNIT_ASSERT_EQUAL(1800.0, a.busy_s);
    const DeviceUsage& b = (*d)[1];
    CPPUNIT_ASSERT_EQUAL(std::string("n2"), b.node);
    CPPUNIT_ASSERT_EQUAL(3u, b.index);
    CPPUNIT_ASSERT_EQUAL(std::string(""), b.model);  // optional fields absent
    CPPUNIT_ASSERT_EQUAL(std::string(""), b.slice);
    // The brief's example, with a fractional busy time.
    auto e = ParseUsageComment(
        R"({"vgpu":1,"nodes":{"n1":{"wall_s":61.2,"devices":[{"index":0,"type":"ascend","model":"ascend-910b",)"
        R"("shares":10,"of":100,"memory_quota":6871947673,"memory_peak":1073741824,"busy_s":12.5,"slice":"vir03_1c_8g"}]}}})");
    CPPUNIT_ASSERT(e.has_value() && e->size() == 1);
    CPPUNIT_ASSERT_EQUAL(uint64_t{6871947673}, (*e)[0].memory_quota);
    CPPUNIT_ASSERT_EQUAL(12.5, (*e)[0].busy_s);
  }

  void CommentsThatAreNotOurs() {
    const std::string dev = R"({"index":0,"type":"nvidia","shares":10,"of":100,"memory_quota":1,"memory_peak":1,"busy_s":1})";
    auto with = [&](const std::string& device) {
      return R"({"vgpu":1,"nodes":{"n1":{"devices":[)" + device + "]}}}";
    };
    CPPUNIT_ASSERT(ParseUsageComment(with(dev)).has_value());  // the control: this one is ours
    for (const std::string& c :
         {std::string(""), std::string("requeued by admin"), std::string("{not json"), std::string("[1,2]"),
          std::string(R"({"note":"checked"})"), std::string(R"({"vgpu":2,"nodes":{}})"),
          std::string(R"({"vgpu":1,"nodes":[]})"), std::string(R"({"vgpu":1,"nodes":{"n1":{}}})"),
          std::string(R"({"vgpu":1,"nodes":{}} trailing)"), with(R"({"index":0,"type":"nvidia"})"),
          with(R"({"index":0,"type":"nvidia","shares":10,"of":0,"memory_quota":1,"memory_peak":1,"busy_s":1})"),
          with(R"({"index":0,"type":"nvidia","shares":10,"of":100,"memory_quota":1,"memory_peak":1,"busy_s":-1})"),
          with(R"({"index":0,"type":"nvidia","shares":10,"of":100,"memory_quota":1.5,"memory_peak":1,"busy_s":1})"),
          with(R"({"index":0,"type":7,"shares":10,"of":100,"memory_quota":1,"memory_peak":1,"busy_s":1})"),
          with(dev + ",3")})
      CPPUNIT_ASSERT_MESSAGE(c, !ParseUsageComment(c).has_value());
    auto empty = ParseUsageComment(R"({"vgpu":1,"nodes":{}})");  // ours, no device recorded
    CPPUNIT_ASSERT(empty.has_value() && empty->empty());
  }

  void SacctJobFields() {
    auto jobs = ParseSacctJson(Fixture());
    CPPUNIT_ASSERT_MESSAGE(jobs.message(), jobs.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{5}, jobs->size());
    const JobRecord& j = (*jobs)[0];
    CPPUNIT_ASSERT_EQUAL(uint64_t{101}, j.job_id);
    CPPUNIT_ASSERT_EQUAL(std::string("alice"), j.user);
    CPPUNIT_ASSERT_EQUAL(std::string("physics"), j.account);
    CPPUNIT_ASSERT_EQUAL(std::string("COMPLETED"), j.state);
    CPPUNIT_ASSERT_EQUAL(7200.0, j.elapsed_s);
    CPPUNIT_ASSERT_EQUAL(int64_t{1718000000}, j.start);
    CPPUNIT_ASSERT_EQUAL(int64_t{1718007200}, j.end);
    CPPUNIT_ASSERT_EQUAL(size_t{2}, j.allocated.size());
    CPPUNIT_ASSERT_EQUAL(uint64_t{20}, j.allocated.at(""));
    CPPUNIT_ASSERT_EQUAL(uint64_t{20}, j.allocated.at("ascend"));
    CPPUNIT_ASSERT(j.has_usage);
    CPPUNIT_ASSERT_EQUAL(size_t{2}, j.devices.size());
    CPPUNIT_ASSERT(!(*jobs)[1].has_usage);                 // no AdminComment
    CPPUNIT_ASSERT(!(*jobs)[2].has_usage);                 // unrelated text
    CPPUNIT_ASSERT_EQUAL(std::string("FAILED"), (*jobs)[2].state);
    CPPUNIT_ASSERT(!(*jobs)[3].HasVgpu());                 // CPU only
    CPPUNIT_ASSERT((*jobs)[3].allocated.empty());
    CPPUNIT_ASSERT((*jobs)[4].HasVgpu() && (*jobs)[4].has_usage);

    // Later releases wrap numbers: {"set": true, "number": N}; state lists.
    auto wrapped = ParseSacctJson(
        R"({"jobs":[{"job_id":7,"user":null,"account":null,"state":{"current":["RUNNING"]},)"
        R"("time":{"elapsed":{"set":true,"infinite":false,"number":900},"start":{"set":false,"number":0}},)"
        R"("tres":{"allocated":[{"type":"gres","name":"vgpu:dcu","count":{"set":true,"number":30}}]}}]})");
    CPPUNIT_ASSERT_MESSAGE(wrapped.message(), wrapped.ok());
    CPPUNIT_ASSERT_EQUAL(900.0, (*wrapped)[0].elapsed_s);
    CPPUNIT_ASSERT_EQUAL(int64_t{0}, (*wrapped)[0].start);
    CPPUNIT_ASSERT_EQUAL(std::string("RUNNING"), (*wrapped)[0].state);
    CPPUNIT_ASSERT_EQUAL(uint64_t{30}, (*wrapped)[0].allocated.at("dcu"));
    CPPUNIT_ASSERT_EQUAL(std::string(""), (*wrapped)[0].user);
    // Odd shapes are read as absent, not thrown on.
    auto odd = ParseSacctJson(R"({"jobs":[{"state":"X","time":5,"tres":[],"comment":"c"}]})");
    CPPUNIT_ASSERT_MESSAGE(odd.message(), odd.ok());
    CPPUNIT_ASSERT(!(*odd)[0].HasVgpu() && (*odd)[0].state.empty());
  }

  void SacctErrors() {
    auto bad = ParseSacctJson(Fixture().substr(0, 400));  // cut short
    CPPUNIT_ASSERT(!bad.ok());
    CPPUNIT_ASSERT_MESSAGE(bad.message(), bad.message().rfind("is not JSON: ", 0) == 0);
    CPPUNIT_ASSERT(bad.message().find('\n') == std::string::npos);
    auto no_jobs = ParseSacctJson(R"({"meta":{},"errors":[]})");
    CPPUNIT_ASSERT(!no_jobs.ok());
    CPPUNIT_ASSERT_MESSAGE(no_jobs.message(), no_jobs.message().find("no \"jobs\" list") != std::string::npos);
    CPPUNIT_ASSERT(!ParseSacctJson(R"({"jobs":[1]})").ok());
    // An empty window: api.c answers "Nothing found" (ESLURM_REST_EMPTY_RESULT).
    auto empty = ParseSacctJson(Document({}, R"([{"description": "Nothing found", "error_number": 9003,
        "error": "Nothing found with query", "source": "slurmdb_jobs_get"}])"));
    CPPUNIT_ASSERT_MESSAGE(empty.message(), empty.ok());
    CPPUNIT_ASSERT(empty->empty());
    auto down = ParseSacctJson(Document({}, R"([{"description": "Failed connecting to slurmdbd",
        "error_number": 7000, "error": "Unable to connect to database", "source": "slurmdb_jobs_get"}])"));
    CPPUNIT_ASSERT(!down.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("reports an error: Failed connecting to slurmdbd (Unable to connect to "
                                     "database) in slurmdb_jobs_get"),
                         down.message());
  }

  void SumsByUserAccountType() {
    Summary s = FixtureSummary();
    CPPUNIT_ASSERT_EQUAL(uint64_t{5}, s.records);
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, s.usage_without_vgpu);
    // key jobs with_usage requested requested_with_usage used peak quota;
    // alice: 20 x 2 h + 100 x 0.5 h requested, (1800 + 900) s / 3600 x 100 used.
    CPPUNIT_ASSERT_EQUAL(std::string("alice 2 1 90 40 75 3221225472 8589934592|"
                                     "bob 2 1 75 25 12.5 5368709120 10737418240|"),  // carol: CPU only
                         Fields(s.by_user));
    CPPUNIT_ASSERT_EQUAL(std::string("physics 3 2 115 65 87.5 8589934592 19327352832|chem 1 0 50 0 0 0 0|"),
                         Fields(s.by_account));
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia 3 1 125 25 12.5 5368709120 10737418240|"
                                     "ascend 1 1 40 40 75 3221225472 8589934592|"),
                         Fields(s.by_type));
    CPPUNIT_ASSERT_EQUAL(std::string("total 4 2 165 65 87.5 8589934592 19327352832|"), Fields({s.total}));
    CPPUNIT_ASSERT_EQUAL(187.5, s.by_user[0].UsedPercent());
    CPPUNIT_ASSERT_EQUAL(37.5, s.by_user[0].MemoryEfficiencyPercent());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(87.5 / 65 * 100, s.total.UsedPercent(), 1e-12);
    CPPUNIT_ASSERT(std::isnan(s.by_account[1].UsedPercent()));  // chem: no job with usage
    CPPUNIT_ASSERT(std::isnan(s.by_account[1].MemoryEfficiencyPercent()));
  }

  void UntypedAndModelTypes() {
    // Only gres/vgpu tracked: the devices' type; without devices "untyped".
    // A per-model TRES (gres/vgpu:nvidia-a100) takes the device by its model.
    auto jobs = ParseSacctJson(Document({Job(1, "u", "a", 3600, Tres("", 25), kOneNvidia),
                                         Job(2, "u", "a", 3600, Tres("", 10), nullptr),
                                         Job(3, "u", "a", 7200, Tres("nvidia-a100", 25), kOneNvidia)}));
    CPPUNIT_ASSERT_MESSAGE(jobs.message(), jobs.ok());
    Summary s = Summarise(*jobs);
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia-a100 1 1 50 50 12.5 5368709120 10737418240|"
                                     "nvidia 1 1 25 25 12.5 5368709120 10737418240|untyped 1 0 10 0 0 0 0|"),
                         Fields(s.by_type));
    CPPUNIT_ASSERT_EQUAL(std::string("u 3 2 85 75 25 10737418240 21474836480|"), Fields(s.by_user));
  }

  void UsageWithoutVgpuTres() {
    auto jobs = ParseSacctJson(Document({Job(1, "u", "a", 3600, Tres("", 0), kOneNvidia)}));
    CPPUNIT_ASSERT(jobs.ok());
    Summary s = Summarise(*jobs);
    CPPUNIT_ASSERT_EQUAL(uint64_t{1}, s.usage_without_vgpu);
    CPPUNIT_ASSERT(s.by_user.empty());
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, s.total.jobs);
  }

  void CsvOutput() {
    Summary s = FixtureSummary();
    CPPUNIT_ASSERT_EQUAL(std::string(kExpectedCsv), FormatCsv(s, kAll));
    std::string types = FormatCsv(s, {GroupBy::kType});
    CPPUNIT_ASSERT(types.find("\ntype,nvidia,") != std::string::npos);
    CPPUNIT_ASSERT(types.find("\nuser,") == std::string::npos);
    // A key with a comma or a quote is quoted per RFC 4180.
    auto odd = ParseSacctJson(Document({Job(1, "x", "a,\\\"b", 3600, Tres("dcu", 10), nullptr)}));
    CPPUNIT_ASSERT(odd.ok());
    CPPUNIT_ASSERT(FormatCsv(Summarise(*odd), {GroupBy::kAccount}).find("\naccount,\"a,\"\"b\",1,0,") !=
                   std::string::npos);
  }

  void JsonOutput() {
    Summary s = FixtureSummary();
    ReportSource src{"2024-06-10T00:00:00", "", ""};
    Json::Value v;
    std::istringstream in(FormatJson(s, kAll, src));
    in >> v;
    CPPUNIT_ASSERT_EQUAL(std::string("2024-06-10T00:00:00"), v["source"]["since"].asString());
    CPPUNIT_ASSERT(v["source"]["until"].isNull() && v["source"]["input"].isNull());
    CPPUNIT_ASSERT_EQUAL(5u, v["records"].asUInt());
    CPPUNIT_ASSERT_EQUAL(2u, v["by_user"].size());
    const Json::Value& alice = v["by_user"][0];
    CPPUNIT_ASSERT_EQUAL(std::string("alice"), alice["key"].asString());
    CPPUNIT_ASSERT_EQUAL(90.0, alice["requested_share_hours"].asDouble());
    CPPUNIT_ASSERT_EQUAL(40.0, alice["requested_share_hours_with_usage"].asDouble());
    CPPUNIT_ASSERT_EQUAL(187.5, alice["used_percent"].asDouble());
    CPPUNIT_ASSERT_EQUAL(Json::UInt64(3 * kGiB), alice["memory_peak_bytes"].asUInt64());
    CPPUNIT_ASSERT(v["by_account"][1]["used_percent"].isNull());  // chem: nothing to compare
    CPPUNIT_ASSERT(v["by_account"][1]["memory_efficiency_percent"].isNull());
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), v["by_type"][0]["key"].asString());
    CPPUNIT_ASSERT_EQUAL(165.0, v["total"]["requested_share_hours"].asDouble());
    Json::Value only;
    std::istringstream in2(FormatJson(s, {GroupBy::kAccount}, src));
    in2 >> only;
    CPPUNIT_ASSERT(only.isMember("by_account") && !only.isMember("by_user") && !only.isMember("by_type"));
  }

  void TableOutput() {
    std::string t = FormatTable(FixtureSummary(), {GroupBy::kUser, GroupBy::kAccount}, {"2024-06-10", "", ""});
    std::istringstream in(t);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    CPPUNIT_ASSERT_EQUAL(size_t{11}, lines.size());  // 2 x (heading, header, 2 rows, total) + blank
    CPPUNIT_ASSERT_EQUAL(std::string("vgpu usage by user, jobs since 2024-06-10"), lines[0]);
    CPPUNIT_ASSERT(lines[1].rfind("USER ", 0) == 0 && lines[1].find("MEM_EFF_%") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(
        std::string("alice     2           1        90.00         75.00   187.5          3.00           8.00       37.5"),
        lines[2]);
    CPPUNIT_ASSERT(lines[4].rfind("total ", 0) == 0);
    CPPUNIT_ASSERT_EQUAL(std::string(""), lines[5]);
    CPPUNIT_ASSERT(lines[6].rfind("vgpu usage by account", 0) == 0);
    CPPUNIT_ASSERT(lines[10].rfind("total ", 0) == 0);
    CPPUNIT_ASSERT(lines[9].rfind("chem ", 0) == 0);
    CPPUNIT_ASSERT(lines[9].find(" -") != std::string::npos);  // used % undefined
    std::string from_file = FormatTable(FixtureSummary(), {GroupBy::kType}, {"", "", "jobs.json"});
    CPPUNIT_ASSERT(from_file.rfind("vgpu usage by type, jobs from jobs.json\n", 0) == 0);
  }

  void UserChart() {
    sim::BarChartSpec c = MakeUserChart(FixtureSummary(), 1);
    CPPUNIT_ASSERT_EQUAL(size_t{2}, c.series.size());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, c.categories.size());
    CPPUNIT_ASSERT_EQUAL(std::string("alice"), c.categories[0]);
    CPPUNIT_ASSERT_EQUAL(std::string("others (1 users)"), c.categories[1]);
    CPPUNIT_ASSERT_EQUAL(90.0, c.values[0][0]);
    CPPUNIT_ASSERT_EQUAL(75.0, c.values[0][1]);
    CPPUNIT_ASSERT_EQUAL(75.0, c.values[1][0]);
    CPPUNIT_ASSERT_EQUAL(12.5, c.values[1][1]);
    CPPUNIT_ASSERT_EQUAL(size_t{2}, MakeUserChart(FixtureSummary()).categories.size());
  }

  void Options() {
    const std::time_t now = 1718000000;  // 2024-06-10 06:13:20 UTC
    std::tm tm{};
    localtime_r(&now, &tm);
    char midnight[32];
    std::strftime(midnight, sizeof midnight, "%Y-%m-%dT00:00:00", &tm);
    auto d = ParseReportArgs({}, now);
    CPPUNIT_ASSERT(d.ok());
    CPPUNIT_ASSERT_EQUAL(std::string(midnight), d->since);
    CPPUNIT_ASSERT(d->groups == kAll);
    CPPUNIT_ASSERT(d->format == Format::kTable);
    auto o = ParseReportArgs({"--since=2024-06-01", "--until", "now", "--by", "type,user,type", "--format=csv",
                              "--svg", "u.svg", "--sacct", "/opt/slurm/bin/sacct"},
                             now);
    CPPUNIT_ASSERT_MESSAGE(o.message(), o.ok());
    CPPUNIT_ASSERT((o->groups == std::vector<GroupBy>{GroupBy::kType, GroupBy::kUser}));
    CPPUNIT_ASSERT(o->format == Format::kCsv);
    CPPUNIT_ASSERT_EQUAL(std::string("u.svg"), o->svg);
    CPPUNIT_ASSERT((SacctArgv("/opt/slurm/bin/sacct", *o) ==
                    std::vector<std::string>{"/opt/slurm/bin/sacct", "--json", "-a", "-S", "2024-06-01", "-E", "now"}));
    CPPUNIT_ASSERT((SacctArgv("sacct", *d) == std::vector<std::string>{"sacct", "--json", "-a", "-S", midnight}));
    struct Bad {
      std::vector<std::string> args;
      const char* message;
    };
    for (const Bad& b : {Bad{{"--bogus"}, "unknown option --bogus; see vgpuctl report --help"},
                         Bad{{"extra"}, "unexpected argument extra; see vgpuctl report --help"},
                         Bad{{"--since"}, "--since needs a value; see vgpuctl report --help"},
                         Bad{{"--format", "xml"}, "--format: \"xml\" is not table, csv or json"},
                         Bad{{"--by=user,node"}, "--by: \"node\" is not user, account or type"}}) {
      auto r = ParseReportArgs(b.args, now);
      CPPUNIT_ASSERT(!r.ok());
      CPPUNIT_ASSERT_EQUAL(std::string(b.message), r.message());
    }
  }

  void RunCommandCapturesBothStreams() {
    auto r = RunCommand({"/bin/sh", "-c", "printf 'a\\nb'; printf oops >&2; exit 3"});
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.ok());
    CPPUNIT_ASSERT_EQUAL(3, r->exit_status);
    CPPUNIT_ASSERT_EQUAL(std::string("a\nb"), r->out);
    CPPUNIT_ASSERT_EQUAL(std::string("oops"), r->err);
    auto big = RunCommand({"/bin/sh", "-c", "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2"});
    CPPUNIT_ASSERT(big.ok());  // more than a pipe holds, on both streams
    CPPUNIT_ASSERT_EQUAL(size_t{300000}, big->out.size());
    CPPUNIT_ASSERT_EQUAL(size_t{200000}, big->err.size());
    auto missing = RunCommand({"/nonexistent/sacct"});
    CPPUNIT_ASSERT(!missing.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("cannot run /nonexistent/sacct: no such file"), missing.message());
    TempDir dir("vgpuctl-test");
    std::string fake = dir.Write("sacct", "#!/bin/sh\n", true);
    dir.Write("plain", "not a program");
    CPPUNIT_ASSERT_EQUAL(fake, FindOnPath("sacct", "/nonexistent:" + dir.path()));
    CPPUNIT_ASSERT_EQUAL(std::string(""), FindOnPath("plain", dir.path()));
    auto found = LocateSacct("", ("/nonexistent:" + dir.path()).c_str());
    CPPUNIT_ASSERT(found.ok());
    CPPUNIT_ASSERT_EQUAL(fake, *found);
    CPPUNIT_ASSERT(!LocateSacct(dir.path() + "/plain", nullptr).ok());
  }

  void ReportFromInputFile() {
    TempDir dir("vgpuctl-test");
    std::string input = dir.Write("jobs.json", Fixture());
    Outcome r = Run({"--input", input, "--format", "csv", "--svg", dir.path() + "/users.svg"});
    CPPUNIT_ASSERT_EQUAL_MESSAGE(r.err, 0, r.status);
    CPPUNIT_ASSERT_EQUAL(std::string(kExpectedCsv), r.out);
    CPPUNIT_ASSERT_EQUAL(std::string(""), r.err);
    std::string svg = dir.Read("users.svg");
    CPPUNIT_ASSERT(svg.rfind("<svg", 0) == 0);
    CPPUNIT_ASSERT(svg.find(">alice</text>") != std::string::npos);
    CPPUNIT_ASSERT(svg.find(">bob</text>") != std::string::npos);
    Outcome help = Run({"--help"});
    CPPUNIT_ASSERT_EQUAL(0, help.status);
    CPPUNIT_ASSERT(help.out.rfind("usage: vgpuctl report", 0) == 0);
  }

  void ReportRunsSacct() {
    TempDir dir("vgpuctl-test");
    dir.Write("jobs.json", Fixture());
    std::string sacct = dir.Write("sacct",
                                  "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + dir.path() + "/args'\ncat '" + dir.path() +
                                      "/jobs.json'\n",
                                  true);
    Outcome r = Run({"--sacct", sacct, "--since", "2024-06-01", "--until", "2024-06-30T12:00", "--by", "type",
                     "--format", "json"});
    CPPUNIT_ASSERT_EQUAL_MESSAGE(r.err, 0, r.status);
    CPPUNIT_ASSERT_EQUAL(std::string("--json\n-a\n-S\n2024-06-01\n-E\n2024-06-30T12:00\n"), dir.Read("args"));
    Json::Value v;
    std::istringstream(r.out) >> v;
    CPPUNIT_ASSERT_EQUAL(std::string("2024-06-30T12:00"), v["source"]["until"].asString());
    CPPUNIT_ASSERT_EQUAL(2u, v["by_type"].size());
    CPPUNIT_ASSERT(!v.isMember("by_user"));
  }

  void ReportErrors() {
    TempDir dir("vgpuctl-test");
    std::string failing = dir.Write(
        "sacct", "#!/bin/sh\necho 'sacct: error: fetch_config: DNS SRV lookup failed' >&2\n"
                 "echo 'sacct: fatal: Could not establish a configuration source' >&2\nexit 1\n",
        true);
    Outcome r = Run({"--sacct", failing});
    CPPUNIT_ASSERT_EQUAL(1, r.status);
    CPPUNIT_ASSERT_EQUAL(std::string(""), r.out);
    CPPUNIT_ASSERT_MESSAGE(r.err, r.err.rfind("vgpuctl report: " + failing +
                                                  " exited with status 1: sacct: fatal: Could not establish a "
                                                  "configuration source; check that slurmdbd is reachable",
                                              0) == 0);
    CPPUNIT_ASSERT_EQUAL(size_t{1}, static_cast<size_t>(std::count(r.err.begin(), r.err.end(), '\n')));

    std::string bad = dir.Write("bad.json", "{\"jobs\": [");
    r = Run({"--input", bad});
    CPPUNIT_ASSERT_EQUAL(1, r.status);
    CPPUNIT_ASSERT_MESSAGE(r.err, r.err.rfind("vgpuctl report: " + bad + " is not JSON: ", 0) == 0);
    CPPUNIT_ASSERT(r.err.find("; pass a file written by sacct --json\n") != std::string::npos);

    r = Run({"--input", dir.Write("empty.json", "\n")});
    CPPUNIT_ASSERT_EQUAL(1, r.status);
    CPPUNIT_ASSERT(r.err.find(" is empty; expected the output of sacct --json") != std::string::npos);

    r = Run({"--input", dir.path() + "/missing.json"});
    CPPUNIT_ASSERT_EQUAL(1, r.status);
    CPPUNIT_ASSERT(r.err.find("cannot read " + dir.path() + "/missing.json") != std::string::npos);

    r = Run({"--input", dir.Write("jobs.json", Fixture()), "--svg", dir.path() + "/no/such/dir/u.svg"});
    CPPUNIT_ASSERT_EQUAL(1, r.status);
    CPPUNIT_ASSERT(r.err.find("cannot write " + dir.path() + "/no/such/dir/u.svg") != std::string::npos);

    r = Run({"--sacct", dir.path() + "/bad.json"});  // not executable
    CPPUNIT_ASSERT_EQUAL(1, r.status);
    CPPUNIT_ASSERT(r.err.find("not an executable file") != std::string::npos);

    r = Run({"--format"});
    CPPUNIT_ASSERT_EQUAL(2, r.status);

    r = Run({"--input", dir.Write("cpu.json", Document({Job(1, "u", "a", 60, Tres("", 0), kOneNvidia)}))});
    CPPUNIT_ASSERT_EQUAL(0, r.status);  // a note, not an error
    CPPUNIT_ASSERT(r.err.find("note: 1 job record(s) carry vgpu usage but no gres/vgpu TRES") != std::string::npos);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(UsageReportTest);

}  // namespace vgpu::report
