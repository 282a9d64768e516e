// What every slurm-vgpu plugin must export for Slurm's loader: plugin_name,
// plugin_type and plugin_version (which must equal the running Slurm's
// SLURM_VERSION_NUMBER), with C linkage and default visibility. In C++ a
// const inside an extern "C" block would get internal linkage and Slurm
// would reject the plugin, hence the explicit declarations.
// Include after Slurm's slurm/slurm_version.h (via slurm/slurm.h).
#ifndef VGPU_SLURM_PLUGIN_H_
#define VGPU_SLURM_PLUGIN_H_

#include <cstdint>

#define VGPU_EXPORT extern "C" __attribute__((visibility("default")))

#define VGPU_SLURM_PLUGIN(name, type)                                    \
  VGPU_EXPORT const char plugin_name[];                                  \
  VGPU_EXPORT const char plugin_type[];                                  \
  VGPU_EXPORT const uint32_t plugin_version;                             \
  VGPU_EXPORT const char plugin_name[] = name;                           \
  VGPU_EXPORT const char plugin_type[] = type;                           \
  VGPU_EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER

#endif  // VGPU_SLURM_PLUGIN_H_
