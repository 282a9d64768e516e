// Tests of vgpuctl discover: the suggested gres.conf and Gres= for devices
// of one and of several types, models mixed under one type, device files
// missing, MIG mode against HardwareSlicing (NVML's answer from the stub
// library), and the command on a simulated inventory.
#include <cppunit/extensions/HelperMacros.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "discover_command.h"
#include "temp_dir.h"
#include "test_paths.h"

namespace vgpu::discover {
namespace {

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

Device Dev(const std::string& model, const std::string& type, int index, const std::string& file,
           const std::string& source = "inventory") {
  Device d;
  d.source = source;
  d.model_id = model;
  d.gres_type = type;
  d.vendor_index = index;
  d.files = {file};
  return d;
}

HostFacts AllFilesThere() {
  HostFacts h;
  h.file_exists = [](const std::string&) { return true; };
  return h;
}

}  // namespace

class DiscoverTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(DiscoverTest);
  CPPUNIT_TEST(LinesPerTypeInDiscoveryOrder);
  CPPUNIT_TEST(MixedModelsGetTheirOwnType);
  CPPUNIT_TEST(MissingDeviceFileIsWarned);
  CPPUNIT_TEST(MigModeAgainstHardwareSlicing);
  CPPUNIT_TEST(NvmlAnswersMigMode);
  CPPUNIT_TEST(CommandOnAnInventory);
  CPPUNIT_TEST_SUITE_END();

 public:
  void LinesPerTypeInDiscoveryOrder() {
    VgpuConfig config;
    config.shares_per_device = 50;
    std::vector<Device> devices = {Dev("nvidia-h100", "nvidia", 0, "/dev/nvidia0"),
                                   Dev("nvidia-h100", "nvidia", 1, "/dev/nvidia1"),
                                   Dev("hygon-k100", "dcu", 0, "/dev/dri/renderD128"),
                                   Dev("nvidia-h100", "nvidia", 2, "/dev/nvidia3")};
    Suggestion s = Suggest(devices, "gpu01", config, AllFilesThere());
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.gres_conf.size());
    CPPUNIT_ASSERT_EQUAL(std::string("NodeName=gpu01 Name=vgpu Type=nvidia File=/dev/nvidia[0-1,3]"), s.gres_conf[0]);
    CPPUNIT_ASSERT_EQUAL(std::string("NodeName=gpu01 Name=vgpu Type=dcu File=/dev/dri/renderD128"), s.gres_conf[1]);
    CPPUNIT_ASSERT_EQUAL(std::string("vgpu:nvidia:150,vgpu:dcu:50"), s.node_gres);
    CPPUNIT_ASSERT(s.warnings.empty());
    CPPUNIT_ASSERT(Suggest({}, "gpu01", config, AllFilesThere()).gres_conf.empty());
  }

  void MixedModelsGetTheirOwnType() {
    std::vector<Device> devices = {Dev("nvidia-a100-80g", "nvidia", 0, "/dev/nvidia0"),
                                   Dev("nvidia-h100", "nvidia", 1, "/dev/nvidia1"),
                                   Dev("nvidia-a100-80g", "nvidia", 2, "/dev/nvidia2")};
    Suggestion s = Suggest(devices, "n1", VgpuConfig(), AllFilesThere());
    CPPUNIT_ASSERT_EQUAL(size_t(1), s.warnings.size());
    CPPUNIT_ASSERT_MESSAGE(s.warnings[0], Has(s.warnings[0], "models mixed under Type=nvidia") &&
                                              Has(s.warnings[0], "nvidia-a100-80g x2, nvidia-h100 x1"));
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.gres_conf.size());
    CPPUNIT_ASSERT_EQUAL(std::string("NodeName=n1 Name=vgpu Type=nvidia-a100-80g File=/dev/nvidia[0,2]"),
                         s.gres_conf[0]);
    CPPUNIT_ASSERT_EQUAL(std::string("NodeName=n1 Name=vgpu Type=nvidia-h100 File=/dev/nvidia1"), s.gres_conf[1]);
    CPPUNIT_ASSERT_EQUAL(std::string("vgpu:nvidia-a100-80g:200,vgpu:nvidia-h100:100"), s.node_gres);
  }

  void MissingDeviceFileIsWarned() {
    HostFacts host;
    host.file_exists = [](const std::string& f) { return f != "/dev/davinci1"; };
    Device no_file = Dev("ascend-910b", "ascend", 2, "");
    no_file.files.clear();
    Suggestion s = Suggest({Dev("ascend-910b", "ascend", 0, "/dev/davinci0"), Dev("ascend-910b", "ascend", 1, "/dev/davinci1"),
                            no_file},
                           "n1", VgpuConfig(), host);
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.warnings.size());
    CPPUNIT_ASSERT_MESSAGE(s.warnings[0], Has(s.warnings[0], "ascend-910b 1") && Has(s.warnings[0], "/dev/davinci1 does not exist"));
    CPPUNIT_ASSERT_MESSAGE(s.warnings[1], Has(s.warnings[1], "no device file known"));
    // The line still names what was found: the admin decides.
    CPPUNIT_ASSERT_EQUAL(std::string("NodeName=n1 Name=vgpu Type=ascend File=/dev/davinci[0-1]"), s.gres_conf[0]);
  }

  void MigModeAgainstHardwareSlicing() {
    HostFacts host = AllFilesThere();
    std::set<int> mig_on = {0};
    host.mig_mode = [&](const Device& d) -> std::optional<bool> {
      if (d.source != "nvml") return std::nullopt;
      return mig_on.count(d.vendor_index) > 0;
    };
    std::vector<Device> devices = {Dev("nvidia-a100-80g", "nvidia", 0, "/dev/nvidia0", "nvml"),
                                   Dev("nvidia-a100-80g", "nvidia", 1, "/dev/nvidia1", "nvml")};
    Suggestion plain = Suggest(devices, "n1", VgpuConfig(), host);
    CPPUNIT_ASSERT_EQUAL(size_t(1), plain.warnings.size());
    CPPUNIT_ASSERT_MESSAGE(plain.warnings[0], Has(plain.warnings[0], "nvidia-a100-80g 0: MIG mode is on") &&
                                                  Has(plain.warnings[0], "HardwareSlicing=nvidia-a100-80g") &&
                                                  Has(plain.warnings[0], "nvidia-smi -i 0 -mig 0"));
    VgpuConfig sliced;
    sliced.hardware_slicing = {"nvidia-a100-80g"};
    Suggestion s = Suggest(devices, "n1", sliced, host);
    CPPUNIT_ASSERT_EQUAL(size_t(1), s.warnings.size());
    CPPUNIT_ASSERT_MESSAGE(s.warnings[0], Has(s.warnings[0], "nvidia-a100-80g 1: vgpu.conf's HardwareSlicing") &&
                                              Has(s.warnings[0], "nvidia-smi -i 1 -mig 1"));
    mig_on = {0, 1};
    CPPUNIT_ASSERT(Suggest(devices, "n1", sliced, host).warnings.empty());
    // The node's Features name the sliced model (once), for slurmctld.
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia-a100-80g"), s.features);
    CPPUNIT_ASSERT_EQUAL(std::string(""), plain.features);
  }

  // The stub NVML answers MIG mode only where MIG is simulated
  // (VGPU_STUB_NVML_MIG_STATE); VGPU_STUB_NVML_MIG_MODE=0 turns it off.
  void NvmlAnswersMigMode() {
    TempDir dir;
    const std::string lib = StubDir() + "/libnvidia-ml.so.1";
    setenv("VGPU_STUB_NVML_DEVICES", "NVIDIA A100-SXM4-80GB,0,85899345920,0000:1b:00.0", 1);
    unsetenv("VGPU_STUB_NVML_MIG_STATE");
    unsetenv("VGPU_STUB_NVML_MIG_MODE");
    Device gpu = Dev("nvidia-a100-80g", "nvidia", 0, "/dev/nvidia0", "nvml");
    DiscoveryEnv& env = DiscoveryEnv::Default();
    CPPUNIT_ASSERT(!NvmlMigMode(env, gpu, lib).has_value());  // no MIG: not supported
    setenv("VGPU_STUB_NVML_MIG_STATE", (dir.path() + "/mig").c_str(), 1);
    CPPUNIT_ASSERT(NvmlMigMode(env, gpu, lib) == std::optional<bool>(true));
    setenv("VGPU_STUB_NVML_MIG_MODE", "0", 1);
    CPPUNIT_ASSERT(NvmlMigMode(env, gpu, lib) == std::optional<bool>(false));
    CPPUNIT_ASSERT(!NvmlMigMode(env, Dev("ascend-910b", "ascend", 0, "/dev/davinci0", "dcmi"), lib).has_value());
    CPPUNIT_ASSERT(!NvmlMigMode(env, gpu, "/nonexistent/libnvidia-ml.so.1").has_value());
    unsetenv("VGPU_STUB_NVML_DEVICES");
    unsetenv("VGPU_STUB_NVML_MIG_STATE");
    unsetenv("VGPU_STUB_NVML_MIG_MODE");
  }

  void CommandOnAnInventory() {
    TempDir dir;
    mkdir((dir.path() + "/dev").c_str(), 0755);
    for (const char* f : {"/dev/davinci0", "/dev/davinci1", "/dev/renderD128"}) dir.Write(f + 1, "");
    dir.Write("vgpu.conf", "SharesPerDevice=100\nChipCatalogDir=" + CatalogDir() + "\nInventory=" + dir.path() +
                               "/%n.json\n");
    dir.Write("n7.json", "{\"devices\": ["
                         " {\"model\": \"ascend-910b\", \"index\": 0, \"file\": \"" + dir.path() + "/dev/davinci0\"},"
                         " {\"model\": \"ascend-910b\", \"index\": 1, \"file\": \"" + dir.path() + "/dev/davinci1\"},"
                         " {\"model\": \"hygon-k100\", \"index\": 0, \"file\": \"" + dir.path() + "/dev/renderD128\"},"
                         " {\"model\": \"hygon-k100\", \"index\": 1, \"file\": \"" + dir.path() + "/dev/renderD129\"}]}");
    const std::string conf = dir.path() + "/slurm.conf";
    std::ostringstream out, err;
    CPPUNIT_ASSERT_EQUAL(1, RunDiscover({"--conf", conf, "--node=n7"}, out, err));
    const std::string text = out.str();
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "4 device(s) from the inventory " + dir.path() + "/n7.json"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "\nNodeName=n7 Name=vgpu Type=ascend File=" + dir.path() + "/dev/davinci[0-1]\n"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "\nNodeName=n7 Name=vgpu Type=dcu File=" + dir.path() + "/dev/renderD[128-129]\n"));
    CPPUNIT_ASSERT_MESSAGE(text, Has(text, "\nGres=vgpu:ascend:200,vgpu:dcu:200\n"));
    CPPUNIT_ASSERT_MESSAGE(err.str(), Has(err.str(), "warning: hygon-k100 1: its device file " + dir.path() +
                                                         "/dev/renderD129 does not exist"));
    dir.Write("dev/renderD129", "");
    std::ostringstream out2, err2;
    CPPUNIT_ASSERT_EQUAL(0, RunDiscover({"--conf", conf, "--node=n7"}, out2, err2));
    CPPUNIT_ASSERT_MESSAGE(err2.str(), err2.str().empty());

    std::ostringstream out3, err3;
    CPPUNIT_ASSERT_EQUAL(1, RunDiscover({"--conf", conf, "--node=n8"}, out3, err3));  // n8.json: none
    CPPUNIT_ASSERT_MESSAGE(err3.str(), Has(err3.str(), "no device found"));
    CPPUNIT_ASSERT_EQUAL(2, RunDiscover({"--bogus"}, out3, err3));
    CPPUNIT_ASSERT_EQUAL(2, RunDiscover({"--node"}, out3, err3));
    CPPUNIT_ASSERT_MESSAGE(err3.str(), Has(err3.str(), "--node needs a value"));
    std::ostringstream help, none;
    CPPUNIT_ASSERT_EQUAL(0, RunDiscover({"--help"}, help, none));
    CPPUNIT_ASSERT(Has(help.str(), "usage: vgpuctl discover"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(DiscoverTest);

}  // namespace vgpu::discover
