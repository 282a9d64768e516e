// A job step's own limits (jobs/step_limits.h): from the job's limits and
// the step's VGPU_UUIDS / VGPU_SHARES, capped at the job's; the step's
// directory made once whatever the number of tasks racing for it, and
// removed with the job's; the step a process is in, from its cgroup.
#include <cppunit/extensions/HelperMacros.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "jobs/job_limits.h"
#include "jobs/job_run_dir.h"
#include "jobs/step_limits.h"
#include "temp_dir.h"

using vgpu::JobLimits;
using vgpu::StepLimitsFor;

namespace {

// Job 7: 50 of 100 shares and 40 GiB of GPU-a, 100 shares and 80 GiB of GPU-b.
JobLimits TwoDeviceJob() {
  auto job = JobLimits::Parse(
      "vgpu-limits 1\njob 7\n"
      "device 0 uuid=GPU-a vendor=nvidia memory=42949672960 shares=50 of=100\n"
      "device 1 uuid=GPU-b vendor=nvidia memory=85899345920 shares=100 of=100\n",
      "limits");
  CPPUNIT_ASSERT_MESSAGE(job.message(), job.ok());
  return *job;
}

}  // namespace

class StepLimitsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StepLimitsTest);
  CPPUNIT_TEST(PartOfTheJob);
  CPPUNIT_TEST(WholeJobNeedsNoLimitsOfItsOwn);
  CPPUNIT_TEST(CappedAtTheJobAndCheckedAgainstIt);
  CPPUNIT_TEST(MatchedByIndexOnTheNode);
  CPPUNIT_TEST(MadeOnceRemovedWithTheJob);
  CPPUNIT_TEST_SUITE_END();

 public:
  void PartOfTheJob() {
    auto step = StepLimitsFor(TwoDeviceJob(), "", "GPU-a", "20");
    CPPUNIT_ASSERT_MESSAGE(step.message(), step.ok() && step->has_value());
    const JobLimits& s = **step;
    CPPUNIT_ASSERT_EQUAL(size_t{2}, s.devices.size());  // the job's devices, same indices
    CPPUNIT_ASSERT_EQUAL(20u, s.devices[0].shares);
    CPPUNIT_ASSERT_EQUAL(uint64_t{42949672960ULL * 20 / 50}, s.devices[0].memory_bytes);
    CPPUNIT_ASSERT_EQUAL(0u, s.devices[1].shares);  // not the step's: nothing of it
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, s.devices[1].memory_bytes);
    CPPUNIT_ASSERT_EQUAL(7u, s.job_id);
    // It round-trips through the limits file format.
    auto again = JobLimits::Parse(s.Serialize(), "step limits");
    CPPUNIT_ASSERT_MESSAGE(again.message(), again.ok());
  }

  void WholeJobNeedsNoLimitsOfItsOwn() {
    auto step = StepLimitsFor(TwoDeviceJob(), "", "GPU-a,GPU-b", "50,100");
    CPPUNIT_ASSERT(step.ok() && !step->has_value());
    step = StepLimitsFor(TwoDeviceJob(), "", "", "");  // a step without vgpu
    CPPUNIT_ASSERT(step.ok() && !step->has_value());
  }

  void CappedAtTheJobAndCheckedAgainstIt() {
    // An inherited environment cannot give a step more than its job.
    auto step = StepLimitsFor(TwoDeviceJob(), "", "GPU-a", "90");
    CPPUNIT_ASSERT(step.ok() && step->has_value());
    CPPUNIT_ASSERT_EQUAL(50u, (**step).devices[0].shares);
    CPPUNIT_ASSERT(!StepLimitsFor(TwoDeviceJob(), "", "GPU-z", "10").ok());
    CPPUNIT_ASSERT(!StepLimitsFor(TwoDeviceJob(), "", "GPU-a,GPU-b", "10").ok());
    CPPUNIT_ASSERT(!StepLimitsFor(TwoDeviceJob(), "", "GPU-a", "ten").ok());
  }

  void MatchedByIndexOnTheNode() {
    // Ascend and DCU limits name a device by its physical id or PCI bus id,
    // not the UUID the step's environment gives: the node index decides.
    auto job = JobLimits::Parse(
        "vgpu-limits 1\njob 8\n"
        "device 0 uuid=3 vendor=ascend memory=1000 shares=50 of=100 node=3\n"
        "device 1 uuid=5 vendor=ascend memory=1000 shares=50 of=100 node=5\n",
        "limits");
    CPPUNIT_ASSERT_MESSAGE(job.message(), job.ok());
    CPPUNIT_ASSERT_EQUAL(5, job->devices[1].node_index);
    auto step = StepLimitsFor(*job, "5", "GPU-00000000-0000-0000-0001-000000000005", "10");
    CPPUNIT_ASSERT_MESSAGE(step.message(), step.ok() && step->has_value());
    CPPUNIT_ASSERT_EQUAL(0u, (**step).devices[0].shares);
    CPPUNIT_ASSERT_EQUAL(10u, (**step).devices[1].shares);
    CPPUNIT_ASSERT_EQUAL(uint64_t{200}, (**step).devices[1].memory_bytes);
    CPPUNIT_ASSERT(!StepLimitsFor(*job, "4", "", "10").ok());  // not one of the job's
    // node= round-trips.
    auto again = JobLimits::Parse(job->Serialize(), "again");
    CPPUNIT_ASSERT(again.ok() && again->devices[0].node_index == 3);
  }

  void MadeOnceRemovedWithTheJob() {
    vgpu::TempDir run;
    JobLimits job = TwoDeviceJob();
    CPPUNIT_ASSERT(vgpu::CreateJobRunDir(run.path(), job, getuid(), getgid()).ok());
    auto step = StepLimitsFor(job, "", "GPU-a", "20");
    CPPUNIT_ASSERT(step.ok() && step->has_value());
    // Eight tasks of the step at once: one directory, whole, no leftovers.
    pid_t kids[8];
    for (pid_t& k : kids) {
      k = fork();
      if (k == 0) _exit(vgpu::CreateStepRunDir(run.path(), 3, **step, getuid(), getgid()).ok() ? 0 : 1);
    }
    for (pid_t k : kids) {
      int status = 0;
      waitpid(k, &status, 0);
      CPPUNIT_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    const std::string dir = vgpu::JobRunDir(run.path(), 7) + "/step_3";
    struct stat st {};
    CPPUNIT_ASSERT_EQUAL(0, stat((dir + "/limits").c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(0, stat((dir + "/usage.0").c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(0, stat((dir + "/usage.1").c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(0, static_cast<int>(std::system(("test $(ls -a " + vgpu::JobRunDir(run.path(), 7) +
                                                          " | grep -c step_) = 1").c_str())));
    CPPUNIT_ASSERT(vgpu::RemoveJobRunDir(run.path(), 7).ok());
    CPPUNIT_ASSERT(stat(vgpu::JobRunDir(run.path(), 7).c_str(), &st) != 0);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StepLimitsTest);
