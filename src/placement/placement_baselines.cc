// The scoring framework and the baseline policies: first-fit, least-loaded,
// and the baselines of Weng et al. (ATC '23) exactly as
// shared/traces/alibaba-openb-2023/METHOD.md defines them: best-fit,
// dot-product, gpu-packing, gpu-clustering, random-fit. Their constants
// 128000 (CPU) and 8000 (GPU milli) are the cluster's largest node CPU and
// share count, which are those numbers on openb at S=1000. Scores are the
// authors' integers, so ties are frequent and go to the seed's node order.
#include <algorithm>
#include <limits>

#include "placement/placement_internal.h"

namespace vgpu {

// ---- Shared helpers --------------------------------------------------------

bool NodeFits(const NodeState& n, const Shape& sh) {
  const Request& r = *sh.req;
  if (n.cpu_free < r.cpu_milli || n.memory_free < r.memory_mib) return false;
  if (sh.k == 0) return true;
  uint32_t found = 0;
  for (const auto& d : n.devices) {
    if (d.free < sh.per || !sh.Allowed(d.type)) continue;
    if (++found >= sh.k) return true;
  }
  return false;
}

uint64_t AllowedFreeShares(const NodeState& n, const Shape& sh) {
  uint64_t sum = 0;
  for (const auto& d : n.devices)
    if (sh.Allowed(d.type)) sum += d.free;
  return sum;
}

int TightestDevice(const NodeState& n, const Shape& sh) {
  int best = -1;
  for (size_t i = 0; i < n.devices.size(); ++i) {
    const auto& d = n.devices[i];
    if (d.free < sh.per || !sh.Allowed(d.type)) continue;
    if (best < 0 || d.free < n.devices[best].free) best = static_cast<int>(i);
  }
  return best;
}

int LowestDevice(const NodeState& n, const Shape& sh) {
  for (size_t i = 0; i < n.devices.size(); ++i)
    if (n.devices[i].free >= sh.per && sh.Allowed(n.devices[i].type)) return static_cast<int>(i);
  return -1;
}

int LoosestDevice(const NodeState& n, const Shape& sh) {
  int best = -1;
  for (size_t i = 0; i < n.devices.size(); ++i) {
    const auto& d = n.devices[i];
    if (d.free < sh.per || !sh.Allowed(d.type)) continue;
    if (best < 0 || d.free > n.devices[best].free) best = static_cast<int>(i);
  }
  return best;
}

void LowestFreeDevices(const NodeState& n, const Shape& sh, std::vector<uint32_t>* out) {
  out->clear();
  for (size_t i = 0; i < n.devices.size() && out->size() < sh.k; ++i)
    if (n.devices[i].free == sh.s && sh.Allowed(n.devices[i].type))
      out->push_back(static_cast<uint32_t>(i));
}

void AssignNode(const NodeState& n, uint32_t i, const Shape& sh, int device, NodeAssignment* a) {
  a->node = i;
  a->shares_per_device = sh.k ? sh.per : 0;
  a->devices.clear();
  if (sh.k == 0) return;
  if (sh.sharing()) {
    if (device < 0) device = TightestDevice(n, sh);
    a->devices.push_back(static_cast<uint32_t>(device));
  } else {
    LowestFreeDevices(n, sh, &a->devices);
  }
}

// ---- Scoring framework -----------------------------------------------------

void ScoringPolicy::EnsureRank(size_t nodes) {
  if (rank_.size() == nodes) return;
  std::vector<uint32_t> perm(nodes);
  for (size_t i = 0; i < nodes; ++i) perm[i] = static_cast<uint32_t>(i);
  for (size_t i = nodes; i > 1; --i) {  // Fisher-Yates
    size_t j = std::uniform_int_distribution<size_t>(0, i - 1)(rng_);
    std::swap(perm[i - 1], perm[j]);
  }
  rank_.assign(nodes, 0);
  for (size_t pos = 0; pos < nodes; ++pos) rank_[perm[pos]] = static_cast<uint32_t>(pos);
}

Status ScoringPolicy::Prepare(const ClusterState& c, const Request& req, Shape* sh) {
  const uint32_t s = c.shares_per_device();
  Status valid = ValidateRequest(req, s);
  if (!valid.ok()) return valid;
  *sh = Shape{&req, s, RequestDevices(req, s), RequestSharesPerDevice(req, s)};
  EnsureRank(c.size());
  return Begin(c, *sh);
}

Status ScoringPolicy::Scores(const ClusterState& c, const Request& req, std::vector<double>* out) {
  out->assign(c.size(), std::numeric_limits<double>::quiet_NaN());
  Shape sh;
  Status ok = Prepare(c, req, &sh);
  if (!ok.ok()) return ok;
  for (uint32_t i = 0; i < c.size(); ++i) {
    int device = -1;
    if (NodeFits(c.node(i), sh)) (*out)[i] = Score(c, i, sh, &device);
  }
  return Status::Ok();
}

Status ScoringPolicy::Place(const ClusterState& c, const Request& req, Placement* out) {
  out->Clear();
  Shape sh;
  Status ok = Prepare(c, req, &sh);
  if (!ok.ok()) return ok;

  auto better = [](const Candidate& a, const Candidate& b) {
    return a.score > b.score || (a.score == b.score && a.rank < b.rank);
  };
  const uint32_t want = req.node_count;
  scratch_.clear();
  Candidate best{0, 0, 0, -1};
  bool have = false;
  for (uint32_t i = 0; i < c.size(); ++i) {
    if (!NodeFits(c.node(i), sh)) continue;
    Candidate cand{0, rank_[i], i, -1};
    cand.score = Score(c, i, sh, &cand.device);
    if (want == 1) {
      if (!have || better(cand, best)) best = cand;
      have = true;
    } else {
      scratch_.push_back(cand);
    }
  }
  if (want == 1) {
    if (!have) return Status::Ok();
    scratch_.push_back(best);
  } else {
    if (scratch_.size() < want) return Status::Ok();
    std::partial_sort(scratch_.begin(), scratch_.begin() + want, scratch_.end(), better);
    scratch_.resize(want);
  }
  out->nodes.resize(want);
  for (uint32_t j = 0; j < want; ++j)
    AssignNode(c.node(scratch_[j].node), scratch_[j].node, sh, scratch_[j].device, &out->nodes[j]);
  out->placed = true;
  return Status::Ok();
}

namespace {

uint64_t NodeFreeShares(const NodeState& n) { return n.FreeShares(); }

// ---- first-fit: node order, then the lowest-index device (Slurm shard) ----
class FirstFit : public ScoringPolicy {
 public:
  explicit FirstFit(uint64_t seed) : ScoringPolicy("first-fit", seed) {}

 protected:
  double Score(const ClusterState& c, uint32_t i, const Shape& sh, int* device) override {
    if (sh.sharing()) *device = LowestDevice(c.node(i), sh);
    return -static_cast<double>(i);
  }
};

// ---- least-loaded: most free shares, then the loosest device (worst-fit) --
class LeastLoaded : public ScoringPolicy {
 public:
  explicit LeastLoaded(uint64_t seed) : ScoringPolicy("least-loaded", seed) {}

 protected:
  double Score(const ClusterState& c, uint32_t i, const Shape& sh, int* device) override {
    if (sh.sharing()) *device = LoosestDevice(c.node(i), sh);
    return static_cast<double>(AllowedFreeShares(c.node(i), sh));
  }
};

// ---- best-fit (best_fit_score.go) ------------------------------------------
class BestFit : public ScoringPolicy {
 public:
  explicit BestFit(uint64_t seed) : ScoringPolicy("best-fit", seed) {}

 protected:
  double Score(const ClusterState& c, uint32_t i, const Shape& sh, int*) override {
    const NodeState& n = c.node(i);
    const double max_cpu = static_cast<double>(c.max_node_cpu());
    const double max_gpu = static_cast<double>(c.max_node_shares());
    double score = 0;  // the authors' order of operations
    if (max_cpu > 0) score += static_cast<double>(n.cpu_free - sh.req->cpu_milli) / max_cpu * 0.5;
    if (max_gpu > 0)
      score += static_cast<double>(NodeFreeShares(n) - uint64_t{sh.k} * sh.per) / max_gpu * 0.5;
    score = (1.0 - score) * 100.0;
    return static_cast<double>(static_cast<int64_t>(score));
  }
};

// ---- dot-product (dot_product_score.go, merge + max) ----------------------
class DotProduct : public ScoringPolicy {
 public:
  explicit DotProduct(uint64_t seed) : ScoringPolicy("dot-product", seed) {}

 protected:
  double Score(const ClusterState& c, uint32_t i, const Shape& sh, int*) override {
    const NodeState& n = c.node(i);
    const double max_cpu = static_cast<double>(c.max_node_cpu());
    const double max_gpu = static_cast<double>(c.max_node_shares());
    auto norm = [](double v, double m) { return m > 0 ? v / m : 0.0; };
    double inner = 0;
    inner += norm(static_cast<double>(n.cpu_free), max_cpu) *
             norm(static_cast<double>(sh.req->cpu_milli), max_cpu);
    inner += norm(static_cast<double>(NodeFreeShares(n)), max_gpu) *
             norm(static_cast<double>(uint64_t{sh.k} * sh.per), max_gpu);
    double score = 1 - inner / 2;
    return static_cast<double>(static_cast<int64_t>(100.0 * score));
  }
};

// ---- gpu-packing (gpu_packing_score.go) -------------------------------------
class GpuPacking : public ScoringPolicy {
 public:
  explicit GpuPacking(uint64_t seed) : ScoringPolicy("gpu-packing", seed) {}

 protected:
  double Score(const ClusterState& c, uint32_t i, const Shape& sh, int*) override {
    if (sh.k == 0) return 0;
    const NodeState& n = c.node(i);
    int64_t fully_free = 0;
    for (const auto& d : n.devices) fully_free += d.free == sh.s;
    const int64_t count = static_cast<int64_t>(n.devices.size());
    if (fully_free == count) return static_cast<double>(std::max<int64_t>(33 - fully_free, fully_free));
    // Take devices least-free first (stable), as the authors' scorer does.
    order_.resize(n.devices.size());
    for (size_t d = 0; d < order_.size(); ++d) order_[d] = static_cast<uint32_t>(d);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](uint32_t a, uint32_t b) { return n.devices[a].free < n.devices[b].free; });
    uint32_t need = sh.k;
    int64_t fresh = 0, idle_pct = 0;
    for (uint32_t d : order_) {
      if (need == 0) break;
      const auto& dev = n.devices[d];
      if (dev.free < sh.per || !sh.Allowed(dev.type)) continue;
      --need;
      fresh += dev.free == sh.s;
      idle_pct += static_cast<int64_t>(dev.free) * 100 / sh.s;
    }
    if (fresh > 0) return static_cast<double>(std::max<int64_t>(50 - fresh, 33));
    return static_cast<double>(std::max<int64_t>(100 - idle_pct / 10, 50));
  }

 private:
  std::vector<uint32_t> order_;
};

// ---- gpu-clustering (gpu_clustering_score.go) -------------------------------
class GpuClustering : public ScoringPolicy {
 public:
  explicit GpuClustering(uint64_t seed) : ScoringPolicy("gpu-clustering", seed) {}

 protected:
  double Score(const ClusterState& c, uint32_t i, const Shape& sh, int*) override {
    if (sh.k == 0) return 0;
    const NodeState& n = c.node(i);
    const int64_t max_gpu = static_cast<int64_t>(c.max_node_shares());
    const int64_t used = max_gpu - static_cast<int64_t>(NodeFreeShares(n));
    int64_t score = max_gpu > 0 ? 25 * used / max_gpu : 0;
    const uint32_t mine = AffinityOf(*sh.req, sh.s);
    size_t labels = 0;
    for (uint32_t t : n.tasks_by_affinity) labels += t > 0;
    if (mine < n.tasks_by_affinity.size() && n.tasks_by_affinity[mine] > 0)
      score += labels == 1 ? 75 : 50;
    else if (labels == 0)
      score += 25;
    return static_cast<double>(score);
  }
};

// ---- random-fit (random_score.go): a random node that fits, random device --
class RandomFit : public ScoringPolicy {
 public:
  explicit RandomFit(uint64_t seed) : ScoringPolicy("random-fit", seed) {}

 protected:
  double Score(const ClusterState& c, uint32_t i, const Shape& sh, int* device) override {
    if (sh.sharing()) {
      const NodeState& n = c.node(i);
      int seen = 0;
      for (size_t d = 0; d < n.devices.size(); ++d) {
        if (n.devices[d].free < sh.per || !sh.Allowed(n.devices[d].type)) continue;
        if (std::uniform_int_distribution<int>(0, seen)(rng_) == 0) *device = static_cast<int>(d);
        ++seen;
      }
    }
    // Independent uniform keys: the best node_count are a uniform sample.
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  }
};

}  // namespace

std::unique_ptr<PlacementPolicy> MakeFirstFit(const PolicyOptions& o) {
  return std::make_unique<FirstFit>(o.seed);
}
std::unique_ptr<PlacementPolicy> MakeLeastLoaded(const PolicyOptions& o) {
  return std::make_unique<LeastLoaded>(o.seed);
}
std::unique_ptr<PlacementPolicy> MakeBestFit(const PolicyOptions& o) {
  return std::make_unique<BestFit>(o.seed);
}
std::unique_ptr<PlacementPolicy> MakeDotProduct(const PolicyOptions& o) {
  return std::make_unique<DotProduct>(o.seed);
}
std::unique_ptr<PlacementPolicy> MakeGpuPacking(const PolicyOptions& o) {
  return std::make_unique<GpuPacking>(o.seed);
}
std::unique_ptr<PlacementPolicy> MakeGpuClustering(const PolicyOptions& o) {
  return std::make_unique<GpuClustering>(o.seed);
}
std::unique_ptr<PlacementPolicy> MakeRandomFit(const PolicyOptions& o) {
  return std::make_unique<RandomFit>(o.seed);
}

}  // namespace vgpu
