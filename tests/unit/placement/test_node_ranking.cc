// The select plugin's choices in slurmctld: observed free state, node order
// by policy and type preference, device levels (preferred type, locality).
#include <cppunit/extensions/HelperMacros.h>

#include <memory>

#include "placement/node_ranking.h"
#include "placement/placement.h"

using vgpu::ClusterState;
using vgpu::DeviceType;
using vgpu::Request;

namespace {

Request Shares(uint32_t shares, std::vector<DeviceType> types = {}) {
  Request r;
  r.shares = shares;
  r.types = std::move(types);
  return r;
}

std::unique_ptr<vgpu::PlacementPolicy> Policy(const std::string& name) {
  vgpu::PolicyOptions o;
  auto p = vgpu::MakePolicy(name, o);
  CPPUNIT_ASSERT_MESSAGE(p.message(), p.ok());
  return std::move(p).value();
}

// a: 2 ascend; b: 2 nvidia + 2 dcu; c: 2 nvidia.
ClusterState ThreeNodes() {
  ClusterState c(100);
  CPPUNIT_ASSERT(c.AddNode("a", 4000, 1000, {"ascend", "ascend"}).ok());
  CPPUNIT_ASSERT(c.AddNode("b", 4000, 1000, {"nvidia", "nvidia", "dcu", "dcu"}).ok());
  CPPUNIT_ASSERT(c.AddNode("c", 4000, 1000, {"nvidia", "nvidia"}).ok());
  return c;
}

}  // namespace

class NodeRankingTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(NodeRankingTest);
  CPPUNIT_TEST(SetFreeObservesAndChecks);
  CPPUNIT_TEST(ChooseInOrderTriesLevels);
  CPPUNIT_TEST(RankByPolicy);
  CPPUNIT_TEST(RankFollowsTypePreference);
  CPPUNIT_TEST(RankRespectsCandidatesAndTypes);
  CPPUNIT_TEST(IdleCpusBeforeSharedCores);
  CPPUNIT_TEST(FewestSharersOnceCoresAreHeld);
  CPPUNIT_TEST(ChosenNodeOfNoCandidates);
  CPPUNIT_TEST(LevelsPutPreferredAndLocalFirst);
  CPPUNIT_TEST(EarliestFitFollowsDevices);
  CPPUNIT_TEST_SUITE_END();

 public:
  void SetFreeObservesAndChecks() {
    ClusterState c = ThreeNodes();
    const uint64_t before = c.free_shares();
    const uint64_t gen = c.node(1).generation;
    CPPUNIT_ASSERT(c.SetFree(1, 1000, 500, {40, 100, 0, 100}).ok());
    CPPUNIT_ASSERT_EQUAL(before - 160, c.free_shares());
    CPPUNIT_ASSERT_EQUAL(uint64_t{1000}, c.node(1).cpu_free);
    CPPUNIT_ASSERT_EQUAL(40u, c.node(1).devices[0].free);
    CPPUNIT_ASSERT(c.node(1).generation != gen);
    // Errors change nothing.
    CPPUNIT_ASSERT(!c.SetFree(3, 0, 0, {}).ok());
    CPPUNIT_ASSERT(!c.SetFree(1, 5000, 0, {0, 0, 0, 0}).ok());
    CPPUNIT_ASSERT(!c.SetFree(1, 0, 0, {0, 0}).ok());
    auto bad = c.SetFree(1, 0, 0, {0, 0, 0, 101});
    CPPUNIT_ASSERT(!bad.ok());
    CPPUNIT_ASSERT(bad.message().find("S=100") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(40u, c.node(1).devices[0].free);
    CPPUNIT_ASSERT_EQUAL(before - 160, c.free_shares());
  }

  void ChooseInOrderTriesLevels() {
    ClusterState c = ThreeNodes();
    CPPUNIT_ASSERT(c.SetFree(1, 4000, 1000, {30, 80, 50, 100}).ok());
    const auto& n = c.node(1);
    // No levels: best-fit over all devices (the tightest, device 2).
    CPPUNIT_ASSERT((vgpu::ChooseDevicesInOrder(n, Shares(50), 100, {}) == std::vector<uint32_t>{2}));
    // First level only devices 0 and 1: device 0 is too full, 1 fits.
    std::vector<std::vector<bool>> levels = {{true, true, false, false}, {true, true, true, true}};
    CPPUNIT_ASSERT((vgpu::ChooseDevicesInOrder(n, Shares(50), 100, levels) == std::vector<uint32_t>{1}));
    // 90 shares fit in no first-level device: the second level's device 3.
    CPPUNIT_ASSERT((vgpu::ChooseDevicesInOrder(n, Shares(90), 100, levels) == std::vector<uint32_t>{3}));
    // A whole device outside every level is never taken.
    CPPUNIT_ASSERT(vgpu::ChooseDevicesInOrder(n, Shares(100), 100, {{true, true, true, false}}).empty());
  }

  void RankByPolicy() {
    ClusterState c = ThreeNodes();
    // c's device 0 half used: best-fit prefers the tighter node c.
    CPPUNIT_ASSERT(c.SetFree(2, 4000, 1000, {50, 100}).ok());
    auto p = Policy("best-fit");
    auto order = vgpu::RankNodes(*p, c, Shares(40), {}, {});
    CPPUNIT_ASSERT_MESSAGE(order.message(), order.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{3}, order->size());
    CPPUNIT_ASSERT_EQUAL(2u, order->front());
    // 100 shares: only fully free devices; every node has one.
    CPPUNIT_ASSERT(c.SetFree(0, 4000, 1000, {60, 60}).ok());
    order = vgpu::RankNodes(*p, c, Shares(100), {}, {});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT((*order == std::vector<uint32_t>{2, 1}) || (*order == std::vector<uint32_t>{1, 2}));
  }

  void RankFollowsTypePreference() {
    ClusterState c = ThreeNodes();
    auto p = Policy("best-fit");
    const DeviceType dcu = c.FindType("dcu"), nvidia = c.FindType("nvidia");
    auto order = vgpu::RankNodes(*p, c, Shares(10), {dcu, nvidia}, {});
    CPPUNIT_ASSERT(order.ok());
    // dcu only on b; then nvidia on c (b already listed); then ascend's a.
    CPPUNIT_ASSERT((*order == std::vector<uint32_t>{1, 2, 0}));
    // dcu full: nvidia nodes first.
    CPPUNIT_ASSERT(c.SetFree(1, 4000, 1000, {100, 100, 0, 0}).ok());
    order = vgpu::RankNodes(*p, c, Shares(10), {dcu, nvidia}, {});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{3}, order->size());
    CPPUNIT_ASSERT_EQUAL(0u, order->back());
  }

  void IdleCpusBeforeSharedCores() {
    ClusterState c = ThreeNodes();
    // best-fit ranks c first (an nvidia device half used), but its cores
    // are all held; b has one idle CPU, a none.
    CPPUNIT_ASSERT(c.SetFree(2, 0, 1000, {50, 100}).ok());
    CPPUNIT_ASSERT(c.SetFree(1, 1000, 1000, {100, 100, 100, 100}).ok());
    CPPUNIT_ASSERT(c.SetFree(0, 0, 1000, {100, 100}).ok());
    auto p = Policy("best-fit");
    Request req = Shares(40);
    auto order = vgpu::RankNodes(*p, c, req, {}, {});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT_EQUAL(2u, order->front());
    req.cpu_milli = 1000;
    CPPUNIT_ASSERT_EQUAL(int64_t{1}, vgpu::LeastSharedCpus(c, *order, req, {}, {}));
    // Two CPUs idle nowhere: the ranking's first node, cores shared.
    Request two = req;
    two.cpu_milli = 2000;
    CPPUNIT_ASSERT_EQUAL(int64_t{2}, vgpu::LeastSharedCpus(c, *order, two, {}, {}));
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, vgpu::LeastSharedCpus(c, {}, req, {}, {}));
    // b's nvidia devices full: idle cores there would give the untyped job
    // a dcu where the policy chose nvidia; it stays on c.
    CPPUNIT_ASSERT(c.SetFree(1, 1000, 1000, {0, 0, 100, 100}).ok());
    order = vgpu::RankNodes(*p, c, Shares(40), {}, {});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT_EQUAL(2u, order->front());
    CPPUNIT_ASSERT_EQUAL(int64_t{2}, vgpu::LeastSharedCpus(c, *order, req, {}, {}));
    // Where the policy itself chose dcu, b's idle cores count.
    const DeviceType dcu = c.FindType("dcu");
    Request on_dcu = Shares(40, {dcu});
    on_dcu.cpu_milli = 1000;
    order = vgpu::RankNodes(*p, c, on_dcu, {}, {});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT_EQUAL(int64_t{1}, vgpu::LeastSharedCpus(c, *order, on_dcu, {}, {}));
  }

  // Every node's cores held: the job goes where the fewest jobs share
  // them (cons_tres's lowest row), not to the ranking's first node again.
  void FewestSharersOnceCoresAreHeld() {
    ClusterState c = ThreeNodes();
    // best-fit ranks c first (an nvidia device half used); no idle cores.
    CPPUNIT_ASSERT(c.SetFree(0, 0, 1000, {100, 100}).ok());
    CPPUNIT_ASSERT(c.SetFree(1, 0, 1000, {100, 100, 100, 100}).ok());
    CPPUNIT_ASSERT(c.SetFree(2, 0, 1000, {50, 100}).ok());
    auto p = Policy("best-fit");
    Request req = Shares(10);
    auto order = vgpu::RankNodes(*p, c, req, {}, {});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT_EQUAL(2u, order->front());
    req.cpu_milli = 1000;
    // c's 4 CPUs held by 12 jobs' CPUs, b's by 4, a's by none: b. a would
    // be shared least, but it has no nvidia, the type the policy chose.
    const std::vector<uint64_t> held = {0, 4000, 12000};
    CPPUNIT_ASSERT_EQUAL(int64_t{1}, vgpu::LeastSharedCpus(c, *order, req, {}, held));
    CPPUNIT_ASSERT_EQUAL(int64_t{1}, vgpu::ChosenNode(c, *order, req, true, {}, held));
    CPPUNIT_ASSERT_EQUAL(int64_t{2}, vgpu::ChosenNode(c, *order, req, false, {}, held));
    // Equal sharers: the ranking decides.
    CPPUNIT_ASSERT_EQUAL(int64_t{2}, vgpu::LeastSharedCpus(c, *order, req, {}, {0, 4000, 4000}));
    // Without counts, cons_tres's own (it stops at the node's CPUs) ties them.
    CPPUNIT_ASSERT_EQUAL(int64_t{2}, vgpu::LeastSharedCpus(c, *order, req, {}, {}));
    // A 2-CPU job on c would be in row 4, on b in row 2 (6000 / 4000).
    Request two = req;
    two.cpu_milli = 2000;
    CPPUNIT_ASSERT_EQUAL(int64_t{1}, vgpu::LeastSharedCpus(c, *order, two, {}, held));
  }

  // No candidate fits (the only node of the type asked for is drained):
  // RankNodes answers an empty order, and the choice is "none" (-1), for
  // jobs that share cores and jobs that do not. slurmctld died of a
  // 4294967295 here once (`empty ? -1 : front()` is unsigned).
  void ChosenNodeOfNoCandidates() {
    ClusterState c = ThreeNodes();
    auto p = Policy("best-fit");
    const DeviceType ascend = c.FindType("ascend");
    Request req = Shares(10, {ascend});
    auto order = vgpu::RankNodes(*p, c, req, {}, {false, true, true});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT(order->empty());
    req.cpu_milli = 1000;
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, vgpu::ChosenNode(c, *order, req, false, {}));
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, vgpu::ChosenNode(c, *order, req, true, {}));
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, vgpu::ChosenNode(c, {7}, req, false, {}));
    // Node a a candidate, its cores all held: chosen either way (shared cores).
    CPPUNIT_ASSERT(c.SetFree(0, 0, 1000, {100, 100}).ok());
    req.cpu_milli = 0;
    order = vgpu::RankNodes(*p, c, req, {}, {});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{1}, order->size());
    req.cpu_milli = 1000;
    CPPUNIT_ASSERT_EQUAL(int64_t{0}, vgpu::ChosenNode(c, *order, req, false, {}));
    CPPUNIT_ASSERT_EQUAL(int64_t{0}, vgpu::ChosenNode(c, *order, req, true, {}));
  }

  void RankRespectsCandidatesAndTypes() {
    ClusterState c = ThreeNodes();
    auto p = Policy("first-fit");
    const DeviceType ascend = c.FindType("ascend"), dcu = c.FindType("dcu");
    // A typed request ignores the preference.
    auto order = vgpu::RankNodes(*p, c, Shares(10, {ascend}), {dcu}, {});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT((*order == std::vector<uint32_t>{0}));
    order = vgpu::RankNodes(*p, c, Shares(10), {dcu}, {true, false, true});
    CPPUNIT_ASSERT(order.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, order->size());
    for (uint32_t i : *order) CPPUNIT_ASSERT(i != 1);
    // Invalid request: an error, not an empty order.
    CPPUNIT_ASSERT(!vgpu::RankNodes(*p, c, Shares(150), {}, {}).ok());
  }

  void LevelsPutPreferredAndLocalFirst() {
    ClusterState c = ThreeNodes();
    const auto& b = c.node(1);
    const DeviceType nvidia = c.FindType("nvidia"), dcu = c.FindType("dcu");
    // Untyped, preference dcu, devices 1 and 3 local.
    auto levels = vgpu::DeviceLevels(b, {}, {dcu}, {false, true, false, true});
    std::vector<std::vector<bool>> want = {{false, false, false, true},
                                           {false, false, true, true},
                                           {false, true, false, true},
                                           {true, true, true, true}};
    CPPUNIT_ASSERT(levels == want);
    // Typed: only that type, local first; no locality known: one level.
    levels = vgpu::DeviceLevels(b, {nvidia}, {dcu}, {false, true, false, true});
    want = {{false, true, false, false}, {true, true, false, false}};
    CPPUNIT_ASSERT(levels == want);
    levels = vgpu::DeviceLevels(b, {nvidia}, {}, {});
    want = {{true, true, false, false}};
    CPPUNIT_ASSERT(levels == want);
    // A preferred type the node lacks adds nothing.
    levels = vgpu::DeviceLevels(c.node(0), {}, {dcu}, {});
    want = {{true, true}};
    CPPUNIT_ASSERT(levels == want);
  }

  void EarliestFitFollowsDevices() {
    ClusterState c(100);
    CPPUNIT_ASSERT(c.AddNode("n3", 2000, 1000, {"nvidia", "nvidia"}).ok());
    // 40 shares on device 0 until t=500, 70 on device 1 until t=300.
    CPPUNIT_ASSERT(c.SetFree(0, 2000, 1000, {60, 30}).ok());
    const auto& n = c.node(0);
    std::vector<vgpu::ShareRelease> rel = {{500, {40, 0}}, {300, {0, 70}}};
    CPPUNIT_ASSERT_EQUAL(int64_t{100}, vgpu::EarliestFit(n, Shares(60), 100, rel, 100));
    // 90 free in bits, but 80 fits on no device before device 1 frees.
    CPPUNIT_ASSERT_EQUAL(int64_t{300}, vgpu::EarliestFit(n, Shares(80), 100, rel, 100));
    // Two whole devices: both must have ended.
    CPPUNIT_ASSERT_EQUAL(int64_t{500}, vgpu::EarliestFit(n, Shares(200), 100, rel, 100));
    // Never: more devices than the node has, or releases that do not free enough.
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, vgpu::EarliestFit(n, Shares(300), 100, rel, 100));
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, vgpu::EarliestFit(n, Shares(80), 100, {{200, {10, 0}}}, 100));
    // Simultaneous ends count together; a release in the past means now.
    std::vector<vgpu::ShareRelease> same = {{400, {40, 0}}, {400, {0, 70}}};
    CPPUNIT_ASSERT_EQUAL(int64_t{400}, vgpu::EarliestFit(n, Shares(200), 100, same, 100));
    CPPUNIT_ASSERT_EQUAL(int64_t{100}, vgpu::EarliestFit(n, Shares(80), 100, {{50, {0, 70}}}, 100));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(NodeRankingTest);
