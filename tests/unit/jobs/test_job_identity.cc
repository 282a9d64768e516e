// The job of a process from its cgroup (jobs/job_identity.h): Slurm's
// job_<id> paths on cgroup v1 and v2, 26.05's SLUID paths, and the tie
// vgpu-prolog records between a SLUID and its job id.
#include <cppunit/extensions/HelperMacros.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "jobs/job_identity.h"
#include "temp_dir.h"

using vgpu::JobCgroup;
using vgpu::ParseJobCgroup;
using vgpu::UserNamespace;

namespace {

const char kSluid[] = "sBGSM98HZTST00";

}  // namespace

class JobIdentityTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(JobIdentityTest);
  CPPUNIT_TEST(JobIdPaths);
  CPPUNIT_TEST(SluidPaths);
  CPPUNIT_TEST(StepsBelowTheJob);
  CPPUNIT_TEST(OnlyTheFirstJobComponentCounts);
  CPPUNIT_TEST(SluidSyntax);
  CPPUNIT_TEST(TieRecordedAndForgotten);
  CPPUNIT_TEST(SluidWithoutTieIsUnproved);
  CPPUNIT_TEST(TieOthersMayWriteIsNotTrusted);
  CPPUNIT_TEST_SUITE_END();

 public:
  void JobIdPaths() {
    CPPUNIT_ASSERT_EQUAL(42u, ParseJobCgroup("12:pids:/\n4:devices:/slurm/uid_1000/job_42/step_0/task_0\n").job_id);
    CPPUNIT_ASSERT_EQUAL(7u, ParseJobCgroup("4:freezer:/slurm_n1/uid_0/job_7/step_batch\n").job_id);
    CPPUNIT_ASSERT_EQUAL(9u, ParseJobCgroup("0::/system.slice/n1_slurmstepd.scope/job_9/step_0/user/task_0\n").job_id);
    CPPUNIT_ASSERT_EQUAL(5u, ParseJobCgroup("0::/vgpu-test/job_5\n").job_id);
    CPPUNIT_ASSERT_EQUAL(0u, ParseJobCgroup("0::/user.slice/user-1000.slice/session-3.scope\n").job_id);
    CPPUNIT_ASSERT_EQUAL(0u, ParseJobCgroup("0::/x/job_12abc/y\n").job_id);        // not a whole component
    CPPUNIT_ASSERT_EQUAL(0u, ParseJobCgroup("0::/x/myjob_12/y\n").job_id);         // not at a component start
    CPPUNIT_ASSERT_EQUAL(0u, ParseJobCgroup("0::/x/job_99999999999/y\n").job_id);  // out of range
    CPPUNIT_ASSERT_EQUAL(0u, ParseJobCgroup("0::/x/job_0/y\n").job_id);
    CPPUNIT_ASSERT(!ParseJobCgroup("").names_job());
    CPPUNIT_ASSERT(!ParseJobCgroup("garbage without colons job_4\n").names_job());
  }

  void SluidPaths() {
    // Slurm 26.05 on cgroup v2 (CgroupJobIdPaths=no), on a hybrid host
    // whose v1 lines come first and show "/".
    const JobCgroup c = ParseJobCgroup(
        "9:name=systemd:/\n4:devices:/\n0::/system.slice/slurmstepd.scope/sBGSM98HZTST00/step_0/user/task_0\n");
    CPPUNIT_ASSERT_EQUAL(std::string(kSluid), c.sluid);
    CPPUNIT_ASSERT_EQUAL(0u, c.job_id);
    CPPUNIT_ASSERT(c.names_job());
    // Several slurmd per host: <node>_slurmstepd.scope.
    CPPUNIT_ASSERT_EQUAL(std::string(kSluid),
                         ParseJobCgroup("0::/system.slice/c2n1_slurmstepd.scope/sBGSM98HZTST00/step_extern\n").sluid);
    // Only right under a slurmstepd scope: elsewhere it is any cgroup.
    CPPUNIT_ASSERT(!ParseJobCgroup("0::/user.slice/sBGSM98HZTST00/step_0\n").names_job());
    CPPUNIT_ASSERT(!ParseJobCgroup("0::/sBGSM98HZTST00\n").names_job());
  }

  void StepsBelowTheJob() {
    CPPUNIT_ASSERT_EQUAL(int64_t{3}, ParseJobCgroup("4:devices:/slurm/uid_1000/job_42/step_3/task_0\n").step_id);
    CPPUNIT_ASSERT_EQUAL(int64_t{0}, ParseJobCgroup("0::/system.slice/slurmstepd.scope/job_9/step_0/user/task_0\n").step_id);
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, ParseJobCgroup("4:freezer:/slurm_n1/uid_0/job_7/step_batch\n").step_id);
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, ParseJobCgroup("0::/system.slice/slurmstepd.scope/job_9/step_extern/user\n").step_id);
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, ParseJobCgroup("0::/vgpu-test/job_5\n").step_id);
    CPPUNIT_ASSERT_EQUAL(int64_t{2},
                         ParseJobCgroup("0::/system.slice/slurmstepd.scope/sBGSM98HZTST00/step_2/user/task_0\n").step_id);
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, ParseJobCgroup("0::/system.slice/slurmstepd.scope/sBGSM98HZTST00/step_x\n").step_id);
    CPPUNIT_ASSERT_EQUAL(int64_t{-1}, ParseJobCgroup("").step_id);
  }

  void OnlyTheFirstJobComponentCounts() {
    // A cgroup a job makes below its own (where Slurm delegated one) cannot
    // rename its job.
    const JobCgroup c = ParseJobCgroup("4:devices:/slurm/uid_1000/job_42/step_0/task_0/job_7/step_1\n");
    CPPUNIT_ASSERT_EQUAL(42u, c.job_id);
    CPPUNIT_ASSERT_EQUAL(int64_t{0}, c.step_id);
    const JobCgroup s =
        ParseJobCgroup("0::/system.slice/slurmstepd.scope/sBGSM98HZTST00/step_0/user/x_slurmstepd.scope/sAAAAAAAAAAAAA\n");
    CPPUNIT_ASSERT_EQUAL(std::string(kSluid), s.sluid);
  }

  void SluidSyntax() {
    CPPUNIT_ASSERT(vgpu::IsSluid(kSluid));
    CPPUNIT_ASSERT(vgpu::IsSluid("s0000000000000"));
    CPPUNIT_ASSERT(!vgpu::IsSluid("sBGSM98HZTST0"));     // 12 characters
    CPPUNIT_ASSERT(!vgpu::IsSluid("sBGSM98HZTST000"));   // 14
    CPPUNIT_ASSERT(!vgpu::IsSluid("SBGSM98HZTST00"));    // Slurm prints a lower-case s
    CPPUNIT_ASSERT(!vgpu::IsSluid("sbgsm98hztst00"));    // and upper-case digits
    CPPUNIT_ASSERT(!vgpu::IsSluid("sBGSM98HZTSU00"));    // U is not in Crockford's base32
    CPPUNIT_ASSERT(!vgpu::IsSluid("s../job_1/.../"));
  }

  void TieRecordedAndForgotten() {
    if (geteuid() != 0) return;  // the tie's directory is root's (make check runs as root in CI)
    vgpu::TempDir dir;
    CPPUNIT_ASSERT(vgpu::RecordSluidTie(dir.path(), kSluid, 77).ok());
    CPPUNIT_ASSERT(vgpu::RecordSluidTie(dir.path(), "s0000000000001", 78).ok());
    auto job = vgpu::JobOfSluid(dir.path(), kSluid, UserNamespace::kHost);
    CPPUNIT_ASSERT_MESSAGE(job.message(), job.ok() && *job == 77u);
    const vgpu::ProcessJob p = vgpu::ResolveProcessJob(
        "0::/system.slice/slurmstepd.scope/sBGSM98HZTST00/step_4/user/task_0\n", dir.path(), UserNamespace::kHost);
    CPPUNIT_ASSERT_EQUAL(77u, p.job_id);
    CPPUNIT_ASSERT_EQUAL(int64_t{4}, p.step_id);
    CPPUNIT_ASSERT(p.unproved.empty());
    // Recorded again (a requeued job keeps its SLUID): replaced.
    CPPUNIT_ASSERT(vgpu::RecordSluidTie(dir.path(), kSluid, 79).ok());
    CPPUNIT_ASSERT_EQUAL(79u, *vgpu::JobOfSluid(dir.path(), kSluid, UserNamespace::kHost));
    CPPUNIT_ASSERT(vgpu::ForgetSluidTies(dir.path(), 79).ok());
    CPPUNIT_ASSERT(vgpu::ForgetSluidTies(dir.path(), 79).ok());  // idempotent
    CPPUNIT_ASSERT_EQUAL(0u, *vgpu::JobOfSluid(dir.path(), kSluid, UserNamespace::kHost));
    CPPUNIT_ASSERT_EQUAL(78u, *vgpu::JobOfSluid(dir.path(), "s0000000000001", UserNamespace::kHost));
    CPPUNIT_ASSERT(!vgpu::RecordSluidTie(dir.path(), "../job_1", 1).ok());
  }

  void SluidWithoutTieIsUnproved() {
    vgpu::TempDir dir;
    const vgpu::ProcessJob p = vgpu::ResolveProcessJob(
        "0::/system.slice/slurmstepd.scope/sBGSM98HZTST00/step_0/user/task_0\n", dir.path(), UserNamespace::kHost);
    CPPUNIT_ASSERT_EQUAL(0u, p.job_id);
    CPPUNIT_ASSERT_EQUAL(std::string(kSluid), p.sluid);
    CPPUNIT_ASSERT(p.unproved.find(vgpu::SluidTiePath(dir.path(), kSluid) + ", which ties it") != std::string::npos);
    CPPUNIT_ASSERT(p.unproved.find("vgpu-prolog did not run") != std::string::npos);
    // A job named by id needs no tie.
    CPPUNIT_ASSERT(vgpu::ResolveProcessJob("0::/a/job_3\n", dir.path(), UserNamespace::kHost).unproved.empty());
  }

  void TieOthersMayWriteIsNotTrusted() {
    if (geteuid() != 0) return;
    vgpu::TempDir dir;
    CPPUNIT_ASSERT(vgpu::RecordSluidTie(dir.path(), kSluid, 5).ok());
    CPPUNIT_ASSERT_EQUAL(0, chmod(vgpu::SluidTieDir(dir.path()).c_str(), 0777));
    auto job = vgpu::JobOfSluid(dir.path(), kSluid, UserNamespace::kHost);
    CPPUNIT_ASSERT(!job.ok());
    CPPUNIT_ASSERT(job.message().find("may be written by others") != std::string::npos);
    const vgpu::ProcessJob p =
        vgpu::ResolveProcessJob("0::/system.slice/slurmstepd.scope/sBGSM98HZTST00\n", dir.path(), UserNamespace::kHost);
    CPPUNIT_ASSERT_EQUAL(0u, p.job_id);
    CPPUNIT_ASSERT(p.unproved.find("not trusted") != std::string::npos);
    // And the prolog refuses to record into it.
    CPPUNIT_ASSERT(!vgpu::RecordSluidTie(dir.path(), kSluid, 5).ok());
    // A tie that is not a link to ../job_<id>.
    CPPUNIT_ASSERT_EQUAL(0, chmod(vgpu::SluidTieDir(dir.path()).c_str(), 0755));
    CPPUNIT_ASSERT_EQUAL(0, unlink(vgpu::SluidTiePath(dir.path(), kSluid).c_str()));
    CPPUNIT_ASSERT_EQUAL(0, symlink("/etc/passwd", vgpu::SluidTiePath(dir.path(), kSluid).c_str()));
    CPPUNIT_ASSERT(!vgpu::JobOfSluid(dir.path(), kSluid, UserNamespace::kHost).ok());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(JobIdentityTest);
