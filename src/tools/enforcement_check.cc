#include "enforcement_check.h"

#include <dirent.h>

#include <sstream>

#include "conf_text.h"
#include "config/vgpu_config.h"
#include "util/read_file.h"
#include "util/text.h"

namespace vgpu::check {
namespace {

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// Whether a comma-separated value of slurm.conf lists `item` (case-insensitive).
bool Lists(const std::string& value, const std::string& item) {
  const std::string list = "," + Lower(value) + ",";
  return Has(list, "," + Lower(item) + ",");
}

// Whether the program `path` (a slurm.conf Prolog= or TaskProlog=) runs
// `program`: it is that program, or a script that names it. 1 yes, 0 no,
// -1 cannot tell from here (not readable on this host).
int Runs(const std::string& path, const std::string& program) {
  const size_t slash = path.rfind('/');
  if (path.substr(slash == std::string::npos ? 0 : slash + 1) == program) return 1;
  auto text = ReadTextFile(path);
  if (!text.ok()) return -1;
  return Has(*text, program) ? 1 : 0;
}

// The text of a file and of every file in a directory beside it named
// NAME.d (plugstack.conf.d, pam.d): "" for what is missing.
std::string TextOf(const std::string& file) {
  auto text = ReadTextFile(file);
  return text.ok() ? *text : "";
}
// `text` without its comment lines (plugstack.conf, PAM: "#" first).
std::string Uncommented(const std::string& text) {
  std::string kept;
  for (const std::string& line : ConfLines(text))
    if (Trim(line).rfind('#', 0) != 0) kept += line + "\n";
  return kept;
}

std::string TextOfDirectory(const std::string& dir) {
  std::string all;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') all += TextOf(dir + "/" + e->d_name) + "\n";
    closedir(d);
  }
  return all;
}

}  // namespace

EnforcementFindings CheckEnforcement(const EnforcementInput& in) {
  EnforcementFindings found;
  const std::string& conf = in.slurm_conf_text;
  const std::string cgroup_conf = TextOf(BesideSlurmConf(in.slurm_conf, "cgroup.conf"));

  // Device fencing: Slurm's task/cgroup with ConstrainDevices=yes.
  if (!Lists(ConfValue(conf, "taskplugin"), "task/cgroup"))
    found.warnings.push_back(
        "devices are not fenced: TaskPlugin= does not list task/cgroup, so a job can open every device file of its "
        "node, other jobs' devices included; set TaskPlugin=task/cgroup,task/affinity and ConstrainDevices=yes in "
        "cgroup.conf");
  else if (Lower(ConfValue(cgroup_conf, "constraindevices")) != "yes")
    found.warnings.push_back(
        "devices are not fenced: cgroup.conf does not set ConstrainDevices=yes, so a job can open every device file "
        "of its node, other jobs' devices included; set ConstrainDevices=yes");

  // vgpu-prolog makes each job's limits and, on Slurm 26.05's cgroup/v2,
  // ties the job's SLUID (its cgroup's name) to its id.
  const std::string plugin = Lower(ConfValue(cgroup_conf, "cgroupplugin"));
  const bool sluid_cgroups = plugin != "cgroup/v1" && Lower(ConfValue(cgroup_conf, "cgroupjobidpaths")) != "yes";
  const std::string sluid_why =
      sluid_cgroups ? " On Slurm 26.05 with cgroup/v2 (CgroupPlugin=" + (plugin.empty() ? "autodetect" : plugin) +
                          ", CgroupJobIdPaths=no) job cgroups are named by SLUID, and only vgpu-prolog ties them to "
                          "their jobs: without it libvgpu.so cannot prove a job."
                    : "";
  const std::string prolog = ConfValue(conf, "prolog");
  // Prolog= may list several programs.
  bool prolog_runs = false;
  std::string unreadable;
  std::istringstream programs(prolog);
  for (std::string one; std::getline(programs, one, ',');) {
    const int r = Runs(Trim(one), "vgpu-prolog");
    if (r == 1) prolog_runs = true;
    if (r == -1) unreadable = Trim(one);
  }
  if (prolog.empty())
    found.warnings.push_back(
        "Prolog= is not set: vgpu-prolog never writes a job's limits, so the processes of vgpu jobs fail closed." +
        sluid_why + " Set Prolog=<sbindir>/vgpu-prolog and PrologFlags=Alloc");
  else if (!prolog_runs && unreadable.empty())
    found.warnings.push_back("Prolog=" + prolog +
                             " does not run vgpu-prolog: no job's limits are written, so the processes of vgpu "
                             "jobs fail closed." +
                             sluid_why + " Run vgpu-prolog from it, or set Prolog=<sbindir>/vgpu-prolog");
  else if (!prolog_runs)
    found.notes.push_back("cannot read Prolog=" + unreadable +
                          " on this host: make sure it runs vgpu-prolog on every node (vgpuctl check --local there)");

  // What loads libvgpu.so into a job's processes: vgpu-taskprolog
  // (LD_PRELOAD), spank_vgpu.so, or the node's /etc/ld.so.preload.
  const std::string plugstack_path = BesideSlurmConf(in.slurm_conf, "plugstack.conf");
  const bool spank = Has(Uncommented(TextOf(plugstack_path) + TextOfDirectory(plugstack_path + ".d")), "spank_vgpu");
  const std::string task_prolog = ConfValue(conf, "taskprolog");
  const bool task_env = !task_prolog.empty() && Runs(task_prolog, "vgpu-taskprolog") == 1;
  const bool system_preload = in.local && Has(TextOf(in.etc_dir + "/ld.so.preload"), "libvgpu.so");
  if (!task_env && !spank && !system_preload) {
    const std::string what =
        "nothing loads libvgpu.so into jobs: TaskProlog= does not run vgpu-taskprolog and plugstack.conf does not "
        "load spank_vgpu.so";
    if (in.local)
      found.warnings.push_back(what + ", and " + in.etc_dir +
                               "/ld.so.preload does not list libvgpu.so: vgpu jobs use their devices unheld; set "
                               "TaskProlog=<sbindir>/vgpu-taskprolog, or list libvgpu.so in /etc/ld.so.preload");
    else
      found.notes.push_back(what + ": unless each node's /etc/ld.so.preload lists libvgpu.so, vgpu jobs use their "
                                   "devices unheld (vgpuctl check --local on a node says)");
  }

  // Slurm's own containers: the bundle's config.json is written before
  // TaskProlog and SPANK apply, and the image has no libvgpu.so.
  // vgpu-oci-runtime in front of the runtime brings them in.
  const std::string oci = TextOf(BesideSlurmConf(in.slurm_conf, "oci.conf"));
  const std::string starts = ConfValue(oci, "runtimerun") + " " + ConfValue(oci, "runtimecreate");
  if (Trim(starts) != "" && !Has(starts, "vgpu-oci-runtime"))
    found.warnings.push_back(
        "oci.conf starts containers without vgpu-oci-runtime: a job started with srun --container runs in an OCI "
        "bundle without libvgpu.so and the run directory, so it is fenced to its devices but not held to its memory "
        "quota or share; put <sbindir>/vgpu-oci-runtime in front of the runtime in RunTimeRun= (or "
        "RunTimeCreate=), vgpu-oci-runtime(8)");

  // Adopted ssh sessions (pam_slurm_adopt, PrologFlags=Contain) get no
  // TaskProlog, SPANK or LD_PRELOAD: only /etc/ld.so.preload reaches them.
  if (in.local) {
    if (Has(Uncommented(TextOfDirectory(in.etc_dir + "/pam.d")), "pam_slurm_adopt") &&
        !Has(TextOf(in.etc_dir + "/ld.so.preload"), "libvgpu.so"))
      found.warnings.push_back(
          "this node's PAM adopts ssh sessions into jobs (pam_slurm_adopt), which get no TaskProlog, SPANK or "
          "LD_PRELOAD: only " + in.etc_dir + "/ld.so.preload could hold them to their job's limits, and it does not "
          "list libvgpu.so, so a user who logs in to a node of a vgpu job uses its devices unheld; list "
          "libvgpu.so in /etc/ld.so.preload");
  } else if (Lists(ConfValue(conf, "prologflags"), "contain")) {
    found.notes.push_back(
        "PrologFlags=Contain: where nodes adopt ssh sessions into jobs (pam_slurm_adopt), only /etc/ld.so.preload "
        "holds them to their job's limits; run vgpuctl check --local on each node");
  }
  return found;
}

}  // namespace vgpu::check
