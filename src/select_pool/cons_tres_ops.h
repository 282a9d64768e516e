// The select/cons_tres plugin this one wraps: loaded on first use through
// Slurm's own plugin loader with the symbol table of the running Slurm
// (node_select_syms, exported by libslurmfull in 22.05), so a symbol-count
// mismatch is impossible by construction.
#ifndef VGPU_SELECT_POOL_CONS_TRES_OPS_H_
#define VGPU_SELECT_POOL_CONS_TRES_OPS_H_

extern "C" {
#include "config.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/plugin.h"
#include "src/common/select.h"
}

namespace vgpu {
namespace select_pool {

// cons_tres's entry points. Loads them on the first call (thread-safe); if
// cons_tres cannot be loaded, logs why and returns nullptr.
const slurm_select_ops_t* ConsTres();

}  // namespace select_pool
}  // namespace vgpu

#endif  // VGPU_SELECT_POOL_CONS_TRES_OPS_H_
