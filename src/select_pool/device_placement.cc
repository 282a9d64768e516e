#include "device_placement.h"

#include <string>
#include <vector>

#include "placement.h"

extern "C" {
#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xstring.h"
}

namespace vgpu {
namespace select_pool {
namespace {

gres_node_state_t* VgpuOfNode(node_record_t* node, uint32_t vgpu_id) {
  if (!node || !node->gres_list) return nullptr;
  ListIterator it = list_iterator_create(node->gres_list);
  gres_node_state_t* found = nullptr;
  while (auto* gs = static_cast<gres_state_t*>(list_next(it)))
    if (gs->plugin_id == vgpu_id) found = static_cast<gres_node_state_t*>(gs->gres_data);
  list_iterator_destroy(it);
  return found;
}

// One node's devices (topology records) as the engine sees them: free
// shares from the node's allocated bits, type 0 for devices the job may
// use, 1 for the others.
struct NodeDevices {
  NodeState state;
  std::vector<bitstr_t*> bits;  // each device's bits (topo_gres_bitmap)
  uint32_t shares_per_device = 0;
};

// `cons_tres_bits`: for an untyped request, keep to the type of the device
// cons_tres's bits start on (null: any type). `capacity`: every device as if
// free (will-run and test-only questions), else what is free now.
bool DescribeNode(const gres_node_state_t* ns, const char* want_type, bitstr_t* cons_tres_bits,
                  bool capacity, NodeDevices* out) {
  if (!ns->topo_cnt || !ns->topo_gres_bitmap) return false;
  // An untyped request stays on the type cons_tres picked: Slurm accounts
  // the job's type from its bits' topology, and moving across types would
  // change what sacct shows after the fact.
  std::string type = want_type ? want_type : "";
  int64_t first = cons_tres_bits ? bit_ffs(cons_tres_bits) : -1;
  for (uint16_t t = 0; type.empty() && t < ns->topo_cnt; ++t)
    if (first >= 0 && ns->topo_gres_bitmap[t] && bit_test(ns->topo_gres_bitmap[t], first) &&
        ns->topo_type_name && ns->topo_type_name[t])
      type = ns->topo_type_name[t];
  for (uint16_t t = 0; t < ns->topo_cnt; ++t) {
    bitstr_t* dev = ns->topo_gres_bitmap[t];
    if (!dev) return false;
    uint32_t size = static_cast<uint32_t>(bit_set_count(dev));
    if (out->shares_per_device == 0) out->shares_per_device = size;
    if (size != out->shares_per_device) return false;  // not a vgpu layout
    uint32_t used = !capacity && ns->gres_bit_alloc
                        ? static_cast<uint32_t>(bit_overlap(dev, ns->gres_bit_alloc))
                        : 0;
    DeviceState d;
    const char* name = ns->topo_type_name ? ns->topo_type_name[t] : nullptr;
    d.type = (type.empty() || (name && !xstrcasecmp(name, type.c_str()))) ? 0 : 1;
    d.free = size - used;
    out->state.devices.push_back(d);
    out->bits.push_back(dev);
  }
  return out->shares_per_device > 0;
}

// Rewrites `select` to `per` free bits of each chosen device.
void SelectBits(const gres_node_state_t* ns, const NodeDevices& nd,
                const std::vector<uint32_t>& devices, uint32_t per, bitstr_t* select) {
  bit_clear_all(select);
  for (uint32_t d : devices) {
    uint32_t taken = 0;
    bitstr_t* dev = nd.bits[d];
    for (int64_t b = bit_ffs(dev); b >= 0 && b < bit_size(dev) && taken < per; ++b) {
      if (!bit_test(dev, b) || (ns->gres_bit_alloc && bit_test(ns->gres_bit_alloc, b))) continue;
      bit_set(select, b);
      ++taken;
    }
  }
}

}  // namespace

int PlaceOnDevices(job_record_t* job) {
  if (!job->gres_list_req || !job->job_resrcs || !job->job_resrcs->node_bitmap)
    return SLURM_SUCCESS;
  const uint32_t vgpu_id = gres_build_id(const_cast<char*>("vgpu"));
  ListIterator it = list_iterator_create(job->gres_list_req);
  int rc = SLURM_SUCCESS;
  while (auto* gs = static_cast<gres_state_t*>(list_next(it))) {
    if (gs->plugin_id != vgpu_id) continue;
    auto* js = static_cast<gres_job_state_t*>(gs->gres_data);
    if (!js || !js->gres_bit_select) continue;
    bitstr_t* nodes = job->job_resrcs->node_bitmap;
    for (int64_t n = bit_ffs(nodes); n >= 0 && n < bit_size(nodes); ++n) {
      if (!bit_test(nodes, n) || n >= static_cast<int64_t>(js->total_node_cnt)) continue;
      bitstr_t* select = js->gres_bit_select[n];
      if (!select) continue;
      const uint32_t count = static_cast<uint32_t>(bit_set_count(select));
      node_record_t* node = node_record_table_ptr[n];
      gres_node_state_t* ns = VgpuOfNode(node, vgpu_id);
      NodeDevices nd;
      if (!count || !ns || !DescribeNode(ns, js->type_name, select, false, &nd)) continue;
      Request req;
      req.shares = count;
      req.types = {0};
      std::vector<uint32_t> devices = ChooseDevicesOnNode(nd.state, req, nd.shares_per_device);
      if (devices.empty()) {
        info("select/cons_tres_pool: %pJ: no device of %s can take %u shares now; job stays "
             "pending", job, node->name, count);
        rc = ESLURM_NODES_BUSY;
        break;
      }
      SelectBits(ns, nd, devices, RequestSharesPerDevice(req, nd.shares_per_device), select);
    }
    if (rc != SLURM_SUCCESS) break;
  }
  list_iterator_destroy(it);
  return rc;
}

int FilterNodes(job_record_t* job, bitstr_t* candidates, bool run_now) {
  if (!job->gres_list_req || !candidates) return 0;
  const uint32_t vgpu_id = gres_build_id(const_cast<char*>("vgpu"));
  int dropped = 0;
  ListIterator it = list_iterator_create(job->gres_list_req);
  while (auto* gs = static_cast<gres_state_t*>(list_next(it))) {
    if (gs->plugin_id != vgpu_id) continue;
    auto* js = static_cast<gres_job_state_t*>(gs->gres_data);
    if (!js || !js->gres_per_node) continue;
    for (int64_t n = bit_ffs(candidates); n >= 0 && n < bit_size(candidates); ++n) {
      if (!bit_test(candidates, n) || n >= node_record_count) continue;
      gres_node_state_t* ns = VgpuOfNode(node_record_table_ptr[n], vgpu_id);
      NodeDevices nd;
      // No vgpu device layout known yet (not registered): cons_tres decides.
      if (!ns || !DescribeNode(ns, js->type_name, nullptr, !run_now, &nd)) continue;
      Request req;
      req.shares = static_cast<uint32_t>(js->gres_per_node);
      req.types = {0};
      if (ChooseDevicesOnNode(nd.state, req, nd.shares_per_device).empty()) {
        bit_clear(candidates, n);
        ++dropped;
      }
    }
  }
  list_iterator_destroy(it);
  return dropped;
}

}  // namespace select_pool
}  // namespace vgpu
