// Slurm's SPANK API (slurm/spank.h) as spank_vgpu.so uses it. Unlike the
// other plugins' API, it is public and has not changed between the
// supported releases in what we call: spank_get_item (S_JOB_ID),
// spank_getenv, spank_setenv, spank_remote, slurm_error, slurm_info.
#ifndef VGPU_COMPAT_SLURM_SPANK_H_
#define VGPU_COMPAT_SLURM_SPANK_H_

#include <slurm/slurm_version.h>

// spank.h declares the plugin's entry points (slurm_spank_init, ...)
// outside its own extern "C" block: in C++ they must get C linkage here,
// or our definitions would not match them.
#ifdef __cplusplus
extern "C" {
#endif
#include <slurm/spank.h>
#ifdef __cplusplus
}
#endif

#endif  // VGPU_COMPAT_SLURM_SPANK_H_
