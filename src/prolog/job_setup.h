// Setting a job up on a node before it starts (vgpu-prolog) and tearing it
// down after it ends (vgpu-epilog): the run directory with the limits file
// and usage regions, and the hardware slices.
//
// Contract: SetUpJob either succeeds or leaves nothing of the job behind;
// TearDownJob removes whatever a SetUpJob of the job made, finished or not,
// and is idempotent (twice, after a failed prolog, after a reboot that
// emptied the run directory: all fine).
#ifndef VGPU_PROLOG_JOB_SETUP_H_
#define VGPU_PROLOG_JOB_SETUP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "jobs/hardware_slice.h"
#include "jobs/job_allocation.h"
#include "node_context.h"
#include "util/status.h"

namespace vgpu {

// Makes the run directory if missing (root's, 0755), refusing one that
// someone else could write; clears what an earlier attempt of the job
// left; cuts a hardware slice per device whose model is in
// HardwareSlicing= and has profiles (the smallest profile that covers the
// job's shares); writes the job's directory with limits that match.
Status SetUpJob(const NodeContext& ctx, const JobAllocation& job);

// Destroys the job's slices (a slice that cannot be destroyed stays on
// record for the next try, and the call fails), then removes the job's
// directory and record.
Status TearDownJob(const NodeContext& ctx, uint32_t job_id);

// The jobs with a directory, a slices record or a SLUID tie under
// `run_dir`, sorted.
std::vector<uint32_t> JobsOnRecord(const std::string& run_dir);

// Tears down every job on record, `current` aside, that `has_ended` says
// has ended (1); 0 (still pending, running or completing: its own epilog
// will) and -1 (no answer) keep it. For jobs whose epilog never ran: node
// daemons and job killed together without a reboot emptying /run. `swept`
// gets the ids torn down.
Status SweepEndedJobs(const NodeContext& ctx, uint32_t current, const std::function<int(uint32_t)>& has_ended,
                      std::vector<uint32_t>* swept);


}  // namespace vgpu

#endif  // VGPU_PROLOG_JOB_SETUP_H_
