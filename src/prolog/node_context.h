// What vgpu-prolog, vgpu-epilog and vgpu-taskprolog know about the node:
// vgpu.conf (next to slurm.conf), the chip catalog, the run directory, and
// how to reach the vendor libraries that cut hardware slices. A value the
// programs pass down, so that tests swap the run directory and the slice
// drivers (the Env-like seam).
#ifndef VGPU_PROLOG_NODE_CONTEXT_H_
#define VGPU_PROLOG_NODE_CONTEXT_H_

#include <functional>
#include <memory>
#include <string>

#include "config/vgpu_config.h"
#include "devices/chip_catalog.h"
#include "jobs/hardware_slice.h"
#include "util/status.h"

namespace vgpu {

struct NodeContext {
  VgpuConfig config;
  ChipCatalog catalog;
  std::string run_dir;  // holds job_<id>/ and job_<id>.slices
  // The slice driver of a limits vendor ("nvidia": MIG, "ascend": vNPU);
  // opened only when a job needs one.
  std::function<Result<std::unique_ptr<SliceDriver>>(const std::string& vendor)> open_slicer;

  // vgpu.conf from the directory of `slurm_conf` (a missing file: all
  // defaults), the catalog it names (default: `default_catalog_dirs`), the
  // compiled-in run directory, the real vendor libraries.
  static Result<NodeContext> Load(const std::string& slurm_conf, const std::string& default_catalog_dirs);
};


}  // namespace vgpu

#endif  // VGPU_PROLOG_NODE_CONTEXT_H_
