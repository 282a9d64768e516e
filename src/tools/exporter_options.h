// vgpu-exporter's command line (manual: doc/vgpu-exporter.8).
#ifndef VGPU_TOOLS_EXPORTER_OPTIONS_H_
#define VGPU_TOOLS_EXPORTER_OPTIONS_H_

#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu::exporter {

extern const char kExporterUsage[];  // the text of --help

struct ExporterOptions {
  std::string listen = "9741";  // civetweb's listening_ports syntax: [ADDR:]PORT
  bool pool = true;             // ask slurmctld (run one such exporter per cluster)
  bool node = true;             // read this node's jobs' usage regions
  std::string run_dir;          // vgpu-prolog's run directory
  std::string node_name;        // this node's name in Slurm
  std::string slurm_conf;       // vgpu.conf is beside it
  int interval_s = 10;          // a collection is reused for this long
  bool allow_root = false;
  bool help = false;
};

// The arguments after the program's name; errors name the option and the
// fix. `defaults` gives run_dir, node_name and slurm_conf.
Result<ExporterOptions> ParseExporterArgs(const std::vector<std::string>& args, const ExporterOptions& defaults);

}  // namespace vgpu::exporter

#endif  // VGPU_TOOLS_EXPORTER_OPTIONS_H_
