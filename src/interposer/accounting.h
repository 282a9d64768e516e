// The vendor-neutral half of an allocation hook: decide before the runtime
// is called (reserve in the job's usage region, or refuse), then keep or
// give back once it has answered; and give back on frees. The vendor half
// (cuda_hooks.cc, hip_hooks.cc) finds the device and maps the outcome to
// the runtime's own error codes.
#ifndef VGPU_INTERPOSER_ACCOUNTING_H_
#define VGPU_INTERPOSER_ACCOUNTING_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "enforcer.h"

namespace vgpu {
namespace interposer {

struct Gate {
  bool refused = false;              // answer with the runtime's out-of-memory error
  DeviceAccount* account = nullptr;  // where the bytes are reserved (null: not counted)
  uint64_t bytes = 0;
};

// An allocation of `bytes`. Outside a vgpu job: passes, uncounted; failed
// closed: refused. In a job: `resolve()` names the job's device it is on
// (null: not one of the job's devices, refused), and the bytes are
// reserved there or refused past the limit.
template <typename Resolve>
Gate Admit(uint64_t bytes, Resolve resolve) {
  Enforcer& e = Enforcer::Get();
  Gate g;
  if (!e.active()) {
    if (e.failed_closed()) {
      e.ReportRefusal("device memory");
      g.refused = true;
    }
    return g;
  }
  DeviceAccount* account = resolve();
  if (!account || !e.Reserve(account, bytes)) {
    g.refused = true;
    return g;
  }
  g.account = account;
  g.bytes = bytes;
  return g;
}

// After the runtime answered: keep the reservation under `key`, or give it
// back.
inline void Settle(const Gate& g, bool allocated, Enforcer::Kind kind, uint64_t key) {
  if (!g.account) return;
  Enforcer& e = Enforcer::Get();
  if (allocated)
    e.Remember(kind, key, g.account, g.bytes);
  else
    e.Release(g.account, g.bytes);
}

// A pitched allocation was admitted with `guess` bytes and took `actual`:
// reserve the difference or give it back. False: `actual` does not fit
// (the caller frees the allocation and answers out of memory; the guess
// is given back here).
inline bool SettlePitch(Gate* g, uint64_t guess, uint64_t actual) {
  if (!g->account) return true;
  Enforcer& e = Enforcer::Get();
  if (actual > guess && !e.Reserve(g->account, actual - guess)) {
    e.Release(g->account, guess);
    g->account = nullptr;
    return false;
  }
  if (actual < guess) e.Release(g->account, guess - actual);
  g->bytes = actual;
  return true;
}

// Rows of 512-byte multiples: what a pitched allocation is admitted with
// before the runtime says its pitch.
inline uint64_t PitchGuess(uint64_t width, uint64_t height) { return (width + 511) / 512 * 512 * height; }

// The runtime freed what `key` names: give its bytes back.
inline void Freed(Enforcer::Kind kind, uint64_t key) {
  Enforcer& e = Enforcer::Get();
  if (!e.active()) return;
  DeviceAccount* account = nullptr;
  uint64_t bytes = 0;
  if (e.Forget(kind, key, &account, &bytes)) e.Release(account, bytes);
}

// The job's accounts of one runtime's devices, by the runtime's device
// ordinal, each looked up once per process: `id(dev, &text)` gives the id
// the limits file names the device by (false: none), then Enforcer::Find.
// A device that is not the job's is warned about once (`runtime` names it
// in the message) and remembered as null. Make one per runtime with new and
// never free it: hooks may run while the process exits.
class DeviceAccounts {
 public:
  explicit DeviceAccounts(const char* runtime) : runtime_(runtime) {
    for (auto& slot : fast_) slot.store(kUnknown, std::memory_order_relaxed);
  }

  template <typename Id>
  DeviceAccount* Get(int dev, Id id) {
    // Every allocation and launch asks: ordinals below kFast are answered
    // from an array without a lock once resolved.
    const bool fast = dev >= 0 && dev < kFast;
    if (fast) {
      DeviceAccount* known = fast_[dev].load(std::memory_order_acquire);
      if (known != kUnknown) return known;
    } else {
      std::lock_guard<std::mutex> hold(lock_);
      auto it = cache_.find(dev);
      if (it != cache_.end()) return it->second;
    }
    Enforcer& e = Enforcer::Get();
    std::string text;
    DeviceAccount* account = id(dev, &text) ? e.Find(text) : nullptr;
    if (!account)
      e.WarnOnce(std::string(runtime_) + " device " + std::to_string(dev) + (text.empty() ? "" : " (" + text + ")") +
                 " is not one of job " + std::to_string(e.job_id()) + "'s devices: its memory is refused");
    if (fast) {
      fast_[dev].store(account, std::memory_order_release);
    } else {
      std::lock_guard<std::mutex> hold(lock_);
      cache_[dev] = account;
    }
    return account;
  }

 private:
  static constexpr int kFast = 64;
  // Not a valid account: "not looked up yet" (null is "not the job's").
  static inline DeviceAccount* const kUnknown = reinterpret_cast<DeviceAccount*>(alignof(DeviceAccount));

  const char* runtime_;
  std::atomic<DeviceAccount*> fast_[kFast];
  std::mutex lock_;
  std::unordered_map<int, DeviceAccount*> cache_;
};

// The job's view of a device's memory for a memory query: the limit as
// the total, what the job has not used of it as free (never more than the
// runtime said is free). False outside a vgpu job (the runtime's numbers
// stand).
bool JobMemory(DeviceAccount* account, uint64_t* free_bytes, uint64_t* total_bytes);

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_ACCOUNTING_H_
