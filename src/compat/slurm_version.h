// Which Slurm release the plugins are built against, and what follows from
// it at compile time. The plugins support five release series; each differs
// from the one before in ways src/compat/README.md lists:
//
//   era    releases   plugin interfaces
//   2205   22.05      gres (epilog_*), select 37 ops, job_modify without err_msg
//   2311   23.11      gres (prep_*), select 32 ops with resv_exc_t, headers in src/interfaces
//   2411   24.11      gres without get_job_info/get_step_info, select + will_run_data_t
//   2511   25.11      select 13 ops, plugin_id must be cons_tres's (109), node alloc_cpus
//   2605   26.05      select 14 ops (job_mem_reduce), node_select_stats_array
//
// A plugin must match the daemon's release to the micro version, so every
// other release (23.02, 24.05, 25.05, ...) is refused here rather than built
// on a guess; configure says the same before compiling.
#ifndef VGPU_COMPAT_SLURM_VERSION_H_
#define VGPU_COMPAT_SLURM_VERSION_H_

#include "slurm/slurm_version.h"

#define VGPU_SLURM_RELEASE(major, minor) (SLURM_VERSION_NUMBER >> 8 == ((major) << 8 | (minor)))

#if VGPU_SLURM_RELEASE(22, 5)
#define VGPU_SLURM_ERA 2205
#elif VGPU_SLURM_RELEASE(23, 11)
#define VGPU_SLURM_ERA 2311
#elif VGPU_SLURM_RELEASE(24, 11)
#define VGPU_SLURM_ERA 2411
#elif VGPU_SLURM_RELEASE(25, 11)
#define VGPU_SLURM_ERA 2511
#elif VGPU_SLURM_RELEASE(26, 5)
#define VGPU_SLURM_ERA 2605
#else
#error "slurm-vgpu supports Slurm 22.05, 23.11, 24.11, 25.11 and 26.05; build against one of those"
#endif

// Where the plugin interface headers live (src/interfaces since 23.02).
#if VGPU_SLURM_ERA == 2205
#define VGPU_SLURM_GRES_H "src/common/gres.h"
#define VGPU_SLURM_SELECT_H "src/common/select.h"
#else
#define VGPU_SLURM_GRES_H "src/interfaces/gres.h"
#define VGPU_SLURM_SELECT_H "src/interfaces/select.h"
#endif

#endif  // VGPU_COMPAT_SLURM_VERSION_H_
