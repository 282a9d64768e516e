// What the node's programs share: the calling process's environment as a
// getenv seam, slurm.conf's path, the installed paths (configure sets
// them; these defaults are the packages'), and a main that no exception
// leaves.
#ifndef VGPU_PROLOG_PROGRAM_H_
#define VGPU_PROLOG_PROGRAM_H_

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "util/text.h"

#ifndef VGPU_INTERPOSER_PATH
#define VGPU_INTERPOSER_PATH "/usr/lib/slurm-vgpu/libvgpu.so"
#endif
#ifndef VGPU_PRELOAD_LIST
#define VGPU_PRELOAD_LIST "/usr/lib/slurm-vgpu/ld.so.preload"
#endif
#ifndef VGPU_RUN_DIR
#define VGPU_RUN_DIR "/run/slurm-vgpu"
#endif

namespace vgpu {

inline const char* ProcessEnv(const char* name) { return std::getenv(name); }

inline std::string SlurmConfPath() {
  const char* conf = std::getenv("SLURM_CONF");
  return conf && *conf ? conf : "/etc/slurm/slurm.conf";
}

// Runs `body`; an escaping exception becomes a one-line error and exit
// status 1 (Slurm drains the node for a failed Prolog, as it should for a
// program that could not do its job).
template <typename Body>
int RunMain(const char* program, Body body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, OneLine(e.what()).c_str());
  } catch (...) {
    std::fprintf(stderr, "%s: internal error\n", program);
  }
  return 1;
}

}  // namespace vgpu

#endif  // VGPU_PROLOG_PROGRAM_H_
