// The select plugin's per-job placement work, in process, on synthetic
// clusters of 1,000 to 10,000 nodes (make bench; bench/placement-scale).
//
// Per job, what select/cons_tres_pool does in slurmctld for a one-node job:
// the cluster's free state copied in (ClusterView: one SetFree per node),
// the candidate nodes ranked by the policy (RankNodes), the devices of the
// best one chosen (DeviceLevels + ChooseDevicesInOrder); the job then
// starts (Apply). Jobs are drawn from a fixed mix of shapes, some pinned to
// a type, and end at random so that the cluster stays about 70 % full. The
// workload model is built once from the mix, as slurmctld's is at most once
// a minute. Prints, per cluster size: mean, p50, p99 and worst time per job
// and the time of the ranking alone.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "placement/node_ranking.h"
#include "placement/placement.h"

namespace {

using Clock = std::chrono::steady_clock;
using vgpu::ClusterState;
using vgpu::Request;

struct Running {
  Request req;
  vgpu::Placement placement;
};

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// Nodes as in the openb trace's mix: most with 8 devices, some with 2 or 4;
// four types, one of them scarce.
ClusterState MakeCluster(size_t nodes, uint32_t s) {
  ClusterState c(s);
  const char* types[] = {"a100", "t4", "v100", "mi210"};
  for (size_t i = 0; i < nodes; ++i) {
    const size_t kind = i % 10;
    const uint32_t devices = kind < 6 ? 8 : kind < 9 ? 2 : 4;
    const char* type = types[kind < 5 ? 0 : kind < 8 ? 1 : kind < 9 ? 2 : 3];
    (void)c.AddNode("n" + std::to_string(i), 96000 + 32000 * (kind % 2), 512 * 1024,
                    std::vector<std::string>(devices, type));
  }
  return c;
}

std::vector<Request> MakeMix(const ClusterState& c, uint32_t s) {
  std::vector<Request> mix;
  auto add = [&](uint32_t shares, uint64_t cpu, const char* type, int count) {
    Request r;
    r.shares = shares;
    r.cpu_milli = cpu;
    r.memory_mib = 4096;
    if (type) r.types = c.TypesOf({type});
    for (int i = 0; i < count; ++i) mix.push_back(r);
  };
  add(s / 10, 2000, nullptr, 20);
  add(s / 4, 4000, nullptr, 15);
  add(s / 2, 6000, nullptr, 15);
  add(s, 12000, nullptr, 15);
  add(2 * s, 24000, nullptr, 5);
  add(8 * s, 64000, nullptr, 2);
  add(s / 2, 4000, "t4", 10);
  add(s, 8000, "v100", 6);
  add(s / 5, 2000, "mi210", 6);
  add(0, 8000, nullptr, 6);
  return mix;
}

void Run(size_t nodes, size_t jobs, const std::string& policy_name) {
  const uint32_t s = 100;
  ClusterState cluster = MakeCluster(nodes, s);
  const std::vector<Request> mix = MakeMix(cluster, s);
  vgpu::PolicyOptions options;
  options.workload = std::make_shared<const vgpu::WorkloadModel>(
      vgpu::WorkloadModel::FromRequests(mix, s, 1.0).value());
  auto policy = vgpu::MakePolicy(policy_name, options).value();

  std::mt19937_64 rng(42);
  std::deque<Running> running;
  std::vector<double> total_us, rank_us;
  std::vector<uint32_t> device_free;
  std::vector<std::string> types;
  ClusterState last(s);
  const std::vector<bool> candidates(nodes, true);
  for (size_t j = 0; j < jobs; ++j) {
    // End jobs until the cluster is below 70 % of its shares allocated.
    while (!running.empty() && cluster.free_shares() * 10 < cluster.total_shares() * 3) {
      const size_t k = std::uniform_int_distribution<size_t>(0, running.size() - 1)(rng);
      (void)cluster.Release(running[k].req, running[k].placement);
      running[k] = std::move(running.back());
      running.pop_back();
    }
    const Request& req = mix[std::uniform_int_distribution<size_t>(0, mix.size() - 1)(rng)];
    const auto t0 = Clock::now();
    ClusterState view(s);  // what ClusterView rebuilds from node records
    for (size_t i = 0; i < nodes; ++i) {
      const vgpu::NodeState& n = cluster.node(i);
      types.clear();
      device_free.clear();
      for (const auto& d : n.devices) {
        types.push_back(cluster.TypeName(d.type));
        device_free.push_back(d.free);
      }
      (void)view.AddNode(n.name, n.cpu_total, n.memory_total, types);
      (void)view.SetFree(i, n.cpu_free, n.memory_free, device_free);
    }
    view.KeepGenerationsOf(last);
    const auto t1 = Clock::now();
    auto order = vgpu::RankNodes(*policy, view, req, {}, candidates);
    const auto t2 = Clock::now();
    if (order.ok() && !order->empty()) {
      const uint32_t best = order->front();
      const vgpu::NodeState& n = view.node(best);
      auto levels = vgpu::DeviceLevels(n, req.types, {}, {});
      std::vector<uint32_t> devices = vgpu::ChooseDevicesInOrder(n, req, s, levels);
      Running r{req, {}};
      r.placement.placed = true;
      r.placement.nodes.push_back({best, devices, vgpu::RequestSharesPerDevice(req, s)});
      if (req.shares == 0) r.placement.nodes[0].shares_per_device = 0;
      if (cluster.Apply(req, r.placement).ok()) running.push_back(std::move(r));
    }
    last = std::move(view);
    const auto t3 = Clock::now();
    total_us.push_back(Micros(t3 - t0));
    rank_us.push_back(Micros(t2 - t1));
  }
  double mean = 0;
  for (double v : total_us) mean += v;
  mean /= static_cast<double>(total_us.size());
  std::printf("%-8s %7zu %7zu %10.1f %10.1f %10.1f %10.1f %12.1f %12.1f\n", policy_name.c_str(), nodes, jobs,
              mean, Percentile(total_us, 0.5), Percentile(total_us, 0.99), Percentile(total_us, 1.0),
              Percentile(rank_us, 0.5), Percentile(rank_us, 0.99));
}

}  // namespace

int main(int argc, char** argv) {
  const size_t jobs = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2000;
  std::printf("Per-job placement work of select/cons_tres_pool, in process, synthetic clusters (us)\n");
  std::printf("%-8s %7s %7s %10s %10s %10s %10s %12s %12s\n", "policy", "nodes", "jobs", "mean", "p50", "p99",
              "worst", "rank p50", "rank p99");
  for (const char* policy : {"pool", "fgd", "best-fit"})
    for (size_t nodes : {1000, 2000, 5000, 10000}) Run(nodes, jobs, policy);
  return 0;
}
