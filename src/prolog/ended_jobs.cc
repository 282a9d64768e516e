#include "ended_jobs.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "devices/file_range.h"
#include "job_setup.h"
#include "jobs/job_identity.h"
#include "util/read_file.h"
#include "util/run_command.h"
#include "util/text.h"

namespace vgpu {

std::set<uint32_t> JobsWithProcesses(const std::string& proc) {
  std::set<uint32_t> jobs;
  DIR* d = opendir(proc.c_str());
  if (!d) return jobs;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    auto text = ReadTextFile(proc + "/" + e->d_name + "/cgroup");
    if (!text.ok()) continue;  // gone meanwhile
    if (uint32_t job = JobIdFromCgroup(*text)) jobs.insert(job);
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

std::function<int(uint32_t)> SlurmJobEndProbe(const std::string& run_dir, uint32_t current,
                                              const std::string& this_node) {
  // Computed once, at the first question: by then the sweep is under way.
  auto answers = std::make_shared<std::map<uint32_t, int>>();
  auto asked = std::make_shared<bool>(false);
  return [run_dir, current, this_node, answers, asked](uint32_t job) {
    if (!*asked) {
      *asked = true;
      const std::set<uint32_t> alive = JobsWithProcesses();
      std::vector<uint32_t> unknown;
      for (uint32_t j : JobsOnRecord(run_dir)) {
        if (j == current || alive.count(j))
          (*answers)[j] = 0;
        else
          unknown.push_back(j);
      }
      if (!unknown.empty()) {
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
    return it == answers->end() ? -1 : it->second;
  };
}

}  // namespace vgpu
