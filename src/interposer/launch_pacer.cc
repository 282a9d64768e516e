#include "launch_pacer.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>


namespace vgpu {
namespace interposer {
namespace {

constexpr uint64_t kMaxSleepNs = 10000000;  // re-check at least every 10 ms
// The collector charges completed launches this often while any is pending.
constexpr uint64_t kCollectEveryNs = 20000000;
// A launch collects what completed when this long has passed since the
// last collection (or when kMaxInFlight launches are outstanding): the
// bucket it consults is then at most this late, against its 20 ms burst.
constexpr uint64_t kCollectInlineEveryNs = 1000000;
// Weight of a new measurement in a stream's moving average: 1/4.
constexpr unsigned kAverageShift = 2;
// A new anchor after this long: elapsed times are float milliseconds.
constexpr uint64_t kAnchorLifetimeNs = 20000000000ULL;
// An imprecise anchor is tried again this often; one whose completion was
// seen within this window is precise.
constexpr uint64_t kAnchorRetryNs = 50000000ULL;
constexpr uint64_t kPreciseWindowNs = 20000ULL;

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

void SleepNs(uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1000000000ULL), static_cast<long>(ns % 1000000000ULL)};
  nanosleep(&ts, nullptr);
}

// Device time goes to the job's region (its record, and the bucket of a job
// without steps of their own) and to the step's (the bucket a step is
// paced by).
void ChargeInterval(DeviceAccount* d, uint64_t from, uint64_t to) {
  d->region->ChargeInterval(from, to);
  if (d->step_region) d->step_region->ChargeInterval(from, to);
}

void ChargeBusy(DeviceAccount* d, uint64_t ns) {
  d->region->ChargeBusy(ns);
  if (d->step_region) d->step_region->ChargeBusy(ns);
}

std::mutex g_pacers_lock;
std::vector<LaunchPacer*>* g_pacers = nullptr;

}  // namespace

LaunchPacer& LaunchPacer::For(const EventOps& ops) {
  std::lock_guard<std::mutex> hold(g_pacers_lock);
  if (!g_pacers) {
    g_pacers = new std::vector<LaunchPacer*>();
    pthread_atfork(nullptr, nullptr, [] {
      new (&g_pacers_lock) std::mutex();
      for (LaunchPacer* p : *g_pacers) p->AfterForkInChild();
    });
  }
  for (LaunchPacer* p : *g_pacers)
    if (&p->ops_ == &ops) return *p;
  g_pacers->push_back(new LaunchPacer(ops));
  return *g_pacers->back();
}

void LaunchPacer::FlushAll() {
  std::vector<LaunchPacer*> pacers;
  {
    std::lock_guard<std::mutex> hold(g_pacers_lock);
    if (!g_pacers) return;
    pacers = *g_pacers;
  }
  for (LaunchPacer* p : pacers) p->Flush();
}

void LaunchPacer::StartCollector() {
  if (collector_) return;
  stop_ = false;
  collector_ = new std::thread([this] { CollectorLoop(); });
  static const bool registered = [] {
    // Runs before the runtime's own exit handlers (registered earlier, at
    // its initialisation), while contexts and events still exist.
    atexit([] { LaunchPacer::FlushAll(); });
    return true;
  }();
  (void)registered;
}

// An event call is made only while no capture is underway: the flag is
// read after the call is counted in flight, and CaptureBegan raises the
// flag before it waits for the calls in flight (sequentially consistent,
// so one of the two sees the other), so no call overlaps the capture.
template <typename Call>
bool LaunchPacer::EventCall(Call call) {
  in_flight_.fetch_add(1);
  const bool allowed = capturing_.load() == 0;
  if (allowed) call();
  in_flight_.fetch_sub(1);
  return allowed;
}

bool LaunchPacer::Record(void* event, void* stream, bool per_thread) {
  bool ok = false;
  return EventCall([&] { ok = ops_.record(event, stream, per_thread); }) && ok;
}

int LaunchPacer::Query(void* event) {
  int state = -1;
  EventCall([&] { state = ops_.query(event); });
  return state;
}

bool LaunchPacer::Wait(void* event) {
  bool ok = false;
  return EventCall([&] { ok = ops_.wait(event); }) && ok;
}

bool LaunchPacer::Elapsed(float* ms, void* start, void* end) {
  bool ok = false;
  return EventCall([&] { ok = ops_.elapsed_ms(ms, start, end); }) && ok;
}

bool LaunchPacer::CaptureBegan(const void* stream, bool per_thread) {
  {
    std::lock_guard<std::mutex> hold(capture_lock_);
    for (const auto& c : captures_)
      if (c.first == stream && c.second == per_thread) return false;
    captures_.emplace_back(stream, per_thread);
    capturing_.store(captures_.size());
  }
  // A wait for an event may be in flight (at most a kernel's time).
  while (in_flight_.load() != 0) std::this_thread::yield();
  return true;
}

void LaunchPacer::CaptureEnded(const void* stream, bool per_thread) {
  std::lock_guard<std::mutex> hold(capture_lock_);
  for (auto it = captures_.begin(); it != captures_.end(); ++it)
    if (it->first == stream && it->second == per_thread) {
      captures_.erase(it);
      break;
    }
  capturing_.store(captures_.size());
}

void LaunchPacer::CollectorLoop() {
  std::unique_lock<std::mutex> hold(lock_);
  for (;;) {
    auto due = [this] { return stop_ || !pending_.empty(); };
    // Unmeasured launches of a stream that has fallen silent are charged
    // here too, so that a process that sleeps after them is charged for
    // them: while there are any, look every kCollectEveryNs.
    bool unmeasured = false;
    for (const Stream& st : streams_) unmeasured = unmeasured || st.unmeasured > 0;
    if (unmeasured)
      wake_.wait_for(hold, std::chrono::nanoseconds(kCollectEveryNs), due);
    else
      wake_.wait(hold, due);
    if (stop_) return;
    if (!Capturing()) Collect(hold, false);
    const uint64_t now = NowNs();
    for (Stream& st : streams_)
      if (st.unmeasured > 0 && now - st.last_ns >= kCollectEveryNs) ChargeUnmeasured(st);
    hold.unlock();
    SleepNs(kCollectEveryNs);
    hold.lock();
  }
}

void LaunchPacer::Flush() {
  std::thread* collector = nullptr;
  {
    std::lock_guard<std::mutex> hold(lock_);
    collector = collector_;
    collector_ = nullptr;
    stop_ = true;
  }
  wake_.notify_all();
  if (collector && collector->joinable()) collector->join();
  std::unique_lock<std::mutex> hold(lock_);
  // Each round waits for the oldest launch; a launch not yet returned from
  // the runtime (no end event) cannot be waited for and is left.
  for (size_t rounds = pending_.size(); rounds > 0 && !pending_.empty(); --rounds) {
    if (!pending_.front().end || Capturing()) break;
    Collect(hold, true);
  }
  for (Stream& st : streams_) ChargeUnmeasured(st);
}

LaunchPacer::Anchor LaunchPacer::AnchorOf(std::unique_lock<std::mutex>& hold, void* context, uint64_t now) {
  auto usable = [&](const Anchor& a) {
    return now - a.host_ns < kAnchorLifetimeNs && (a.precise || now - a.made_ns < kAnchorRetryNs);
  };
  // Launches come from one context at a time, nearly always the last one.
  if (context == last_anchor_context_ && usable(last_anchor_)) return last_anchor_;
  auto it = anchors_.find(context);
  if (it != anchors_.end() && usable(it->second)) {
    last_anchor_context_ = context;
    last_anchor_ = it->second;
    return it->second;
  }
  void* event = TakeEvent(context);
  const uint64_t before = NowNs();
  if (!event || !Record(event, nullptr, false)) {
    GiveEvent(context, event);
    return it != anchors_.end() ? it->second : Anchor();
  }
  Anchor a;
  a.event = event;
  a.made_ns = before;
  if (Query(event) == 1) {
    // Done at once (the device was idle): it completed within [before, now].
    const uint64_t after = NowNs();
    a.host_ns = before + (after - before) / 2;
    a.precise = after - before < kPreciseWindowNs;
  } else {
    hold.unlock();
    const bool done = Wait(event);
    a.host_ns = NowNs();
    hold.lock();
    if (!done) {
      GiveEvent(context, event);
      return it != anchors_.end() ? it->second : Anchor();
    }
  }
  // An older anchor's event stays in use by pending launches: not recycled.
  anchors_[context] = a;
  last_anchor_context_ = context;
  last_anchor_ = a;
  return a;
}

std::vector<void*>& LaunchPacer::SpareOf(void* context) {
  // A process has a context or two per device: a short list beats a hash.
  for (auto& s : spare_)
    if (s.first == context) return s.second;
  spare_.emplace_back(context, std::vector<void*>());
  return spare_.back().second;
}

void* LaunchPacer::TakeEvent(void* context) {
  auto& spare = SpareOf(context);
  if (!spare.empty()) {
    void* e = spare.back();
    spare.pop_back();
    return e;
  }
  void* e = nullptr;
  return ops_.create(&e) ? e : nullptr;
}

void LaunchPacer::GiveEvent(void* context, void* event) {
  if (event) SpareOf(context).push_back(event);
}

void LaunchPacer::Collect(std::unique_lock<std::mutex>& hold, bool wait_oldest) {
  last_collect_ns_ = NowNs();
  if (wait_oldest && !pending_.empty() && pending_.front().end) {
    void* oldest = pending_.front().end;
    hold.unlock();  // no lock across a driver call that blocks
    Wait(oldest);
    hold.lock();
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!it->end || Query(it->end) != 1) {
      ++it;
      continue;
    }
    float from = 0, to = 0;
    uint64_t took = 0;
    if (it->anchor.event && Elapsed(&from, it->anchor.event, it->start) &&
        Elapsed(&to, it->anchor.event, it->end)) {
      auto host = [&](float ms) {
        const double ns = static_cast<double>(it->anchor.host_ns) + static_cast<double>(ms) * 1e6;
        return ns > 0 ? static_cast<uint64_t>(ns) : 0;
      };
      ChargeInterval(it->device, host(from), host(to));
      took = host(to) > host(from) ? host(to) - host(from) : 0;
    } else if (Elapsed(&to, it->start, it->end) && to > 0) {
      took = static_cast<uint64_t>(static_cast<double>(to) * 1e6);
      ChargeBusy(it->device, took);
    }
    if (it->stream < streams_.size()) {
      Stream& st = streams_[it->stream];
      st.average_ns = !st.average_known ? took
                                        : st.average_ns - (st.average_ns >> kAverageShift) + (took >> kAverageShift);
      st.average_known = true;
      ChargeUnmeasured(st);
    }
    GiveEvent(it->context, it->start);
    GiveEvent(it->context, it->end);
    it = pending_.erase(it);
  }
}

void LaunchPacer::ChargeUnmeasured(Stream& st) {
  if (st.unmeasured == 0 || !st.device) return;
  ChargeBusy(st.device, st.unmeasured * st.average_ns);
  st.unmeasured = 0;
}

size_t LaunchPacer::StreamOf(void* context, void* stream, bool per_thread, DeviceAccount* device) {
  auto same = [&](const Stream& st) {
    return st.context == context && st.stream == stream && st.per_thread == per_thread;
  };
  if (last_stream_ < streams_.size() && same(streams_[last_stream_])) return last_stream_;
  for (size_t i = 0; i < streams_.size(); ++i)
    if (same(streams_[i])) return last_stream_ = i;
  Stream fresh;
  fresh.context = context;
  fresh.stream = stream;
  fresh.per_thread = per_thread;
  fresh.device = device;
  if (streams_.size() < kMaxStreams) {
    streams_.push_back(fresh);
    return last_stream_ = streams_.size() - 1;
  }
  // Reuse the least recently used stream that nothing pending refers to.
  size_t reuse = streams_.size();
  for (size_t i = 0; i < streams_.size(); ++i) {
    bool referred = false;
    for (const Pending& p : pending_) referred = referred || p.stream == i;
    if (!referred && (reuse == streams_.size() || streams_[i].last_ns < streams_[reuse].last_ns)) reuse = i;
  }
  if (reuse == streams_.size()) reuse = 0;
  ChargeUnmeasured(streams_[reuse]);
  streams_[reuse] = fresh;
  return last_stream_ = reuse;
}

bool LaunchPacer::Sample() {
  if (random_ == 0) random_ = NowNs() | 1;
  random_ ^= random_ << 13;
  random_ ^= random_ >> 7;
  random_ ^= random_ << 17;
  return random_ % kSampleEvery == 0;
}

uint64_t LaunchPacer::Before(DeviceAccount* device, void* stream, bool per_thread, bool* foreign) {
  // A whole device is not paced, but its launches are still measured: the
  // job's usage record says how busy it kept the device.
  const double share = device->held_to().ComputeShare();
  const bool paced = share < 1.0;
  void* context = ops_.current();
  if (!context) return 0;
  const bool quiet = Capturing();  // no event calls (see the top)
  if (quiet && ops_.capturing && ops_.capturing(stream, per_thread)) return 0;

  uint64_t now = NowNs();
  std::unique_lock<std::mutex> hold(lock_);
  if (!quiet && (pending_.size() >= kMaxInFlight ||
                 (!pending_.empty() && now - last_collect_ns_ >= kCollectInlineEveryNs))) {
    Collect(hold, false);
    // Still full: wait for the oldest rather than queue further ahead.
    if (pending_.size() >= kMaxInFlight) Collect(hold, true);
  }
  while (paced) {
    const uint64_t delay = device->pace_region()->PaceDelay(share, kBurstNs, now);
    if (delay == 0) break;
    hold.unlock();
    SleepNs(std::min(delay, kMaxSleepNs));
    hold.lock();
    if (!quiet) Collect(hold, false);
    now = NowNs();
  }
  const size_t i = StreamOf(context, stream, per_thread, device);
  Stream& st = streams_[i];
  const bool dense = st.last_ns != 0 && now - st.last_ns <= kDenseGapNs;
  st.last_ns = now;
  st.device = device;
  // Only tiny kernels are sampled: a long one's events cost nothing next
  // to it, and unmeasured launches are not bounded by kMaxInFlight, so
  // long ones must be (or queued work would run far ahead of its charge).
  const bool tiny = st.average_known && st.average_ns < kSampleBelowNs;
  if (quiet || (dense && tiny && !Sample())) {
    ++st.unmeasured;
    return 0;
  }
  const Anchor anchor = AnchorOf(hold, context, now);
  void* start = TakeEvent(context);
  if (!start || !Record(start, stream, per_thread)) {
    GiveEvent(context, start);
    if (start && foreign) *foreign = true;  // a stream of another context, say
    return 0;
  }
  const uint64_t ticket = next_ticket_++;
  pending_.push_back(Pending{ticket, device, context, i, anchor, start, nullptr});
  StartCollector();
  return ticket;
}

void LaunchPacer::After(uint64_t ticket, bool launched, void* stream, bool per_thread) {
  if (ticket == 0) return;
  std::lock_guard<std::mutex> hold(lock_);
  // Nearly always the newest: launches return in the order they started.
  auto it = !pending_.empty() && pending_.back().ticket == ticket
                ? std::prev(pending_.end())
                : std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.ticket == ticket; });
  if (it == pending_.end()) return;
  void* end = launched ? TakeEvent(it->context) : nullptr;
  if (end && Record(end, stream, per_thread)) {
    it->end = end;
    wake_.notify_one();
    return;
  }
  GiveEvent(it->context, end);
  GiveEvent(it->context, it->start);
  pending_.erase(it);
}

void LaunchPacer::AfterForkInChild() {
  // The parent's contexts and events mean nothing here, and its collector
  // thread does not exist (its std::thread object is abandoned).
  new (&lock_) std::mutex();
  new (&wake_) std::condition_variable();
  collector_ = nullptr;
  stop_ = false;
  pending_.clear();
  streams_.clear();
  last_stream_ = 0;
  spare_.clear();
  anchors_.clear();
  last_anchor_context_ = nullptr;
  last_collect_ns_ = 0;
  random_ = 0;
  // A capture is the parent's (the runtimes do not survive fork).
  new (&capture_lock_) std::mutex();
  captures_.clear();
  capturing_.store(0, std::memory_order_relaxed);
}

}  // namespace interposer
}  // namespace vgpu
