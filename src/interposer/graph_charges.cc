#include "graph_charges.h"

#include <pthread.h>

#include <new>

namespace vgpu {
namespace interposer {
namespace {

std::mutex g_all_lock;
std::vector<std::pair<const PoolOps*, GraphCharges*>>* g_all = nullptr;

}  // namespace

GraphCharges& GraphCharges::For(const PoolOps& pools, DeviceAccount* (*account_of)(int)) {
  std::lock_guard<std::mutex> hold(g_all_lock);
  if (!g_all) {
    g_all = new std::vector<std::pair<const PoolOps*, GraphCharges*>>();  // never freed: hooks run at exit
    // A child inherits no graphs it can launch (the runtimes do not survive
    // fork), and its charges start again (PoolCharges).
    pthread_atfork(nullptr, nullptr, [] { new (&g_all_lock) std::mutex(); });
  }
  for (const auto& entry : *g_all)
    if (entry.first == &pools) return *entry.second;
  g_all->emplace_back(&pools, new GraphCharges(pools, account_of));
  return *g_all->back().second;
}

void GraphCharges::Add(Needs* needs, int device, uint64_t bytes) {
  for (auto& need : *needs)
    if (need.first == device) {
      need.second = need.second + bytes < need.second ? UINT64_MAX : need.second + bytes;
      return;
    }
  needs->emplace_back(device, bytes);
}

void GraphCharges::NodeAdded(const void* graph, int device, uint64_t bytes) {
  std::lock_guard<std::mutex> hold(lock_);
  Add(&graphs_[graph], device, bytes);
}

void GraphCharges::Captured(uint64_t capture, int device, uint64_t bytes) {
  std::lock_guard<std::mutex> hold(lock_);
  Add(&captures_[capture], device, bytes);
}

void GraphCharges::CaptureEnded(uint64_t capture, const void* graph) {
  std::lock_guard<std::mutex> hold(lock_);
  auto it = captures_.find(capture);
  if (it == captures_.end()) return;
  if (graph)
    for (const auto& need : it->second) Add(&graphs_[graph], need.first, need.second);
  captures_.erase(it);
}

void GraphCharges::Included(const void* from, const void* into) {
  std::lock_guard<std::mutex> hold(lock_);
  auto it = graphs_.find(from);
  if (it == graphs_.end()) return;
  const Needs needs = it->second;  // `into` may rehash the map
  for (const auto& need : needs) Add(&graphs_[into], need.first, need.second);
}

void GraphCharges::GraphDestroyed(const void* graph) {
  std::lock_guard<std::mutex> hold(lock_);
  graphs_.erase(graph);
}

void GraphCharges::Instantiated(const void* graph, const void* exec) {
  std::lock_guard<std::mutex> hold(lock_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end() || it->second.empty()) return;
  // A handle the runtime reuses replaces the old one's needs.
  if (execs_.insert_or_assign(exec, it->second).second) execs_with_memory_.fetch_add(1);
}

void GraphCharges::ExecDestroyed(const void* exec) {
  Needs needs;
  {
    std::lock_guard<std::mutex> hold(lock_);
    auto it = execs_.find(exec);
    if (it == execs_.end()) return;
    needs = std::move(it->second);
    execs_.erase(it);
    execs_with_memory_.fetch_sub(1);
  }
  if (!Enforcer::Get().active()) return;
  PoolCharges::Hold hold(pools_);
  for (const auto& need : needs) pools_.Settle(PoolOf(need.first), true);
}

void GraphCharges::Trimmed(int device) {
  if (!Enforcer::Get().active()) return;
  PoolCharges::Hold hold(pools_);
  pools_.Settle(PoolOf(device), true);
}

GraphCharges::Needs GraphCharges::NeedsOf(const void* exec) {
  std::lock_guard<std::mutex> hold(lock_);
  auto it = execs_.find(exec);
  return it == execs_.end() ? Needs() : it->second;
}

bool GraphCharges::Admit(const Needs& needs) {
  size_t admitted = 0;
  for (; admitted < needs.size(); ++admitted) {
    DeviceAccount* account = account_of_(needs[admitted].first);
    // Unmeasured (a runtime without graph memory attributes): refused, as
    // nothing could tell what the launch took.
    if (!account ||
        pools_.Admit(PoolOf(needs[admitted].first), account, needs[admitted].second) !=
            PoolCharges::Outcome::kAllocated)
      break;
  }
  if (admitted == needs.size()) return true;
  for (size_t i = 0; i < admitted; ++i) pools_.Settle(PoolOf(needs[i].first), true);
  return false;
}

void GraphCharges::SettleAll(const Needs& needs) {
  for (const auto& need : needs) {
    void* pool = PoolOf(need.first);
    if (pools_.Settle(pool)) continue;
    // The pool grew by more than the nodes asked (the runtime's
    // granularity) and the rest does not fit: give back what it can.
    pools_.Trim(pool);
    pools_.Settle(pool, true);
  }
}

}  // namespace interposer
}  // namespace vgpu
