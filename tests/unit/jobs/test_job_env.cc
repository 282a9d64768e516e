#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>

#include "jobs/job_env.h"

using vgpu::BuildJobEnv;
using vgpu::DeviceTable;
using vgpu::ShareDevice;

namespace {

ShareDevice Dev(uint32_t first, const std::string& file, const std::string& type,
                const std::string& env, int ordinal, uint64_t memory) {
  ShareDevice sd;
  sd.first_bit = first;
  sd.shares = 100;
  sd.device.files = {file};
  sd.device.gres_type = type;
  sd.device.model_id = type == "nvidia" ? "nvidia-h100" : "hygon-k100";
  sd.device.visible_devices_env = env;
  sd.device.vendor_index = ordinal;
  sd.device.memory_bytes = memory;
  return sd;
}

// n2 of the test cluster: 4 H100 then 4 K100.
DeviceTable Node2() {
  std::vector<ShareDevice> d;
  for (int i = 0; i < 4; ++i)
    d.push_back(Dev(100 * i, "/dev/nvidia" + std::to_string(i), "nvidia", "CUDA_VISIBLE_DEVICES",
                    i, 80ull << 30));
  for (int i = 0; i < 4; ++i)
    d.push_back(Dev(400 + 100 * i, "/dev/dri/renderD" + std::to_string(128 + i), "dcu",
                    "HIP_VISIBLE_DEVICES", i, 64ull << 30));
  return DeviceTable(d, 100);
}

std::string Get(const vgpu::EnvVars& env, const std::string& name) {
  for (const auto& [k, v] : env)
    if (k == name) return v;
  return "<unset>";
}

}  // namespace

class JobEnvTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(JobEnvTest);
  CPPUNIT_TEST(OneDeviceTenShares);
  CPPUNIT_TEST(SplitAcrossDevicesPerDevice);
  CPPUNIT_TEST(TwoVendorsGetTheirOwnVariables);
  CPPUNIT_TEST(GlobalOrdinalWithoutDeviceCgroup);
  CPPUNIT_TEST(NothingForNoShares);
  CPPUNIT_TEST_SUITE_END();

 public:
  void OneDeviceTenShares() {
    DeviceTable t = Node2();
    auto env = BuildJobEnv(t, {{2, 10}}, {true});
    CPPUNIT_ASSERT_EQUAL(std::string("2"), Get(env, "VGPU_DEVICES"));
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/nvidia2"), Get(env, "VGPU_DEVICE_FILES"));
    CPPUNIT_ASSERT_EQUAL(std::string("10"), Get(env, "VGPU_SHARES"));
    CPPUNIT_ASSERT_EQUAL(std::string("10"), Get(env, "VGPU_SHARES_ON_NODE"));
    CPPUNIT_ASSERT_EQUAL(std::string("100"), Get(env, "VGPU_SHARES_PER_DEVICE"));
    CPPUNIT_ASSERT_EQUAL(std::to_string((80ull << 30) / 10), Get(env, "VGPU_MEMORY_QUOTA"));
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), Get(env, "VGPU_TYPES"));
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia-h100"), Get(env, "VGPU_MODELS"));
    CPPUNIT_ASSERT_EQUAL(std::string("0"), Get(env, "CUDA_VISIBLE_DEVICES"));
    CPPUNIT_ASSERT_EQUAL(std::string("<unset>"), Get(env, "HIP_VISIBLE_DEVICES"));
    CPPUNIT_ASSERT_EQUAL(std::string("<unset>"), Get(env, "VGPU_UUIDS"));
  }
  void SplitAcrossDevicesPerDevice() {
    DeviceTable t = Node2();
    auto env = BuildJobEnv(t, {{0, 40}, {1, 40}}, {true});
    CPPUNIT_ASSERT_EQUAL(std::string("0,1"), Get(env, "VGPU_DEVICES"));
    CPPUNIT_ASSERT_EQUAL(std::string("40,40"), Get(env, "VGPU_SHARES"));
    CPPUNIT_ASSERT_EQUAL(std::string("80"), Get(env, "VGPU_SHARES_ON_NODE"));
    std::string q = std::to_string((80ull << 30) * 40 / 100);
    CPPUNIT_ASSERT_EQUAL(q + "," + q, Get(env, "VGPU_MEMORY_QUOTA"));
    CPPUNIT_ASSERT_EQUAL(std::string("0,1"), Get(env, "CUDA_VISIBLE_DEVICES"));
  }
  void TwoVendorsGetTheirOwnVariables() {
    DeviceTable t = Node2();
    auto env = BuildJobEnv(t, {{3, 20}, {6, 5}}, {true});
    CPPUNIT_ASSERT_EQUAL(std::string("0"), Get(env, "CUDA_VISIBLE_DEVICES"));
    CPPUNIT_ASSERT_EQUAL(std::string("0"), Get(env, "HIP_VISIBLE_DEVICES"));
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia,dcu"), Get(env, "VGPU_TYPES"));
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/nvidia3,/dev/dri/renderD130"),
                         Get(env, "VGPU_DEVICE_FILES"));
  }
  void GlobalOrdinalWithoutDeviceCgroup() {
    DeviceTable t = Node2();
    auto env = BuildJobEnv(t, {{3, 20}, {6, 5}}, {false});
    CPPUNIT_ASSERT_EQUAL(std::string("3"), Get(env, "CUDA_VISIBLE_DEVICES"));
    CPPUNIT_ASSERT_EQUAL(std::string("2"), Get(env, "HIP_VISIBLE_DEVICES"));
  }
  void NothingForNoShares() {
    CPPUNIT_ASSERT(BuildJobEnv(Node2(), {}, {true}).empty());
    auto clear = vgpu::JobEnvVariablesToClear();
    CPPUNIT_ASSERT(std::find(clear.begin(), clear.end(), "VGPU_SHARES") != clear.end());
    CPPUNIT_ASSERT(std::find(clear.begin(), clear.end(), "CUDA_VISIBLE_DEVICES") == clear.end());
  }
};
CPPUNIT_TEST_SUITE_REGISTRATION(JobEnvTest);
