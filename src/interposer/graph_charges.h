// Graph memory, for any runtime that has it (CUDA's cuGraphAddMemAllocNode
// and cuMemAllocAsync captured into a graph; HIP's twins). Nothing is
// allocated when such a node is made: the runtime takes the memory from the
// device's graph pool when the graph is launched, and the pool keeps it for
// later launches until a trim. So, as for stream-ordered pools
// (pool_charges.h), the job is charged what each device's graph pool
// reserves, and a launch is admitted if the growth it may cause fits:
//
//  * a graph carries the bytes its allocation nodes ask, per device: nodes
//    added to it, allocations captured into it, graphs cloned or embedded
//    into it. An upper bound: the runtime may reuse memory between nodes,
//    and removed nodes are not taken off;
//  * instantiation hands the graph's bytes to the executable graph;
//  * launching one that has any: admitted if (in use + its bytes -
//    reserved) fits on each device, else the launch is refused with
//    out-of-memory and nothing runs; afterwards each charge is set to what
//    the pool reserves;
//  * a trim, an executable graph's destruction and the reclaimer
//    (pool_charges.h) lower it.
//
// The graph pools are a PoolCharges of their own, one "pool" per device
// (PoolOf); a runtime without graph memory attributes cannot be measured and
// its launches with memory nodes are refused (fail closed).
#ifndef VGPU_INTERPOSER_GRAPH_CHARGES_H_
#define VGPU_INTERPOSER_GRAPH_CHARGES_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "enforcer.h"
#include "pool_charges.h"

namespace vgpu {
namespace interposer {

class GraphCharges {
 public:
  // The process's graph charges for one runtime (one per `pools`, made on
  // first use, never freed). `pools` measures and trims device
  // DeviceOf(pool)'s graph pool; `account_of` gives the job's account of a
  // device, or null.
  static GraphCharges& For(const PoolOps& pools, DeviceAccount* (*account_of)(int device));
  static void* PoolOf(int device) { return reinterpret_cast<void*>(static_cast<uintptr_t>(device) + 1); }
  static int DeviceOf(void* pool) { return static_cast<int>(reinterpret_cast<uintptr_t>(pool) - 1); }

  // What graphs will allocate. Graphs, executable graphs and captures are
  // the runtime's opaque handles and ids.
  void NodeAdded(const void* graph, int device, uint64_t bytes);
  void Captured(uint64_t capture, int device, uint64_t bytes);
  // The capture ended into `graph` (null: it failed).
  void CaptureEnded(uint64_t capture, const void* graph);
  // `from`'s allocations become part of `into` (a clone, a child graph).
  void Included(const void* from, const void* into);
  void GraphDestroyed(const void* graph);
  void Instantiated(const void* graph, const void* exec);
  void ExecDestroyed(const void* exec);
  // The device's graph pool may reserve less.
  void Trimmed(int device);

  // Runs `launch()` (true: the runtime launched it) for `exec` if what it
  // may allocate fits in the job's limits; false: refused, not run.
  template <typename LaunchFn>
  bool Launch(const void* exec, LaunchFn launch);

 private:
  using Needs = std::vector<std::pair<int, uint64_t>>;  // (device, bytes)
  GraphCharges(const PoolOps& pools, DeviceAccount* (*account_of)(int)) : pools_(PoolCharges::For(pools)),
                                                                         account_of_(account_of) {}
  static void Add(Needs* needs, int device, uint64_t bytes);
  // `exec`'s needs; empty if none.
  Needs NeedsOf(const void* exec);
  // Admits `needs` on every device (a Hold held); false: nothing charged.
  bool Admit(const Needs& needs);
  void SettleAll(const Needs& needs);

  PoolCharges& pools_;
  DeviceAccount* (*const account_of_)(int device);
  std::mutex lock_;  // the maps below
  std::unordered_map<const void*, Needs> graphs_, execs_;
  std::unordered_map<uint64_t, Needs> captures_;
  std::atomic<size_t> execs_with_memory_{0};  // launches skip the lock while 0
};

template <typename LaunchFn>
bool GraphCharges::Launch(const void* exec, LaunchFn launch) {
  if (execs_with_memory_.load(std::memory_order_relaxed) == 0 || !Enforcer::Get().active()) {
    launch();
    return true;
  }
  const Needs needs = NeedsOf(exec);
  if (needs.empty()) {
    launch();
    return true;
  }
  PoolCharges::Hold hold(pools_);
  if (!Admit(needs)) return false;
  launch();
  SettleAll(needs);
  return true;
}

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_GRAPH_CHARGES_H_
