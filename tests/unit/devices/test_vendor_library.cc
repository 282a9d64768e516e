// Tests of the vendor library loader (VendorLibrary, CallFailed) through a
// DiscoveryEnv whose libraries are symbol tables, and of DcmiNpus (the NPU
// walk discovery and the vNPU driver share) against the stub libdcmi.so.
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devices/dcmi_api.h"
#include "devices/vendor_library.h"
#include "test_paths.h"

namespace vgpu {
namespace {

int Seven() { return 7; }
int Eight() { return 8; }

// A library that exports the symbols of a map.
class TableLibrary : public DynamicLibrary {
 public:
  explicit TableLibrary(std::map<std::string, void*> symbols) : symbols_(std::move(symbols)) {}
  void* Symbol(const char* symbol) const override {
    auto it = symbols_.find(symbol);
    return it != symbols_.end() ? it->second : nullptr;
  }

 private:
  std::map<std::string, void*> symbols_;
};

// Libraries by name; any other name fails to open as dlopen would.
class TableEnv : public DiscoveryEnv {
 public:
  Result<std::unique_ptr<DynamicLibrary>> OpenLibrary(const std::string& name) override {
    auto it = libraries.find(name);
    if (it == libraries.end()) {
      return Result<std::unique_ptr<DynamicLibrary>>::Error(name + ": cannot open shared object file");
    }
    return std::unique_ptr<DynamicLibrary>(new TableLibrary(it->second));
  }
  Result<std::string> ReadFile(const std::string& path) override { return Result<std::string>::Error(path); }
  std::string CpusForPciBusId(const std::string&) override { return ""; }

  std::map<std::string, std::map<std::string, void*>> libraries;
};

// A library with some of its symbols hidden, as an older version would be.
class HidingLibrary : public DynamicLibrary {
 public:
  HidingLibrary(std::unique_ptr<DynamicLibrary> real, std::vector<std::string> hidden)
      : real_(std::move(real)), hidden_(std::move(hidden)) {}
  void* Symbol(const char* symbol) const override {
    for (const std::string& h : hidden_) {
      if (h == symbol) return nullptr;
    }
    return real_->Symbol(symbol);
  }

 private:
  std::unique_ptr<DynamicLibrary> real_;
  std::vector<std::string> hidden_;
};

// The stub libraries through the real dlopen, by their sonames, less the
// symbols in `hidden`.
class StubEnv : public TableEnv {
 public:
  Result<std::unique_ptr<DynamicLibrary>> OpenLibrary(const std::string& name) override {
    auto lib = Default().OpenLibrary(StubDir() + "/" + name);
    if (!lib.ok()) return lib;
    return std::unique_ptr<DynamicLibrary>(new HidingLibrary(std::move(*lib), hidden));
  }
  std::vector<std::string> hidden;
};

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class VendorLibraryTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(VendorLibraryTest);
  CPPUNIT_TEST(testOpenFailsWithTheLoadersReason);
  CPPUNIT_TEST(testRequireAndOptionalBind);
  CPPUNIT_TEST(testCheckRequiredNamesTheFirstMissingSymbol);
  CPPUNIT_TEST(testCallFailedText);
  CPPUNIT_TEST(testDcmiWalkNumbersNpusByPhysicalId);
  CPPUNIT_TEST(testDcmiFindUnknownIdIsNoCard);
  CPPUNIT_TEST(testDcmiFailingCallNamesItsNpu);
  CPPUNIT_TEST(testDcmiVisitErrorStopsTheWalk);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override { Unset(); }
  void tearDown() override {
    npus_.reset();
    lib_.reset();
    Unset();
  }

  void testOpenFailsWithTheLoadersReason() {
    TableEnv env;
    Result<VendorLibrary> lib = VendorLibrary::Open(env, "libnvidia-ml.so.1");
    CPPUNIT_ASSERT(!lib.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("libnvidia-ml.so.1: cannot open shared object file"), lib.message());
  }

  void testRequireAndOptionalBind() {
    TableEnv env;
    env.libraries["libx.so"] = {{"x_seven", reinterpret_cast<void*>(&Seven)},
                                {"x_eight", reinterpret_cast<void*>(&Eight)}};
    Result<VendorLibrary> lib = VendorLibrary::Open(env, "libx.so");
    CPPUNIT_ASSERT_MESSAGE(lib.message(), lib.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("libx.so"), lib->soname());
    int (*seven)() = nullptr;
    int (*eight)() = nullptr;
    int (*nine)() = reinterpret_cast<int (*)()>(&Seven);
    lib->Require("x_seven", &seven);
    CPPUNIT_ASSERT(lib->Optional("x_eight", &eight));
    CPPUNIT_ASSERT(!lib->Optional("x_nine", &nine));
    CPPUNIT_ASSERT(seven != nullptr && eight != nullptr);
    CPPUNIT_ASSERT_EQUAL(7, seven());
    CPPUNIT_ASSERT_EQUAL(8, eight());
    CPPUNIT_ASSERT(nine == nullptr);  // a missed symbol leaves no stale pointer
    CPPUNIT_ASSERT(lib->CheckRequired().ok());  // an optional miss is not an error

    // The same through entries, as the vendor APIs declare them.
    Entry<int (*)()> e_seven(*lib, "x_seven");
    Entry<int (*)()> e_nine(*lib, "x_nine", kOptional);
    CPPUNIT_ASSERT_EQUAL(7, e_seven());
    CPPUNIT_ASSERT(e_seven != nullptr && e_nine == nullptr);
    CPPUNIT_ASSERT(lib->CheckRequired().ok());
    Entry<int (*)()> e_missing(*lib, "x_missing");
    CPPUNIT_ASSERT(e_missing == nullptr);
    CPPUNIT_ASSERT_EQUAL(std::string("libx.so does not export x_missing: unsupported library version"),
                         lib->CheckRequired().message());
  }

  void testCheckRequiredNamesTheFirstMissingSymbol() {
    TableEnv env;
    env.libraries["libdcmi.so"] = {{"dcmi_get_card_num_list", reinterpret_cast<void*>(&Seven)}};
    Result<VendorLibrary> lib = VendorLibrary::Open(env, "libdcmi.so");
    CPPUNIT_ASSERT(lib.ok());
    int (*a)() = nullptr;
    int (*b)() = nullptr;
    int (*c)() = nullptr;
    lib->Require("dcmi_init", &a);
    lib->Require("dcmi_get_card_num_list", &b);
    lib->Require("dcmi_get_device_logic_id", &c);
    CPPUNIT_ASSERT(a == nullptr && b != nullptr && c == nullptr);
    Status s = lib->CheckRequired();
    CPPUNIT_ASSERT(!s.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("libdcmi.so does not export dcmi_init: unsupported library version"),
                         s.message());
  }

  void testCallFailedText() {
    CPPUNIT_ASSERT_EQUAL(std::string("nvmlInit_v2() failed: NVML error 9 (Driver Not Loaded)"),
                         CallFailed("nvmlInit_v2()", "NVML error", 9, "Driver Not Loaded"));
    CPPUNIT_ASSERT_EQUAL(std::string("rsmi_init(0) failed: RSMI status 8"),
                         CallFailed("rsmi_init(0)", "RSMI status", 8, nullptr));
    CPPUNIT_ASSERT_EQUAL(std::string("dcmi_init failed: DCMI error -8005"), CallFailed("dcmi_init", "DCMI error", -8005, ""));
    CPPUNIT_ASSERT_EQUAL(std::string("dcmi_create_vdevice failed: DCMI error -8020 (resource occupied)"),
                         dcmi_api::DcmiNpus::Failed("dcmi_create_vdevice", -8020));
    CPPUNIT_ASSERT_EQUAL(std::string("x failed: DCMI error -8005"), dcmi_api::DcmiNpus::Failed("x", -8005));
  }

  void testDcmiWalkNumbersNpusByPhysicalId() {
    const dcmi_api::DcmiNpus& npus = StubNpus();
    std::vector<dcmi_api::NpuAddress> seen;
    Status walked = npus.ForEach([&seen](const dcmi_api::NpuAddress& npu) {
      seen.push_back(npu);
      return Status::Ok();
    });
    CPPUNIT_ASSERT_MESSAGE(walked.message(), walked.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(3), seen.size());
    CPPUNIT_ASSERT_EQUAL(3, seen[0].card);
    CPPUNIT_ASSERT_EQUAL(0, seen[0].device);
    CPPUNIT_ASSERT_EQUAL(0, seen[0].logic_id);
    CPPUNIT_ASSERT_EQUAL(4, seen[0].physical_id);
    CPPUNIT_ASSERT_EQUAL(1, seen[1].device);
    CPPUNIT_ASSERT_EQUAL(5, seen[1].physical_id);
    CPPUNIT_ASSERT_EQUAL(1, seen[2].card);
    CPPUNIT_ASSERT_EQUAL(2, seen[2].logic_id);
    CPPUNIT_ASSERT_EQUAL(0, seen[2].physical_id);

    Result<dcmi_api::NpuAddress> found = npus.Find(5);
    CPPUNIT_ASSERT_MESSAGE(found.message(), found.ok());
    CPPUNIT_ASSERT_EQUAL(3, found->card);
    CPPUNIT_ASSERT_EQUAL(1, found->device);

    // A library without the physical id call: the logic id stands in for it.
    env_.hidden = {"dcmi_get_device_phyid_from_logicid"};
    Result<VendorLibrary> old = VendorLibrary::Open(env_, "libdcmi.so");
    CPPUNIT_ASSERT(old.ok());
    const dcmi_api::DcmiNpus old_npus(*old);
    CPPUNIT_ASSERT(old->CheckRequired().ok());
    CPPUNIT_ASSERT(old_npus.phy_id == nullptr);
    found = old_npus.Find(1);
    CPPUNIT_ASSERT(found.ok());
    CPPUNIT_ASSERT_EQUAL(3, found->card);
    CPPUNIT_ASSERT_EQUAL(1, found->device);
    CPPUNIT_ASSERT_EQUAL(1, found->physical_id);

    // Without a required one, the first missing is named.
    env_.hidden = {"dcmi_get_device_logic_id", "dcmi_init"};
    Result<VendorLibrary> older = VendorLibrary::Open(env_, "libdcmi.so");
    CPPUNIT_ASSERT(older.ok());
    const dcmi_api::DcmiNpus older_npus(*older);
    CPPUNIT_ASSERT(older_npus.init == nullptr && older_npus.card_list != nullptr);
    CPPUNIT_ASSERT(Contains(older->CheckRequired().message(), "does not export dcmi_init: "));
  }

  void testDcmiFindUnknownIdIsNoCard() {
    const dcmi_api::DcmiNpus& npus = StubNpus();
    Result<dcmi_api::NpuAddress> found = npus.Find(9);
    CPPUNIT_ASSERT_MESSAGE(found.message(), found.ok());
    CPPUNIT_ASSERT_EQUAL(-1, found->card);
  }

  void testDcmiFailingCallNamesItsNpu() {
    const dcmi_api::DcmiNpus& npus = StubNpus();
    setenv("VGPU_STUB_DCMI_FAIL", "dcmi_get_device_phyid_from_logicid", 1);
    Result<dcmi_api::NpuAddress> found = npus.Find(0);
    CPPUNIT_ASSERT(!found.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("dcmi_get_device_phyid_from_logicid(card 3, device 0) failed: DCMI error -8005"),
                         found.message());
    setenv("VGPU_STUB_DCMI_FAIL", "dcmi_get_card_num_list", 1);
    Status walked = npus.ForEach([](const dcmi_api::NpuAddress&) { return Status::Ok(); });
    CPPUNIT_ASSERT_EQUAL(std::string("dcmi_get_card_num_list() failed: DCMI error -8005"), walked.message());
  }

  void testDcmiVisitErrorStopsTheWalk() {
    const dcmi_api::DcmiNpus& npus = StubNpus();
    int visits = 0;
    Status walked = npus.ForEach([&visits](const dcmi_api::NpuAddress& npu) {
      ++visits;
      return npu.physical_id == 5 ? Status::Error("no thanks") : Status::Ok();
    });
    CPPUNIT_ASSERT_EQUAL(std::string("no thanks"), walked.message());
    CPPUNIT_ASSERT_EQUAL(2, visits);
  }

 private:
  static void Unset() {
    unsetenv("VGPU_STUB_DCMI_DEVICES");
    unsetenv("VGPU_STUB_DCMI_FAIL");
    unsetenv("VGPU_STUB_DCMI_UNSUPPORTED");
  }
  // The stub with three NPUs: card 3 holds two whose physical ids (4, 5)
  // are not their logic ids (0, 1); card 1, listed second, holds logic id 2
  // at physical id 0. Opened, checked and initialised.
  const dcmi_api::DcmiNpus& StubNpus() {
    setenv("VGPU_STUB_DCMI_DEVICES",
           "Ascend,910B3,3,0,0,4,65536,0,0000:c1:00.0;"
           "Ascend,910B3,3,1,1,5,65536,0,0000:c2:00.0;"
           "Ascend,910B3,1,0,2,0,65536,0,0000:c3:00.0",
           1);
    Result<VendorLibrary> lib = VendorLibrary::Open(env_, "libdcmi.so");
    CPPUNIT_ASSERT_MESSAGE(lib.message(), lib.ok());
    lib_.emplace(std::move(*lib));
    npus_ = std::make_unique<dcmi_api::DcmiNpus>(*lib_);
    CPPUNIT_ASSERT_MESSAGE(lib_->CheckRequired().message(), lib_->CheckRequired().ok());
    CPPUNIT_ASSERT(npus_->phy_id != nullptr);
    CPPUNIT_ASSERT_EQUAL(0, npus_->init());
    return *npus_;
  }

  StubEnv env_;
  std::optional<VendorLibrary> lib_;              // before npus_, which is bound from it
  std::unique_ptr<dcmi_api::DcmiNpus> npus_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(VendorLibraryTest);

}  // namespace vgpu
