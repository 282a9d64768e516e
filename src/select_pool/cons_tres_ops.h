// The select/cons_tres plugin this one wraps, loaded on first use through
// Slurm's own plugin loader with this release's select interface
// (compat/select_ops.h): the same table the wrapper exports, so cons_tres and
// the wrapper cannot disagree on an entry point.
#ifndef VGPU_SELECT_POOL_CONS_TRES_OPS_H_
#define VGPU_SELECT_POOL_CONS_TRES_OPS_H_

#include "compat/select_ops.h"

namespace vgpu {
namespace select_pool {

// cons_tres's entry points, as this Slurm release's select interface has them.
struct ConsTresOps {
  uint32_t* plugin_id;
#define VGPU_OPS_MEMBER(ret, member, symbol, params, args) ret(*member) params;
  VGPU_SELECT_OWN(VGPU_OPS_MEMBER)
  VGPU_SELECT_FORWARDED(VGPU_OPS_MEMBER)
#undef VGPU_OPS_MEMBER
};

// cons_tres's entry points. Loads them on the first call (thread-safe); if
// cons_tres cannot be loaded, logs why and returns nullptr.
const ConsTresOps* ConsTres();

}  // namespace select_pool
}  // namespace vgpu

#endif  // VGPU_SELECT_POOL_CONS_TRES_OPS_H_
