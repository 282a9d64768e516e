// `vgpuctl check`'s warnings: what in a cluster's configuration, or a
// node's, switches the limits off without a word. Jobs then run, but
// unfenced (no device cgroup), unheld (libvgpu.so never loaded, or unable
// to prove its job), or in a place libvgpu.so does not reach (a container
// started by Slurm, an ssh session adopted into a job).
#ifndef VGPU_TOOLS_ENFORCEMENT_CHECK_H_
#define VGPU_TOOLS_ENFORCEMENT_CHECK_H_

#include <string>
#include <vector>

namespace vgpu::check {

struct EnforcementInput {
  std::string slurm_conf;    // path; cgroup.conf, oci.conf and plugstack.conf beside it
  std::string slurm_conf_text;
  // This host is a node: its own files count (etc_dir/ld.so.preload,
  // etc_dir/pam.d). Elsewhere what depends on them is only noted.
  bool local = false;
  std::string etc_dir = "/etc";  // a seam: tests give a directory of their own
};

struct EnforcementFindings {
  std::vector<std::string> warnings;  // "what is off, where, and the fix"
  std::vector<std::string> notes;     // what cannot be decided from here
};

EnforcementFindings CheckEnforcement(const EnforcementInput& in);

}  // namespace vgpu::check

#endif  // VGPU_TOOLS_ENFORCEMENT_CHECK_H_
