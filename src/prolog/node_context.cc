#include "node_context.h"

#include "jobs/job_limits.h"

#ifndef VGPU_RUN_DIR
#define VGPU_RUN_DIR "/run/slurm-vgpu"
#endif

namespace vgpu {

Result<NodeContext> NodeContext::Load(const std::string& slurm_conf, const std::string& default_catalog_dirs) {
  using R = Result<NodeContext>;
  NodeContext ctx;
  VgpuConfig defaults;
  defaults.chip_catalog_dirs = default_catalog_dirs;
  auto config = VgpuConfig::Load(BesideSlurmConf(slurm_conf, "vgpu.conf"), defaults);
  if (!config.ok()) return R::Error(config.message());
  ctx.config = std::move(config).value();
  auto catalog = ChipCatalog::LoadDirectories(ctx.config.chip_catalog_dirs);
  if (!catalog.ok()) return R::Error(catalog.message());
  ctx.catalog = std::move(catalog).value();
  ctx.run_dir = VGPU_RUN_DIR;
  ctx.open_slicer = [](const std::string& vendor) -> Result<std::unique_ptr<SliceDriver>> {
    if (vendor == "nvidia") return OpenMigDriver();
    if (vendor == "ascend") return OpenVnpuDriver();
    return Result<std::unique_ptr<SliceDriver>>::Error("no hardware slicing for " + vendor +
                                                      " devices; remove them from HardwareSlicing=");
  };
  return ctx;
}

}  // namespace vgpu
