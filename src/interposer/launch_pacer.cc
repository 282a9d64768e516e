#include "launch_pacer.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>

#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

constexpr Vendor kCuda = Vendor::kCuda;
constexpr uint64_t kMaxSleepNs = 10000000;  // re-check at least every 10 ms
// A new anchor after this long: elapsed times are float milliseconds.
constexpr uint64_t kAnchorLifetimeNs = 20000000000ULL;

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

void SleepNs(uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1000000000ULL), static_cast<long>(ns % 1000000000ULL)};
  nanosleep(&ts, nullptr);
}

template <typename F>
F Real(const char* name) {
  return reinterpret_cast<F>(RealSymbol(kCuda, name));
}

CUresult Record(CUevent event, CUstream stream, bool per_thread) {
  static const auto record = Real<decltype(&cuEventRecord)>("cuEventRecord");
  static const auto record_ptsz = Real<decltype(&cuEventRecord_ptsz)>("cuEventRecord_ptsz");
  auto fn = per_thread && record_ptsz ? record_ptsz : record;
  return fn ? fn(event, stream) : CUDA_ERROR_NOT_INITIALIZED;
}

LaunchPacer* g_pacer = nullptr;

}  // namespace

LaunchPacer& LaunchPacer::Get() {
  static LaunchPacer* const instance = [] {
    auto* p = new LaunchPacer();
    g_pacer = p;
    pthread_atfork(nullptr, nullptr, [] {
      if (g_pacer) g_pacer->AfterForkInChild();
    });
    return p;
  }();
  return *instance;
}

LaunchPacer::Anchor LaunchPacer::AnchorOf(std::unique_lock<std::mutex>& hold, CUcontext context) {
  auto it = anchors_.find(context);
  const uint64_t now = NowNs();
  if (it != anchors_.end() && now - it->second.host_ns < kAnchorLifetimeNs) return it->second;
  static const auto wait = Real<decltype(&cuEventSynchronize)>("cuEventSynchronize");
  CUevent event = TakeEvent(context);
  if (!event || !wait || Record(event, nullptr, false) != CUDA_SUCCESS) {
    GiveEvent(context, event);
    return Anchor();
  }
  hold.unlock();
  const CUresult rc = wait(event);
  const uint64_t seen = NowNs();
  hold.lock();
  if (rc != CUDA_SUCCESS) {
    GiveEvent(context, event);
    return Anchor();
  }
  // The old anchor's event stays in use by pending launches: not recycled.
  Anchor a;
  a.event = event;
  a.host_ns = seen;
  anchors_[context] = a;
  return a;
}

CUevent LaunchPacer::TakeEvent(CUcontext context) {
  auto& spare = spare_[context];
  if (!spare.empty()) {
    CUevent e = spare.back();
    spare.pop_back();
    return e;
  }
  static const auto create = Real<decltype(&cuEventCreate)>("cuEventCreate");
  CUevent e = nullptr;
  if (!create || create(&e, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return nullptr;
  return e;
}

void LaunchPacer::GiveEvent(CUcontext context, CUevent event) {
  if (event) spare_[context].push_back(event);
}

void LaunchPacer::Collect(std::unique_lock<std::mutex>& hold, bool wait_oldest) {
  static const auto query = Real<decltype(&cuEventQuery)>("cuEventQuery");
  static const auto wait = Real<decltype(&cuEventSynchronize)>("cuEventSynchronize");
  static const auto elapsed = Real<decltype(&cuEventElapsedTime)>("cuEventElapsedTime");
  if (!query || !wait || !elapsed) return;
  if (wait_oldest && !pending_.empty() && pending_.front().end) {
    CUevent oldest = pending_.front().end;
    hold.unlock();  // no lock across a driver call that blocks
    wait(oldest);
    hold.lock();
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!it->end || query(it->end) != CUDA_SUCCESS) {
      ++it;
      continue;
    }
    float from = 0, to = 0;
    if (it->anchor.event && elapsed(&from, it->anchor.event, it->start) == CUDA_SUCCESS &&
        elapsed(&to, it->anchor.event, it->end) == CUDA_SUCCESS) {
      auto host = [&](float ms) {
        const double ns = static_cast<double>(it->anchor.host_ns) + static_cast<double>(ms) * 1e6;
        return ns > 0 ? static_cast<uint64_t>(ns) : 0;
      };
      it->device->region->ChargeInterval(host(from), host(to));
    } else if (elapsed(&to, it->start, it->end) == CUDA_SUCCESS && to > 0) {
      it->device->region->ChargeBusy(static_cast<uint64_t>(static_cast<double>(to) * 1e6));
    }
    GiveEvent(it->context, it->start);
    GiveEvent(it->context, it->end);
    it = pending_.erase(it);
  }
}

uint64_t LaunchPacer::Before(DeviceAccount* device, CUstream stream, bool per_thread) {
  const double share = device->limit.ComputeShare();
  if (share >= 1.0) return 0;
  static const auto current = Real<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
  CUcontext context = nullptr;
  if (!current || current(&context) != CUDA_SUCCESS || !context) return 0;

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
  CUevent start = TakeEvent(context);
  if (!start || Record(start, stream, per_thread) != CUDA_SUCCESS) {
    GiveEvent(context, start);
    return 0;  // a stream of another context, say: not paced, never refused
  }
  const uint64_t ticket = next_ticket_++;
  pending_.push_back(Pending{ticket, device, context, anchor, start, nullptr});
  return ticket;
}

void LaunchPacer::After(uint64_t ticket, CUresult rc, CUstream stream, bool per_thread) {
  if (ticket == 0) return;
  std::lock_guard<std::mutex> hold(lock_);
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.ticket == ticket; });
  if (it == pending_.end()) return;
  CUevent end = rc == CUDA_SUCCESS ? TakeEvent(it->context) : nullptr;
  if (end && Record(end, stream, per_thread) == CUDA_SUCCESS) {
    it->end = end;
    return;
  }
  GiveEvent(it->context, end);
  GiveEvent(it->context, it->start);
  pending_.erase(it);
}

void LaunchPacer::AfterForkInChild() {
  // The parent's contexts and events mean nothing here.
  new (&lock_) std::mutex();
  pending_.clear();
  spare_.clear();
  anchors_.clear();
}

}  // namespace interposer
}  // namespace vgpu
