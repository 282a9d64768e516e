// select/cons_tres_pool: select/cons_tres with vgpu shares placed on devices.
//
// Every operation is forwarded to cons_tres, which keeps doing the work
// (cores, memory, GRES bitmaps, state save/restore, release). This file is
// the entry points only: job_test and job_begin go through PoolScheduler
// (pool_scheduler.h), which filters and ranks nodes and moves share bits
// onto devices. Other Slurm programs (slurmd, slurmstepd, srun, sinfo...)
// load the plugin too and only ever reach the forwards.
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "config/vgpu_config.h"
#include "cons_tres_ops.h"
#include "pool_scheduler.h"
#include "slurm_plugin.h"

extern "C" {
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
}

VGPU_SLURM_PLUGIN("Consumable TRES with vgpu device placement", "select/cons_tres_pool");
// Unique among select plugins (Slurm's use 101-110); packed with node info,
// so clients must be able to load this plugin too.
VGPU_EXPORT const uint32_t plugin_id = 190;

using vgpu::select_pool::ConsTres;
using vgpu::select_pool::PoolScheduler;

#define FORWARD(fn, fail, ...)                    \
  do {                                            \
    const slurm_select_ops_t* ops = ConsTres();   \
    return ops ? ops->fn(__VA_ARGS__) : (fail);   \
  } while (0)

namespace {

// The one scheduler of this slurmctld (Slurm's plugin interface is free
// functions, so the instance is global); made on the first job_test, so
// programs that never schedule never read vgpu.conf. Calls are serialised
// by `g_lock` on top of slurmctld's job and node locks.
std::mutex g_lock;
PoolScheduler* g_scheduler = nullptr;

PoolScheduler* Scheduler() {
  if (g_scheduler) return g_scheduler;
  const slurm_select_ops_t* ops = ConsTres();
  if (!ops) return nullptr;
  char* path = get_extra_conf_path(const_cast<char*>("vgpu.conf"));
  std::string where = path ? path : "vgpu.conf";
  xfree(path);
  auto config = vgpu::VgpuConfig::Load(where, vgpu::VgpuConfig());
  vgpu::VgpuConfig settings;
  if (config.ok()) {
    settings = *config;
  } else {
    error("select/cons_tres_pool: %s; using the defaults (PlacementPolicy=%s, SharesPerDevice=%u)",
          config.message().c_str(), settings.placement_policy.c_str(), settings.shares_per_device);
  }
  g_scheduler = new PoolScheduler(settings, ops);
  info("select/cons_tres_pool: PlacementPolicy=%s SharesPerDevice=%u TypePreference=%zu types",
       settings.placement_policy.c_str(), settings.shares_per_device,
       settings.type_preference.size());
  return g_scheduler;
}

}  // namespace

VGPU_EXPORT int init(void) { return SLURM_SUCCESS; }
VGPU_EXPORT int fini(void) {
  std::lock_guard<std::mutex> hold(g_lock);
  delete g_scheduler;
  g_scheduler = nullptr;
  return SLURM_SUCCESS;
}

VGPU_EXPORT int select_p_state_save(char* dir) { FORWARD(state_save, SLURM_ERROR, dir); }
VGPU_EXPORT int select_p_state_restore(char* dir) { FORWARD(state_restore, SLURM_ERROR, dir); }
VGPU_EXPORT int select_p_job_init(List jobs) { FORWARD(job_init, SLURM_ERROR, jobs); }
VGPU_EXPORT int select_p_node_init(void) { FORWARD(node_init, SLURM_ERROR); }

VGPU_EXPORT int select_p_job_test(job_record_t* job, bitstr_t* bitmap, uint32_t min_nodes,
                                  uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                                  List preemptee_candidates, List* preemptee_job_list,
                                  bitstr_t* exc_core_bitmap) {
  {
    std::lock_guard<std::mutex> hold(g_lock);
    try {
      if (PoolScheduler* s = Scheduler())
        return s->JobTest(job, bitmap, min_nodes, max_nodes, req_nodes, mode,
                          preemptee_candidates, preemptee_job_list, exc_core_bitmap);
    } catch (const std::exception& e) {
      error("select/cons_tres_pool: %s; leaving the choice to cons_tres", e.what());
    } catch (...) {
      error("select/cons_tres_pool: node choice failed; leaving it to cons_tres");
    }
  }
  FORWARD(job_test, SLURM_ERROR, job, bitmap, min_nodes, max_nodes, req_nodes, mode,
          preemptee_candidates, preemptee_job_list, exc_core_bitmap);
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
  FORWARD(job_begin, SLURM_ERROR, job);
}
VGPU_EXPORT int select_p_job_ready(job_record_t* job) { FORWARD(job_ready, SLURM_ERROR, job); }
VGPU_EXPORT int select_p_job_expand(job_record_t* from, job_record_t* to) {
  FORWARD(job_expand, SLURM_ERROR, from, to);
}
VGPU_EXPORT int select_p_job_resized(job_record_t* job, node_record_t* node) {
  FORWARD(job_resized, SLURM_ERROR, job, node);
}
VGPU_EXPORT int select_p_job_signal(job_record_t* job, int signal) {
  FORWARD(job_signal, SLURM_ERROR, job, signal);
}
VGPU_EXPORT int select_p_job_fini(job_record_t* job) { FORWARD(job_fini, SLURM_ERROR, job); }
VGPU_EXPORT int select_p_job_suspend(job_record_t* job, bool indf_susp) {
  FORWARD(job_suspend, SLURM_ERROR, job, indf_susp);
}
VGPU_EXPORT int select_p_job_resume(job_record_t* job, bool indf_susp) {
  FORWARD(job_resume, SLURM_ERROR, job, indf_susp);
}

VGPU_EXPORT bitstr_t* select_p_step_pick_nodes(job_record_t* job, select_jobinfo_t* jobinfo,
                                               uint32_t node_count, bitstr_t** avail_nodes) {
  FORWARD(step_pick_nodes, nullptr, job, jobinfo, node_count, avail_nodes);
}
VGPU_EXPORT int select_p_step_start(step_record_t* step) { FORWARD(step_start, SLURM_ERROR, step); }
VGPU_EXPORT int select_p_step_finish(step_record_t* step, bool killing_step) {
  FORWARD(step_finish, SLURM_ERROR, step, killing_step);
}

VGPU_EXPORT int select_p_select_nodeinfo_pack(select_nodeinfo_t* info, buf_t* buffer,
                                              uint16_t protocol_version) {
  FORWARD(nodeinfo_pack, SLURM_ERROR, info, buffer, protocol_version);
}
VGPU_EXPORT int select_p_select_nodeinfo_unpack(select_nodeinfo_t** info, buf_t* buffer,
                                                uint16_t protocol_version) {
  FORWARD(nodeinfo_unpack, SLURM_ERROR, info, buffer, protocol_version);
}
VGPU_EXPORT select_nodeinfo_t* select_p_select_nodeinfo_alloc(void) {
  FORWARD(nodeinfo_alloc, nullptr);
}
VGPU_EXPORT int select_p_select_nodeinfo_free(select_nodeinfo_t* info) {
  FORWARD(nodeinfo_free, SLURM_ERROR, info);
}
VGPU_EXPORT int select_p_select_nodeinfo_set_all(void) { FORWARD(nodeinfo_set_all, SLURM_ERROR); }
VGPU_EXPORT int select_p_select_nodeinfo_set(job_record_t* job) {
  FORWARD(nodeinfo_set, SLURM_ERROR, job);
}
VGPU_EXPORT int select_p_select_nodeinfo_get(select_nodeinfo_t* info,
                                             enum select_nodedata_type dinfo,
                                             enum node_states state, void* data) {
  FORWARD(nodeinfo_get, SLURM_ERROR, info, dinfo, state, data);
}

VGPU_EXPORT select_jobinfo_t* select_p_select_jobinfo_alloc(void) {
  FORWARD(jobinfo_alloc, nullptr);
}
VGPU_EXPORT int select_p_select_jobinfo_free(select_jobinfo_t* info) {
  FORWARD(jobinfo_free, SLURM_ERROR, info);
}
VGPU_EXPORT int select_p_select_jobinfo_set(select_jobinfo_t* info,
                                            enum select_jobdata_type type, void* data) {
  FORWARD(jobinfo_set, SLURM_ERROR, info, type, data);
}
VGPU_EXPORT int select_p_select_jobinfo_get(select_jobinfo_t* info,
                                            enum select_jobdata_type type, void* data) {
  FORWARD(jobinfo_get, SLURM_ERROR, info, type, data);
}
VGPU_EXPORT select_jobinfo_t* select_p_select_jobinfo_copy(select_jobinfo_t* info) {
  FORWARD(jobinfo_copy, nullptr, info);
}
VGPU_EXPORT int select_p_select_jobinfo_pack(select_jobinfo_t* info, buf_t* buffer,
                                             uint16_t protocol_version) {
  FORWARD(jobinfo_pack, SLURM_ERROR, info, buffer, protocol_version);
}
VGPU_EXPORT int select_p_select_jobinfo_unpack(select_jobinfo_t** info, buf_t* buffer,
                                               uint16_t protocol_version) {
  FORWARD(jobinfo_unpack, SLURM_ERROR, info, buffer, protocol_version);
}
VGPU_EXPORT char* select_p_select_jobinfo_sprint(select_jobinfo_t* info, char* buf, size_t size,
                                                 int mode) {
  FORWARD(jobinfo_sprint, nullptr, info, buf, size, mode);
}
VGPU_EXPORT char* select_p_select_jobinfo_xstrdup(select_jobinfo_t* info, int mode) {
  FORWARD(jobinfo_xstrdup, nullptr, info, mode);
}

// Forwarded so that Slurm's "is this cons_tres?" checks (SELECT_CR_PLUGIN)
// see cons_tres.
VGPU_EXPORT int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t* job,
                                              void* data) {
  FORWARD(get_info_from_plugin, SLURM_ERROR, dinfo, job, data);
}
VGPU_EXPORT int select_p_update_node_config(int index) {
  FORWARD(update_node_config, SLURM_ERROR, index);
}
// `scontrol reconfigure`: vgpu.conf is read again at the next job_test.
VGPU_EXPORT int select_p_reconfigure(void) {
  {
    std::lock_guard<std::mutex> hold(g_lock);
    delete g_scheduler;
    g_scheduler = nullptr;
  }
  FORWARD(reconfigure, SLURM_ERROR);
}
VGPU_EXPORT bitstr_t* select_p_resv_test(resv_desc_msg_t* resv, uint32_t node_cnt,
                                         bitstr_t* avail_bitmap, bitstr_t** core_bitmap) {
  FORWARD(resv_test, nullptr, resv, node_cnt, avail_bitmap, core_bitmap);
}
