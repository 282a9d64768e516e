#include <cppunit/extensions/HelperMacros.h>

#include "config/vgpu_request.h"

using vgpu::CheckVgpuSubmission;
using vgpu::JobTres;
using vgpu::ParseVgpuTres;

namespace {
// Three nodes: 8 ascend devices; 4 dcu and 4 nvidia; an untyped 2 (S = 100).
vgpu::VgpuCapacity Nodes() {
  vgpu::VgpuCapacity c;
  c.AddNode("vgpu:ascend:800,gpu:2");
  c.AddNode("vgpu:DCU:400(S:0),vgpu:nvidia:400(S:1)");
  c.AddNode("vgpu:200");
  return c;
}
const vgpu::VgpuCapacity kTypes = Nodes();

JobTres PerNode(const std::string& s) {
  JobTres t;
  t.per_node = s;
  return t;
}

bool Has(const vgpu::Status& st, const std::string& what) {
  return st.message().find(what) != std::string::npos;
}
}  // namespace

class VgpuRequestTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(VgpuRequestTest);
  CPPUNIT_TEST(ParsesForms);
  CPPUNIT_TEST(ParseErrors);
  CPPUNIT_TEST(CapacityOfNodes);
  CPPUNIT_TEST(RefusesNonCounts);
  CPPUNIT_TEST(RefusesMoreThanAnyNode);
  CPPUNIT_TEST(RefusesTwoAsks);
  CPPUNIT_TEST(AcceptsPlaceableRequests);
  CPPUNIT_TEST(RefusesPartialDevicesAboveS);
  CPPUNIT_TEST(RefusesOtherForms);
  CPPUNIT_TEST(RefusesUnknownType);
  CPPUNIT_TEST_SUITE_END();

 public:
  void ParsesForms() {
    auto a = ParseVgpuTres("gres:gpu:2,gres:vgpu:ascend:10,gres/vgpu:300,gres:vgpu:dcu,gres:vgpu:2k");
    CPPUNIT_ASSERT_MESSAGE(a.message(), a.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(4), a->size());
    CPPUNIT_ASSERT_EQUAL(std::string("ascend"), (*a)[0].type);
    CPPUNIT_ASSERT_EQUAL(uint64_t(10), (*a)[0].count);
    CPPUNIT_ASSERT_EQUAL(std::string(""), (*a)[1].type);
    CPPUNIT_ASSERT_EQUAL(uint64_t(300), (*a)[1].count);
    CPPUNIT_ASSERT_EQUAL(std::string("dcu"), (*a)[2].type);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), (*a)[2].count);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2048), (*a)[3].count);
    CPPUNIT_ASSERT(ParseVgpuTres("").ok());
    CPPUNIT_ASSERT(ParseVgpuTres("gres:gpu:a100:1")->empty());
  }
  void ParseErrors() {
    CPPUNIT_ASSERT(!ParseVgpuTres("gres:vgpu:ascend:ten").ok());
    CPPUNIT_ASSERT(!ParseVgpuTres("gres:vgpu:a:b:3").ok());
    CPPUNIT_ASSERT(!ParseVgpuTres("gres:vgpu:ascend:10x").ok());
  }
  void CapacityOfNodes() {
    CPPUNIT_ASSERT_EQUAL(uint64_t(800), kTypes.MostOnOneNode("ascend"));
    CPPUNIT_ASSERT_EQUAL(uint64_t(400), kTypes.MostOnOneNode("dcu"));
    CPPUNIT_ASSERT_EQUAL(uint64_t(400), kTypes.MostOnOneNode("NVIDIA"));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), kTypes.MostOnOneNode("tpu"));
    CPPUNIT_ASSERT_EQUAL(uint64_t(800), kTypes.MostOnOneNode(""));  // ascend's node, or 400 + 400
    CPPUNIT_ASSERT_EQUAL(size_t(3), kTypes.most_by_type().size());
    CPPUNIT_ASSERT(vgpu::VgpuCapacity().empty());
  }
  void RefusesNonCounts() {
    for (const char* bad : {"gres:vgpu:-5", "gres:vgpu:1.5", "gres:vgpu:ascend:-5", "gres:vgpu:+3"}) {
      auto st = CheckVgpuSubmission(PerNode(bad), 100, kTypes);
      CPPUNIT_ASSERT_MESSAGE(bad, !st.ok());
      CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st, "is not a count") && Has(st, "whole number"));
      CPPUNIT_ASSERT_MESSAGE(st.message(), !Has(st, "no node has vgpu type"));
    }
  }
  void RefusesMoreThanAnyNode() {
    auto st = CheckVgpuSubmission(PerNode("gres:vgpu:ascend:99999"), 100, kTypes);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st, "the most is 800 shares (8 devices of 100)"));
    CPPUNIT_ASSERT_MESSAGE(st.message(), !Has(st, "99900") && Has(st, "-N"));
    CPPUNIT_ASSERT(!CheckVgpuSubmission(PerNode("gres:vgpu:nvidia:500"), 100, kTypes).ok());
    CPPUNIT_ASSERT(CheckVgpuSubmission(PerNode("gres:vgpu:nvidia:400"), 100, kTypes).ok());
    CPPUNIT_ASSERT(!CheckVgpuSubmission(PerNode("gres:vgpu:900"), 100, kTypes).ok());
    // Rounding to whole devices only offers what some node has.
    st = CheckVgpuSubmission(PerNode("gres:vgpu:dcu:350"), 100, kTypes);
    CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st, "300 or 400"));
    vgpu::VgpuCapacity odd;  // a node of 3.5 devices' shares
    odd.AddNode("vgpu:dcu:350");
    st = CheckVgpuSubmission(PerNode("gres:vgpu:dcu:320"), 100, odd);
    CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st, "or 300 for whole devices") && !Has(st, "or 400"));
  }
  void RefusesTwoAsks() {
    auto st = CheckVgpuSubmission(PerNode("gres:vgpu:10,gres:vgpu:20"), 100, kTypes);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st, "twice") && Has(st, "vgpu:30"));
    st = CheckVgpuSubmission(PerNode("gres:vgpu:ascend:10,gres:vgpu:nvidia:10"), 100, kTypes);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st, "heterogeneous") && Has(st, "--gres=vgpu:nvidia:10"));
    CPPUNIT_ASSERT(!CheckVgpuSubmission(PerNode("gres:vgpu:ascend:10,gres:vgpu:Ascend:5"), 100, kTypes).ok());
  }
  void AcceptsPlaceableRequests() {
    for (const char* ok : {"gres:vgpu:ascend:10", "gres:vgpu:100", "gres:vgpu:nvidia:300",
                           "gres:vgpu:Ascend:1", "gres:gpu:7", ""}) {
      auto st = CheckVgpuSubmission(PerNode(ok), 100, kTypes);
      CPPUNIT_ASSERT_MESSAGE(std::string(ok) + ": " + st.message(), st.ok());
    }
    JobTres gpus_per_task;
    gpus_per_task.per_task = "gres:gpu:1";  // not ours
    CPPUNIT_ASSERT(CheckVgpuSubmission(gpus_per_task, 100, kTypes).ok());
  }
  void RefusesPartialDevicesAboveS() {
    auto st = CheckVgpuSubmission(PerNode("gres:vgpu:ascend:150"), 100, kTypes);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT(Has(st, "vgpu:ascend:150"));
    CPPUNIT_ASSERT(Has(st, "100 or 200"));
    CPPUNIT_ASSERT(!CheckVgpuSubmission(PerNode("gres:vgpu:1050"), 1000, kTypes).ok());
    CPPUNIT_ASSERT(CheckVgpuSubmission(PerNode("gres:vgpu:150"), 1000, kTypes).ok());
  }
  void RefusesOtherForms() {
    JobTres t;
    t.per_task = "gres:vgpu:10";
    auto st = CheckVgpuSubmission(t, 100, kTypes);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT(Has(st, "per task"));
    CPPUNIT_ASSERT(Has(st, "--gres=vgpu"));
    JobTres j;
    j.per_job = "gres:vgpu:ascend:20";
    CPPUNIT_ASSERT(Has(CheckVgpuSubmission(j, 100, kTypes), "per job"));
    JobTres s;
    s.per_socket = "gres:vgpu:5";
    CPPUNIT_ASSERT(Has(CheckVgpuSubmission(s, 100, kTypes), "per socket"));
  }
  void RefusesUnknownType() {
    auto st = CheckVgpuSubmission(PerNode("gres:vgpu:tpu:10"), 100, kTypes);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT(Has(st, "\"tpu\""));
    CPPUNIT_ASSERT(Has(st, "ascend, dcu, nvidia"));
    // No node lists vgpu: neither types nor sizes are checked.
    CPPUNIT_ASSERT(CheckVgpuSubmission(PerNode("gres:vgpu:tpu:10"), 100, vgpu::VgpuCapacity()).ok());
  }
};
CPPUNIT_TEST_SUITE_REGISTRATION(VgpuRequestTest);
