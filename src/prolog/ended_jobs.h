// Which jobs with files in the run directory have ended, for
// SweepEndedJobs (job_setup.h): the epilog of a job killed together with
// the node's Slurm daemons never runs, and a reboot that would empty /run
// may not come.
#ifndef VGPU_PROLOG_ENDED_JOBS_H_
#define VGPU_PROLOG_ENDED_JOBS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace vgpu {

// Jobs that have a process on this host (from each /proc/PID/cgroup).
std::set<uint32_t> JobsWithProcesses(const std::string& proc = "/proc");

// squeue's "%A %T %N" lines: job id -> 1 if its state is final (COMPLETED,
// CANCELLED, FAILED, ...; not COMPLETING, whose epilog is still to run),
// or if it runs (RUNNING, SUSPENDED, CONFIGURING) on nodes that are not
// `this_node`: after a slurmctld crash the id was handed out again, and the
// job of the files here is gone. Else 0 (also when the node list cannot be
// read, or `this_node` is empty). `asked` not listed: 1 (slurmctld does not
// know them any more).
std::map<uint32_t, int> EndedFromSqueue(const std::string& squeue_out, const std::vector<uint32_t>& asked,
                                        const std::string& this_node);

// The probe for SweepEndedJobs: a job with a process here has not ended;
// for the others one squeue call (found on PATH, else /usr/bin) decides,
// asked on the first question. -1 for all when squeue cannot answer.
// `current`: the caller's job, listed too (squeue treats a single job id
// as an error when it is unknown). `this_node`: Slurm's name of this node
// (SLURMD_NODENAME).
std::function<int(uint32_t)> SlurmJobEndProbe(const std::string& run_dir, uint32_t current,
                                              const std::string& this_node);

}  // namespace vgpu

#endif  // VGPU_PROLOG_ENDED_JOBS_H_
