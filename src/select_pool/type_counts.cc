#include "type_counts.h"

#include <string>
#include <vector>

#include "node_view.h"

namespace vgpu {
namespace select_pool {

namespace {

// Allocated bits of topology record t, or -1 when its bitmap cannot be
// compared with the node's (sizes differ: Slurm logs that itself).
int64_t AllocatedOnDevice(const gres_node_state_t* ns, uint16_t t) {
  bitstr_t* dev = ns->topo_gres_bitmap[t];
  if (!dev) return -1;
  if (!ns->gres_bit_alloc) return 0;
  if (bit_size(ns->gres_bit_alloc) != bit_size(dev)) return -1;
  return bit_overlap(dev, ns->gres_bit_alloc);
}

}  // namespace

bool CorrectVgpuTypeCounts(node_record_t* node) {
  gres_node_state_t* ns = VgpuNodeState(node);
  if (!ns || !ns->topo_cnt || !ns->topo_gres_bitmap || !ns->topo_gres_cnt_alloc || !ns->topo_type_id)
    return false;
  std::vector<uint64_t> by_type(ns->type_cnt, 0);
  std::vector<uint64_t> by_device(ns->topo_cnt, 0);
  for (uint16_t t = 0; t < ns->topo_cnt; ++t) {
    const int64_t used = AllocatedOnDevice(ns, t);
    if (used < 0) return false;
    by_device[t] = static_cast<uint64_t>(used);
    for (uint16_t j = 0; j < ns->type_cnt; ++j)
      if (ns->type_id && ns->type_id[j] == ns->topo_type_id[t]) by_type[j] += by_device[t];
  }
  std::string fixed;
  for (uint16_t j = 0; j < ns->type_cnt; ++j) {
    if (!ns->type_cnt_alloc || ns->type_cnt_alloc[j] == by_type[j]) continue;
    const char* name = ns->type_name && ns->type_name[j] ? ns->type_name[j] : "?";
    fixed += std::string(fixed.empty() ? "" : ", ") + name + " " + std::to_string(ns->type_cnt_alloc[j]) +
             " -> " + std::to_string(by_type[j]);
    ns->type_cnt_alloc[j] = by_type[j];
  }
  bool devices_fixed = false;
  for (uint16_t t = 0; t < ns->topo_cnt; ++t) {
    if (ns->topo_gres_cnt_alloc[t] == by_device[t]) continue;
    ns->topo_gres_cnt_alloc[t] = by_device[t];
    devices_fixed = true;
  }
  if (fixed.empty() && !devices_fixed) return false;
  // Drops Slurm's cached "GresUsed" text, rebuilt from the counts.
  xfree(ns->gres_used);
  info("select/cons_tres_pool: node %s: allocated vgpu shares per type set from the allocated bits "
       "(%s)%s; Slurm rebuilds untyped jobs' type counts wrongly after a restart or reconfigure",
       node->name, fixed.empty() ? "types right" : fixed.c_str(), devices_fixed ? ", per-device counts too" : "");
  return true;
}

bool CorrectVgpuTypeCounts(const job_record_t* job) {
  const job_resources_t* jr = job ? job->job_resrcs : nullptr;
  if (!jr || !jr->node_bitmap) return false;
  bool any = false;
  for (int64_t n = bit_ffs(jr->node_bitmap); n >= 0 && n < bit_size(jr->node_bitmap); ++n)
    if (bit_test(jr->node_bitmap, n) && n < node_record_count && node_record_table_ptr[n])
      any |= CorrectVgpuTypeCounts(node_record_table_ptr[n]);
  return any;
}

bool CorrectAllVgpuTypeCounts() {
  bool any = false;
  for (int n = 0; n < node_record_count; ++n)
    if (node_record_table_ptr[n]) any |= CorrectVgpuTypeCounts(node_record_table_ptr[n]);
  return any;
}

}  // namespace select_pool
}  // namespace vgpu
