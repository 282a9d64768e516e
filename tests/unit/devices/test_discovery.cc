// Tests of device discovery: the NVML, DCMI and ROCm SMI backends against
// the stub libraries in $VGPU_TEST_STUB_DIR (see tests/stubs/*.c for their
// VGPU_STUB_* variables), the inventory backend, Resolve() and
// DiscoverDevices(). The catalog is the shipped one ($VGPU_TEST_CATALOG_DIR).
#include <cppunit/extensions/HelperMacros.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "devices/discovery.h"
#include "temp_dir.h"
#include "test_paths.h"

namespace vgpu {
namespace {

namespace fs = std::filesystem;

const char* const kStubVars[] = {
    "VGPU_STUB_NVML_DEVICES", "VGPU_STUB_NVML_FAIL", "VGPU_STUB_NVML_UNSUPPORTED",
    "VGPU_STUB_DCMI_DEVICES", "VGPU_STUB_DCMI_FAIL", "VGPU_STUB_DCMI_UNSUPPORTED",
    "VGPU_STUB_RSMI_DEVICES", "VGPU_STUB_RSMI_FAIL", "VGPU_STUB_RSMI_UNSUPPORTED",
};

// The real env for libraries and files, with fixed CPU affinity, library
// names redirected to the stubs, and a record of the libraries asked for.
class TestEnv : public DiscoveryEnv {
 public:
  Result<std::unique_ptr<DynamicLibrary>> OpenLibrary(const std::string& name) override {
    opened.push_back(name);
    auto it = redirect.find(name);
    return Default().OpenLibrary(it != redirect.end() ? it->second : name);
  }
  Result<std::string> ReadFile(const std::string& path) override { return Default().ReadFile(path); }
  std::string CpusForPciBusId(const std::string& pci_bus_id) override {
    auto it = cpus.find(pci_bus_id);
    return it != cpus.end() ? it->second : "";
  }

  std::map<std::string, std::string> redirect;
  std::map<std::string, std::string> cpus;
  std::vector<std::string> opened;
};

// Keeps a stub library loaded for a test's duration, so that its state
// (init/shutdown balance) survives the backend's dlclose, and reads it.
class StubHold {
 public:
  StubHold(const std::string& library, const char* depth_symbol) {
    handle_ = dlopen((StubDir() + "/" + library).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) depth_ = reinterpret_cast<int (*)()>(dlsym(handle_, depth_symbol));
  }
  ~StubHold() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  // Init calls not matched by a shutdown; -1 if the stub could not be loaded.
  int InitDepth() const { return depth_ != nullptr ? depth_() : -1; }

 private:
  void* handle_ = nullptr;
  int (*depth_)() = nullptr;
};

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class DiscoveryTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(DiscoveryTest);
  CPPUNIT_TEST(testNvmlEnumeratesAndResolves);
  CPPUNIT_TEST(testNvmlUnsupportedOptionalFactsLeftUnknown);
  CPPUNIT_TEST(testNvmlFailingCallNamesFunction);
  CPPUNIT_TEST(testDcmiEnumeratesAndResolves);
  CPPUNIT_TEST(testDcmiFailingCallNamesFunction);
  CPPUNIT_TEST(testRocmSmiEnumeratesAndResolves);
  CPPUNIT_TEST(testRocmSmiFailingCallNamesFunction);
  CPPUNIT_TEST(testMissingLibrariesAreNotesNotErrors);
  CPPUNIT_TEST(testUnknownModelIsLeftOutWithNote);
  CPPUNIT_TEST(testInventoryHappyPath);
  CPPUNIT_TEST(testInventoryMissingAndCorruptFiles);
  CPPUNIT_TEST(testInventoryBadEntries);
  CPPUNIT_TEST(testInventoryIndexIsPerModel);
  CPPUNIT_TEST(testInventoryUnknownModelIsNote);
  CPPUNIT_TEST(testDiscoverWithInventoryUsesOnlyIt);
  CPPUNIT_TEST(testDiscoverRunsEveryBackendDespiteErrors);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    for (const char* var : kStubVars) unsetenv(var);
    catalog_ = ShippedCatalog();
    tmp_dir_ = std::make_unique<TempDir>("vgpu-discovery");
    tmp_ = tmp_dir_->path();
  }
  void tearDown() override {
    for (const char* var : kStubVars) unsetenv(var);
    tmp_dir_.reset();
  }

  void testNvmlEnumeratesAndResolves() {
    setenv("VGPU_STUB_NVML_DEVICES",
           "NVIDIA H100 80GB HBM3,0,85520809984,0000:1b:00.0,GPU-11111111;"
           "NVIDIA A100-SXM4-80GB,3,85899345920,0000:C1:00.0", 1);
    StubHold stub("libnvidia-ml.so.1", "vgpu_stub_nvml_init_depth");
    auto backend = MakeNvmlBackend(env_, StubDir() + "/libnvidia-ml.so.1");
    CPPUNIT_ASSERT_EQUAL(std::string("nvml"), backend->name());
    std::string note;
    auto raw = backend->Enumerate(&note);
    CPPUNIT_ASSERT_MESSAGE(raw.message(), raw.ok());
    CPPUNIT_ASSERT_EQUAL(std::string(), note);
    CPPUNIT_ASSERT_EQUAL(size_t(2), raw->size());
    const RawDevice& a = (*raw)[0];
    CPPUNIT_ASSERT_EQUAL(std::string("NVIDIA H100 80GB HBM3"), a.name);
    CPPUNIT_ASSERT_EQUAL(0, a.vendor_index);
    CPPUNIT_ASSERT_EQUAL(0, a.device_number);
    CPPUNIT_ASSERT_EQUAL(uint64_t(85520809984ull), a.memory_bytes);
    CPPUNIT_ASSERT_EQUAL(std::string("GPU-11111111"), a.uuid);
    CPPUNIT_ASSERT_EQUAL(std::string("0000:1b:00.0"), a.pci_bus_id);  // NVML's "00000000:1B:00.0"
    CPPUNIT_ASSERT_EQUAL(3, (*raw)[1].device_number);
    CPPUNIT_ASSERT_EQUAL(std::string("GPU-stub-1"), (*raw)[1].uuid);
    CPPUNIT_ASSERT_EQUAL(std::string("0000:c1:00.0"), (*raw)[1].pci_bus_id);
    CPPUNIT_ASSERT_EQUAL(0, stub.InitDepth());  // nvmlShutdown was called

    env_.cpus["0000:1b:00.0"] = "0-7";
    std::vector<std::string> notes;
    std::vector<Device> devs = Resolve("nvml", *raw, catalog_, env_, &notes);
    CPPUNIT_ASSERT(notes.empty());
    CPPUNIT_ASSERT_EQUAL(size_t(2), devs.size());
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia-h100"), devs[0].model_id);
    CPPUNIT_ASSERT_EQUAL(std::string("nvml"), devs[0].source);
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), devs[0].gres_type);
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/nvidia0"), devs[0].files.at(0));
    CPPUNIT_ASSERT_EQUAL(std::string("CUDA_VISIBLE_DEVICES"), devs[0].visible_devices_env);
    CPPUNIT_ASSERT_EQUAL(uint64_t(85520809984ull), devs[0].memory_bytes);  // the driver's figure
    CPPUNIT_ASSERT_EQUAL(132u, devs[0].compute_units);
    CPPUNIT_ASSERT_EQUAL(std::string("0-7"), devs[0].cpus);
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia-a100-80g"), devs[1].model_id);
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/nvidia3"), devs[1].files.at(0));
    CPPUNIT_ASSERT_EQUAL(std::string(""), devs[1].cpus);
  }

  void testNvmlUnsupportedOptionalFactsLeftUnknown() {
    setenv("VGPU_STUB_NVML_DEVICES", "NVIDIA H200,1,150000000000,0000:2a:00.0", 1);
    setenv("VGPU_STUB_NVML_UNSUPPORTED", "nvmlDeviceGetUUID,nvmlDeviceGetMemoryInfo", 1);
    auto raw = MakeNvmlBackend(env_, StubDir() + "/libnvidia-ml.so.1")->Enumerate(nullptr);
    CPPUNIT_ASSERT_MESSAGE(raw.message(), raw.ok());
    CPPUNIT_ASSERT_EQUAL(std::string(), raw->at(0).uuid);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), raw->at(0).memory_bytes);
    std::vector<Device> devs = Resolve("nvml", *raw, catalog_, env_, nullptr);
    CPPUNIT_ASSERT_EQUAL(uint64_t(150323855360ull), devs.at(0).memory_bytes);  // the catalog's
  }

  void testNvmlFailingCallNamesFunction() {
    setenv("VGPU_STUB_NVML_DEVICES", "NVIDIA H100,0,1,0000:01:00.0;NVIDIA H100,1,1,0000:02:00.0", 1);
    StubHold stub("libnvidia-ml.so.1", "vgpu_stub_nvml_init_depth");
    for (const char* fn : {"nvmlDeviceGetName", "nvmlInit_v2", "nvmlDeviceGetPciInfo_v3"}) {
      setenv("VGPU_STUB_NVML_FAIL", fn, 1);
      std::string note;
      auto raw = MakeNvmlBackend(env_, StubDir() + "/libnvidia-ml.so.1")->Enumerate(&note);
      CPPUNIT_ASSERT_MESSAGE(fn, !raw.ok());
      CPPUNIT_ASSERT_MESSAGE(raw.message(), Contains(raw.message(), std::string(fn) + "("));
      CPPUNIT_ASSERT_MESSAGE(raw.message(), Contains(raw.message(), "999 (Unknown Error)"));
      CPPUNIT_ASSERT_EQUAL(0, stub.InitDepth());  // shut down on the error path too
    }
  }

  void testDcmiEnumeratesAndResolves() {
    // A 910B3 (HBM) on card 1, and a 310P card with two chips (DDR memory);
    // listed out of logic-id order.
    setenv("VGPU_STUB_DCMI_DEVICES",
           "Ascend,910B3,1,0,0,4,65536,0,0000:c1:00.0;"
           "Ascend,310P3,2,0,2,2,0,21527,0000:81:00.0;"
           "Ascend,310P3,2,1,1,1,0,21527,0000:82:00.0", 1);
    std::string note;
    auto raw = MakeDcmiBackend(env_, StubDir() + "/libdcmi.so")->Enumerate(&note);
    CPPUNIT_ASSERT_MESSAGE(raw.message(), raw.ok());
    CPPUNIT_ASSERT_EQUAL(std::string(), note);
    CPPUNIT_ASSERT_EQUAL(size_t(3), raw->size());
    CPPUNIT_ASSERT_EQUAL(std::string("Ascend910B3"), raw->at(0).name);
    CPPUNIT_ASSERT_EQUAL(0, raw->at(0).vendor_index);
    CPPUNIT_ASSERT_EQUAL(4, raw->at(0).device_number);  // physical id
    CPPUNIT_ASSERT_EQUAL(uint64_t(65536) << 20, raw->at(0).memory_bytes);
    CPPUNIT_ASSERT_EQUAL(std::string("0000:c1:00.0"), raw->at(0).pci_bus_id);
    CPPUNIT_ASSERT_EQUAL(std::string("Ascend310P3"), raw->at(1).name);
    CPPUNIT_ASSERT_EQUAL(1, raw->at(1).vendor_index);
    CPPUNIT_ASSERT_EQUAL(std::string("0000:82:00.0"), raw->at(1).pci_bus_id);
    CPPUNIT_ASSERT_EQUAL(uint64_t(21527) << 20, raw->at(1).memory_bytes);  // DDR fallback

    std::vector<std::string> notes;
    std::vector<Device> devs = Resolve("dcmi", *raw, catalog_, env_, &notes);
    CPPUNIT_ASSERT(notes.empty());
    CPPUNIT_ASSERT_EQUAL(size_t(3), devs.size());
    CPPUNIT_ASSERT_EQUAL(std::string("ascend-910b3"), devs[0].model_id);
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/davinci4"), devs[0].files.at(0));
    CPPUNIT_ASSERT_EQUAL(std::string("ascend"), devs[0].gres_type);
    CPPUNIT_ASSERT_EQUAL(std::string("ASCEND_RT_VISIBLE_DEVICES"), devs[0].visible_devices_env);
    CPPUNIT_ASSERT_EQUAL(std::string("ascend-310p"), devs[2].model_id);
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/davinci2"), devs[2].files.at(0));
    CPPUNIT_ASSERT_EQUAL(8u, devs[2].compute_units);
  }

  void testDcmiFailingCallNamesFunction() {
    setenv("VGPU_STUB_DCMI_DEVICES", "Ascend,310P3,1,0,0,0,0,21527,0000:81:00.0", 1);
    setenv("VGPU_STUB_DCMI_FAIL", "dcmi_get_device_chip_info", 1);
    auto raw = MakeDcmiBackend(env_, StubDir() + "/libdcmi.so")->Enumerate(nullptr);
    CPPUNIT_ASSERT(!raw.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("dcmi_get_device_chip_info(card 1, device 0) failed: DCMI error -8005"),
                         raw.message());
    // The DDR fallback's own failure is reported, not swallowed.
    setenv("VGPU_STUB_DCMI_FAIL", "dcmi_get_device_memory_info_v3", 1);
    raw = MakeDcmiBackend(env_, StubDir() + "/libdcmi.so")->Enumerate(nullptr);
    CPPUNIT_ASSERT(!raw.ok());
    CPPUNIT_ASSERT(Contains(raw.message(), "dcmi_get_device_memory_info_v3(card 1, device 0)"));
  }

  void testRocmSmiEnumeratesAndResolves() {
    setenv("VGPU_STUB_RSMI_DEVICES",
           "K100_AI,128,68719476736,0000:3d:00.0,a1b2c3d4e5f60718;Z100L,129,34359738368,0001:9f:00.1,", 1);
    StubHold stub("librocm_smi64.so.1", "vgpu_stub_rsmi_init_depth");
    auto raw = MakeRocmSmiBackend(env_, StubDir() + "/librocm_smi64.so.1")->Enumerate(nullptr);
    CPPUNIT_ASSERT_MESSAGE(raw.message(), raw.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(2), raw->size());
    CPPUNIT_ASSERT_EQUAL(std::string("K100_AI"), raw->at(0).name);
    CPPUNIT_ASSERT_EQUAL(128, raw->at(0).device_number);
    CPPUNIT_ASSERT_EQUAL(uint64_t(68719476736ull), raw->at(0).memory_bytes);
    CPPUNIT_ASSERT_EQUAL(std::string("0000:3d:00.0"), raw->at(0).pci_bus_id);
    CPPUNIT_ASSERT_EQUAL(std::string("0xa1b2c3d4e5f60718"), raw->at(0).uuid);
    CPPUNIT_ASSERT_EQUAL(std::string("0001:9f:00.1"), raw->at(1).pci_bus_id);
    CPPUNIT_ASSERT_EQUAL(std::string(), raw->at(1).uuid);  // not supported: unknown
    CPPUNIT_ASSERT_EQUAL(0, stub.InitDepth());

    std::vector<Device> devs = Resolve("rocm-smi", *raw, catalog_, env_, nullptr);
    CPPUNIT_ASSERT_EQUAL(size_t(2), devs.size());
    CPPUNIT_ASSERT_EQUAL(std::string("hygon-k100"), devs[0].model_id);
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/dri/renderD128"), devs[0].files.at(0));
    CPPUNIT_ASSERT_EQUAL(std::string("dcu"), devs[0].gres_type);
    CPPUNIT_ASSERT_EQUAL(std::string("HIP_VISIBLE_DEVICES"), devs[0].visible_devices_env);
    CPPUNIT_ASSERT_EQUAL(std::string("hygon-z100"), devs[1].model_id);
    CPPUNIT_ASSERT_EQUAL(1, devs[1].vendor_index);
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/dri/renderD129"), devs[1].files.at(0));
  }

  void testRocmSmiFailingCallNamesFunction() {
    setenv("VGPU_STUB_RSMI_DEVICES", "K100,128,1,0000:3d:00.0,1", 1);
    setenv("VGPU_STUB_RSMI_FAIL", "rsmi_dev_pci_id_get", 1);
    StubHold stub("librocm_smi64.so.1", "vgpu_stub_rsmi_init_depth");
    auto raw = MakeRocmSmiBackend(env_, StubDir() + "/librocm_smi64.so.1")->Enumerate(nullptr);
    CPPUNIT_ASSERT(!raw.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("rsmi_dev_pci_id_get(0) failed: RSMI status 6 (RSMI_STATUS_INTERNAL_EXCEPTION)"),
                         raw.message());
    CPPUNIT_ASSERT_EQUAL(0, stub.InitDepth());
  }

  void testMissingLibrariesAreNotesNotErrors() {
    struct Case { std::unique_ptr<DiscoveryBackend> backend; const char* expect; } cases[] = {
        {MakeNvmlBackend(env_, "/nonexistent/libnvidia-ml.so.1"), "no NVIDIA devices discovered"},
        {MakeDcmiBackend(env_, "/nonexistent/libdcmi.so"), "no Ascend devices discovered"},
        {MakeRocmSmiBackend(env_, "/nonexistent/librocm_smi64.so.1"), "no DCU/ROCm devices discovered"},
    };
    for (Case& c : cases) {
      std::string note;
      auto raw = c.backend->Enumerate(&note);
      CPPUNIT_ASSERT_MESSAGE(raw.message(), raw.ok());
      CPPUNIT_ASSERT(raw->empty());
      CPPUNIT_ASSERT_MESSAGE(note, Contains(note, " not found: ") && Contains(note, c.expect));
      CPPUNIT_ASSERT_MESSAGE(note, Contains(note, "/nonexistent/"));
    }
  }

  void testUnknownModelIsLeftOutWithNote() {
    RawDevice r;
    r.name = "NVIDIA GeForce RTX 4090";
    r.vendor_index = 0;
    r.device_number = 0;
    r.pci_bus_id = "0000:01:00.0";
    std::vector<std::string> notes;
    std::vector<Device> devs = Resolve("nvml", {r}, catalog_, env_, &notes);
    CPPUNIT_ASSERT(devs.empty());
    CPPUNIT_ASSERT_EQUAL(size_t(1), notes.size());
    CPPUNIT_ASSERT_EQUAL(std::string("device NVIDIA GeForce RTX 4090 (PCI 0000:01:00.0) reported by nvml is not in "
                                     "the chip catalog: add a file under chips.d/ whose \"names\" contains "
                                     "\"NVIDIA GeForce RTX 4090\""),
                         notes[0]);
  }

  void testInventoryHappyPath() {
    std::string path = Write("inv.json",
                             "{\"devices\": ["
                             " {\"model\": \"ascend-910b\", \"index\": 0, \"file\": \"/lab/dev/n1/davinci0\","
                             "  \"uuid\": \"u0\", \"pci_bus_id\": \"0000:C1:00.0\", \"cpus\": \"0-1\"},"
                             " {\"name\": \"Ascend910B3\", \"index\": 1, \"memory_bytes\": 1234,"
                             "  \"pci_bus_id\": \"0000:c2:00.0\"}]}");
    env_.cpus["0000:c2:00.0"] = "2-3";
    auto raw = MakeInventoryBackend(env_, path)->Enumerate(nullptr);
    CPPUNIT_ASSERT_MESSAGE(raw.message(), raw.ok());
    std::vector<std::string> notes;
    std::vector<Device> devs = Resolve("inventory", *raw, catalog_, env_, &notes);
    CPPUNIT_ASSERT(notes.empty());
    CPPUNIT_ASSERT_EQUAL(size_t(2), devs.size());
    CPPUNIT_ASSERT_EQUAL(std::string("Ascend910B"), devs[0].name);  // the model's first name
    CPPUNIT_ASSERT_EQUAL(std::string("/lab/dev/n1/davinci0"), devs[0].files.at(0));
    CPPUNIT_ASSERT_EQUAL(std::string("0000:c1:00.0"), devs[0].pci_bus_id);
    CPPUNIT_ASSERT_EQUAL(std::string("0-1"), devs[0].cpus);  // given, not looked up
    CPPUNIT_ASSERT_EQUAL(uint64_t(64) << 30, devs[0].memory_bytes);
    CPPUNIT_ASSERT_EQUAL(std::string("u0"), devs[0].uuid);
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/davinci1"), devs[1].files.at(0));  // device_file, %d = index
    CPPUNIT_ASSERT_EQUAL(uint64_t(1234), devs[1].memory_bytes);
    CPPUNIT_ASSERT_EQUAL(std::string("2-3"), devs[1].cpus);
    CPPUNIT_ASSERT_EQUAL(std::string("ascend"), devs[1].gres_type);
  }

  void testInventoryMissingAndCorruptFiles() {
    std::string missing = tmp_ + "/nope.json";
    auto raw = MakeInventoryBackend(env_, missing)->Enumerate(nullptr);
    CPPUNIT_ASSERT(!raw.ok());
    CPPUNIT_ASSERT_MESSAGE(raw.message(), Contains(raw.message(), missing));
    CPPUNIT_ASSERT_MESSAGE(raw.message(), Contains(raw.message(), "No such file"));
    std::string corrupt = Write("bad.json", "{\"devices\": [");
    raw = MakeInventoryBackend(env_, corrupt)->Enumerate(nullptr);
    CPPUNIT_ASSERT(!raw.ok());
    CPPUNIT_ASSERT_MESSAGE(raw.message(), Contains(raw.message(), "inventory " + corrupt + ": invalid JSON"));
    // One log line: jsoncpp's multi-line report is folded.
    CPPUNIT_ASSERT(raw.message().find('\n') == std::string::npos);
    std::string shape = Write("shape.json", "{\"device\": []}");
    raw = MakeInventoryBackend(env_, shape)->Enumerate(nullptr);
    CPPUNIT_ASSERT(!raw.ok());
    CPPUNIT_ASSERT(Contains(raw.message(), "\"devices\""));
  }

  void testInventoryBadEntries() {
    struct { const char* json; const char* expect; } cases[] = {
        {"{\"devices\": [{\"model\": \"ascend-910b\", \"flie\": \"/x\"}]}", "devices[0]: unknown key \"flie\""},
        {"{\"devices\": [{\"index\": 0}]}", "devices[0] needs \"model\" or \"name\""},
        {"{\"devices\": [{\"name\": \"K100\", \"index\": -1}]}", "key \"index\""},
        {"{\"devices\": [{\"name\": \"K100\"}, {\"name\": \"K100\", \"index\": 0}]}", "index 0 is already used"},
        {"{\"devices\": [{\"name\": \"K100\", \"pci_bus_id\": \"slot 3\"}]}", "key \"pci_bus_id\""},
        {"{\"devices\": [{\"name\": \"K100\", \"file\": \"/d/r\"}, {\"name\": \"Z100\", \"file\": \"/d/r\"}]}",
         "file /d/r is already used"},
    };
    for (const auto& c : cases) {
      auto raw = MakeInventoryBackend(env_, Write("e.json", c.json))->Enumerate(nullptr);
      CPPUNIT_ASSERT_MESSAGE(c.json, !raw.ok());
      CPPUNIT_ASSERT_MESSAGE(raw.message(), Contains(raw.message(), c.expect));
    }
  }

  void testInventoryIndexIsPerModel() {
    // A node with H100s and K100s: each vendor numbers its devices from 0.
    auto raw = MakeInventoryBackend(
                   env_, Write("mixed.json",
                               "{\"devices\": [{\"model\": \"nvidia-h100\", \"index\": 0},"
                               " {\"model\": \"hygon-k100\", \"index\": 0}]}"))
                   ->Enumerate(nullptr);
    CPPUNIT_ASSERT_MESSAGE(raw.message(), raw.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(2), raw->size());
  }

  void testInventoryUnknownModelIsNote() {
    std::string path = Write("inv.json",
                             "{\"devices\": [{\"model\": \"acme-x9\", \"file\": \"/lab/x0\"},"
                             " {\"name\": \"Mystery\", \"file\": \"/lab/x1\"}, {\"name\": \"Z100\"}]}");
    auto raw = MakeInventoryBackend(env_, path)->Enumerate(nullptr);
    CPPUNIT_ASSERT_MESSAGE(raw.message(), raw.ok());
    std::vector<std::string> notes;
    std::vector<Device> devs = Resolve("inventory", *raw, catalog_, env_, &notes);
    CPPUNIT_ASSERT_EQUAL(size_t(1), devs.size());
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/dri/renderD2"), devs[0].files.at(0));
    CPPUNIT_ASSERT_EQUAL(size_t(2), notes.size());
    CPPUNIT_ASSERT_MESSAGE(notes[0], Contains(notes[0], "\"acme-x9\"") && Contains(notes[0], "chips.d/"));
    CPPUNIT_ASSERT_MESSAGE(notes[1], Contains(notes[1], "device Mystery (/lab/x1) reported by inventory is not in "
                                                        "the chip catalog"));
  }

  void testDiscoverWithInventoryUsesOnlyIt() {
    setenv("VGPU_STUB_NVML_DEVICES", "NVIDIA H100,0,1,0000:01:00.0", 1);
    env_.redirect["libnvidia-ml.so.1"] = StubDir() + "/libnvidia-ml.so.1";
    std::string path = Write("inv.json", "{\"devices\": [{\"name\": \"K100\", \"file\": \"/lab/r128\"}]}");
    DiscoveryReport report = DiscoverDevices(catalog_, env_, path);
    CPPUNIT_ASSERT(report.errors.empty());
    CPPUNIT_ASSERT_EQUAL(size_t(1), report.devices.size());
    CPPUNIT_ASSERT_EQUAL(std::string("inventory"), report.devices[0].source);
    CPPUNIT_ASSERT_EQUAL(std::string("/lab/r128"), report.devices[0].files.at(0));
    CPPUNIT_ASSERT(env_.opened.empty());  // no vendor library was even opened
  }

  void testDiscoverRunsEveryBackendDespiteErrors() {
    setenv("VGPU_STUB_NVML_DEVICES", "NVIDIA H100,0,1,0000:01:00.0;NVIDIA H100,1,1,0000:02:00.0", 1);
    setenv("VGPU_STUB_RSMI_DEVICES", "K100,128,1,0000:3d:00.0,1", 1);
    setenv("VGPU_STUB_RSMI_FAIL", "rsmi_init", 1);
    env_.redirect["libnvidia-ml.so.1"] = StubDir() + "/libnvidia-ml.so.1";
    env_.redirect["libdcmi.so"] = tmp_ + "/absent/libdcmi.so";
    env_.redirect["librocm_smi64.so.1"] = StubDir() + "/librocm_smi64.so.1";
    DiscoveryReport report = DiscoverDevices(catalog_, env_, "");
    CPPUNIT_ASSERT_EQUAL(size_t(3), env_.opened.size());
    CPPUNIT_ASSERT_EQUAL(size_t(2), report.devices.size());
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/nvidia1"), report.devices[1].files.at(0));
    CPPUNIT_ASSERT_EQUAL(size_t(1), report.errors.size());
    CPPUNIT_ASSERT_MESSAGE(report.errors[0], Contains(report.errors[0], "rocm-smi: rsmi_init(0) failed"));
    CPPUNIT_ASSERT_EQUAL(size_t(1), report.notes.size());
    CPPUNIT_ASSERT_MESSAGE(report.notes[0], Contains(report.notes[0], "libdcmi.so not found"));
  }

 private:
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = tmp_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  TestEnv env_;
  ChipCatalog catalog_;
  std::unique_ptr<TempDir> tmp_dir_;
  std::string tmp_;  // tmp_dir_'s path
};

CPPUNIT_TEST_SUITE_REGISTRATION(DiscoveryTest);

}  // namespace vgpu
