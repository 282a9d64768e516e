// The process's view of its job's limits: decided once, at the first hooked
// call (nothing runs at library load), and then read on every hooked call.
//
//  * Not in a Slurm job, or in a job without vgpu: inactive; every hook
//    passes straight through.
//  * In a vgpu job with a valid limits file: active; allocations are
//    counted in the job's usage region of the device and refused past the
//    device's memory limit, memory queries report the limit.
//  * In a vgpu job whose limits file is missing, corrupt or not root-owned:
//    fail closed; device memory and driver initialisation are refused and
//    the reason is printed on stderr once.
//
// What decides (jobs/job_place.h): the job id from the process's cgroup and
// the root-owned limits file of that job, in the run directory compiled in
// (configure --with-vgpu-run-dir): no variable can point elsewhere, since
// any empty root-owned directory would make a job look like one without
// vgpu. In a user namespace (a container) the job may also be named by
// SLURM_JOB_ID, and the run directory counts only if the host's root wrote
// it; a vgpu job's process there that cannot find it fails closed.
// Environment variables never raise a limit: the only one read is
// VGPU_SHARES (set by the GRES plugin: its presence without a limits file
// means fail closed).
#ifndef VGPU_INTERPOSER_ENFORCER_H_
#define VGPU_INTERPOSER_ENFORCER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocation_table.h"
#include "jobs/job_limits.h"
#include "jobs/usage_region.h"

namespace vgpu {
namespace interposer {

struct DeviceAccount {
  DeviceLimit limit;                    // the job's
  std::unique_ptr<UsageRegion> region;  // the job's
  // In a job step that holds part of the job's shares (jobs/step_limits.h):
  // the step's part, held to as well as the job's. Null: the step holds
  // the job's whole part.
  DeviceLimit step_limit;
  std::unique_ptr<UsageRegion> step_region;

  // What this process is held to: the step's part where there is one.
  const DeviceLimit& held_to() const { return step_region ? step_limit : limit; }
  // The region whose token bucket paces this process's launches.
  UsageRegion* pace_region() const { return step_region ? step_region.get() : region.get(); }
};

class Enforcer {
 public:
  enum class Mode { kInactive, kActive, kFailClosed };
  enum class Kind { kPointer, kHandle, kArray, kModel };  // what an allocation key is

  // The process's enforcer, made on first use (thread-safe), never freed:
  // hooks may run during exit, after static destructors.
  static Enforcer& Get();

  Mode mode() const { return mode_; }
  bool active() const { return mode_ == Mode::kActive; }
  bool failed_closed() const { return mode_ == Mode::kFailClosed; }
  uint32_t job_id() const { return job_id_; }

  // Prints, once per process, why `what` is refused ("libvgpu: ...").
  void ReportRefusal(const char* what);
  // Prints `message` on stderr once per distinct message.
  void WarnOnce(const std::string& message);

  // The job's device with vendor id `uuid` (case-insensitive; "GPU-x" and
  // "MIG-x" are one id: CUDA gives a MIG device's UUID as bytes, which we
  // print "GPU-", NVML and the limits file as "MIG-"); when the job has
  // exactly one device and its uuid is unknown, that device. Null: not one
  // of the job's devices.
  DeviceAccount* Find(const std::string& uuid);

  // Takes `bytes` of the device's limit for this process; false if the
  // job's total would pass it, even after the reclaimer ran.
  bool Reserve(DeviceAccount* device, uint64_t bytes);
  // Run when a reservation does not fit, before it is refused: gives back
  // charges for memory the driver has since let go without a call we hook
  // (a stream-ordered pool shrinks at a synchronisation). Set once, by the
  // pool hooks; it must only give back, never reserve.
  void SetReclaimer(void (*reclaim)()) { reclaimer_ = reclaim; }
  void Release(DeviceAccount* device, uint64_t bytes);
  uint64_t Used(const DeviceAccount* device) const;

  // This process's allocations, to give back what a free call frees.
  void Remember(Kind kind, uint64_t key, DeviceAccount* device, uint64_t bytes);
  bool Forget(Kind kind, uint64_t key, DeviceAccount** device, uint64_t* bytes);

  // The run directory (compiled in).
  static std::string RunDir();

 private:
  Enforcer();
  void FailClosed(const std::string& why);
  void AfterForkInChild();

  Mode mode_ = Mode::kInactive;
  void (*reclaimer_)() = nullptr;
  uint32_t job_id_ = 0;
  std::string failure_;
  std::vector<std::unique_ptr<DeviceAccount>> devices_;

  std::mutex allocations_lock_;
  AllocationTable allocations_[4];  // by Kind

  std::mutex messages_lock_;
  std::vector<std::string> said_;
  bool refusal_said_ = false;
};

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_ENFORCER_H_
