// Tests of the openb trace CSV readers: good files, column order, optional
// gpu_spec, and one error per kind of malformed line, each naming
// FILE:LINE and the column.
//
// The real trace is read from $VGPU_TEST_TRACE_DIR, else
// $srcdir/../../shared/traces/alibaba-openb-2023; the test passes silently
// when neither holds it.
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "trace_csv.h"

namespace vgpu::sim {
namespace {

const char kNodes[] =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "openb-node-0000,64000,262144,2,P100\n"
    "openb-node-0001,96000,786432,8,G2\n"
    "openb-node-0002,32000,262144,0,\n";

const char kPodHeader[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
    "scheduled_time\n";

// A pod list of `header` and one data line `line`, parsed as "pods.csv".
Result<std::vector<TraceTask>> OnePod(const std::string& line, const std::string& header = kPodHeader) {
  return ParseTaskCsv(header + line + "\n", "pods.csv");
}

// The directory of the real trace, or "" when it is not there.
std::string TraceDir() {
  std::string dir;
  if (const char* env = std::getenv("VGPU_TEST_TRACE_DIR")) {
    dir = env;
  } else {
    const char* srcdir = std::getenv("srcdir");
    dir = std::string(srcdir != nullptr ? srcdir : ".") + "/../../shared/traces/alibaba-openb-2023";
  }
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? dir : "";
}

}  // namespace

class TraceCsvTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(TraceCsvTest);
  CPPUNIT_TEST(NodesParse);
  CPPUNIT_TEST(NodeColumnsInAnyOrder);
  CPPUNIT_TEST(NodeMissingColumnsNamed);
  CPPUNIT_TEST(NodeDuplicateName);
  CPPUNIT_TEST(TasksParse);
  CPPUNIT_TEST(TaskColumnsReorderedWithoutGpuSpec);
  CPPUNIT_TEST(GpuSpecList);
  CPPUNIT_TEST(CrlfAndBlankLines);
  CPPUNIT_TEST(EmptyInputs);
  CPPUNIT_TEST(NotAWholeNumber);
  CPPUNIT_TEST(NegativeAndTooLarge);
  CPPUNIT_TEST(WrongFieldCount);
  CPPUNIT_TEST(QuoteRejected);
  CPPUNIT_TEST(TraceRules);
  CPPUNIT_TEST(MissingFile);
  CPPUNIT_TEST(RealTrace);
  CPPUNIT_TEST_SUITE_END();

 public:
  void NodesParse() {
    auto r = ParseNodeCsv(kNodes, "nodes.csv");
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(3), r->size());
    const TraceNode& n = (*r)[1];
    CPPUNIT_ASSERT_EQUAL(std::string("openb-node-0001"), n.name);
    CPPUNIT_ASSERT_EQUAL(uint64_t(96000), n.cpu_milli);
    CPPUNIT_ASSERT_EQUAL(uint64_t(786432), n.memory_mib);
    CPPUNIT_ASSERT_EQUAL(uint32_t(8), n.gpus);
    CPPUNIT_ASSERT_EQUAL(std::string("G2"), n.model);
    CPPUNIT_ASSERT_EQUAL(std::string(""), (*r)[2].model);  // CPU-only node
  }

  void NodeColumnsInAnyOrder() {
    auto r = ParseNodeCsv("Model, gpu ,name,extra,memory_mib,cpu_milli\nT4,1,n1,x,1024,8000\n", "n.csv");
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(1), r->size());
    CPPUNIT_ASSERT_EQUAL(std::string("n1"), r->front().name);
    CPPUNIT_ASSERT_EQUAL(std::string("T4"), r->front().model);
    CPPUNIT_ASSERT_EQUAL(uint32_t(1), r->front().gpus);
    CPPUNIT_ASSERT_EQUAL(uint64_t(8000), r->front().cpu_milli);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1024), r->front().memory_mib);
  }

  void NodeMissingColumnsNamed() {
    auto r = ParseNodeCsv("cpu_milli,memory_mib,model\n1,2,T4\n", "n.csv");
    CPPUNIT_ASSERT(!r.ok());
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("n.csv:1:") == 0);
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("sn|name, gpu") != std::string::npos);
    auto t = ParseTaskCsv("name,cpu_milli,num_gpu\nx,1,0\n", "p.csv");
    CPPUNIT_ASSERT(!t.ok());
    CPPUNIT_ASSERT_MESSAGE(t.message(), t.message().find("memory_mib, gpu_milli") != std::string::npos);
  }

  void NodeDuplicateName() {
    auto r = ParseNodeCsv(std::string(kNodes) + "openb-node-0001,1,1,1,T4\n", "n.csv");
    CPPUNIT_ASSERT(!r.ok());
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("n.csv:5: column sn:") == 0);
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("line 3") != std::string::npos);
  }

  void TasksParse() {
    auto r = ParseTaskCsv(std::string(kPodHeader) +
                              "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                              "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
                              "openb-pod-0002,8000,30517,0,0,,BE,Running,1,2,1\n"
                              "openb-pod-0003,64000,65536,8,1000,V100M32,LS,Running,1,2,1\n",
                          "pods.csv");
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(4), r->size());
    const TraceTask& share = (*r)[1];
    CPPUNIT_ASSERT_EQUAL(std::string("openb-pod-0001"), share.name);
    CPPUNIT_ASSERT_EQUAL(uint64_t(6000), share.cpu_milli);
    CPPUNIT_ASSERT_EQUAL(uint64_t(12288), share.memory_mib);
    CPPUNIT_ASSERT_EQUAL(uint32_t(1), share.num_gpu);
    CPPUNIT_ASSERT_EQUAL(uint32_t(460), share.gpu_milli);
    CPPUNIT_ASSERT(share.gpu_spec.empty());
    CPPUNIT_ASSERT_EQUAL(uint32_t(0), (*r)[2].num_gpu);
    CPPUNIT_ASSERT_EQUAL(uint32_t(8), (*r)[3].num_gpu);
    CPPUNIT_ASSERT_EQUAL(size_t(1), (*r)[3].gpu_spec.size());
    CPPUNIT_ASSERT_EQUAL(std::string("V100M32"), (*r)[3].gpu_spec[0]);
  }

  void TaskColumnsReorderedWithoutGpuSpec() {
    // As openb_pod_list_multigpu20.csv: no gpu_spec column at all.
    auto r = ParseTaskCsv("gpu_milli,num_gpu,name,memory_mib,cpu_milli\n250,1,p0,1024,4000\n", "p.csv");
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("p0"), r->front().name);
    CPPUNIT_ASSERT_EQUAL(uint32_t(250), r->front().gpu_milli);
    CPPUNIT_ASSERT_EQUAL(uint32_t(1), r->front().num_gpu);
    CPPUNIT_ASSERT_EQUAL(uint64_t(4000), r->front().cpu_milli);
    CPPUNIT_ASSERT(r->front().gpu_spec.empty());
  }

  void GpuSpecList() {
    auto r = OnePod("p,1,1,1,500,V100M16|V100M32 | T4,LS,Running,0,0,0");
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.ok());
    const auto& spec = r->front().gpu_spec;
    CPPUNIT_ASSERT_EQUAL(size_t(3), spec.size());
    CPPUNIT_ASSERT_EQUAL(std::string("V100M16"), spec[0]);
    CPPUNIT_ASSERT_EQUAL(std::string("V100M32"), spec[1]);
    CPPUNIT_ASSERT_EQUAL(std::string("T4"), spec[2]);
  }

  void CrlfAndBlankLines() {
    auto r = ParseNodeCsv("sn,cpu_milli,memory_mib,gpu,model\r\nn0,1,2,1,T4\r\n\r\nn1,1,2,1,A10\r\n\r\n", "n.csv");
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(2), r->size());
    CPPUNIT_ASSERT_EQUAL(std::string("A10"), (*r)[1].model);  // no CR left
    auto t = ParseTaskCsv("name,cpu_milli,memory_mib,num_gpu,gpu_milli\r\np,1,2,1,300", "p.csv");  // no final LF
    CPPUNIT_ASSERT_MESSAGE(t.message(), t.ok());
    CPPUNIT_ASSERT_EQUAL(uint32_t(300), t->front().gpu_milli);
  }

  void EmptyInputs() {
    auto r = ParseNodeCsv("", "n.csv");
    CPPUNIT_ASSERT(!r.ok());
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("n.csv: empty file") == 0);
    CPPUNIT_ASSERT(!ParseTaskCsv("\n\r\n", "p.csv").ok());
    auto t = ParseTaskCsv(kPodHeader, "p.csv");
    CPPUNIT_ASSERT(!t.ok());
    CPPUNIT_ASSERT_MESSAGE(t.message(), t.message().find("p.csv: no tasks") == 0);
  }

  void NotAWholeNumber() {
    auto r = OnePod("p,1,1,1,abc,,LS,Running,0,0,0");
    CPPUNIT_ASSERT(!r.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("pods.csv:2: column gpu_milli: \"abc\" is not a whole number"), r.message());
    auto n = ParseNodeCsv("sn,cpu_milli,memory_mib,gpu,model\nn0,1.5,2,1,T4\n", "n.csv");
    CPPUNIT_ASSERT_EQUAL(std::string("n.csv:2: column cpu_milli: \"1.5\" is not a whole number"), n.message());
    auto e = OnePod("p,1,,0,0,,LS,Running,0,0,0");
    CPPUNIT_ASSERT_MESSAGE(e.message(), e.message().find("pods.csv:2: column memory_mib: empty") == 0);
  }

  void NegativeAndTooLarge() {
    auto r = OnePod("p,-4000,1,0,0,,LS,Running,0,0,0");
    CPPUNIT_ASSERT(!r.ok());
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("pods.csv:2: column cpu_milli: \"-4000\" is negative") == 0);
    auto g = ParseNodeCsv("sn,cpu_milli,memory_mib,gpu,model\nn0,1,2,4294967296,T4\n", "n.csv");
    CPPUNIT_ASSERT_MESSAGE(g.message(), g.message().find("n.csv:2: column gpu: \"4294967296\" is too large") == 0);
    auto m = OnePod("p,99999999999999999999,1,0,0,,LS,Running,0,0,0");
    CPPUNIT_ASSERT_MESSAGE(m.message(), m.message().find("column cpu_milli:") != std::string::npos);
  }

  void WrongFieldCount() {
    auto r = ParseTaskCsv(std::string(kPodHeader) + "p0,1,1,0,0,,LS,Running,0,0,0\np1,1,1,0,0\n", "pods.csv");
    CPPUNIT_ASSERT(!r.ok());
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("pods.csv:3: 5 fields, but the header has 11") == 0);
  }

  void QuoteRejected() {
    auto r = OnePod("\"p\",1,1,0,0,,LS,Running,0,0,0");
    CPPUNIT_ASSERT(!r.ok());
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("pods.csv:2: column name:") == 0);
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("quote") != std::string::npos);
  }

  void TraceRules() {
    auto big = OnePod("p,1,1,1,1200,,LS,Running,0,0,0");
    CPPUNIT_ASSERT_MESSAGE(big.message(), big.message().find("pods.csv:2: column gpu_milli: 1200 is more than 1000") == 0);
    auto multi = OnePod("p,1,1,2,500,,LS,Running,0,0,0");
    CPPUNIT_ASSERT(!multi.ok());
    CPPUNIT_ASSERT_MESSAGE(multi.message(), multi.message().find("pods.csv:2: column gpu_milli:") == 0);
    CPPUNIT_ASSERT_MESSAGE(multi.message(), multi.message().find("num_gpu 1 and gpu_milli < 1000") != std::string::npos);
    auto cpu_only = OnePod("p,1,1,0,300,,LS,Running,0,0,0");
    CPPUNIT_ASSERT_MESSAGE(cpu_only.message(), cpu_only.message().find("column gpu_milli: 300 with num_gpu 0") != std::string::npos);
    auto nothing = OnePod("p,1,1,1,0,,LS,Running,0,0,0");
    CPPUNIT_ASSERT_MESSAGE(nothing.message(), nothing.message().find("column gpu_milli: 0 with num_gpu 1") != std::string::npos);
    CPPUNIT_ASSERT(OnePod("p,1,1,4,1000,,LS,Running,0,0,0").ok());
    CPPUNIT_ASSERT(OnePod("p,1,1,1,999,,LS,Running,0,0,0").ok());
  }

  void MissingFile() {
    auto r = ReadNodeCsv("/nonexistent/nodes.csv");
    CPPUNIT_ASSERT(!r.ok());
    CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find("cannot read /nonexistent/nodes.csv") == 0);
    CPPUNIT_ASSERT(!ReadTaskCsv("/").ok());
  }

  void RealTrace() {
    std::string dir = TraceDir();
    if (dir.empty()) return;  // trace not shipped with this tree
    auto nodes = ReadNodeCsv(dir + "/openb_node_list_gpu_node.csv");
    CPPUNIT_ASSERT_MESSAGE(nodes.message(), nodes.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(1213), nodes->size());
    uint64_t gpus = 0;
    for (const TraceNode& n : *nodes) gpus += n.gpus;
    CPPUNIT_ASSERT_EQUAL(uint64_t(6212), gpus);
    auto all = ReadNodeCsv(dir + "/openb_node_list_all_node.csv");
    CPPUNIT_ASSERT_MESSAGE(all.message(), all.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(1523), all->size());

    auto tasks = ReadTaskCsv(dir + "/openb_pod_list_default.csv");
    CPPUNIT_ASSERT_MESSAGE(tasks.message(), tasks.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(8152), tasks->size());
    size_t sharing = 0, whole = 0, cpu_only = 0;
    for (const TraceTask& t : *tasks) {
      if (t.num_gpu == 0) ++cpu_only;
      else if (t.gpu_milli < 1000) ++sharing;
      else ++whole;
    }
    CPPUNIT_ASSERT_EQUAL(size_t(3078), sharing);
    CPPUNIT_ASSERT_EQUAL(size_t(3986), whole);
    CPPUNIT_ASSERT_EQUAL(size_t(1088), cpu_only);

    for (const char* name : {"cpu050", "gpushare40", "gpushare60", "gpushare80", "gpushare100", "multigpu20"}) {
      auto other = ReadTaskCsv(dir + "/openb_pod_list_" + name + ".csv");
      CPPUNIT_ASSERT_MESSAGE(other.message(), other.ok());
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(TraceCsvTest);

}  // namespace vgpu::sim
