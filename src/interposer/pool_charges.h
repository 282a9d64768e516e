// Stream-ordered memory pools, for any runtime that has them (CUDA's
// cuMemPool*, HIP's hipMemPool*). A stream-ordered allocation comes out of
// a pool, and the device memory is the pool's: a free puts the allocation
// back in the pool, which keeps it up to its release threshold (PyTorch's
// cudaMallocAsync backend sets UINT64_MAX, so a pool never gives anything
// back). So the job is charged what each pool reserves on its device (the
// runtime's RESERVED_MEM_CURRENT attribute), not what is allocated from it:
//
//  * an allocation is admitted if the growth it may cause (in use + asked -
//    reserved) fits; afterwards the charge is set to what the pool reserves,
//    and an allocation that made the pool grow past the limit is undone;
//  * frees, trims, a lowered threshold and a pool's destruction set it again;
//  * a pool shrinks on its own at a synchronisation, which is not hooked:
//    when a reservation would be refused, every pool's charge is first
//    brought down to what it reserves (Enforcer::SetReclaimer).
//
// A Hold serialises a runtime's stream-ordered allocations and frees in the
// process: the runtime is called with it held, so that charge and
// reservation agree. No other hook takes it.
#ifndef VGPU_INTERPOSER_POOL_CHARGES_H_
#define VGPU_INTERPOSER_POOL_CHARGES_H_

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "enforcer.h"

namespace vgpu {
namespace interposer {

// One runtime's pool calls. Pools are opaque handles.
struct PoolOps {
  // What the pool reserves on its device / has handed out; false if the
  // runtime cannot say (an old driver).
  bool (*reserved)(void* pool, uint64_t* bytes);
  bool (*in_use)(void* pool, uint64_t* bytes);
  // Gives back everything the pool does not use.
  void (*trim)(void* pool);
};

class PoolCharges {
 public:
  // The process's charges for one runtime (one per `ops`, made on first
  // use, never freed; `ops` must outlive them).
  static PoolCharges& For(const PoolOps& ops);

  // Holds the runtime's pool lock for the calls below (and marks this
  // thread as holding it, so the reclaimer leaves it alone).
  class Hold {
   public:
    explicit Hold(PoolCharges& charges);
    ~Hold();
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    std::lock_guard<std::mutex> hold_;
  };

  // Sets the pool's charge to what it reserves (a Hold held); false if that
  // is more than the job's limit lets it have. `give_back_only`: only ever
  // lower the charge (the reclaimer's rule).
  bool Settle(void* pool, bool give_back_only = false);

  enum class Outcome { kAllocated, kRefused, kFailed, kUnmeasured };
  // An allocation of `bytes` from `pool`, charged to `account` (a Hold
  // held): `allocate(&key)` calls the runtime (true: allocated, *key the
  // pointer), `undo(key)` frees it again. kRefused: nothing is allocated;
  // kFailed: the runtime refused; kUnmeasured: the runtime cannot report the
  // pool's size (an old driver), nothing was done: charge it some other way.
  template <typename AllocateFn, typename UndoFn>
  Outcome Allocate(void* pool, DeviceAccount* account, uint64_t bytes, AllocateFn allocate, UndoFn undo);

  // Admits work that may take `bytes` more from `pool` (a Hold held): the
  // growth it may cause (in use + bytes - reserved) is charged now; the
  // caller settles the pool once the work is done. kAllocated: admitted.
  Outcome Admit(void* pool, DeviceAccount* account, uint64_t bytes);

  // Gives back everything `pool` does not use (the runtime's trim).
  void Trim(void* pool) { ops_.trim(pool); }

  // `key` was freed (a Hold held): settles its pool; false if it is not
  // one of the pools' allocations.
  bool Freed(uint64_t key);
  // The pool is gone: its charge goes back (a Hold held).
  void Destroyed(void* pool);

 private:
  explicit PoolCharges(const PoolOps& ops) : ops_(ops) {}
  // `bytes` more charged to `pool` for `account`; false if they do not fit
  // even once every pool is settled.
  bool Grow(void* pool, DeviceAccount* account, uint64_t bytes);
  // Lowers every pool's charge to what it reserves, unless an allocation
  // holds the lock (it settles itself).
  void Reclaim();
  static void ReclaimAll();
  void ClearAfterFork();

  struct Pool {
    DeviceAccount* account;
    uint64_t charged;
  };
  const PoolOps& ops_;
  std::mutex lock_;
  std::unordered_map<void*, Pool> pools_;
  std::unordered_map<uint64_t, void*> owners_;  // allocation -> its pool
};

template <typename AllocateFn, typename UndoFn>
PoolCharges::Outcome PoolCharges::Allocate(void* pool, DeviceAccount* account, uint64_t bytes, AllocateFn allocate,
                                           UndoFn undo) {
  const Outcome admitted = Admit(pool, account, bytes);
  if (admitted != Outcome::kAllocated) return admitted;
  uint64_t key = 0;
  if (!allocate(&key)) {
    Settle(pool);
    return Outcome::kFailed;
  }
  if (!Settle(pool)) {
    // The pool grew by more than was admitted (runtimes grow pools in large
    // steps) and the rest does not fit: undo, and let the pool give it back.
    undo(key);
    ops_.trim(pool);
    Settle(pool, true);
    return Outcome::kRefused;
  }
  owners_[key] = pool;
  return Outcome::kAllocated;
}

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_POOL_CHARGES_H_
