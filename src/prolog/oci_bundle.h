// What vgpu-oci-runtime (the OCI runtime wrapper oci.conf names for
// `srun --container`) does to the bundle's config.json before the real
// runtime (runc, crun) starts the container of a vgpu job.
//
// Slurm writes that config.json from the user's bundle and the step's
// environment before TaskProlog and SPANK apply (22.05), and the image has
// no libvgpu.so: without this the container sees the whole device. After
// InjectVgpu the container's processes load libvgpu.so from the host (bound
// read-only at its host path, listed in LD_PRELOAD and in a bound
// /etc/ld.so.preload, so a clean environment does not drop it), see the
// node's run directory (the job's root-owned limits; libvgpu.so trusts it
// only as the host root's, jobs/host_trust.h), and stay in the job's cgroup
// (a cgroupsPath of the bundle's own, which a root job could point
// anywhere, is replaced by one below the job's: OciCgroupsPath), shown to
// them (no cgroup namespace: a process whose
// environment was cleared still proves its job by its cgroup).
#ifndef VGPU_PROLOG_OCI_BUNDLE_H_
#define VGPU_PROLOG_OCI_BUNDLE_H_

#include <json/json.h>

#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace vgpu {

struct OciInjection {
  std::string run_dir;       // the node's run directory (/run/slurm-vgpu)
  std::string interposer;    // libvgpu.so's path on the host
  std::string preload_list;  // a host file whose text names the interposer
  // Variables to set in the container (vgpu-taskprolog's exports: LD_PRELOAD
  // with the interposer first, slices' visibility variables), in order;
  // each replaces the bundle's own.
  std::vector<std::pair<std::string, std::string>> env;
  // The container's cgroup (linux.cgroupsPath), below the job's: "" drops
  // the bundle's own and lets the runtime choose (a rootless one stays in
  // its own, the job's; a rootful runc would make one at the root).
  std::string cgroups_path;
};

// Edits an OCI runtime configuration (config.json as parsed) in place. An
// error when it is not one (no "process" object, "mounts" or
// "process.env" of the wrong type), naming what is wrong.
Status InjectVgpu(const OciInjection& injection, Json::Value* config);

// The cgroupsPath for a container of the process whose cgroup text is
// `proc_cgroup_text`: its own cgroup in the hierarchy the runtime will use
// (the "0::" line when `unified` says /sys/fs/cgroup is cgroup v2 alone;
// on a host with v1 hierarchies the devices controller's line, where
// Slurm's cgroup/v1 fences devices, or the "0::" line where that is "/":
// Slurm's cgroup/v2 on a hybrid host) plus "/" `leaf`; "" when the job's
// cgroup is not found.
std::string OciCgroupsPath(const std::string& proc_cgroup_text, bool unified, const std::string& leaf);

// The value of "-b DIR", "--bundle DIR" or "--bundle=DIR" among a runtime
// command's arguments; "" when there is none (state, kill, delete).
std::string BundleArgument(const std::vector<std::string>& args);

// The environment of config.json's process ("NAME=VALUE" items) as a
// lookup, for TaskExportsForJob: the value is copied into *storage, so the
// pointer lasts until the next lookup with the same storage.
const char* OciEnvLookup(const Json::Value& config, const char* name, std::string* storage);

}  // namespace vgpu

#endif  // VGPU_PROLOG_OCI_BUNDLE_H_
