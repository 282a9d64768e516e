#include "job_setup.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "jobs/job_identity.h"
#include "jobs/job_run_dir.h"
#include "slice_lock.h"
#include "util/read_file.h"
#include "util/text.h"

namespace vgpu {
namespace {

Status EnsureRunDir(const std::string& run_dir) {
  if (mkdir(run_dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Status::Error("cannot create the run directory " + run_dir + ": " + std::strerror(errno));
  struct stat st {};
  if (lstat(run_dir.c_str(), &st) != 0)
    return Status::Error("cannot stat " + run_dir + ": " + std::strerror(errno));
  // libvgpu.so trusts only a directory no one but root can change (the
  // prolog runs as root; a test as whoever runs it).
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0)
    return Status::Error(run_dir +
                         " must be a directory owned by root and writable by no one else "
                         "(chown root: " + run_dir + " && chmod 755 " + run_dir + ")");
  return Status::Ok();
}

Status WriteSlices(const std::string& run_dir, uint32_t job_id, const std::vector<HardwareSlice>& slices) {
  return WriteFileAtomically(JobSlicesPath(run_dir, job_id), SerializeSlices(slices), 0644);
}

// Removes the slices on `parent` that no job's record names: made by a
// prolog killed between the driver's return and its record (or by hand on
// a device vgpu slices). Called under the device's SliceLock, which every
// prolog and epilog holds while it makes or destroys a slice there and
// records it: what is on the device and in no record then belongs to no
// job. Nothing is removed when a record cannot be read (no proof).
void RemoveOrphans(const NodeContext& ctx, SliceDriver& driver, const std::string& vendor,
                   const std::string& parent) {
  auto in_place = driver.InPlace(parent);
  if (!in_place.ok() || in_place->empty()) return;
  std::vector<uint32_t> owned;
  for (uint32_t job : JobsOnRecord(ctx.run_dir)) {
    auto slices = JobSlices(ctx.run_dir, job);
    if (!slices.ok()) return;
    for (const HardwareSlice& s : *slices)
      if (s.vendor == vendor && s.parent == parent) owned.push_back(s.instance);
  }
  for (const HardwareSlice& s : *in_place)
    if (std::find(owned.begin(), owned.end(), s.instance) == owned.end()) (void)driver.Destroy(s);
}

// The id the vendor's slicing API names the parent device by.
std::string SliceParent(const std::string& vendor, const AllocatedDevice& d, const DeviceLimit& limit) {
  return vendor == "nvidia" ? d.uuid : limit.uuid;
}

Status CutSlices(const NodeContext& ctx, const JobAllocation& job, JobLimits* limits) {
  std::map<std::string, std::unique_ptr<SliceDriver>> drivers;
  std::vector<HardwareSlice> made;
  for (size_t i = 0; i < job.devices.size(); ++i) {
    const AllocatedDevice& d = job.devices[i];
    DeviceLimit& limit = limits->devices[i];
    const ChipModel* model = ctx.catalog.FindById(d.model);
    if (!model || model->profiles.empty() || !ctx.config.SlicesModel(d.model, d.type)) continue;
    const SliceProfile* profile = ProfileForShares(*model, d.shares, job.shares_per_device);
    // A whole device no profile holds (vNPU has no template of a whole
    // NPU) is the device itself, unsliced, as slurmctld placed it.
    if (!profile && d.shares == job.shares_per_device) continue;
    if (!profile)
      return Status::Error("no " + model->id + " slice profile holds " + std::to_string(d.shares) +
                           " of " + std::to_string(job.shares_per_device) +
                           " shares; add one to " + model->source +
                           " or remove the model from HardwareSlicing=");
    // Where slurmctld put the job, when it knows the model's positions and
    // the job's shares are the lowest of one (else the driver chooses).
    std::optional<uint32_t> start;
    if (model->slice_slots && d.first_share) {
      auto geometry = SliceGeometry::For(*model, job.shares_per_device);
      if (geometry.ok())
        if (auto at = geometry->PlacementOf(*d.first_share, d.shares)) start = at->start;
    }
    const std::string parent = SliceParent(limit.vendor, d, limit);
    if (parent.empty())
      return Status::Error("device " + d.file + " has no " + (limit.vendor == "nvidia" ? "UUID" : "id") +
                           " to slice it by; check the node's discovery (vgpuctl discover)");
    auto& driver = drivers[limit.vendor];
    if (!driver) {
      auto opened = ctx.open_slicer(limit.vendor);
      if (!opened.ok()) return Status::Error(opened.message());
      driver = std::move(opened).value();
    }
    // On record before Create returns: a prolog killed inside it leaves a
    // partial record, from which the next teardown removes what was made.
    auto record_partial = [&](const HardwareSlice& partial) {
      std::vector<HardwareSlice> with = made;
      with.push_back(partial);
      with.back().job_device = limit.index;
      return WriteSlices(ctx.run_dir, job.job_id, with);
    };
    Result<HardwareSlice> slice = Status::Error("");
    {
      SliceLock lock(ctx.run_dir, parent);
      if (!lock.ok()) return lock.status();
      RemoveOrphans(ctx, *driver, limit.vendor, parent);
      slice = driver->Create(parent, *profile, start, record_partial);
    }
    if (!slice.ok()) return Status::Error(slice.message());
    slice->job_device = limit.index;
    made.push_back(*slice);
    // The whole slice on record at once.
    Status recorded = WriteSlices(ctx.run_dir, job.job_id, made);
    if (!recorded.ok()) {
      SliceLock lock(ctx.run_dir, parent);
      driver->Destroy(*slice);
      made.pop_back();
      return recorded;
    }
    // The hardware fences compute and memory; libvgpu.so then only counts.
    // CUDA names a MIG device by its own UUID; how AscendCL names a vNPU is
    // not known here, so it is matched by position.
    limit.memory_bytes = slice->memory_bytes ? slice->memory_bytes : profile->memory_bytes;
    limit.shares = limit.shares_per_device;
    limit.uuid = limit.vendor == "nvidia" ? slice->device : "";
  }
  return Status::Ok();
}

}  // namespace

Status SetUpJob(const NodeContext& ctx, const JobAllocation& job) {
  Status st = EnsureRunDir(ctx.run_dir);
  if (!st.ok()) return st;
  st = TearDownJob(ctx, job.job_id);
  if (!st.ok()) return Status::Error("cannot clear what an earlier run of the job left: " + st.message());
  // Every job's tie, with vgpu or not: its absence then proves that this
  // program never ran for a job, and libvgpu.so fails closed there.
  if (!job.sluid.empty()) st = RecordSluidTie(ctx.run_dir, job.sluid, job.job_id);
  if (!st.ok() || job.devices.empty()) return st;
  JobLimits limits = job.Limits(ctx.catalog);
  st = CutSlices(ctx, job, &limits);
  if (st.ok()) st = CreateJobRunDir(ctx.run_dir, limits, job.uid, job.gid);
  if (!st.ok()) {
    Status undone = TearDownJob(ctx, job.job_id);
    if (!undone.ok()) return Status::Error(st.message() + "; and undoing it: " + undone.message());
  }
  return st;
}

Status TearDownJob(const NodeContext& ctx, uint32_t job_id) {
  std::string errors;
  auto note = [&errors](const std::string& e) { errors += (errors.empty() ? "" : "; ") + e; };
  auto slices = JobSlices(ctx.run_dir, job_id);
  if (!slices.ok()) {
    // An unreadable record cannot say what to destroy: keep it for the admin.
    note(slices.message());
  } else if (!slices->empty()) {
    std::map<std::string, std::unique_ptr<SliceDriver>> drivers;
    std::vector<HardwareSlice> left;
    for (const HardwareSlice& s : *slices) {
      auto& driver = drivers[s.vendor];
      if (!driver) {
        auto opened = ctx.open_slicer(s.vendor);
        if (!opened.ok()) {
          note(opened.message());
          left.push_back(s);
          continue;
        }
        driver = std::move(opened).value();
      }
      SliceLock lock(ctx.run_dir, s.parent);
      Status gone = lock.ok() ? driver->Destroy(s) : lock.status();
      if (!gone.ok()) {
        note(gone.message());
        left.push_back(s);
      }
    }
    Status kept = left.empty() ? Status::Ok() : WriteSlices(ctx.run_dir, job_id, left);
    if (!kept.ok()) note(kept.message());
  }
  if (errors.empty() && unlink(JobSlicesPath(ctx.run_dir, job_id).c_str()) != 0 && errno != ENOENT)
    note("cannot remove " + JobSlicesPath(ctx.run_dir, job_id) + ": " + std::strerror(errno));
  Status removed = RemoveJobRunDir(ctx.run_dir, job_id);
  if (!removed.ok()) note(removed.message());
  Status untied = ForgetSluidTies(ctx.run_dir, job_id);
  if (!untied.ok()) note(untied.message());
  return errors.empty() ? Status::Ok() : Status::Error(errors);
}

std::vector<uint32_t> JobsOnRecord(const std::string& run_dir) {
  std::vector<uint32_t> jobs;
  DIR* d = opendir(run_dir.c_str());
  if (!d) return jobs;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("job_", 0) != 0) continue;
    name = name.substr(4);
    const size_t dot = name.find('.');
    if (dot != std::string::npos && name.substr(dot) != ".slices") continue;
    uint64_t id = 0;
    if (ParseU64(name.substr(0, dot), UINT32_MAX, &id) && id != 0) jobs.push_back(static_cast<uint32_t>(id));
  }
  closedir(d);
  // A job without vgpu has a SLUID tie alone.
  for (uint32_t job : TiedJobs(run_dir)) jobs.push_back(job);
  std::sort(jobs.begin(), jobs.end());
  jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
  return jobs;
}

Status SweepEndedJobs(const NodeContext& ctx, uint32_t current, const std::function<int(uint32_t)>& has_ended,
                      std::vector<uint32_t>* swept) {
  std::string errors;
  for (uint32_t job : JobsOnRecord(ctx.run_dir)) {
    if (job == current || has_ended(job) != 1) continue;
    Status st = TearDownJob(ctx, job);
    if (st.ok())
      swept->push_back(job);
    else
      errors += (errors.empty() ? "" : "; ") + ("job " + std::to_string(job) + ": " + st.message());
  }
  return errors.empty() ? Status::Ok() : Status::Error(errors);
}

}  // namespace vgpu
