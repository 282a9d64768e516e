#include <cppunit/extensions/HelperMacros.h>

#include <cstdio>
#include <unistd.h>

#include <fstream>

#include "config/vgpu_config.h"
#include "temp_dir.h"

using vgpu::VgpuConfig;

class VgpuConfigTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(VgpuConfigTest);
  CPPUNIT_TEST(DefaultsWhenEmpty);
  CPPUNIT_TEST(ParsesKeysCaseInsensitively);
  CPPUNIT_TEST(RejectsBadShares);
  CPPUNIT_TEST(SweepInterval);
  CPPUNIT_TEST(RejectsUnknownKeyWithLine);
  CPPUNIT_TEST(MissingFileGivesDefaults);
  CPPUNIT_TEST(InventoryNodeSubstitution);
  CPPUNIT_TEST(TypePreferenceList);
  CPPUNIT_TEST(FileIsReadAgainWhenItChanges);
  CPPUNIT_TEST(FilesBesideSlurmConf);
  CPPUNIT_TEST_SUITE_END();

 public:
  void DefaultsWhenEmpty() {
    VgpuConfig d;
    d.chip_catalog_dirs = "/x";
    auto c = VgpuConfig::Parse("# nothing\n\n", "vgpu.conf", d);
    CPPUNIT_ASSERT(c.ok());
    CPPUNIT_ASSERT_EQUAL(100u, c->shares_per_device);
    CPPUNIT_ASSERT_EQUAL(std::string("/x"), c->chip_catalog_dirs);
  }
  void ParsesKeysCaseInsensitively() {
    CPPUNIT_ASSERT_EQUAL(std::string("pool"), VgpuConfig().placement_policy);
    auto c = VgpuConfig::Parse(
        "sharesperdevice=50 # half\nChipCatalogDir=/a:/b\nINVENTORY=/i/%n.json\nPlacementPolicy=FGD\n",
        "vgpu.conf", VgpuConfig());
    CPPUNIT_ASSERT_MESSAGE(c.message(), c.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("fgd"), c->placement_policy);
    CPPUNIT_ASSERT_EQUAL(50u, c->shares_per_device);
    CPPUNIT_ASSERT_EQUAL(std::string("/a:/b"), c->chip_catalog_dirs);
    CPPUNIT_ASSERT_EQUAL(std::string("/i/%n.json"), c->inventory);
  }
  void RejectsBadShares() {
    for (const char* bad : {"SharesPerDevice=0", "SharesPerDevice=1025", "SharesPerDevice=ten",
                            "SharesPerDevice=", "SharesPerDevice=-5"}) {
      auto c = VgpuConfig::Parse(bad, "vgpu.conf", VgpuConfig());
      CPPUNIT_ASSERT_MESSAGE(bad, !c.ok());
      CPPUNIT_ASSERT(c.message().find("vgpu.conf:1") != std::string::npos);
      CPPUNIT_ASSERT(c.message().find("1024") != std::string::npos);
    }
  }
  void SweepInterval() {
    CPPUNIT_ASSERT_EQUAL(60u, VgpuConfig().sweep_interval_s);
    auto c = VgpuConfig::Parse("sweepinterval = 0\n", "vgpu.conf", VgpuConfig());
    CPPUNIT_ASSERT_MESSAGE(c.message(), c.ok());
    CPPUNIT_ASSERT_EQUAL(0u, c->sweep_interval_s);
    for (const char* bad : {"SweepInterval=-1", "SweepInterval=86401", "SweepInterval=1m", "SweepInterval="}) {
      auto b = VgpuConfig::Parse(bad, "vgpu.conf", VgpuConfig());
      CPPUNIT_ASSERT_MESSAGE(bad, !b.ok());
      CPPUNIT_ASSERT_MESSAGE(b.message(), b.message().find("seconds from 0 to 86400") != std::string::npos);
    }
  }
  void RejectsUnknownKeyWithLine() {
    auto c = VgpuConfig::Parse("SharesPerDevice=100\nShares=3\n", "/etc/slurm/vgpu.conf", VgpuConfig());
    CPPUNIT_ASSERT(!c.ok());
    CPPUNIT_ASSERT(c.message().find("/etc/slurm/vgpu.conf:2") != std::string::npos);
    CPPUNIT_ASSERT(c.message().find("Shares") != std::string::npos);
    auto d = VgpuConfig::Parse("just words\n", "vgpu.conf", VgpuConfig());
    CPPUNIT_ASSERT(!d.ok());
  }
  void MissingFileGivesDefaults() {
    VgpuConfig d;
    d.shares_per_device = 7;
    auto c = VgpuConfig::Load("/nonexistent/dir/vgpu.conf", d);
    CPPUNIT_ASSERT(c.ok());
    CPPUNIT_ASSERT_EQUAL(7u, c->shares_per_device);
    char path[] = "/tmp/vgpuconfXXXXXX";
    int fd = mkstemp(path);
    CPPUNIT_ASSERT(fd >= 0);
    close(fd);
    std::ofstream(path) << "SharesPerDevice=20\n";
    auto e = VgpuConfig::Load(path, d);
    std::remove(path);
    CPPUNIT_ASSERT(e.ok());
    CPPUNIT_ASSERT_EQUAL(20u, e->shares_per_device);
  }
  void TypePreferenceList() {
    CPPUNIT_ASSERT(VgpuConfig().type_preference.empty());
    auto c = VgpuConfig::Parse("TypePreference= NVIDIA, ascend,nvidia\n", "vgpu.conf", VgpuConfig());
    CPPUNIT_ASSERT_MESSAGE(c.message(), c.ok());
    CPPUNIT_ASSERT((c->type_preference == std::vector<std::string>{"nvidia", "ascend"}));
    for (const char* bad : {"TypePreference=", "TypePreference=nvidia,,ascend", "TypePreference=a b",
                            "TypePreference=vgpu:nvidia"}) {
      auto e = VgpuConfig::Parse(bad, "vgpu.conf", VgpuConfig());
      CPPUNIT_ASSERT_MESSAGE(bad, !e.ok());
      CPPUNIT_ASSERT_MESSAGE(e.message(), e.message().find("TypePreference") != std::string::npos);
    }
  }
  void InventoryNodeSubstitution() {
    VgpuConfig c;
    c.inventory = "/lab/inv/%n.json";
    CPPUNIT_ASSERT_EQUAL(std::string("/lab/inv/n2.json"), c.InventoryFor("n2"));
    c.inventory = "";
    CPPUNIT_ASSERT_EQUAL(std::string(""), c.InventoryFor("n2"));
  }
  void FileIsReadAgainWhenItChanges() {
    vgpu::TempDir dir;
    const std::string path = dir.path() + "/vgpu.conf";
    vgpu::VgpuConfigFile file(path);
    CPPUNIT_ASSERT(file.Refresh().ok());  // missing: defaults
    CPPUNIT_ASSERT_EQUAL(100u, file.config().shares_per_device);
    std::ofstream(path) << "SharesPerDevice=20\n";
    CPPUNIT_ASSERT(file.Refresh().ok());
    CPPUNIT_ASSERT_EQUAL(20u, file.config().shares_per_device);
    // A mistake is reported once and the last good configuration kept.
    std::ofstream(path) << "SharesPerDevice=twenty\n";
    vgpu::Status st = file.Refresh();
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.message().find("keeping") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(20u, file.config().shares_per_device);
    CPPUNIT_ASSERT(file.Refresh().ok());
    // Fixed (a different size, so even a coarse clock sees the change).
    std::ofstream(path) << "SharesPerDevice=1000\n";
    CPPUNIT_ASSERT(file.Refresh().ok());
    CPPUNIT_ASSERT_EQUAL(1000u, file.config().shares_per_device);
  }

  void FilesBesideSlurmConf() {
    CPPUNIT_ASSERT_EQUAL(std::string("/etc/slurm/vgpu.conf"), vgpu::BesideSlurmConf("/etc/slurm/slurm.conf", "vgpu.conf"));
    CPPUNIT_ASSERT_EQUAL(std::string("./gres.conf"), vgpu::BesideSlurmConf("slurm.conf", "gres.conf"));
    CPPUNIT_ASSERT_EQUAL(std::string("/vgpu.conf"), vgpu::BesideSlurmConf("/slurm.conf", "vgpu.conf"));
  }
};
CPPUNIT_TEST_SUITE_REGISTRATION(VgpuConfigTest);
