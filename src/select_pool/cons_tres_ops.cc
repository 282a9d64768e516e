#include "cons_tres_ops.h"

#include <mutex>

namespace vgpu {
namespace select_pool {

const slurm_select_ops_t* ConsTres() {
  // Slurm never unloads select plugins before exit; neither do we (destroying
  // the context would run cons_tres's fini() under slurmctld's feet).
  static slurm_select_ops_t ops;
  static bool loaded = false;
  static std::once_flag once;
  std::call_once(once, [] {
    plugin_context_t* ctx =
        plugin_context_create("select", "select/cons_tres",
                              reinterpret_cast<void**>(&ops), node_select_syms, sizeof(ops));
    if (!ctx) {
      error("select/cons_tres_pool: cannot load select/cons_tres, which it wraps; "
            "check that select_cons_tres.so is in PluginDir");
      return;
    }
    loaded = true;
  });
  return loaded ? &ops : nullptr;
}

}  // namespace select_pool
}  // namespace vgpu
