// vgpu-exporter: Prometheus metrics and the pool map of slurm-vgpu
// (doc/vgpu-exporter.8). Runs until SIGTERM or SIGINT.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_args.h"
#include "exporter_options.h"
#include "exporter_server.h"
#include "status_command.h"
#include "util/text.h"

namespace {

int Run(int argc, char** argv) {
  using namespace vgpu::exporter;
  ExporterOptions defaults;
  defaults.run_dir = VGPU_RUN_DIR;
  defaults.node_name = vgpu::ShortHostName();
  const char* conf = std::getenv("SLURM_CONF");
  defaults.slurm_conf = conf && *conf ? conf : VGPU_SLURM_CONF;
  auto options = ParseExporterArgs(std::vector<std::string>(argv + 1, argv + argc), defaults);
  if (!options.ok()) {
    std::fprintf(stderr, "vgpu-exporter: %s\n", options.message().c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(kExporterUsage, stdout);
    return 0;
  }
  if (geteuid() == 0 && !options->allow_root) {
    std::fprintf(stderr,
                 "vgpu-exporter: refusing to run as root: run it as an unprivileged user with "
                 "CAP_DAC_READ_SEARCH (the systemd unit does; see vgpu-exporter(8)), or pass --allow-root\n");
    return 2;
  }
  // The signals are taken with sigwait below, in this thread only: the
  // server's threads, started after the mask, inherit it.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const std::string slurm_conf = options->slurm_conf;
  Collector collector(*options, [slurm_conf] { return vgpu::status::LoadPool(slurm_conf); });
  auto server = ExporterServer::Start(options->listen, &collector);
  if (!server.ok()) {
    std::fprintf(stderr, "vgpu-exporter: %s\n", server.message().c_str());
    return 1;
  }
  std::string ports;
  for (int p : (*server)->ports()) ports += (ports.empty() ? "" : ",") + std::to_string(p);
  std::fprintf(stderr, "vgpu-exporter: listening on %s (port %s): /metrics, /status; pool %s, node %s%s%s\n",
               options->listen.c_str(), ports.c_str(), options->pool ? "on" : "off",
               options->node ? "on (" : "off", options->node ? options->run_dir.c_str() : "",
               options->node ? ")" : "");
  int sig = 0;
  sigwait(&stop, &sig);
  std::fprintf(stderr, "vgpu-exporter: stopping (signal %d)\n", sig);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vgpu-exporter: %s\n", e.what());
    return 1;
  }
}
