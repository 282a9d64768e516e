// Where libvgpu.so decides a process stands (jobs/job_place.h), from the
// facts a process has of itself: its user namespace, the job its cgroup
// names, SLURM_JOB_ID, VGPU_SHARES, LD_PRELOAD. The namespace cases with
// real namespaces are in tests/interposer/namespaces.sh.
#include <cppunit/extensions/HelperMacros.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "jobs/job_limits.h"
#include "jobs/job_place.h"
#include "jobs/job_run_dir.h"
#include "temp_dir.h"

using vgpu::JobPlace;
using vgpu::LocateJob;
using vgpu::ProcessFacts;
using vgpu::UserNamespace;

namespace {

ProcessFacts Facts(UserNamespace ns, uint32_t cgroup_job, uint32_t env_job = 0) {
  ProcessFacts f;
  f.user_namespace = ns;
  f.cgroup.job_id = cgroup_job;
  f.env_job_id = env_job;
  return f;
}

// A run directory for job `id` as vgpu-prolog makes it (as root).
void MakeRunDir(const std::string& root, uint32_t id) {
  vgpu::JobLimits limits;
  limits.job_id = id;
  vgpu::DeviceLimit d;
  d.uuid = "GPU-1";
  d.vendor = "nvidia";
  d.memory_bytes = 1 << 30;
  d.shares = 10;
  d.shares_per_device = 100;
  limits.devices.push_back(d);
  vgpu::Status st = vgpu::CreateJobRunDir(root, limits, 0, 0);
  CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
}

}  // namespace

class JobPlaceTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(JobPlaceTest);
  CPPUNIT_TEST(NoJobAnywhere);
  CPPUNIT_TEST(HostTrustsOnlyTheCgroup);
  CPPUNIT_TEST(JobWithoutRunDirectory);
  CPPUNIT_TEST(NamespaceWithSignsOfVgpuFailsClosed);
  CPPUNIT_TEST(NamespaceTakesSlurmJobIdWhenTheCgroupIsHidden);
  CPPUNIT_TEST(TrustedRunDirectory);
  CPPUNIT_TEST(RunDirectoryOthersMayWrite);
  CPPUNIT_TEST(SluidCgroupThroughItsTie);
  CPPUNIT_TEST(SluidCgroupWithoutTie);
  CPPUNIT_TEST_SUITE_END();

 public:
  void NoJobAnywhere() {
    vgpu::TempDir dir;
    CPPUNIT_ASSERT(LocateJob(Facts(UserNamespace::kHost, 0), dir.path()).kind == JobPlace::Kind::kNoJob);
    CPPUNIT_ASSERT(LocateJob(Facts(UserNamespace::kNested, 0), dir.path()).kind == JobPlace::Kind::kNoJob);
  }

  void HostTrustsOnlyTheCgroup() {
    // In the host's namespace SLURM_JOB_ID names nothing: a process outside
    // a job's cgroup is outside the job, whatever it sets.
    vgpu::TempDir dir;
    ProcessFacts f = Facts(UserNamespace::kHost, 0, 42);
    f.preloaded_by_env = true;
    JobPlace p = LocateJob(f, dir.path());
    CPPUNIT_ASSERT(p.kind == JobPlace::Kind::kNoJob);
    CPPUNIT_ASSERT_EQUAL(0u, p.job_id);
  }

  void JobWithoutRunDirectory() {
    vgpu::TempDir dir;
    JobPlace p = LocateJob(Facts(UserNamespace::kHost, 7), dir.path());
    CPPUNIT_ASSERT(p.kind == JobPlace::Kind::kJobWithoutVgpu);
    CPPUNIT_ASSERT_EQUAL(7u, p.job_id);
    // Preloaded in the host's namespace is not a sign: ld.so.preload and
    // LD_PRELOAD both load the library into jobs without vgpu.
    ProcessFacts f = Facts(UserNamespace::kHost, 7);
    f.preloaded_by_env = true;
    CPPUNIT_ASSERT(LocateJob(f, dir.path()).kind == JobPlace::Kind::kJobWithoutVgpu);
    f.vgpu_shares = "10";
    p = LocateJob(f, dir.path());
    CPPUNIT_ASSERT(p.kind == JobPlace::Kind::kFailClosed);
    CPPUNIT_ASSERT(p.failure.find("VGPU_SHARES=10") != std::string::npos);
    CPPUNIT_ASSERT(p.failure.find("vgpu-prolog did not run") != std::string::npos);
  }

  void NamespaceWithSignsOfVgpuFailsClosed() {
    vgpu::TempDir dir;
    ProcessFacts f = Facts(UserNamespace::kNested, 0);
    f.preloaded_by_env = true;
    JobPlace p = LocateJob(f, dir.path());
    CPPUNIT_ASSERT(p.kind == JobPlace::Kind::kFailClosed);
    CPPUNIT_ASSERT(p.failure.find("neither its cgroup nor SLURM_JOB_ID") != std::string::npos);
    // Named, but its run directory is not visible: hidden or never made,
    // which a namespace cannot tell apart.
    f.env_job_id = 9;
    p = LocateJob(f, dir.path());
    CPPUNIT_ASSERT(p.kind == JobPlace::Kind::kFailClosed);
    CPPUNIT_ASSERT(p.failure.find("make /run/slurm-vgpu visible") != std::string::npos);
    // Without a sign, a job without vgpu.
    f.preloaded_by_env = false;
    CPPUNIT_ASSERT(LocateJob(f, dir.path()).kind == JobPlace::Kind::kJobWithoutVgpu);
  }

  void NamespaceTakesSlurmJobIdWhenTheCgroupIsHidden() {
    vgpu::TempDir dir;
    CPPUNIT_ASSERT_EQUAL(5u, LocateJob(Facts(UserNamespace::kNested, 0, 5), dir.path()).job_id);
    // The cgroup, where it still shows a job, wins.
    CPPUNIT_ASSERT_EQUAL(6u, LocateJob(Facts(UserNamespace::kNested, 6, 5), dir.path()).job_id);
  }

  void TrustedRunDirectory() {
    if (geteuid() != 0) return;  // a run directory is root's (make check runs as root in CI)
    vgpu::TempDir dir;
    MakeRunDir(dir.path(), 11);
    JobPlace p = LocateJob(Facts(UserNamespace::kHost, 11), dir.path());
    CPPUNIT_ASSERT_MESSAGE(p.failure, p.kind == JobPlace::Kind::kVgpuJob);
    CPPUNIT_ASSERT(p.run_dir_fd.get() >= 0 && p.limits_fd.get() >= 0);
    CPPUNIT_ASSERT_EQUAL(vgpu::JobRunDir(dir.path(), 11), p.run_dir);
    // Seen from a nested namespace as root, the directory is the caller's
    // own (root may change its mode), so it proves nothing there.
    p = LocateJob(Facts(UserNamespace::kNested, 11), dir.path());
    CPPUNIT_ASSERT(p.kind == JobPlace::Kind::kFailClosed);
    CPPUNIT_ASSERT(p.failure.find("inside this user namespace") != std::string::npos);
  }

  void RunDirectoryOthersMayWrite() {
    if (geteuid() != 0) return;
    vgpu::TempDir dir;
    MakeRunDir(dir.path(), 12);
    CPPUNIT_ASSERT_EQUAL(0, chmod(vgpu::JobLimitsPath(dir.path(), 12).c_str(), 0666));
    JobPlace p = LocateJob(Facts(UserNamespace::kHost, 12), dir.path());
    CPPUNIT_ASSERT(p.kind == JobPlace::Kind::kFailClosed);
    CPPUNIT_ASSERT(p.failure.find("not trusted") != std::string::npos);
    CPPUNIT_ASSERT(p.failure.find("may be written by others") != std::string::npos);
    CPPUNIT_ASSERT(p.run_dir_fd.get() < 0);
  }

  void SluidCgroupThroughItsTie() {
    if (geteuid() != 0) return;
    vgpu::TempDir dir;
    MakeRunDir(dir.path(), 13);
    CPPUNIT_ASSERT(vgpu::RecordSluidTie(dir.path(), "sBGSM98HZTST00", 13).ok());
    ProcessFacts f = Facts(UserNamespace::kHost, 0, 99);  // SLURM_JOB_ID names nothing here
    f.cgroup.sluid = "sBGSM98HZTST00";
    JobPlace p = LocateJob(f, dir.path());
    CPPUNIT_ASSERT_MESSAGE(p.failure, p.kind == JobPlace::Kind::kVgpuJob);
    CPPUNIT_ASSERT_EQUAL(13u, p.job_id);
  }

  void SluidCgroupWithoutTie() {
    vgpu::TempDir dir;
    ProcessFacts f = Facts(UserNamespace::kHost, 0);
    f.cgroup.sluid = "sBGSM98HZTST00";
    // No sign of vgpu: a job without vgpu (vgpu-prolog ties every job it
    // sees, so the tie's absence means it never ran for this one).
    JobPlace p = LocateJob(f, dir.path());
    CPPUNIT_ASSERT(p.kind == JobPlace::Kind::kJobWithoutVgpu);
    // Any sign fails closed, LD_PRELOAD included: never inert.
    for (int sign = 0; sign < 2; ++sign) {
      ProcessFacts g = f;
      if (sign == 0) g.preloaded_by_env = true;
      if (sign == 1) g.vgpu_shares = "10";
      p = LocateJob(g, dir.path());
      CPPUNIT_ASSERT(p.kind == JobPlace::Kind::kFailClosed);
      CPPUNIT_ASSERT(p.failure.find("sBGSM98HZTST00 by SLUID") != std::string::npos);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(JobPlaceTest);
