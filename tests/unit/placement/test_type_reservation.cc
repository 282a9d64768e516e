// TypeReservation: pinned shares per type, pressures and costs, and what it
// changes in pool's choices on a type-pinned workload.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <memory>

#include "placement/placement.h"
#include "replay.h"
#include "placement/type_reservation.h"

using vgpu::ClusterState;
using vgpu::DeviceType;
using vgpu::Placement;
using vgpu::Request;
using vgpu::TaskClass;
using vgpu::TypeReservation;
using vgpu::WorkloadModel;

namespace {

TaskClass Class(uint32_t shares, uint32_t devices, double weight, std::vector<DeviceType> types = {}) {
  TaskClass c;
  c.shares = shares;
  c.devices = devices;
  c.weight = weight;
  c.types = std::move(types);
  return c;
}

WorkloadModel Model(std::vector<TaskClass> classes, uint32_t s) {
  auto m = WorkloadModel::FromClasses(std::move(classes), s);
  CPPUNIT_ASSERT_MESSAGE(m.message(), m.ok());
  return std::move(m).value();
}

Request Req(uint32_t shares, std::vector<DeviceType> types = {}) {
  Request r;
  r.shares = shares;
  r.types = std::move(types);
  return r;
}

std::unique_ptr<vgpu::PlacementPolicy> Make(const std::string& name, const WorkloadModel& m, uint64_t seed) {
  vgpu::PolicyOptions o;
  o.seed = seed;
  o.workload = std::make_shared<const WorkloadModel>(m);
  auto p = vgpu::MakePolicy(name, o);
  CPPUNIT_ASSERT_MESSAGE(p.message(), p.ok());
  return std::move(p).value();
}

constexpr double kEps = 1e-9;

}  // namespace

class TypeReservationTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(TypeReservationTest);
  CPPUNIT_TEST(ClusterCountsSharesPerType);
  CPPUNIT_TEST(PinnedSharesSplitByCapacity);
  CPPUNIT_TEST(PressureAndCost);
  CPPUNIT_TEST(NoPinnedDemandIsInactive);
  CPPUNIT_TEST(RebuiltWhenCapacityChanges);
  CPPUNIT_TEST(PoolKeepsScarceTypeForPinnedTasks);
  CPPUNIT_TEST(UntypedWorkloadScoresUnchanged);
  CPPUNIT_TEST_SUITE_END();

 public:
  void ClusterCountsSharesPerType() {
    ClusterState c(100);
    CPPUNIT_ASSERT(c.AddNode("n0", 8000, 100, {"a", "b", "b"}).ok());
    CPPUNIT_ASSERT(c.AddNode("n1", 8000, 100, {"B"}).ok());
    const DeviceType a = c.FindType("a"), b = c.FindType("b");
    CPPUNIT_ASSERT_EQUAL(uint64_t{100}, c.total_shares_of(a));
    CPPUNIT_ASSERT_EQUAL(uint64_t{300}, c.total_shares_of(b));
    Placement p;
    p.placed = true;
    p.nodes.push_back({0, {1}, 30});
    CPPUNIT_ASSERT(c.Apply(Req(30), p).ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t{270}, c.free_shares_of(b));
    CPPUNIT_ASSERT_EQUAL(uint64_t{100}, c.free_shares_of(a));
    CPPUNIT_ASSERT(c.SetFree(0, 8000, 100, {10, 70, 100}).ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t{10}, c.free_shares_of(a));
    CPPUNIT_ASSERT_EQUAL(uint64_t{270}, c.free_shares_of(b));
    CPPUNIT_ASSERT(c.Release(Req(30), Placement{true, {{0, {1}, 30}}}).ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t{300}, c.free_shares_of(b));
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, c.free_shares_of(vgpu::kUnknownType));
  }

  // Half the demand untyped, a quarter pinned to a, a quarter allowed a or
  // b (split 2:6 by capacity).
  void PinnedSharesSplitByCapacity() {
    ClusterState c(100);
    c.AddNode("n0", 8000, 100, {"a", "a"});
    c.AddNode("n1", 8000, 100, std::vector<std::string>(6, "b"));
    WorkloadModel m = Model({Class(100, 1, 0.5), Class(100, 1, 0.25, {0}), Class(100, 1, 0.25, {0, 1})}, 100);
    TypeReservation r(m, c);
    CPPUNIT_ASSERT(r.active());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.25 + 0.25 * 2 / 8, r.pinned_share(0), kEps);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.25 * 6 / 8, r.pinned_share(1), kEps);
  }

  void PressureAndCost() {
    ClusterState c(100);
    c.AddNode("n0", 8000, 100, {"a", "a"});
    c.AddNode("n1", 8000, 100, std::vector<std::string>(6, "b"));
    WorkloadModel m = Model({Class(100, 1, 0.5), Class(100, 1, 0.25, {0}), Class(100, 1, 0.25, {0, 1})}, 100);
    TypeReservation r(m, c);
    // All idle: p_a = 0.3125 * 8 / 2 = 1.25, p_b = 0.1875 * 8 / 6 = 0.25.
    r.Refresh(c, {});
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, r.CostPerShare(0), kEps);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, r.CostPerShare(1), kEps);
    const std::vector<DeviceType> order = r.TypesByPressure();
    CPPUNIT_ASSERT(order == (std::vector<DeviceType>{1, 0}));  // b first: least pressed
    r.Refresh(c, {0});  // pinned to a: its own type is free of cost
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, r.CostPerShare(0), kEps);
    r.Refresh(c, {1, 0});
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, r.CostPerShare(0), kEps);
    // One a device taken: p_a = 0.3125 * 7 / 1, p_b = 0.1875 * 7 / 6.
    CPPUNIT_ASSERT(c.SetFree(0, 8000, 100, {0, 100}).ok());
    r.Refresh(c, {});
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.3125 * 7 - 0.1875 * 7 / 6, r.CostPerShare(0), kEps);
    // Nothing of b idle: b cannot be taken and does not set the floor.
    CPPUNIT_ASSERT(c.SetFree(1, 8000, 100, std::vector<uint32_t>(6, 0)).ok());
    r.Refresh(c, {});
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, r.CostPerShare(0), kEps);
    CPPUNIT_ASSERT(std::isfinite(r.CostPerShare(0)));
    CPPUNIT_ASSERT(r.TypesByPressure() == std::vector<DeviceType>{0});  // b: nothing idle
  }

  void NoPinnedDemandIsInactive() {
    ClusterState c(100);
    c.AddNode("n0", 8000, 100, {"a", "b"});
    TypeReservation none(Model({Class(100, 1, 0.5), Class(0, 0, 0.5)}, 100), c);
    CPPUNIT_ASSERT(!none.active());
    // A type no node has claims nothing.
    TypeReservation elsewhere(Model({Class(100, 1, 0.5), Class(100, 1, 0.5, {7})}, 100), c);
    CPPUNIT_ASSERT(!elsewhere.active());
  }

  void RebuiltWhenCapacityChanges() {
    ClusterState c(100);
    c.AddNode("n0", 8000, 100, {"a", "b"});
    TypeReservation r(Model({Class(100, 1, 1.0, {0})}, 100), c);
    CPPUNIT_ASSERT(r.BuiltFor(c));
    ClusterState more = c;
    more.AddNode("n1", 8000, 100, {"a"});
    CPPUNIT_ASSERT(!r.BuiltFor(more));
    ClusterState typed = c;
    typed.AddNode("n2", 8000, 100, {"c"});
    CPPUNIT_ASSERT(!r.BuiltFor(typed));
  }

  // Type a is scarce (one device) and a quarter of the tasks can use only
  // it; half can use only b (four devices). fgd counts a's idle device as
  // fragmented for the b-pinned half, so taking it with an untyped task
  // "lowers fragmentation" (gain 500 against 250 on b): the a-pinned task
  // that follows finds nothing. pool prices a's pressure (p_a = 1.25,
  // p_b = 0.625: a cost of 0.5 x 625 on a) and keeps it.
  void PoolKeepsScarceTypeForPinnedTasks() {
    const uint32_t s = 1000;
    WorkloadModel m = Model({Class(s, 1, 0.25), Class(s, 1, 0.25, {0}), Class(s, 1, 0.5, {1})}, s);
    const std::vector<Request> seq = {Req(s), Req(s, {0}), Req(s, {1}), Req(s, {1}), Req(s, {1})};
    for (uint64_t seed = 0; seed < 8; ++seed) {
      for (const char* name : {"pool", "pool:reserve=0", "fgd"}) {
        ClusterState c(s);
        c.AddNode("a0", 64000, 100, {"a"});
        c.AddNode("b0", 64000, 100, {"b", "b", "b", "b"});
        const uint64_t got = Replay(Make(name, m, seed).get(), &c, seq);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(name, uint64_t{name == std::string("pool") ? 5000u : 4000u}, got);
      }
    }
  }

  // Without pinned demand the cost is 0: pool scores every node as it
  // does with the term switched off.
  void UntypedWorkloadScoresUnchanged() {
    const uint32_t s = 100;
    WorkloadModel m = Model({Class(30, 1, 0.4), Class(100, 1, 0.3), Class(s, 2, 0.2), Class(0, 0, 0.1)}, s);
    auto on = Make("pool", m, 1), off = Make("pool:reserve=0", m, 1);
    ClusterState c(s);
    for (int n = 0; n < 12; ++n)
      c.AddNode("n" + std::to_string(n), 64000, 100, std::vector<std::string>(1 + n % 4, n % 2 ? "a" : "b"));
    const uint32_t sizes[] = {30, 100, 200, 50};
    for (int step = 0; step < 40; ++step) {
      Request r = Req(sizes[step % 4]);
      if (step % 3 == 0) r.types = {0};
      std::vector<double> x, y;
      CPPUNIT_ASSERT(on->Scores(c, r, &x).ok());
      CPPUNIT_ASSERT(off->Scores(c, r, &y).ok());
      for (size_t i = 0; i < x.size(); ++i)
        CPPUNIT_ASSERT(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])));
      Placement p;
      CPPUNIT_ASSERT(on->Place(c, r, &p).ok());
      if (p.placed) CPPUNIT_ASSERT(c.Apply(r, p).ok());
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(TypeReservationTest);
