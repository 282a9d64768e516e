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

// Jobs that have a process on this host (each /proc/PID/cgroup, a SLUID
// resolved through its tie under `run_dir`: jobs/job_identity.h).
std::set<uint32_t> JobsWithProcesses(const std::string& proc, const std::string& run_dir);

// squeue's "%A %T %N" lines: job id -> 1 if its state is final (COMPLETED,
// CANCELLED, FAILED, ...; not COMPLETING, whose epilog is still to run),
// or if it runs (RUNNING, SUSPENDED, CONFIGURING) on nodes that are not
// `this_node`: after a slurmctld crash the id was handed out again, and the
// job of the files here is gone. Else 0 (also when the node list cannot be
// read, or `this_node` is empty). `asked` not listed: 1 (slurmctld does not
// know them any more).
std::map<uint32_t, int> EndedFromSqueue(const std::string& squeue_out, const std::vector<uint32_t>& asked,
                                        const std::string& this_node);

// When a node's sweep asks slurmctld (squeue) about jobs with files here,
// and about which. Every prolog and epilog asking costs slurmctld an RPC
// each; on a node with dozens of short jobs that is most of what they do,
// and what a lost job left can wait a minute. So a node asks at most once
// per `interval_s` (the last question's time is the mtime of
// SweepStampPath), and only about jobs whose files are at least that old
// (younger ones are in their prolog, or their epilog is on its way). But
// it asks at once, about every job, the first time after slurmd started:
// a slurmd killed with its jobs is when epilogs are lost. interval_s 0:
// every sweep asks about every job (SweepInterval=0 in vgpu.conf).
struct SweepSchedule {
  int64_t now = 0;
  int64_t interval_s = 60;
  int64_t last_asked = -1;      // -1: never (no stamp)
  int64_t slurmd_started = -1;  // -1: not known

  bool FirstSinceStart() const {
    return last_asked < 0 || (slurmd_started >= 0 && last_asked < slurmd_started);
  }
  bool MayAsk() const { return interval_s <= 0 || FirstSinceStart() || now - last_asked >= interval_s; }
  bool AskAbout(int64_t files_time) const {
    return interval_s <= 0 || FirstSinceStart() || now - files_time >= interval_s;
  }
};

// The stamp file whose mtime is when a sweep of `run_dir` last asked.
std::string SweepStampPath(const std::string& run_dir);

// The schedule for a sweep now: the stamp's time, and when the slurmd
// this program runs under started (AncestorStartTime of the parent for
// "slurmd", read from `proc`; a site's wrapper script between them is fine).
SweepSchedule LoadSweepSchedule(const std::string& run_dir, int64_t interval_s, const std::string& proc = "/proc");

// When the process `pid` or its nearest ancestor named `name` started
// (seconds since the epoch, from `proc`), or -1 if there is none; of a
// chain of such processes (a daemon and a child it forked), the outermost.
int64_t AncestorStartTime(const std::string& proc, int pid, const std::string& name);

// The oldest modification time of job `job`'s files in `run_dir` (its
// directory, limits file, slices record), or -1 if it has none.
int64_t JobFilesTime(const std::string& run_dir, uint32_t job);

// The jobs of `run_dir` a sweep asks Slurm about: on record, not `current`,
// without a process here (`alive`), and due by `schedule`. Empty when the
// schedule does not let it ask.
std::vector<uint32_t> JobsToAsk(const std::string& run_dir, uint32_t current, const std::set<uint32_t>& alive,
                                const SweepSchedule& schedule);

// The probe for SweepEndedJobs: a job with a process here has not ended;
// for the others one squeue call (found on PATH, else /usr/bin) decides,
// asked on the first question when `schedule` lets it (JobsToAsk; the
// stamp is renewed then). Jobs not asked about: 0 (kept for a later
// sweep); -1 for all asked when squeue cannot answer. `current`: the
// caller's job, listed too (squeue treats a single job id as an error when
// it is unknown). `this_node`: Slurm's name of this node (SLURMD_NODENAME).
std::function<int(uint32_t)> SlurmJobEndProbe(const std::string& run_dir, uint32_t current,
                                              const std::string& this_node, const SweepSchedule& schedule);

}  // namespace vgpu

#endif  // VGPU_PROLOG_ENDED_JOBS_H_
