// `vgpuctl discover`: on a node, what NVML, DCMI or ROCm SMI (or the
// simulated inventory vgpu.conf names) find, written as the gres.conf
// lines and the slurm.conf Gres= that give it to gres/vgpu, with warnings
// for what would go wrong (manual: doc/vgpuctl.1).
#ifndef VGPU_TOOLS_DISCOVER_COMMAND_H_
#define VGPU_TOOLS_DISCOVER_COMMAND_H_

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "config/vgpu_config.h"
#include "devices/device.h"
#include "devices/discovery.h"
#include "util/status.h"

namespace vgpu::discover {

extern const char kDiscoverUsage[];  // the text of `vgpuctl discover --help`

struct DiscoverOptions {
  std::string slurm_conf;  // vgpu.conf is beside it
  std::string node_name;   // NodeName= of the lines; %n of Inventory=
  std::string inventory;   // instead of vgpu.conf's Inventory= ("" = as it says)
  bool help = false;
};

// The arguments after "discover"; errors name the option and the fix.
// `defaults` gives slurm_conf and node_name.
Result<DiscoverOptions> ParseDiscoverArgs(const std::vector<std::string>& args, const DiscoverOptions& defaults);

// What the suggestion needs of the host, beside the devices; tests swap it.
struct HostFacts {
  std::function<bool(const std::string&)> file_exists;
  // Whether MIG mode is on for an NVIDIA device; nullopt when unknown (not
  // an NVIDIA device, no MIG, NVML not answering).
  std::function<std::optional<bool>(const Device&)> mig_mode;
};

struct Suggestion {
  std::vector<std::string> gres_conf;  // "NodeName=n1 Name=vgpu Type=nvidia File=/dev/nvidia[0-3]"
  std::string node_gres;               // "vgpu:nvidia:400,vgpu:dcu:400" for slurm.conf's Gres=
  // The models HardwareSlicing slices here ("nvidia-a100-80g"), for the
  // node's slurm.conf Features: slurmctld counts their devices in slices
  // only where it knows the model (slice_geometry.h, SlicedModels).
  std::string features;
  std::vector<std::string> warnings;   // each names the device, the problem and the fix
};

// The configuration for `devices` (in discovery order): one gres.conf line
// per type, Type= the catalog's family, or each model's id where models
// of one family are mixed on the node (with a warning: a job asking for
// the family would get either).
Suggestion Suggest(const std::vector<Device>& devices, const std::string& node, const VgpuConfig& config,
                   const HostFacts& host);

// MIG mode of an NVIDIA device, asked of NVML through `env` (the
// HostFacts::mig_mode of the command).
std::optional<bool> NvmlMigMode(DiscoveryEnv& env, const Device& device,
                                const std::string& library = "libnvidia-ml.so.1");

// The command: exit status 0 when devices were found and nothing is wrong,
// 1 with warnings or no device, 2 for bad arguments.
int RunDiscover(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace vgpu::discover

#endif  // VGPU_TOOLS_DISCOVER_COMMAND_H_
