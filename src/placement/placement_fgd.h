// Fragmentation of nodes under a workload (Weng et al., ATC '23, Sec. 4-5;
// shared/traces/alibaba-openb-2023/METHOD.md), memoised by node state.
//
// F_n(M) = sum over task classes m of weight_m * f_n(m), in shares, where
// f_n(m) is all of the node's free shares if m is CPU-only or cannot fit on
// the node (CPU, or `devices` allowed devices each with >= `shares` free),
// and otherwise only the free shares of the devices that cannot serve m (of
// a type m does not allow, or with fewer than `shares` free). Memory is not
// considered, as in the authors' code.
//
// F depends only on the node's state as a multiset: its free CPU and the
// (type, free shares) of its devices. States are interned as a NodeKey and F
// memoised per key, so equal nodes share one evaluation.
#ifndef VGPU_PLACEMENT_PLACEMENT_FGD_H_
#define VGPU_PLACEMENT_PLACEMENT_FGD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "placement/placement.h"

namespace vgpu {

// fgd's target workload: the most popular task classes covering this share
// of the requests (the authors' podPopularityThreshold: 95).
constexpr double kFgdCoverage = 0.95;

// [cpu low 32 bits, cpu high 32 bits, then (type << 16 | free) per device,
// sorted descending].
using NodeKey = std::vector<uint32_t>;
void MakeNodeKey(uint64_t cpu_free, const std::vector<DeviceState>& devices, NodeKey* out);

// F by brute force, straight from the definition (the reference the cache is
// tested against).
double NodeFragmentation(const WorkloadModel& m, uint64_t cpu_free,
                         const std::vector<DeviceState>& devices);

// Memoised F per node state. Classes are grouped by type list, and within
// one by (shares, devices): a group fits or not as a whole but for CPU, so
// its share of the weight that fits is a binary search in its classes'
// sorted CPU needs. Per type list, the groups are taken in decreasing order
// of shares against the allowed devices in decreasing order of free shares
// (one merge): O(type lists x devices + groups x log classes) per state,
// however many classes are typed. The memo is dropped when it exceeds
// kMaxStates, which bounds memory (a few tens of MB). Not thread-safe: one
// per policy / simulation.
class FragmentationCache {
 public:
  static constexpr size_t kMaxStates = size_t{1} << 18;
  explicit FragmentationCache(std::shared_ptr<const WorkloadModel> model);
  double Of(uint64_t cpu_free, const std::vector<DeviceState>& devices);
  double Of(const NodeState& n) { return Of(n.cpu_free, n.devices); }
  // As Of, but a state not in the memo is computed and not added: for the
  // trial states of a decision, most of which never occur (adding them
  // would cost an allocation each and make cold decisions slow).
  double Peek(uint64_t cpu_free, const std::vector<DeviceState>& devices);
  size_t states() const { return memo_.size(); }
  const WorkloadModel& model() const { return *model_; }

 private:
  struct KeyHash {
    size_t operator()(const NodeKey& k) const;
  };
  struct Group {  // device classes of one type list, shares and devices
    uint32_t shares = 0, devices = 0;
    double weight = 0;              // of all its classes
    std::vector<uint64_t> cpu;      // their CPU needs, ascending
    std::vector<double> cpu_weight;  // [i]: weight of the classes needing <= cpu[i]
    double FitWeight(uint64_t cpu_free) const;
  };
  struct TypeList {
    std::vector<DeviceType> types;  // sorted; empty = any
    std::vector<Group> groups;      // by decreasing shares
  };
  double Compute(uint64_t cpu_free, const std::vector<DeviceState>& devices);

  std::shared_ptr<const WorkloadModel> model_;
  std::unordered_map<NodeKey, double, KeyHash> memo_;
  double cpu_only_weight_ = 0;  // classes that count every idle share
  std::vector<TypeList> lists_;
  NodeKey key_;                  // scratch
  std::vector<uint32_t> frees_;  // scratch, decreasing
};

// F before and after one node takes a request: the current value memoised
// per node on its generation, the trial value through the cache's Peek.
class FragmentationDelta {
 public:
  explicit FragmentationDelta(std::shared_ptr<const WorkloadModel> model) : cache_(std::move(model)) {}
  // F of node i now.
  double Before(const ClusterState& c, uint32_t i);
  // F of the node after it takes `shares_per_device` from `device` (a
  // sharing request; device >= 0) or from each of `devices` (whole ones),
  // and `cpu` milli-CPUs.
  double After(const NodeState& n, uint64_t cpu, int device, const std::vector<uint32_t>& devices,
               uint32_t shares_per_device);
  FragmentationCache& cache() { return cache_; }

 private:
  FragmentationCache cache_;
  struct Known {
    uint64_t generation = 0;
    double f = 0;
    bool valid = false;
  };
  std::vector<Known> before_;
  std::vector<DeviceState> trial_;
};

// Sum of F over a cluster, updated node by node (vgpu-sim's metric).
class ClusterFragmentation {
 public:
  explicit ClusterFragmentation(std::shared_ptr<const WorkloadModel> model) : cache_(std::move(model)) {}
  void Reset(const ClusterState& c);
  void Update(const ClusterState& c, uint32_t node);  // after node changed
  double total() const { return total_; }  // shares

 private:
  FragmentationCache cache_;
  std::vector<double> per_node_;
  double total_ = 0;
};

// Per (node, query) memo of a policy's verdict on a node, valid while the
// node's generation is unchanged. Stored query-major, so that a decision
// (one query, every node) reads one array and a new query costs one.
struct NodeVerdict {
  double score = 0;
  int device = -1;
};
class VerdictMemo {
 public:
  void Clear() { slots_.clear(); }
  // Makes room for `nodes` nodes under `query`; call before Find/Store.
  void Prepare(uint32_t query, size_t nodes);
  // The verdict stored for (node, query) at this generation, or nullptr.
  const NodeVerdict* Find(uint32_t node, uint32_t query, uint64_t generation) const {
    const Slot& s = slots_[query][node];
    return s.valid && s.generation == generation ? &s.v : nullptr;
  }
  void Store(uint32_t node, uint32_t query, uint64_t generation, const NodeVerdict& v) {
    slots_[query][node] = Slot{generation, true, v};
  }

 private:
  struct Slot {
    uint64_t generation = 0;
    bool valid = false;
    NodeVerdict v;
  };
  std::vector<std::vector<Slot>> slots_;  // [query][node]
};

// Interns request shapes (cpu, shares per device, devices, types) as small
// query ids for VerdictMemo.
class QueryIds {
 public:
  // Beyond this many shapes, a policy starts its memo afresh (bounds memory
  // in a long-lived slurmctld that sees many shapes).
  static constexpr size_t kMaxQueries = 512;
  uint32_t Of(const Request& req, uint32_t shares_per_device);
  size_t size() const { return ids_.size(); }
  void Clear() { ids_.clear(); }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::string key_;
};

// Knobs of the pool policy (placement_pool.cc explains the score). As a
// policy name: "pool:resolution=1,cpu=1,cpu_ratio=1,used=0.5,coverage=1,reserve=0.5",
// any subset of the keys, the rest at these defaults.
struct PoolParams {
  double resolution_milli = 1.0;  // gains floored to this step (milli devices); 0: exact
  double cpu_weight = 1.0;        // weight of the CPU-starvation gain
  double cpu_ratio_scale = 1.0;   // scales the workload's CPU per share
  double used_bonus_milli = 0.5;  // added on nodes already running device tasks
  double coverage = 1.0;          // share of the seen workload modelled (by count)
  double reserve = 0.5;           // weight of the type-reservation cost (0: off)
};
Result<PoolParams> ParsePoolParams(const std::string& text);
std::string FormatPoolParams(const PoolParams& p);

}  // namespace vgpu

#endif  // VGPU_PLACEMENT_PLACEMENT_FGD_H_
