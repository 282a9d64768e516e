// select/cons_tres_pool: select/cons_tres with vgpu shares placed on devices.
//
// Every operation is forwarded to cons_tres, which keeps doing the work
// (cores, memory, GRES bitmaps, state save/restore, release). This file is
// the entry points only: job_test and job_begin go through PoolScheduler
// (pool_scheduler.h), which filters and ranks nodes and moves share bits
// onto devices. Other Slurm programs (slurmd, slurmstepd, srun, sinfo...)
// load the plugin too (until 24.11) and only ever reach the forwards. Which
// entry points exist, and with which parameters, is this Slurm release's
// (compat/select_ops.h).
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "config/vgpu_config.h"
#include "cons_tres_ops.h"
#include "pool_scheduler.h"
#include "slurm_plugin.h"
#include "type_counts.h"

VGPU_SLURM_PLUGIN("Consumable TRES with vgpu device placement", "select/cons_tres_pool");
VGPU_EXPORT const uint32_t plugin_id = VGPU_SELECT_PLUGIN_ID;

using vgpu::select_pool::ConsTres;
using vgpu::select_pool::CorrectAllVgpuTypeCounts;
using vgpu::select_pool::CorrectVgpuTypeCounts;
using vgpu::select_pool::ConsTresOps;
using vgpu::select_pool::PoolScheduler;

namespace {

// What an entry point answers when cons_tres could not be loaded.
template <typename R>
R Failed() {
  if constexpr (std::is_void_v<R>) {
    return;
  } else if constexpr (std::is_pointer_v<R>) {
    return nullptr;
  } else {
    return SLURM_ERROR;
  }
}

// call(cons_tres's entry points), or Failed<R>() without them.
template <typename R, typename F>
R Forward(F call) {
  const ConsTresOps* ops = ConsTres();
  if (!ops) return Failed<R>();
  return call(*ops);
}

// The one scheduler of this slurmctld (Slurm's plugin interface is free
// functions, so the instance is global); made on the first job_test, so
// programs that never schedule never read vgpu.conf, and made again when
// vgpu.conf changes (vgpu-prolog reads it at every run: HardwareSlicing
// must mean the same to both). Calls are serialised by `g_lock` on top of
// slurmctld's job and node locks.
std::mutex g_lock;
PoolScheduler* g_scheduler = nullptr;
vgpu::VgpuConfigFile* g_config = nullptr;
uint64_t g_built_from = 0;

PoolScheduler* Scheduler() {
  const ConsTresOps* ops = ConsTres();
  if (!ops) return nullptr;
  if (!g_config) {
    char* path = get_extra_conf_path(const_cast<char*>("vgpu.conf"));
    std::string where = path ? path : "vgpu.conf";
    xfree(path);
    vgpu::VgpuConfig defaults;
    defaults.chip_catalog_dirs = VGPU_DEFAULT_CATALOG_DIR;
    g_config = new vgpu::VgpuConfigFile(where, defaults);
  }
  vgpu::Status read = g_config->Refresh();
  if (!read.ok()) error("select/cons_tres_pool: %s", read.message().c_str());
  if (g_scheduler && g_built_from == g_config->generation()) return g_scheduler;
  delete g_scheduler;
  const vgpu::VgpuConfig& settings = g_config->config();
  g_scheduler = new PoolScheduler(settings, ops);
  g_built_from = g_config->generation();
  info("select/cons_tres_pool: PlacementPolicy=%s SharesPerDevice=%u TypePreference=%zu types "
       "HardwareSlicing=%zu entries",
       settings.placement_policy.c_str(), settings.shares_per_device, settings.type_preference.size(),
       settings.hardware_slicing.size());
  return g_scheduler;
}

}  // namespace

VGPU_EXPORT int init(void) { return SLURM_SUCCESS; }
VGPU_EXPORT int fini(void) {
  std::lock_guard<std::mutex> hold(g_lock);
  delete g_scheduler;
  g_scheduler = nullptr;
  delete g_config;
  g_config = nullptr;
  return SLURM_SUCCESS;
}

// Every entry point the wrapper does not change goes to cons_tres as it came
// (its "is this cons_tres?" answers included).
#define VGPU_FORWARD(ret, member, symbol, params, args) \
  VGPU_EXPORT ret symbol params {                       \
    return Forward<ret>([&](const ConsTresOps& ops) { return ops.member args; }); \
  }
VGPU_SELECT_FORWARDED(VGPU_FORWARD)
#undef VGPU_FORWARD

VGPU_EXPORT int select_p_job_test VGPU_SELECT_JOB_TEST_PARAMS {
  {
    std::lock_guard<std::mutex> hold(g_lock);
    try {
      if (PoolScheduler* s = Scheduler()) {
        auto cons_tres_job_test = [&](bitstr_t* nodes) {
          return ConsTres()->job_test(job, nodes, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                                      preemptee_job_list, VGPU_SELECT_JOB_TEST_TAIL);
        };
        return s->JobTest(job, bitmap, min_nodes, req_nodes, mode, preemptee_candidates, cons_tres_job_test);
      }
    } catch (const std::exception& e) {
      error("select/cons_tres_pool: %s; leaving the choice to cons_tres", e.what());
    } catch (...) {
      error("select/cons_tres_pool: node choice failed; leaving it to cons_tres");
    }
  }
  return Forward<int>([&](const ConsTresOps& ops) { return ops.job_test VGPU_SELECT_JOB_TEST_ARGS; });
}

// The commit point: cons_tres has chosen nodes and bits; move each node's
// share bits onto the device(s) chosen there, then let cons_tres begin.
VGPU_EXPORT int select_p_job_begin(job_record_t* job) {
  int rc = SLURM_SUCCESS;
  {
    std::lock_guard<std::mutex> hold(g_lock);
    try {
      if (PoolScheduler* s = Scheduler()) rc = s->PlaceOnDevices(job);
    } catch (const std::exception& e) {
      error("select/cons_tres_pool: device placement failed: %s", e.what());
    } catch (...) {
      error("select/cons_tres_pool: device placement failed");
    }
  }
  if (rc != SLURM_SUCCESS) return rc;
  CorrectVgpuTypeCounts(job);
  return Forward<int>([&](const ConsTresOps& ops) { return ops.job_begin(job); });
}

// A job's end: the type counts of its nodes are made right first, so that
// cons_tres's release takes back what the job holds (type_counts.h).
VGPU_EXPORT int select_p_job_fini(job_record_t* job) {
  if (running_in_slurmctld()) CorrectVgpuTypeCounts(job);
  return Forward<int>([&](const ConsTresOps& ops) { return ops.job_fini(job); });
}

// Called before Slurm reports nodes (sinfo, scontrol show node) and before
// scheduling passes: counts made right here show in AllocTRES and hold for
// typed requests. A correction marks the nodes changed, so that cons_tres
// computes their allocated TRES again.
VGPU_EXPORT int select_p_select_nodeinfo_set_all(void) {
  if (running_in_slurmctld() && CorrectAllVgpuTypeCounts()) last_node_update = time(nullptr);
  return Forward<int>([](const ConsTresOps& ops) { return ops.nodeinfo_set_all(); });
}

// `scontrol reconfigure`: vgpu.conf is read again at the next job_test.
VGPU_EXPORT int select_p_reconfigure(void) {
  {
    std::lock_guard<std::mutex> hold(g_lock);
    delete g_scheduler;
    g_scheduler = nullptr;
  }
  const int rc = Forward<int>([](const ConsTresOps& ops) { return ops.reconfigure(); });
  // cons_tres has released and re-added every job: untyped ones with
  // Slurm's wrong type counts (type_counts.h).
  if (running_in_slurmctld() && CorrectAllVgpuTypeCounts()) last_node_update = time(nullptr);
  return rc;
}
