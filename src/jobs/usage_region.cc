#include "jobs/usage_region.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace vgpu {

constexpr uint64_t kMagic = 0x3145535550475631ULL;  // "1VGPUSE1"
constexpr uint32_t kLayoutVersion = 1;

struct UsageSlot {
  std::atomic<int32_t> pid;
  std::atomic<uint32_t> reserved;
  std::atomic<uint64_t> start_ticks;  // /proc/PID/stat field 22: tells pid reuse apart
  std::atomic<uint64_t> incarnation;  // per library load: tells an exec'd image apart
  std::atomic<uint64_t> used_bytes;
  std::atomic<uint64_t> busy_ns;      // device time used (compute pacing)
  std::atomic<uint64_t> spare[3];
};
static_assert(sizeof(UsageSlot) == 64, "one slot per cache line");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be lock-free");

// The file: this header, then slot_count slots from kSlotsOffset.
struct UsageRegionLayout {
  uint64_t magic;
  uint32_t version;
  uint32_t slot_count;
  pthread_mutex_t lock;
  std::atomic<uint64_t> peak_bytes;
  // Compute pacing (PaceDelay): device time the job may still use, and when
  // it was last brought up to date (0: never).
  std::atomic<int64_t> credit_ns;
  std::atomic<uint64_t> credit_at_ns;
  std::atomic<uint64_t> busy_ns;  // charged so far, all processes, reaped included
  std::atomic<uint64_t> charged_until_ns;  // ChargeInterval: device time up to here is charged
  // 1 + the highest slot index ever claimed: sums stop there, so that a
  // reservation costs the job's processes, not the region's size.
  std::atomic<uint32_t> slot_limit;
  // Set by the holder of the lock while it reserves (Reserve's slow path):
  // others then queue on the lock instead of adding, so it is not refused
  // for bytes they hold for a moment. Cleared by a locker that finds the
  // holder dead. (In the padding before the slots: regions made before it
  // existed read 0.)
  std::atomic<uint32_t> slow_reserver;
  // Reservations refused as over the limit (libvgpu's out-of-memory
  // answers), for vgpu-exporter. (In the padding too: older regions read 0.)
  std::atomic<uint64_t> refusals;

  UsageSlot* slots();
};

namespace {

constexpr size_t kSlotsOffset = (sizeof(UsageRegionLayout) + 63) / 64 * 64;

// Layout version 1 puts the slots here; fields added to the header must
// fit before it.
static_assert(kSlotsOffset == 128, "the header outgrew layout version 1");

size_t RegionSize(uint32_t slots) { return kSlotsOffset + sizeof(UsageSlot) * slots; }

// Maps the region file `name` (under `dir_fd`) and checks its header:
// read-write for the job's processes, read-only for outside readers.
// Errors name `path`.
Result<std::pair<UsageRegionLayout*, size_t>> MapRegion(int dir_fd, const std::string& name,
                                                        const std::string& path, bool writable) {
  using R = Result<std::pair<UsageRegionLayout*, size_t>>;
  int fd = openat(dir_fd, name.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return R::Error("cannot open usage region " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < RegionSize(1)) {
    close(fd);
    return R::Error("usage region " + path + " is too small to be one (recreate it with vgpu-prolog)");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* mem = mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (mem == MAP_FAILED) return R::Error("cannot map usage region " + path + ": " + std::strerror(errno));
  auto* r = static_cast<UsageRegionLayout*>(mem);
  if (r->magic != kMagic || r->version != kLayoutVersion || r->slot_count == 0 ||
      RegionSize(r->slot_count) != size) {
    munmap(mem, size);
    return R::Error("usage region " + path + " is corrupt or from another release");
  }
  return std::make_pair(r, size);
}

}  // namespace

UsageSlot* UsageRegionLayout::slots() {
  return reinterpret_cast<UsageSlot*>(reinterpret_cast<char*>(this) + kSlotsOffset);
}

namespace {

// Field 22 (starttime) of /proc/PID/stat; 0 if unreadable. The command
// name (field 2) may hold spaces and parentheses: parse after the last ')'.
uint64_t StartTicks(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (!p) return 0;
  // After ") " comes field 3; starttime is field 22, i.e. 19 fields later.
  int field = 2;
  for (++p; *p && field < 21; ++p)
    if (*p == ' ') ++field;
  return std::strtoull(p, nullptr, 10);
}

bool Alive(const UsageSlot& s) {
  const pid_t pid = s.pid.load();
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  const uint64_t want = s.start_ticks.load();
  const uint64_t now = StartTicks(pid);
  return now == 0 || want == 0 || now == want;  // unreadable: assume alive
}

uint64_t NewIncarnation() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec) ^
         (static_cast<uint64_t>(getpid()) << 40) ^ reinterpret_cast<uintptr_t>(&ts);
}

}  // namespace

Status UsageRegion::Create(const std::string& path, uint32_t slots) {
  if (slots == 0 || slots > 65536) return Status::Error("a usage region needs 1..65536 slots");
  const std::string tmp = path + ".new";
  int fd = open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::Error("cannot create " + tmp + ": " + std::strerror(errno));
  const size_t size = RegionSize(slots);
  // Allocated, not just sized: on a full file system (/run is a tmpfs) a
  // sparse file maps fine, and the first write to a missing page is a
  // SIGBUS, in this program or in a job's process later.
  const int rc = posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc != 0) {
    std::string why = "cannot allocate " + std::to_string(size) + " bytes for " + tmp + ": " + std::strerror(rc);
    if (rc == ENOSPC) {
      const std::string dir = path.substr(0, path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
      why += "; the file system of " + (dir.empty() ? std::string(".") : dir) + " is full: free space there (df -h)";
    }
    close(fd);
    unlink(tmp.c_str());
    return Status::Error(why);
  }
  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mem == MAP_FAILED) {
    unlink(tmp.c_str());
    return Status::Error("cannot map " + tmp + ": " + std::strerror(errno));
  }
  auto* r = static_cast<UsageRegionLayout*>(mem);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&r->lock, &attr);
  pthread_mutexattr_destroy(&attr);
  r->slot_count = slots;
  r->version = kLayoutVersion;
  std::atomic_thread_fence(std::memory_order_release);
  r->magic = kMagic;  // last: a half-written file is never taken for a region
  msync(mem, size, MS_SYNC);
  munmap(mem, size);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    Status st = Status::Error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
    unlink(tmp.c_str());
    return st;
  }
  return Status::Ok();
}

Result<std::unique_ptr<UsageRegion>> UsageRegion::Open(const std::string& path) {
  return OpenAt(AT_FDCWD, path, path);
}

Result<std::unique_ptr<UsageRegion>> UsageRegion::OpenAt(int dir_fd, const std::string& name,
                                                         const std::string& path) {
  using R = Result<std::unique_ptr<UsageRegion>>;
  auto mapped = MapRegion(dir_fd, name, path, true);
  if (!mapped.ok()) return R::Error(mapped.message());
  return std::unique_ptr<UsageRegion>(new UsageRegion(path, mapped->first, mapped->second));
}

UsageRegion::UsageRegion(const std::string& path, UsageRegionLayout* map, size_t size)
    : path_(path), map_(map), size_(size), incarnation_(NewIncarnation()) {}

UsageRegion::~UsageRegion() {
  // The slot stays: the process's device memory may outlive this object
  // (static destruction order); it is reclaimed when the process is gone.
  munmap(map_, size_);
}

bool UsageRegion::Lock() {
  int rc = pthread_mutex_lock(&map_->lock);
  if (rc == EOWNERDEAD) {
    // The holder died; every update under the lock is a single atomic
    // store, so the region is consistent as it is.
    pthread_mutex_consistent(&map_->lock);
    map_->slow_reserver.store(0);
    return true;
  }
  return rc == 0;
}

void UsageRegion::Unlock() { pthread_mutex_unlock(&map_->lock); }

UsageSlot* UsageRegion::Slot() {
  // A forked child forgets the slot (ForgetSlotAfterFork): no getpid()
  // system call on every reservation.
  if (UsageSlot* s = slot_.load(std::memory_order_acquire)) return s;
  const pid_t me = getpid();
  if (!Lock()) return nullptr;
  // Another thread of this process may have claimed it meanwhile.
  if (UsageSlot* s = slot_.load(std::memory_order_acquire)) {
    Unlock();
    return s;
  }
  UsageSlot* mine = nullptr;
  UsageSlot* free_slot = nullptr;
  for (uint32_t i = 0; i < map_->slot_count; ++i) {
    UsageSlot& s = map_->slots()[i];
    const int32_t pid = s.pid.load();
    if (i >= map_->slot_limit.load() && free_slot) break;
    if (pid == me && s.incarnation.load() != incarnation_) {
      mine = &s;  // our pid before an exec: its device memory is gone
      break;
    }
    if (pid == 0 && !free_slot) free_slot = &s;
  }
  if (!mine && !free_slot) {
    // Full: dead processes' slots become free.
    for (uint32_t i = 0; i < map_->slot_count && !free_slot; ++i)
      if (!Alive(map_->slots()[i])) free_slot = &map_->slots()[i];
  }
  UsageSlot* s = mine ? mine : free_slot;
  // Processes that exited since the last claim stop counting now, so that
  // a new process's memory queries are right from the start. (kill(pid, 0)
  // only: cheap; a reused pid is caught when a reservation needs the room.)
  for (uint32_t i = 0, n = Limit(); i < n; ++i) {
    UsageSlot& o = map_->slots()[i];
    const int32_t pid = o.pid.load();
    if (&o != s && pid > 0 && pid != me && kill(pid, 0) != 0 && errno == ESRCH) o.pid.store(0);
  }
  if (s) {
    const uint32_t index = static_cast<uint32_t>(s - map_->slots());
    if (index + 1 > map_->slot_limit.load()) map_->slot_limit.store(index + 1);
    s->used_bytes.store(0);
    s->busy_ns.store(0);
    s->start_ticks.store(StartTicks(me));
    s->incarnation.store(incarnation_);
    s->pid.store(me);
  }
  slot_pid_ = me;
  slot_.store(s, std::memory_order_release);  // before Unlock: see above
  Unlock();
  return s;
}

bool UsageRegion::TryReserve(UsageSlot* s, uint64_t bytes, uint64_t limit) {
  // Add first, then sum: of two reservations racing for the last bytes,
  // the later add's sum (all operations sequentially consistent) sees the
  // earlier one's, so the job's committed total never passes the limit.
  // Both may see each other and back off: Reserve's slow path tries again.
  s->used_bytes.fetch_add(bytes);
  const uint64_t sum = Used();
  if (sum > limit) {
    s->used_bytes.fetch_sub(bytes);
    return false;
  }
  uint64_t peak = map_->peak_bytes.load(std::memory_order_relaxed);
  while (sum > peak && !map_->peak_bytes.compare_exchange_weak(peak, sum, std::memory_order_relaxed)) {
  }
  return true;
}

UsageRegion::Reservation UsageRegion::Reserve(uint64_t bytes, uint64_t limit) {
  UsageSlot* s = Slot();
  if (!s) return Reservation::kNoSlot;
  if (bytes > limit) {
    map_->refusals.fetch_add(1);
    return Reservation::kOverLimit;
  }
  if (map_->slow_reserver.load() == 0 && TryReserve(s, bytes, limit)) return Reservation::kOk;
  // Over the limit, or racing another process for the last bytes: under
  // the lock, with the fast path closed to the others, reap processes that
  // died holding memory and look again. A reservation that passed the
  // closed door just before it shut holds its bytes for nanoseconds: a
  // few tries, with a yield between, tell that from a job that is full.
  if (!Lock()) return Reservation::kNoSlot;
  map_->slow_reserver.store(1);
  for (uint32_t i = 0, n = Limit(); i < n; ++i) {
    UsageSlot& o = map_->slots()[i];
    if (&o != s && o.pid.load() != 0 && !Alive(o)) o.pid.store(0);
  }
  Reservation r = Reservation::kOverLimit;
  for (int attempt = 0; attempt < kReserveAttempts; ++attempt) {
    if (attempt) sched_yield();
    if (TryReserve(s, bytes, limit)) {
      r = Reservation::kOk;
      break;
    }
  }
  map_->slow_reserver.store(0);
  Unlock();
  if (r == Reservation::kOverLimit) map_->refusals.fetch_add(1);
  return r;
}

void UsageRegion::Release(uint64_t bytes) {
  UsageSlot* s = Slot();
  if (!s) return;
  uint64_t used = s->used_bytes.load();
  while (!s->used_bytes.compare_exchange_weak(used, used > bytes ? used - bytes : 0)) {
  }
}

uint64_t UsageRegion::Used() const {
  uint64_t sum = 0;
  for (uint32_t i = 0, n = Limit(); i < n; ++i)
    if (map_->slots()[i].pid.load() != 0) sum += map_->slots()[i].used_bytes.load();
  return sum;
}

uint64_t UsageRegion::UsedByThisProcess() const {
  UsageSlot* s = slot_.load();
  return s && slot_pid_ == getpid() ? s->used_bytes.load() : 0;
}

uint64_t UsageRegion::Peak() const { return map_->peak_bytes.load(); }

uint64_t UsageRegion::Refusals() const { return map_->refusals.load(); }

Result<UsageRegion::Stats> UsageRegion::ReadStats(const std::string& path) {
  using R = Result<Stats>;
  auto mapped = MapRegion(AT_FDCWD, path, path, false);
  if (!mapped.ok()) return R::Error(mapped.message());
  UsageRegionLayout* r = mapped->first;
  const size_t size = mapped->second;
  Stats stats;
  stats.peak_bytes = r->peak_bytes.load();
  stats.busy_ns = r->busy_ns.load();
  stats.refusals = r->refusals.load();
  // A job's user can write its region: the limit is the file's size, not
  // what the header says.
  const uint32_t n = std::min(r->slot_limit.load(), r->slot_count);
  for (uint32_t i = 0; i < n; ++i) {
    const UsageSlot& slot = r->slots()[i];
    if (slot.pid.load() == 0) continue;
    stats.used_bytes += slot.used_bytes.load();
    ++stats.processes;
  }
  munmap(r, size);
  return stats;
}

size_t UsageRegion::ReapDead() {
  if (!Lock()) return 0;
  size_t n = 0;
  for (uint32_t i = 0, limit = Limit(); i < limit; ++i) {
    UsageSlot& o = map_->slots()[i];
    if (o.pid.load() != 0 && !Alive(o)) {
      o.pid.store(0);
      ++n;
    }
  }
  Unlock();
  return n;
}

size_t UsageRegion::Processes() const {
  size_t n = 0;
  for (uint32_t i = 0, limit = Limit(); i < limit; ++i) n += map_->slots()[i].pid.load() != 0;
  return n;
}

uint64_t UsageRegion::PaceDelay(double share, uint64_t burst_ns, uint64_t now_ns) {
  if (share >= 1.0) return 0;
  if (share <= 0.0) share = 1e-3;
  {
    // Credit never exceeds the burst, and accrual only adds: a bucket in
    // credit needs no wait whatever has accrued since.
    const uint64_t at = map_->credit_at_ns.load(std::memory_order_relaxed);
    if (at != 0 && now_ns >= at && now_ns - at < kRefillEveryNs &&
        map_->credit_ns.load(std::memory_order_relaxed) >= 0)
      return 0;
  }
  if (!Lock()) return 0;
  uint64_t at = map_->credit_at_ns.load();
  int64_t credit = map_->credit_ns.load();
  if (at == 0) {
    credit = static_cast<int64_t>(burst_ns);
    at = now_ns;
  } else if (now_ns > at) {
    // Callers read the clock before taking the lock, so a reading may be
    // older than the last one stored: that earns nothing (and must not
    // look like a fresh start).
    const double earned = share * static_cast<double>(now_ns - at);
    credit = static_cast<int64_t>(std::min<double>(static_cast<double>(burst_ns), credit + earned));
    at = now_ns;
  }
  map_->credit_ns.store(credit);
  map_->credit_at_ns.store(at);
  Unlock();
  return credit >= 0 ? 0 : static_cast<uint64_t>(static_cast<double>(-credit) / share);
}

void UsageRegion::ChargeBusy(uint64_t busy_ns) {
  UsageSlot* s = Slot();
  if (s) s->busy_ns.fetch_add(busy_ns);
  map_->busy_ns.fetch_add(busy_ns);
  // Under the lock: PaceDelay reads, refills and stores the credit.
  if (!Lock()) return;
  map_->credit_ns.fetch_sub(static_cast<int64_t>(busy_ns));
  Unlock();
}

uint64_t UsageRegion::ChargeInterval(uint64_t start_ns, uint64_t end_ns) {
  if (!Lock()) return 0;
  const uint64_t until = map_->charged_until_ns.load();
  const uint64_t from = std::max(start_ns, until);
  const uint64_t busy = end_ns > from ? end_ns - from : 0;
  if (end_ns > until) map_->charged_until_ns.store(end_ns);
  map_->credit_ns.fetch_sub(static_cast<int64_t>(busy));
  Unlock();
  UsageSlot* s = Slot();
  if (s) s->busy_ns.fetch_add(busy);
  map_->busy_ns.fetch_add(busy);
  return busy;
}

uint64_t UsageRegion::BusyNs() const { return map_->busy_ns.load(); }

uint64_t UsageRegion::BusyNsOfThisProcess() const {
  UsageSlot* s = slot_.load();
  return s ? s->busy_ns.load() : 0;
}

uint32_t UsageRegion::Limit() const {
  const uint32_t limit = map_->slot_limit.load();
  return limit < map_->slot_count ? limit : map_->slot_count;
}

void UsageRegion::ForgetSlotAfterFork() {
  slot_.store(nullptr);
  slot_pid_ = 0;
}

}  // namespace vgpu
