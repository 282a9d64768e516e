// `vgpuctl status`: the pool as slurmctld holds it now, per type and per
// node and device (manual: doc/vgpuctl.1).
#ifndef VGPU_TOOLS_STATUS_COMMAND_H_
#define VGPU_TOOLS_STATUS_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "config/vgpu_config.h"
#include "devices/chip_catalog.h"
#include "pool_status.h"
#include "util/status.h"

namespace vgpu::status {

extern const char kStatusUsage[];  // the text of `vgpuctl status --help`

struct StatusOptions {
  bool json = false;
  std::string svg;                   // "-" = standard output
  std::string type;                  // only devices of this type
  std::vector<std::string> nodes;    // only these nodes (hostlist expanded)
  std::string partition;             // only nodes of this partition
  std::string slurm_conf;            // vgpu.conf is beside it
  std::string nodes_input, jobs_input;  // saved --json outputs instead of asking Slurm
  bool help = false;
};

// The arguments after "status"; errors name the option and the fix.
Result<StatusOptions> ParseStatusArgs(const std::vector<std::string>& args);

// The pool without what the filters leave out. With --node or --partition
// the per-type totals count the nodes kept; pending demand stays the
// cluster's (a pending job has no node yet).
PoolStatus Filter(PoolStatus pool, const StatusOptions& o);

// Catalog models by the Type= a gres.conf line may give: a model id, or a
// chip family (gres_type) that names one model only, or several of one
// memory size (then the model is "").
ModelTable ModelsOf(const ChipCatalog& catalog);

// Where vgpu.conf names an Inventory= file that this host can read (a
// simulated or site-kept inventory on shared storage), each device's model,
// memory and local CPUs from it: the k-th device of a type on a node is
// the inventory's k-th device of that type. Nodes without one keep what
// ModelsOf gave.
void AddInventoryFacts(PoolStatus* pool, const VgpuConfig& config, const ChipCatalog& catalog);

// The pool as slurmctld holds it now (`nodes_input`/`jobs_input`: saved
// outputs instead, "" to ask Slurm), with the catalog's models and the
// inventory's facts, for the cluster whose slurm.conf is `slurm_conf`.
Result<PoolStatus> LoadPool(const std::string& slurm_conf, const std::string& nodes_input = "",
                            const std::string& jobs_input = "");

// The command; exit status 0 done, 1 Slurm's commands or inputs failing or
// the SVG not written, 2 bad arguments.
int RunStatus(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace vgpu::status

#endif  // VGPU_TOOLS_STATUS_COMMAND_H_
