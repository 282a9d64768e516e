// Tests of hardware slices: the "slices" file, ProfileForShares against the
// shipped catalog ($VGPU_TEST_CATALOG_DIR), and the MIG and vNPU drivers
// against the stub libraries in $VGPU_TEST_STUB_DIR, whose state files
// (tests/stubs/nvml_stub_mig.c, dcmi_stub.c) the tests read to see what the
// "hardware" holds.
#include <cppunit/extensions/HelperMacros.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "devices/chip_catalog.h"
#include "jobs/hardware_slice.h"
#include "temp_dir.h"
#include "test_paths.h"

namespace vgpu {
namespace {

namespace fs = std::filesystem;

const char* const kStubVars[] = {
    "VGPU_STUB_NVML_DEVICES", "VGPU_STUB_NVML_FAIL",      "VGPU_STUB_NVML_UNSUPPORTED", "VGPU_STUB_NVML_MIG_STATE",
    "VGPU_STUB_NVML_MIG_MODE", "VGPU_STUB_DCMI_DEVICES",  "VGPU_STUB_DCMI_FAIL",        "VGPU_STUB_DCMI_UNSUPPORTED",
    "VGPU_STUB_DCMI_VNPU_STATE", "VGPU_STUB_NVML_MIG_CALL_MS",
};

// Two A100s (indexes 0 and 1) and two 910B NPUs (physical ids 0 and 5; the
// second on card 2).
const char kGpus[] =
    "NVIDIA A100-SXM4-80GB,0,85899345920,0000:1b:00.0,GPU-aaaa;"
    "NVIDIA A100-SXM4-80GB,1,85899345920,0000:1c:00.0,GPU-bbbb";
const char kNpus[] = "Ascend,910B3,1,0,0,0,65536,0,0000:c1:00.0;Ascend,910B3,2,0,1,5,65536,0,0000:c2:00.0";

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Asserts that message `text` says `part`, showing both when it does not.
#define ASSERT_HAS(text, part) CPPUNIT_ASSERT_MESSAGE((text) + "\n  lacks: " + (part), Contains((text), (part)))

// The non-empty lines of `path` (none when it does not exist).
std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// The lines of `path`, each ending in '\n' ("" when it does not exist).
std::string Joined(const std::string& path) {
  std::string out;
  for (const std::string& line : Lines(path)) out += line + "\n";
  return out;
}

HardwareSlice Slice(const std::string& vendor, const std::string& parent, const std::string& device,
                    uint32_t instance) {
  HardwareSlice s;
  s.vendor = vendor;
  s.parent = parent;
  s.profile = vendor == "nvidia" ? "1g.10gb" : "vir03_1c_8g";
  s.device = device;
  s.instance = instance;
  return s;
}

}  // namespace

class HardwareSliceTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(HardwareSliceTest);
  CPPUNIT_TEST(testSlicesRoundTrip);
  CPPUNIT_TEST(testSlicesStrictErrors);
  CPPUNIT_TEST(testProfileForShares);
  CPPUNIT_TEST(testMigCreateAndDestroyAcrossProcesses);
  CPPUNIT_TEST(testMigPartialRecordDestroysWhatWasMade);
  CPPUNIT_TEST(testMigProfilesMapToNvmlProfiles);
  CPPUNIT_TEST(testMigCapacityExhausted);
  CPPUNIT_TEST(testMigAtThePlacementGiven);
  CPPUNIT_TEST(testMigInPlaceListsWhatDestroyRemoves);
  CPPUNIT_TEST(testMigSecondClientAtOnceIsRefused);
  CPPUNIT_TEST(testMigModeOffOrAbsent);
  CPPUNIT_TEST(testMigComputeInstanceFailureUndoesGpuInstance);
  CPPUNIT_TEST(testMigDestroyLeavesReusedIdsAlone);
  CPPUNIT_TEST(testMigBadInputsAndLibrary);
  CPPUNIT_TEST(testVnpuCreateAndDestroy);
  CPPUNIT_TEST(testVnpuCapacityExhausted);
  CPPUNIT_TEST(testVnpu310PHoldsSeven);
  CPPUNIT_TEST(testVnpuFailures);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    for (const char* var : kStubVars) unsetenv(var);
    catalog_ = ShippedCatalog();
    tmp_dir_ = std::make_unique<TempDir>("vgpu-slice");
    tmp_ = tmp_dir_->path();
    mig_state_ = tmp_ + "/mig";
    vnpu_state_ = tmp_ + "/vnpu";
  }
  void tearDown() override {
    for (const char* var : kStubVars) unsetenv(var);
    tmp_dir_.reset();
  }

  void testSlicesRoundTrip() {
    HardwareSlice a = Slice("nvidia", "GPU-8f2c", "MIG-5f1e", 7);
    a.memory_bytes = 10334765056ull;
    HardwareSlice b = Slice("ascend", "3", "100", 100);
    b.profile = "odd name#%=-";  // bytes the format must encode
    b.sub_instance = 4294967295u;
    HardwareSlice c = Slice("ascend", "-", "101", 101);  // a value that is just "-"
    c.job_device = 2;
    const std::string text = SerializeSlices({a, b, c});
    CPPUNIT_ASSERT(Contains(text, "vgpu-slices 1\n"));
    CPPUNIT_ASSERT(Contains(text, "slice vendor=nvidia parent=GPU-8f2c profile=1g.10gb device=MIG-5f1e instance=7 "
                                  "sub_instance=0 memory=10334765056 job_device=0\n"));
    CPPUNIT_ASSERT(Contains(text, "profile=odd%20name%23%25%3D-"));
    CPPUNIT_ASSERT(Contains(text, "parent=%2D"));
    auto back = ParseSlices(text, "slices");
    CPPUNIT_ASSERT_MESSAGE(back.message(), back.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(3), back->size());
    for (size_t i = 0; i < 3; ++i) {
      const HardwareSlice& want = i == 0 ? a : i == 1 ? b : c;
      const HardwareSlice& got = (*back)[i];
      CPPUNIT_ASSERT_EQUAL(want.vendor, got.vendor);
      CPPUNIT_ASSERT_EQUAL(want.parent, got.parent);
      CPPUNIT_ASSERT_EQUAL(want.profile, got.profile);
      CPPUNIT_ASSERT_EQUAL(want.device, got.device);
      CPPUNIT_ASSERT_EQUAL(want.instance, got.instance);
      CPPUNIT_ASSERT_EQUAL(want.sub_instance, got.sub_instance);
      CPPUNIT_ASSERT_EQUAL(want.memory_bytes, got.memory_bytes);
      CPPUNIT_ASSERT_EQUAL(want.job_device, got.job_device);
    }
    CPPUNIT_ASSERT_EQUAL(text, SerializeSlices(*back));
    // No slices: the header alone, which parses to nothing.
    auto none = ParseSlices(SerializeSlices({}), "slices");
    CPPUNIT_ASSERT_MESSAGE(none.message(), none.ok());
    CPPUNIT_ASSERT(none->empty());
  }

  void testSlicesStrictErrors() {
    const std::string head = "vgpu-slices 1\n";
    const std::string good = "slice vendor=nvidia parent=GPU-a profile=1g.10gb device=MIG-a instance=1 "
                             "sub_instance=0 memory=0 job_device=0";
    struct Case {
      std::string text;
      const char* says;
    } cases[] = {
        {"", "src: empty"},
        {"# only a comment\n", "src: empty"},
        {good + "\n", "src:1: not a vgpu slices file"},
        {"vgpu-slices 2\n", "src:1: version \"2\" is not 1"},
        {"vgpu-slices 1 extra\n", "src:1: version"},
        {head + head, "src:2: \"vgpu-slices\" twice"},
        {head + "gpu 1\n", "src:2: unknown record \"gpu\""},
        {head + good + " color=red\n", "src:2: unknown field \"color\""},
        {head + good + " memory=1\n", "src:2: field \"memory\" given twice"},
        {head + "slice vendor=nvidia parent=GPU-a profile=1g.10gb device=MIG-a instance=1 sub_instance=0\n",
         "src:2: a slice needs memory="},
        {head + "slice vendor=nvidia\n", "parent=, profile=, device=, instance=, sub_instance=, memory="},
        {head + "slice vendor=amd parent=GPU-a profile=p device=d instance=1 sub_instance=0 memory=0\n",
         "src:2: vendor=amd is not a slicing vendor"},
        {head + "slice vendor=nvidia parent=GPU-a profile=p device=d instance=x sub_instance=0 memory=0\n",
         "src:2: instance=x is not an id"},
        {head + "slice vendor=nvidia parent=GPU-a profile=p device=d instance=4294967296 sub_instance=0 memory=0\n",
         "instance=4294967296 is not an id"},
        {head + "slice vendor=nvidia parent=GPU-a profile=p device=d instance=1 sub_instance=-1 memory=0\n",
         "sub_instance=-1 is not an id"},
        {head + "slice vendor=nvidia parent=GPU-a profile=p device=d instance=1 sub_instance=0 memory=1e9\n",
         "memory=1e9 is not a byte count"},
        {head + "slice parent\n", "\"parent\" is not KEY=VALUE"},
        {head + "slice vendor=nvidia parent=GPU-a profile=%zz device=d instance=1 sub_instance=0 memory=0\n",
         "profile=%zz is badly encoded"},
        {head + "slice vendor=nvidia parent=GPU-a profile=p device=- instance=1 sub_instance=0 memory=0 job_device=0\n",
         "must not be empty"},
        {head + good.substr(0, good.find(" job_device")) + " job_device=x\n", "job_device=x is not a device index"},
        {head + "# c\n\n" + good + "\n" + good + "  # again\n", "src:5: slice nvidia GPU-a instance 1/0 listed twice"},
    };
    for (const Case& c : cases) {
      auto r = ParseSlices(c.text, "src");
      CPPUNIT_ASSERT_MESSAGE(c.text, !r.ok());
      ASSERT_HAS(r.message(), std::string(c.says));
    }
    // The same slice on another GPU, or another compute instance, is fine.
    auto ok = ParseSlices(head + good + "\n" + good.substr(0, good.find("sub_instance=0")) +
                              "sub_instance=1 memory=0 job_device=0\n",
                          "src");
    CPPUNIT_ASSERT_MESSAGE(ok.message(), ok.ok() && ok->size() == 2);
  }

  void testProfileForShares() {
    const ChipModel* a100 = catalog_.FindById("nvidia-a100-80g");
    const ChipModel* h100 = catalog_.FindById("nvidia-h100");
    const ChipModel* npu = catalog_.FindById("ascend-910b");
    const ChipModel* dcu = catalog_.FindById("hygon-k100");
    CPPUNIT_ASSERT(a100 != nullptr && h100 != nullptr && npu != nullptr && dcu != nullptr);
    auto name = [](const SliceProfile* p) { return p != nullptr ? p->name : std::string("(none)"); };
    CPPUNIT_ASSERT_EQUAL(std::string("1g.10gb"), name(ProfileForShares(*a100, 10, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("1g.10gb"), name(ProfileForShares(*a100, 14, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("2g.20gb"), name(ProfileForShares(*a100, 15, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("3g.40gb"), name(ProfileForShares(*a100, 42, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("7g.80gb"), name(ProfileForShares(*a100, 100, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("4g.40gb"), name(ProfileForShares(*a100, 101, 200)));  // 50.5%
    CPPUNIT_ASSERT_EQUAL(std::string("3g.40gb"), name(ProfileForShares(*a100, 84, 200)));   // exactly 42%
    CPPUNIT_ASSERT_EQUAL(std::string("4g.40gb"), name(ProfileForShares(*a100, 85, 200)));
    CPPUNIT_ASSERT_EQUAL(std::string("(none)"), name(ProfileForShares(*a100, 101, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("(none)"), name(ProfileForShares(*a100, 0, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("(none)"), name(ProfileForShares(*a100, 10, 0)));
    // Equal shares: the smaller memory (1g.10gb before 1g.20gb).
    CPPUNIT_ASSERT_EQUAL(std::string("1g.10gb"), name(ProfileForShares(*h100, 1, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("vir03_1c_8g"), name(ProfileForShares(*npu, 12, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("vir06_1c_16g"), name(ProfileForShares(*npu, 13, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("(none)"), name(ProfileForShares(*npu, 51, 100)));
    CPPUNIT_ASSERT_EQUAL(std::string("(none)"), name(ProfileForShares(*dcu, 1, 100)));  // no profiles
  }

  void testMigCreateAndDestroyAcrossProcesses() {
    UseMig();
    std::string file;
    {  // "the prolog"
      auto driver = Mig();
      auto s = driver->Create("GPU-bbbb", Profile("nvidia-a100-80g", "1g.10gb"));
      CPPUNIT_ASSERT_MESSAGE(s.message(), s.ok());
      CPPUNIT_ASSERT_EQUAL(std::string("nvidia"), s->vendor);
      CPPUNIT_ASSERT_EQUAL(std::string("GPU-bbbb"), s->parent);
      CPPUNIT_ASSERT_EQUAL(std::string("1g.10gb"), s->profile);
      CPPUNIT_ASSERT_EQUAL(std::string("MIG-"), s->device.substr(0, 4));
      CPPUNIT_ASSERT_EQUAL(1u, s->instance);
      CPPUNIT_ASSERT_EQUAL(0u, s->sub_instance);
      CPPUNIT_ASSERT_EQUAL(uint64_t(9856) << 20, s->memory_bytes);
      CPPUNIT_ASSERT_EQUAL("GPU-bbbb gi=1 ci=0 profile=0 uuid=" + s->device + " start=0\n", Joined(mig_state_));
      file = SerializeSlices({*s});
    }
    // "The epilog": another driver, the slice known only from the file.
    auto driver = Mig();
    auto slices = ParseSlices(file, "slices");
    CPPUNIT_ASSERT_MESSAGE(slices.message(), slices.ok() && slices->size() == 1);
    Status st = driver->Destroy(slices->at(0));
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT(Lines(mig_state_).empty());
    st = driver->Destroy(slices->at(0));  // already gone
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    st = driver->Destroy(Slice("nvidia", "GPU-gone", "MIG-x", 1));  // the GPU is gone
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    st = driver->Destroy(Slice("ascend", "0", "100", 100));
    CPPUNIT_ASSERT(!st.ok() && Contains(st.message(), "\"ascend\""));
  }

  // A prolog killed inside Create, after the compute instance was made:
  // its record is the partial slice Create reported (no device, no compute
  // instance), and Destroy of that removes the compute and GPU instances.
  void testMigPartialRecordDestroysWhatWasMade() {
    UseMig();
    std::string file;
    {
      auto driver = Mig();
      int reports = 0;
      auto s = driver->Create("GPU-bbbb", Profile("nvidia-a100-80g", "1g.10gb"), [&](const HardwareSlice& p) {
        ++reports;
        file = SerializeSlices({p});
        return Status::Ok();
      });
      CPPUNIT_ASSERT_MESSAGE(s.message(), s.ok());
      CPPUNIT_ASSERT_EQUAL(1, reports);
      CPPUNIT_ASSERT_EQUAL(size_t(1), Lines(mig_state_).size());
    }
    auto partial = ParseSlices(file, "slices");
    CPPUNIT_ASSERT_MESSAGE(partial.message(), partial.ok() && partial->size() == 1);
    CPPUNIT_ASSERT_EQUAL(std::string(""), partial->at(0).device);
    CPPUNIT_ASSERT_EQUAL(1u, partial->at(0).instance);
    CPPUNIT_ASSERT_EQUAL(vgpu::kUnknownSubInstance, partial->at(0).sub_instance);
    Status st = Mig()->Destroy(partial->at(0));
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT(Lines(mig_state_).empty());
    // A failing record: Create undoes the GPU instance and says why.
    auto refused = Mig()->Create("GPU-bbbb", Profile("nvidia-a100-80g", "1g.10gb"),
                                 [](const HardwareSlice&) { return Status::Error("disk full"); });
    CPPUNIT_ASSERT(!refused.ok() && Contains(refused.message(), "disk full"));
    CPPUNIT_ASSERT(Lines(mig_state_).empty());
  }

  void testMigProfilesMapToNvmlProfiles() {
    UseMig();
    auto driver = Mig();
    auto three = driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "3g.40gb"));
    auto two = driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "2g.20gb"));
    auto twenty = driver->Create("GPU-bbbb", Profile("nvidia-h100", "1g.20gb"));  // 1_SLICE_REV2, not 1g.10gb
    CPPUNIT_ASSERT_MESSAGE(three.message(), three.ok());
    CPPUNIT_ASSERT_MESSAGE(two.message(), two.ok());
    CPPUNIT_ASSERT_MESSAGE(twenty.message(), twenty.ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t(40192) << 20, three->memory_bytes);
    CPPUNIT_ASSERT_EQUAL(2u, two->instance);
    CPPUNIT_ASSERT(three->device != two->device);
    CPPUNIT_ASSERT_EQUAL("GPU-aaaa gi=1 ci=0 profile=2 uuid=" + three->device + " start=0\n" +
                             "GPU-aaaa gi=2 ci=0 profile=1 uuid=" + two->device + " start=4\n" +
                             "GPU-bbbb gi=1 ci=0 profile=9 uuid=" + twenty->device + " start=0\n",
                         Joined(mig_state_));
    // A profile the GPU does not offer (an H200 size on this 80 GB part).
    auto big = driver->Create("GPU-bbbb", Profile("nvidia-h200", "3g.71gb"));
    CPPUNIT_ASSERT(!big.ok());
    ASSERT_HAS(big.message(), "no MIG profile of 3 slices and about 72704 MiB");
    ASSERT_HAS(big.message(), "3g/40192MiB");
    ASSERT_HAS(big.message(), "nvidia-smi mig -i 1 -lgip");
    for (const auto* s : {&*three, &*two, &*twenty}) {
      Status st = driver->Destroy(*s);
      CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    }
    CPPUNIT_ASSERT(Lines(mig_state_).empty());
  }

  void testMigCapacityExhausted() {
    UseMig();
    auto driver = Mig();
    const SliceProfile one = Profile("nvidia-a100-80g", "1g.10gb");
    for (int i = 0; i < 7; ++i) {
      auto s = driver->Create("GPU-aaaa", one);
      CPPUNIT_ASSERT_MESSAGE(s.message(), s.ok());
    }
    auto eighth = driver->Create("GPU-aaaa", one);
    CPPUNIT_ASSERT(!eighth.ok());
    const std::string& m = eighth.message();
    ASSERT_HAS(m, "MIG 1g.10gb on GPU GPU-aaaa: nvmlDeviceCreateGpuInstance failed");
    ASSERT_HAS(m, "NVML error 23 (Insufficient Resources)");
    ASSERT_HAS(m, "nvidia-smi mig -i 0 -lgi");
    CPPUNIT_ASSERT_EQUAL(size_t(7), Lines(mig_state_).size());
    auto other = driver->Create("GPU-bbbb", Profile("nvidia-a100-80g", "7g.80gb"));  // the other GPU is free
    CPPUNIT_ASSERT_MESSAGE(other.message(), other.ok());
    CPPUNIT_ASSERT(!driver->Create("GPU-bbbb", one).ok());
  }

  // Where slurmctld placed the job (slice_geometry.h): the driver's
  // placement at that slot, or an error naming the catalog's mistake.
  void testMigAtThePlacementGiven() {
    UseMig();
    auto driver = Mig();
    auto six = driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "1g.10gb"), 6u, SliceDriver::MadeSoFar());
    CPPUNIT_ASSERT_MESSAGE(six.message(), six.ok());
    auto four = driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "2g.20gb"), 4u, SliceDriver::MadeSoFar());
    CPPUNIT_ASSERT_MESSAGE(four.message(), four.ok());
    const std::vector<std::string> lines = Lines(mig_state_);
    CPPUNIT_ASSERT_EQUAL(size_t(2), lines.size());
    ASSERT_HAS(lines[0], " start=6");
    ASSERT_HAS(lines[1], " start=4");
    // Taken there: the driver's own refusal, naming the slot.
    auto again = driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "1g.10gb"), 6u, SliceDriver::MadeSoFar());
    CPPUNIT_ASSERT(!again.ok());
    ASSERT_HAS(again.message(), "nvmlDeviceCreateGpuInstanceWithPlacement failed");
    ASSERT_HAS(again.message(), "at slot 6");
    // No such placement (1g.10gb never starts at 7): the catalog is wrong.
    SliceProfile wrong = Profile("nvidia-a100-80g", "1g.10gb");
    auto seven = driver->Create("GPU-aaaa", wrong, 7u, SliceDriver::MadeSoFar());
    CPPUNIT_ASSERT(!seven.ok());
    ASSERT_HAS(seven.message(), "no placement of 1 slots at slot 7 (it offers start:size 0:1, 1:1");
    ASSERT_HAS(seven.message(), "nvidia-smi mig -lgipp");
    CPPUNIT_ASSERT_EQUAL(size_t(2), Lines(mig_state_).size());
  }

  // What is on a GPU, as partial slices Destroy removes (an orphan's way out).
  void testMigInPlaceListsWhatDestroyRemoves() {
    UseMig();
    auto driver = Mig();
    CPPUNIT_ASSERT(driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "1g.10gb")).ok());
    CPPUNIT_ASSERT(driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "2g.20gb")).ok());
    CPPUNIT_ASSERT(driver->Create("GPU-bbbb", Profile("nvidia-a100-80g", "1g.10gb")).ok());
    auto on = driver->InPlace("GPU-aaaa");
    CPPUNIT_ASSERT_MESSAGE(on.message(), on.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(2), on->size());
    CPPUNIT_ASSERT_EQUAL(1u, on->at(0).instance);
    CPPUNIT_ASSERT_EQUAL(2u, on->at(1).instance);
    for (const HardwareSlice& s : *on) CPPUNIT_ASSERT(driver->Destroy(s).ok());
    CPPUNIT_ASSERT_EQUAL(size_t(1), Lines(mig_state_).size());  // GPU-bbbb's
    CPPUNIT_ASSERT(driver->InPlace("GPU-aaaa")->empty());
    setenv("VGPU_STUB_NVML_MIG_MODE", "0", 1);
    CPPUNIT_ASSERT(driver->InPlace("GPU-bbbb")->empty());  // MIG off: none can exist
  }

  // The driver refuses a second client reconfiguring a GPU at the same
  // moment ("In use by another client"): what prologs without SliceLock met.
  void testMigSecondClientAtOnceIsRefused() {
    UseMig();
    setenv("VGPU_STUB_NVML_MIG_CALL_MS", "300", 1);
    Result<HardwareSlice> first = Status::Error(""), second = Status::Error("");
    std::thread a([&] { first = Mig()->Create("GPU-aaaa", Profile("nvidia-a100-80g", "1g.10gb")); });
    usleep(100 * 1000);
    second = Mig()->Create("GPU-aaaa", Profile("nvidia-a100-80g", "1g.10gb"));
    a.join();
    unsetenv("VGPU_STUB_NVML_MIG_CALL_MS");
    CPPUNIT_ASSERT_MESSAGE(first.message(), first.ok());
    CPPUNIT_ASSERT(!second.ok());
    ASSERT_HAS(second.message(), "NVML error 19");
    // The other GPU is not held up.
    auto other = Mig()->Create("GPU-bbbb", Profile("nvidia-a100-80g", "1g.10gb"));
    CPPUNIT_ASSERT_MESSAGE(other.message(), other.ok());
  }

  void testMigModeOffOrAbsent() {
    UseMig();
    setenv("VGPU_STUB_NVML_MIG_MODE", "0", 1);
    auto off = Mig()->Create("GPU-bbbb", Profile("nvidia-a100-80g", "1g.10gb"));
    CPPUNIT_ASSERT(!off.ok());
    ASSERT_HAS(off.message(), "MIG 1g.10gb on GPU GPU-bbbb: MIG mode is not enabled");
    ASSERT_HAS(off.message(), "nvidia-smi -i 1 -mig 1");
    CPPUNIT_ASSERT(!fs::exists(mig_state_));
    // With MIG off no instance can exist: destroying is success.
    CPPUNIT_ASSERT(Mig()->Destroy(Slice("nvidia", "GPU-bbbb", "MIG-x", 1)).ok());
    unsetenv("VGPU_STUB_NVML_MIG_STATE");  // a GPU without MIG
    auto none = Mig()->Create("GPU-aaaa", Profile("nvidia-a100-80g", "1g.10gb"));
    CPPUNIT_ASSERT(!none.ok());
    ASSERT_HAS(none.message(), "this GPU has no MIG");
  }

  void testMigComputeInstanceFailureUndoesGpuInstance() {
    UseMig();
    setenv("VGPU_STUB_NVML_FAIL", "nvmlGpuInstanceCreateComputeInstance", 1);
    auto driver = Mig();
    auto s = driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "2g.20gb"));
    CPPUNIT_ASSERT(!s.ok());
    ASSERT_HAS(s.message(), "MIG 2g.20gb on GPU GPU-aaaa");
    ASSERT_HAS(s.message(), "nvmlGpuInstanceCreateComputeInstance failed: NVML error 999");
    CPPUNIT_ASSERT(!Contains(s.message(), "undoing it failed"));
    CPPUNIT_ASSERT(fs::exists(mig_state_));       // the GPU instance was made...
    CPPUNIT_ASSERT(Lines(mig_state_).empty());    // ...and undone
    // When the undo fails too, the message says what is left and how to remove it.
    setenv("VGPU_STUB_NVML_FAIL", "nvmlGpuInstanceCreateComputeInstance,nvmlGpuInstanceDestroy", 1);
    s = driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "2g.20gb"));
    CPPUNIT_ASSERT(!s.ok());
    ASSERT_HAS(s.message(), "undoing it failed too (nvmlGpuInstanceDestroy failed");
    ASSERT_HAS(s.message(), "nvidia-smi mig -i 0 -lgi");
    CPPUNIT_ASSERT_EQUAL(std::string("GPU-aaaa gi=1 ci=- profile=1 uuid=- start=0\n"), Joined(mig_state_));
  }

  void testMigDestroyLeavesReusedIdsAlone() {
    UseMig();
    auto driver = Mig();
    const SliceProfile one = Profile("nvidia-a100-80g", "1g.10gb");
    auto old = driver->Create("GPU-aaaa", one);
    CPPUNIT_ASSERT_MESSAGE(old.message(), old.ok());
    CPPUNIT_ASSERT(driver->Destroy(*old).ok());
    auto now = driver->Create("GPU-aaaa", one);  // another job's slice, same ids
    CPPUNIT_ASSERT_MESSAGE(now.message(), now.ok());
    CPPUNIT_ASSERT_EQUAL(old->instance, now->instance);
    CPPUNIT_ASSERT(old->device != now->device);
    Status st = driver->Destroy(*old);  // an epilog run twice must not take it
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(1), Lines(mig_state_).size());
    CPPUNIT_ASSERT(driver->Destroy(*now).ok());
    CPPUNIT_ASSERT(Lines(mig_state_).empty());
  }

  void testMigBadInputsAndLibrary() {
    UseMig();
    auto driver = Mig();
    auto s = driver->Create("GPU-nope", Profile("nvidia-a100-80g", "1g.10gb"));
    CPPUNIT_ASSERT(!s.ok() && Contains(s.message(), "GPU GPU-nope: no such GPU on this node"));
    SliceProfile odd = Profile("nvidia-a100-80g", "1g.10gb");
    odd.name = "vir03_1c_8g";
    s = driver->Create("GPU-aaaa", odd);
    CPPUNIT_ASSERT(!s.ok() && Contains(s.message(), "not a MIG profile name"));
    // Destroy that NVML refuses: the message says how to do it by hand.
    auto made = driver->Create("GPU-aaaa", Profile("nvidia-a100-80g", "1g.10gb"));
    CPPUNIT_ASSERT_MESSAGE(made.message(), made.ok());
    setenv("VGPU_STUB_NVML_FAIL", "nvmlComputeInstanceDestroy", 1);
    Status st = driver->Destroy(*made);
    CPPUNIT_ASSERT(!st.ok());
    ASSERT_HAS(st.message(), "nvidia-smi mig -i 0 -gi 1 -ci 0 -dci");
    unsetenv("VGPU_STUB_NVML_FAIL");
    CPPUNIT_ASSERT(driver->Destroy(*made).ok());

    auto missing = OpenMigDriver(tmp_ + "/libnvidia-ml.so.1");
    CPPUNIT_ASSERT(!missing.ok());
    ASSERT_HAS(missing.message(), "cannot load " + tmp_ + "/libnvidia-ml.so.1");
    ASSERT_HAS(missing.message(), "NVIDIA driver");
    auto wrong = OpenMigDriver(StubDir() + "/libdcmi.so");  // loads, lacks NVML
    CPPUNIT_ASSERT(!wrong.ok() && Contains(wrong.message(), "does not export nvmlInit_v2"));
    setenv("VGPU_STUB_NVML_FAIL", "nvmlInit_v2", 1);
    auto no_init = OpenMigDriver(StubDir() + "/libnvidia-ml.so.1");
    CPPUNIT_ASSERT(!no_init.ok() && Contains(no_init.message(), "nvmlInit_v2 failed"));
    unsetenv("VGPU_STUB_NVML_FAIL");
    // RAII: the driver shuts NVML down when destroyed.
    void* stub = dlopen((StubDir() + "/libnvidia-ml.so.1").c_str(), RTLD_NOW | RTLD_LOCAL);
    CPPUNIT_ASSERT(stub != nullptr);
    auto depth = reinterpret_cast<int (*)()>(dlsym(stub, "vgpu_stub_nvml_init_depth"));
    const int before = depth();
    {
      auto d = Mig();
      CPPUNIT_ASSERT_EQUAL(before + 1, depth());
    }
    CPPUNIT_ASSERT_EQUAL(before, depth());
    dlclose(stub);
  }

  void testVnpuCreateAndDestroy() {
    UseVnpu();
    auto driver = Vnpu();
    auto a = driver->Create("5", Profile("ascend-910b", "vir03_1c_8g"));
    auto b = driver->Create("0", Profile("ascend-910b", "vir06_1c_16g"));
    CPPUNIT_ASSERT_MESSAGE(a.message(), a.ok());
    CPPUNIT_ASSERT_MESSAGE(b.message(), b.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("ascend"), a->vendor);
    CPPUNIT_ASSERT_EQUAL(std::string("5"), a->parent);
    CPPUNIT_ASSERT_EQUAL(std::string("vir03_1c_8g"), a->profile);
    CPPUNIT_ASSERT_EQUAL(std::string("100"), a->device);
    CPPUNIT_ASSERT_EQUAL(100u, a->instance);
    CPPUNIT_ASSERT_EQUAL(0u, a->sub_instance);
    CPPUNIT_ASSERT_EQUAL(std::string("101"), b->device);
    CPPUNIT_ASSERT_EQUAL(std::string("5 vdev=100 template=vir03_1c_8g\n0 vdev=101 template=vir06_1c_16g\n"),
                         Joined(vnpu_state_));
    // Destroyed by a later driver from the slices file.
    auto slices = ParseSlices(SerializeSlices({*a, *b}), "slices");
    CPPUNIT_ASSERT_MESSAGE(slices.message(), slices.ok());
    driver = Vnpu();
    Status st = driver->Destroy(slices->at(0));
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("0 vdev=101 template=vir06_1c_16g\n"), Joined(vnpu_state_));
    CPPUNIT_ASSERT(driver->Destroy(slices->at(0)).ok());  // already gone
    CPPUNIT_ASSERT(driver->Destroy(Slice("ascend", "9", "101", 101)).ok());  // no NPU 9: gone
    CPPUNIT_ASSERT_EQUAL(size_t(1), Lines(vnpu_state_).size());  // vdev 101 is NPU 0's, untouched
    CPPUNIT_ASSERT(driver->Destroy(slices->at(1)).ok());
    CPPUNIT_ASSERT(Lines(vnpu_state_).empty());
    st = driver->Destroy(Slice("nvidia", "GPU-aaaa", "MIG-x", 1));
    CPPUNIT_ASSERT(!st.ok() && Contains(st.message(), "\"nvidia\""));
  }

  void testVnpuCapacityExhausted() {
    UseVnpu();
    auto driver = Vnpu();
    CPPUNIT_ASSERT(driver->Create("5", Profile("ascend-910b3", "vir10_3c_32g")).ok());
    CPPUNIT_ASSERT(driver->Create("5", Profile("ascend-910b3", "vir05_1c_16g")).ok());  // 15 of 20 AI cores
    CPPUNIT_ASSERT(driver->Create("5", Profile("ascend-910b3", "vir05_1c_16g")).ok());  // 20
    auto full = driver->Create("5", Profile("ascend-910b3", "vir05_1c_16g"));
    CPPUNIT_ASSERT(!full.ok());
    const std::string& m = full.message();
    ASSERT_HAS(m, "vNPU vir05_1c_16g on NPU 5: dcmi_create_vdevice failed: DCMI error -8020");
    ASSERT_HAS(m, "npu-smi info -t info-vnpu -i 2 -c 0");
    CPPUNIT_ASSERT_EQUAL(size_t(3), Lines(vnpu_state_).size());
    CPPUNIT_ASSERT(driver->Create("0", Profile("ascend-910b3", "vir05_1c_16g")).ok());  // NPU 0 is free
  }

  // A 310P holds at most seven vNPUs, whatever AI cores are left.
  void testVnpu310PHoldsSeven() {
    UseVnpu();
    setenv("VGPU_STUB_DCMI_DEVICES", "Ascend,310P3,1,0,0,3,0,21527,0000:81:00.0", 1);
    auto driver = Vnpu();
    for (int i = 0; i < 7; ++i) {
      auto s = driver->Create("3", Profile("ascend-310p", "vir01"));
      CPPUNIT_ASSERT_MESSAGE(s.message(), s.ok());
    }
    auto eighth = driver->Create("3", Profile("ascend-310p", "vir01"));  // one AI core is still free
    CPPUNIT_ASSERT(!eighth.ok());
    ASSERT_HAS(eighth.message(), "DCMI error -8020");
    CPPUNIT_ASSERT_EQUAL(size_t(7), Lines(vnpu_state_).size());
  }

  void testVnpuFailures() {
    UseVnpu();
    auto driver = Vnpu();
    const SliceProfile three = Profile("ascend-910b", "vir03_1c_8g");
    auto s = driver->Create("7", three);
    CPPUNIT_ASSERT(!s.ok() && Contains(s.message(), "NPU 7: no NPU with this physical id"));
    s = driver->Create("davinci0", three);
    CPPUNIT_ASSERT(!s.ok() && Contains(s.message(), "physical id"));
    SliceProfile odd = three;
    odd.name = "1g.10gb";
    s = driver->Create("0", odd);
    CPPUNIT_ASSERT(!s.ok() && Contains(s.message(), "-8001") && Contains(s.message(), "template-info"));
    setenv("VGPU_STUB_DCMI_FAIL", "dcmi_create_vdevice", 1);
    s = driver->Create("5", three);
    CPPUNIT_ASSERT(!s.ok());
    ASSERT_HAS(s.message(), "vNPU vir03_1c_8g on NPU 5: dcmi_create_vdevice failed: DCMI error -8005");
    CPPUNIT_ASSERT(Lines(vnpu_state_).empty());  // nothing half made
    unsetenv("VGPU_STUB_DCMI_FAIL");
    auto made = driver->Create("5", three);
    CPPUNIT_ASSERT_MESSAGE(made.message(), made.ok());
    setenv("VGPU_STUB_DCMI_FAIL", "dcmi_set_destroy_vdevice", 1);
    Status st = driver->Destroy(*made);
    CPPUNIT_ASSERT(!st.ok());
    ASSERT_HAS(st.message(), "npu-smi set -t destroy-vnpu -i 2 -c 0 -v 100");
    CPPUNIT_ASSERT_EQUAL(size_t(1), Lines(vnpu_state_).size());
    unsetenv("VGPU_STUB_DCMI_FAIL");
    unsetenv("VGPU_STUB_DCMI_VNPU_STATE");  // a driver without vNPU support
    s = driver->Create("5", three);
    CPPUNIT_ASSERT(!s.ok() && Contains(s.message(), "-8255") && Contains(s.message(), "vnpu-mode"));

    auto missing = OpenVnpuDriver(tmp_ + "/libdcmi.so");
    CPPUNIT_ASSERT(!missing.ok() && Contains(missing.message(), "cannot load " + tmp_ + "/libdcmi.so"));
    CPPUNIT_ASSERT(Contains(missing.message(), "Ascend driver"));
    setenv("VGPU_STUB_DCMI_FAIL", "dcmi_init", 1);
    auto no_init = OpenVnpuDriver(StubDir() + "/libdcmi.so");
    CPPUNIT_ASSERT(!no_init.ok() && Contains(no_init.message(), "dcmi_init failed: DCMI error -8005"));
  }

 private:
  void UseMig() {
    setenv("VGPU_STUB_NVML_DEVICES", kGpus, 1);
    setenv("VGPU_STUB_NVML_MIG_STATE", mig_state_.c_str(), 1);
  }
  void UseVnpu() {
    setenv("VGPU_STUB_DCMI_DEVICES", kNpus, 1);
    setenv("VGPU_STUB_DCMI_VNPU_STATE", vnpu_state_.c_str(), 1);
  }
  std::unique_ptr<SliceDriver> Mig() {
    auto d = OpenMigDriver(StubDir() + "/libnvidia-ml.so.1");
    CPPUNIT_ASSERT_MESSAGE(d.message(), d.ok());
    return std::move(*d);
  }
  std::unique_ptr<SliceDriver> Vnpu() {
    auto d = OpenVnpuDriver(StubDir() + "/libdcmi.so");
    CPPUNIT_ASSERT_MESSAGE(d.message(), d.ok());
    return std::move(*d);
  }
  SliceProfile Profile(const std::string& model, const std::string& name) {
    const ChipModel* m = catalog_.FindById(model);
    CPPUNIT_ASSERT_MESSAGE(model, m != nullptr);
    for (const SliceProfile& p : m->profiles)
      if (p.name == name) return p;
    CPPUNIT_FAIL(model + " has no profile " + name);
    return {};
  }

  ChipCatalog catalog_;
  std::unique_ptr<TempDir> tmp_dir_;
  std::string tmp_, mig_state_, vnpu_state_;  // tmp_dir_'s path, and files in it
};

CPPUNIT_TEST_SUITE_REGISTRATION(HardwareSliceTest);

}  // namespace vgpu
