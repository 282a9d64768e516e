// Replays a trace through the placement engine (see sim_run.h).
#include "sim_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

#include "placement/placement_fgd.h"

namespace vgpu::sim {

Result<Request> TaskRequest(const TraceTask& t, const ClusterState& cluster, uint32_t s) {
  Request r;
  r.cpu_milli = t.cpu_milli;
  r.memory_mib = t.memory_mib;
  if (t.num_gpu == 0) {
    if (t.gpu_milli != 0)
      return Result<Request>::Error("task " + t.name + ": gpu_milli " + std::to_string(t.gpu_milli) +
                                    " without a GPU (num_gpu = 0)");
  } else if (t.num_gpu == 1 && t.gpu_milli > 0 && t.gpu_milli < 1000) {
    r.shares = static_cast<uint32_t>((uint64_t{t.gpu_milli} * s + 999) / 1000);
  } else if (t.gpu_milli == 1000) {
    r.shares = t.num_gpu * s;
  } else {
    return Result<Request>::Error("task " + t.name + ": num_gpu " + std::to_string(t.num_gpu) +
                                  " with gpu_milli " + std::to_string(t.gpu_milli) +
                                  " (a share of one GPU, or whole GPUs with gpu_milli 1000)");
  }
  if (r.shares > 0) r.types = cluster.TypesOf(t.gpu_spec);
  return r;
}

Result<SimTrace> PrepareTrace(const std::vector<TraceNode>& nodes,
                              const std::vector<TraceTask>& tasks, uint32_t s, double coverage) {
  SimTrace trace{ClusterState(s), {}, {}, {}, nullptr, nullptr};
  for (const auto& n : nodes) {
    std::vector<std::string> types(n.gpus, n.model.empty() ? std::string("gpu") : n.model);
    Status ok = trace.cluster.AddNode(n.name, n.cpu_milli, n.memory_mib, types);
    if (!ok.ok()) return ok;
  }
  if (trace.cluster.size() == 0) return Result<SimTrace>::Error("the node list has no node");
  if (trace.cluster.total_shares() == 0) return Result<SimTrace>::Error("the node list has no GPU");
  uint64_t demand = 0;
  for (const auto& t : tasks) {
    Result<Request> r = TaskRequest(t, trace.cluster, s);
    if (!r.ok()) return r.status();
    Status valid = ValidateRequest(*r, s);
    if (!valid.ok()) return Status::Error("task " + t.name + ": " + valid.message());
    demand += r->shares;
    trace.requests.push_back(std::move(r).value());
    trace.names.push_back(t.name);
    trace.demand_milli.push_back(uint64_t{t.num_gpu} * t.gpu_milli);
  }
  if (demand == 0)
    return Result<SimTrace>::Error("the pod list asks for no GPU: arrived demand would never grow");
  Result<WorkloadModel> m = WorkloadModel::FromRequests(trace.requests, s, coverage);
  if (!m.ok()) return m.status();
  trace.workload = std::make_shared<const WorkloadModel>(std::move(m).value());
  trace.frag_model = std::make_shared<const WorkloadModel>(trace.workload->Top(kFgdCoverage));
  return trace;
}

Result<RunResult> RunOne(const SimTrace& trace, const std::string& policy_name, uint64_t seed,
                         uint32_t stop_percent) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  PolicyOptions opt;
  opt.seed = seed;
  opt.workload = trace.workload;
  auto made = MakePolicy(policy_name, opt);
  if (!made.ok()) return made.status();
  std::unique_ptr<PlacementPolicy> policy = std::move(made).value();

  ClusterState cluster = trace.cluster;
  ClusterFragmentation frag(trace.frag_model);
  frag.Reset(cluster);
  // GPU-milli: every device holds 1000 whatever S is.
  const uint64_t capacity = cluster.total_shares() / cluster.shares_per_device() * 1000;
  RunResult out;
  out.policy = policy_name;
  out.seed = seed;
  out.curve.assign(stop_percent + 1, CurvePoint{});
  std::vector<double> sum(stop_percent + 2, 0.0);
  std::vector<uint64_t> count(stop_percent + 2, 0);
  out.latency_ns.reserve(16384);

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, trace.requests.size() - 1);
  uint64_t arrived = 0, allocated = 0;
  uint32_t next = 0;  // next percent of the curve to fill
  Placement placement;
  while (true) {
    const size_t task = pick(rng);
    const Request& r = trace.requests[task];
    const uint64_t asked = trace.demand_milli[task];
    arrived += asked;
    const auto t0 = Clock::now();
    Status st = policy->Place(cluster, r, &placement);
    const auto t1 = Clock::now();
    if (!st.ok()) return Status::Error(policy_name + ": " + st.message());
    out.latency_ns.push_back(static_cast<uint32_t>(
        std::min<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count(),
                          std::numeric_limits<uint32_t>::max())));
    ++out.tasks;
    if (placement.placed) {
      Status applied = cluster.Apply(r, placement);
      if (!applied.ok()) return Status::Error(policy_name + " chose an impossible placement: " + applied.message());
      allocated += asked;
      for (const auto& a : placement.nodes) frag.Update(cluster, a.node);
    } else {
      ++out.failed;
    }
    const double cap = static_cast<double>(capacity);
    const double unalloc = 100.0 * static_cast<double>(capacity - allocated) / cap;
    const double arrived_pct = 100.0 * static_cast<double>(arrived) / cap;
    while (next <= stop_percent && arrived * 100 >= uint64_t{next} * capacity) {
      CurvePoint& p = out.curve[next++];
      p.reached = true;
      p.unallocated_pct = unalloc;
      p.allocation_pct = arrived ? 100.0 * static_cast<double>(allocated) / static_cast<double>(arrived) : 100.0;
      const double idle = static_cast<double>(cluster.free_shares());
      p.frag_rate_pct = idle > 0 ? 100.0 * frag.total() / idle : 0.0;
      p.frag_pct = 100.0 * frag.total() / cap;
    }
    const double bucket = std::round(arrived_pct);
    if (bucket <= stop_percent + 1) {
      sum[static_cast<size_t>(bucket)] += unalloc;
      ++count[static_cast<size_t>(bucket)];
    }
    if (arrived * 100 >= uint64_t{stop_percent} * capacity) {
      out.arrived_pct = arrived_pct;
      out.unallocated_pct = unalloc;
      break;
    }
  }
  out.authors_unallocated_pct.resize(stop_percent + 1);
  for (uint32_t p = 0; p <= stop_percent; ++p)
    out.authors_unallocated_pct[p] =
        count[p] ? sum[p] / static_cast<double>(count[p]) : std::numeric_limits<double>::quiet_NaN();
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

Result<std::vector<RunResult>> RunAll(const SimTrace& trace, const SimOptions& options) {
  using R = Result<std::vector<RunResult>>;
  if (options.policies.empty() || options.seeds.empty()) return R::Error("nothing to run");
  for (const auto& p : options.policies) {  // fail fast on a bad name
    PolicyOptions o;
    o.workload = trace.workload;
    auto made = MakePolicy(p, o);
    if (!made.ok()) return made.status();
  }
  struct Job {
    size_t slot;
    const std::string* policy;
    uint64_t seed;
  };
  std::vector<Job> jobs;
  for (size_t p = 0; p < options.policies.size(); ++p)
    for (size_t s = 0; s < options.seeds.size(); ++s)
      jobs.push_back(Job{p * options.seeds.size() + s, &options.policies[p], options.seeds[s]});
  // The slow policies first, so that the threads finish together.
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    auto slow = [](const std::string& n) { return n == "fgd" || n == "pool"; };
    return slow(*a.policy) && !slow(*b.policy);
  });

  unsigned threads = options.threads ? options.threads : std::thread::hardware_concurrency();
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(jobs.size())));
  std::vector<RunResult> results(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first_error;
  auto work = [&] {
    for (size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      Result<RunResult> r = RunOne(trace, *jobs[j].policy, jobs[j].seed, options.stop_percent);
      if (!r.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = r.status();
        next = jobs.size();
        return;
      }
      results[jobs[j].slot] = std::move(r).value();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (!first_error.ok()) return first_error;
  return results;
}

}  // namespace vgpu::sim
