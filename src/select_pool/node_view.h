// slurmctld's records seen as placement-engine values: a node's vgpu
// devices (its GRES topology records), a job's vgpu requests, and a
// snapshot of every node as a ClusterState. Reads Slurm's structures only;
// called with slurmctld's job and node locks held (job_test, job_begin).
#ifndef VGPU_SELECT_POOL_NODE_VIEW_H_
#define VGPU_SELECT_POOL_NODE_VIEW_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cons_tres_ops.h"
#include "devices/slice_geometry.h"
#include "placement/placement.h"

namespace vgpu {
namespace select_pool {

// One node's vgpu devices: topology record t is device t.
struct VgpuDevices {
  gres_node_state_t* gres = nullptr;
  std::vector<bitstr_t*> bits;       // the device's share bits
  std::vector<bitstr_t*> cores;      // its local cores (null: any)
  std::vector<std::string> types;    // Type= of its gres.conf line
  // The largest request each device takes now: its free bits, or for a
  // sliced device (geometry set) the most a free slice position serves.
  std::vector<uint32_t> free;
  std::vector<uint32_t> unallocated;  // bits not allocated now (free before slices)
  std::vector<const SliceGeometry*> geometry;  // null: counted in shares
  uint32_t shares_per_device = 0;    // bits per device (all equal)

  // Slice positions of device t in use: its slots with a bit in `held`
  // (the node's allocation when null).
  SlotMask Taken(size_t t, const bitstr_t* held = nullptr) const;
};

uint32_t VgpuPluginId();

// The node's vgpu GRES state, or null (no vgpu on the node).
gres_node_state_t* VgpuNodeState(const node_record_t* node);

// False when the node has no vgpu GRES, or its device layout is not known
// yet (slurmctld restarted and the node has not registered since), or the
// layout is not ours (devices of different sizes). `sliced` (may be null)
// says which devices are counted in slices.
bool ReadVgpuDevices(const node_record_t* node, const SlicedModels* sliced, VgpuDevices* out);

// What each device of `devs` has free for a request of `per` shares per
// device: its free shares (all, with `capacity`), or 0 on a sliced device
// where no slice holds `per` now (or ever: 60 shares of a 910B, whose
// largest template is 50 %, while its LargestFit is the whole NPU).
std::vector<uint32_t> FreeFor(const VgpuDevices& devs, uint32_t per, bool capacity);

// The job's vgpu entries of its GRES request (usually one).
std::vector<gres_job_state_t*> VgpuRequests(const job_record_t* job);

// The job may run on cores other jobs hold (its partition is
// OverSubscribe=FORCE, or YES and the job asked --oversubscribe), as
// cons_tres decides it.
bool SharesCores(const job_record_t* job);

// The CPUs `job` asks of one node (at least 1).
uint64_t JobCpus(const job_record_t* job);

// What one node of `job` asks of the engine (per node: shares, type,
// CPUs, memory; no CPUs when it shares cores), types as ids of `cluster`.
Request RequestOf(const job_record_t* job, const gres_job_state_t* vgpu, const ClusterState& cluster);

// Every node whose vgpu layout is known, with what cons_tres says is free
// (CPU and memory from its node info, shares from the GRES bitmaps). A
// value: it holds no pointer into Slurm's records, so a kept view can only
// be stale, never dangling.
class ClusterView {
 public:
  ClusterView(uint32_t shares_per_device, const ConsTresOps* cons_tres, const SlicedModels* sliced);

  const ClusterState& cluster() const { return cluster_; }
  // ClusterState::KeepGenerationsOf on the snapshot.
  void KeepGenerationsOf(const ClusterView& before) { cluster_.KeepGenerationsOf(before.cluster_); }
  // Cluster index of a node table index, or -1.
  int ClusterIndex(int node_index) const;
  int NodeIndex(uint32_t cluster_index) const { return node_index_[cluster_index]; }
  // By cluster index: milli-CPUs of the node held by the running or
  // suspended jobs of `jobs` (slurmctld's job list; null: none), each job
  // counted, so above the node's CPUs when jobs share cores (cons_tres's
  // own count stops at the node's CPUs). Counted at the first call and
  // kept with the view: only jobs that share cores need it, and walking
  // the job list at every rebuild would cost every job start.
  const std::vector<uint64_t>& HeldCpuMilli(list_t* jobs) const;
  // Nodes skipped because their devices are not S shares each.
  const std::vector<std::string>& mismatched() const { return mismatched_; }
  // Whether node `cluster_index` has sliced devices.
  bool HasSlices(uint32_t cluster_index) const { return !slices_[cluster_index].empty(); }
  // Node `cluster_index` as a request of `per` shares per device sees it
  // (FreeFor: sliced devices where no slice holds `per` have none free); a
  // copy, so only for nodes HasSlices.
  NodeState NodeFor(uint32_t cluster_index, uint32_t per) const;

 private:
  ClusterState cluster_;
  std::vector<int> node_index_;
  std::vector<int> cluster_index_;  // by node table index
  mutable std::optional<std::vector<uint64_t>> held_cpu_milli_;
  // By cluster index, per device: its geometry and taken slots (empty for
  // a node without sliced devices).
  std::vector<std::vector<std::pair<const SliceGeometry*, SlotMask>>> slices_;
  std::vector<std::string> mismatched_;
};

}  // namespace select_pool
}  // namespace vgpu

#endif  // VGPU_SELECT_POOL_NODE_VIEW_H_
