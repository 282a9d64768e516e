// One accounting region per job and device: a small file in the job's run
// directory, mapped shared by every process of the job that uses the
// device. Each process owns one slot (its pid, its start time, the bytes it
// holds); the job's use is the sum over live slots, so a process killed
// with SIGKILL stops counting as soon as someone notices it is gone (the
// next process to start, or the next reservation that would go over the
// limit, reaps dead slots), and nothing has to run at its death.
//
// Concurrency: a reservation adds to its own slot, then sums the slots,
// and takes the bytes back if the sum is over the limit: two processes
// cannot both take the last bytes (each later add's sum sees the earlier),
// and no lock is taken while the job is under its limit. Over it, a
// robust process-shared mutex serialises the slow path (reap dead
// processes, look again) and the rare updates of the header (slot claims,
// the pacing bucket); it is never held across a driver call (reserve
// first, call the driver, give back on failure). A holder killed inside
// the critical section leaves a consistent region (every update there is
// one atomic store), and the next locker recovers the mutex. Start-up is
// one slot claim: O(1) in the number of processes, no syscall beyond
// reading /proc/self/stat once.
//
// fork: the child claims its own slot (device memory is not inherited).
// exec: the new image finds its pid's slot from the old image, whose device
// memory died with it, and takes it over with zero use.
#ifndef VGPU_JOBS_USAGE_REGION_H_
#define VGPU_JOBS_USAGE_REGION_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "util/status.h"

namespace vgpu {

struct UsageRegionLayout;  // the mapped file (usage_region.cc)
struct UsageSlot;

class UsageRegion {
 public:
  static constexpr uint32_t kDefaultSlots = 1024;

  enum class Reservation { kOk, kOverLimit, kNoSlot };

  // Writes a fresh region file at `path` (mode 0600; the caller chowns it
  // to the job's user). Replaces any file there.
  static Status Create(const std::string& path, uint32_t slots = kDefaultSlots);
  // Maps an existing region; an error names the file and what is wrong
  // with it (missing, wrong size, not a region).
  static Result<std::unique_ptr<UsageRegion>> Open(const std::string& path);
  // The same for the file `name` in the open directory `dir_fd` (a run
  // directory handed over as a descriptor); `path` is for messages.
  static Result<std::unique_ptr<UsageRegion>> OpenAt(int dir_fd, const std::string& name, const std::string& path);

  ~UsageRegion();
  UsageRegion(const UsageRegion&) = delete;
  UsageRegion& operator=(const UsageRegion&) = delete;

  // Takes `bytes` for this process if the job's total stays <= `limit`.
  Reservation Reserve(uint64_t bytes, uint64_t limit);
  // Gives back bytes this process took (never below zero).
  void Release(uint64_t bytes);

  // Bytes held by the job's live processes (dead ones may still count
  // until reaped) / by this process.
  uint64_t Used() const;
  uint64_t UsedByThisProcess() const;
  // Highest job total ever reserved.
  uint64_t Peak() const;
  // Reservations refused as over the limit, all processes.
  uint64_t Refusals() const;

  // What a region says, read without taking part in it (mapped read-only,
  // nothing reaped, no slot claimed): for readers that are not the job's
  // (vgpu-exporter). used_bytes counts slots not reaped yet too.
  struct Stats {
    uint64_t used_bytes = 0, peak_bytes = 0, busy_ns = 0, refusals = 0;
    uint32_t processes = 0;
  };
  static Result<Stats> ReadStats(const std::string& path);
  // Compute pacing, one token bucket per job and device: device time
  // accrues at `share` of the wall clock, up to `burst_ns`; kernels spend
  // it when they are seen to complete (ChargeBusy). PaceDelay says how
  // long to wait before the next launch (0: go now). `now_ns`: a
  // CLOCK_MONOTONIC reading (a parameter, so tests can drive time). Called
  // before every launch: while the bucket holds credit and was brought up
  // to date less than kRefillEveryNs ago, it answers 0 from two atomic
  // reads, without the lock (what accrued meanwhile is added by the next
  // call that takes it: at most share x kRefillEveryNs late).
  static constexpr uint64_t kRefillEveryNs = 1000000;
  uint64_t PaceDelay(double share, uint64_t burst_ns, uint64_t now_ns);
  void ChargeBusy(uint64_t busy_ns);
  // Charges device time [start_ns, end_ns) (CLOCK_MONOTONIC) minus what of
  // it is already charged: the job's processes each time their own work,
  // and a kernel queued behind another process's kernel would otherwise
  // be charged for both. Returns what was charged.
  uint64_t ChargeInterval(uint64_t start_ns, uint64_t end_ns);
  // Device time charged by the job's processes / by this process.
  uint64_t BusyNs() const;
  uint64_t BusyNsOfThisProcess() const;

  // Frees the slots of processes that no longer exist; returns how many.
  size_t ReapDead();
  // Slots in use (live or not yet reaped).
  size_t Processes() const;

  // Must be called in a forked child (pthread_atfork) before it uses the
  // region: forgets the parent's slot, so the child claims its own.
  void ForgetSlotAfterFork();

 private:
  UsageRegion(const std::string& path, UsageRegionLayout* map, size_t size);
  UsageSlot* Slot();  // claims on first use; null when full
  bool Lock();
  void Unlock();
  bool TryReserve(UsageSlot* s, uint64_t bytes, uint64_t limit);
  static constexpr int kReserveAttempts = 4;
  uint32_t Limit() const;  // slots to look at

  std::string path_;
  UsageRegionLayout* map_;
  size_t size_;
  std::atomic<UsageSlot*> slot_{nullptr};  // this process's, claimed once
  pid_t slot_pid_ = 0;
  uint64_t incarnation_;
};

}  // namespace vgpu

#endif  // VGPU_JOBS_USAGE_REGION_H_
