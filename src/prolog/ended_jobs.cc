#include "ended_jobs.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <sstream>

#include "devices/file_range.h"
#include "job_setup.h"
#include "jobs/hardware_slice.h"
#include "jobs/job_identity.h"
#include "jobs/job_limits.h"
#include "util/read_file.h"
#include "util/run_command.h"
#include "util/text.h"

namespace vgpu {

std::set<uint32_t> JobsWithProcesses(const std::string& proc, const std::string& run_dir) {
  std::set<uint32_t> jobs;
  DIR* d = opendir(proc.c_str());
  if (!d) return jobs;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    auto text = ReadTextFile(proc + "/" + e->d_name + "/cgroup");
    if (!text.ok()) continue;  // gone meanwhile
    if (uint32_t job = ResolveProcessJob(*text, run_dir, UserNamespace::kHost).job_id) jobs.insert(job);
  }
  closedir(d);
  return jobs;
}

#ifndef VGPU_SLURM_BINDIR
#define VGPU_SLURM_BINDIR "/usr/bin"
#endif

namespace {

// The squeue of the Slurm this program was built against (its commands must
// match the controller's release: a Slurm built into /opt/slurm beside
// Debian's /usr/bin/squeue), else the first on PATH. The Prolog's PATH is
// whatever slurmd gives it, often none.
std::string Squeue() {
  const std::string built = std::string(VGPU_SLURM_BINDIR) + "/squeue";
  if (IsExecutableFile(built)) return built;
  const char* path = std::getenv("PATH");
  std::string found = FindOnPath("squeue", path && *path ? path : "/usr/bin:/usr/local/bin");
  return found.empty() ? built : found;
}

}  // namespace

std::map<uint32_t, int> EndedFromSqueue(const std::string& squeue_out, const std::vector<uint32_t>& asked,
                                        const std::string& this_node) {
  static const std::set<std::string> kFinal = {"COMPLETED", "CANCELLED", "FAILED",   "TIMEOUT",
                                               "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
                                               "OUT_OF_MEMORY"};
  static const std::set<std::string> kOnNodes = {"RUNNING", "SUSPENDED", "CONFIGURING"};
  std::map<uint32_t, int> ended;
  for (uint32_t job : asked) ended[job] = 1;
  std::istringstream in(squeue_out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string id, state, nodes;
    uint64_t job = 0;
    if (!(words >> id >> state) || !ParseU64(id, UINT32_MAX, &job)) continue;
    words >> nodes;
    auto it = ended.find(static_cast<uint32_t>(job));
    if (it == ended.end()) continue;
    it->second = kFinal.count(state) ? 1 : 0;
    if (it->second == 0 && kOnNodes.count(state) && !this_node.empty() && !nodes.empty()) {
      // A node list is a hostlist, the syntax of gres.conf's File=.
      auto names = ExpandFileRange(nodes);
      if (names.ok() && std::find(names->begin(), names->end(), this_node) == names->end()) it->second = 1;
    }
  }
  return ended;
}

std::string SweepStampPath(const std::string& run_dir) { return run_dir + "/.sweep-asked"; }

namespace {

int64_t MtimeOf(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtime) : -1;
}

// /proc/PID/stat: the name (between the first '(' and the last ')', which
// may hold spaces), the parent (field 4) and the start time in clock ticks
// after boot (field 22).
bool ReadStat(const std::string& proc, int pid, std::string* name, int* ppid, uint64_t* start_ticks) {
  auto text = ReadTextFile(proc + "/" + std::to_string(pid) + "/stat");
  if (!text.ok()) return false;
  const size_t open = text->find('('), close = text->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  *name = text->substr(open + 1, close - open - 1);
  std::istringstream rest(text->substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 4) *ppid = std::atoi(field.c_str());
    if (i == 22) return ParseU64(field, UINT64_MAX, start_ticks);
  }
  return false;
}

}  // namespace

int64_t AncestorStartTime(const std::string& proc, int pid, const std::string& name) {
  auto stat = ReadTextFile(proc + "/stat");
  if (!stat.ok()) return -1;
  const size_t at = stat->find("\nbtime ");
  if (at == std::string::npos) return -1;
  const int64_t boot = std::atoll(stat->c_str() + at + 7);
  const long ticks = sysconf(_SC_CLK_TCK);
  // A daemon's forked helper keeps its name: the outermost of a chain of
  // processes named `name` is the daemon itself.
  int64_t found = -1;
  for (int hops = 0; pid > 0 && hops < 64; ++hops) {
    std::string comm;
    int ppid = 0;
    uint64_t start = 0;
    if (!ReadStat(proc, pid, &comm, &ppid, &start)) break;
    if (comm != name) {
      if (found >= 0) break;
    } else {
      found = boot + static_cast<int64_t>(start / static_cast<uint64_t>(ticks > 0 ? ticks : 100));
    }
    pid = ppid;
  }
  return found;
}

int64_t JobFilesTime(const std::string& run_dir, uint32_t job) {
  int64_t oldest = -1;
  for (const std::string& path : {JobRunDir(run_dir, job), JobLimitsPath(run_dir, job),
                                  JobSlicesPath(run_dir, job)}) {
    const int64_t t = MtimeOf(path);
    if (t >= 0 && (oldest < 0 || t < oldest)) oldest = t;
  }
  return oldest;
}

SweepSchedule LoadSweepSchedule(const std::string& run_dir, int64_t interval_s, const std::string& proc) {
  SweepSchedule s;
  s.now = static_cast<int64_t>(std::time(nullptr));
  s.interval_s = interval_s;
  s.last_asked = MtimeOf(SweepStampPath(run_dir));
  s.slurmd_started = AncestorStartTime(proc, static_cast<int>(getppid()), "slurmd");
  return s;
}

std::vector<uint32_t> JobsToAsk(const std::string& run_dir, uint32_t current, const std::set<uint32_t>& alive,
                                const SweepSchedule& schedule) {
  std::vector<uint32_t> ask;
  if (!schedule.MayAsk()) return ask;
  for (uint32_t j : JobsOnRecord(run_dir))
    if (j != current && !alive.count(j) && schedule.AskAbout(JobFilesTime(run_dir, j))) ask.push_back(j);
  return ask;
}

std::function<int(uint32_t)> SlurmJobEndProbe(const std::string& run_dir, uint32_t current,
                                              const std::string& this_node, const SweepSchedule& schedule) {
  // Computed once, at the first question: by then the sweep is under way.
  auto answers = std::make_shared<std::map<uint32_t, int>>();
  auto asked = std::make_shared<bool>(false);
  return [run_dir, current, this_node, schedule, answers, asked](uint32_t job) {
    if (!*asked) {
      *asked = true;
      // The /proc scan only when the schedule lets this sweep ask at all:
      // most prologs and epilogs of a busy node do not.
      const std::vector<uint32_t> unknown =
          schedule.MayAsk() ? JobsToAsk(run_dir, current, JobsWithProcesses("/proc", run_dir), schedule) : std::vector<uint32_t>();
      if (!unknown.empty()) {
        // Renewed before asking: prologs starting meanwhile do not ask too.
        (void)WriteFileAtomically(SweepStampPath(run_dir), "", 0644);
        const std::string squeue = Squeue();
        std::string list = std::to_string(current);
        for (uint32_t j : unknown) list += "," + std::to_string(j);
        auto ran = RunCommand({squeue, "-h", "-t", "all", "-o", "%A %T %N", "-j", list});
        if (ran.ok() && ran->exit_status == 0) {
          for (const auto& [j, e] : EndedFromSqueue(ran->out, unknown, this_node)) (*answers)[j] = e;
        } else {
          for (uint32_t j : unknown) (*answers)[j] = -1;
        }
      }
    }
    auto it = answers->find(job);
    return it == answers->end() ? 0 : it->second;
  };
}

}  // namespace vgpu
