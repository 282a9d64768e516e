// Device memory a runtime reserves for a context's limits: the in-kernel
// malloc heap, the printf buffer, and the stacks of every thread the device
// can hold at once (CUDA's cuCtxSetLimit, HIP's hipDeviceSetLimit). What a
// limit was before the process first changed it is part of the context,
// like the rest of its memory (not counted); growth over that is charged
// to the job, and refused past its limit before the runtime is asked.
#ifndef VGPU_INTERPOSER_LIMIT_CHARGES_H_
#define VGPU_INTERPOSER_LIMIT_CHARGES_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "enforcer.h"

namespace vgpu {
namespace interposer {

class LimitCharges {
 public:
  // The process's charges (never freed: hooks may run at exit).
  static LimitCharges& Get() {
    static LimitCharges* const charges = new LimitCharges();
    return *charges;
  }

  enum class Outcome { kRefused, kSet, kFailed };
  // Sets limit `limit` of `account`'s device to `value` by `set()` (true:
  // the runtime took it), each unit of the limit taking `bytes_per_unit` of
  // device memory; `baseline()` reads the limit's value the first time.
  // kRefused: the growth does not fit, the runtime was not asked.
  template <typename Baseline, typename Set>
  Outcome Charge(DeviceAccount* account, int limit, uint64_t value, uint64_t bytes_per_unit, Baseline baseline,
                 Set set) {
    std::lock_guard<std::mutex> hold(lock_);
    auto it = limits_.find({account, limit});
    if (it == limits_.end()) it = limits_.emplace(std::make_pair(account, limit), State{baseline(), 0}).first;
    State& state = it->second;
    const uint64_t growth = value > state.baseline ? (value - state.baseline) * bytes_per_unit : 0;
    Enforcer& e = Enforcer::Get();
    if (growth > state.charged && !e.Reserve(account, growth - state.charged)) return Outcome::kRefused;
    const bool taken = set();
    const uint64_t keep = taken ? growth : state.charged;
    const uint64_t held = std::max(growth, state.charged);  // reserved above, on failure too
    if (held > keep) e.Release(account, held - keep);
    state.charged = keep;
    return taken ? Outcome::kSet : Outcome::kFailed;
  }

 private:
  struct State {
    uint64_t baseline;
    uint64_t charged;
  };
  std::mutex lock_;
  std::map<std::pair<DeviceAccount*, int>, State> limits_;
};

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_LIMIT_CHARGES_H_
