// The baseline policies' scores and choices on small hand-made clusters,
// checked against hand computations from METHOD.md's formulas.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <map>
#include <memory>

#include "placement/placement.h"

using vgpu::ClusterState;
using vgpu::Placement;
using vgpu::PolicyOptions;
using vgpu::Request;

namespace {

Request Req(uint32_t shares, uint64_t cpu = 0) {
  Request r;
  r.shares = shares;
  r.cpu_milli = cpu;
  return r;
}

std::unique_ptr<vgpu::PlacementPolicy> Make(const std::string& name, uint64_t seed = 42) {
  PolicyOptions o;
  o.seed = seed;
  auto p = vgpu::MakePolicy(name, o);
  CPPUNIT_ASSERT_MESSAGE(p.message(), p.ok());
  return std::move(p).value();
}

void Take(ClusterState* c, uint32_t node, std::vector<uint32_t> devices, uint32_t per, uint64_t cpu = 0) {
  Request r = Req(devices.size() > 1 ? per * static_cast<uint32_t>(devices.size()) : per, cpu);
  Placement p;
  p.placed = true;
  p.nodes.push_back({node, devices, per});
  vgpu::Status st = c->Apply(r, p);
  CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
}

std::vector<double> ScoresOf(const std::string& policy, const ClusterState& c, const Request& r) {
  std::vector<double> s;
  vgpu::Status st = Make(policy)->Scores(c, r, &s);
  CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
  return s;
}

Placement PlaceWith(const std::string& policy, const ClusterState& c, const Request& r, uint64_t seed = 42) {
  Placement p;
  vgpu::Status st = Make(policy, seed)->Place(c, r, &p);
  CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
  CPPUNIT_ASSERT(p.placed);
  return p;
}

// The openb scales at S=1000: a 128-core 8-GPU node makes max cpu 128000 and
// max shares 8000.
ClusterState OpenbLike() {
  ClusterState c(1000);
  c.AddNode("A", 128000, 1 << 20, std::vector<std::string>(8, "G2"));  // empty
  c.AddNode("B", 64000, 1 << 20, {"P100", "P100"});                    // empty
  c.AddNode("C", 96000, 1 << 20, {"G2", "G2", "G2", "G2"});
  Take(&c, 2, {1}, 400, 10000);  // C: [1000, 600, 1000, 1000], 86000 cpu
  Take(&c, 2, {3}, 700);         // C: [1000, 600, 1000, 300]
  return c;
}

}  // namespace

class PlacementPoliciesTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PlacementPoliciesTest);
  CPPUNIT_TEST(BestFitScores);
  CPPUNIT_TEST(DotProductScores);
  CPPUNIT_TEST(GpuPackingScores);
  CPPUNIT_TEST(GpuClusteringScores);
  CPPUNIT_TEST(BestFitDeviceChoice);
  CPPUNIT_TEST(FirstFitOrder);
  CPPUNIT_TEST(LeastLoadedSpreads);
  CPPUNIT_TEST(RandomFitIsSeeded);
  CPPUNIT_TEST(TiesFollowTheSeedsNodeOrder);
  CPPUNIT_TEST(WholeDevicesAreLowestIndexFree);
  CPPUNIT_TEST_SUITE_END();

 public:
  // int(100 * (1 - [0.5 (cpu_free - cpu_req)/128000 + 0.5 (gpu_free - gpu_req)/8000]))
  void BestFitScores() {
    ClusterState c = OpenbLike();
    auto s = ScoresOf("best-fit", c, Req(500, 8000));
    CPPUNIT_ASSERT_EQUAL(6.0, s[0]);   // 100 (1 - (0.46875 + 0.46875)) = 6.25
    CPPUNIT_ASSERT_EQUAL(68.0, s[1]);  // 100 (1 - (0.21875 + 0.09375)) = 68.75
    CPPUNIT_ASSERT_EQUAL(54.0, s[2]);  // 100 (1 - (0.3046875 + 0.15)) = 54.53
  }

  // int(100 * (1 - 0.5 [(cpu_free/128000)(cpu_req/128000) + (gpu_free/8000)(gpu_req/8000)]))
  void DotProductScores() {
    ClusterState c = OpenbLike();
    auto s = ScoresOf("dot-product", c, Req(500, 8000));
    CPPUNIT_ASSERT_EQUAL(93.0, s[0]);  // 1 - 0.5 (0.0625 + 0.0625) = 0.9375
    CPPUNIT_ASSERT_EQUAL(97.0, s[1]);  // 1 - 0.5 (0.03125 + 0.015625) = 0.9765625
    CPPUNIT_ASSERT_EQUAL(96.0, s[2]);  // 1 - 0.5 (0.671875*0.0625 + 0.3625*0.0625) = 0.96767..
  }

  void GpuPackingScores() {
    ClusterState c = OpenbLike();
    auto share = ScoresOf("gpu-packing", c, Req(500));
    CPPUNIT_ASSERT_EQUAL(25.0, share[0]);  // untouched: max(33 - 8, 8)
    CPPUNIT_ASSERT_EQUAL(31.0, share[1]);  // untouched: max(33 - 2, 2)
    CPPUNIT_ASSERT_EQUAL(94.0, share[2]);  // tightest fit 600: 100 - 60/10
    auto big_share = ScoresOf("gpu-packing", c, Req(700));
    CPPUNIT_ASSERT_EQUAL(49.0, big_share[2]);  // needs a free device: 50 - 1
    auto whole = ScoresOf("gpu-packing", c, Req(2000));
    CPPUNIT_ASSERT_EQUAL(48.0, whole[2]);  // 50 - 2
    auto eight = ScoresOf("gpu-packing", c, Req(8000));
    CPPUNIT_ASSERT_EQUAL(25.0, eight[0]);
    CPPUNIT_ASSERT(std::isnan(eight[1]) && std::isnan(eight[2]));
    auto cpu_only = ScoresOf("gpu-packing", c, Req(0, 1000));
    CPPUNIT_ASSERT_EQUAL(0.0, cpu_only[0]);
    CPPUNIT_ASSERT_EQUAL(0.0, cpu_only[2]);
  }

  // 25 (8000 - gpu_free) // 8000 + 75 (only my label) / 50 (mine among
  // others) / 25 (no device task) / 0.
  void GpuClusteringScores() {
    ClusterState c = OpenbLike();  // C runs two sharing tasks
    auto share = ScoresOf("gpu-clustering", c, Req(200));
    CPPUNIT_ASSERT_EQUAL(25.0, share[0]);       // 25*0/8000 + 25
    CPPUNIT_ASSERT_EQUAL(43.0, share[1]);       // 25*6000/8000 = 18 + 25
    CPPUNIT_ASSERT_EQUAL(15.0 + 75, share[2]);  // 25*5100/8000 = 15.94
    auto whole = ScoresOf("gpu-clustering", c, Req(1000));
    CPPUNIT_ASSERT_EQUAL(15.0, whole[2]);  // another label runs there
    Take(&c, 2, {0}, 1000);  // C now also runs a one-device task
    auto mixed = ScoresOf("gpu-clustering", c, Req(200));
    CPPUNIT_ASSERT_EQUAL(19.0 + 50, mixed[2]);  // 25*6100/8000 = 19.06
    CPPUNIT_ASSERT_EQUAL(0.0, ScoresOf("gpu-clustering", c, Req(0, 10))[2]);
  }

  void BestFitDeviceChoice() {
    ClusterState c(1000);
    c.AddNode("n", 8000, 1000, {"t", "t", "t", "t"});
    Take(&c, 0, {0}, 200);  // [800, 1000, 1000, 1000]
    Take(&c, 0, {2}, 500);  // [800, 1000, 500, 1000]
    for (const char* p : {"best-fit", "dot-product", "gpu-packing", "gpu-clustering"}) {
      CPPUNIT_ASSERT_EQUAL(2u, PlaceWith(p, c, Req(400)).nodes[0].devices[0]);
      CPPUNIT_ASSERT_EQUAL(0u, PlaceWith(p, c, Req(600)).nodes[0].devices[0]);
      CPPUNIT_ASSERT_EQUAL(1u, PlaceWith(p, c, Req(900)).nodes[0].devices[0]);
    }
    CPPUNIT_ASSERT_EQUAL(0u, PlaceWith("first-fit", c, Req(400)).nodes[0].devices[0]);
    CPPUNIT_ASSERT_EQUAL(1u, PlaceWith("least-loaded", c, Req(400)).nodes[0].devices[0]);
  }

  void FirstFitOrder() {
    ClusterState c(100);
    for (int i = 0; i < 5; ++i) c.AddNode("n" + std::to_string(i), 4000, 100, {"t"});
    Take(&c, 0, {0}, 80);
    for (uint64_t seed : {1, 2, 3}) {
      CPPUNIT_ASSERT_EQUAL(0u, PlaceWith("first-fit", c, Req(20), seed).nodes[0].node);
      CPPUNIT_ASSERT_EQUAL(1u, PlaceWith("first-fit", c, Req(30), seed).nodes[0].node);
    }
  }

  void LeastLoadedSpreads() {
    ClusterState c(100);
    c.AddNode("a", 4000, 100, {"t", "t"});
    c.AddNode("b", 4000, 100, {"t", "t", "t"});
    Take(&c, 1, {0}, 100);
    Take(&c, 1, {1}, 50);  // b: 150 free, a: 200 free
    auto p = PlaceWith("least-loaded", c, Req(10));
    CPPUNIT_ASSERT_EQUAL(0u, p.nodes[0].node);
    CPPUNIT_ASSERT(std::vector<double>({200, 150}) == ScoresOf("least-loaded", c, Req(10)));
  }

  void RandomFitIsSeeded() {
    ClusterState c(100);
    for (int i = 0; i < 20; ++i) c.AddNode("n" + std::to_string(i), 4000, 100, {"t", "t", "t", "t"});
    std::map<uint32_t, int> nodes, devices;
    for (uint64_t seed = 0; seed < 200; ++seed) {
      Placement a = PlaceWith("random-fit", c, Req(10), seed);
      Placement b = PlaceWith("random-fit", c, Req(10), seed);
      CPPUNIT_ASSERT_EQUAL(a.nodes[0].node, b.nodes[0].node);
      CPPUNIT_ASSERT_EQUAL(a.nodes[0].devices[0], b.nodes[0].devices[0]);
      ++nodes[a.nodes[0].node];
      ++devices[a.nodes[0].devices[0]];
    }
    CPPUNIT_ASSERT(nodes.size() >= 15);  // spread, not stuck on one node
    CPPUNIT_ASSERT_EQUAL(size_t{4}, devices.size());
  }

  // Equal scores: the node earlier in the seed's random order wins, so the
  // choice depends on the seed but not on anything else.
  void TiesFollowTheSeedsNodeOrder() {
    ClusterState c(100);
    for (int i = 0; i < 50; ++i) c.AddNode("n" + std::to_string(i), 4000, 100, {"t"});
    std::map<uint32_t, int> winners;
    for (uint64_t seed = 0; seed < 40; ++seed) {
      uint32_t w = PlaceWith("best-fit", c, Req(10), seed).nodes[0].node;
      CPPUNIT_ASSERT_EQUAL(w, PlaceWith("best-fit", c, Req(10), seed).nodes[0].node);
      ++winners[w];
    }
    CPPUNIT_ASSERT(winners.size() >= 20);
  }

  void WholeDevicesAreLowestIndexFree() {
    ClusterState c(100);
    c.AddNode("n", 8000, 100, {"t", "t", "t", "t", "t"});
    Take(&c, 0, {1}, 10);
    for (const auto& name : {"first-fit", "best-fit", "dot-product", "gpu-packing", "gpu-clustering",
                             "random-fit", "least-loaded"}) {
      Placement p = PlaceWith(name, c, Req(300));
      CPPUNIT_ASSERT_MESSAGE(name, std::vector<uint32_t>({0, 2, 3}) == p.nodes[0].devices);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PlacementPoliciesTest);
