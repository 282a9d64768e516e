#include "physical_ledger.h"

#include <pthread.h>

#include <new>

namespace vgpu {
namespace interposer {

PhysicalLedger& PhysicalLedger::Get() {
  static PhysicalLedger* const ledger = [] {
    auto* l = new PhysicalLedger();
    pthread_atfork(nullptr, nullptr, [] { PhysicalLedger::Get().Clear(); });
    return l;
  }();
  return *ledger;
}

void PhysicalLedger::Created(uint64_t handle, DeviceAccount* account, uint64_t bytes) {
  std::lock_guard<std::mutex> hold(lock_);
  allocations_[handle] = Allocation{account, bytes, 1, 0};
}

void PhysicalLedger::Retained(uint64_t handle) {
  std::lock_guard<std::mutex> hold(lock_);
  auto it = allocations_.find(handle);
  if (it != allocations_.end()) ++it->second.references;
}

void PhysicalLedger::Mapped(uint64_t handle, uint64_t va, uint64_t size) {
  std::lock_guard<std::mutex> hold(lock_);
  auto it = allocations_.find(handle);
  if (it == allocations_.end()) return;
  ++it->second.mappings;
  mappings_[va] = Mapping{size, handle};
}

bool PhysicalLedger::HandleAt(uint64_t va, uint64_t* handle) const {
  std::lock_guard<std::mutex> hold(lock_);
  auto it = mappings_.upper_bound(va);
  if (it == mappings_.begin()) return false;
  --it;
  if (va - it->first >= it->second.size) return false;
  *handle = it->second.handle;
  return true;
}

std::vector<PhysicalLedger::Charge> PhysicalLedger::Released(uint64_t handle) {
  std::vector<Charge> out;
  std::lock_guard<std::mutex> hold(lock_);
  auto it = allocations_.find(handle);
  if (it == allocations_.end() || it->second.references == 0) return out;
  --it->second.references;
  EndIfUnused(handle, &out);
  return out;
}

std::vector<PhysicalLedger::Charge> PhysicalLedger::Unmapped(uint64_t va, uint64_t size) {
  std::vector<Charge> out;
  std::lock_guard<std::mutex> hold(lock_);
  for (auto it = mappings_.lower_bound(va); it != mappings_.end() && it->first - va < size;) {
    const uint64_t handle = it->second.handle;
    it = mappings_.erase(it);
    auto a = allocations_.find(handle);
    if (a == allocations_.end()) continue;
    --a->second.mappings;
    EndIfUnused(handle, &out);
  }
  return out;
}

void PhysicalLedger::Bound(uint64_t mc, uint64_t offset, uint64_t size, uint64_t handle) {
  std::lock_guard<std::mutex> hold(lock_);
  auto it = allocations_.find(handle);
  if (it == allocations_.end()) return;
  ++it->second.mappings;
  bindings_.emplace(std::make_pair(mc, offset), Mapping{size, handle});
}

std::vector<PhysicalLedger::Charge> PhysicalLedger::Unbound(uint64_t mc, const DeviceAccount* account,
                                                            uint64_t offset, uint64_t size) {
  std::vector<Charge> out;
  std::lock_guard<std::mutex> hold(lock_);
  for (auto it = bindings_.lower_bound({mc, offset});
       it != bindings_.end() && it->first.first == mc && it->first.second - offset < size;) {
    const uint64_t handle = it->second.handle;
    auto a = allocations_.find(handle);
    if (a == allocations_.end()) {
      it = bindings_.erase(it);
      continue;
    }
    if (a->second.account != account) {
      ++it;
      continue;
    }
    it = bindings_.erase(it);
    --a->second.mappings;
    EndIfUnused(handle, &out);
  }
  return out;
}

void PhysicalLedger::EndIfUnused(uint64_t handle, std::vector<Charge>* out) {
  auto it = allocations_.find(handle);
  if (it->second.references > 0 || it->second.mappings > 0) return;
  if (it->second.account) out->push_back(Charge{it->second.account, it->second.bytes});
  allocations_.erase(it);
}

void PhysicalLedger::Clear() {
  new (&lock_) std::mutex();
  allocations_.clear();
  mappings_.clear();
  bindings_.clear();
}

void GiveBack(const std::vector<PhysicalLedger::Charge>& charges) {
  Enforcer& e = Enforcer::Get();
  for (const auto& c : charges) e.Release(c.account, c.bytes);
}

void SettleCreated(const Gate& g, bool created, uint64_t handle) {
  if (!g.account) return;
  if (created)
    PhysicalLedger::Get().Created(handle, g.account, g.bytes);
  else
    Enforcer::Get().Release(g.account, g.bytes);
}

}  // namespace interposer
}  // namespace vgpu
