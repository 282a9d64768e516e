// The per-job limits file: round trip, and every malformed input refused
// with a message naming the file, the line and the fix.
#include <cppunit/extensions/HelperMacros.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "jobs/job_limits.h"
#include "jobs/job_run_dir.h"
#include "jobs/usage_region.h"
#include "util/read_file.h"

using vgpu::JobLimits;

namespace {

const char kGood[] =
    "vgpu-limits 1\n"
    "# written by vgpu-prolog\n"
    "job 1234\n"
    "device 0 uuid=GPU-aaaa vendor=nvidia memory=8589934592 shares=10 of=100\n"
    "device 1 uuid=- vendor=Ascend memory=0 shares=100 of=100\n";

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

class JobLimitsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(JobLimitsTest);
  CPPUNIT_TEST(ParsesAndRoundTrips);
  CPPUNIT_TEST(RefusesMalformed);
  CPPUNIT_TEST(Paths);
  CPPUNIT_TEST(RunDirCreateAndRemove);
  CPPUNIT_TEST_SUITE_END();

 public:
  void ParsesAndRoundTrips() {
    auto l = JobLimits::Parse(kGood, "limits");
    CPPUNIT_ASSERT_MESSAGE(l.message(), l.ok());
    CPPUNIT_ASSERT_EQUAL(1234u, l->job_id);
    CPPUNIT_ASSERT_EQUAL(size_t{2}, l->devices.size());
    CPPUNIT_ASSERT_EQUAL(uint64_t{8589934592ULL}, l->devices[0].memory_bytes);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.10, l->devices[0].ComputeShare(), 1e-9);
    CPPUNIT_ASSERT_EQUAL(std::string(""), l->devices[1].uuid);
    CPPUNIT_ASSERT_EQUAL(std::string("ascend"), l->devices[1].vendor);
    CPPUNIT_ASSERT(l->FindByUuid("gpu-AAAA") == &l->devices[0]);
    CPPUNIT_ASSERT(l->FindByUuid("GPU-bbbb") == nullptr);
    auto again = JobLimits::Parse(l->Serialize(), "again");
    CPPUNIT_ASSERT_MESSAGE(again.message(), again.ok());
    CPPUNIT_ASSERT_EQUAL(l->Serialize(), again->Serialize());
  }

  void RefusesMalformed() {
    struct Case {
      const char* text;
      const char* says;
    } cases[] = {
        {"", "empty"},
        {"job 5\n", "not a vgpu limits file"},
        {"vgpu-limits 2\njob 5\n", "different releases"},
        {"vgpu-limits 1\ndevice 0 uuid=a vendor=nvidia memory=1 shares=1 of=100\n", "no \"job ID\""},
        {"vgpu-limits 1\njob 5\n", "no device"},
        {"vgpu-limits 1\njob 0\n", "job id"},
        {"vgpu-limits 1\njob 5\njob 6\n", "once"},
        {"vgpu-limits 1\njob 5\ndevice 1 uuid=a vendor=nvidia memory=1 shares=1 of=100\n", "out of order"},
        {"vgpu-limits 1\njob 5\ndevice 0 uuid=a vendor=nvidia memory=-1 shares=1 of=100\n", "memory=-1"},
        {"vgpu-limits 1\njob 5\ndevice 0 uuid=a vendor=nvidia memory=1 shares=1\n", "of="},
        {"vgpu-limits 1\njob 5\ndevice 0 uuid=a vendor=nvidia memory=1 shares=1 of=0\n", "of= must be at least 1"},
        {"vgpu-limits 1\njob 5\ndevice 0 uuid=a vendor=nvidia memory=1 shares=1 of=100 quota=9\n",
         "unknown field \"quota\""},
        {"vgpu-limits 1\njob 5\ndevice 0 uuid=a vendor=nvidia memory=1 shares=1 of=100\n"
         "device 1 uuid=A vendor=nvidia memory=1 shares=1 of=100\n",
         "twice"},
        {"vgpu-limits 1\njob 5 6\n", "unexpected \"6\""},
        {"vgpu-limits 1\njob 5\nmemory 9\n", "unknown record"},
        {"vgpu-limits 1\njob 5\ndevice 0 uuid=a vendor=nvidia memory=99999999999999999999 shares=1 of=100\n",
         "byte count"},
    };
    for (const auto& c : cases) {
      auto l = JobLimits::Parse(c.text, "/run/slurm-vgpu/job_5/limits");
      CPPUNIT_ASSERT_MESSAGE(c.text, !l.ok());
      CPPUNIT_ASSERT_MESSAGE(l.message() + " lacks " + c.says, Has(l.message(), c.says));
      CPPUNIT_ASSERT_MESSAGE(l.message(), Has(l.message(), "/run/slurm-vgpu/job_5/limits"));
    }
  }

  void Paths() {
    CPPUNIT_ASSERT_EQUAL(std::string("/run/v/job_7/limits"), vgpu::JobLimitsPath("/run/v", 7));
    CPPUNIT_ASSERT_EQUAL(std::string("/run/v/job_7/usage.2"), vgpu::UsageRegionPath("/run/v", 7, 2));
  }

  void RunDirCreateAndRemove() {
    char base[] = "/tmp/vgpu-rundirXXXXXX";
    CPPUNIT_ASSERT(mkdtemp(base));
    auto limits = JobLimits::Parse(kGood, "limits");
    CPPUNIT_ASSERT(limits.ok());
    CPPUNIT_ASSERT_MESSAGE("", vgpu::CreateJobRunDir(base, *limits, getuid(), getgid()).ok());
    const std::string dir = vgpu::JobRunDir(base, 1234);
    struct stat st {};
    CPPUNIT_ASSERT(stat(dir.c_str(), &st) == 0);
    CPPUNIT_ASSERT_EQUAL(0755u, static_cast<unsigned>(st.st_mode & 07777));
    CPPUNIT_ASSERT(stat(vgpu::JobLimitsPath(base, 1234).c_str(), &st) == 0);
    CPPUNIT_ASSERT_EQUAL(0644u, static_cast<unsigned>(st.st_mode & 07777));
    auto text = vgpu::ReadTextFile(vgpu::JobLimitsPath(base, 1234));
    CPPUNIT_ASSERT(text.ok());
    CPPUNIT_ASSERT_EQUAL(limits->Serialize(), *text);
    for (uint32_t d = 0; d < 2; ++d) {
      CPPUNIT_ASSERT(stat(vgpu::UsageRegionPath(base, 1234, d).c_str(), &st) == 0);
      CPPUNIT_ASSERT_EQUAL(0600u, static_cast<unsigned>(st.st_mode & 07777));
      CPPUNIT_ASSERT(vgpu::UsageRegion::Open(vgpu::UsageRegionPath(base, 1234, d)).ok());
    }
    // Again over a used one: fresh regions.
    {
      auto r = vgpu::UsageRegion::Open(vgpu::UsageRegionPath(base, 1234, 0));
      CPPUNIT_ASSERT((*r)->Reserve(5, 10) == vgpu::UsageRegion::Reservation::kOk);
    }
    CPPUNIT_ASSERT(vgpu::CreateJobRunDir(base, *limits, getuid(), getgid()).ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, (*vgpu::UsageRegion::Open(vgpu::UsageRegionPath(base, 1234, 0)))->Used());
    CPPUNIT_ASSERT(vgpu::RemoveJobRunDir(base, 1234).ok());
    CPPUNIT_ASSERT(stat(dir.c_str(), &st) != 0);
    CPPUNIT_ASSERT(vgpu::RemoveJobRunDir(base, 1234).ok());  // idempotent
    // A run directory that does not exist: an error naming it, nothing left.
    auto bad = vgpu::CreateJobRunDir(std::string(base) + "/missing", *limits, getuid(), getgid());
    CPPUNIT_ASSERT(!bad.ok());
    CPPUNIT_ASSERT(bad.message().find("missing") != std::string::npos);
    rmdir(base);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(JobLimitsTest);
