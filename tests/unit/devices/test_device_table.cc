#include <cppunit/extensions/HelperMacros.h>

#include "devices/device_table.h"

using vgpu::DeviceTable;
using vgpu::ShareDevice;

namespace {
DeviceTable ThreeDevices() {
  std::vector<ShareDevice> devs;
  for (uint32_t i = 0; i < 3; ++i) {
    ShareDevice sd;
    sd.first_bit = 100 * i;
    sd.shares = 100;
    sd.device.files = {"/dev/davinci" + std::to_string(i)};
    sd.device.gres_type = "ascend";
    sd.device.model_id = "ascend-910b";
    sd.device.memory_bytes = (64ull << 30) + i;
    sd.device.vendor_index = static_cast<int>(i);
    sd.device.visible_devices_env = "ASCEND_RT_VISIBLE_DEVICES";
    devs.push_back(sd);
  }
  return DeviceTable(devs, 100);
}
}  // namespace

class DeviceTableTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(DeviceTableTest);
  CPPUNIT_TEST(BitToDevice);
  CPPUNIT_TEST(SplitGroupsByDevice);
  CPPUNIT_TEST(SplitCountsStrayBits);
  CPPUNIT_TEST(SerializeRoundTrip);
  CPPUNIT_TEST(ParseRejectsGarbage);
  CPPUNIT_TEST_SUITE_END();

 public:
  void BitToDevice() {
    DeviceTable t = ThreeDevices();
    CPPUNIT_ASSERT_EQUAL(0, t.DeviceOfBit(0));
    CPPUNIT_ASSERT_EQUAL(0, t.DeviceOfBit(99));
    CPPUNIT_ASSERT_EQUAL(1, t.DeviceOfBit(100));
    CPPUNIT_ASSERT_EQUAL(2, t.DeviceOfBit(299));
    CPPUNIT_ASSERT_EQUAL(-1, t.DeviceOfBit(300));
    CPPUNIT_ASSERT_EQUAL(300u, t.total_bits());
  }
  void SplitGroupsByDevice() {
    DeviceTable t = ThreeDevices();
    std::vector<uint32_t> bits;
    for (uint32_t b = 60; b < 140; ++b) bits.push_back(b);  // 40 on dev 0, 40 on dev 1
    size_t stray = 99;
    auto s = t.Split(bits, &stray);
    CPPUNIT_ASSERT_EQUAL(size_t(0), stray);
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.size());
    CPPUNIT_ASSERT_EQUAL(size_t(0), s[0].device);
    CPPUNIT_ASSERT_EQUAL(40u, s[0].shares);
    CPPUNIT_ASSERT_EQUAL(size_t(1), s[1].device);
    CPPUNIT_ASSERT_EQUAL(40u, s[1].shares);
  }
  void SplitCountsStrayBits() {
    DeviceTable t = ThreeDevices();
    size_t stray = 0;
    auto s = t.Split({5, 300, 301}, &stray);
    CPPUNIT_ASSERT_EQUAL(size_t(2), stray);
    CPPUNIT_ASSERT_EQUAL(size_t(1), s.size());
    CPPUNIT_ASSERT_EQUAL(1u, s[0].shares);
  }
  void SerializeRoundTrip() {
    DeviceTable t = ThreeDevices();
    auto p = DeviceTable::Parse(t.Serialize());
    CPPUNIT_ASSERT_MESSAGE(p.message(), p.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(3), p->devices().size());
    CPPUNIT_ASSERT_EQUAL(100u, p->shares_per_device());
    const auto& d = p->devices()[2];
    CPPUNIT_ASSERT_EQUAL(200u, d.first_bit);
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/davinci2"), d.device.files[0]);
    CPPUNIT_ASSERT_EQUAL((64ull << 30) + 2, static_cast<unsigned long long>(d.device.memory_bytes));
    CPPUNIT_ASSERT_EQUAL(std::string("ASCEND_RT_VISIBLE_DEVICES"), d.device.visible_devices_env);
    CPPUNIT_ASSERT_EQUAL(2, d.device.vendor_index);
  }
  void ParseRejectsGarbage() {
    CPPUNIT_ASSERT(!DeviceTable::Parse("{not json").ok());
    CPPUNIT_ASSERT(!DeviceTable::Parse(
                        R"({"shares_per_device":100,"devices":[{"first_bit":5,"shares":100}]})")
                        .ok());
    CPPUNIT_ASSERT(!DeviceTable::Parse(R"({"devices":[{"first_bit":"x"}]})").ok());
    // Found by tests/fuzz: bits that wrap past 2^32, and nesting past
    // jsoncpp's stack limit (its exception escaped).
    CPPUNIT_ASSERT(!DeviceTable::Parse(R"({"devices":[{"first_bit":0,"shares":4294967295},)"
                                       R"({"first_bit":4294967295,"shares":2}]})")
                        .ok());
    CPPUNIT_ASSERT(!DeviceTable::Parse(std::string(2000, '[') + std::string(2000, ']')).ok());
    auto empty = DeviceTable::Parse(R"({"shares_per_device":100,"devices":[]})");
    CPPUNIT_ASSERT(empty.ok());
    CPPUNIT_ASSERT(empty->empty());
  }
};
CPPUNIT_TEST_SUITE_REGISTRATION(DeviceTableTest);
