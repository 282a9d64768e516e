// Fragmentation measure, its caches, and the fgd policy (fgd_score.go as
// METHOD.md describes it).
#include "placement/placement_fgd.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

#include "placement/placement_internal.h"

namespace vgpu {

// ---- Node keys and F -------------------------------------------------------

void MakeNodeKey(uint64_t cpu_free, const std::vector<DeviceState>& devices, NodeKey* out) {
  out->resize(2 + devices.size());
  (*out)[0] = static_cast<uint32_t>(cpu_free);
  (*out)[1] = static_cast<uint32_t>(cpu_free >> 32);
  for (size_t i = 0; i < devices.size(); ++i)
    (*out)[2 + i] = (static_cast<uint32_t>(devices[i].type) << 16) | (devices[i].free & 0xFFFF);
  std::sort(out->begin() + 2, out->end(), std::greater<uint32_t>());
}

// Devices that can host one device of class `c` (an allowed type with at
// least c.shares free); *stranded gets the free shares of all the others.
static uint32_t CountHosts(const TaskClass& c, const std::vector<DeviceState>& devices,
                           uint64_t* stranded) {
  uint32_t can = 0;
  for (const auto& d : devices) {
    if (d.free >= c.shares && TypeAllowed(c.types, d.type))
      ++can;
    else
      *stranded += d.free;
  }
  return can;
}

double NodeFragmentation(const WorkloadModel& m, uint64_t cpu_free,
                         const std::vector<DeviceState>& devices) {
  uint64_t idle = 0;
  for (const auto& d : devices) idle += d.free;
  if (idle == 0) return 0;
  double total = 0;
  for (const auto& c : m.classes()) {
    uint64_t f = idle;
    if (c.devices > 0 && cpu_free >= c.cpu_milli) {
      uint64_t stranded = 0;
      uint32_t can = CountHosts(c, devices, &stranded);
      if (can >= c.devices) f = stranded;
    }
    total += c.weight * static_cast<double>(f);
  }
  return total;
}

size_t FragmentationCache::KeyHash::operator()(const NodeKey& k) const {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over the words
  for (uint32_t w : k) {
    h ^= w;
    h *= 1099511628211ULL;
  }
  return static_cast<size_t>(h ^ (h >> 29));
}

FragmentationCache::FragmentationCache(std::shared_ptr<const WorkloadModel> model)
    : model_(std::move(model)) {
  // (type list, -shares, devices) -> the classes' (cpu, weight)
  std::map<std::tuple<std::vector<DeviceType>, int64_t, uint32_t>, std::vector<std::pair<uint64_t, double>>> by;
  for (const auto& c : model_->classes()) {
    if (c.devices == 0)
      cpu_only_weight_ += c.weight;
    else
      by[{c.types, -int64_t{c.shares}, c.devices}].emplace_back(c.cpu_milli, c.weight);
  }
  for (auto& [key, members] : by) {
    const auto& [types, neg_shares, devices] = key;
    if (lists_.empty() || lists_.back().types != types) lists_.push_back(TypeList{types, {}});
    Group g;
    g.shares = static_cast<uint32_t>(-neg_shares);
    g.devices = devices;
    std::sort(members.begin(), members.end());
    for (const auto& [cpu, weight] : members) {
      g.weight += weight;
      g.cpu.push_back(cpu);
      g.cpu_weight.push_back(g.weight);
    }
    lists_.back().groups.push_back(std::move(g));
  }
  memo_.reserve(4096);
}

double FragmentationCache::Group::FitWeight(uint64_t cpu_free) const {
  const size_t n = std::upper_bound(cpu.begin(), cpu.end(), cpu_free) - cpu.begin();
  return n == 0 ? 0.0 : cpu_weight[n - 1];
}

double FragmentationCache::Compute(uint64_t cpu_free, const std::vector<DeviceState>& devices) {
  uint64_t idle = 0;
  for (const auto& d : devices) idle += d.free;
  if (idle == 0) return 0;
  const double all = static_cast<double>(idle);
  double total = cpu_only_weight_ * all;
  for (const TypeList& list : lists_) {
    frees_.clear();
    for (const auto& d : devices)
      if (TypeAllowed(list.types, d.type)) frees_.push_back(d.free);
    std::sort(frees_.begin(), frees_.end(), std::greater<uint32_t>());
    size_t fit = 0;       // allowed devices with free >= the group's shares
    uint64_t usable = 0;  // their free shares; the rest of idle is stranded
    for (const Group& g : list.groups) {
      while (fit < frees_.size() && frees_[fit] >= g.shares) usable += frees_[fit++];
      const double fits = fit >= g.devices ? g.FitWeight(cpu_free) : 0.0;
      total += fits * static_cast<double>(idle - usable) + (g.weight - fits) * all;
    }
  }
  return total;
}

double FragmentationCache::Peek(uint64_t cpu_free, const std::vector<DeviceState>& devices) {
  MakeNodeKey(cpu_free, devices, &key_);
  auto it = memo_.find(key_);
  return it != memo_.end() ? it->second : Compute(cpu_free, devices);
}

double FragmentationCache::Of(uint64_t cpu_free, const std::vector<DeviceState>& devices) {
  MakeNodeKey(cpu_free, devices, &key_);
  auto it = memo_.find(key_);
  if (it != memo_.end()) return it->second;
  double f = Compute(cpu_free, devices);
  if (memo_.size() >= kMaxStates) memo_.clear();
  memo_.emplace(key_, f);
  return f;
}

// ---- Deltas ----------------------------------------------------------------

double FragmentationDelta::Before(const ClusterState& c, uint32_t i) {
  if (before_.size() != c.size()) before_.assign(c.size(), Known{});
  Known& k = before_[i];
  const NodeState& n = c.node(i);
  if (!k.valid || k.generation != n.generation) {
    k.f = cache_.Of(n);
    k.generation = n.generation;
    k.valid = true;
  }
  return k.f;
}

double FragmentationDelta::After(const NodeState& n, uint64_t cpu, int device,
                                 const std::vector<uint32_t>& devices, uint32_t per) {
  trial_ = n.devices;
  if (device >= 0) trial_[device].free -= per;
  for (uint32_t d : devices) trial_[d].free -= per;
  return cache_.Peek(n.cpu_free - cpu, trial_);
}

void ClusterFragmentation::Reset(const ClusterState& c) {
  per_node_.assign(c.size(), 0);
  total_ = 0;
  for (uint32_t i = 0; i < c.size(); ++i) {
    per_node_[i] = cache_.Of(c.node(i));
    total_ += per_node_[i];
  }
}

void ClusterFragmentation::Update(const ClusterState& c, uint32_t i) {
  double f = cache_.Of(c.node(i));
  total_ += f - per_node_[i];
  per_node_[i] = f;
}

// ---- Memo of verdicts ------------------------------------------------------

void VerdictMemo::Prepare(uint32_t query, size_t nodes) {
  if (query >= slots_.size()) slots_.resize(query + 1);
  if (slots_[query].size() < nodes) slots_[query].resize(nodes);
}

uint32_t QueryIds::Of(const Request& req, uint32_t s) {
  uint32_t k = RequestDevices(req, s), per = RequestSharesPerDevice(req, s);
  key_.assign(reinterpret_cast<const char*>(&req.cpu_milli), sizeof req.cpu_milli);
  key_.append(reinterpret_cast<const char*>(&per), sizeof per);
  key_.append(reinterpret_cast<const char*>(&k), sizeof k);
  if (k > 0) {
    std::vector<DeviceType> types = req.types;  // rare and short
    std::sort(types.begin(), types.end());
    key_.append(reinterpret_cast<const char*>(types.data()), types.size() * sizeof(DeviceType));
  }
  auto it = ids_.find(key_);
  if (it != ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(ids_.size());
  ids_.emplace(key_, id);
  return id;
}

// ---- Fragmentation policies -------------------------------------------------

Status FragmentationPolicy::Begin(const ClusterState& c, const Shape& sh) {
  if (model_->shares_per_device() != c.shares_per_device())
    return Status::Error(name_ + ": the workload model was built for " +
                         std::to_string(model_->shares_per_device()) +
                         " shares per device, the cluster has " + std::to_string(c.shares_per_device()));
  if (queries_.size() >= QueryIds::kMaxQueries) {
    queries_.Clear();
    memo_.Clear();
  }
  query_ = queries_.Of(*sh.req, sh.s);
  memo_.Prepare(query_, c.size());
  return Status::Ok();
}

double FragmentationPolicy::Score(const ClusterState& c, uint32_t i, const Shape& sh, int* device) {
  const NodeState& n = c.node(i);
  const NodeVerdict* known = memo_.Find(i, query_, n.generation);
  const NodeVerdict v = known ? *known : Evaluate(c, i, sh);
  if (!known) memo_.Store(i, query_, n.generation, v);
  *device = v.device;
  return v.score + Adjustment(c, i, sh, v);
}

namespace {

// fgd: the node with the highest int(100 * sigmoid((F - F') / 1000 milli))
// wins; for a sharing request every device that fits is tried and the
// best-scoring one (lowest index on equal scores) taken; whole devices: the
// lowest-index free ones.
class Fgd : public FragmentationPolicy {
 public:
  Fgd(uint64_t seed, const WorkloadModel& seen)
      : FragmentationPolicy("fgd", seed, std::make_shared<const WorkloadModel>(seen.Top(kFgdCoverage))) {}

 protected:
  NodeVerdict Evaluate(const ClusterState& c, uint32_t i, const Shape& sh) override {
    const NodeState& n = c.node(i);
    const double before = delta_.Before(c, i);
    const double to_milli = 1000.0 / sh.s;
    auto score_of = [&](double after) {
      double x = (before - after) * to_milli / 1000.0;
      return static_cast<double>(static_cast<int64_t>(1.0 / (1.0 + std::exp(-x)) * 100.0));
    };
    if (sh.sharing()) return BestSharingDevice(&delta_, n, sh, score_of, &seen_);
    LowestFreeDevices(n, sh, &devices_);
    NodeVerdict v;
    v.score = score_of(delta_.After(n, sh.req->cpu_milli, -1, devices_, sh.per));
    return v;
  }
};

}  // namespace

std::unique_ptr<PlacementPolicy> MakeFgd(const PolicyOptions& o) {
  return std::make_unique<Fgd>(o.seed, *o.workload);
}

}  // namespace vgpu
