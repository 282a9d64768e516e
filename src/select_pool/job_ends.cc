#include "job_ends.h"

#include <algorithm>

#include "placement/node_ranking.h"

#pragma weak job_list  // slurmctld's alone (pool_scheduler.cc says why)

namespace vgpu {
namespace select_pool {

std::vector<HeldUntil> RunningHolds(int n, const VgpuDevices& devs) {
  std::vector<HeldUntil> out;
  if (!&job_list || !job_list) return out;
  list_itr_t* it = list_iterator_create(job_list);
  while (auto* job = static_cast<job_record_t*>(list_next(it))) {
    if (!(IS_JOB_RUNNING(job) || IS_JOB_SUSPENDED(job)) || !job->node_bitmap ||
        n >= bit_size(job->node_bitmap) || !bit_test(job->node_bitmap, n) || !job->gres_list_alloc)
      continue;
    const int offset = bit_set_count_range(job->node_bitmap, 0, n);
    HeldUntil r;
    r.end = job->end_time;
    r.shares.assign(devs.bits.size(), 0);
    r.slots.assign(devs.bits.size(), 0);
    list_itr_t* g = list_iterator_create(job->gres_list_alloc);
    while (auto* gs = static_cast<gres_state_t*>(list_next(g))) {
      if (gs->plugin_id != VgpuPluginId() || !gs->gres_data) continue;
      auto* js = static_cast<gres_job_state_t*>(gs->gres_data);
      if (!js->gres_bit_alloc || offset >= static_cast<int>(js->node_cnt)) continue;
      bitstr_t* bits = js->gres_bit_alloc[offset];
      if (!bits) continue;
      for (size_t t = 0; t < devs.bits.size(); ++t) {
        if (bit_size(bits) != bit_size(devs.bits[t])) continue;
        r.shares[t] += static_cast<uint32_t>(bit_overlap(bits, devs.bits[t]));
        r.slots[t] |= devs.Taken(t, bits);
      }
    }
    list_iterator_destroy(g);
    out.push_back(std::move(r));
  }
  list_iterator_destroy(it);
  return out;
}

int64_t EarliestFitAsJobsEnd(const node_record_t* node, const VgpuDevices& devs, const Request& req,
                             const std::vector<HeldUntil>& held, int64_t now) {
  const uint32_t s = devs.shares_per_device;
  const uint32_t per = RequestSharesPerDevice(req, s);
  const bool any_sliced =
      std::any_of(devs.geometry.begin(), devs.geometry.end(), [](const SliceGeometry* g) { return g != nullptr; });
  ClusterState one(s);
  (void)one.AddNode(node->name, 0, 0, devs.types);
  if (!any_sliced) {
    std::vector<ShareRelease> releases;
    for (const HeldUntil& h : held) releases.push_back({h.end, h.shares});
    (void)one.SetFree(0, 0, 0, devs.free);
    return EarliestFit(one.node(0), req, s, std::move(releases), now);
  }
  // Unallocated bits and taken slots now; jobs end in order of their end.
  const std::vector<uint32_t>& raw = devs.unallocated;
  std::vector<SlotMask> taken(devs.bits.size());
  for (size_t t = 0; t < taken.size(); ++t) taken[t] = devs.Taken(t);
  std::vector<const HeldUntil*> order;
  for (const HeldUntil& h : held) order.push_back(&h);
  std::sort(order.begin(), order.end(), [](const HeldUntil* a, const HeldUntil* b) { return a->end < b->end; });
  auto fits = [&](size_t ended) {
    std::vector<uint32_t> free(raw.size());
    for (size_t t = 0; t < raw.size(); ++t) {
      uint64_t f = raw[t];
      SlotMask ended_slots = 0, kept_slots = 0;
      for (size_t j = 0; j < order.size(); ++j) {
        if (j < ended) {
          f += order[j]->shares[t];
          ended_slots |= order[j]->slots[t];
        } else {
          kept_slots |= order[j]->slots[t];
        }
      }
      free[t] = static_cast<uint32_t>(std::min<uint64_t>(f, s));
      // A slot frees when every job with a bit in it has ended; a sliced
      // device takes the request only where a slice holds it.
      if (devs.geometry[t] && !devs.geometry[t]->Choose(taken[t] & ~(ended_slots & ~kept_slots), per)) free[t] = 0;
    }
    (void)one.SetFree(0, 0, 0, free);
    return !ChooseDevicesOnNode(one.node(0), req, s).empty();
  };
  if (fits(0)) return now;
  for (size_t ended = 1; ended <= order.size(); ++ended) {
    // Jobs ending at the same second end together.
    if (ended < order.size() && order[ended]->end == order[ended - 1]->end) continue;
    if (fits(ended)) return std::max<int64_t>(now, order[ended - 1]->end);
  }
  return -1;
}

}  // namespace select_pool
}  // namespace vgpu
