// `vgpuctl check`: reads a cluster's slurm.conf, the gres.conf and vgpu.conf
// beside it and the chip catalog, and reports, node by node, every mistake
// gres/vgpu would find when the node's slurmd starts (a device file named
// twice, a Type= the catalog lacks, a count other than devices x S, ...),
// before an administrator restarts anything.
//
// Then warns of what switches the limits off (enforcement_check.h).
//
// Each node's vgpu records are rebuilt as Slurm hands them to the plugin:
// the File= lines of gres.conf that apply to the node, and one file-less
// record for what slurm.conf's Gres= counts beyond them; then the plugin's
// own rules (devices/share_layout.h) judge them.
#ifndef VGPU_TOOLS_CONFIG_CHECK_H_
#define VGPU_TOOLS_CONFIG_CHECK_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace vgpu::check {

struct CheckInput {
  std::string slurm_conf;            // path; gres.conf and vgpu.conf are beside it
  std::string default_catalog_dirs;  // ChipCatalogDir when vgpu.conf sets none
  // Whether a device file exists. Device files are on the compute nodes:
  // when checking from elsewhere, say yes to every file.
  std::function<bool(const std::string&)> file_exists;
  // This host is a node (--local): its /etc (etc_dir) counts for the
  // warnings of enforcement_check.h.
  bool local = false;
  std::string etc_dir = "/etc";
};

struct CheckReport {
  std::vector<std::string> lines;  // what to print, in order
  int problems = 0;                // mistakes found (exit status 1 if any)
  int warnings = 0;                // limits switched off (enforcement_check.h); exit status unchanged
};

CheckReport CheckConfiguration(const CheckInput& in);

// The whole command: `vgpuctl check [--conf SLURM_CONF] [--local]`
// (--local: this host is the node, so its device files must exist).
// Prints the report on `out`; 0 when nothing is wrong, 1 when something is,
// 2 for bad arguments.
int RunCheck(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace vgpu::check

#endif  // VGPU_TOOLS_CONFIG_CHECK_H_
