#include "node_view.h"

#include <algorithm>

namespace vgpu {
namespace select_pool {

uint32_t VgpuPluginId() {
  static const uint32_t id = gres_build_id(const_cast<char*>("vgpu"));
  return id;
}

gres_node_state_t* VgpuNodeState(const node_record_t* node) {
  if (!node || !node->gres_list) return nullptr;
  gres_node_state_t* found = nullptr;
  list_itr_t* it = list_iterator_create(node->gres_list);
  while (auto* gs = static_cast<gres_state_t*>(list_next(it)))
    if (gs->plugin_id == VgpuPluginId()) found = static_cast<gres_node_state_t*>(gs->gres_data);
  list_iterator_destroy(it);
  return found;
}

SlotMask VgpuDevices::Taken(size_t t, const bitstr_t* held) const {
  const SliceGeometry* g = geometry[t];
  auto* in = const_cast<bitstr_t*>(held ? held : gres->gres_bit_alloc);
  if (!g || !in) return 0;
  const int64_t first = bit_ffs(bits[t]);
  const int64_t size = bit_size(in);
  return g->Taken([&](uint32_t share) { return first + share < size && bit_test(in, first + share); });
}

bool ReadVgpuDevices(const node_record_t* node, const SlicedModels* sliced, VgpuDevices* out) {
  *out = VgpuDevices();
  out->gres = VgpuNodeState(node);
  const gres_node_state_t* ns = out->gres;
  if (!ns || !ns->topo_cnt || !ns->topo_gres_bitmap) return false;
  for (uint16_t t = 0; t < ns->topo_cnt; ++t) {
    bitstr_t* dev = ns->topo_gres_bitmap[t];
    if (!dev) return false;
    const uint32_t size = static_cast<uint32_t>(bit_set_count(dev));
    if (out->shares_per_device == 0) out->shares_per_device = size;
    if (size == 0 || size != out->shares_per_device) return false;
    uint32_t used = 0;
    if (ns->gres_bit_alloc && bit_size(ns->gres_bit_alloc) == bit_size(dev))
      used = static_cast<uint32_t>(bit_overlap(dev, ns->gres_bit_alloc));
    out->bits.push_back(dev);
    out->cores.push_back(ns->topo_core_bitmap ? ns->topo_core_bitmap[t] : nullptr);
    const char* type = ns->topo_type_name ? ns->topo_type_name[t] : nullptr;
    out->types.push_back(type ? type : "");
    out->free.push_back(size - used);
    out->unallocated.push_back(size - used);
    const SliceGeometry* g = nullptr;
    if (sliced && !sliced->empty() && type) g = sliced->Find(node->features ? node->features : "", type);
    out->geometry.push_back(g && g->shares_per_device() == size ? g : nullptr);
    if (out->geometry.back()) out->free.back() = std::min(out->free.back(), g->LargestFit(out->Taken(t)));
  }
  return true;
}

std::vector<uint32_t> FreeFor(const VgpuDevices& devs, uint32_t per, bool capacity) {
  std::vector<uint32_t> free = capacity ? std::vector<uint32_t>(devs.bits.size(), devs.shares_per_device) : devs.free;
  for (size_t t = 0; t < free.size(); ++t)
    if (devs.geometry[t] && !devs.geometry[t]->Choose(capacity ? 0 : devs.Taken(t), per)) free[t] = 0;
  return free;
}

std::vector<gres_job_state_t*> VgpuRequests(const job_record_t* job) {
  std::vector<gres_job_state_t*> out;
  if (!job || !job->gres_list_req) return out;
  list_itr_t* it = list_iterator_create(job->gres_list_req);
  while (auto* gs = static_cast<gres_state_t*>(list_next(it)))
    if (gs->plugin_id == VgpuPluginId() && gs->gres_data)
      out.push_back(static_cast<gres_job_state_t*>(gs->gres_data));
  list_iterator_destroy(it);
  return out;
}

bool SharesCores(const job_record_t* job) {
  if (!job->part_ptr || !job->details) return false;
  const uint16_t max_share = job->part_ptr->max_share;
  if (max_share == 0) return false;  // OverSubscribe=EXCLUSIVE
  if (max_share & SHARED_FORCE) return true;
  return (max_share & ~SHARED_FORCE) > 1 && job->details->share_res == 1;
}

uint64_t JobCpus(const job_record_t* job) {
  return job->details && job->details->min_cpus ? job->details->min_cpus : 1;
}

Request RequestOf(const job_record_t* job, const gres_job_state_t* vgpu, const ClusterState& cluster) {
  Request req;
  if (vgpu) {
    req.shares = static_cast<uint32_t>(vgpu->gres_per_node);
    if (vgpu->type_name && vgpu->type_name[0]) req.types = cluster.TypesOf({vgpu->type_name});
  }
  // CPU and memory are estimates for scoring (cons_tres does the exact
  // fit): the job's CPUs on one node, memory per node or per CPU. A job
  // that may run on cores other jobs hold (cons_tres's NODE_CR_AVAILABLE:
  // OverSubscribe=FORCE, or YES and --oversubscribe) takes no CPU from the
  // score: the cores a node has left do not bound how many such jobs it
  // takes, and counting them would make a 2-core node look unable to feed
  // its devices after two jobs.
  const job_details_t* d = job->details;
  if (d) {
    const uint64_t cpus = JobCpus(job);
    req.cpu_milli = SharesCores(job) ? 0 : cpus * 1000;
    if (d->pn_min_memory != NO_VAL64) {
      const uint64_t mem = d->pn_min_memory & ~MEM_PER_CPU;
      req.memory_mib = (d->pn_min_memory & MEM_PER_CPU) ? mem * cpus : mem;
    }
  }
  return req;
}

ClusterView::ClusterView(uint32_t shares_per_device, const ConsTresOps* cons_tres, const SlicedModels* sliced)
    : cluster_(shares_per_device) {
  // Refreshes cons_tres's per-node CPU and memory counts; it does the work
  // only when nodes changed since the last call.
  if (cons_tres) cons_tres->nodeinfo_set_all();
  cluster_index_.assign(node_record_count > 0 ? node_record_count : 0, -1);
  for (int i = 0; i < node_record_count; ++i) {
    const node_record_t* node = node_record_table_ptr[i];
    VgpuDevices devs;
    if (!node || !ReadVgpuDevices(node, sliced, &devs)) continue;
    if (devs.shares_per_device != shares_per_device) {
      mismatched_.push_back(node->name);
      continue;
    }
    const uint64_t cpus = node->cpus_efctv ? node->cpus_efctv : node->cpus;
    const uint64_t memory = node->real_memory > node->mem_spec_limit
                                ? node->real_memory - node->mem_spec_limit
                                : node->real_memory;
    if (!cluster_.AddNode(node->name, cpus * 1000, memory, devs.types).ok()) continue;
    uint16_t alloc_cpus = 0;
    uint64_t alloc_memory = 0;
    if (cons_tres) VgpuNodeAllocated(*cons_tres, node, &alloc_cpus, &alloc_memory);
    const uint32_t index = static_cast<uint32_t>(cluster_.size() - 1);
    const uint64_t cpu_free = alloc_cpus >= cpus ? 0 : (cpus - alloc_cpus) * 1000;
    const uint64_t mem_free = alloc_memory >= memory ? 0 : memory - alloc_memory;
    (void)cluster_.SetFree(index, cpu_free, mem_free, devs.free);
    cluster_index_[i] = static_cast<int>(index);
    slices_.emplace_back();
    for (size_t t = 0; t < devs.geometry.size(); ++t)
      if (devs.geometry[t]) {
        slices_.back().resize(devs.geometry.size(), {nullptr, 0});
        slices_.back()[t] = {devs.geometry[t], devs.Taken(t)};
      }
    node_index_.push_back(i);
  }
}

const std::vector<uint64_t>& ClusterView::HeldCpuMilli(list_t* jobs) const {
  if (held_cpu_milli_) return *held_cpu_milli_;
  std::vector<uint64_t> held(cluster_.size(), 0);
  if (jobs) {
    list_itr_t* it = list_iterator_create(jobs);
    while (auto* job = static_cast<job_record_t*>(list_next(it))) {
      const job_resources_t* jr = job->job_resrcs;
      if (!(IS_JOB_RUNNING(job) || IS_JOB_SUSPENDED(job)) || !jr || !jr->node_bitmap || !jr->cpus)
        continue;
      uint32_t k = 0;
      for (int64_t n = bit_ffs(jr->node_bitmap); n >= 0 && n < bit_size(jr->node_bitmap) && k < jr->nhosts;
           ++n) {
        if (!bit_test(jr->node_bitmap, n)) continue;
        const int ci = ClusterIndex(static_cast<int>(n));
        if (ci >= 0) held[ci] += uint64_t{jr->cpus[k]} * 1000;
        ++k;
      }
    }
    list_iterator_destroy(it);
  }
  held_cpu_milli_ = std::move(held);
  return *held_cpu_milli_;
}

NodeState ClusterView::NodeFor(uint32_t cluster_index, uint32_t per) const {
  NodeState node = cluster_.node(cluster_index);
  const auto& slices = slices_[cluster_index];
  for (size_t t = 0; t < slices.size() && t < node.devices.size(); ++t)
    if (slices[t].first && !slices[t].first->Choose(slices[t].second, per)) node.devices[t].free = 0;
  return node;
}

int ClusterView::ClusterIndex(int node_index) const {
  if (node_index < 0 || node_index >= static_cast<int>(cluster_index_.size())) return -1;
  return cluster_index_[node_index];
}

}  // namespace select_pool
}  // namespace vgpu
