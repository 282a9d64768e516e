// vgpu-prolog's and vgpu-epilog's work on a node: the job's allocation read
// from the Prolog environment, the run directory and hardware slices made
// and torn down (against a slice driver that records what it is asked, and
// fails when told to), the usage record, and what the task prolog exports.
#include <cppunit/extensions/HelperMacros.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "ended_jobs.h"
#include "job_setup.h"
#include "job_usage.h"
#include "slice_lock.h"
#include "jobs/job_allocation.h"
#include "jobs/job_identity.h"
#include "jobs/job_limits.h"
#include "jobs/step_limits.h"
#include "jobs/task_env.h"
#include "jobs/usage_region.h"
#include "test_paths.h"
#include "util/read_file.h"

namespace fs = std::filesystem;
using vgpu::HardwareSlice;
using vgpu::JobAllocation;

namespace {

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

using Env = std::map<std::string, std::string>;
JobAllocation::Getenv Lookup(const Env& env) {
  return [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
}

// Two A100 80GB with 10 shares each, as gres_vgpu.so tells the Prolog.
Env A100Job() {
  return {{"SLURM_JOB_ID", "77"},
          {"SLURM_JOB_UID", "65534"},
          {"SLURM_JOB_GID", "65534"},
          {"VGPU_DEVICES", "0,1"},
          {"VGPU_DEVICE_FILES", "/dev/nvidia0,/dev/nvidia1"},
          {"VGPU_SHARES", "10,10"},
          {"VGPU_SHARES_PER_DEVICE", "100"},
          {"VGPU_MEMORY_QUOTA", "8589934592,8589934592"},
          {"VGPU_TYPES", "nvidia,nvidia"},
          {"VGPU_MODELS", "nvidia-a100-80g,nvidia-a100-80g"},
          {"VGPU_UUIDS", "GPU-a,GPU-b"}};
}

// Records every call; Create fails once `fail_create_at` slices exist,
// Destroy while `fail_destroy` is set.
struct SliceLog {
  std::vector<HardwareSlice> live;
  int creates = 0, destroys = 0;
  int fail_create_at = -1;
  bool fail_destroy = false;
  // Create calls under way at once, and the most there were (SliceLock).
  int create_sleep_ms = 0;
  std::atomic<int> in_create{0}, most_at_once{0};
  std::vector<std::optional<uint32_t>> starts;  // each Create's
};

class FakeSlicer : public vgpu::SliceDriver {
 public:
  FakeSlicer(std::string vendor, SliceLog* log) : vendor_(std::move(vendor)), log_(log) {}
  vgpu::Result<HardwareSlice> Create(const std::string& parent, const vgpu::SliceProfile& profile,
                                     std::optional<uint32_t> start, const MadeSoFar& /*made_so_far*/) override {
    const int now = ++log_->in_create;
    if (log_->create_sleep_ms == 0) log_->starts.push_back(start);
    for (int most = log_->most_at_once; now > most && !log_->most_at_once.compare_exchange_weak(most, now);) {
    }
    if (log_->create_sleep_ms > 0) usleep(static_cast<useconds_t>(log_->create_sleep_ms) * 1000);
    auto result = CreateNow(parent, profile);
    --log_->in_create;
    return result;
  }
  vgpu::Result<HardwareSlice> CreateNow(const std::string& parent, const vgpu::SliceProfile& profile) {
    ++log_->creates;
    if (static_cast<int>(log_->live.size()) == log_->fail_create_at)
      return vgpu::Result<HardwareSlice>::Error("fake: no room for " + profile.name + " on " + parent);
    HardwareSlice s;
    s.vendor = vendor_;
    s.parent = parent;
    s.profile = profile.name;
    s.instance = static_cast<uint32_t>(log_->creates);
    s.device = "MIG-" + parent + "-" + std::to_string(s.instance);
    s.memory_bytes = profile.memory_bytes - 1;
    log_->live.push_back(s);
    return s;
  }
  vgpu::Result<std::vector<HardwareSlice>> InPlace(const std::string& parent) override {
    std::vector<HardwareSlice> on;
    for (const HardwareSlice& s : log_->live)
      if (s.parent == parent && s.vendor == vendor_) on.push_back(s);
    return on;
  }
  vgpu::Status Destroy(const HardwareSlice& slice) override {
    ++log_->destroys;
    if (log_->fail_destroy) return vgpu::Status::Error("fake: busy");
    for (auto it = log_->live.begin(); it != log_->live.end(); ++it)
      if (it->device == slice.device) {
        log_->live.erase(it);
        break;
      }
    return vgpu::Status::Ok();
  }

 private:
  std::string vendor_;
  SliceLog* log_;
};

struct Node {
  std::string dir;
  SliceLog log;
  vgpu::NodeContext ctx;

  explicit Node(const std::string& slicing = "") {
    char tmpl[] = "/tmp/vgpu-prologXXXXXX";
    dir = mkdtemp(tmpl);
    chmod(dir.c_str(), 0755);
    ctx.run_dir = dir + "/run";
    auto catalog = vgpu::ChipCatalog::LoadDirectories(vgpu::CatalogDir());
    if (catalog.ok()) ctx.catalog = *catalog;
    if (!slicing.empty()) ctx.config.hardware_slicing = {slicing};
    ctx.open_slicer = [this](const std::string& vendor) -> vgpu::Result<std::unique_ptr<vgpu::SliceDriver>> {
      return std::unique_ptr<vgpu::SliceDriver>(new FakeSlicer(vendor, &log));
    };
  }
  ~Node() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  bool Exists(const std::string& path) const { return fs::exists(path); }
};

}  // namespace

class JobSetupTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(JobSetupTest);
  CPPUNIT_TEST(AllocationFromEnvironment);
  CPPUNIT_TEST(AllocationErrorsNameTheVariable);
  CPPUNIT_TEST(LimitsNameDevicesByVendorId);
  CPPUNIT_TEST(SetUpAndTearDownWithoutSlices);
  CPPUNIT_TEST(EveryJobsSluidTied);
  CPPUNIT_TEST(SlicingOneAtATimePerDevice);
  CPPUNIT_TEST(SlicesMadeRecordedAndDestroyed);
  CPPUNIT_TEST(SliceCutWhereTheSharesSay);
  CPPUNIT_TEST(OrphanSlicesRemovedBeforeCutting);
  CPPUNIT_TEST(FailedSliceLeavesNothing);
  CPPUNIT_TEST(UndestroyedSliceStaysOnRecord);
  CPPUNIT_TEST(NoProfileIsAClearError);
  CPPUNIT_TEST(RunDirWritableByOthersRefused);
  CPPUNIT_TEST(UsageReadAndMerged);
  CPPUNIT_TEST(TaskExportsPreloadAndSlices);
  CPPUNIT_TEST(TaskExportsWithoutLimits);
  CPPUNIT_TEST(SweepRemovesOnlyEndedJobs);
  CPPUNIT_TEST(EndedJobsFromProcAndSqueue);
  CPPUNIT_TEST_SUITE_END();

 public:
  void AllocationFromEnvironment() {
    Env env = A100Job();
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    CPPUNIT_ASSERT_MESSAGE(job.message(), job.ok());
    CPPUNIT_ASSERT_EQUAL(77u, job->job_id);
    CPPUNIT_ASSERT_EQUAL(65534u, static_cast<unsigned>(job->uid));
    CPPUNIT_ASSERT_EQUAL(size_t{2}, job->devices.size());
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/nvidia1"), job->devices[1].file);
    CPPUNIT_ASSERT_EQUAL(std::string("GPU-b"), job->devices[1].uuid);
    CPPUNIT_ASSERT_EQUAL(uint64_t{8589934592ULL}, job->devices[0].memory_quota);
    CPPUNIT_ASSERT_EQUAL(std::string(""), job->devices[0].pci_bus_id);
    // No vgpu on this node: an empty allocation, not an error.
    Env none = {{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_UID", "0"}, {"SLURM_JOB_GID", "0"}};
    auto empty = JobAllocation::FromEnvironment(Lookup(none));
    CPPUNIT_ASSERT(empty.ok());
    CPPUNIT_ASSERT(empty->devices.empty());
  }

  void AllocationErrorsNameTheVariable() {
    struct Case {
      const char* name;
      const char* value;  // null: unset
      const char* says;
    } cases[] = {
        {"SLURM_JOB_ID", nullptr, "SLURM_JOB_ID"},
        {"SLURM_JOB_UID", "x", "SLURM_JOB_UID"},
        {"VGPU_SHARES", "10", "VGPU_SHARES lists 1 values for 2 devices"},
        {"VGPU_SHARES", "10,101", "VGPU_SHARES item \"101\""},
        {"VGPU_MEMORY_QUOTA", nullptr, "VGPU_MEMORY_QUOTA is not set"},
        {"VGPU_SHARES_PER_DEVICE", "0", "VGPU_SHARES_PER_DEVICE"},
        {"VGPU_UUIDS", "GPU-a", "VGPU_UUIDS lists 1"},
    };
    for (const Case& c : cases) {
      Env env = A100Job();
      if (c.value)
        env[c.name] = c.value;
      else
        env.erase(c.name);
      auto job = JobAllocation::FromEnvironment(Lookup(env));
      CPPUNIT_ASSERT_MESSAGE(c.name, !job.ok());
      CPPUNIT_ASSERT_MESSAGE(job.message(), Has(job.message(), c.says));
    }
  }

  void LimitsNameDevicesByVendorId() {
    Env env = {{"SLURM_JOB_ID", "9"},
               {"SLURM_JOB_UID", "0"},
               {"SLURM_JOB_GID", "0"},
               {"VGPU_DEVICES", "3,5,6"},
               {"VGPU_DEVICE_FILES", "/dev/davinci3,/dev/dri/renderD128,/dev/nvidia2"},
               {"VGPU_SHARES", "10,20,30"},
               {"VGPU_SHARES_PER_DEVICE", "100"},
               {"VGPU_MEMORY_QUOTA", "100,200,0"},
               {"VGPU_TYPES", "ascend,dcu,nvidia"},
               {"VGPU_MODELS", "ascend-910b,hygon-k100,nvidia-h100"},
               {"VGPU_UUIDS", "x,y,GPU-c"},
               {"VGPU_PCI_BUS_IDS", ",0000:c1:00.0,"}};
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    CPPUNIT_ASSERT_MESSAGE(job.message(), job.ok());
    vgpu::JobLimits l = job->Limits(vgpu::ShippedCatalog());
    CPPUNIT_ASSERT_EQUAL(size_t{3}, l.devices.size());
    CPPUNIT_ASSERT_EQUAL(std::string("ascend"), l.devices[0].vendor);
    CPPUNIT_ASSERT_EQUAL(std::string("3"), l.devices[0].uuid);  // physical id of /dev/davinci3
    CPPUNIT_ASSERT_EQUAL(std::string("dcu"), l.devices[1].vendor);
    CPPUNIT_ASSERT_EQUAL(std::string("0000:c1:00.0"), l.devices[1].uuid);
    CPPUNIT_ASSERT_EQUAL(std::string("GPU-c"), l.devices[2].uuid);
    CPPUNIT_ASSERT_EQUAL(uint32_t{20}, l.devices[1].shares);
    CPPUNIT_ASSERT_EQUAL(uint32_t{2}, l.devices[2].index);
    CPPUNIT_ASSERT_EQUAL(UINT64_MAX, l.devices[2].memory_bytes);  // unknown size: no quota
    // What the interposer reads back is what was meant.
    auto again = vgpu::JobLimits::Parse(l.Serialize(), "limits");
    CPPUNIT_ASSERT_MESSAGE(again.message(), again.ok());
    CPPUNIT_ASSERT_EQUAL(uint64_t{200}, again->devices[1].memory_bytes);
  }

  void SetUpAndTearDownWithoutSlices() {
    Node node;
    Env env = A100Job();
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    vgpu::Status st = vgpu::SetUpJob(node.ctx, *job);
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    const std::string limits = vgpu::JobLimitsPath(node.ctx.run_dir, 77);
    auto text = vgpu::ReadTextFile(limits);
    CPPUNIT_ASSERT_MESSAGE(text.message(), text.ok());
    CPPUNIT_ASSERT_MESSAGE(*text, Has(*text, "device 1 uuid=GPU-b vendor=nvidia memory=8589934592 shares=10 of=100"));
    struct stat st_limits {}, st_region {};
    CPPUNIT_ASSERT_EQUAL(0, stat(limits.c_str(), &st_limits));
    CPPUNIT_ASSERT_EQUAL(0644u, static_cast<unsigned>(st_limits.st_mode & 07777));
    CPPUNIT_ASSERT_EQUAL(0, stat(vgpu::UsageRegionPath(node.ctx.run_dir, 77, 1).c_str(), &st_region));
    CPPUNIT_ASSERT_EQUAL(65534u, static_cast<unsigned>(st_region.st_uid));
    CPPUNIT_ASSERT_EQUAL(0, node.log.creates);  // slicing is off
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 77).ok());
    CPPUNIT_ASSERT(!node.Exists(vgpu::JobRunDir(node.ctx.run_dir, 77)));
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 77).ok());  // idempotent
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 78).ok());  // never set up
  }

  void EveryJobsSluidTied() {
    Env env = A100Job();
    env["SLURM_JOB_SLUID"] = "sBGSM98HZTST0U";  // U is not base32
    auto bad = JobAllocation::FromEnvironment(Lookup(env));
    CPPUNIT_ASSERT(!bad.ok() && bad.message().find("SLURM_JOB_SLUID") != std::string::npos);
    if (geteuid() != 0) return;  // a tie is root's
    Node node;
    env["SLURM_JOB_SLUID"] = "sBGSM98HZTST00";
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    CPPUNIT_ASSERT_MESSAGE(job.message(), job.ok());
    CPPUNIT_ASSERT(vgpu::SetUpJob(node.ctx, *job).ok());
    CPPUNIT_ASSERT_EQUAL(77u, *vgpu::JobOfSluid(node.ctx.run_dir, "sBGSM98HZTST00", vgpu::UserNamespace::kHost));
    // A job without vgpu here: its tie alone.
    Env plain = {{"SLURM_JOB_ID", "80"}, {"SLURM_JOB_UID", "0"}, {"SLURM_JOB_GID", "0"},
                 {"SLURM_JOB_SLUID", "s0000000000080"}};
    auto other = JobAllocation::FromEnvironment(Lookup(plain));
    CPPUNIT_ASSERT(other.ok() && other->devices.empty());
    CPPUNIT_ASSERT(vgpu::SetUpJob(node.ctx, *other).ok());
    CPPUNIT_ASSERT_EQUAL(80u, *vgpu::JobOfSluid(node.ctx.run_dir, "s0000000000080", vgpu::UserNamespace::kHost));
    CPPUNIT_ASSERT(!node.Exists(vgpu::JobRunDir(node.ctx.run_dir, 80)));
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 77).ok());
    CPPUNIT_ASSERT_EQUAL(0u, *vgpu::JobOfSluid(node.ctx.run_dir, "sBGSM98HZTST00", vgpu::UserNamespace::kHost));
    CPPUNIT_ASSERT_EQUAL(80u, *vgpu::JobOfSluid(node.ctx.run_dir, "s0000000000080", vgpu::UserNamespace::kHost));
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 80).ok());
    CPPUNIT_ASSERT(vgpu::TiedJobs(node.ctx.run_dir).empty());
  }

  void SlicingOneAtATimePerDevice() {
    // Two prologs slicing the same GPU at the same moment: the vendor calls
    // come one after the other (SliceLock), the jobs both get their slice.
    Node node("nvidia-a100-80g");
    node.log.create_sleep_ms = 100;
    auto one_device = [](const char* id) {
      Env env = A100Job();
      env["SLURM_JOB_ID"] = id;
      env["VGPU_DEVICES"] = "0";
      env["VGPU_DEVICE_FILES"] = "/dev/nvidia0";
      env["VGPU_SHARES"] = "10";
      env["VGPU_MEMORY_QUOTA"] = "8589934592";
      env["VGPU_TYPES"] = "nvidia";
      env["VGPU_MODELS"] = "nvidia-a100-80g";
      env["VGPU_UUIDS"] = "GPU-a";
      return env;
    };
    Env env_a = one_device("81"), env_b = one_device("82");
    auto a = JobAllocation::FromEnvironment(Lookup(env_a));
    auto b = JobAllocation::FromEnvironment(Lookup(env_b));
    CPPUNIT_ASSERT(a.ok() && b.ok());
    vgpu::Status st_a, st_b;
    std::thread ta([&] { st_a = vgpu::SetUpJob(node.ctx, *a); });
    std::thread tb([&] { st_b = vgpu::SetUpJob(node.ctx, *b); });
    ta.join();
    tb.join();
    CPPUNIT_ASSERT_MESSAGE(st_a.message(), st_a.ok());
    CPPUNIT_ASSERT_MESSAGE(st_b.message(), st_b.ok());
    CPPUNIT_ASSERT_EQUAL(2, node.log.creates);
    CPPUNIT_ASSERT_EQUAL(1, node.log.most_at_once.load());
    CPPUNIT_ASSERT(node.Exists(vgpu::SliceLock::PathFor(node.ctx.run_dir, "GPU-a")));
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 81).ok() && vgpu::TearDownJob(node.ctx, 82).ok());
    CPPUNIT_ASSERT(node.log.live.empty());
  }

  // slurmctld writes a slice's position in the job's bits (slice_geometry.h):
  // the prolog cuts it there; bits that are no position leave the choice
  // to the driver.
  void SliceCutWhereTheSharesSay() {
    Node node("nvidia-a100-80g");
    Env env = A100Job();
    env["VGPU_SHARE_OFFSETS"] = "85,3";  // slot 6 of GPU-a; not a slot's first share on GPU-b
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    CPPUNIT_ASSERT_MESSAGE(job.message(), job.ok());
    CPPUNIT_ASSERT(vgpu::SetUpJob(node.ctx, *job).ok());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, node.log.starts.size());
    CPPUNIT_ASSERT(node.log.starts[0] == std::optional<uint32_t>(6));
    CPPUNIT_ASSERT(!node.log.starts[1].has_value());
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 77).ok());
    env["VGPU_SHARE_OFFSETS"] = "85,100";
    auto bad = JobAllocation::FromEnvironment(Lookup(env));
    CPPUNIT_ASSERT(!bad.ok() && Has(bad.message(), "VGPU_SHARE_OFFSETS item \"100\" is not 0..99"));
  }

  // A slice on the device that no job's record names (its prolog died
  // before recording it) is removed before the next one is cut there;
  // another job's slice on record stays.
  void OrphanSlicesRemovedBeforeCutting() {
    Node node("nvidia-a100-80g");
    Env other = A100Job();
    other["SLURM_JOB_ID"] = "90";
    auto kept = JobAllocation::FromEnvironment(Lookup(other));
    CPPUNIT_ASSERT(vgpu::SetUpJob(node.ctx, *kept).ok());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, node.log.live.size());
    HardwareSlice orphan = node.log.live[0];
    orphan.instance = 999;
    orphan.device = "MIG-orphan";
    node.log.live.push_back(orphan);
    Env env = A100Job();
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    vgpu::Status st = vgpu::SetUpJob(node.ctx, *job);
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{4}, node.log.live.size());  // job 90's two, job 77's two
    for (const HardwareSlice& s : node.log.live) CPPUNIT_ASSERT(s.device != "MIG-orphan");
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 77).ok() && vgpu::TearDownJob(node.ctx, 90).ok());
    CPPUNIT_ASSERT(node.log.live.empty());
  }

  void SlicesMadeRecordedAndDestroyed() {
    Node node("nvidia-a100-80g");
    Env env = A100Job();
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    vgpu::Status st = vgpu::SetUpJob(node.ctx, *job);
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, node.log.live.size());
    CPPUNIT_ASSERT_EQUAL(std::string("1g.10gb"), node.log.live[0].profile);
    CPPUNIT_ASSERT_EQUAL(std::string("GPU-b"), node.log.live[1].parent);
    auto recorded = vgpu::JobSlices(node.ctx.run_dir, 77);
    CPPUNIT_ASSERT_MESSAGE(recorded.message(), recorded.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, recorded->size());
    CPPUNIT_ASSERT_EQUAL(node.log.live[1].device, (*recorded)[1].device);
    // The hardware fences: the limits follow the slice (memory), no pacing.
    auto limits = vgpu::JobLimits::Parse(*vgpu::ReadTextFile(vgpu::JobLimitsPath(node.ctx.run_dir, 77)), "l");
    CPPUNIT_ASSERT_MESSAGE(limits.message(), limits.ok());
    CPPUNIT_ASSERT_EQUAL(node.log.live[0].memory_bytes, limits->devices[0].memory_bytes);
    CPPUNIT_ASSERT_EQUAL(uint32_t{100}, limits->devices[0].shares);
    CPPUNIT_ASSERT_EQUAL(node.log.live[1].device, limits->devices[1].uuid);  // CUDA's name of the MIG device
    CPPUNIT_ASSERT_EQUAL(uint32_t{1}, (*recorded)[1].job_device);
    // The task is pointed at the slices.
    vgpu::TaskEnvInput in;
    in.limits = *limits;
    in.slices = *recorded;
    in.preloaded_system_wide = true;
    Env task = {{"CUDA_VISIBLE_DEVICES", "0,1"}};
    in.getenv = Lookup(task);
    auto exports = vgpu::TaskExports(in);
    CPPUNIT_ASSERT_EQUAL(size_t{1}, exports.size());
    CPPUNIT_ASSERT_EQUAL(std::string("CUDA_VISIBLE_DEVICES"), exports[0].first);
    CPPUNIT_ASSERT_EQUAL(node.log.live[0].device + "," + node.log.live[1].device, exports[0].second);

    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 77).ok());
    CPPUNIT_ASSERT(node.log.live.empty());
    CPPUNIT_ASSERT(!node.Exists(vgpu::JobSlicesPath(node.ctx.run_dir, 77)));
    const int destroys = node.log.destroys;
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 77).ok());
    CPPUNIT_ASSERT_EQUAL(destroys, node.log.destroys);  // nothing left to destroy
  }

  void FailedSliceLeavesNothing() {
    Node node("nvidia");  // by type
    node.log.fail_create_at = 1;  // the second device's slice fails
    Env env = A100Job();
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    vgpu::Status st = vgpu::SetUpJob(node.ctx, *job);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st.message(), "fake: no room for 1g.10gb on GPU-b"));
    CPPUNIT_ASSERT(node.log.live.empty());  // the first one was undone
    CPPUNIT_ASSERT(!node.Exists(vgpu::JobSlicesPath(node.ctx.run_dir, 77)));
    CPPUNIT_ASSERT(!node.Exists(vgpu::JobRunDir(node.ctx.run_dir, 77)));
  }

  void UndestroyedSliceStaysOnRecord() {
    Node node("nvidia-a100-80g");
    Env env = A100Job();
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    CPPUNIT_ASSERT(vgpu::SetUpJob(node.ctx, *job).ok());
    node.log.fail_destroy = true;
    vgpu::Status st = vgpu::TearDownJob(node.ctx, 77);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st.message(), "fake: busy"));
    auto left = vgpu::JobSlices(node.ctx.run_dir, 77);
    CPPUNIT_ASSERT(left.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, left->size());
    CPPUNIT_ASSERT(!node.Exists(vgpu::JobRunDir(node.ctx.run_dir, 77)));
    // The next epilog run (or the next prolog of the job) finishes it.
    node.log.fail_destroy = false;
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 77).ok());
    CPPUNIT_ASSERT(node.log.live.empty());
    CPPUNIT_ASSERT(!node.Exists(vgpu::JobSlicesPath(node.ctx.run_dir, 77)));
  }

  void NoProfileIsAClearError() {
    Node node("ascend-910b");
    Env env = {{"SLURM_JOB_ID", "8"},
               {"SLURM_JOB_UID", "0"},
               {"SLURM_JOB_GID", "0"},
               {"VGPU_DEVICES", "2"},
               {"VGPU_DEVICE_FILES", "/dev/davinci2"},
               {"VGPU_SHARES", "60"},
               {"VGPU_SHARES_PER_DEVICE", "100"},
               {"VGPU_MEMORY_QUOTA", "1000"},
               {"VGPU_TYPES", "ascend"},
               {"VGPU_MODELS", "ascend-910b"}};
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    vgpu::Status st = vgpu::SetUpJob(node.ctx, *job);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st.message(), "no ascend-910b slice profile holds 60 of 100 shares"));
    CPPUNIT_ASSERT(!node.Exists(vgpu::JobRunDir(node.ctx.run_dir, 8)));
    // 25 shares fit vir06_1c_16g; the vNPU is made on physical id 2.
    env["VGPU_SHARES"] = "25";
    job = JobAllocation::FromEnvironment(Lookup(env));
    st = vgpu::SetUpJob(node.ctx, *job);
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("vir06_1c_16g"), node.log.live.at(0).profile);
    CPPUNIT_ASSERT_EQUAL(std::string("2"), node.log.live.at(0).parent);
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 8).ok());
    // The whole NPU (no template holds it) is the NPU itself, unsliced.
    env["VGPU_SHARES"] = "100";
    job = JobAllocation::FromEnvironment(Lookup(env));
    const int creates = node.log.creates;
    st = vgpu::SetUpJob(node.ctx, *job);
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT_EQUAL(creates, node.log.creates);
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 8).ok());
  }

  void RunDirWritableByOthersRefused() {
    Node node;
    mkdir(node.ctx.run_dir.c_str(), 0755);
    chmod(node.ctx.run_dir.c_str(), 0777);
    Env env = A100Job();
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    vgpu::Status st = vgpu::SetUpJob(node.ctx, *job);
    CPPUNIT_ASSERT(!st.ok());
    CPPUNIT_ASSERT_MESSAGE(st.message(), Has(st.message(), "writable by no one else"));
  }

  void UsageReadAndMerged() {
    Node node;
    Env env = A100Job();
    auto job = JobAllocation::FromEnvironment(Lookup(env));
    CPPUNIT_ASSERT(vgpu::SetUpJob(node.ctx, *job).ok());
    {
      auto region = vgpu::UsageRegion::Open(vgpu::UsageRegionPath(node.ctx.run_dir, 77, 1));
      CPPUNIT_ASSERT_MESSAGE(region.message(), region.ok());
      CPPUNIT_ASSERT((*region)->Reserve(3000, 8589934592ULL) == vgpu::UsageRegion::Reservation::kOk);
      (*region)->Release(3000);
      (*region)->ChargeBusy(2500000000ULL);
    }
    // A step that held 5 of the job's 10 shares of device 1 used 1.5 s of it,
    // kept apart in the record.
    {
      auto text = vgpu::ReadTextFile(vgpu::JobLimitsPath(node.ctx.run_dir, 77));
      auto limits = vgpu::JobLimits::Parse(*text, "limits");
      // As slurmstepd gives a step: device 1's index on the node, not its id.
      auto step = vgpu::StepLimitsFor(*limits, std::to_string(limits->devices[1].node_index), "", "5");
      CPPUNIT_ASSERT(limits->devices[1].node_index >= 0);
      CPPUNIT_ASSERT_MESSAGE(step.message(), step.ok() && step->has_value());
      CPPUNIT_ASSERT(vgpu::CreateStepRunDir(node.ctx.run_dir, 4, **step, getuid(), getgid()).ok());
      auto region = vgpu::UsageRegion::Open(vgpu::JobRunDir(node.ctx.run_dir, 77) + "/step_4/usage.1");
      CPPUNIT_ASSERT_MESSAGE(region.message(), region.ok());
      (*region)->ChargeBusy(1500000000ULL);
    }
    auto usage = vgpu::ReadNodeUsage(node.ctx.run_dir, *job, {}, "n3", time(nullptr) + 60);
    CPPUNIT_ASSERT_MESSAGE(usage.message(), usage.ok());
    CPPUNIT_ASSERT_EQUAL(size_t{2}, usage->devices.size());
    CPPUNIT_ASSERT_EQUAL(size_t{1}, usage->steps.size());
    CPPUNIT_ASSERT_EQUAL(4u, usage->steps[0].step);
    CPPUNIT_ASSERT_EQUAL(size_t{1}, usage->steps[0].devices.size());  // only the device it held
    CPPUNIT_ASSERT_EQUAL(1u, usage->steps[0].devices[0].index);
    CPPUNIT_ASSERT_EQUAL(5u, usage->steps[0].devices[0].shares);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.5, usage->steps[0].devices[0].busy_s, 1e-9);
    CPPUNIT_ASSERT_EQUAL(uint64_t{3000}, usage->devices[1].memory_peak);
    CPPUNIT_ASSERT_EQUAL(uint64_t{0}, usage->devices[0].memory_peak);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.5, usage->devices[1].busy_s, 1e-9);
    CPPUNIT_ASSERT(usage->wall_s >= 59 && usage->wall_s <= 62);

    auto first = vgpu::MergeUsageComment("", *usage);
    CPPUNIT_ASSERT_MESSAGE(first.message(), first.ok());
    CPPUNIT_ASSERT_MESSAGE(*first, Has(*first, "\"memory_peak\":3000"));
    CPPUNIT_ASSERT_MESSAGE(*first, Has(*first, "\"busy_s\":2.5"));
    CPPUNIT_ASSERT_MESSAGE(*first, Has(*first, "\"model\":\"nvidia-a100-80g\""));
    CPPUNIT_ASSERT_MESSAGE(*first, !Has(*first, "'"));
    CPPUNIT_ASSERT_MESSAGE(*first, Has(*first, "\"steps\":{\"4\":[{\"busy_s\":1.5,\"index\":1,"));
    usage->node = "n4";
    auto both = vgpu::MergeUsageComment(*first, *usage);
    CPPUNIT_ASSERT_MESSAGE(both.message(), both.ok());
    CPPUNIT_ASSERT_MESSAGE(*both, Has(*both, "\"n3\":") && Has(*both, "\"n4\":"));
    auto foreign = vgpu::MergeUsageComment("checked by admin", *usage);
    CPPUNIT_ASSERT(!foreign.ok());
    CPPUNIT_ASSERT_MESSAGE(foreign.message(), Has(foreign.message(), "holds other text"));
    CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 77).ok());
    CPPUNIT_ASSERT(!vgpu::ReadNodeUsage(node.ctx.run_dir, *job, {}, "n3", time(nullptr)).ok());
  }

  void SweepRemovesOnlyEndedJobs() {
    Node node("nvidia-a100-80g");
    Env env = A100Job();
    for (const char* id : {"11", "12", "13", "14"}) {
      env["SLURM_JOB_ID"] = id;
      auto job = JobAllocation::FromEnvironment(Lookup(env));
      CPPUNIT_ASSERT(vgpu::SetUpJob(node.ctx, *job).ok());
    }
    // Junk that is not a job's must stay.
    CPPUNIT_ASSERT(vgpu::WriteFileAtomically(node.ctx.run_dir + "/job_x", "", 0644).ok());
    CPPUNIT_ASSERT(vgpu::WriteFileAtomically(node.ctx.run_dir + "/job_15.other", "", 0644).ok());
    CPPUNIT_ASSERT((std::vector<uint32_t>{11, 12, 13, 14}) == vgpu::JobsOnRecord(node.ctx.run_dir));
    CPPUNIT_ASSERT_EQUAL(size_t{8}, node.log.live.size());
    // 11 ended, 12 running, 13 unknown (no answer), 14 ended but is the caller's.
    auto has_ended = [](uint32_t job) { return job == 11 || job == 14 ? 1 : job == 12 ? 0 : -1; };
    std::vector<uint32_t> swept;
    vgpu::Status st = vgpu::SweepEndedJobs(node.ctx, 14, has_ended, &swept);
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT((std::vector<uint32_t>{11}) == swept);
    CPPUNIT_ASSERT((std::vector<uint32_t>{12, 13, 14}) == vgpu::JobsOnRecord(node.ctx.run_dir));
    CPPUNIT_ASSERT_EQUAL(size_t{6}, node.log.live.size());  // job 11's two slices destroyed
    CPPUNIT_ASSERT(node.Exists(node.ctx.run_dir + "/job_x"));
    CPPUNIT_ASSERT(node.Exists(node.ctx.run_dir + "/job_15.other"));
  }

  void EndedJobsFromProcAndSqueue() {
    Node node;
    const std::string proc = node.dir + "/proc";
    auto process = [&](const std::string& pid, const std::string& cgroup) {
      fs::create_directories(proc + "/" + pid);
      CPPUNIT_ASSERT(vgpu::WriteFileAtomically(proc + "/" + pid + "/cgroup", cgroup, 0644).ok());
    };
    process("100", "4:freezer:/slurm_n1/uid_0/job_21/step_batch\n1:name=systemd:/\n");
    process("101", "0::/system.slice/slurmstepd.scope/job_22/step_0/user/task_0\n");
    process("102", "0::/user.slice\n");
    process("103", "0::/system.slice/slurmstepd.scope/s0000000000023/step_0/user/task_0\n");
    process("104", "0::/system.slice/slurmstepd.scope/s0000000000024/step_0/user/task_0\n");  // no tie
    fs::create_directories(proc + "/self");  // not a pid
    if (geteuid() == 0) {  // a tie is root's
      fs::create_directories(node.ctx.run_dir);
      CPPUNIT_ASSERT(vgpu::RecordSluidTie(node.ctx.run_dir, "s0000000000023", 23).ok());
      CPPUNIT_ASSERT((std::set<uint32_t>{21, 22, 23}) == vgpu::JobsWithProcesses(proc, node.ctx.run_dir));
      // A job without vgpu has its tie alone, and is on record for the sweep.
      CPPUNIT_ASSERT((std::vector<uint32_t>{23}) == vgpu::JobsOnRecord(node.ctx.run_dir));
      CPPUNIT_ASSERT(vgpu::TearDownJob(node.ctx, 23).ok());
      CPPUNIT_ASSERT(vgpu::JobsOnRecord(node.ctx.run_dir).empty());
    }
    CPPUNIT_ASSERT((std::set<uint32_t>{21, 22}) == vgpu::JobsWithProcesses(proc, node.ctx.run_dir));

    auto ended = vgpu::EndedFromSqueue(
        "31 COMPLETED n1\n32 COMPLETING n2\n33 RUNNING n1\n34 PENDING\n35 NODE_FAIL n1\njunk\n"
        "37 RUNNING n[2-3]\n38 RUNNING n[0-1],x7\n39 SUSPENDED n2\n40 RUNNING r[1-2]-n[1-2]\n41 CONFIGURING n3\n",
        {31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41}, "n1");
    CPPUNIT_ASSERT_EQUAL(1, ended[31]);
    CPPUNIT_ASSERT_EQUAL(0, ended[32]);  // its epilog is still to run
    CPPUNIT_ASSERT_EQUAL(0, ended[33]);
    CPPUNIT_ASSERT_EQUAL(0, ended[34]);
    CPPUNIT_ASSERT_EQUAL(1, ended[35]);
    CPPUNIT_ASSERT_EQUAL(1, ended[36]);  // slurmctld forgot it
    // The id runs elsewhere: handed out again after a slurmctld crash.
    CPPUNIT_ASSERT_EQUAL(1, ended[37]);
    CPPUNIT_ASSERT_EQUAL(0, ended[38]);  // n1 is one of its nodes
    CPPUNIT_ASSERT_EQUAL(1, ended[39]);
    CPPUNIT_ASSERT_EQUAL(0, ended[40]);  // a node list not understood: kept
    CPPUNIT_ASSERT_EQUAL(1, ended[41]);
    // Without this node's name only the state counts.
    CPPUNIT_ASSERT_EQUAL(0, vgpu::EndedFromSqueue("37 RUNNING n[2-3]\n", {37}, "")[37]);
  }

  void TaskExportsPreloadAndSlices() {
    vgpu::TaskEnvInput in;
    in.interposer = "/usr/lib/slurm-vgpu/libvgpu.so";
    Env task = {{"LD_PRELOAD", "/opt/other.so"}};
    in.getenv = Lookup(task);
    auto exports = vgpu::TaskExports(in);
    CPPUNIT_ASSERT_EQUAL(size_t{1}, exports.size());
    CPPUNIT_ASSERT_EQUAL(std::string("/usr/lib/slurm-vgpu/libvgpu.so:/opt/other.so"), exports[0].second);
    task["LD_PRELOAD"] = "/usr/lib/slurm-vgpu/libvgpu.so:/opt/other.so";
    CPPUNIT_ASSERT_EQUAL(task["LD_PRELOAD"], vgpu::TaskExports(in)[0].second);  // not twice
    in.preloaded_system_wide = true;
    CPPUNIT_ASSERT(vgpu::TaskExports(in).empty());
    CPPUNIT_ASSERT(vgpu::PreloadListsInterposer("# site\n/usr/lib/x.so /usr/lib/slurm-vgpu/libvgpu.so\n"));
    CPPUNIT_ASSERT(!vgpu::PreloadListsInterposer("# /usr/lib/slurm-vgpu/libvgpu.so\n/usr/lib/libvgpu.so.bak\n"));
  }

  // No limits file on the node: nothing for a task without vgpu shares; a
  // task Slurm gave shares (its prolog did not run) still gets the
  // interposer, which then fails closed.
  void TaskExportsWithoutLimits() {
    Node node;
    const std::string lib = "/usr/lib/slurm-vgpu/libvgpu.so";
    Env plain;
    CPPUNIT_ASSERT(vgpu::TaskExportsForJob(node.ctx.run_dir, 77, lib, "", Lookup(plain)).empty());
    Env shares = {{"VGPU_SHARES", "10"}};
    auto exports = vgpu::TaskExportsForJob(node.ctx.run_dir, 77, lib, "", Lookup(shares));
    CPPUNIT_ASSERT_EQUAL(size_t{1}, exports.size());
    CPPUNIT_ASSERT_EQUAL(std::string("LD_PRELOAD"), exports[0].first);
    CPPUNIT_ASSERT_EQUAL(lib, exports[0].second);
    // /etc/ld.so.preload loads it already.
    CPPUNIT_ASSERT(vgpu::TaskExportsForJob(node.ctx.run_dir, 77, lib, lib + "\n", Lookup(shares)).empty());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(JobSetupTest);
