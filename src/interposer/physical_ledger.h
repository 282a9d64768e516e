// Device memory of the virtual memory management APIs (CUDA's cuMemCreate /
// cuMemMap / cuMemUnmap / cuMemRelease; HIP's hipMem* twins): a physical
// allocation stays on the device while its handle is unreleased or any
// mapping of it remains, whichever ends last, as the drivers document. So
// its charge is given back only then: NCCL releases a handle right after
// mapping it, and PyTorch's expandable segments unmap before they release;
// both must keep the memory counted while it is mapped. A binding to a
// CUDA multicast object (cuMulticastBindMem/BindAddr, NCCL's NVLink
// SHARP buffers) holds the memory as a mapping does, until
// cuMulticastUnbind: releasing the multicast object is not taken as an
// unbind, so the charge lasts at least as long as the binding.
//
// Thread-safe. Keys are the driver's handle values and virtual addresses;
// a handle the ledger never saw created (imported from another process,
// made before the job's limits applied) is ignored: its memory is counted
// where it was created.
#ifndef VGPU_INTERPOSER_PHYSICAL_LEDGER_H_
#define VGPU_INTERPOSER_PHYSICAL_LEDGER_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accounting.h"
#include "enforcer.h"

namespace vgpu {
namespace interposer {

class PhysicalLedger {
 public:
  // A charge to give back: `bytes` of `account`.
  struct Charge {
    DeviceAccount* account;
    uint64_t bytes;
  };

  // The process's ledger (never freed: hooks may run while it exits).
  static PhysicalLedger& Get();

  // `handle` was created with `bytes` charged to `account` (one reference).
  void Created(uint64_t handle, DeviceAccount* account, uint64_t bytes);
  // Another reference to `handle` (cuMemRetainAllocationHandle).
  void Retained(uint64_t handle);
  // `handle` is mapped at [va, va + size).
  void Mapped(uint64_t handle, uint64_t va, uint64_t size);
  // The handle that the mapping holding `va` maps, or false.
  bool HandleAt(uint64_t va, uint64_t* handle) const;

  // `handle` is bound to multicast object `mc` at [offset, offset + size).
  void Bound(uint64_t mc, uint64_t offset, uint64_t size, uint64_t handle);
  // The bindings of memory of `account` to `mc` inside [offset, offset +
  // size) are gone; the charges of the allocations that no longer exist.
  std::vector<Charge> Unbound(uint64_t mc, const DeviceAccount* account, uint64_t offset, uint64_t size);

  // One reference to `handle` is released; the charge to give back if that
  // was the last reference and nothing maps it.
  std::vector<Charge> Released(uint64_t handle);
  // Every mapping inside [va, va + size) is gone; the charges of the
  // allocations that no longer exist.
  std::vector<Charge> Unmapped(uint64_t va, uint64_t size);

  // After fork, in the child: the parent's driver state is not the child's.
  void Clear();

 private:
  struct Allocation {
    DeviceAccount* account;
    uint64_t bytes;
    int references;
    int mappings;  // mappings and multicast bindings
  };
  struct Mapping {
    uint64_t size;
    uint64_t handle;
  };

  // Ends `handle` if nothing holds it any more.
  void EndIfUnused(uint64_t handle, std::vector<Charge>* out);

  mutable std::mutex lock_;
  std::unordered_map<uint64_t, Allocation> allocations_;
  std::map<uint64_t, Mapping> mappings_;  // by start address
  // Multicast bindings by (multicast object, offset); several devices'
  // memory may be bound at one offset.
  std::multimap<std::pair<uint64_t, uint64_t>, Mapping> bindings_;
};

// Gives each charge back to its account.
void GiveBack(const std::vector<PhysicalLedger::Charge>& charges);

// After a physical allocation admitted as `g` (accounting.h): the ledger
// takes the charge under `handle` if `created`, else it is given back.
void SettleCreated(const Gate& g, bool created, uint64_t handle);

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_PHYSICAL_LEDGER_H_
