// The job's shared accounting region, with real processes: a shared limit
// across processes, a killed process's memory coming back, fork, many
// threads, and a process killed at random points never wedging the region.
#include <cppunit/extensions/HelperMacros.h>

#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "jobs/usage_region.h"

using vgpu::UsageRegion;

namespace {

std::string TempRegion() {
  char path[] = "/tmp/vgpu-usageXXXXXX";
  int fd = mkstemp(path);
  close(fd);
  CPPUNIT_ASSERT(UsageRegion::Create(path, 64).ok());
  return path;
}

std::unique_ptr<UsageRegion> OpenOk(const std::string& path) {
  auto r = UsageRegion::Open(path);
  CPPUNIT_ASSERT_MESSAGE(r.message(), r.ok());
  return std::move(r).value();
}

// Runs `body` in a child that reports 0 for success; returns its pid.
template <typename F>
pid_t Child(F body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body() ? 0 : 1);
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

class UsageRegionTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(UsageRegionTest);
  CPPUNIT_TEST(OpenRefusesWhatIsNotARegion);
  CPPUNIT_TEST(ReserveWithinLimit);
  CPPUNIT_TEST(FourProcessesShareOneLimit);
  CPPUNIT_TEST(KilledProcessMemoryComesBack);
  CPPUNIT_TEST(ForkedChildHasItsOwnSlot);
  CPPUNIT_TEST(ThreadsNeverOvershoot);
  CPPUNIT_TEST(ProcessesNeverOvershoot);
  CPPUNIT_TEST(KillsAtRandomPointsNeverWedge);
  CPPUNIT_TEST(PacingIsATokenBucket);
  CPPUNIT_TEST(ReadStatsFromOutside);
  CPPUNIT_TEST_SUITE_END();

 public:
  void OpenRefusesWhatIsNotARegion() {
    auto missing = UsageRegion::Open("/nonexistent/usage.0");
    CPPUNIT_ASSERT(!missing.ok());
    CPPUNIT_ASSERT(missing.message().find("/nonexistent/usage.0") != std::string::npos);
    char path[] = "/tmp/vgpu-notregionXXXXXX";
    int fd = mkstemp(path);
    std::string junk(8192, 'x');
    CPPUNIT_ASSERT(write(fd, junk.data(), junk.size()) == static_cast<ssize_t>(junk.size()));
    close(fd);
    auto bad = UsageRegion::Open(path);
    CPPUNIT_ASSERT(!bad.ok());
    CPPUNIT_ASSERT(bad.message().find("corrupt") != std::string::npos);
    unlink(path);
  }

  void ReserveWithinLimit() {
    std::string path = TempRegion();
    auto r = OpenOk(path);
    CPPUNIT_ASSERT(r->Reserve(60, 100) == UsageRegion::Reservation::kOk);
    CPPUNIT_ASSERT(r->Reserve(50, 100) == UsageRegion::Reservation::kOverLimit);
    CPPUNIT_ASSERT(r->Reserve(40, 100) == UsageRegion::Reservation::kOk);
    CPPUNIT_ASSERT(r->Reserve(1, 100) == UsageRegion::Reservation::kOverLimit);
    CPPUNIT_ASSERT(r->Reserve(UINT64_MAX, 100) == UsageRegion::Reservation::kOverLimit);
    CPPUNIT_ASSERT_EQUAL(uint64_t{100}, r->Used());
    r->Release(70);
    CPPUNIT_ASSERT_EQUAL(uint64_t{30}, r->UsedByThisProcess());
    r->Release(1000);  // never below zero
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, r->Used());
    CPPUNIT_ASSERT_EQUAL(uint64_t{100}, r->Peak());
    CPPUNIT_ASSERT_EQUAL(size_t{1}, r->Processes());
    unlink(path.c_str());
  }

  void FourProcessesShareOneLimit() {
    std::string path = TempRegion();
    // Each child takes 10 bytes at a time until refused, then reports how
    // much it got; together they must get exactly the limit.
    int fds[2];
    CPPUNIT_ASSERT(pipe(fds) == 0);
    std::vector<pid_t> kids;
    for (int k = 0; k < 4; ++k)
      kids.push_back(Child([&] {
        auto r = UsageRegion::Open(path);
        if (!r.ok()) return false;
        uint64_t got = 0;
        while ((*r)->Reserve(10, 1000) == UsageRegion::Reservation::kOk) got += 10;
        if (write(fds[1], &got, sizeof(got)) != sizeof(got)) return false;
        pause();  // hold the memory until killed
        return true;
      }));
    uint64_t total = 0;
    for (int k = 0; k < 4; ++k) {
      uint64_t got = 0;
      CPPUNIT_ASSERT(read(fds[0], &got, sizeof(got)) == sizeof(got));
      total += got;
    }
    CPPUNIT_ASSERT_EQUAL(uint64_t{1000}, total);
    auto r = OpenOk(path);
    CPPUNIT_ASSERT_EQUAL(uint64_t{1000}, r->Used());
    CPPUNIT_ASSERT(r->Reserve(10, 1000) == UsageRegion::Reservation::kOverLimit);
    for (pid_t p : kids) kill(p, SIGKILL);
    for (pid_t p : kids) Wait(p);
    close(fds[0]);
    close(fds[1]);
    unlink(path.c_str());
  }

  void KilledProcessMemoryComesBack() {
    std::string path = TempRegion();
    int fds[2];
    CPPUNIT_ASSERT(pipe(fds) == 0);
    pid_t kid = Child([&] {
      auto r = UsageRegion::Open(path);
      if (!r.ok() || (*r)->Reserve(800, 1000) != UsageRegion::Reservation::kOk) return false;
      char c = 1;
      if (write(fds[1], &c, 1) != 1) return false;
      pause();
      return true;
    });
    char c = 0;
    CPPUNIT_ASSERT(read(fds[0], &c, 1) == 1);
    auto r = OpenOk(path);
    CPPUNIT_ASSERT(r->Reserve(300, 1000) == UsageRegion::Reservation::kOverLimit);
    kill(kid, SIGKILL);
    CPPUNIT_ASSERT_EQUAL(128 + SIGKILL, Wait(kid));
    // No cleanup ran in the child: the next reservation over the limit
    // finds it dead and takes its 800 back.
    CPPUNIT_ASSERT(r->Reserve(300, 1000) == UsageRegion::Reservation::kOk);
    CPPUNIT_ASSERT_EQUAL(uint64_t{300}, r->Used());
    CPPUNIT_ASSERT_EQUAL(size_t{1}, r->Processes());
    close(fds[0]);
    close(fds[1]);
    unlink(path.c_str());
  }

  void ForkedChildHasItsOwnSlot() {
    std::string path = TempRegion();
    auto r = OpenOk(path);
    CPPUNIT_ASSERT(r->Reserve(100, 1000) == UsageRegion::Reservation::kOk);
    pid_t kid = Child([&] {
      r->ForgetSlotAfterFork();
      // The parent's 100 still count; the child's own use starts at 0.
      if (r->UsedByThisProcess() != 0 || r->Used() != 100) return false;
      if (r->Reserve(900, 1000) != UsageRegion::Reservation::kOk) return false;
      return r->Reserve(1, 1000) == UsageRegion::Reservation::kOverLimit && r->Processes() == 2;
    });
    CPPUNIT_ASSERT_EQUAL(0, Wait(kid));
    // The child exited holding 900: reaped, the parent's 100 stay.
    CPPUNIT_ASSERT_EQUAL(size_t{1}, r->ReapDead());
    CPPUNIT_ASSERT_EQUAL(uint64_t{100}, r->Used());
    CPPUNIT_ASSERT_EQUAL(uint64_t{100}, r->UsedByThisProcess());
    unlink(path.c_str());
  }

  void ThreadsNeverOvershoot() {
    std::string path = TempRegion();
    auto r = OpenOk(path);
    std::atomic<uint64_t> got{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 2000; ++i) {
          if (r->Reserve(7, 10000) == UsageRegion::Reservation::kOk) {
            got += 7;
            if (i % 3 == 0) {
              r->Release(7);
              got -= 7;
            }
          }
        }
      });
    for (auto& t : threads) t.join();
    CPPUNIT_ASSERT(got.load() <= 10000);
    CPPUNIT_ASSERT_EQUAL(got.load(), r->Used());
    CPPUNIT_ASSERT(r->Peak() <= 10000);
    unlink(path.c_str());
  }

  // Processes race for the last bytes, on the lock-free path (add, then
  // sum) and the locked one: six hold 150 bytes each and then take and
  // give back 30 at a time, now and then holding it for a while, so that
  // only three of them fit at once under 1000. What they hold together,
  // counted in a shared word after each granted reservation and before
  // each release, never passes the limit.
  void ProcessesNeverOvershoot() {
    std::string path = TempRegion();
    struct Shared {
      std::atomic<int64_t> held;
      std::atomic<int64_t> worst;
      std::atomic<int> ready;
      std::atomic<int64_t> granted;
    };
    void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CPPUNIT_ASSERT(mem != MAP_FAILED);
    auto* shared = new (mem) Shared{};
    const uint64_t limit = 1000;
    const int kids_n = 6;
    auto count = [shared](int64_t bytes) {
      const int64_t now = shared->held.fetch_add(bytes) + bytes;
      int64_t w = shared->worst.load();
      while (now > w && !shared->worst.compare_exchange_weak(w, now)) {
      }
    };
    std::vector<pid_t> kids;
    for (int k = 0; k < kids_n; ++k)
      kids.push_back(Child([&] {
        auto r = UsageRegion::Open(path);
        if (!r.ok() || (*r)->Reserve(150, limit) != UsageRegion::Reservation::kOk) return false;
        count(150);
        shared->ready.fetch_add(1);
        while (shared->ready.load() < kids_n) sched_yield();  // all race from here
        for (int i = 0; i < 50000; ++i) {
          if ((*r)->Reserve(30, limit) != UsageRegion::Reservation::kOk) continue;
          count(30);
          shared->granted.fetch_add(1);
          if (i % 64 == 0) usleep(100);  // hold it while others run
          shared->held.fetch_sub(30);
          (*r)->Release(30);
        }
        shared->held.fetch_sub(150);  // before exit gives it back
        return true;
      }));
    for (pid_t p : kids) CPPUNIT_ASSERT_EQUAL(0, Wait(p));
    CPPUNIT_ASSERT_MESSAGE("held together: " + std::to_string(shared->worst.load()), shared->worst.load() <= 1000);
    // The limit was in play: some were granted, some refused.
    CPPUNIT_ASSERT(shared->granted.load() > 0 && shared->granted.load() < kids_n * 50000);
    // The racers are gone: alone, a process gets exactly what is left.
    auto r = OpenOk(path);
    r->ReapDead();
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, r->Used());
    for (int i = 0; i < 100; ++i) CPPUNIT_ASSERT(r->Reserve(10, limit) == UsageRegion::Reservation::kOk);
    CPPUNIT_ASSERT(r->Reserve(1, limit) == UsageRegion::Reservation::kOverLimit);
    CPPUNIT_ASSERT(r->Peak() <= limit);
    munmap(mem, sizeof(Shared));
    unlink(path.c_str());
  }

  void KillsAtRandomPointsNeverWedge() {
    std::string path = TempRegion();
    std::srand(7);
    for (int round = 0; round < 20; ++round) {
      pid_t kid = Child([&] {
        auto r = UsageRegion::Open(path);
        if (!r.ok()) return false;
        for (;;) {
          if ((*r)->Reserve(5, 1000) != UsageRegion::Reservation::kOk) (*r)->Release(500);
        }
      });
      usleep(200 + std::rand() % 3000);
      kill(kid, SIGKILL);
      Wait(kid);
    }
    // Every child died mid-loop, some inside the lock: the region still
    // works and, once reaped, holds nothing of theirs.
    auto r = OpenOk(path);
    r->ReapDead();
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, r->Used());
    CPPUNIT_ASSERT(r->Reserve(1000, 1000) == UsageRegion::Reservation::kOk);
    unlink(path.c_str());
  }

  void PacingIsATokenBucket() {
    std::string path = TempRegion();
    auto r = OpenOk(path);
    const uint64_t ms = 1000000;
    // A whole device is never paced.
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, r->PaceDelay(1.0, 20 * ms, 1000 * ms));
    // First use: a full burst (20 ms) to spend.
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, r->PaceDelay(0.1, 20 * ms, 1000 * ms));
    r->ChargeBusy(15 * ms);
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, r->PaceDelay(0.1, 20 * ms, 1000 * ms));  // 5 ms left
    r->ChargeBusy(15 * ms);                                                    // 10 ms owed
    // At 10 %, 10 ms of device time take 100 ms of wall clock to earn.
    CPPUNIT_ASSERT_EQUAL(100 * ms, r->PaceDelay(0.1, 20 * ms, 1000 * ms));
    CPPUNIT_ASSERT_EQUAL(50 * ms, r->PaceDelay(0.1, 20 * ms, 1050 * ms));
    // A reading older than the last one (another process read the clock
    // first) earns nothing, and is no fresh start either.
    CPPUNIT_ASSERT_EQUAL(50 * ms, r->PaceDelay(0.1, 20 * ms, 1040 * ms));
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, r->PaceDelay(0.1, 20 * ms, 1100 * ms));
    // Idle time earns no more than the burst.
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, r->PaceDelay(0.1, 20 * ms, 60000 * ms));
    r->ChargeBusy(30 * ms);  // 20 - 30 = -10 ms
    CPPUNIT_ASSERT_EQUAL(100 * ms, r->PaceDelay(0.1, 20 * ms, 60000 * ms));
    CPPUNIT_ASSERT_EQUAL(60 * ms, r->BusyNs());
    CPPUNIT_ASSERT_EQUAL(60 * ms, r->BusyNsOfThisProcess());
    // Shared: another process's charges delay this one.
    pid_t kid = Child([&] {
      r->ForgetSlotAfterFork();
      r->ChargeBusy(10 * ms);
      return r->BusyNsOfThisProcess() == 10 * ms;
    });
    CPPUNIT_ASSERT_EQUAL(0, Wait(kid));
    CPPUNIT_ASSERT_EQUAL(200 * ms, r->PaceDelay(0.1, 20 * ms, 60000 * ms));
    CPPUNIT_ASSERT_EQUAL(70 * ms, r->BusyNs());
    // Intervals: overlaps are charged once.
    CPPUNIT_ASSERT_EQUAL(5 * ms, r->ChargeInterval(100 * ms, 105 * ms));
    CPPUNIT_ASSERT_EQUAL(5 * ms, r->ChargeInterval(100 * ms, 110 * ms));  // queued behind the first
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, r->ChargeInterval(101 * ms, 104 * ms));
    CPPUNIT_ASSERT_EQUAL(3 * ms, r->ChargeInterval(120 * ms, 123 * ms));  // after idle time
    CPPUNIT_ASSERT_EQUAL(83 * ms, r->BusyNs());
    CPPUNIT_ASSERT_EQUAL(330 * ms, r->PaceDelay(0.1, 20 * ms, 60000 * ms));
    unlink(path.c_str());
  }

  // vgpu-exporter's view: what the job's processes hold and were refused,
  // read-only, without claiming a slot; a process killed holding memory
  // counts until someone reaps it.
  void ReadStatsFromOutside() {
    std::string path = TempRegion();
    auto r = OpenOk(path);
    CPPUNIT_ASSERT(r->Reserve(60, 100) == UsageRegion::Reservation::kOk);
    CPPUNIT_ASSERT(r->Reserve(50, 100) == UsageRegion::Reservation::kOverLimit);   // slow path
    CPPUNIT_ASSERT(r->Reserve(500, 100) == UsageRegion::Reservation::kOverLimit);  // over the limit alone
    r->ChargeBusy(7000);
    int fds[2];
    CPPUNIT_ASSERT(pipe(fds) == 0);
    pid_t kid = Child([&] {
      auto k = UsageRegion::Open(path);
      const bool ok = k.ok() && (*k)->Reserve(30, 100) == UsageRegion::Reservation::kOk;
      char c = 1;
      (void)!write(fds[1], &c, 1);
      pause();
      return ok;
    });
    char c = 0;
    CPPUNIT_ASSERT(read(fds[0], &c, 1) == 1);
    close(fds[0]);
    close(fds[1]);

    auto stats = UsageRegion::ReadStats(path);
    CPPUNIT_ASSERT_MESSAGE(stats.message(), stats.ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t{90}, stats->used_bytes);
    CPPUNIT_ASSERT_EQUAL(uint64_t{90}, stats->peak_bytes);
    CPPUNIT_ASSERT_EQUAL(uint64_t{2}, stats->refusals);
    CPPUNIT_ASSERT_EQUAL(uint64_t{7000}, stats->busy_ns);
    CPPUNIT_ASSERT_EQUAL(uint32_t{2}, stats->processes);
    CPPUNIT_ASSERT_EQUAL(uint64_t{2}, r->Refusals());
    kill(kid, SIGKILL);
    Wait(kid);
    CPPUNIT_ASSERT_EQUAL(uint64_t{90}, UsageRegion::ReadStats(path)->used_bytes);  // not reaped yet
    r->ReapDead();
    CPPUNIT_ASSERT_EQUAL(uint64_t{60}, UsageRegion::ReadStats(path)->used_bytes);
    // A read-only file: readers without write access (a region of another
    // user, read with CAP_DAC_READ_SEARCH) get the same.
    CPPUNIT_ASSERT(chmod(path.c_str(), 0400) == 0);
    CPPUNIT_ASSERT(UsageRegion::ReadStats(path).ok());

    auto missing = UsageRegion::ReadStats("/nonexistent/usage.0");
    CPPUNIT_ASSERT(!missing.ok());
    CPPUNIT_ASSERT(missing.message().find("/nonexistent/usage.0") != std::string::npos);
    char junk_path[] = "/tmp/vgpu-notregionXXXXXX";
    int fd = mkstemp(junk_path);
    std::string junk(8192, 'x');
    CPPUNIT_ASSERT(write(fd, junk.data(), junk.size()) == static_cast<ssize_t>(junk.size()));
    close(fd);
    auto bad = UsageRegion::ReadStats(junk_path);
    CPPUNIT_ASSERT(!bad.ok());
    CPPUNIT_ASSERT(bad.message().find("corrupt") != std::string::npos);
    unlink(junk_path);
    unlink(path.c_str());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(UsageRegionTest);
