// vgpu-epilog: Slurm's Epilog (root) on each node of a job. Reads what the
// job used (job_usage.h), tears down its run directory and hardware slices
// (job_setup.h) and what ended jobs whose epilog never ran left, and
// records the usage in the job's AdminComment. Exit 1
// only when something of the job could not be removed (Slurm then drains
// the node, so that an administrator looks); usage that cannot be recorded
// is a warning.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "admin_comment.h"
#include "job_allocation.h"
#include "ended_jobs.h"
#include "job_setup.h"
#include "job_usage.h"
#include "node_context.h"
#include "program.h"

#ifndef VGPU_DEFAULT_CATALOG_DIR
#define VGPU_DEFAULT_CATALOG_DIR "/usr/share/slurm-vgpu/chips.d"
#endif

namespace vgpu {
namespace {

// The job's record reaches the database through slurmctld's queue: a job
// that just ended may not be there for a moment.
Status RecordUsage(uint32_t job_id, const NodeUsage& usage) {
  const char* cluster = ProcessEnv("SLURM_CLUSTER_NAME");
  char err[512] = "";
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt) sleep(1);
    char* existing = nullptr;
    int rc = vgpu_admin_comment_get(job_id, cluster, &existing, err, sizeof err);
    if (rc == 0) {
      auto merged = MergeUsageComment(existing, usage);
      std::free(existing);
      if (!merged.ok()) return Status::Error(merged.message());
      rc = vgpu_admin_comment_set(job_id, cluster, merged->c_str(), err, sizeof err);
      if (rc == 0) return Status::Ok();
    }
    // Only a job not there yet is worth waiting for.
    if (rc != VGPU_COMMENT_NO_JOB) break;
  }
  return Status::Error(err);
}

int Epilog() {
  auto job = JobAllocation::FromEnvironment(ProcessEnv);
  if (!job.ok()) {
    std::fprintf(stderr, "vgpu-epilog: %s\n", OneLine(job.message()).c_str());
    return 1;
  }
  auto ctx = NodeContext::Load(SlurmConfPath(), VGPU_DEFAULT_CATALOG_DIR);
  if (!ctx.ok()) {
    std::fprintf(stderr, "vgpu-epilog: %s\n", OneLine(ctx.message()).c_str());
    return 1;
  }
  // Usage first: teardown removes the regions.
  Result<NodeUsage> usage = Result<NodeUsage>::Error("");
  if (!job->devices.empty()) {
    auto slices = JobSlices(ctx->run_dir, job->job_id);
    const char* node = ProcessEnv("SLURMD_NODENAME");
    usage = ReadNodeUsage(ctx->run_dir, *job, slices.ok() ? *slices : std::vector<HardwareSlice>(),
                          node ? node : "", std::time(nullptr));
  }
  Status torn = TearDownJob(*ctx, job->job_id);
  if (!torn.ok())
    std::fprintf(stderr, "vgpu-epilog: job %u: %s\n", job->job_id, OneLine(torn.message()).c_str());
  std::vector<uint32_t> swept;
  Status sweep = SweepEndedJobs(*ctx, job->job_id, SlurmJobEndProbe(ctx->run_dir, job->job_id), &swept);
  if (!sweep.ok()) std::fprintf(stderr, "vgpu-epilog: %s\n", OneLine(sweep.message()).c_str());
  if (usage.ok()) {
    Status recorded = RecordUsage(job->job_id, *usage);
    if (!recorded.ok())
      std::fprintf(stderr, "vgpu-epilog: job %u: usage not recorded: %s\n", job->job_id,
                   OneLine(recorded.message()).c_str());
  } else if (!job->devices.empty()) {
    std::fprintf(stderr, "vgpu-epilog: job %u: %s\n", job->job_id, OneLine(usage.message()).c_str());
  }
  return torn.ok() ? 0 : 1;
}

}  // namespace
}  // namespace vgpu

int main() { return vgpu::RunMain("vgpu-epilog", vgpu::Epilog); }
