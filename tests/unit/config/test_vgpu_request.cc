#include <cppunit/extensions/HelperMacros.h>

#include "config/vgpu_request.h"

using vgpu::CheckVgpuSubmission;
using vgpu::JobTres;
using vgpu::ParseVgpuTres;

namespace {
const std::set<std::string> kTypes = {"ascend", "dcu", "nvidia"};

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
  CPPUNIT_TEST(TypesOfGres);
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
  void TypesOfGres() {
    auto t = vgpu::VgpuTypesOfGres("vgpu:nvidia:400,vgpu:DCU:400,gpu:a100:2,vgpu:50");
    CPPUNIT_ASSERT_EQUAL(size_t(2), t.size());
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), t[0]);
    CPPUNIT_ASSERT_EQUAL(std::string("dcu"), t[1]);
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
    // No known types (no node lists any): types are not checked.
    CPPUNIT_ASSERT(CheckVgpuSubmission(PerNode("gres:vgpu:tpu:10"), 100, {}).ok());
  }
};
CPPUNIT_TEST_SUITE_REGISTRATION(VgpuRequestTest);
