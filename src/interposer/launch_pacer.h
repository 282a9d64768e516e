// Compute pacing for CUDA launches: a job holding S of a device's N shares
// keeps the device busy about S/N of the time, all its processes together.
//
// How: every paced launch is bracketed by two CUDA events on its stream;
// when the end event has completed, the two are placed on the host clock
// (through a reference event per context whose completion time the host
// saw) and the interval is charged to the job's token bucket in its usage
// region (UsageRegion::ChargeInterval, which charges time the job's other
// processes already charged only once). Before a launch, the process
// collects what has completed and waits while the bucket is in debt
// (UsageRegion::PaceDelay). At most kMaxInFlight bracketed launches per
// process are outstanding, so that queued work cannot run far ahead of
// what has been charged.
//
// What this cannot see: time another context takes on the device between
// the two events counts against this job (conservative under contention),
// and kernels launched around libvgpu.so (raw ioctls) are not counted.
#ifndef VGPU_INTERPOSER_LAUNCH_PACER_H_
#define VGPU_INTERPOSER_LAUNCH_PACER_H_

#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cuda_api.h"
#include "enforcer.h"

namespace vgpu {
namespace interposer {

class LaunchPacer {
 public:
  static constexpr size_t kMaxInFlight = 8;
  static constexpr uint64_t kBurstNs = 20000000;  // 20 ms of device time

  static LaunchPacer& Get();

  // A launch about to go on `stream` of the current context, for the job's
  // `device`. Waits as the job's share demands, then records the start
  // event. Returns a ticket for After (0: not paced, nothing to do).
  uint64_t Before(DeviceAccount* device, CUstream stream, bool per_thread);
  // The launch returned `rc`: on success records the end event, else
  // drops the ticket.
  void After(uint64_t ticket, CUresult rc, CUstream stream, bool per_thread);

  void AfterForkInChild();

 private:
  // A reference event of a context and the host clock when it completed:
  // host time of event e = host_ns + elapsed(event, e).
  struct Anchor {
    CUevent event = nullptr;
    uint64_t host_ns = 0;
  };

  struct Pending {
    uint64_t ticket;
    DeviceAccount* device;
    CUcontext context;
    Anchor anchor;  // event null: charge the plain elapsed time
    CUevent start;
    CUevent end;  // null until After
  };

  // Charges every completed launch; with `wait_oldest`, first waits for
  // the oldest one. Called with lock_ held; takes and releases it around
  // blocking driver calls.
  void Collect(std::unique_lock<std::mutex>& hold, bool wait_oldest);
  // The context's anchor, made (or renewed, so that float milliseconds
  // stay precise) when needed. Takes and releases the lock around the
  // blocking wait for the reference event.
  Anchor AnchorOf(std::unique_lock<std::mutex>& hold, CUcontext context);
  CUevent TakeEvent(CUcontext context);
  void GiveEvent(CUcontext context, CUevent event);

  std::mutex lock_;
  std::deque<Pending> pending_;
  std::unordered_map<CUcontext, std::vector<CUevent>> spare_;
  std::unordered_map<CUcontext, Anchor> anchors_;
  uint64_t next_ticket_ = 1;
};

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_LAUNCH_PACER_H_
