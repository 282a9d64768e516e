#include "pool_charges.h"

#include <pthread.h>

#include <new>
#include <vector>

namespace vgpu {
namespace interposer {
namespace {

std::mutex g_all_lock;
std::vector<PoolCharges*>* g_all = nullptr;
// This thread holds a runtime's pool lock (a Hold): the reclaimer, called
// from a reservation inside it, must not take a lock again.
thread_local int t_holds = 0;

}  // namespace

PoolCharges& PoolCharges::For(const PoolOps& ops) {
  std::lock_guard<std::mutex> hold(g_all_lock);
  if (!g_all) {
    g_all = new std::vector<PoolCharges*>();  // never freed: hooks may run at exit
    Enforcer::Get().SetReclaimer(&PoolCharges::ReclaimAll);
    // A child starts with no device memory and its own usage slot.
    pthread_atfork(nullptr, nullptr, [] {
      new (&g_all_lock) std::mutex();
      for (PoolCharges* c : *g_all) c->ClearAfterFork();
    });
  }
  for (PoolCharges* c : *g_all)
    if (&c->ops_ == &ops) return *c;
  g_all->push_back(new PoolCharges(ops));
  return *g_all->back();
}

PoolCharges::Hold::Hold(PoolCharges& charges) : hold_(charges.lock_) { ++t_holds; }
PoolCharges::Hold::~Hold() { --t_holds; }

bool PoolCharges::Settle(void* pool, bool give_back_only) {
  auto it = pools_.find(pool);
  uint64_t reserved = 0;
  if (it == pools_.end() || !ops_.reserved(pool, &reserved)) return true;
  Pool& p = it->second;
  Enforcer& e = Enforcer::Get();
  if (reserved < p.charged) {
    e.Release(p.account, p.charged - reserved);
    p.charged = reserved;
  } else if (reserved > p.charged && !give_back_only) {
    if (!e.Reserve(p.account, reserved - p.charged)) return false;
    p.charged = reserved;
  }
  return true;
}

PoolCharges::Outcome PoolCharges::Admit(void* pool, DeviceAccount* account, uint64_t bytes) {
  uint64_t used = 0, reserved = 0;
  if (!ops_.in_use(pool, &used) || !ops_.reserved(pool, &reserved)) return Outcome::kUnmeasured;
  const uint64_t growth = used + bytes > reserved ? used + bytes - reserved : 0;
  return Grow(pool, account, growth) ? Outcome::kAllocated : Outcome::kRefused;
}

bool PoolCharges::Grow(void* pool, DeviceAccount* account, uint64_t bytes) {
  Pool& p = pools_.try_emplace(pool, Pool{account, 0}).first->second;
  Enforcer& e = Enforcer::Get();
  if (bytes && !e.Reserve(account, bytes)) {
    for (auto& entry : pools_) Settle(entry.first, true);
    if (!e.Reserve(account, bytes)) return false;
  }
  p.charged += bytes;
  return true;
}

bool PoolCharges::Freed(uint64_t key) {
  auto it = owners_.find(key);
  if (it == owners_.end()) return false;
  void* pool = it->second;
  owners_.erase(it);
  Settle(pool);
  return true;
}

void PoolCharges::Destroyed(void* pool) {
  auto it = pools_.find(pool);
  if (it == pools_.end()) return;
  Enforcer::Get().Release(it->second.account, it->second.charged);
  pools_.erase(it);
  for (auto o = owners_.begin(); o != owners_.end();) o = o->second == pool ? owners_.erase(o) : std::next(o);
}

void PoolCharges::Reclaim() {
  if (t_holds) return;  // an allocation in progress settles its own pools
  std::unique_lock<std::mutex> hold(lock_, std::try_to_lock);
  if (!hold) return;
  for (auto& entry : pools_) Settle(entry.first, true);
}

void PoolCharges::ReclaimAll() {
  std::vector<PoolCharges*> all;
  {
    std::lock_guard<std::mutex> hold(g_all_lock);
    if (g_all) all = *g_all;
  }
  for (PoolCharges* c : all) c->Reclaim();
}

void PoolCharges::ClearAfterFork() {
  new (&lock_) std::mutex();
  pools_.clear();
  owners_.clear();
}

}  // namespace interposer
}  // namespace vgpu
