// The process's live allocations of one kind (device pointers, handles,
// arrays): key -> (account, bytes), looked up by every free. An open
// addressing table (linear probing, backward-shift deletion): no node is
// allocated per entry, so remembering and forgetting an allocation costs no
// malloc, which an allocator-heavy program (a caching allocator's misses,
// a benchmark) would otherwise pay twice per allocation. Not thread-safe:
// the Enforcer holds its lock around it.
#ifndef VGPU_INTERPOSER_ALLOCATION_TABLE_H_
#define VGPU_INTERPOSER_ALLOCATION_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vgpu {
namespace interposer {

struct DeviceAccount;

class AllocationTable {
 public:
  struct Value {
    DeviceAccount* device = nullptr;
    uint64_t bytes = 0;
  };

  // Sets key's value (replacing one there).
  void Put(uint64_t key, Value value) {
    if ((used_ + 1) * 2 > slots_.size()) Grow();
    size_t i = Home(key);
    while (slots_[i].full && slots_[i].key != key) i = Next(i);
    if (!slots_[i].full) ++used_;
    slots_[i] = Slot{key, value, true};
  }

  // Removes key into *value; false if it is not there.
  bool Take(uint64_t key, Value* value) {
    if (used_ == 0) return false;
    size_t i = Home(key);
    while (slots_[i].full && slots_[i].key != key) i = Next(i);
    if (!slots_[i].full) return false;
    *value = slots_[i].value;
    // Backward shift: move later entries of the probe run into the hole,
    // so that lookups never need tombstones.
    size_t hole = i;
    for (size_t j = Next(i); slots_[j].full; j = Next(j)) {
      const size_t home = Home(slots_[j].key);
      // j's entry may move to the hole if its home is not in (hole, j].
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole].full = false;
    --used_;
    return true;
  }

  void Clear() {
    slots_.clear();
    used_ = 0;
  }

  size_t size() const { return used_; }

 private:
  struct Slot {
    uint64_t key = 0;
    Value value;
    bool full = false;
  };

  size_t Home(uint64_t key) const {
    // Device pointers are 256-byte aligned and handles consecutive: mix
    // the bits (Fibonacci hashing) so that neither clusters.
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  size_t Next(size_t i) const { return (i + 1) & (slots_.size() - 1); }

  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const size_t size = old.empty() ? 64 : old.size() * 2;
    slots_.assign(size, Slot());
    shift_ = 64;
    for (size_t s = size; s > 1; s >>= 1) --shift_;
    used_ = 0;
    for (const Slot& s : old)
      if (s.full) Put(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;
  unsigned shift_ = 64;
};

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_ALLOCATION_TABLE_H_
