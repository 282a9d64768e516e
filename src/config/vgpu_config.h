// vgpu.conf: the plugin's own configuration file, read from the directory of
// slurm.conf. Slurm's syntax: one Key=Value per line, keys case-insensitive,
// '#' starts a comment. A missing file means all defaults.
//
//   SharesPerDevice=100           # shares of one device (1..1024)
//   ChipCatalogDir=/usr/share/slurm-vgpu/chips.d:/etc/slurm/chips.d
//   Inventory=/etc/slurm/vgpu-inventory/%n.json   # simulated devices; %n = node name
//   PlacementPolicy=pool          # how shares are placed (see vgpu-sim(1))
//   TypePreference=nvidia,ascend  # where untyped requests go first
//   HardwareSlicing=nvidia-a100-80g,ascend  # models/types vgpu-prolog slices (MIG, vNPU)
//   JobUserNamespaces=allow       # deny: spank_vgpu.so's seccomp filter
//   SweepInterval=60              # s between a node's questions about ended jobs' files
#ifndef VGPU_CONFIG_VGPU_CONFIG_H_
#define VGPU_CONFIG_VGPU_CONFIG_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace vgpu {

struct VgpuConfig {
  static constexpr uint32_t kDefaultSharesPerDevice = 100;

  uint32_t shares_per_device = kDefaultSharesPerDevice;
  std::string chip_catalog_dirs;  // ':'-separated
  std::string inventory;          // may hold %n; empty = real discovery
  std::string placement_policy = "pool";  // a name PolicyNames() (placement.h) knows
  // Device types (as in Gres=vgpu:TYPE:N, lower case) an untyped request
  // tries in this order before any other type; empty = no preference.
  std::vector<std::string> type_preference;
  // Chip models (catalog ids) or device types whose devices vgpu-prolog
  // cuts a hardware slice (MIG, vNPU) from for each job, where the
  // catalog lists profiles; lower case; empty ("none") = software only.
  std::vector<std::string> hardware_slicing;
  // spank_vgpu.so refuses new user namespaces (unshare, clone, setns) to
  // the tasks of vgpu jobs with a seccomp filter.
  bool deny_job_user_namespaces = false;
  // The least time between two questions a node's vgpu-prolog and
  // vgpu-epilog ask slurmctld about jobs whose files are left in the run
  // directory (SweepSchedule, src/prolog/ended_jobs.h); 0: every run asks.
  uint32_t sweep_interval_s = 60;
  bool SlicesModel(const std::string& model_id, const std::string& type) const;

  // Parses `text`; `source` names the file in messages. Values not set keep
  // those of `defaults`.
  static Result<VgpuConfig> Parse(const std::string& text, const std::string& source,
                                  const VgpuConfig& defaults);
  // Reads and parses `path`; a file that does not exist gives `defaults`.
  static Result<VgpuConfig> Load(const std::string& path, const VgpuConfig& defaults);

  // The inventory path for `node_name` (%n replaced), or "".
  std::string InventoryFor(const std::string& node_name) const;
};

// The path of `file` in slurm.conf's directory, where Slurm's
// get_extra_conf_path looks for gres.conf and vgpu.conf ("." when
// `slurm_conf` names no directory).
std::string BesideSlurmConf(const std::string& slurm_conf, const std::string& file);

// vgpu.conf as a long-running daemon sees it: read again whenever the file
// changes (its inode, size or modification time), so that an edit followed
// by `scontrol reconfigure` takes effect even where Slurm does not re-init
// the plugin that reads it.
class VgpuConfigFile {
 public:
  // `defaults`: what the file does not set (all of it while it is missing).
  explicit VgpuConfigFile(std::string path, VgpuConfig defaults = VgpuConfig())
      : path_(std::move(path)), defaults_(defaults), config_(std::move(defaults)) {}

  // Reads the file again if it changed since the last call. OK: config()
  // is what it says now. An error (a mistake in the file, reported by the
  // one call that read it): config() keeps the last good one (defaults
  // before any).
  Status Refresh();
  const VgpuConfig& config() const { return config_; }
  // Counts the reads that changed config(): a holder of something built
  // from it rebuilds when this moves.
  uint64_t generation() const { return generation_; }

 private:
  std::string path_;
  VgpuConfig defaults_;
  VgpuConfig config_;
  uint64_t generation_ = 0;
  bool seen_ = false;
  struct Identity {
    uint64_t inode = 0, size = 0;
    int64_t mtime_ns = -1;
    bool operator==(const Identity& o) const {
      return inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
    }
  } identity_;
};

}  // namespace vgpu

#endif  // VGPU_CONFIG_VGPU_CONFIG_H_
