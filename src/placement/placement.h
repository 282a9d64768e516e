// Placement engine: where a job's shares, CPUs and memory go on a cluster of
// nodes with shared devices. Pure computation on plain values: no Slurm, no
// I/O, no locks (one policy object per thread). The select plugin calls it
// from slurmctld; vgpu-sim replays traces through it.
//
// Model. A device has S shares (the cluster's shares_per_device). A request
// asks, on each of `node_count` distinct nodes, for:
//  * shares = 0: CPUs and memory only;
//  * 1 <= shares <= S: that many shares of ONE device;
//  * shares > S: a whole multiple k*S of S, i.e. k fully free devices;
// of an allowed device type (empty list: any type; a node may mix types and
// a k-device request may then take devices of several allowed types, as
// Slurm does for an untyped GRES request), plus CPUs (milli) and memory (MiB).
// The engine tracks free share counts per device; which GRES bits of a chosen
// device carry the shares is the caller's business (any free ones).
//
// Policies (MakePolicy, PolicyNames) choose nodes and devices; they never
// change the cluster: the caller applies the placement it accepts.
#ifndef VGPU_PLACEMENT_PLACEMENT_H_
#define VGPU_PLACEMENT_PLACEMENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "util/status.h"

namespace vgpu {

using DeviceType = uint16_t;
// A type no device has (e.g. a model named in a request but absent here).
constexpr DeviceType kUnknownType = 0xFFFF;
constexpr uint32_t kMaxSharesPerDevice = 65535;

// A device cut into hardware slices (MIG, vNPU): where slices sit, not a
// count of shares, decides what fits. Slice positions are bits of a mask.
// Implemented outside the engine (vgpu-sim: the chip catalog's geometry,
// devices/slice_geometry.h); the select plugin instead gives each sliced
// device its LargestFit as free shares (SetFree).
class SliceLayout {
 public:
  virtual ~SliceLayout() = default;
  // The positions taken once a request of `shares` is placed where
  // `taken` is in use; nullopt when it does not fit.
  virtual std::optional<uint64_t> Take(uint64_t taken, uint32_t shares) const = 0;
  // The largest request that fits where `taken` is in use; a request of
  // x fits exactly when x <= LargestFit(taken).
  virtual uint32_t LargestFit(uint64_t taken) const = 0;
};

struct DeviceState {
  DeviceType type = 0;
  uint32_t free = 0;  // free shares, 0..S; of a sliced device, its LargestFit
  const SliceLayout* slicing = nullptr;  // set by ClusterState::SliceDevices
  uint64_t slices_taken = 0;             // positions in use, when sliced
};

struct NodeState {
  std::string name;
  uint64_t cpu_total = 0;  // milli-CPUs
  uint64_t cpu_free = 0;
  uint64_t memory_total = 0;  // MiB
  uint64_t memory_free = 0;
  std::vector<DeviceState> devices;  // index = device index on the node
  // Device tasks running here by "affinity" (gpu-clustering): [0] tasks
  // sharing one device, [k] tasks holding k whole devices. Size devices+1.
  std::vector<uint32_t> tasks_by_affinity;
  // Renewed by every Apply/Release on this node with a value unique in the
  // process, so it names this content even across clusters and copies:
  // policies key their per-node caches on (index, generation).
  uint64_t generation = 0;

  uint64_t FreeShares() const;
};

struct Request {
  uint32_t shares = 0;             // per node, see the model above
  std::vector<DeviceType> types;   // allowed device types; empty = any
  uint64_t cpu_milli = 0;          // per node
  uint64_t memory_mib = 0;         // per node
  uint32_t node_count = 1;         // distinct nodes, each gets the above
};

// OK, or why `req` can never be valid at S shares per device, e.g.
// "150 shares: more than one device (S=100) must be a whole multiple of 100".
Status ValidateRequest(const Request& req, uint32_t shares_per_device);

// The request's shape on one node: devices taken (0, 1 or k) and shares
// taken from each of them.
uint32_t RequestDevices(const Request& req, uint32_t shares_per_device);
uint32_t RequestSharesPerDevice(const Request& req, uint32_t shares_per_device);

struct NodeAssignment {
  uint32_t node = 0;               // index in ClusterState::nodes()
  std::vector<uint32_t> devices;   // device indexes, ascending; empty: none
  uint32_t shares_per_device = 0;  // shares taken from each listed device
};

struct Placement {
  bool placed = false;  // false: no set of nodes can host the request now
  std::vector<NodeAssignment> nodes;  // node_count entries when placed
  void Clear() {
    placed = false;
    nodes.clear();
  }
};

class ClusterState {
 public:
  explicit ClusterState(uint32_t shares_per_device = 100);

  // Appends a node whose devices have the given type names (one per device,
  // any mix), all free. Names must be unique and non-empty; type names
  // compare case-insensitively. Fails if S is outside 1..65535.
  Status AddNode(const std::string& name, uint64_t cpu_milli, uint64_t memory_mib,
                 const std::vector<std::string>& device_types);

  uint32_t shares_per_device() const { return shares_per_device_; }
  const std::vector<NodeState>& nodes() const { return nodes_; }
  const NodeState& node(size_t i) const { return nodes_[i]; }
  size_t size() const { return nodes_.size(); }

  // Type id of a name (case-insensitive), or kUnknownType.
  DeviceType FindType(const std::string& name) const;
  const std::string& TypeName(DeviceType type) const;
  size_t type_count() const { return type_names_.size(); }
  // Request types from names; unknown names become kUnknownType, which no
  // device matches (so a list of only unknown names fits nowhere).
  std::vector<DeviceType> TypesOf(const std::vector<std::string>& names) const;

  // Scales of the scoring formulas: the largest node's CPUs and shares
  // (128000 and 8000 on the openb trace at S=1000).
  uint64_t max_node_cpu() const { return max_node_cpu_; }
  uint64_t max_node_shares() const { return max_node_shares_; }
  uint64_t total_shares() const { return total_shares_; }
  uint64_t free_shares() const { return free_shares_; }
  // The same per device type (0 for a type no device has).
  uint64_t total_shares_of(DeviceType t) const { return t < type_total_.size() ? type_total_[t] : 0; }
  uint64_t free_shares_of(DeviceType t) const { return t < type_free_.size() ? type_free_[t] : 0; }

  // Takes / gives back what `p` assigns for `req`. Everything is checked
  // first (node and device indexes, distinct nodes, types, free amounts);
  // on error nothing changes.
  Status Apply(const Request& req, const Placement& p);
  Status Release(const Request& req, const Placement& p);

  // Sets what is free on node `node` as observed elsewhere (slurmctld's
  // allocation): CPU and memory at most the totals, one free share count
  // (0..S) per device. The affinity task counts are left as they are.
  // On error nothing changes.
  Status SetFree(size_t node, uint64_t cpu_free, uint64_t memory_free,
                 const std::vector<uint32_t>& device_free);

  // Cuts every device of `type` into the slices of `layout` (all free
  // now): a request on one then takes a slice (Apply), and what the device
  // has free is its layout's LargestFit. Slices are never given back
  // (Release of a sliced device is an error: where a slice sat is not
  // recorded); vgpu-sim releases nothing.
  Status SliceDevices(DeviceType type, std::shared_ptr<const SliceLayout> layout);

  // Each node equal to `before`'s node of the same index (name, totals,
  // free amounts, device types, task counts) takes that node's generation:
  // a snapshot rebuilt from slurmctld's records then keeps the policies'
  // per-node memos of the previous snapshot valid where nothing changed.
  void KeepGenerationsOf(const ClusterState& before);

 private:
  Status Check(const Request& req, const Placement& p, bool release) const;
  Status Change(const Request& req, const Placement& p, bool release);

  uint32_t shares_per_device_;
  std::vector<NodeState> nodes_;
  std::unordered_set<std::string> names_;  // of nodes_: AddNode stays O(1) at 10,000 nodes
  std::vector<std::string> type_names_;  // as first seen
  std::vector<std::string> type_keys_;   // lower case
  uint64_t max_node_cpu_ = 0;
  uint64_t max_node_shares_ = 0;
  uint64_t total_shares_ = 0;
  uint64_t free_shares_ = 0;
  std::vector<uint64_t> type_total_;  // [type]
  std::vector<uint64_t> type_free_;
  std::vector<std::shared_ptr<const SliceLayout>> layouts_;  // what DeviceState::slicing points to
};

// ---- Workload model (fgd, pool) ------------------------------------------

// A task class: what one node must give (cpu, `devices` devices with
// `shares` free each, of an allowed type). Memory is not part of a class.
struct TaskClass {
  uint64_t cpu_milli = 0;
  uint32_t shares = 0;   // per device; 0 for CPU-only
  uint32_t devices = 0;  // 0 CPU-only; 1 (sharing or one whole); k
  std::vector<DeviceType> types;  // sorted; empty = any
  uint64_t count = 0;    // requests seen of this class (0: given by weight)
  double weight = 0;     // popularity among the kept classes, sums to 1
};

class WorkloadModel {
 public:
  WorkloadModel() = default;
  // Classes of `requests` (each must be valid at S), by decreasing count
  // (equal counts: larger cpu, shares, devices, types first, as the authors'
  // GetTypicalPods); the most popular are kept until they cover >= `coverage`
  // of the requests and their weights renormalised (METHOD.md: 0.95; fgd
  // applies that cut itself, so a model may keep everything). Error if
  // `requests` is empty or one is invalid.
  static Result<WorkloadModel> FromRequests(const std::vector<Request>& requests,
                                            uint32_t shares_per_device, double coverage = 0.95);
  // Explicit classes; weights are normalised to sum 1.
  static Result<WorkloadModel> FromClasses(std::vector<TaskClass> classes,
                                           uint32_t shares_per_device);

  // The heaviest classes (by weight, then as FromRequests orders them) until
  // they cover >= `coverage` of the total weight, renormalised.
  WorkloadModel Top(double coverage) const;

  const std::vector<TaskClass>& classes() const { return classes_; }
  uint32_t shares_per_device() const { return shares_per_device_; }
  size_t distinct_classes() const { return distinct_; }  // before the cut

 private:
  std::vector<TaskClass> classes_;
  uint32_t shares_per_device_ = 0;
  size_t distinct_ = 0;
};

// ---- Policies -------------------------------------------------------------

struct PolicyOptions {
  // Seeds the random node order that breaks score ties and random choices.
  uint64_t seed = 42;
  // Required by fgd and pool; ignored by the others.
  std::shared_ptr<const WorkloadModel> workload;
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual const std::string& name() const = 0;
  // Chooses where `req` goes on `cluster` into *out (cleared first). An
  // invalid request is an error; a valid one that fits nowhere now is OK
  // with out->placed == false. Never changes `cluster`.
  virtual Status Place(const ClusterState& cluster, const Request& req, Placement* out) = 0;
  // Diagnostics (tests, debug logs): the score each node gets for `req` now
  // (higher wins; ties go to the policy's node order), NaN where the request
  // does not fit. Same errors as Place.
  virtual Status Scores(const ClusterState& cluster, const Request& req, std::vector<double>* out) = 0;
};

// The devices of `node` that one node's part of `req` takes, as best-fit
// chooses them: the tightest allowed device with enough free shares (ties:
// lowest index) for at most S shares, the lowest-index fully free allowed
// devices for whole devices. Devices only: CPU and memory are not checked.
// Empty if the request is invalid or does not fit. This is the select
// plugin's device choice on a node cons_tres has already picked.
std::vector<uint32_t> ChooseDevicesOnNode(const NodeState& node, const Request& req,
                                          uint32_t shares_per_device);

// As ChooseDevicesOnNode, trying the device sets of `levels` in order (each
// a mask over node.devices: true = may be used); the first set where the
// request fits wins. No levels: all devices. The select plugin puts the
// admin's preferred types and the devices local to the job's cores first.
std::vector<uint32_t> ChooseDevicesInOrder(const NodeState& node, const Request& req,
                                           uint32_t shares_per_device,
                                           const std::vector<std::vector<bool>>& levels);

// "first-fit", "least-loaded", "best-fit", "dot-product", "gpu-packing",
// "gpu-clustering", "random-fit", "fgd", "pool" (the default).
const std::vector<std::string>& PolicyNames();
constexpr const char kDefaultPolicy[] = "pool";

// Unknown name: an error listing the names. fgd/pool without a workload: an
// error (one built for another S: an error of Place). "pool:KEY=VALUE,..."
// sets pool's parameters (PoolParams in placement_fgd.h).
Result<std::unique_ptr<PlacementPolicy>> MakePolicy(const std::string& name,
                                                    const PolicyOptions& options);

}  // namespace vgpu

#endif  // VGPU_PLACEMENT_PLACEMENT_H_
