#include "cons_tres_ops.h"

#include <mutex>

namespace vgpu {
namespace select_pool {
namespace {

// The symbols, in ConsTresOps's order.
const char* kSymbols[] = {
    "plugin_id",
#define VGPU_OPS_SYMBOL(ret, member, symbol, params, args) #symbol,
    VGPU_SELECT_OWN(VGPU_OPS_SYMBOL)
    VGPU_SELECT_FORWARDED(VGPU_OPS_SYMBOL)
#undef VGPU_OPS_SYMBOL
};
static_assert(sizeof(kSymbols) / sizeof(kSymbols[0]) == sizeof(ConsTresOps) / sizeof(void*),
              "one symbol per entry point");

}  // namespace

const ConsTresOps* ConsTres() {
  // Slurm never unloads select plugins before exit; neither do we (destroying
  // the context would run cons_tres's fini() under slurmctld's feet).
  static ConsTresOps ops;
  static bool loaded = false;
  static std::once_flag once;
  std::call_once(once, [] {
    plugin_context_t* ctx = plugin_context_create("select", "select/cons_tres", reinterpret_cast<void**>(&ops),
                                                  kSymbols, sizeof(kSymbols));
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
