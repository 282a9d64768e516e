// Placement engine: request rules, cluster state, apply/release, workload
// model, registry, and the rules every policy obeys.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <memory>
#include <set>

#include "placement/placement.h"
#include "placement/placement_fgd.h"

using vgpu::ClusterState;
using vgpu::Placement;
using vgpu::PolicyOptions;
using vgpu::Request;
using vgpu::WorkloadModel;

namespace {

Request Req(uint32_t shares, uint64_t cpu = 0, uint64_t mem = 0, uint32_t nodes = 1) {
  Request r;
  r.shares = shares;
  r.cpu_milli = cpu;
  r.memory_mib = mem;
  r.node_count = nodes;
  return r;
}

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::shared_ptr<const WorkloadModel> SomeWorkload(uint32_t s) {
  std::vector<Request> reqs = {Req(s / 2, 1000), Req(s, 2000), Req(0, 4000), Req(s / 4, 1000)};
  return std::make_shared<const WorkloadModel>(WorkloadModel::FromRequests(reqs, s, 1.0).value());
}

std::unique_ptr<vgpu::PlacementPolicy> Make(const std::string& name, uint32_t s = 100, uint64_t seed = 42) {
  PolicyOptions o;
  o.seed = seed;
  o.workload = SomeWorkload(s);
  auto p = vgpu::MakePolicy(name, o);
  CPPUNIT_ASSERT_MESSAGE(p.message(), p.ok());
  return std::move(p).value();
}

}  // namespace

class PlacementTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PlacementTest);
  CPPUNIT_TEST(RequestRules);
  CPPUNIT_TEST(ClusterBuildAndTypes);
  CPPUNIT_TEST(ApplyAndRelease);
  CPPUNIT_TEST(SlicedDevicesTakeSlices);
  CPPUNIT_TEST(ApplyRejectsBadPlacements);
  CPPUNIT_TEST(EveryPolicyObeysTheRules);
  CPPUNIT_TEST(TypeConstraints);
  CPPUNIT_TEST(MultiNodeRequests);
  CPPUNIT_TEST(NeverFitsIsNotPlaced);
  CPPUNIT_TEST(InvalidRequestIsAnError);
  CPPUNIT_TEST(RegistryErrors);
  CPPUNIT_TEST(ChooseDevicesOnOneNode);
  CPPUNIT_TEST(WorkloadModelClasses);
  CPPUNIT_TEST(SnapshotKeepsGenerationsOfUnchangedNodes);
  CPPUNIT_TEST(AddNodeErrorChangesNothing);
  CPPUNIT_TEST_SUITE_END();

 public:
  void RequestRules() {
    CPPUNIT_ASSERT(vgpu::ValidateRequest(Req(0), 100).ok());
    CPPUNIT_ASSERT(vgpu::ValidateRequest(Req(1), 100).ok());
    CPPUNIT_ASSERT(vgpu::ValidateRequest(Req(100), 100).ok());
    CPPUNIT_ASSERT(vgpu::ValidateRequest(Req(300), 100).ok());
    auto bad = vgpu::ValidateRequest(Req(150), 100);
    CPPUNIT_ASSERT(!bad.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("150 shares: more than one device (S=100) must be a whole multiple of 100"),
                         bad.message());
    CPPUNIT_ASSERT(!vgpu::ValidateRequest(Req(10, 0, 0, 0), 100).ok());
    CPPUNIT_ASSERT(!vgpu::ValidateRequest(Req(10), 0).ok());
    CPPUNIT_ASSERT(!vgpu::ValidateRequest(Req(10), 70000).ok());
    CPPUNIT_ASSERT_EQUAL(0u, vgpu::RequestDevices(Req(0), 100));
    CPPUNIT_ASSERT_EQUAL(1u, vgpu::RequestDevices(Req(40), 100));
    CPPUNIT_ASSERT_EQUAL(1u, vgpu::RequestDevices(Req(100), 100));
    CPPUNIT_ASSERT_EQUAL(3u, vgpu::RequestDevices(Req(300), 100));
    CPPUNIT_ASSERT_EQUAL(40u, vgpu::RequestSharesPerDevice(Req(40), 100));
    CPPUNIT_ASSERT_EQUAL(100u, vgpu::RequestSharesPerDevice(Req(300), 100));
  }

  void ClusterBuildAndTypes() {
    ClusterState c(100);
    CPPUNIT_ASSERT(c.AddNode("a", 64000, 1024, {"NVIDIA", "nvidia", "dcu", "dcu"}).ok());
    CPPUNIT_ASSERT(c.AddNode("b", 128000, 2048, {"nvidia"}).ok());
    CPPUNIT_ASSERT(c.AddNode("cpu", 32000, 512, {}).ok());
    CPPUNIT_ASSERT(!c.AddNode("a", 1, 1, {}).ok());
    CPPUNIT_ASSERT(!c.AddNode("", 1, 1, {}).ok());
    CPPUNIT_ASSERT(!c.AddNode("x", 1, 1, {" "}).ok());
    CPPUNIT_ASSERT_EQUAL(size_t{3}, c.size());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, c.type_count());
    CPPUNIT_ASSERT_EQUAL(c.FindType("nvidia"), c.FindType("NVidia"));
    CPPUNIT_ASSERT_EQUAL(std::string("NVIDIA"), c.TypeName(c.FindType("nvidia")));
    CPPUNIT_ASSERT_EQUAL(vgpu::kUnknownType, c.FindType("ascend"));
    auto types = c.TypesOf({"dcu", "ascend"});
    CPPUNIT_ASSERT_EQUAL(size_t{2}, types.size());
    CPPUNIT_ASSERT_EQUAL(vgpu::kUnknownType, types[1]);
    CPPUNIT_ASSERT_EQUAL(uint64_t{128000}, c.max_node_cpu());
    CPPUNIT_ASSERT_EQUAL(uint64_t{400}, c.max_node_shares());
    CPPUNIT_ASSERT_EQUAL(uint64_t{500}, c.total_shares());
    CPPUNIT_ASSERT_EQUAL(uint64_t{500}, c.free_shares());
    CPPUNIT_ASSERT_EQUAL(size_t{5}, c.node(0).tasks_by_affinity.size());
    CPPUNIT_ASSERT(c.node(0).generation != c.node(1).generation);
    ClusterState bad(0);
    CPPUNIT_ASSERT(!bad.AddNode("n", 1, 1, {"x"}).ok());
  }

  // A device in two halves (a stand-in for a catalog geometry): a 10-share
  // request takes a half, so the device has 50 free, then none; slices are
  // not given back; every policy then sees what the slices leave.
  void SlicedDevicesTakeSlices() {
    struct Halves : vgpu::SliceLayout {
      std::optional<uint64_t> Take(uint64_t taken, uint32_t shares) const override {
        if (shares > 50) return taken == 0 ? std::optional<uint64_t>(3) : std::nullopt;
        if (!(taken & 1)) return taken | 1;
        if (!(taken & 2)) return taken | 2;
        return std::nullopt;
      }
      uint32_t LargestFit(uint64_t taken) const override { return taken == 0 ? 100 : taken == 3 ? 0 : 50; }
    };
    ClusterState c(100);
    c.AddNode("a", 8000, 1000, {"t", "u"});
    CPPUNIT_ASSERT(c.SliceDevices(c.FindType("t"), std::make_shared<Halves>()).ok());
    CPPUNIT_ASSERT_EQUAL(100u, c.node(0).devices[0].free);
    Request small = Req(10, 1000, 10);
    Placement p;
    p.placed = true;
    p.nodes.push_back({0, {0}, 10});
    CPPUNIT_ASSERT(c.Apply(small, p).ok());
    CPPUNIT_ASSERT_EQUAL(50u, c.node(0).devices[0].free);
    CPPUNIT_ASSERT_EQUAL(uint64_t{150}, c.free_shares());
    CPPUNIT_ASSERT_EQUAL(uint64_t{50}, c.free_shares_of(c.FindType("t")));
    CPPUNIT_ASSERT(c.Apply(small, p).ok());
    CPPUNIT_ASSERT_EQUAL(0u, c.node(0).devices[0].free);
    CPPUNIT_ASSERT(!c.Apply(small, p).ok());  // no half left
    vgpu::Status back = c.Release(small, p);
    CPPUNIT_ASSERT(!back.ok() && back.message().find("sliced") != std::string::npos);
    // The unsliced device still counts shares; a policy places there.
    for (const auto& name : vgpu::PolicyNames()) {
      PolicyOptions o;
      o.workload = std::make_shared<const WorkloadModel>(*WorkloadModel::FromRequests({small}, 100));
      auto policy = vgpu::MakePolicy(name, o);
      CPPUNIT_ASSERT_MESSAGE(name, policy.ok());
      Placement q;
      CPPUNIT_ASSERT((*policy)->Place(c, small, &q).ok());
      CPPUNIT_ASSERT_MESSAGE(name, q.placed && q.nodes[0].devices == std::vector<uint32_t>{1});
    }
    // Slicing a device in use is refused.
    CPPUNIT_ASSERT(!c.SliceDevices(c.FindType("t"), std::make_shared<Halves>()).ok());
  }

  void ApplyAndRelease() {
    ClusterState c(100);
    c.AddNode("a", 8000, 1000, {"t", "t", "t"});
    Request share = Req(30, 1000, 100);
    Placement p;
    p.placed = true;
    p.nodes.push_back({0, {1}, 30});
    const uint64_t g0 = c.node(0).generation;
    CPPUNIT_ASSERT(c.Apply(share, p).ok());
    CPPUNIT_ASSERT_EQUAL(70u, c.node(0).devices[1].free);
    CPPUNIT_ASSERT_EQUAL(uint64_t{7000}, c.node(0).cpu_free);
    CPPUNIT_ASSERT_EQUAL(uint64_t{900}, c.node(0).memory_free);
    CPPUNIT_ASSERT_EQUAL(uint64_t{270}, c.free_shares());
    CPPUNIT_ASSERT_EQUAL(1u, c.node(0).tasks_by_affinity[0]);
    CPPUNIT_ASSERT(c.node(0).generation != g0);
    Request whole = Req(200, 1000, 100);
    Placement w;
    w.placed = true;
    w.nodes.push_back({0, {0, 2}, 100});
    CPPUNIT_ASSERT(c.Apply(whole, w).ok());
    CPPUNIT_ASSERT_EQUAL(1u, c.node(0).tasks_by_affinity[2]);
    CPPUNIT_ASSERT_EQUAL(uint64_t{70}, c.free_shares());
    CPPUNIT_ASSERT(c.Release(share, p).ok());
    CPPUNIT_ASSERT(c.Release(whole, w).ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t{300}, c.free_shares());
    CPPUNIT_ASSERT_EQUAL(uint64_t{8000}, c.node(0).cpu_free);
    CPPUNIT_ASSERT_EQUAL(0u, c.node(0).tasks_by_affinity[0]);
    CPPUNIT_ASSERT(!c.Release(share, p).ok());  // nothing left to give back
  }

  void ApplyRejectsBadPlacements() {
    ClusterState c(100);
    c.AddNode("a", 8000, 1000, {"t", "u"});
    c.AddNode("b", 8000, 1000, {"t"});
    Request r = Req(60, 1000, 100);
    r.types = {c.FindType("t")};
    auto try_apply = [&](Placement p) { return c.Apply(r, p); };
    Placement none;
    CPPUNIT_ASSERT(!try_apply(none).ok());
    CPPUNIT_ASSERT(Has(try_apply({true, {{5, {0}, 60}}}).message(), "no node"));
    CPPUNIT_ASSERT(Has(try_apply({true, {{0, {1}, 60}}}).message(), "does not allow"));
    CPPUNIT_ASSERT(Has(try_apply({true, {{0, {0, 1}, 60}}}).message(), "does not match"));
    CPPUNIT_ASSERT(Has(try_apply({true, {{0, {7}, 60}}}).message(), "bad device"));
    Request two = r;
    two.node_count = 2;
    CPPUNIT_ASSERT(Has(c.Apply(two, {true, {{0, {0}, 60}, {0, {0}, 60}}}).message(), "twice"));
    CPPUNIT_ASSERT(c.Apply(r, {true, {{0, {0}, 60}}}).ok());
    CPPUNIT_ASSERT(Has(try_apply({true, {{0, {0}, 60}}}).message(), "shares free"));
    Request big = Req(10, 9000, 0);
    CPPUNIT_ASSERT(Has(c.Apply(big, {true, {{1, {0}, 10}}}).message(), "CPU or memory"));
    CPPUNIT_ASSERT_EQUAL(uint64_t{240}, c.free_shares());  // failures changed nothing
  }

  // Whatever the policy: the placement applies cleanly, a sharing request
  // takes one device, a whole request k fully free ones, CPU and memory fit.
  void EveryPolicyObeysTheRules() {
    for (const auto& name : vgpu::PolicyNames()) {
      ClusterState c(100);
      c.AddNode("small", 4000, 1000, {"t", "t"});
      c.AddNode("big", 64000, 64000, {"t", "t", "t", "t", "t", "t", "t", "t"});
      c.AddNode("nomem", 64000, 10, {"t", "t", "t", "t"});
      auto policy = Make(name);
      const Request seq[] = {Req(30, 1000, 100), Req(200, 2000, 100), Req(0, 3000, 500),
                             Req(70, 1000, 100), Req(100, 1000, 100), Req(50, 50000, 100)};
      for (const Request& r : seq) {
        Placement p;
        CPPUNIT_ASSERT_MESSAGE(name, policy->Place(c, r, &p).ok());
        CPPUNIT_ASSERT_MESSAGE(name, p.placed);
        CPPUNIT_ASSERT_EQUAL(size_t{1}, p.nodes.size());
        const auto& a = p.nodes[0];
        CPPUNIT_ASSERT_MESSAGE(name, a.node != 2 || r.memory_mib <= 10);
        CPPUNIT_ASSERT_EQUAL(vgpu::RequestDevices(r, 100), static_cast<uint32_t>(a.devices.size()));
        for (uint32_t d : a.devices) {
          uint32_t free = c.node(a.node).devices[d].free;
          CPPUNIT_ASSERT_MESSAGE(name, r.shares > 100 ? free == 100 : free >= r.shares);
        }
        CPPUNIT_ASSERT_MESSAGE(name, c.Apply(r, p).ok());
      }
    }
  }

  void TypeConstraints() {
    for (const auto& name : vgpu::PolicyNames()) {
      ClusterState c(100);
      c.AddNode("n0", 64000, 64000, {"nvidia", "nvidia", "dcu", "dcu"});
      c.AddNode("n1", 64000, 64000, {"nvidia"});
      auto policy = Make(name);
      Request r = Req(200, 1000);
      r.types = c.TypesOf({"dcu"});
      Placement p;
      CPPUNIT_ASSERT(policy->Place(c, r, &p).ok() && p.placed);
      CPPUNIT_ASSERT_EQUAL(0u, p.nodes[0].node);
      CPPUNIT_ASSERT_EQUAL(2u, p.nodes[0].devices[0]);
      CPPUNIT_ASSERT_EQUAL(3u, p.nodes[0].devices[1]);
      CPPUNIT_ASSERT(c.Apply(r, p).ok());
      CPPUNIT_ASSERT(policy->Place(c, r, &p).ok());
      CPPUNIT_ASSERT_MESSAGE(name, !p.placed);  // no dcu left
      r.types = c.TypesOf({"ascend"});  // a model no node has
      r.shares = 10;
      CPPUNIT_ASSERT(policy->Place(c, r, &p).ok());
      CPPUNIT_ASSERT(!p.placed);
      r.types = c.TypesOf({"ascend", "nvidia"});
      CPPUNIT_ASSERT(policy->Place(c, r, &p).ok() && p.placed);
      CPPUNIT_ASSERT_EQUAL(c.FindType("nvidia"), c.node(p.nodes[0].node).devices[p.nodes[0].devices[0]].type);
    }
  }

  void MultiNodeRequests() {
    for (const auto& name : vgpu::PolicyNames()) {
      ClusterState c(100);
      for (int i = 0; i < 4; ++i) c.AddNode("n" + std::to_string(i), 8000, 1000, {"t", "t"});
      auto policy = Make(name);
      Request r = Req(150 - 50, 1000, 100, 3);  // one whole device on each of 3 nodes
      Placement p;
      CPPUNIT_ASSERT(policy->Place(c, r, &p).ok() && p.placed);
      CPPUNIT_ASSERT_EQUAL(size_t{3}, p.nodes.size());
      std::set<uint32_t> nodes;
      for (const auto& a : p.nodes) nodes.insert(a.node);
      CPPUNIT_ASSERT_EQUAL(size_t{3}, nodes.size());
      CPPUNIT_ASSERT(c.Apply(r, p).ok());
      Request wide = Req(200, 1000, 100, 3);  // two devices on 3 nodes: only one node has both
      CPPUNIT_ASSERT(policy->Place(c, wide, &p).ok());
      CPPUNIT_ASSERT_MESSAGE(name, !p.placed);
      Request all = Req(0, 1000, 100, 4);
      CPPUNIT_ASSERT(policy->Place(c, all, &p).ok() && p.placed);
      CPPUNIT_ASSERT_EQUAL(size_t{4}, p.nodes.size());
      CPPUNIT_ASSERT(c.Apply(all, p).ok());
      CPPUNIT_ASSERT(c.Release(all, p).ok());
    }
  }

  void NeverFitsIsNotPlaced() {
    for (const auto& name : vgpu::PolicyNames()) {
      ClusterState c(100);
      c.AddNode("n", 8000, 1000, {"t", "t"});
      auto policy = Make(name);
      Placement p;
      p.placed = true;
      p.nodes.resize(1);
      for (const Request& r : {Req(300), Req(10, 9000), Req(10, 0, 2000), Req(10, 0, 0, 2)}) {
        CPPUNIT_ASSERT(policy->Place(c, r, &p).ok());
        CPPUNIT_ASSERT_MESSAGE(name, !p.placed);
        CPPUNIT_ASSERT(p.nodes.empty());
      }
      ClusterState empty(100);
      CPPUNIT_ASSERT(policy->Place(empty, Req(10), &p).ok());
      CPPUNIT_ASSERT(!p.placed);
    }
  }

  void InvalidRequestIsAnError() {
    ClusterState c(100);
    c.AddNode("n", 8000, 1000, {"t", "t"});
    for (const auto& name : vgpu::PolicyNames()) {
      Placement p;
      auto st = Make(name)->Place(c, Req(150), &p);
      CPPUNIT_ASSERT(!st.ok());
      CPPUNIT_ASSERT(Has(st.message(), "whole multiple of 100"));
      CPPUNIT_ASSERT(!p.placed);
    }
    auto fgd = Make("fgd", 1000);  // a workload built for another S
    Placement p;
    auto st = fgd->Place(c, Req(10), &p);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT(Has(st.message(), "1000 shares per device"));
  }

  // The select plugin's device choice on a node cons_tres picked.
  void ChooseDevicesOnOneNode() {
    vgpu::NodeState n;
    for (uint32_t f : {40u, 100u, 60u, 100u}) n.devices.push_back({0, f});
    n.devices.push_back({1, 100});  // a type the request may not use
    vgpu::Request r;
    r.types = {0};
    r.shares = 50;  // tightest that fits: device 2 (60 free)
    CPPUNIT_ASSERT(vgpu::ChooseDevicesOnNode(n, r, 100) == std::vector<uint32_t>({2}));
    r.shares = 30;  // device 0 (40 free)
    CPPUNIT_ASSERT(vgpu::ChooseDevicesOnNode(n, r, 100) == std::vector<uint32_t>({0}));
    r.shares = 200;  // two whole devices, lowest index, allowed type only
    CPPUNIT_ASSERT(vgpu::ChooseDevicesOnNode(n, r, 100) == std::vector<uint32_t>({1, 3}));
    r.shares = 300;  // only two allowed devices are fully free
    CPPUNIT_ASSERT(vgpu::ChooseDevicesOnNode(n, r, 100).empty());
    r.shares = 150;  // not a whole number of devices
    CPPUNIT_ASSERT(vgpu::ChooseDevicesOnNode(n, r, 100).empty());
    r.types.clear();  // any type: the fifth device counts too
    r.shares = 300;
    CPPUNIT_ASSERT(vgpu::ChooseDevicesOnNode(n, r, 100) == std::vector<uint32_t>({1, 3, 4}));
    for (auto& d : n.devices) d.free = 10;
    r.shares = 20;  // 50 free in all, but no device has 20
    CPPUNIT_ASSERT(vgpu::ChooseDevicesOnNode(n, r, 100).empty());
  }

  void RegistryErrors() {
    PolicyOptions o;
    auto bad = vgpu::MakePolicy("tetris", o);
    CPPUNIT_ASSERT(!bad.ok());
    for (const auto& name : vgpu::PolicyNames()) CPPUNIT_ASSERT(Has(bad.message(), name));
    CPPUNIT_ASSERT(Has(vgpu::MakePolicy("fgd", o).message(), "needs a workload"));
    CPPUNIT_ASSERT(Has(vgpu::MakePolicy("pool", o).message(), "needs a workload"));
    CPPUNIT_ASSERT(vgpu::MakePolicy(" First-Fit ", o).ok());
    o.workload = SomeWorkload(100);
    CPPUNIT_ASSERT(Has(vgpu::MakePolicy("best-fit:x=1", o).message(), "takes no parameters"));
    CPPUNIT_ASSERT(Has(vgpu::MakePolicy("pool:x=1", o).message(), "keys are"));
    CPPUNIT_ASSERT(Has(vgpu::MakePolicy("pool:cpu=-1", o).message(), ">= 0"));
    CPPUNIT_ASSERT(Has(vgpu::MakePolicy("pool:cpu", o).message(), "KEY=NUMBER"));
    auto tuned = vgpu::MakePolicy("pool:cpu=0.5,resolution=10", o);
    CPPUNIT_ASSERT(tuned.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("pool"), (*tuned)->name());
    auto params = vgpu::ParsePoolParams("cpu=0.5, used=2,reserve=0.75");
    CPPUNIT_ASSERT(params.ok());
    CPPUNIT_ASSERT_EQUAL(0.5, params->cpu_weight);
    CPPUNIT_ASSERT_EQUAL(2.0, params->used_bonus_milli);
    CPPUNIT_ASSERT_EQUAL(0.75, params->reserve);
    CPPUNIT_ASSERT_EQUAL(std::string("resolution=1,cpu=0.5,cpu_ratio=1,used=2,coverage=1,reserve=0.75"),
                         vgpu::FormatPoolParams(*params));
    CPPUNIT_ASSERT_EQUAL(std::string("pool"), std::string(vgpu::kDefaultPolicy));
  }

  // slurmctld rebuilds its snapshot per decision: nodes that did not change
  // keep their generation (policies' memos stay valid), changed ones not.
  void SnapshotKeepsGenerationsOfUnchangedNodes() {
    auto snapshot = [](uint32_t free1) {
      ClusterState c(100);
      c.AddNode("n0", 8000, 1000, {"a", "a"});
      c.AddNode("n1", 8000, 1000, {"a", "b"});
      CPPUNIT_ASSERT(c.SetFree(1, 4000, 1000, {free1, 100}).ok());
      return c;
    };
    const ClusterState before = snapshot(40);
    ClusterState same = snapshot(40), changed = snapshot(30);
    same.KeepGenerationsOf(before);
    changed.KeepGenerationsOf(before);
    CPPUNIT_ASSERT_EQUAL(before.node(0).generation, same.node(0).generation);
    CPPUNIT_ASSERT_EQUAL(before.node(1).generation, same.node(1).generation);
    CPPUNIT_ASSERT_EQUAL(before.node(0).generation, changed.node(0).generation);
    CPPUNIT_ASSERT(before.node(1).generation != changed.node(1).generation);
    // A policy that memoised `before` scores the changed node afresh.
    std::vector<Request> seen = {Req(30), Req(100)};
    vgpu::PolicyOptions o;
    o.workload = std::make_shared<const vgpu::WorkloadModel>(vgpu::WorkloadModel::FromRequests(seen, 100).value());
    auto pool = vgpu::MakePolicy("pool", o).value();
    auto fresh = vgpu::MakePolicy("pool", o).value();
    std::vector<double> x, y;
    CPPUNIT_ASSERT(pool->Scores(before, Req(30), &x).ok());
    CPPUNIT_ASSERT(pool->Scores(changed, Req(30), &x).ok());
    CPPUNIT_ASSERT(fresh->Scores(changed, Req(30), &y).ok());
    CPPUNIT_ASSERT(x == y);
  }

  void AddNodeErrorChangesNothing() {
    ClusterState c(100);
    CPPUNIT_ASSERT(c.AddNode("n0", 8000, 1000, {"a"}).ok());
    CPPUNIT_ASSERT(!c.AddNode("n1", 8000, 1000, {"b", " "}).ok());
    CPPUNIT_ASSERT(!c.AddNode("n0", 8000, 1000, {"a"}).ok());
    CPPUNIT_ASSERT_EQUAL(size_t{1}, c.size());
    CPPUNIT_ASSERT_EQUAL(size_t{1}, c.type_count());
    CPPUNIT_ASSERT_EQUAL(uint64_t{100}, c.total_shares());
    CPPUNIT_ASSERT_EQUAL(uint64_t{100}, c.total_shares_of(0));
    CPPUNIT_ASSERT(c.AddNode("n1", 8000, 1000, {"b", "B"}).ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t{200}, c.total_shares_of(c.FindType("b")));
  }

  void WorkloadModelClasses() {
    const uint32_t s = 100;
    std::vector<Request> reqs;
    for (int i = 0; i < 50; ++i) reqs.push_back(Req(30, 1000, i));  // memory is not a class key
    for (int i = 0; i < 30; ++i) reqs.push_back(Req(200, 4000));
    for (int i = 0; i < 15; ++i) reqs.push_back(Req(0, 2000));
    for (int i = 0; i < 5; ++i) reqs.push_back(Req(100, 8000));
    auto all = WorkloadModel::FromRequests(reqs, s, 1.0);
    CPPUNIT_ASSERT(all.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{4}, all->classes().size());
    CPPUNIT_ASSERT_EQUAL(size_t{4}, all->distinct_classes());
    const auto& c0 = all->classes()[0];
    CPPUNIT_ASSERT_EQUAL(30u, c0.shares);
    CPPUNIT_ASSERT_EQUAL(1u, c0.devices);
    CPPUNIT_ASSERT_EQUAL(uint64_t{50}, c0.count);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, c0.weight, 1e-12);
    CPPUNIT_ASSERT_EQUAL(100u, all->classes()[1].shares);  // 200 shares = 2 whole devices
    CPPUNIT_ASSERT_EQUAL(2u, all->classes()[1].devices);
    // 95 %: 50 + 30 + 15 = 95 of 100 tasks, renormalised over 95.
    auto top = WorkloadModel::FromRequests(reqs, s, 0.95);
    CPPUNIT_ASSERT_EQUAL(size_t{3}, top->classes().size());
    CPPUNIT_ASSERT_EQUAL(size_t{4}, top->distinct_classes());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(50.0 / 95, top->classes()[0].weight, 1e-12);
    CPPUNIT_ASSERT_EQUAL(size_t{3}, all->Top(0.95).classes().size());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(15.0 / 95, all->Top(0.95).classes()[2].weight, 1e-12);
    // Equal counts: the larger class first (the authors' order).
    auto tie = WorkloadModel::FromRequests({Req(10, 1000), Req(10, 2000)}, s, 0.5);
    CPPUNIT_ASSERT_EQUAL(size_t{1}, tie->classes().size());
    CPPUNIT_ASSERT_EQUAL(uint64_t{2000}, tie->classes()[0].cpu_milli);
    CPPUNIT_ASSERT(!WorkloadModel::FromRequests({}, s).ok());
    CPPUNIT_ASSERT(!WorkloadModel::FromRequests({Req(150)}, s).ok());
    vgpu::TaskClass bad;
    bad.shares = 10;  // shares without devices
    bad.weight = 1;
    CPPUNIT_ASSERT(!WorkloadModel::FromClasses({bad}, s).ok());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PlacementTest);
