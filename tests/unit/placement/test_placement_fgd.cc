// Fragmentation measure, its caches (against brute force), fgd's scores and
// choices, and pool.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "placement/placement.h"
#include "replay.h"
#include "placement/placement_fgd.h"

using vgpu::ClusterState;
using vgpu::DeviceState;
using vgpu::Placement;
using vgpu::PolicyOptions;
using vgpu::Request;
using vgpu::TaskClass;
using vgpu::WorkloadModel;

namespace {

TaskClass Class(uint64_t cpu, uint32_t shares, uint32_t devices, double weight,
                std::vector<vgpu::DeviceType> types = {}) {
  TaskClass c;
  c.cpu_milli = cpu;
  c.shares = shares;
  c.devices = devices;
  c.weight = weight;
  c.types = std::move(types);
  return c;
}

std::shared_ptr<const WorkloadModel> Model(std::vector<TaskClass> classes, uint32_t s) {
  auto m = WorkloadModel::FromClasses(std::move(classes), s);
  CPPUNIT_ASSERT_MESSAGE(m.message(), m.ok());
  return std::make_shared<const WorkloadModel>(std::move(m).value());
}

Request Req(uint32_t shares, uint64_t cpu = 0) {
  Request r;
  r.shares = shares;
  r.cpu_milli = cpu;
  return r;
}

std::unique_ptr<vgpu::PlacementPolicy> Make(const std::string& name, std::shared_ptr<const WorkloadModel> m,
                                            uint64_t seed = 42) {
  PolicyOptions o;
  o.seed = seed;
  o.workload = std::move(m);
  auto p = vgpu::MakePolicy(name, o);
  CPPUNIT_ASSERT_MESSAGE(p.message(), p.ok());
  return std::move(p).value();
}

void Take(ClusterState* c, uint32_t node, uint32_t device, uint32_t shares) {
  Placement p;
  p.placed = true;
  p.nodes.push_back({node, {device}, shares});
  CPPUNIT_ASSERT(c->Apply(Req(shares), p).ok());
}

}  // namespace

class PlacementFgdTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PlacementFgdTest);
  CPPUNIT_TEST(FragmentationByHand);
  CPPUNIT_TEST(CacheMatchesBruteForce);
  CPPUNIT_TEST(ClusterFragmentationIsIncremental);
  CPPUNIT_TEST(FgdScoresAndDeviceChoice);
  CPPUNIT_TEST(FgdAvoidsWhatFirstFitStrands);
  CPPUNIT_TEST(MemoisedDecisionsEqualFreshOnes);
  CPPUNIT_TEST(FgdKeepsTheTop95Percent);
  CPPUNIT_TEST(PoolSeesCpuStarvation);
  CPPUNIT_TEST_SUITE_END();

 public:
  void FragmentationByHand() {
    const uint32_t s = 1000;
    auto m = Model({Class(0, 500, 1, 0.5), Class(0, 1000, 1, 0.3), Class(4000, 0, 0, 0.2)}, s);
    auto F = [&](uint64_t cpu, std::vector<uint32_t> frees) {
      std::vector<DeviceState> d;
      for (uint32_t f : frees) d.push_back(DeviceState{0, f});
      return vgpu::NodeFragmentation(*m, cpu, d);
    };
    // Share class: the 300 and 400 left can't serve it; whole class neither;
    // CPU-only class: all 1700 idle counts.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5 * 700 + 0.3 * 700 + 0.2 * 1700, F(10000, {300, 1000, 400}), 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5 * 0 + 0.3 * 700 + 0.2 * 1700, F(10000, {700, 1000}), 1e-9);
    // No device with 1000 left: the whole class does not fit, all idle counts.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5 * 0 + 0.3 * 1300 + 0.2 * 1300, F(10000, {700, 600}), 1e-9);
    // A class needing more CPU than the node has: all idle counts.
    auto cpu_model = Model({Class(8000, 500, 1, 1.0)}, s);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1000.0, vgpu::NodeFragmentation(*cpu_model, 4000, {DeviceState{0, 1000}}), 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, vgpu::NodeFragmentation(*cpu_model, 8000, {DeviceState{0, 1000}}), 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, F(10000, {0, 0}), 1e-9);
    // Types: a class for type 1 only; a type-0 device is stranded for it.
    auto typed = Model({Class(0, 100, 1, 1.0, {1})}, s);
    std::vector<DeviceState> mixed = {DeviceState{0, 1000}, DeviceState{1, 1000}};
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1000.0, vgpu::NodeFragmentation(*typed, 0, mixed), 1e-9);
    std::vector<DeviceState> wrong = {DeviceState{0, 1000}};
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1000.0, vgpu::NodeFragmentation(*typed, 0, wrong), 1e-9);
  }

  void CacheMatchesBruteForce() {
    std::mt19937_64 rng(7);
    for (uint32_t s : {100u, 1000u}) {
      std::vector<TaskClass> classes;
      for (int i = 0; i < 12; ++i) {
        uint32_t dev = rng() % 3;
        uint32_t shares = dev == 0 ? 0 : (dev == 1 ? 1 + rng() % s : s);
        std::vector<vgpu::DeviceType> types;
        if (dev && rng() % 3 == 0) types.push_back(static_cast<vgpu::DeviceType>(rng() % 3));
        classes.push_back(Class((rng() % 16) * 1000, shares, dev, 1.0 + rng() % 5, types));
      }
      auto m = Model(classes, s);
      vgpu::FragmentationCache cache(m);
      for (int trial = 0; trial < 3000; ++trial) {
        std::vector<DeviceState> devs(rng() % 9);
        for (auto& d : devs) d = DeviceState{static_cast<vgpu::DeviceType>(rng() % 3),
                                             static_cast<uint32_t>(rng() % 4 == 0 ? s : rng() % (s + 1))};
        uint64_t cpu = (rng() % 20) * 1000;
        double brute = vgpu::NodeFragmentation(*m, cpu, devs);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(brute, cache.Peek(cpu, devs), 1e-9);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(brute, cache.Of(cpu, devs), 1e-9);
        std::reverse(devs.begin(), devs.end());  // a permutation is the same state
        CPPUNIT_ASSERT_DOUBLES_EQUAL(brute, cache.Of(cpu, devs), 1e-9);
      }
      CPPUNIT_ASSERT(cache.states() < 3000);  // repeats were hits
    }
  }

  void ClusterFragmentationIsIncremental() {
    const uint32_t s = 100;
    auto m = Model({Class(1000, 30, 1, 2), Class(2000, 100, 1, 1), Class(500, 0, 0, 1)}, s);
    ClusterState c(s);
    for (int i = 0; i < 6; ++i) c.AddNode("n" + std::to_string(i), 8000, 1000, {"t", "t", "t"});
    vgpu::ClusterFragmentation frag(m);
    frag.Reset(c);
    auto pool = Make("pool", m);
    std::mt19937_64 rng(3);
    for (int step = 0; step < 40; ++step) {
      Request r = Req(static_cast<uint32_t>(rng() % 3 == 0 ? 100 : 1 + rng() % 60), 500 + rng() % 1500);
      Placement p;
      CPPUNIT_ASSERT(pool->Place(c, r, &p).ok());
      if (!p.placed) continue;
      CPPUNIT_ASSERT(c.Apply(r, p).ok());
      frag.Update(c, p.nodes[0].node);
      double brute = 0;
      for (const auto& n : c.nodes()) brute += vgpu::NodeFragmentation(*m, n.cpu_free, n.devices);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(brute, frag.total(), 1e-6);
    }
  }

  // Two classes of weight 0.5: a 500-share one and a one-device one.
  void FgdScoresAndDeviceChoice() {
    const uint32_t s = 1000;
    auto m = Model({Class(0, 500, 1, 1), Class(0, 1000, 1, 1)}, s);
    ClusterState c(s);
    c.AddNode("x", 8000, 100, {"t", "t"});  // [1000, 1000]: F = 0
    c.AddNode("y", 8000, 100, {"t", "t"});
    Take(&c, 1, 0, 400);  // y: [600, 1000]: F = 0.5 * 600 = 300
    std::vector<double> scores;
    auto fgd = Make("fgd", m);
    CPPUNIT_ASSERT(fgd->Scores(c, Req(300), &scores).ok());
    // x: [700, 1000] -> F' = 350, int(100 sigmoid(-0.35)) = 41.
    CPPUNIT_ASSERT_EQUAL(41.0, scores[0]);
    // y: device 0 -> [300, 1000], F' = 150 + 150 = 300, score 50; device 1
    // -> [600, 700]: no whole device, F' = 0.5 * 1300 = 650, score 41.
    CPPUNIT_ASSERT_EQUAL(50.0, scores[1]);
    Placement p;
    CPPUNIT_ASSERT(fgd->Place(c, Req(300), &p).ok() && p.placed);
    CPPUNIT_ASSERT_EQUAL(1u, p.nodes[0].node);
    CPPUNIT_ASSERT_EQUAL(0u, p.nodes[0].devices[0]);
    // A one-device task on y keeps the 600 (F' = 300, 50); on x it leaves
    // [0, 1000]: F' = 0 -> int(100 sigmoid(0)) = 50 as well.
    CPPUNIT_ASSERT(fgd->Scores(c, Req(1000), &scores).ok());
    CPPUNIT_ASSERT_EQUAL(50.0, scores[0]);
    CPPUNIT_ASSERT_EQUAL(50.0, scores[1]);
  }

  // Two one-device nodes, tasks 300, 300, 700, 700 (a perfect fit): first-fit
  // stacks both 300s on one device and cannot place the last 700.
  void FgdAvoidsWhatFirstFitStrands() {
    const uint32_t s = 1000;
    auto m = Model({Class(0, 700, 1, 1), Class(0, 300, 1, 1)}, s);
    const std::vector<Request> seq = {Req(300), Req(300), Req(700), Req(700)};
    for (uint64_t seed : {1, 2, 3, 4}) {
      ClusterState a(s), b(s);
      for (ClusterState* c : {&a, &b}) {
        c->AddNode("n0", 8000, 100, {"t"});
        c->AddNode("n1", 8000, 100, {"t"});
      }
      CPPUNIT_ASSERT_EQUAL(uint64_t{1300}, Replay(Make("first-fit", m, seed).get(), &a, seq));
      CPPUNIT_ASSERT_EQUAL(uint64_t{2000}, Replay(Make("fgd", m, seed).get(), &b, seq));
      ClusterState p(s);
      p.AddNode("n0", 8000, 100, {"t"});
      p.AddNode("n1", 8000, 100, {"t"});
      CPPUNIT_ASSERT_EQUAL(uint64_t{2000}, Replay(Make("pool", m, seed).get(), &p, seq));
    }
  }

  // fgd and pool memoise verdicts per (node, request shape) on the node's
  // generation: one long-lived policy must decide exactly as a fresh one
  // (same seed) at every step.
  void MemoisedDecisionsEqualFreshOnes() {
    const uint32_t s = 100;
    std::mt19937_64 rng(11);
    std::vector<Request> shapes;
    for (int i = 0; i < 10; ++i) {
      uint32_t kind = rng() % 4;
      uint32_t shares = kind == 0 ? 0 : kind == 1 ? 1 + rng() % 99 : kind == 2 ? 100 : 200;
      shapes.push_back(Req(shares, (rng() % 6) * 1000));
    }
    shapes[3].types = {1};
    auto m = std::make_shared<const WorkloadModel>(WorkloadModel::FromRequests(shapes, s, 1.0).value());
    for (const char* name : {"fgd", "pool"}) {
      ClusterState c(s);
      for (int i = 0; i < 12; ++i)
        c.AddNode("n" + std::to_string(i), 16000 + (rng() % 4) * 8000, 1000,
                  i % 3 == 0 ? std::vector<std::string>{"a", "b", "a", "b"} : std::vector<std::string>{"a", "a"});
      auto kept = Make(name, m, 5);
      for (int step = 0; step < 150; ++step) {
        const Request& r = shapes[rng() % shapes.size()];
        Placement p1, p2;
        CPPUNIT_ASSERT(kept->Place(c, r, &p1).ok());
        CPPUNIT_ASSERT(Make(name, m, 5)->Place(c, r, &p2).ok());
        CPPUNIT_ASSERT_EQUAL(p2.placed, p1.placed);
        if (!p1.placed) continue;
        CPPUNIT_ASSERT_EQUAL(p2.nodes[0].node, p1.nodes[0].node);
        CPPUNIT_ASSERT(p2.nodes[0].devices == p1.nodes[0].devices);
        CPPUNIT_ASSERT(c.Apply(r, p1).ok());
      }
      // More request shapes than the memo keeps: it starts afresh, same decisions.
      for (uint32_t k = 0; k < vgpu::QueryIds::kMaxQueries + 100; ++k) {
        Request r = Req(k % 2 ? 1 + k % 50 : 0, 1 + k);
        Placement p1, p2;
        CPPUNIT_ASSERT(kept->Place(c, r, &p1).ok());
        CPPUNIT_ASSERT(Make(name, m, 5)->Place(c, r, &p2).ok());
        CPPUNIT_ASSERT_EQUAL(p2.placed, p1.placed);
        if (p1.placed) CPPUNIT_ASSERT_EQUAL(p2.nodes[0].node, p1.nodes[0].node);
        if (p1.placed && k % 7 == 0) CPPUNIT_ASSERT(c.Apply(r, p1).ok());
      }
    }
  }

  // fgd models the classes covering 95 % of the requests: a class outside
  // them does not change its scores.
  void FgdKeepsTheTop95Percent() {
    const uint32_t s = 1000;
    std::vector<Request> reqs(96, Req(500));
    for (int i = 0; i < 4; ++i) reqs.push_back(Req(8000, 64000));
    auto all = std::make_shared<const WorkloadModel>(WorkloadModel::FromRequests(reqs, s, 1.0).value());
    auto top = Model({Class(0, 500, 1, 1)}, s);
    ClusterState c(s);
    c.AddNode("a", 128000, 100, std::vector<std::string>(8, "t"));
    c.AddNode("b", 128000, 100, {"t", "t"});
    Take(&c, 1, 0, 200);
    std::vector<double> x, y;
    CPPUNIT_ASSERT(Make("fgd", all)->Scores(c, Req(1000), &x).ok());
    CPPUNIT_ASSERT(Make("fgd", top)->Scores(c, Req(1000), &y).ok());
    CPPUNIT_ASSERT(x == y);
  }

  // A 4-core node and a 40-core node, two devices each; a CPU-only task, then
  // four 2-core one-device tasks (a perfect fit). FGD sees no fragmentation
  // either way for the CPU-only task (each class still fits one task) and
  // leaves it to the tie order; pool sees that the small node's CPU could no
  // longer feed both its devices and never puts it there.
  void PoolSeesCpuStarvation() {
    const uint32_t s = 1000;
    std::vector<Request> seq = {Req(0, 1000), Req(1000, 2000), Req(1000, 2000), Req(1000, 2000),
                                Req(1000, 2000)};
    auto m = std::make_shared<const WorkloadModel>(WorkloadModel::FromRequests(seq, s, 1.0).value());
    int fgd_failures = 0;
    for (uint64_t seed = 0; seed < 16; ++seed) {
      for (const char* name : {"fgd", "pool"}) {
        ClusterState c(s);
        c.AddNode("small", 4000, 100, {"t", "t"});
        c.AddNode("large", 40000, 100, {"t", "t"});
        uint64_t got = Replay(Make(name, m, seed).get(), &c, seq);
        if (std::string(name) == "pool") CPPUNIT_ASSERT_EQUAL(uint64_t{4000}, got);
        else fgd_failures += got < 4000;
      }
    }
    CPPUNIT_ASSERT(fgd_failures > 0);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PlacementFgdTest);
