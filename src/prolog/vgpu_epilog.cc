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
#include <memory>
#include <string>
#include <vector>

#include "admin_comment.h"
#include "ended_jobs.h"
#include "job_setup.h"
#include "job_usage.h"
#include "jobs/job_allocation.h"
#include "node_context.h"
#include "pending_usage.h"
#include "program.h"

#ifndef VGPU_PENDING_USAGE_DIR
#define VGPU_PENDING_USAGE_DIR "/var/lib/slurm-vgpu/pending-usage"
#endif
#ifndef VGPU_DEFAULT_CATALOG_DIR
#define VGPU_DEFAULT_CATALOG_DIR "/usr/share/slurm-vgpu/chips.d"
#endif

namespace vgpu {
namespace {

// The AdminComment in the accounting database (admin_comment.h).
class DatabaseComment : public CommentStore {
 public:
  DatabaseComment(uint32_t job_id, const char* cluster) : job_id_(job_id), cluster_(cluster) {}
  int Get(std::string* comment, std::string* why) override {
    char err[512] = "";
    char* got = nullptr;
    const int rc = vgpu_admin_comment_get(job_id_, cluster_, &got, err, sizeof err);
    if (got) *comment = got;
    std::free(got);
    *why = err;
    return Code(rc);
  }
  int Set(const std::string& comment, std::string* why) override {
    char err[512] = "";
    const int rc = vgpu_admin_comment_set(job_id_, cluster_, comment.c_str(), err, sizeof err);
    *why = err;
    return Code(rc);
  }

 private:
  static int Code(int rc) { return rc == 0 ? kOk : rc == VGPU_COMMENT_NO_JOB ? kNoJob : kError; }

  uint32_t job_id_;
  const char* cluster_;
};

Status RecordJobUsage(uint32_t job_id, const NodeUsage& usage, UsageRetry* retry) {
  DatabaseComment store(job_id, ProcessEnv("SLURM_CLUSTER_NAME"));
  int rank = 0, nodes = 1;
  vgpu_node_rank(ProcessEnv("SLURM_NODELIST"), usage.node.c_str(), &rank, &nodes);
  return RecordUsage(store, usage, rank, nodes, [](int ms) { usleep(static_cast<useconds_t>(ms) * 1000); },
                     retry);
}

// Records this job's usage; when the database does not answer, keeps it
// (pending_usage.h). Once the database has answered, records what earlier
// epilogs on this node kept: also when it answered without this job, whose
// record can trail a backlog in slurmctld's queue after an outage while
// the records kept during the outage are already there.
void RecordOrKeepUsage(uint32_t job_id, const Result<NodeUsage>& usage) {
  const PendingUsage pending(VGPU_PENDING_USAGE_DIR);
  if (usage.ok()) {
    UsageRetry retry = UsageRetry::kNever;
    Status recorded = RecordJobUsage(job_id, *usage, &retry);
    if (!recorded.ok() && retry == UsageRetry::kNever) {
      std::fprintf(stderr, "vgpu-epilog: job %u: usage not recorded: %s\n", job_id, OneLine(recorded.message()).c_str());
    } else if (!recorded.ok()) {
      auto kept = pending.Keep(job_id, usage->node, NodeComment(*usage));
      if (kept.ok())
        std::fprintf(stderr,
                     "vgpu-epilog: job %u: usage not recorded yet (%s); kept in %s, a later vgpu-epilog on this "
                     "node records it once the accounting database answers\n",
                     job_id, OneLine(recorded.message()).c_str(), kept->c_str());
      else
        std::fprintf(stderr, "vgpu-epilog: job %u: usage not recorded (%s) and not kept: %s\n", job_id,
                     OneLine(recorded.message()).c_str(), OneLine(kept.message()).c_str());
      if (retry == UsageRetry::kDatabaseAway) return;  // what is kept waits too
    }
  }
  const char* cluster = ProcessEnv("SLURM_CLUSTER_NAME");
  std::vector<std::string> log;
  pending.Flush([cluster](uint32_t job) { return std::make_unique<DatabaseComment>(job, cluster); },
                std::time(nullptr), &log);
  for (const std::string& line : log) std::fprintf(stderr, "vgpu-epilog: %s\n", OneLine(line).c_str());
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
  const char* node = ProcessEnv("SLURMD_NODENAME");
  if (!job->devices.empty()) {
    auto slices = JobSlices(ctx->run_dir, job->job_id);
    usage = ReadNodeUsage(ctx->run_dir, *job, slices.ok() ? *slices : std::vector<HardwareSlice>(),
                          node ? node : "", std::time(nullptr));
  }
  Status torn = TearDownJob(*ctx, job->job_id);
  if (!torn.ok())
    std::fprintf(stderr, "vgpu-epilog: job %u: %s\n", job->job_id, OneLine(torn.message()).c_str());
  std::vector<uint32_t> swept;
  const SweepSchedule schedule = LoadSweepSchedule(ctx->run_dir, ctx->config.sweep_interval_s);
  Status sweep = SweepEndedJobs(*ctx, job->job_id,
                                SlurmJobEndProbe(ctx->run_dir, job->job_id, node ? node : "", schedule), &swept);
  if (!sweep.ok()) std::fprintf(stderr, "vgpu-epilog: %s\n", OneLine(sweep.message()).c_str());
  if (!usage.ok() && !job->devices.empty())
    std::fprintf(stderr, "vgpu-epilog: job %u: %s\n", job->job_id, OneLine(usage.message()).c_str());
  RecordOrKeepUsage(job->job_id, usage);
  return torn.ok() ? 0 : 1;
}

}  // namespace
}  // namespace vgpu

int main() { return vgpu::RunMain("vgpu-epilog", vgpu::Epilog); }
