// Cluster state, request rules, workload model and the policy registry.
#include "placement/placement.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <tuple>

#include "placement/placement_fgd.h"
#include "placement/placement_internal.h"
#include "util/text.h"

namespace vgpu {

namespace {

// Process-wide, so that a generation names one node content even across
// copies of a cluster and across clusters (policies key caches on it).
std::atomic<uint64_t> g_generation{0};
uint64_t NextGeneration() { return ++g_generation; }

}  // namespace

uint64_t NodeState::FreeShares() const {
  uint64_t sum = 0;
  for (const auto& d : devices) sum += d.free;
  return sum;
}

// ---- Requests --------------------------------------------------------------

Status ValidateRequest(const Request& req, uint32_t s) {
  if (s == 0 || s > kMaxSharesPerDevice)
    return Status::Error("shares per device must be 1.." + std::to_string(kMaxSharesPerDevice) +
                         ", not " + std::to_string(s));
  if (req.node_count == 0) return Status::Error("a request needs at least one node");
  if (req.shares > s && req.shares % s != 0)
    return Status::Error(std::to_string(req.shares) + " shares: more than one device (S=" +
                         std::to_string(s) + ") must be a whole multiple of " + std::to_string(s));
  return Status::Ok();
}

uint32_t RequestDevices(const Request& req, uint32_t s) {
  if (req.shares == 0) return 0;
  return req.shares <= s ? 1 : req.shares / s;
}

uint32_t RequestSharesPerDevice(const Request& req, uint32_t s) {
  return req.shares <= s ? req.shares : s;
}

// ---- Cluster state ---------------------------------------------------------

ClusterState::ClusterState(uint32_t shares_per_device) : shares_per_device_(shares_per_device) {}

Status ClusterState::AddNode(const std::string& name, uint64_t cpu_milli, uint64_t memory_mib,
                             const std::vector<std::string>& device_types) {
  if (shares_per_device_ == 0 || shares_per_device_ > kMaxSharesPerDevice)
    return Status::Error("shares per device must be 1.." + std::to_string(kMaxSharesPerDevice) +
                         ", not " + std::to_string(shares_per_device_));
  if (name.empty()) return Status::Error("a node needs a name");
  if (names_.count(name)) return Status::Error("node " + name + " is listed twice");
  NodeState node;
  node.name = name;
  node.cpu_total = node.cpu_free = cpu_milli;
  node.memory_total = node.memory_free = memory_mib;
  for (const auto& t : device_types)  // before anything changes
    if (t.find_first_not_of(" \t\r\n") == std::string::npos)
      return Status::Error("node " + name + ": a device has no type");
  const std::string* last_name = nullptr;  // a node's devices mostly share one type
  DeviceType last_id = kUnknownType;
  for (const auto& t : device_types) {
    if (!last_name || t != *last_name) {
      last_id = FindType(t);
      if (last_id == kUnknownType) {
        if (type_names_.size() >= kUnknownType) return Status::Error("too many device types");
        last_id = static_cast<DeviceType>(type_names_.size());
        type_names_.push_back(Trim(t));
        type_keys_.push_back(Lower(Trim(t)));
        type_total_.push_back(0);
        type_free_.push_back(0);
      }
      last_name = &t;
    }
    node.devices.push_back(DeviceState{last_id, shares_per_device_});
    type_total_[last_id] += shares_per_device_;
    type_free_[last_id] += shares_per_device_;
  }
  node.tasks_by_affinity.assign(node.devices.size() + 1, 0);
  node.generation = NextGeneration();
  uint64_t shares = static_cast<uint64_t>(node.devices.size()) * shares_per_device_;
  max_node_cpu_ = std::max(max_node_cpu_, cpu_milli);
  max_node_shares_ = std::max(max_node_shares_, shares);
  total_shares_ += shares;
  free_shares_ += shares;
  names_.insert(name);
  nodes_.push_back(std::move(node));
  return Status::Ok();
}

Status ClusterState::SetFree(size_t index, uint64_t cpu_free, uint64_t memory_free,
                             const std::vector<uint32_t>& device_free) {
  if (index >= nodes_.size()) return Status::Error("no node " + std::to_string(index));
  NodeState& n = nodes_[index];
  if (cpu_free > n.cpu_total || memory_free > n.memory_total)
    return Status::Error("node " + n.name + ": more CPU or memory free than it has");
  if (device_free.size() != n.devices.size())
    return Status::Error("node " + n.name + ": " + std::to_string(device_free.size()) +
                         " free counts for " + std::to_string(n.devices.size()) + " devices");
  for (uint32_t f : device_free)
    if (f > shares_per_device_)
      return Status::Error("node " + n.name + ": a device with " + std::to_string(f) +
                           " free shares, more than S=" + std::to_string(shares_per_device_));
  for (size_t d = 0; d < device_free.size(); ++d) {
    DeviceState& dev = n.devices[d];
    free_shares_ = free_shares_ - dev.free + device_free[d];
    type_free_[dev.type] = type_free_[dev.type] - dev.free + device_free[d];
    dev.free = device_free[d];
  }
  n.cpu_free = cpu_free;
  n.memory_free = memory_free;
  n.generation = NextGeneration();
  return Status::Ok();
}

Status ClusterState::SliceDevices(DeviceType type, std::shared_ptr<const SliceLayout> layout) {
  if (!layout) return Status::Error("no slice layout");
  if (type >= type_names_.size()) return Status::Error("no device type " + std::to_string(type));
  for (NodeState& n : nodes_)
    for (DeviceState& d : n.devices) {
      if (d.type != type) continue;
      if (d.free != shares_per_device_)
        return Status::Error("node " + n.name + ": a device of " + TypeName(type) + " is in use; slice it first");
      d.slicing = layout.get();
      d.slices_taken = 0;
      const uint32_t fit = std::min(layout->LargestFit(0), shares_per_device_);
      free_shares_ -= d.free - fit;
      type_free_[type] -= d.free - fit;
      d.free = fit;
      n.generation = NextGeneration();
    }
  layouts_.push_back(std::move(layout));
  return Status::Ok();
}

void ClusterState::KeepGenerationsOf(const ClusterState& before) {
  if (before.shares_per_device_ != shares_per_device_ || before.type_keys_ != type_keys_) return;
  const size_t n = std::min(nodes_.size(), before.nodes_.size());
  for (size_t i = 0; i < n; ++i) {
    NodeState& a = nodes_[i];
    const NodeState& b = before.nodes_[i];
    if (a.name != b.name || a.cpu_total != b.cpu_total || a.cpu_free != b.cpu_free ||
        a.memory_total != b.memory_total || a.memory_free != b.memory_free ||
        a.tasks_by_affinity != b.tasks_by_affinity || a.devices.size() != b.devices.size())
      continue;
    bool same = true;
    for (size_t d = 0; same && d < a.devices.size(); ++d)
      same = a.devices[d].type == b.devices[d].type && a.devices[d].free == b.devices[d].free &&
             a.devices[d].slices_taken == b.devices[d].slices_taken;
    if (same) a.generation = b.generation;
  }
}

DeviceType ClusterState::FindType(const std::string& name) const {
  std::string key = Lower(Trim(name));
  for (size_t i = 0; i < type_keys_.size(); ++i)
    if (type_keys_[i] == key) return static_cast<DeviceType>(i);
  return kUnknownType;
}

const std::string& ClusterState::TypeName(DeviceType type) const {
  static const std::string unknown = "(unknown)";
  return type < type_names_.size() ? type_names_[type] : unknown;
}

std::vector<DeviceType> ClusterState::TypesOf(const std::vector<std::string>& names) const {
  std::vector<DeviceType> out;
  for (const auto& n : names) out.push_back(FindType(n));
  return out;
}

Status ClusterState::Check(const Request& req, const Placement& p, bool release) const {
  const uint32_t s = shares_per_device_;
  Status valid = ValidateRequest(req, s);
  if (!valid.ok()) return valid;
  if (!p.placed) return Status::Error("the placement places nothing");
  if (p.nodes.size() != req.node_count)
    return Status::Error("the placement has " + std::to_string(p.nodes.size()) +
                         " nodes, the request asks for " + std::to_string(req.node_count));
  const uint32_t k = RequestDevices(req, s);
  const uint32_t per = RequestSharesPerDevice(req, s);
  std::set<uint32_t> seen_nodes;
  for (const auto& a : p.nodes) {
    if (a.node >= nodes_.size()) return Status::Error("no node " + std::to_string(a.node));
    const NodeState& n = nodes_[a.node];
    if (!seen_nodes.insert(a.node).second) return Status::Error("node " + n.name + " twice");
    if (a.devices.size() != k || (k > 0 && a.shares_per_device != per))
      return Status::Error("node " + n.name + ": the assignment does not match the request");
    if (release) {
      if (n.cpu_free + req.cpu_milli > n.cpu_total || n.memory_free + req.memory_mib > n.memory_total)
        return Status::Error("node " + n.name + ": releasing more CPU or memory than taken");
      if (k > 0 && n.tasks_by_affinity[AffinityOf(req, s)] == 0)
        return Status::Error("node " + n.name + ": no such task to release");
    } else if (n.cpu_free < req.cpu_milli || n.memory_free < req.memory_mib) {
      return Status::Error("node " + n.name + ": not enough CPU or memory");
    }
    std::set<uint32_t> seen_devices;
    for (uint32_t d : a.devices) {
      if (d >= n.devices.size() || !seen_devices.insert(d).second)
        return Status::Error("node " + n.name + ": bad device index " + std::to_string(d));
      const DeviceState& dev = n.devices[d];
      if (!TypeAllowed(req.types, dev.type))
        return Status::Error("node " + n.name + ": device " + std::to_string(d) + " is of type " +
                             TypeName(dev.type) + ", which the request does not allow");
      if (release && dev.slicing)
        return Status::Error("node " + n.name + ": device " + std::to_string(d) +
                             " is sliced; its slices are not given back");
      if (release ? dev.free + per > s : dev.free < per)
        return Status::Error("node " + n.name + ": device " + std::to_string(d) + " has " +
                             std::to_string(dev.free) + " shares free");
    }
  }
  return Status::Ok();
}

Status ClusterState::Apply(const Request& req, const Placement& p) { return Change(req, p, false); }

Status ClusterState::Release(const Request& req, const Placement& p) { return Change(req, p, true); }

Status ClusterState::Change(const Request& req, const Placement& p, bool release) {
  Status ok = Check(req, p, release);
  if (!ok.ok()) return ok;
  // Free amounts: taking subtracts, releasing adds back (Check ruled out
  // both going past their bounds).
  auto adjust = [release](auto& value, auto amount) {
    if (release)
      value += amount;
    else
      value -= amount;
  };
  const uint32_t s = shares_per_device_;
  for (const auto& a : p.nodes) {
    NodeState& n = nodes_[a.node];
    adjust(n.cpu_free, req.cpu_milli);
    adjust(n.memory_free, req.memory_mib);
    for (uint32_t d : a.devices) {
      DeviceState& dev = n.devices[d];
      if (dev.slicing) {
        // Check made sure it fits (shares <= free = LargestFit); a slice
        // may take more than the shares asked, and strand what is left.
        const std::optional<uint64_t> taken = dev.slicing->Take(dev.slices_taken, a.shares_per_device);
        const uint32_t fit = taken ? std::min(dev.slicing->LargestFit(*taken), dev.free) : 0;
        dev.slices_taken = taken.value_or(dev.slices_taken);
        free_shares_ -= dev.free - fit;
        type_free_[dev.type] -= dev.free - fit;
        dev.free = fit;
        continue;
      }
      adjust(dev.free, a.shares_per_device);
      adjust(type_free_[dev.type], uint64_t{a.shares_per_device});
      adjust(free_shares_, uint64_t{a.shares_per_device});
    }
    // A count of running tasks, not of free resources: the other way round.
    if (!a.devices.empty()) {
      uint32_t& tasks = n.tasks_by_affinity[AffinityOf(req, s)];
      if (release)
        --tasks;
      else
        ++tasks;
    }
    n.generation = NextGeneration();
  }
  return Status::Ok();
}

// ---- Workload model --------------------------------------------------------

namespace {

// Descending popularity, then descending (cpu, shares, devices, types): the
// authors' order (sort.Reverse of count, then PodResource.Less).
bool MorePopular(const TaskClass& a, const TaskClass& b) {
  if (a.weight != b.weight) return a.weight > b.weight;
  return std::tie(a.cpu_milli, a.shares, a.devices, a.types) >
         std::tie(b.cpu_milli, b.shares, b.devices, b.types);
}

}  // namespace

Result<WorkloadModel> WorkloadModel::FromRequests(const std::vector<Request>& requests,
                                                  uint32_t s, double coverage) {
  if (requests.empty()) return Result<WorkloadModel>::Error("no requests to build a workload from");
  using Key = std::tuple<uint64_t, uint32_t, uint32_t, std::vector<DeviceType>>;
  std::map<Key, uint64_t> counts;
  for (const auto& r : requests) {
    Status ok = ValidateRequest(r, s);
    if (!ok.ok()) return ok;
    uint32_t k = RequestDevices(r, s);
    std::vector<DeviceType> types = k ? r.types : std::vector<DeviceType>{};
    std::sort(types.begin(), types.end());
    types.erase(std::unique(types.begin(), types.end()), types.end());
    ++counts[Key(r.cpu_milli, RequestSharesPerDevice(r, s), k, types)];
  }
  std::vector<TaskClass> all;
  for (const auto& [key, count] : counts) {
    TaskClass c;
    std::tie(c.cpu_milli, c.shares, c.devices, c.types) = key;
    c.count = count;
    c.weight = static_cast<double>(count) / static_cast<double>(requests.size());
    all.push_back(std::move(c));
  }
  std::sort(all.begin(), all.end(), MorePopular);
  WorkloadModel m;
  m.shares_per_device_ = s;
  m.distinct_ = all.size();
  m.classes_ = std::move(all);
  return m.Top(coverage);
}

WorkloadModel WorkloadModel::Top(double coverage) const {
  std::vector<TaskClass> sorted = classes_;
  std::stable_sort(sorted.begin(), sorted.end(), MorePopular);
  // Counts when every class has one (exact, as the authors' cut), else weights.
  bool counted = !sorted.empty();
  for (const auto& c : sorted) counted = counted && c.count > 0;
  auto mass = [&](const TaskClass& c) { return counted ? static_cast<double>(c.count) : c.weight; };
  double total = 0;
  for (const auto& c : sorted) total += mass(c);
  WorkloadModel m;
  m.shares_per_device_ = shares_per_device_;
  m.distinct_ = distinct_;
  double kept = 0;
  for (auto& c : sorted) {
    if (kept >= coverage * total) break;
    kept += mass(c);
    m.classes_.push_back(std::move(c));
  }
  for (auto& c : m.classes_) c.weight = kept > 0 ? mass(c) / kept : 0.0;
  return m;
}

Result<WorkloadModel> WorkloadModel::FromClasses(std::vector<TaskClass> classes, uint32_t s) {
  if (s == 0 || s > kMaxSharesPerDevice) return Result<WorkloadModel>::Error("bad shares per device");
  double sum = 0;
  for (auto& c : classes) {
    if (c.weight < 0) return Result<WorkloadModel>::Error("a task class has a negative weight");
    if ((c.devices == 0) != (c.shares == 0) || c.shares > s || (c.devices > 1 && c.shares != s))
      return Result<WorkloadModel>::Error("a task class is not a valid request shape");
    std::sort(c.types.begin(), c.types.end());
    sum += c.weight;
  }
  if (classes.empty() || sum <= 0) return Result<WorkloadModel>::Error("no weighted task class");
  for (auto& c : classes) c.weight /= sum;
  WorkloadModel m;
  m.classes_ = std::move(classes);
  m.shares_per_device_ = s;
  m.distinct_ = m.classes_.size();
  return m;
}

// ---- Registry --------------------------------------------------------------

namespace {

struct Entry {
  const char* name;
  std::unique_ptr<PlacementPolicy> (*make)(const PolicyOptions&);
  bool needs_workload;
};

const Entry kPolicies[] = {
    {"first-fit", MakeFirstFit, false},       {"least-loaded", MakeLeastLoaded, false},
    {"best-fit", MakeBestFit, false},         {"dot-product", MakeDotProduct, false},
    {"gpu-packing", MakeGpuPacking, false},   {"gpu-clustering", MakeGpuClustering, false},
    {"random-fit", MakeRandomFit, false},     {"fgd", MakeFgd, true},
    {"pool", MakePool, true},
};

}  // namespace

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& e : kPolicies) v.push_back(e.name);
    return v;
  }();
  return names;
}

Result<std::unique_ptr<PlacementPolicy>> MakePolicy(const std::string& name,
                                                    const PolicyOptions& options) {
  using R = Result<std::unique_ptr<PlacementPolicy>>;
  const size_t colon = name.find(':');
  const std::string base = Lower(Trim(name.substr(0, colon)));
  for (const auto& e : kPolicies) {
    if (base != e.name) continue;
    if (e.needs_workload && (!options.workload || options.workload->classes().empty()))
      return R::Error(std::string("policy ") + e.name +
                      " needs a workload model (task classes with popularity); none given");
    if (colon == std::string::npos) return R(e.make(options));
    if (base != "pool") return R::Error("policy " + base + " takes no parameters");
    Result<PoolParams> params = ParsePoolParams(name.substr(colon + 1));
    if (!params.ok()) return params.status();
    return R(MakePoolWith(options, *params));
  }
  std::string list;
  for (const auto& n : PolicyNames()) list += (list.empty() ? "" : ", ") + n;
  return R::Error("unknown placement policy \"" + name + "\"; known policies: " + list);
}

std::vector<uint32_t> ChooseDevicesOnNode(const NodeState& node, const Request& req,
                                          uint32_t shares_per_device) {
  std::vector<uint32_t> chosen;
  if (!ValidateRequest(req, shares_per_device).ok()) return chosen;
  Shape sh;
  sh.req = &req;
  sh.s = shares_per_device;
  sh.k = RequestDevices(req, shares_per_device);
  sh.per = RequestSharesPerDevice(req, shares_per_device);
  if (sh.k == 0) return chosen;
  if (sh.k == 1 && sh.per < sh.s) {
    int d = TightestDevice(node, sh);
    if (d >= 0) chosen.push_back(static_cast<uint32_t>(d));
    return chosen;
  }
  LowestFreeDevices(node, sh, &chosen);
  if (chosen.size() != sh.k) chosen.clear();
  return chosen;
}

std::vector<uint32_t> ChooseDevicesInOrder(const NodeState& node, const Request& req,
                                           uint32_t shares_per_device,
                                           const std::vector<std::vector<bool>>& levels) {
  if (levels.empty()) return ChooseDevicesOnNode(node, req, shares_per_device);
  for (const auto& allowed : levels) {
    // A device outside the level looks full: it fits neither a share
    // request nor a whole-device one.
    NodeState masked = node;
    for (size_t d = 0; d < masked.devices.size(); ++d)
      if (d >= allowed.size() || !allowed[d]) masked.devices[d].free = 0;
    std::vector<uint32_t> chosen = ChooseDevicesOnNode(masked, req, shares_per_device);
    if (!chosen.empty()) return chosen;
  }
  return {};
}

}  // namespace vgpu
