#include <cppunit/extensions/HelperMacros.h>

#include <sstream>

#include "config_check.h"
#include "temp_dir.h"
#include "test_paths.h"

using vgpu::check::CheckConfiguration;
using vgpu::check::CheckInput;
using vgpu::check::CheckReport;

namespace {

bool Has(const CheckReport& r, const std::string& what) {
  for (const auto& l : r.lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

// `vgpuctl check` on a cluster's files in a temporary directory, with the
// shipped catalog: the lab's layout (8 ascend devices on n1, 4 nvidia and 4
// dcu on n2), then one mistake at a time.
class ConfigCheckTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ConfigCheckTest);
  CPPUNIT_TEST(GoodClusterIsOk);
  CPPUNIT_TEST(DeviceNamedTwice);
  CPPUNIT_TEST(WrongTotalAndUnknownType);
  CPPUNIT_TEST(BrokenCatalogFileAndVgpuConf);
  CPPUNIT_TEST(MissingSlurmConf);
  CPPUNIT_TEST(CommandExitStatus);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    dir_ = std::make_unique<vgpu::TempDir>("vgpu-check");
    slurm_conf_ = dir_->Write("slurm.conf",
                              "ClusterName=lab\n"
                              "NodeName=DEFAULT CPUs=2 Gres=vgpu:ascend:800\n"
                              "NodeName=n1 NodeAddr=127.0.0.1\n"
                              "NodeName=n2 Gres=vgpu:nvidia:400,vgpu:dcu:400\n"
                              "NodeName=c[1-2] Gres=gpu:2   # no vgpu\n");
    dir_->Write("vgpu.conf", "SharesPerDevice=100\nChipCatalogDir=" + vgpu::CatalogDir() + "\n");
    WriteGres("");
  }
  void tearDown() override { dir_.reset(); }

  void GoodClusterIsOk() {
    CheckReport r = Run();
    CPPUNIT_ASSERT_EQUAL(0, r.problems);
    CPPUNIT_ASSERT(Has(r, "n1: ok: 8 ascend device(s)"));
    CPPUNIT_ASSERT(Has(r, "n2: ok: 4 dcu, 4 nvidia device(s)"));
    CPPUNIT_ASSERT(Has(r, "2 node(s) with vgpu checked, 0 problem(s)"));
  }
  void DeviceNamedTwice() {
    WriteGres("NodeName=n1 Name=vgpu Type=ascend File=/dev/davinci[0-1]\n");
    CheckReport r = Run();
    CPPUNIT_ASSERT_EQUAL(1, r.problems);
    CPPUNIT_ASSERT(Has(r, "error: n1: gres/vgpu: node n1: device files /dev/davinci0, /dev/davinci1 are named 2 times"));
    CPPUNIT_ASSERT(Has(r, "gres.conf line 1") && Has(r, "gres.conf line 4"));
    CPPUNIT_ASSERT(Has(r, "n2: ok"));  // the other node is fine
  }
  void WrongTotalAndUnknownType() {
    WriteGres("NodeName=n2 Name=vgpu Type=tpu File=/dev/accel[0-1]\n");
    CheckReport r = Run();
    CPPUNIT_ASSERT(r.problems >= 2);
    CPPUNIT_ASSERT(Has(r, "has no vgpu:tpu"));
    CPPUNIT_ASSERT(Has(r, "Type=tpu is not in the chip catalog"));
  }
  void BrokenCatalogFileAndVgpuConf() {
    vgpu::TempDir site("vgpu-check-site");
    site.Write("zz.json", "{\n  \"id\": ");
    dir_->Write("vgpu.conf", "ChipCatalogDir=" + vgpu::CatalogDir() + ":" + site.path() + "\n");
    CheckReport r = Run();
    CPPUNIT_ASSERT_EQUAL(1, r.problems);
    CPPUNIT_ASSERT(Has(r, "zz.json: invalid JSON") && Has(r, "Line 2"));
    CPPUNIT_ASSERT(Has(r, "n1: ok"));  // a model no node has: only reported
    dir_->Write("vgpu.conf", "SharesPerDevice=lots\n");
    r = Run();
    CPPUNIT_ASSERT_EQUAL(1, r.problems);
    CPPUNIT_ASSERT(Has(r, "fix vgpu.conf first"));
  }
  void MissingSlurmConf() {
    CheckInput in;
    in.slurm_conf = dir_->path() + "/nope/slurm.conf";
    in.file_exists = [](const std::string&) { return true; };
    CheckReport r = CheckConfiguration(in);
    CPPUNIT_ASSERT_EQUAL(1, r.problems);
    CPPUNIT_ASSERT(Has(r, "--conf"));
  }
  void CommandExitStatus() {
    std::ostringstream out, err;
    CPPUNIT_ASSERT_EQUAL(0, vgpu::check::RunCheck({"--conf", slurm_conf_}, out, err));
    WriteGres("NodeName=n1 Name=vgpu Type=ascend File=/dev/davinci0\n");
    CPPUNIT_ASSERT_EQUAL(1, vgpu::check::RunCheck({"--conf=" + slurm_conf_}, out, err));
    CPPUNIT_ASSERT_EQUAL(2, vgpu::check::RunCheck({"--bogus"}, out, err));
    CPPUNIT_ASSERT(err.str().find("unknown argument") != std::string::npos);
    // --local: this host must have the device files, and has not.
    WriteGres("");
    CPPUNIT_ASSERT_EQUAL(1, vgpu::check::RunCheck({"--conf", slurm_conf_, "--local"}, out, err));
  }

 private:
  CheckReport Run() {
    CheckInput in;
    in.slurm_conf = slurm_conf_;
    in.file_exists = [](const std::string&) { return true; };
    return CheckConfiguration(in);
  }
  void WriteGres(const std::string& extra) {
    dir_->Write("gres.conf",
                "NodeName=n1 Name=vgpu Type=ascend File=/dev/davinci[0-7]\n"
                "NodeName=n2 Name=vgpu Type=nvidia File=/dev/nvidia[0-3]\n"
                "NodeName=n2 Name=vgpu Type=dcu File=/dev/dri/renderD[128-131]\n" +
                    extra);
  }
  std::unique_ptr<vgpu::TempDir> dir_;
  std::string slurm_conf_;
};
CPPUNIT_TEST_SUITE_REGISTRATION(ConfigCheckTest);
