// vgpu-prolog: Slurm's Prolog (root, PrologFlags=Alloc) on each node of a
// job. Makes the job's run directory (limits file, usage regions) and its
// hardware slices (job_setup.h); ties every job's SLUID to its id
// (jobs/job_identity.h). On failure: exit 1 with one line on
// stderr, which slurmd logs; Slurm then drains the node and requeues the
// job, and nothing of the job is left on the node. Then removes what
// ended jobs whose epilog never ran left (job_setup.h, SweepEndedJobs).
#include <cstdio>

#include "ended_jobs.h"
#include "job_setup.h"
#include "jobs/job_allocation.h"
#include "node_context.h"
#include "program.h"

#ifndef VGPU_DEFAULT_CATALOG_DIR
#define VGPU_DEFAULT_CATALOG_DIR "/usr/share/slurm-vgpu/chips.d"
#endif

int main() {
  return vgpu::RunMain("vgpu-prolog", [] {
    auto job = vgpu::JobAllocation::FromEnvironment(vgpu::ProcessEnv);
    if (!job.ok()) {
      std::fprintf(stderr, "vgpu-prolog: %s\n", vgpu::OneLine(job.message()).c_str());
      return 1;
    }
    if (job->devices.empty() && job->sluid.empty()) return 0;  // no vgpu on this node
    auto ctx = vgpu::NodeContext::Load(vgpu::SlurmConfPath(), VGPU_DEFAULT_CATALOG_DIR);
    if (job->devices.empty()) {
      // Only the tie of its SLUID (job_identity.h). A job without vgpu does
      // not fail for it: without a tie libvgpu.so fails closed only in a
      // process that shows signs of vgpu.
      vgpu::Status tied = ctx.ok() ? vgpu::SetUpJob(*ctx, *job) : vgpu::Status::Error(ctx.message());
      if (!tied.ok())
        std::fprintf(stderr, "vgpu-prolog: job %u: warning: %s\n", job->job_id, vgpu::OneLine(tied.message()).c_str());
      return 0;
    }
    if (ctx.ok())  // skipped catalog files: only jobs on their models' devices fail below
      for (const std::string& p : ctx->catalog.problems())
        std::fprintf(stderr, "vgpu-prolog: chip catalog: %s\n", vgpu::OneLine(p).c_str());
    vgpu::Status st = ctx.ok() ? vgpu::SetUpJob(*ctx, *job) : vgpu::Status::Error(ctx.message());
    if (!st.ok()) {
      std::fprintf(stderr, "vgpu-prolog: job %u: %s\n", job->job_id, vgpu::OneLine(st.message()).c_str());
      return 1;
    }
    // What jobs that died without their epilog left here (best effort).
    std::vector<uint32_t> swept;
    const char* node = vgpu::ProcessEnv("SLURMD_NODENAME");
    const vgpu::SweepSchedule schedule = vgpu::LoadSweepSchedule(ctx->run_dir, ctx->config.sweep_interval_s);
    vgpu::SweepEndedJobs(*ctx, job->job_id,
                         vgpu::SlurmJobEndProbe(ctx->run_dir, job->job_id, node ? node : "", schedule), &swept);
    return 0;
  });
}
