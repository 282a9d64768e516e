// The select plugin interface of each supported Slurm era, as X-macro
// tables, for select/cons_tres_pool: it exports exactly its era's entry
// points (Slurm refuses a select plugin that lacks one) and loads
// select/cons_tres with the same table.
//
//   VGPU_SELECT_OWN(X)        the entry points the wrapper implements
//   VGPU_SELECT_FORWARDED(X)  the ones it hands to cons_tres unchanged
//
// X(return type, ops member, exported symbol, (parameters), (arguments)).
// Parameter types are written with their 23.11+ names (list_t,
// job_details_t; compat/slurm_compat.h maps them for 22.05): the same types.
#ifndef VGPU_COMPAT_SELECT_OPS_H_
#define VGPU_COMPAT_SELECT_OPS_H_

#include "compat/slurm_compat.h"

// job_test's last parameters: reserved cores (22.05), then reserved TRES
// (23.11), then the will-run data (24.11 on).
#if VGPU_SLURM_ERA == 2205
#define VGPU_SELECT_JOB_TEST_TAIL_PARAMS bitstr_t* exc_core_bitmap
#define VGPU_SELECT_JOB_TEST_TAIL exc_core_bitmap
#elif VGPU_SLURM_ERA == 2311
#define VGPU_SELECT_JOB_TEST_TAIL_PARAMS resv_exc_t* resv_exc
#define VGPU_SELECT_JOB_TEST_TAIL resv_exc
#else
#define VGPU_SELECT_JOB_TEST_TAIL_PARAMS resv_exc_t *resv_exc, will_run_data_t *will_run
#define VGPU_SELECT_JOB_TEST_TAIL resv_exc, will_run
#endif
#define VGPU_SELECT_JOB_TEST_PARAMS                                                          \
  (job_record_t * job, bitstr_t * bitmap, uint32_t min_nodes, uint32_t max_nodes,             \
   uint32_t req_nodes, uint16_t mode, list_t * preemptee_candidates, list_t * *preemptee_job_list, \
   VGPU_SELECT_JOB_TEST_TAIL_PARAMS)
#define VGPU_SELECT_JOB_TEST_ARGS \
  (job, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates, preemptee_job_list, \
   VGPU_SELECT_JOB_TEST_TAIL)

#define VGPU_SELECT_OWN(X)                                                  \
  X(int, job_test, select_p_job_test, VGPU_SELECT_JOB_TEST_PARAMS,          \
    VGPU_SELECT_JOB_TEST_ARGS)                                              \
  X(int, job_begin, select_p_job_begin, (job_record_t * job), (job))       \
  X(int, reconfigure, select_p_reconfigure, (void), ())                     \
  X(int, job_fini, select_p_job_fini, (job_record_t * job), (job))           \
  X(int, nodeinfo_set_all, select_p_select_nodeinfo_set_all, (void), ())

// Entry points of every era.
#define VGPU_SELECT_COMMON(X)                                                                     \
  X(int, node_init, select_p_node_init, (void), ())                                               \
  X(int, job_ready, select_p_job_ready, (job_record_t * job), (job))                              \
  X(int, job_expand, select_p_job_expand, (job_record_t * from, job_record_t * to), (from, to))   \
  X(int, job_resized, select_p_job_resized, (job_record_t * job, node_record_t * node), (job, node)) \
  X(int, job_suspend, select_p_job_suspend, (job_record_t * job, bool indf), (job, indf))         \
  X(int, job_resume, select_p_job_resume, (job_record_t * job, bool indf), (job, indf))           \
  X(int, nodeinfo_set, select_p_select_nodeinfo_set, (job_record_t * job), (job))

// Until 24.11: state save/restore, steps, and the node and job info
// containers (select_nodeinfo_t, select_jobinfo_t).
#define VGPU_SELECT_UNTIL_2411(X)                                                                  \
  X(int, state_save, select_p_state_save, (char* dir), (dir))                                       \
  X(int, state_restore, select_p_state_restore, (char* dir), (dir))                                 \
  X(int, job_init, select_p_job_init, (list_t * jobs), (jobs))                                      \
  X(bitstr_t*, step_pick_nodes, select_p_step_pick_nodes,                                           \
    (job_record_t * job, select_jobinfo_t * jobinfo, uint32_t count, bitstr_t * *avail),            \
    (job, jobinfo, count, avail))                                                                   \
  X(int, step_start, select_p_step_start, (step_record_t * step), (step))                           \
  X(int, step_finish, select_p_step_finish, (step_record_t * step, bool killing), (step, killing)) \
  X(int, nodeinfo_pack, select_p_select_nodeinfo_pack,                                              \
    (select_nodeinfo_t * info, buf_t * buffer, uint16_t version), (info, buffer, version))          \
  X(int, nodeinfo_unpack, select_p_select_nodeinfo_unpack,                                          \
    (select_nodeinfo_t * *info, buf_t * buffer, uint16_t version), (info, buffer, version))         \
  X(select_nodeinfo_t*, nodeinfo_alloc, select_p_select_nodeinfo_alloc, (void), ())                 \
  X(int, nodeinfo_free, select_p_select_nodeinfo_free, (select_nodeinfo_t * info), (info))          \
  X(int, nodeinfo_get, select_p_select_nodeinfo_get,                                                \
    (select_nodeinfo_t * info, enum select_nodedata_type what, enum node_states state, void* data), \
    (info, what, state, data))                                                                      \
  X(select_jobinfo_t*, jobinfo_alloc, select_p_select_jobinfo_alloc, (void), ())                    \
  X(int, jobinfo_free, select_p_select_jobinfo_free, (select_jobinfo_t * info), (info))             \
  X(int, jobinfo_set, select_p_select_jobinfo_set,                                                  \
    (select_jobinfo_t * info, enum select_jobdata_type what, void* data), (info, what, data))       \
  X(int, jobinfo_get, select_p_select_jobinfo_get,                                                  \
    (select_jobinfo_t * info, enum select_jobdata_type what, void* data), (info, what, data))       \
  X(select_jobinfo_t*, jobinfo_copy, select_p_select_jobinfo_copy, (select_jobinfo_t * info), (info)) \
  X(int, jobinfo_pack, select_p_select_jobinfo_pack,                                                \
    (select_jobinfo_t * info, buf_t * buffer, uint16_t version), (info, buffer, version))           \
  X(int, jobinfo_unpack, select_p_select_jobinfo_unpack,                                            \
    (select_jobinfo_t * *info, buf_t * buffer, uint16_t version), (info, buffer, version))          \
  X(int, get_info_from_plugin, select_p_get_info_from_plugin,                                       \
    (enum select_plugindata_info what, job_record_t * job, void* data), (what, job, data))

// 22.05 only.
#define VGPU_SELECT_2205_ONLY(X)                                                                  \
  X(int, job_signal, select_p_job_signal, (job_record_t * job, int signal), (job, signal))       \
  X(char*, jobinfo_sprint, select_p_select_jobinfo_sprint,                                        \
    (select_jobinfo_t * info, char* buf, size_t size, int mode), (info, buf, size, mode))        \
  X(char*, jobinfo_xstrdup, select_p_select_jobinfo_xstrdup, (select_jobinfo_t * info, int mode), \
    (info, mode))                                                                                 \
  X(int, update_node_config, select_p_update_node_config, (int index), (index))                  \
  X(bitstr_t*, resv_test, select_p_resv_test,                                                     \
    (resv_desc_msg_t * resv, uint32_t count, bitstr_t * avail, bitstr_t * *cores),                \
    (resv, count, avail, cores))

#if VGPU_SLURM_ERA == 2205
#define VGPU_SELECT_FORWARDED(X) VGPU_SELECT_COMMON(X) VGPU_SELECT_UNTIL_2411(X) VGPU_SELECT_2205_ONLY(X)
#elif VGPU_SLURM_ERA <= 2411
#define VGPU_SELECT_FORWARDED(X) VGPU_SELECT_COMMON(X) VGPU_SELECT_UNTIL_2411(X)
#elif VGPU_SLURM_ERA == 2511
#define VGPU_SELECT_FORWARDED(X) VGPU_SELECT_COMMON(X)
#else
#define VGPU_SELECT_FORWARDED(X) \
  VGPU_SELECT_COMMON(X) X(void, job_mem_reduce, select_p_job_mem_reduce, (job_record_t * job), (job))
#endif

// plugin_id: until 24.11 every select plugin in PluginDir is loaded and ids
// must differ from cons_tres's (Slurm's use 101-110); from 25.05 on only
// SelectType's plugin is loaded and Slurm takes "is this cons_tres?" from
// the id, so the wrapper must carry cons_tres's own.
#if VGPU_SLURM_ERA <= 2411
#define VGPU_SELECT_PLUGIN_ID 190
#else
#define VGPU_SELECT_PLUGIN_ID SELECT_PLUGIN_CONS_TRES
#endif

// CPUs and memory (MB) cons_tres counts as allocated on `node`; refresh
// them first with ops.nodeinfo_set_all(). Until 24.11 they sit in cons_tres's
// opaque node info; 25.11 keeps them on the node record, 26.05 beside it.
template <typename Ops>
inline void VgpuNodeAllocated(const Ops& ops, const node_record_t* node, uint16_t* cpus,
                              uint64_t* memory) {
  *cpus = 0;
  *memory = 0;
#if VGPU_SLURM_ERA <= 2411
  if (!node->select_nodeinfo || !node->select_nodeinfo->data) return;
  auto* info = static_cast<select_nodeinfo_t*>(node->select_nodeinfo->data);
  ops.nodeinfo_get(info, SELECT_NODEDATA_SUBCNT, NODE_STATE_ALLOCATED, cpus);
  ops.nodeinfo_get(info, SELECT_NODEDATA_MEM_ALLOC, NODE_STATE_ALLOCATED, memory);
#elif VGPU_SLURM_ERA == 2511
  (void)ops;
  *cpus = node->alloc_cpus;
  *memory = node->alloc_memory;
#else
  (void)ops;
  const node_select_stats_t* stats = node_select_stats_array ? node_select_stats_array[node->index] : nullptr;
  if (!stats) return;
  *cpus = stats->alloc_cpus;
  *memory = stats->alloc_memory;
#endif
}

#endif  // VGPU_COMPAT_SELECT_OPS_H_
