// Tests of SliceGeometry: slice positions written in share bits, on the
// shipped catalog's A100 80GB (MIG placements) and on made-up models.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <string>
#include <vector>

#include "devices/slice_geometry.h"
#include "test_paths.h"

using vgpu::ChipCatalog;
using vgpu::ChipModel;
using vgpu::SliceGeometry;
using vgpu::SlicedModels;
using vgpu::SlicePlacement;
using vgpu::SliceProfile;
using vgpu::SlotMask;

namespace {

// A device's share bits with the given placements held (first `shares` of each).
struct Device {
  std::vector<bool> bits;
  explicit Device(uint32_t s) : bits(s, false) {}
  void Hold(const SlicePlacement& p, uint32_t shares) {
    for (uint32_t i = p.first_share; i < p.first_share + shares; ++i) bits.at(i) = true;
  }
  SlotMask Taken(const SliceGeometry& g) const {
    return g.Taken([this](uint32_t i) { return bits[i]; });
  }
};

SliceProfile Profile(const std::string& name, uint32_t shares, uint32_t slots, std::vector<uint32_t> starts) {
  SliceProfile p;
  p.name = name;
  p.shares = shares;
  p.memory_bytes = 1;
  p.compute_units = 1;
  p.slots = slots;
  p.starts = std::move(starts);
  return p;
}

}  // namespace

class SliceGeometryTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SliceGeometryTest);
  CPPUNIT_TEST(A100SlotsOwnTheirProfilesShares);
  CPPUNIT_TEST(SevenOneSliceJobsFitAnEighthDoesNot);
  CPPUNIT_TEST(ChoiceKeepsRoomForLargerSlices);
  CPPUNIT_TEST(LargestFitFollowsFreePositions);
  CPPUNIT_TEST(PlacementOfReadsAJobsBits);
  CPPUNIT_TEST(AnyAllocatedBitTakesItsSlot);
  CPPUNIT_TEST(TooFewSharesIsAnError);
  CPPUNIT_TEST(CatalogChecksSlotsAndStarts);
  CPPUNIT_TEST(SlicedDevicesByTypeOrFeature);
  CPPUNIT_TEST(VnpuTemplatesFitTheirChips);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    catalog_ = vgpu::ShippedCatalog();
    const ChipModel* a100 = catalog_.FindById("nvidia-a100-80g");
    CPPUNIT_ASSERT(a100 != nullptr);
    a100_ = *a100;
  }

  void A100SlotsOwnTheirProfilesShares() {
    auto g = SliceGeometry::For(a100_, 100);
    CPPUNIT_ASSERT_MESSAGE(g.message(), g.ok());
    CPPUNIT_ASSERT_EQUAL(8u, g->slots());
    const uint32_t expected[] = {0, 14, 28, 42, 57, 71, 85, 99, 100};
    for (uint32_t k = 0; k <= 8; ++k) CPPUNIT_ASSERT_EQUAL(expected[k], g->FirstShare(k));
    // Every position of every profile owns the most shares its requests hold.
    for (const SliceProfile& p : a100_.profiles)
      for (uint32_t start : p.starts)
        CPPUNIT_ASSERT_MESSAGE(p.name + " at " + std::to_string(start),
                               g->FirstShare(start + p.slots) - g->FirstShare(start) >= p.shares);
    // At S=50 too (a node with more than ten devices).
    auto half = SliceGeometry::For(a100_, 50);
    CPPUNIT_ASSERT_MESSAGE(half.message(), half.ok());
    CPPUNIT_ASSERT_EQUAL(50u, half->shares_per_device());
  }

  // The lab's sixteen 10-share jobs on one A100: seven get a 1g.10gb, each
  // where the bitmap says, and the eighth fits nowhere.
  void SevenOneSliceJobsFitAnEighthDoesNot() {
    auto g = SliceGeometry::For(a100_, 100);
    Device dev(100);
    std::vector<uint32_t> starts;
    for (int j = 0; j < 7; ++j) {
      auto p = g->Choose(dev.Taken(*g), 10);
      CPPUNIT_ASSERT_MESSAGE("job " + std::to_string(j), p.has_value());
      CPPUNIT_ASSERT_EQUAL(std::string("1g.10gb"), p->profile);
      dev.Hold(*p, 10);
      starts.push_back(p->start);
    }
    CPPUNIT_ASSERT(!g->Choose(dev.Taken(*g), 10).has_value());
    CPPUNIT_ASSERT_EQUAL(0u, g->LargestFit(dev.Taken(*g)));
    std::sort(starts.begin(), starts.end());
    CPPUNIT_ASSERT((starts == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6}));
  }

  void ChoiceKeepsRoomForLargerSlices() {
    auto g = SliceGeometry::For(a100_, 100);
    Device dev(100);
    // The first small slice goes high (slot 6): 4g.40gb, which only starts
    // at 0, and 3g.40gb at 0 still fit.
    auto first = g->Choose(0, 10);
    CPPUNIT_ASSERT(first.has_value());
    CPPUNIT_ASSERT_EQUAL(6u, first->start);
    dev.Hold(*first, 10);
    auto big = g->Choose(dev.Taken(*g), 57);
    CPPUNIT_ASSERT(big.has_value());
    CPPUNIT_ASSERT_EQUAL(std::string("4g.40gb"), big->profile);
    CPPUNIT_ASSERT_EQUAL(0u, big->start);
    dev.Hold(*big, 57);
    // Slots 4 and 5 are left: a 2g.20gb at 4, no 3g.40gb.
    CPPUNIT_ASSERT(!g->Choose(dev.Taken(*g), 42).has_value());
    auto two = g->Choose(dev.Taken(*g), 20);
    CPPUNIT_ASSERT(two.has_value());
    CPPUNIT_ASSERT_EQUAL(4u, two->start);
  }

  void LargestFitFollowsFreePositions() {
    auto g = SliceGeometry::For(a100_, 100);
    CPPUNIT_ASSERT_EQUAL(100u, g->LargestFit(0));
    CPPUNIT_ASSERT_EQUAL(57u, g->LargestFit(SlotMask{1} << 6));  // 4g.40gb at 0
    CPPUNIT_ASSERT_EQUAL(42u, g->LargestFit(SlotMask{1} << 0));  // 3g.40gb at 4
    CPPUNIT_ASSERT_EQUAL(14u, g->LargestFit(0x7e));              // slot 0 only (and 7)
    CPPUNIT_ASSERT_EQUAL(0u, g->LargestFit(0x7f));               // slot 7 serves no profile alone
    // A request fits exactly when it is at most LargestFit.
    for (SlotMask taken : {SlotMask{0}, SlotMask{0x40}, SlotMask{0x01}, SlotMask{0x7e}, SlotMask{0x0f}, SlotMask{0x55}})
      for (uint32_t x = 1; x <= 100; ++x)
        CPPUNIT_ASSERT_EQUAL_MESSAGE("taken " + std::to_string(taken) + " x " + std::to_string(x),
                                     x <= g->LargestFit(taken), g->Choose(taken, x).has_value());
  }

  void PlacementOfReadsAJobsBits() {
    auto g = SliceGeometry::For(a100_, 100);
    auto at = g->PlacementOf(85, 10);  // the lowest share of slot 6
    CPPUNIT_ASSERT(at.has_value());
    CPPUNIT_ASSERT_EQUAL(std::string("1g.10gb"), at->profile);
    CPPUNIT_ASSERT_EQUAL(6u, at->start);
    CPPUNIT_ASSERT_EQUAL(1u, at->slots);
    CPPUNIT_ASSERT(!g->PlacementOf(86, 10).has_value());  // not a slot's first share
    CPPUNIT_ASSERT(!g->PlacementOf(99, 10).has_value());  // slot 7: no 1g.10gb position
    CPPUNIT_ASSERT(!g->PlacementOf(14, 20).has_value());  // 2g.20gb does not start at 1
    auto whole = g->PlacementOf(0, 100);
    CPPUNIT_ASSERT(whole.has_value() && whole->profile == "7g.80gb" && whole->shares == 100);
  }

  // A slot with any share held (e.g. by a job placed before slurmctld knew
  // the geometry) is taken.
  void AnyAllocatedBitTakesItsSlot() {
    auto g = SliceGeometry::For(a100_, 100);
    Device dev(100);
    dev.bits[30] = true;  // slot 2
    dev.bits[99] = true;  // slot 7
    CPPUNIT_ASSERT_EQUAL(SlotMask{0x84}, dev.Taken(*g));
    auto p = g->Choose(dev.Taken(*g), 42);
    CPPUNIT_ASSERT(!p.has_value());  // 3g at 0 has slot 2, at 4 has slot 7
  }

  void TooFewSharesIsAnError() {
    ChipModel m;
    m.id = "tiny";
    m.source = "tiny.json";
    m.slice_slots = 4;
    m.profiles = {Profile("quarter", 20, 1, {0, 1, 2, 3}), Profile("most", 60, 2, {0})};
    // 20 per slot, and "most" needs 60 of slots 0-1: slot 1 gets 40.
    auto ok = SliceGeometry::For(m, 100);
    CPPUNIT_ASSERT_MESSAGE(ok.message(), ok.ok());
    CPPUNIT_ASSERT_EQUAL(60u, ok->FirstShare(2));
    CPPUNIT_ASSERT_EQUAL(100u, ok->FirstShare(4));
    m.profiles = {Profile("half", 60, 1, {0, 1})};
    auto over = SliceGeometry::For(m, 100);  // 60 + 60 + 1 + 1 > 100
    CPPUNIT_ASSERT(!over.ok());
    CPPUNIT_ASSERT_MESSAGE(over.message(), over.message().find("SharesPerDevice=100 is too few") != std::string::npos);
    m.slice_slots = 0;
    auto none = SliceGeometry::For(m, 100);
    CPPUNIT_ASSERT(!none.ok());
    CPPUNIT_ASSERT_MESSAGE(none.message(), none.message().find("slice_slots") != std::string::npos);
  }

  void CatalogChecksSlotsAndStarts() {
    const std::string head =
        R"({"id": "x", "vendor": "v", "gres_type": "x", "names": ["X"], "memory_bytes": 100, "compute_units": 8,
            "device_file": "/dev/x%d", "visible_devices_env": "X", "discovery": "none", )";
    auto parse = [&](const std::string& tail) { return ChipCatalog::ParseModel(head + tail, "x.json"); };
    auto good = parse(R"("slice_slots": 4, "profiles": [{"name": "a", "shares": 25, "memory_bytes": 10,
                         "compute_units": 2, "slots": 1, "starts": [0, 1, 2, 3]}]})");
    CPPUNIT_ASSERT_MESSAGE(good.message(), good.ok() && good->profiles[0].starts.size() == 4);
    const std::pair<std::string, std::string> bad[] = {
        {R"("profiles": [{"name": "a", "shares": 25, "memory_bytes": 10, "compute_units": 2, "slots": 1, "starts": [0]}]})",
         "needs the model's \"slice_slots\""},
        {R"("slice_slots": 4, "profiles": [{"name": "a", "shares": 25, "memory_bytes": 10, "compute_units": 2}]})",
         "slots"},
        {R"("slice_slots": 4, "profiles": [{"name": "a", "shares": 25, "memory_bytes": 10, "compute_units": 2, "slots": 2, "starts": [3]}]})",
         "goes past the model's 4 slice_slots"},
        {R"("slice_slots": 4, "profiles": [{"name": "a", "shares": 25, "memory_bytes": 10, "compute_units": 2, "slots": 1, "starts": [-1]}]})",
         "starts[0]"},
        {R"("slice_slots": 65, "profiles": []})", "at most 64"},
    };
    for (const auto& [tail, what] : bad) {
      auto r = parse(tail);
      CPPUNIT_ASSERT_MESSAGE(tail, !r.ok());
      CPPUNIT_ASSERT_MESSAGE(r.message(), r.message().find(what) != std::string::npos);
    }
  }

  // vNPU templates take AI cores, not positions: the shipped slots give
  // every set of templates that fits the cores, and no more (a 310P: at
  // most seven vNPUs).
  void VnpuTemplatesFitTheirChips() {
    struct Case {
      const char* model;
      uint32_t shares;  // one template's request
      int fit;          // how many fit an empty chip
    } cases[] = {{"ascend-910b", 12, 8}, {"ascend-910b", 25, 4}, {"ascend-910b", 50, 2},
                 {"ascend-910b3", 25, 4}, {"ascend-910b3", 50, 2}, {"ascend-310p", 12, 7},
                 {"ascend-310p", 25, 4},  {"ascend-310p", 50, 2}};
    for (const Case& c : cases) {
      const ChipModel* m = catalog_.FindById(c.model);
      CPPUNIT_ASSERT(m != nullptr);
      auto g = SliceGeometry::For(*m, 100);
      CPPUNIT_ASSERT_MESSAGE(g.message(), g.ok());
      Device dev(100);
      int placed = 0;
      while (auto p = g->Choose(dev.Taken(*g), c.shares)) {
        dev.Hold(*p, c.shares);
        ++placed;
      }
      CPPUNIT_ASSERT_EQUAL_MESSAGE(std::string(c.model) + " " + std::to_string(c.shares), c.fit, placed);
    }
    // No template is a whole 910B3: a job of 100 shares gets the NPU
    // unsliced, when nothing is on it.
    auto b3 = SliceGeometry::For(*catalog_.FindById("ascend-910b3"), 100);
    CPPUNIT_ASSERT_EQUAL(100u, b3->LargestFit(0));
    CPPUNIT_ASSERT_EQUAL(50u, b3->LargestFit(1));
    auto whole = b3->Choose(0, 100);
    CPPUNIT_ASSERT(whole && whole->profile.empty() && whole->first_share == 0 && whole->shares == 100);
    CPPUNIT_ASSERT(!b3->Choose(1, 100).has_value());
    CPPUNIT_ASSERT(b3->PlacementOf(0, 100).has_value());
  }

  // slurmctld knows a device's model from its type or its node's features.
  void SlicedDevicesByTypeOrFeature() {
    std::vector<std::string> problems;
    auto only_a100 = [](const std::string& id, const std::string&) { return id == "nvidia-a100-80g"; };
    SlicedModels a100(catalog_, 100, only_a100, &problems);
    CPPUNIT_ASSERT(problems.empty() && !a100.empty());
    const SliceGeometry* g = a100.Find("nvidia-a100-80g", "nvidia");
    CPPUNIT_ASSERT(g != nullptr);
    CPPUNIT_ASSERT_EQUAL(std::string("nvidia-a100-80g"), g->model_id());
    CPPUNIT_ASSERT(a100.Find("ib, NVIDIA-A100-80G ,x", "NVIDIA") == g);
    CPPUNIT_ASSERT(a100.Find("", "nvidia-a100-80g") == g);  // Type= is the model
    CPPUNIT_ASSERT(a100.Find("", "nvidia") == nullptr);     // an H100 node, or one not described
    CPPUNIT_ASSERT(a100.Find("nvidia-a100-80g", "ascend") == nullptr);
    // Slicing by type ("nvidia"): the A100, H100 and H200 all sliced; a node
    // naming two of them cannot say which device is which.
    auto nvidia = [](const std::string&, const std::string& type) { return type == "nvidia"; };
    SlicedModels all(catalog_, 100, nvidia, &problems);
    CPPUNIT_ASSERT(all.Find("nvidia-h100", "nvidia") != nullptr);
    CPPUNIT_ASSERT(all.Find("nvidia-h100,nvidia-a100-80g", "nvidia") == nullptr);
    // None sliced: everything in shares.
    SlicedModels none(catalog_, 100, [](const std::string&, const std::string&) { return false; }, &problems);
    CPPUNIT_ASSERT(none.empty() && none.Find("nvidia-a100-80g", "nvidia") == nullptr);
  }

 private:
  ChipCatalog catalog_;
  ChipModel a100_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(SliceGeometryTest);
