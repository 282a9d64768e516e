#include <cppunit/extensions/HelperMacros.h>

#include <set>

#include "devices/gres_conf_locator.h"
#include "devices/share_layout.h"

using vgpu::BuildShareLayout;
using vgpu::GresRecord;
using vgpu::ShareLayout;
using vgpu::ShareLayoutInput;

namespace {

vgpu::ChipCatalog TestCatalog() {
  vgpu::ChipCatalog c;
  vgpu::ChipModel ascend;
  ascend.id = "ascend-910b";
  ascend.gres_type = "ascend";
  ascend.names = {"Ascend910B"};
  ascend.memory_bytes = 64ull << 30;
  ascend.visible_devices_env = "ASCEND_RT_VISIBLE_DEVICES";
  ascend.device_file = "/dev/davinci%d";
  c.Add(ascend);
  vgpu::ChipModel h100;
  h100.id = "nvidia-h100";
  h100.gres_type = "nvidia";
  h100.names = {"NVIDIA H100 80GB HBM3"};
  h100.memory_bytes = 80ull << 30;
  h100.visible_devices_env = "CUDA_VISIBLE_DEVICES";
  h100.device_file = "/dev/nvidia%d";
  c.Add(h100);
  return c;
}

GresRecord Rec(const std::string& name, const std::string& type, const std::string& file,
               uint64_t count) {
  GresRecord r;
  r.name = name;
  r.type = type;
  r.file = file;
  r.count = count;
  return r;
}

bool Contains(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

size_t CountVgpu(const ShareLayout& l) {
  size_t n = 0;
  for (const auto& r : l.records) n += r.name == "vgpu";
  return n;
}

}  // namespace

class ShareLayoutTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ShareLayoutTest);
  CPPUNIT_TEST(OneRecordPerDeviceAndRemainderDropped);
  CPPUNIT_TEST(DiscoveryFillsModelAndMemory);
  CPPUNIT_TEST(TwoTypesGetConsecutiveBits);
  CPPUNIT_TEST(TotalMismatchNamesTheFix);
  CPPUNIT_TEST(TruncatedByMergeUsesTheLineAsWritten);
  CPPUNIT_TEST(MissingFileDropsOnlyItsType);
  CPPUNIT_TEST(UnknownTypeListsKnownTypes);
  CPPUNIT_TEST(Over1024BitsSuggestsShares);
  CPPUNIT_TEST(NoFileAtAll);
  CPPUNIT_TEST(DiscoveredTypeDisagrees);
  CPPUNIT_TEST(DeviceNamedTwiceOnOneLine);
  CPPUNIT_TEST(DeviceNamedOnTwoLines);
  CPPUNIT_TEST(DeviceOfVgpuAndAnotherGres);
  CPPUNIT_TEST(UndiscoveredFileOfAnotherVendor);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    catalog_ = TestCatalog();
    existing_.clear();
    for (int i = 0; i < 16; ++i) {
      existing_.insert("/d/davinci" + std::to_string(i));
      existing_.insert("/d/nvidia" + std::to_string(i));
    }
    in_ = ShareLayoutInput();
    in_.node_name = "n1";
    in_.shares_per_device = 100;
    in_.catalog = &catalog_;
    in_.file_exists = [this](const std::string& f) { return existing_.count(f) > 0; };
  }

  void OneRecordPerDeviceAndRemainderDropped() {
    std::vector<GresRecord> merged = {Rec("gpu", "a100", "/d/nvidia9", 1),
                                      Rec("vgpu", "ascend", "/d/davinci[0-7]", 8),
                                      Rec("vgpu", "ascend", "", 792)};
    ShareLayout l = BuildShareLayout(merged, in_);
    CPPUNIT_ASSERT_MESSAGE(l.errors.empty() ? "" : l.errors[0], l.errors.empty());
    CPPUNIT_ASSERT_EQUAL(size_t(9), l.records.size());
    CPPUNIT_ASSERT_EQUAL(std::string("gpu"), l.records[0].name);
    CPPUNIT_ASSERT_EQUAL(size_t(0), l.records[0].origin);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), l.records[0].count);
    for (int i = 0; i < 8; ++i) {
      const GresRecord& r = l.records[1 + i];
      CPPUNIT_ASSERT_EQUAL(std::string("/d/davinci") + std::to_string(i), r.file);
      CPPUNIT_ASSERT_EQUAL(uint64_t(100), r.count);
      CPPUNIT_ASSERT_EQUAL(size_t(1), r.origin);
      CPPUNIT_ASSERT_EQUAL(uint32_t(100 * i), l.table.devices()[i].first_bit);
    }
    CPPUNIT_ASSERT_EQUAL(800u, l.table.total_bits());
    // Not discovered and Type= is a family, not a model: the model stays unknown.
    CPPUNIT_ASSERT_EQUAL(std::string(""), l.table.devices()[0].device.model_id);
    CPPUNIT_ASSERT_EQUAL(std::string("ASCEND_RT_VISIBLE_DEVICES"),
                         l.table.devices()[0].device.visible_devices_env);
  }

  void DiscoveryFillsModelAndMemory() {
    vgpu::Device d;
    d.source = "inventory";
    d.model_id = "ascend-910b";
    d.gres_type = "ascend";
    d.files = {"/d/davinci1"};
    d.memory_bytes = 12345;
    d.vendor_index = 1;
    d.uuid = "u-1";
    d.cpus = "8-15";
    in_.discovered = {d};
    ShareLayout l = BuildShareLayout({Rec("vgpu", "ascend", "/d/davinci[0-1]", 200)}, in_);
    CPPUNIT_ASSERT(l.errors.empty());
    // Discovered affinity becomes the device record's CPUs when Cores= is absent.
    CPPUNIT_ASSERT_EQUAL(std::string("8-15"), l.records[1].machine_cpus);
    CPPUNIT_ASSERT_EQUAL(std::string(""), l.records[0].machine_cpus);
    GresRecord with_cores = Rec("vgpu", "ascend", "/d/davinci1", 100);
    with_cores.cpus = "0-1";
    ShareLayout l2 = BuildShareLayout({with_cores}, in_);
    CPPUNIT_ASSERT_EQUAL(std::string(""), l2.records[0].machine_cpus);
    CPPUNIT_ASSERT_EQUAL(std::string("0-1"), l2.records[0].cpus);
    CPPUNIT_ASSERT_EQUAL(uint64_t(12345), l.table.devices()[1].device.memory_bytes);
    CPPUNIT_ASSERT_EQUAL(std::string("u-1"), l.table.devices()[1].device.uuid);
    // davinci0 was not discovered: the type names no model, so memory is unknown.
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), l.table.devices()[0].device.memory_bytes);
    CPPUNIT_ASSERT_EQUAL(0, l.table.devices()[0].device.vendor_index);
    CPPUNIT_ASSERT(Contains(l.notes, "/d/davinci0"));
  }

  void TwoTypesGetConsecutiveBits() {
    in_.shares_per_device = 50;
    ShareLayout l = BuildShareLayout({Rec("vgpu", "nvidia-h100", "/d/nvidia[0-1]", 2),
                                      Rec("vgpu", "nvidia-h100", "", 98),
                                      Rec("vgpu", "ascend", "/d/davinci[0-2]", 150)},
                                     in_);
    CPPUNIT_ASSERT_MESSAGE(l.errors.empty() ? "" : l.errors[0], l.errors.empty());
    CPPUNIT_ASSERT_EQUAL(size_t(5), l.table.devices().size());
    CPPUNIT_ASSERT_EQUAL(100u, l.table.devices()[2].first_bit);
    CPPUNIT_ASSERT_EQUAL(std::string("ascend"), l.table.devices()[2].device.gres_type);
    // A type that is a model id gets the model's memory without discovery.
    CPPUNIT_ASSERT_EQUAL(uint64_t(80ull << 30), l.table.devices()[0].device.memory_bytes);
    CPPUNIT_ASSERT_EQUAL(250u, l.table.total_bits());
  }

  void TotalMismatchNamesTheFix() {
    std::vector<GresRecord> merged = {Rec("gpu", "a100", "/d/nvidia9", 1),
                                      Rec("vgpu", "ascend", "/d/davinci[0-7]", 8),
                                      Rec("vgpu", "ascend", "", 692)};
    ShareLayout l = BuildShareLayout(merged, in_);
    CPPUNIT_ASSERT_EQUAL(size_t(1), l.errors.size());
    CPPUNIT_ASSERT(Contains(l.errors, "Gres=vgpu:ascend:700"));
    CPPUNIT_ASSERT(Contains(l.errors, "set Gres=vgpu:ascend:800"));
    CPPUNIT_ASSERT(Contains(l.errors, "NodeName=n1"));
    CPPUNIT_ASSERT_EQUAL(size_t(0), CountVgpu(l));
    CPPUNIT_ASSERT_EQUAL(size_t(1), l.records.size());  // gpu untouched
    CPPUNIT_ASSERT(l.table.empty());
  }

  void TruncatedByMergeUsesTheLineAsWritten() {
    // slurm.conf said vgpu:ascend:4, so Slurm's merge cut File= to 4 devices.
    vgpu::GresConfLocator loc("/etc/slurm/gres.conf",
                              "NodeName=n1 Name=vgpu Type=ascend File=/d/davinci[0-7]\n");
    in_.locator = &loc;
    ShareLayout l = BuildShareLayout({Rec("vgpu", "ascend", "/d/davinci[0-3]", 4)}, in_);
    CPPUNIT_ASSERT(Contains(l.errors, "set Gres=vgpu:ascend:800"));
    CPPUNIT_ASSERT(Contains(l.errors, "8 ascend device(s)"));
    CPPUNIT_ASSERT(Contains(l.errors, "/etc/slurm/gres.conf line 1"));
    CPPUNIT_ASSERT_EQUAL(size_t(0), CountVgpu(l));
  }

  void MissingFileDropsOnlyItsType() {
    vgpu::GresConfLocator loc("/etc/slurm/gres.conf",
                              "Name=vgpu Type=ascend File=/d/davinci[7-8]\n"
                              "Name=vgpu Type=nvidia File=/d/nvidia[0-1]\n");
    in_.locator = &loc;
    existing_.erase("/d/davinci8");
    ShareLayout l = BuildShareLayout({Rec("vgpu", "ascend", "/d/davinci[7-8]", 200),
                                      Rec("vgpu", "nvidia", "/d/nvidia[0-1]", 200)},
                                     in_);
    CPPUNIT_ASSERT_EQUAL(size_t(1), l.errors.size());
    CPPUNIT_ASSERT(Contains(l.errors, "/d/davinci8 does not exist"));
    CPPUNIT_ASSERT(Contains(l.errors, "gres.conf line 1"));
    CPPUNIT_ASSERT_EQUAL(size_t(2), CountVgpu(l));
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), l.table.devices()[0].device.gres_type);
    CPPUNIT_ASSERT_EQUAL(0u, l.table.devices()[0].first_bit);
  }

  void UnknownTypeListsKnownTypes() {
    ShareLayout l = BuildShareLayout({Rec("vgpu", "foo", "/d/nvidia[0-1]", 200)}, in_);
    CPPUNIT_ASSERT_EQUAL(size_t(1), l.errors.size());
    CPPUNIT_ASSERT(Contains(l.errors, "Type=foo is not in the chip catalog"));
    CPPUNIT_ASSERT(Contains(l.errors, "ascend, nvidia"));
    CPPUNIT_ASSERT_EQUAL(size_t(0), CountVgpu(l));
  }

  void Over1024BitsSuggestsShares() {
    ShareLayout l = BuildShareLayout({Rec("vgpu", "ascend", "/d/davinci[0-10]", 1100)}, in_);
    CPPUNIT_ASSERT_EQUAL(size_t(1), l.errors.size());
    CPPUNIT_ASSERT(Contains(l.errors, "1024"));
    CPPUNIT_ASSERT(Contains(l.errors, "SharesPerDevice=93"));
    CPPUNIT_ASSERT(Contains(l.errors, "Gres=vgpu:ascend:1023"));
    CPPUNIT_ASSERT_EQUAL(size_t(0), CountVgpu(l));
  }

  void NoFileAtAll() {
    ShareLayout l = BuildShareLayout({Rec("vgpu", "ascend", "", 800)}, in_);
    CPPUNIT_ASSERT(Contains(l.errors, "names no device"));
    CPPUNIT_ASSERT(Contains(l.errors, "File="));
    CPPUNIT_ASSERT_EQUAL(size_t(0), CountVgpu(l));
  }

  void DiscoveredTypeDisagrees() {
    vgpu::Device d;
    d.name = "NVIDIA H100 80GB HBM3";
    d.model_id = "nvidia-h100";
    d.gres_type = "nvidia";
    d.files = {"/d/davinci0"};
    in_.discovered = {d};
    ShareLayout l = BuildShareLayout({Rec("vgpu", "ascend", "/d/davinci0", 100)}, in_);
    CPPUNIT_ASSERT(Contains(l.errors, "not Type=ascend"));
    CPPUNIT_ASSERT_EQUAL(size_t(0), CountVgpu(l));
  }

  void DeviceNamedTwiceOnOneLine() {
    ShareLayout l = BuildShareLayout({Rec("vgpu", "ascend", "/d/davinci0,/d/davinci0", 200)}, in_);
    CPPUNIT_ASSERT(Contains(l.errors, "/d/davinci0 is named 2 times"));
    CPPUNIT_ASSERT_EQUAL(size_t(0), CountVgpu(l));
  }

  void DeviceNamedOnTwoLines() {
    vgpu::GresConfLocator locator("/etc/slurm/gres.conf",
                                  "NodeName=n1 Name=vgpu Type=ascend File=/d/davinci[0-1]\n"
                                  "NodeName=n1 Name=vgpu Type=nvidia File=/d/nvidia0\n"
                                  "NodeName=n1 Name=vgpu Type=ascend File=/d/davinci[1-1]\n");
    in_.locator = &locator;
    ShareLayout l = BuildShareLayout({Rec("vgpu", "ascend", "/d/davinci[0-1]", 200),
                                      Rec("vgpu", "nvidia", "/d/nvidia0", 100),
                                      Rec("vgpu", "ascend", "/d/davinci[1-1]", 100)},
                                     in_);
    CPPUNIT_ASSERT(Contains(l.errors, "/d/davinci1 is named 2 times"));
    CPPUNIT_ASSERT(Contains(l.errors, "gres.conf line 1") && Contains(l.errors, "gres.conf line 3"));
    // Only the type with the repeat is refused.
    CPPUNIT_ASSERT_EQUAL(size_t(1), CountVgpu(l));
    CPPUNIT_ASSERT_EQUAL(std::string("/d/nvidia0"), l.records[0].file);
  }

  void DeviceOfVgpuAndAnotherGres() {
    ShareLayout l = BuildShareLayout({Rec("gpu", "h100", "/d/nvidia0", 1), Rec("vgpu", "nvidia", "/d/nvidia0", 100)},
                                     in_);
    CPPUNIT_ASSERT(Contains(l.errors, "/d/nvidia0 is named 2 times"));
    CPPUNIT_ASSERT_EQUAL(size_t(0), CountVgpu(l));
    // Two other GRES naming one file are not ours to judge.
    l = BuildShareLayout({Rec("gpu", "h100", "/d/nvidia0", 1), Rec("shard", "", "/d/nvidia0", 4)}, in_);
    CPPUNIT_ASSERT(l.errors.empty());
  }

  void UndiscoveredFileOfAnotherVendor() {
    ShareLayout l = BuildShareLayout({Rec("vgpu", "ascend", "/d/nvidia[0-1]", 200)}, in_);
    CPPUNIT_ASSERT(Contains(l.errors, "/d/nvidia0 is the device file of nvidia devices (/dev/nvidia%d), not Type=ascend"));
    CPPUNIT_ASSERT_EQUAL(size_t(0), CountVgpu(l));
    // A file no pattern knows stays accepted, known only by its name.
    existing_.insert("/d/accel0");
    l = BuildShareLayout({Rec("vgpu", "ascend", "/d/accel0", 100)}, in_);
    CPPUNIT_ASSERT_EQUAL(size_t(1), CountVgpu(l));
  }

 private:
  vgpu::ChipCatalog catalog_;
  std::set<std::string> existing_;
  ShareLayoutInput in_;
};
CPPUNIT_TEST_SUITE_REGISTRATION(ShareLayoutTest);
