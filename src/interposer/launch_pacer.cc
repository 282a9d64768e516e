#include "launch_pacer.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cstdlib>


namespace vgpu {
namespace interposer {
namespace {

constexpr uint64_t kMaxSleepNs = 10000000;  // re-check at least every 10 ms
// The collector charges completed launches this often while any is pending.
constexpr uint64_t kCollectEveryNs = 20000000;
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

void LaunchPacer::CollectorLoop() {
  std::unique_lock<std::mutex> hold(lock_);
  for (;;) {
    wake_.wait(hold, [this] { return stop_ || !pending_.empty(); });
    if (stop_) return;
    Collect(hold, false);
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
    if (!pending_.front().end) break;
    Collect(hold, true);
  }
}

LaunchPacer::Anchor LaunchPacer::AnchorOf(std::unique_lock<std::mutex>& hold, void* context) {
  auto it = anchors_.find(context);
  const uint64_t now = NowNs();
  if (it != anchors_.end()) {
    const Anchor& a = it->second;
    const bool fresh = now - a.host_ns < kAnchorLifetimeNs;
    if (fresh && (a.precise || now - a.made_ns < kAnchorRetryNs)) return a;
  }
  void* event = TakeEvent(context);
  const uint64_t before = NowNs();
  if (!event || !ops_.record(event, nullptr, false)) {
    GiveEvent(context, event);
    return it != anchors_.end() ? it->second : Anchor();
  }
  Anchor a;
  a.event = event;
  a.made_ns = before;
  if (ops_.query(event) == 1) {
    // Done at once (the device was idle): it completed within [before, now].
    const uint64_t after = NowNs();
    a.host_ns = before + (after - before) / 2;
    a.precise = after - before < kPreciseWindowNs;
  } else {
    hold.unlock();
    const bool done = ops_.wait(event);
    a.host_ns = NowNs();
    hold.lock();
    if (!done) {
      GiveEvent(context, event);
      return it != anchors_.end() ? it->second : Anchor();
    }
  }
  // An older anchor's event stays in use by pending launches: not recycled.
  anchors_[context] = a;
  return a;
}

void* LaunchPacer::TakeEvent(void* context) {
  auto& spare = spare_[context];
  if (!spare.empty()) {
    void* e = spare.back();
    spare.pop_back();
    return e;
  }
  void* e = nullptr;
  return ops_.create(&e) ? e : nullptr;
}

void LaunchPacer::GiveEvent(void* context, void* event) {
  if (event) spare_[context].push_back(event);
}

void LaunchPacer::Collect(std::unique_lock<std::mutex>& hold, bool wait_oldest) {
  if (wait_oldest && !pending_.empty() && pending_.front().end) {
    void* oldest = pending_.front().end;
    hold.unlock();  // no lock across a driver call that blocks
    ops_.wait(oldest);
    hold.lock();
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!it->end || ops_.query(it->end) != 1) {
      ++it;
      continue;
    }
    float from = 0, to = 0;
    if (it->anchor.event && ops_.elapsed_ms(&from, it->anchor.event, it->start) &&
        ops_.elapsed_ms(&to, it->anchor.event, it->end)) {
      auto host = [&](float ms) {
        const double ns = static_cast<double>(it->anchor.host_ns) + static_cast<double>(ms) * 1e6;
        return ns > 0 ? static_cast<uint64_t>(ns) : 0;
      };
      it->device->region->ChargeInterval(host(from), host(to));
    } else if (ops_.elapsed_ms(&to, it->start, it->end) && to > 0) {
      it->device->region->ChargeBusy(static_cast<uint64_t>(static_cast<double>(to) * 1e6));
    }
    GiveEvent(it->context, it->start);
    GiveEvent(it->context, it->end);
    it = pending_.erase(it);
  }
}

uint64_t LaunchPacer::Before(DeviceAccount* device, void* stream, bool per_thread) {
  const double share = device->limit.ComputeShare();
  if (share >= 1.0) return 0;
  void* context = ops_.current();
  if (!context) return 0;

  std::unique_lock<std::mutex> hold(lock_);
  Collect(hold, pending_.size() >= kMaxInFlight);
  for (;;) {
    const uint64_t delay = device->region->PaceDelay(share, kBurstNs, NowNs());
    if (delay == 0) break;
    hold.unlock();
    SleepNs(std::min(delay, kMaxSleepNs));
    hold.lock();
    Collect(hold, false);
  }
  const Anchor anchor = AnchorOf(hold, context);
  void* start = TakeEvent(context);
  if (!start || !ops_.record(start, stream, per_thread)) {
    GiveEvent(context, start);
    return 0;  // a stream of another context, say: not paced, never refused
  }
  const uint64_t ticket = next_ticket_++;
  pending_.push_back(Pending{ticket, device, context, anchor, start, nullptr});
  StartCollector();
  return ticket;
}

void LaunchPacer::After(uint64_t ticket, bool launched, void* stream, bool per_thread) {
  if (ticket == 0) return;
  std::lock_guard<std::mutex> hold(lock_);
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.ticket == ticket; });
  if (it == pending_.end()) return;
  void* end = launched ? TakeEvent(it->context) : nullptr;
  if (end && ops_.record(end, stream, per_thread)) {
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
  spare_.clear();
  anchors_.clear();
}

}  // namespace interposer
}  // namespace vgpu
