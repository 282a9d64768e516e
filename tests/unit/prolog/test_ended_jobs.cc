// When a node's sweep asks slurmctld about the jobs whose files are left in
// the run directory (SweepSchedule, JobsToAsk), and how the slurmd it runs
// under is found (AncestorStartTime): over a temporary run directory and a
// fake /proc.
#include <cppunit/extensions/HelperMacros.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "ended_jobs.h"
#include "jobs/job_limits.h"
#include "temp_dir.h"
#include "util/read_file.h"

namespace fs = std::filesystem;

namespace {

// Job `id`'s directory and limits file in `run_dir`, both `mtime`.
void JobFiles(const std::string& run_dir, uint32_t id, int64_t mtime) {
  const std::string dir = run_dir + "/job_" + std::to_string(id);
  fs::create_directories(dir);
  CPPUNIT_ASSERT(vgpu::WriteFileAtomically(vgpu::JobLimitsPath(run_dir, id), "", 0644).ok());
  const struct timespec times[2] = {{mtime, 0}, {mtime, 0}};
  CPPUNIT_ASSERT_EQUAL(0, utimensat(AT_FDCWD, vgpu::JobLimitsPath(run_dir, id).c_str(), times, 0));
  CPPUNIT_ASSERT_EQUAL(0, utimensat(AT_FDCWD, dir.c_str(), times, 0));
}

}  // namespace

class EndedJobsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(EndedJobsTest);
  CPPUNIT_TEST(ScheduleAsksOncePerInterval);
  CPPUNIT_TEST(AsksAboutOldFilesOnly);
  CPPUNIT_TEST(FindsTheSlurmdAbove);
  CPPUNIT_TEST_SUITE_END();

 public:
  void ScheduleAsksOncePerInterval() {
    vgpu::SweepSchedule s;
    s.now = 1000;
    s.interval_s = 60;
    CPPUNIT_ASSERT(s.MayAsk());  // never asked
    s.last_asked = 970;
    CPPUNIT_ASSERT(!s.MayAsk());
    s.last_asked = 940;
    CPPUNIT_ASSERT(s.MayAsk());
    // slurmd started after the last question: ask now, about everything.
    s.last_asked = 990;
    s.slurmd_started = 995;
    CPPUNIT_ASSERT(s.MayAsk());
    CPPUNIT_ASSERT(s.AskAbout(999));
    s.slurmd_started = 900;
    CPPUNIT_ASSERT(!s.MayAsk());
    CPPUNIT_ASSERT(!s.AskAbout(999));
    CPPUNIT_ASSERT(s.AskAbout(940));
    // SweepInterval=0: every run asks about every job.
    s.interval_s = 0;
    CPPUNIT_ASSERT(s.MayAsk());
    CPPUNIT_ASSERT(s.AskAbout(1000));
  }

  void AsksAboutOldFilesOnly() {
    vgpu::TempDir run;
    const int64_t now = time(nullptr);
    JobFiles(run.path(), 11, now - 300);  // old, no process: asked about
    JobFiles(run.path(), 12, now - 300);  // old, has a process
    JobFiles(run.path(), 13, now - 5);    // in its prolog, or its epilog is coming
    JobFiles(run.path(), 14, now - 300);  // the caller's
    CPPUNIT_ASSERT(vgpu::JobFilesTime(run.path(), 11) == now - 300);
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, vgpu::JobFilesTime(run.path(), 99));
    const std::set<uint32_t> alive = {12};

    vgpu::SweepSchedule s = vgpu::LoadSweepSchedule(run.path(), 60, run.path() + "/no-proc");
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, s.last_asked);
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, s.slurmd_started);
    // Never asked on this node: about every job without a process.
    CPPUNIT_ASSERT((std::vector<uint32_t>{11, 13}) == vgpu::JobsToAsk(run.path(), 14, alive, s));

    CPPUNIT_ASSERT(vgpu::WriteFileAtomically(vgpu::SweepStampPath(run.path()), "", 0644).ok());
    s = vgpu::LoadSweepSchedule(run.path(), 60, run.path() + "/no-proc");
    CPPUNIT_ASSERT(s.last_asked >= now);
    // Asked a moment ago: not again.
    CPPUNIT_ASSERT(vgpu::JobsToAsk(run.path(), 14, alive, s).empty());
    // Asked more than a minute ago: about the old files only.
    s.last_asked = s.now - 61;
    CPPUNIT_ASSERT((std::vector<uint32_t>{11}) == vgpu::JobsToAsk(run.path(), 14, alive, s));
  }

  void FindsTheSlurmdAbove() {
    vgpu::TempDir proc;
    CPPUNIT_ASSERT(vgpu::WriteFileAtomically(proc.path() + "/stat", "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n", 0644).ok());
    // 300 (vgpu-prolog) <- 200 (a site's wrapper, a name with spaces and
    // parentheses) <- 100 (slurmd, started 50 s after boot) <- 1.
    auto process = [&](int pid, const std::string& comm, int ppid, uint64_t start_ticks) {
      fs::create_directories(proc.path() + "/" + std::to_string(pid));
      std::string stat = std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid);
      for (int field = 5; field <= 21; ++field) stat += " 0";
      stat += " " + std::to_string(start_ticks) + " 0 0\n";
      CPPUNIT_ASSERT(vgpu::WriteFileAtomically(proc.path() + "/" + std::to_string(pid) + "/stat", stat, 0644).ok());
    };
    const uint64_t hz = static_cast<uint64_t>(sysconf(_SC_CLK_TCK));
    process(1, "init", 0, 0);
    process(100, "slurmd", 1, 50 * hz);
    process(200, "pro log) (x", 100, 70 * hz);
    process(300, "vgpu-prolog", 200, 71 * hz);
    CPPUNIT_ASSERT_EQUAL(int64_t{1700000050}, vgpu::AncestorStartTime(proc.path(), 300, "slurmd"));
    CPPUNIT_ASSERT_EQUAL(int64_t{1700000070}, vgpu::AncestorStartTime(proc.path(), 200, "pro log) (x"));
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, vgpu::AncestorStartTime(proc.path(), 300, "slurmstepd"));
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, vgpu::AncestorStartTime(proc.path(), 999, "slurmd"));
    // A child slurmd forked to run the script: the daemon's start counts.
    process(400, "slurmd", 100, 90 * hz);
    process(500, "vgpu-epilog", 400, 91 * hz);
    CPPUNIT_ASSERT_EQUAL(int64_t{1700000050}, vgpu::AncestorStartTime(proc.path(), 500, "slurmd"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(EndedJobsTest);
