// vgpuctl: the administrator's command of slurm-vgpu, one subcommand per
// task (manual: doc/vgpuctl.1). Each subcommand lives in the convenience
// library as `int Run<Name>(args, now, out, err)`; this file only
// dispatches.
//
// Exit status: the subcommand's (0 done, 1 failed, 2 bad arguments); 2 with
// the usage on stderr for no or an unknown subcommand; 0 for --help.
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "config_check.h"
#include "discover_command.h"
#include "report_command.h"
#include "status_command.h"

namespace {

const char kUsage[] =
    "usage: vgpuctl COMMAND [OPTIONS]\n"
    "Commands:\n"
    "  report   requested and used vgpu share-hours per user, account and type (from sacct)\n"
    "  check    every mistake in slurm.conf, gres.conf, vgpu.conf and the chip catalog, per node\n"
    "  status   the pool now: shares per type, and per node and device (table, JSON, SVG)\n"
    "  discover this node's devices as gres.conf and slurm.conf lines, with warnings\n"
    "Run `vgpuctl COMMAND --help` for a command's options.\n";

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>& args, std::time_t now, std::ostream& out, std::ostream& err);
};

const Command kCommands[] = {
    {"report", vgpu::report::RunReport},
    {"check", [](const std::vector<std::string>& args, std::time_t, std::ostream& out, std::ostream& err) {
       return vgpu::check::RunCheck(args, out, err);
     }},
    {"status", [](const std::vector<std::string>& args, std::time_t, std::ostream& out, std::ostream& err) {
       return vgpu::status::RunStatus(args, out, err);
     }},
    {"discover", [](const std::vector<std::string>& args, std::time_t, std::ostream& out, std::ostream& err) {
       return vgpu::discover::RunDiscover(args, out, err);
     }},
};

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    std::cout << kUsage;
    return 0;
  }
  for (const Command& c : kCommands)
    if (name == c.name) return c.run(std::vector<std::string>(argv + 2, argv + argc), std::time(nullptr), std::cout, std::cerr);
  std::cerr << "vgpuctl: unknown command \"" << name << "\"\n" << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc: still one line
    std::cerr << "vgpuctl: internal error: " << e.what() << std::endl;
    return 1;
  }
}
