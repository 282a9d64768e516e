#include "exporter_options.h"

#include <cstdlib>

#include "cli_args.h"

namespace vgpu::exporter {

const char kExporterUsage[] =
    "usage: vgpu-exporter [--listen [ADDR:]PORT] [--no-pool] [--no-node] [--run-dir DIR]\n"
    "                     [--node-name NAME] [--conf SLURM_CONF] [--interval SECONDS] [--allow-root]\n"
    "Serves Prometheus metrics of the slurm-vgpu pool at /metrics and the pool map at /status.\n"
    "  --listen [ADDR:]PORT  where to listen (default 9741, every address)\n"
    "  --no-pool             do not ask slurmctld for the pool (run one exporter per cluster with it)\n"
    "  --no-node             do not read this node's jobs' usage regions (on a host without jobs)\n"
    "  --run-dir DIR         vgpu-prolog's run directory (default " VGPU_RUN_DIR ")\n"
    "  --node-name NAME      this node's name in Slurm (default: the host name)\n"
    "  --conf PATH           the cluster's slurm.conf; vgpu.conf is beside it\n"
    "  --interval SECONDS    reuse a collection this long, 1 to 3600 (default 10): scrapes and page\n"
    "                        loads within it do not ask slurmctld again\n"
    "  --allow-root          run as root (not needed: see vgpu-exporter(8) for the unprivileged setup)\n";

Result<ExporterOptions> ParseExporterArgs(const std::vector<std::string>& args, const ExporterOptions& defaults) {
  using R = Result<ExporterOptions>;
  ExporterOptions o = defaults;
  ArgCursor arg(args);
  while (arg.Next()) {
    const std::string& a = arg.name();
    std::string value;
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--no-pool") {
      o.pool = false;
    } else if (a == "--no-node") {
      o.node = false;
    } else if (a == "--allow-root") {
      o.allow_root = true;
    } else if (a == "--listen" || a == "--run-dir" || a == "--node-name" || a == "--conf" || a == "--interval") {
      if (!arg.Value(&value)) return R::Error(a + " needs a value (see --help)");
      if (a == "--listen") {
        o.listen = value;
      } else if (a == "--run-dir") {
        o.run_dir = value;
      } else if (a == "--node-name") {
        o.node_name = value;
      } else if (a == "--conf") {
        o.slurm_conf = value;
      } else {
        char* end = nullptr;
        const long n = std::strtol(value.c_str(), &end, 10);
        if (*end || n < 1 || n > 3600)
          return R::Error("--interval " + value + " must be a whole number of seconds from 1 to 3600");
        o.interval_s = static_cast<int>(n);
      }
    } else {
      return R::Error("unknown argument \"" + arg.arg() + "\" (see --help)");
    }
  }
  if (!o.pool && !o.node) return R::Error("--no-pool and --no-node together leave nothing to export");
  return o;
}

}  // namespace vgpu::exporter
