// Compute pacing of kernel launches (CUDA, HIP, AscendCL): a job holding S
// of a device's N shares keeps the device busy about S/N of the time, all
// its processes together.
//
// How: a measured launch is bracketed by two events on its stream; when
// the end event has completed, the two are placed on the host clock
// (through a reference event per context whose completion time the host
// saw) and the interval is charged to the job's token bucket in its usage
// region (UsageRegion::ChargeInterval, which charges time the job's other
// processes already charged only once). Before a launch the process waits
// while the bucket is in debt (UsageRegion::PaceDelay, read without a lock
// while in credit). At most kMaxInFlight measured launches per process are
// outstanding, so that queued work cannot run far ahead of what has been
// charged.
//
// Which launches are measured: every launch that comes more than
// kDenseGapNs after the previous one on its stream, and every launch on a
// stream whose measured launches take kSampleBelowNs or more on average;
// of tiny kernels that come back to back, one in kSampleEvery on average,
// picked at random so that a loop of a fixed sequence of kernels is not
// always sampled at the same kernel. A launch
// not measured is charged at the stream's recent measured duration (a
// moving average) when the stream's next measurement completes, when the
// stream has been silent for 20 ms (the collector), or at exit or exec. A stream of tiny kernels thus costs two events per
// kSampleEvery launches, and the idle time between them is not charged.
//
// Device time is charged when it is used, whatever the process does next:
// a collector thread (started at the first measured launch) charges
// completed launches every few milliseconds, so a process that sleeps or is
// killed is charged too; at exit (atexit) and before exec every
// outstanding launch is waited for and charged.
//
// Stream capture (CUDA and HIP graphs, AscendCL's model-RI capture): a
// launch into a stream in capture is not work, it becomes part of a graph,
// paced when the graph is launched; so it is neither paced nor charged.
// While any capture is underway in the process the runtimes forbid what
// the pacer does with events (querying or waiting for one in global
// capture mode, from any thread; recording one on the legacy stream): that
// would invalidate the program's capture. So from the capture hooks'
// CaptureBegan (before the runtime begins the capture, once the event
// calls in flight are done) to the last CaptureEnded the pacer makes no
// event call at all: other streams' launches still wait as the bucket demands, and are
// charged at their streams' averages, as unmeasured ones are.
//
// What this cannot see: time another context takes on the device between
// the two events counts against this job (conservative under contention),
// a launch not measured is charged what its stream's measured ones took
// (when the stream's next measurement completes, or by the collector once
// the stream has been silent for 20 ms),
// and kernels launched around libvgpu.so (raw ioctls) are not counted.
#ifndef VGPU_INTERPOSER_LAUNCH_PACER_H_
#define VGPU_INTERPOSER_LAUNCH_PACER_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "enforcer.h"

namespace vgpu {
namespace interposer {

// One vendor runtime's events, as the pacer uses them (CUDA: contexts and
// CUevent; HIP: devices and hipEvent_t). Handles are opaque pointers.
struct EventOps {
  // What events belong to: the calling thread's current context or
  // device, as a non-null key (null: none, nothing is paced).
  void* (*current)();
  bool (*create)(void** event);
  bool (*record)(void* event, void* stream, bool per_thread);
  int (*query)(void* event);  // 1 completed, 0 not yet, -1 error
  bool (*wait)(void* event);
  bool (*elapsed_ms)(float* ms, void* start, void* end);
  // Whether launches into `stream` are being captured (asked only while a
  // capture is underway).
  bool (*capturing)(void* stream, bool per_thread);
};

class LaunchPacer {
 public:
  static constexpr size_t kMaxInFlight = 8;
  static constexpr uint64_t kBurstNs = 20000000;  // 20 ms of device time
  static constexpr uint64_t kDenseGapNs = 100000;  // 100 us
  static constexpr uint32_t kSampleEvery = 16;
  static constexpr uint64_t kSampleBelowNs = 20000;  // 20 us

  // The process's pacer for a runtime (one per `ops`, made on first use,
  // never freed; `ops` must outlive it).
  static LaunchPacer& For(const EventOps& ops);

  // A launch about to go on `stream`, for the job's `device`. Waits as the
  // job's share demands, then, if the launch is measured, records the
  // start event. Returns a ticket for After (0: nothing to do). *foreign
  // (if given) is set when the runtime refused to record on `stream` (a
  // stream of another context than the current one): nothing was done, and
  // the caller paces the launch in the stream's context.
  uint64_t Before(DeviceAccount* device, void* stream, bool per_thread, bool* foreign = nullptr);
  // The launch returned: `launched` says whether it succeeded; if so the
  // end event is recorded, else the ticket is dropped.
  void After(uint64_t ticket, bool launched, void* stream, bool per_thread);

  void AfterForkInChild();

  // A capture of `stream` is about to begin (before the runtime is asked:
  // returns once no event call is in flight; false if it was known to be
  // underway already), or ended or failed to begin.
  bool CaptureBegan(const void* stream, bool per_thread);
  void CaptureEnded(const void* stream, bool per_thread);
  bool Capturing() const { return capturing_.load(std::memory_order_relaxed) > 0; }

  // Waits for and charges every outstanding launch of every pacer (at exit,
  // before exec). Cheap when nothing was ever paced.
  static void FlushAll();

 private:
  explicit LaunchPacer(const EventOps& ops) : ops_(ops) {}

  // A reference event of a context and the host clock when it completed:
  // host time of event e = host_ns + elapsed(event, e).
  struct Anchor {
    void* event = nullptr;
    uint64_t host_ns = 0;
    // The event had completed when first queried right after its record,
    // so host_ns is within that short window; else host_ns is when the
    // host woke from waiting for it (later by a scheduling delay, which
    // differs between processes), and a precise one is tried again.
    bool precise = false;
    uint64_t made_ns = 0;
  };

  // What the pacer knows of one stream.
  struct Stream {
    void* context = nullptr;
    void* stream = nullptr;
    bool per_thread = false;
    DeviceAccount* device = nullptr;
    uint64_t last_ns = 0;      // host clock: the stream's last launch (0: none)
    uint64_t average_ns = 0;   // moving average of its measured launches
    bool average_known = false;
    uint32_t unmeasured = 0;   // launches not measured, not yet charged
  };

  struct Pending {
    uint64_t ticket;
    DeviceAccount* device;
    void* context;
    size_t stream;  // index in streams_
    Anchor anchor;  // event null: charge the plain elapsed time
    void* start;
    void* end;  // null until After
  };

  // Charges every completed launch; with `wait_oldest`, first waits for
  // the oldest one. Called with lock_ held; takes and releases it around
  // blocking driver calls.
  void Collect(std::unique_lock<std::mutex>& hold, bool wait_oldest);
  // Charges stream i's unmeasured launches at its average (lock_ held).
  void ChargeUnmeasured(Stream& st);
  // The context's anchor, made (or renewed, so that float milliseconds
  // stay precise) when needed. Takes and releases the lock around the
  // blocking wait for the reference event.
  Anchor AnchorOf(std::unique_lock<std::mutex>& hold, void* context, uint64_t now);
  // The index of (context, stream) in streams_, made when new (lock_
  // held). Past kMaxStreams the least recently used entry with nothing
  // outstanding is reused.
  size_t StreamOf(void* context, void* stream, bool per_thread, DeviceAccount* device);
  // Whether a back-to-back launch is measured (one in kSampleEvery).
  bool Sample();
  std::vector<void*>& SpareOf(void* context);
  void* TakeEvent(void* context);
  void GiveEvent(void* context, void* event);
  // The runtime's event calls, made only while no capture is underway
  // (else they fail: query -1, the others false).
  template <typename Call>
  bool EventCall(Call call);
  bool Record(void* event, void* stream, bool per_thread);
  int Query(void* event);
  bool Wait(void* event);
  bool Elapsed(float* ms, void* start, void* end);
  // Starts the collector thread if it is not running (lock_ held).
  void StartCollector();
  void CollectorLoop();
  // Stops the collector, then waits for and charges what is outstanding.
  void Flush();

  static constexpr size_t kMaxStreams = 256;

  const EventOps& ops_;
  std::mutex lock_;
  std::deque<Pending> pending_;
  std::vector<Stream> streams_;
  size_t last_stream_ = 0;
  std::vector<std::pair<void*, std::vector<void*>>> spare_;  // per context
  std::unordered_map<void*, Anchor> anchors_;
  void* last_anchor_context_ = nullptr;  // the anchor found last, and whose
  Anchor last_anchor_;
  uint64_t last_collect_ns_ = 0;
  uint64_t next_ticket_ = 1;
  uint64_t random_ = 0;  // xorshift state (0: not seeded)
  std::condition_variable wake_;  // something is pending, or stop
  std::thread* collector_ = nullptr;  // never freed: may outlive exit's destructors
  bool stop_ = false;

  std::mutex capture_lock_;  // captures_
  std::vector<std::pair<const void*, bool>> captures_;  // streams in capture
  std::atomic<size_t> capturing_{0};  // captures_.size(), read without the lock
  std::atomic<int> in_flight_{0};     // event calls being made
};

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_LAUNCH_PACER_H_
