#include "pool_scheduler.h"

#include <algorithm>
#include <utility>

#include "node_view.h"
#include "job_ends.h"
#include "placement/node_ranking.h"
#include "placement/placement_fgd.h"

// slurmctld's job list: defined only in slurmctld, while slurmd, srun and
// the rest load this plugin too; they never schedule, so never read it.
#pragma weak job_list

namespace vgpu {
namespace select_pool {
namespace {

// How long a workload model is used before it is rebuilt from the jobs
// slurmctld holds, and at most how many jobs it samples.
constexpr time_t kModelLifetime = 60;
constexpr size_t kModelSample = 20000;
// Jobs that ended this recently (and slurmctld still holds, MinJobAge)
// count as recent requests too: with short jobs the backlog alone is small.
constexpr time_t kModelHistory = 600;
constexpr const char kFallbackPolicy[] = "best-fit";

// A copy of a node bitmap, freed with it.
class BitmapCopy {
 public:
  explicit BitmapCopy(const bitstr_t* b) : bits_(bit_copy(const_cast<bitstr_t*>(b))) {}
  ~BitmapCopy() { FREE_NULL_BITMAP(bits_); }
  BitmapCopy(const BitmapCopy&) = delete;
  BitmapCopy& operator=(const BitmapCopy&) = delete;
  bitstr_t* get() const { return bits_; }

 private:
  bitstr_t* bits_;
};

// A single node's devices as a one-node cluster, so that type ids of the
// request, the preference and the devices agree; free as a request of
// `per` shares per device sees them (FreeFor).
ClusterState OneNode(const node_record_t* node, const VgpuDevices& devs, bool capacity, uint32_t per) {
  ClusterState c(devs.shares_per_device);
  (void)c.AddNode(node->name, 0, 0, devs.types);
  (void)c.SetFree(0, 0, 0, FreeFor(devs, per, capacity));
  return c;
}

// The policy named prices device types (pool, unless reserve=0).
bool ReservesTypes(const std::string& policy) {
  const size_t colon = policy.find(':');
  if (policy.substr(0, colon) != "pool") return false;
  if (colon == std::string::npos) return PoolParams{}.reserve > 0;
  Result<PoolParams> p = ParsePoolParams(policy.substr(colon + 1));
  return p.ok() && p->reserve > 0;
}

std::vector<DeviceType> KnownTypes(const ClusterState& c, const std::vector<std::string>& names) {
  std::vector<DeviceType> out;
  for (const auto& n : names)
    if (c.FindType(n) != kUnknownType) out.push_back(c.FindType(n));
  return out;
}

std::vector<DeviceType> RequestTypes(const ClusterState& c, const gres_job_state_t* js) {
  if (!js->type_name || !js->type_name[0]) return {};
  return c.TypesOf({js->type_name});
}

// Devices whose local cores the job holds on the job's `job_node`-th node.
// A device without core affinity counts as local.
std::vector<bool> LocalDevices(const job_record_t* job, int job_node, const VgpuDevices& devs) {
  std::vector<bool> local(devs.bits.size(), false);
  const job_resources_t* jr = job->job_resrcs;
  if (!jr || !jr->core_bitmap || job_node < 0 || static_cast<uint32_t>(job_node) >= jr->nhosts)
    return {};
  auto* res = const_cast<job_resources_t*>(jr);
  const int64_t start = get_job_resources_offset(res, job_node, 0, 0);
  const int64_t end = static_cast<uint32_t>(job_node + 1) < jr->nhosts
                          ? get_job_resources_offset(res, job_node + 1, 0, 0)
                          : bit_size(jr->core_bitmap);
  if (start < 0) return {};
  for (size_t t = 0; t < devs.bits.size(); ++t) {
    bitstr_t* cores = devs.cores[t];
    if (!cores) {
      local[t] = true;
      continue;
    }
    for (int64_t c = bit_ffs(cores); c >= 0 && c < bit_size(cores) && start + c < end; ++c)
      if (bit_test(cores, c) && bit_test(jr->core_bitmap, start + c)) {
        local[t] = true;
        break;
      }
  }
  return local;
}

// Rewrites `select` to `per` free bits of each chosen device: on a sliced
// device, the lowest of the slice position chosen for them (the prolog
// cuts the slice there); false when a sliced device has no position left.
bool SelectBits(const VgpuDevices& devs, const std::vector<uint32_t>& chosen, uint32_t per, bitstr_t* select) {
  std::vector<std::optional<SlicePlacement>> at(chosen.size());
  for (size_t i = 0; i < chosen.size(); ++i) {
    const SliceGeometry* g = devs.geometry[chosen[i]];
    if (g && !(at[i] = g->Choose(devs.Taken(chosen[i]), per))) return false;
  }
  const bitstr_t* alloc = devs.gres->gres_bit_alloc;
  bit_clear_all(select);
  for (size_t i = 0; i < chosen.size(); ++i) {
    bitstr_t* dev = devs.bits[chosen[i]];
    if (at[i]) {
      const int64_t first = bit_ffs(dev) + at[i]->first_share;
      for (int64_t b = first; b < first + per && b < bit_size(select); ++b) bit_set(select, b);
      continue;
    }
    uint32_t taken = 0;
    for (int64_t b = bit_ffs(dev); b >= 0 && b < bit_size(dev) && taken < per; ++b) {
      if (!bit_test(dev, b) || (alloc && bit_test(const_cast<bitstr_t*>(alloc), b))) continue;
      bit_set(select, b);
      ++taken;
    }
  }
  return true;
}

// One node's part of one vgpu request of a job, as the engine sees it.
struct NodePart {
  const gres_job_state_t* request = nullptr;
  int64_t node_index = -1;
  const node_record_t* node = nullptr;
  VgpuDevices devices;
  bool known = false;     // device layout known (the rest is empty if not)
  ClusterState one{1};    // the node alone, free now or all free (capacity)
  Request req;            // shares per node and allowed types
};

// Calls fn(NodePart&) for each vgpu request of `job` (with shares per
// node) and each node set in `nodes`.
template <typename F>
void ForEachNodePart(const job_record_t* job, bitstr_t* nodes, bool capacity, const SlicedModels* sliced, F fn) {
  for (const gres_job_state_t* js : VgpuRequests(job)) {
    if (!js->gres_per_node) continue;
    for (int64_t n = bit_ffs(nodes); n >= 0 && n < bit_size(nodes); ++n) {
      if (!bit_test(nodes, n) || n >= node_record_count) continue;
      NodePart part;
      part.request = js;
      part.node_index = n;
      part.node = node_record_table_ptr[n];
      part.known = ReadVgpuDevices(part.node, sliced, &part.devices);
      if (part.known) {
        part.req.shares = static_cast<uint32_t>(js->gres_per_node);
        part.one = OneNode(part.node, part.devices, capacity,
                           RequestSharesPerDevice(part.req, part.devices.shares_per_device));
        part.req.types = RequestTypes(part.one, js);
      }
      fn(part);
    }
  }
}

}  // namespace

PoolScheduler::PoolScheduler(const VgpuConfig& config, const ConsTresOps* cons_tres)
    : cons_tres_(cons_tres),
      shares_per_device_(config.shares_per_device),
      type_preference_(config.type_preference),
      policy_name_(config.placement_policy) {
  bool known = false;
  for (const auto& n : PolicyNames()) known |= (n == policy_name_.substr(0, policy_name_.find(':')));
  if (!known) {
    error("select/cons_tres_pool: vgpu.conf: PlacementPolicy=%s is unknown; using %s",
          policy_name_.c_str(), kDefaultPolicy);
    policy_name_ = kDefaultPolicy;
  }
  if (config.hardware_slicing.empty()) return;
  auto catalog = ChipCatalog::LoadDirectories(config.chip_catalog_dirs);
  if (!catalog.ok()) {
    error("select/cons_tres_pool: %s; devices HardwareSlicing names are counted in shares, not slices",
          catalog.message().c_str());
    return;
  }
  std::vector<std::string> problems = catalog->problems();
  sliced_ = SlicedModels(*catalog, shares_per_device_,
                         [&](const std::string& id, const std::string& type) { return config.SlicesModel(id, type); },
                         &problems);
  for (const std::string& p : problems) error("select/cons_tres_pool: %s", p.c_str());
}

int PoolScheduler::JobTest(job_record_t* job, bitstr_t* bitmap, uint32_t min_nodes, uint32_t req_nodes,
                           uint16_t mode, list_t* preemptee_candidates,
                           const ConsTresJobTest& cons_tres_job_test) {
  const bool run_now = SELECT_IS_MODE_RUN_NOW(mode);
  int first = -1;
  try {
    // One snapshot of every node serves both the filter and the ranking
    // (reading each node's devices is most of the plugin's own time).
    const ClusterView* view = nullptr;
    if (run_now && Ranks(job, min_nodes, req_nodes, preemptee_candidates)) view = &CurrentView();
    FilterNodes(job, bitmap, run_now, view);
    if (view) first = RankedNode(job, bitmap, *view);
  } catch (const std::exception& e) {
    error("select/cons_tres_pool: %pJ: %s; leaving the choice to cons_tres", job, e.what());
  }
  if (first >= 0) {
    bitstr_t* one = bit_alloc(bit_size(bitmap));
    bit_set(one, first);
    int rc = cons_tres_job_test(one);
    if (rc == SLURM_SUCCESS) {
      bit_copybits(bitmap, one);
      FREE_NULL_BITMAP(one);
      return rc;
    }
    FREE_NULL_BITMAP(one);
  }
  int rc = cons_tres_job_test(bitmap);
  if (rc == SLURM_SUCCESS && SELECT_IS_MODE_WILL_RUN(mode)) {
    try {
      CorrectStartTime(job, bitmap);
    } catch (const std::exception& e) {
      error("select/cons_tres_pool: %pJ: start time: %s", job, e.what());
    }
  }
  return rc;
}

void PoolScheduler::CorrectStartTime(job_record_t* job, const bitstr_t* nodes) const {
  const time_t now = time(nullptr);
  // Far enough that backfill (window: days) plans nothing on it.
  const time_t never = now + 365 * 24 * 3600;
  time_t start = job->start_time;
  ForEachNodePart(job, const_cast<bitstr_t*>(nodes), false, &sliced_, [&](NodePart& p) {
    const uint32_t s = p.devices.shares_per_device;
    if (!p.known || !ChooseDevicesOnNode(p.one.node(0), p.req, s).empty()) return;
    const std::vector<HeldUntil> held = RunningHolds(static_cast<int>(p.node_index), p.devices);
    const int64_t at = EarliestFitAsJobsEnd(p.node, p.devices, p.req, held, now);
    start = std::max<time_t>(start, at < 0 ? never : static_cast<time_t>(at));
  });
  if (start != job->start_time) {
    debug("select/cons_tres_pool: %pJ: will-run start moved to %ld (devices full until then)",
          job, static_cast<long>(start));
    job->start_time = start;
  }
}

void PoolScheduler::FilterNodes(const job_record_t* job, bitstr_t* bitmap, bool run_now,
                                const ClusterView* view) const {
  // Nodes the view holds are judged on it; the rest (not in it: layout not
  // known, or devices of another size) one by one below.
  BitmapCopy rest(bitmap);
  if (view) {
    const ClusterState& cluster = view->cluster();
    for (const gres_job_state_t* js : VgpuRequests(job)) {
      if (!js->gres_per_node) continue;
      Request req;
      req.shares = static_cast<uint32_t>(js->gres_per_node);
      req.types = RequestTypes(cluster, js);
      for (int64_t n = bit_ffs(bitmap); n >= 0 && n < bit_size(bitmap); ++n) {
        const int ci = bit_test(bitmap, n) ? view->ClusterIndex(static_cast<int>(n)) : -1;
        if (ci < 0) continue;
        bit_clear(rest.get(), n);
        const uint32_t s = cluster.shares_per_device();
        const uint32_t at = static_cast<uint32_t>(ci);
        const bool fits = view->HasSlices(at)
                              ? !ChooseDevicesOnNode(view->NodeFor(at, RequestSharesPerDevice(req, s)), req, s).empty()
                              : !ChooseDevicesOnNode(cluster.node(at), req, s).empty();
        if (!fits) bit_clear(bitmap, n);
      }
    }
  }
  ForEachNodePart(job, rest.get(), !run_now, &sliced_, [&](NodePart& p) {
    if (!p.known) {
      // Configured with vgpu but its devices not known since slurmctld
      // started: cons_tres could only pick bits blindly.
      if (run_now && p.devices.gres && p.devices.gres->gres_cnt_config) {
        debug("select/cons_tres_pool: %pJ: %s has not registered its vgpu devices yet", job,
              p.node->name);
        bit_clear(bitmap, p.node_index);
      }
      return;
    }
    if (ChooseDevicesOnNode(p.one.node(0), p.req, p.devices.shares_per_device).empty())
      bit_clear(bitmap, p.node_index);
  });
}

bool PoolScheduler::Ranks(const job_record_t* job, uint32_t min_nodes, uint32_t req_nodes,
                          list_t* preemptee_candidates) {
  if (min_nodes > 1 || req_nodes > 1) return false;
  if (preemptee_candidates && list_count(preemptee_candidates) > 0) return false;
  if (job->details && job->details->req_node_bitmap) return false;  // the user chose
  std::vector<gres_job_state_t*> vgpu = VgpuRequests(job);
  return vgpu.size() == 1 && vgpu[0]->gres_per_node;
}

const ClusterView& PoolScheduler::CurrentView() {
  const time_t now = time(nullptr);
  // Every change of a node's allocation (a job starts, ends, is suspended)
  // and of its configuration sets last_node_update to the second it
  // happened: a view built in an earlier second than the last change is
  // stale. Kept at most a second or two, in case a change slips by.
  const bool fresh = view_ && last_node_update < view_built_ && now - view_built_ <= 1 &&
                     view_node_count_ == node_record_count && view_table_ == node_record_table_ptr;
  if (fresh) return *view_;
  ClusterView view(shares_per_device_, cons_tres_, &sliced_);
  // Nodes unchanged since the last view keep their generation, so the
  // policy's memo of them stays valid.
  if (view_) view.KeepGenerationsOf(*view_);
  view_ = std::move(view);
  view_built_ = now;
  view_node_count_ = node_record_count;
  view_table_ = node_record_table_ptr;
  return *view_;
}

int PoolScheduler::RankedNode(const job_record_t* job, const bitstr_t* bitmap, const ClusterView& view) {
  std::vector<gres_job_state_t*> vgpu = VgpuRequests(job);
  const ClusterState& cluster = view.cluster();
  if (cluster.size() == 0) return -1;
  std::vector<bool> candidates(cluster.size(), false);
  for (uint32_t i = 0; i < cluster.size(); ++i) {
    const int n = view.NodeIndex(i);
    candidates[i] = n < bit_size(const_cast<bitstr_t*>(bitmap)) &&
                    bit_test(const_cast<bitstr_t*>(bitmap), n);
  }
  PlacementPolicy* policy = PolicyFor(cluster);
  if (!policy) return -1;
  UpdateUntypedOrder(cluster);
  Request req = RequestOf(job, vgpu[0], cluster);
  auto order = RankNodes(*policy, cluster, req, KnownTypes(cluster, type_preference_), candidates);
  if (!order.ok()) {
    debug("select/cons_tres_pool: %pJ: %s", job, order.message().c_str());
    return -1;
  }
  // A job that may share cores goes, like under cons_tres, where the
  // fewest jobs hold its CPUs (idle ones first), on the type the policy chose.
  const bool shares_cores = SharesCores(job);
  if (shares_cores) req.cpu_milli = JobCpus(job) * 1000;
  const std::vector<uint64_t> none_held;
  const std::vector<uint64_t>& held =
      shares_cores ? view.HeldCpuMilli(&job_list ? job_list : nullptr) : none_held;
  const int64_t chosen = ChosenNode(cluster, *order, req, shares_cores, KnownTypes(cluster, UntypedOrder()), held);
  return chosen < 0 ? -1 : view.NodeIndex(static_cast<uint32_t>(chosen));
}

PlacementPolicy* PoolScheduler::PolicyFor(const ClusterState& cluster) {
  std::vector<std::string> types;
  for (size_t t = 0; t < cluster.type_count(); ++t) types.push_back(cluster.TypeName(t));
  const time_t now = time(nullptr);
  if (policy_ && types == policy_types_ && now - policy_built_ < kModelLifetime) return policy_.get();

  // The workload model: one request per job slurmctld holds (pending,
  // running or ended in the last kModelHistory seconds; one node), CPU-only
  // jobs included, as fgd and pool expect. A type named in --gres pins the
  // request; an untyped one (TypePreference only orders its types) is free.
  std::vector<Request> seen;
  bool any_shares = false;
  if (!&job_list || !job_list) return nullptr;
  list_itr_t* it = list_iterator_create(job_list);
  while (auto* job = static_cast<job_record_t*>(list_next(it))) {
    if (seen.size() >= kModelSample) break;
    const bool recent = IS_JOB_FINISHED(job) && job->end_time >= now - kModelHistory;
    if (!(IS_JOB_PENDING(job) || IS_JOB_RUNNING(job) || recent) || !job->details) continue;
    if (job->details->min_nodes > 1) continue;
    std::vector<gres_job_state_t*> vgpu = VgpuRequests(job);
    Request r = RequestOf(job, vgpu.empty() ? nullptr : vgpu[0], cluster);
    r.memory_mib = 0;
    if (!ValidateRequest(r, cluster.shares_per_device()).ok()) continue;
    if (!r.types.empty() && r.types[0] == kUnknownType) continue;
    any_shares |= r.shares > 0;
    seen.push_back(std::move(r));
  }
  list_iterator_destroy(it);

  PolicyOptions options;
  std::string name = policy_name_;
  if (any_shares) {
    auto model = WorkloadModel::FromRequests(seen, cluster.shares_per_device(), 1.0);
    if (model.ok()) options.workload = std::make_shared<const WorkloadModel>(std::move(model).value());
  }
  auto made = MakePolicy(name, options);
  if (!made.ok()) {  // fgd and pool with no vgpu job seen yet
    name = kFallbackPolicy;
    made = MakePolicy(name, options);
  }
  if (!made.ok()) {
    error("select/cons_tres_pool: no placement policy: %s", made.message().c_str());
    policy_.reset();
    return nullptr;
  }
  reservation_.reset();
  std::string pinned;
  if (options.workload) {
    reservation_.emplace(*options.workload, cluster);
    for (size_t t = 0; t < cluster.type_count(); ++t) {
      const double f = reservation_->pinned_share(static_cast<DeviceType>(t));
      if (f > 0) pinned += " " + cluster.TypeName(t) + " " + std::to_string(static_cast<int>(f * 100 + 0.5)) + "%";
    }
    if (!reservation_->active() || !ReservesTypes(name)) reservation_.reset();
  }
  debug("select/cons_tres_pool: policy %s built from %zu jobs; demand pinned to a type:%s", name.c_str(),
        seen.size(), pinned.empty() ? " none" : pinned.c_str());
  policy_ = std::move(made).value();
  policy_types_ = types;
  // A fallback is retried as soon as jobs may have arrived.
  policy_built_ = name == policy_name_ ? now : 0;
  return policy_.get();
}

void PoolScheduler::UpdateUntypedOrder(const ClusterState& cluster) {
  untyped_order_.clear();
  if (!type_preference_.empty() || !reservation_ || !reservation_->BuiltFor(cluster)) return;
  reservation_->Refresh(cluster, {});
  for (DeviceType t : reservation_->TypesByPressure()) untyped_order_.push_back(cluster.TypeName(t));
}

const std::vector<std::string>& PoolScheduler::UntypedOrder() const {
  return type_preference_.empty() ? untyped_order_ : type_preference_;
}

int PoolScheduler::PlaceOnDevices(job_record_t* job) {
  const job_resources_t* jr = job->job_resrcs;
  if (!jr || !jr->node_bitmap) return SLURM_SUCCESS;
  for (gres_job_state_t* js : VgpuRequests(job)) {
    if (!js->gres_bit_select) continue;
    int job_node = -1;
    for (int64_t n = bit_ffs(jr->node_bitmap); n >= 0 && n < bit_size(jr->node_bitmap); ++n) {
      if (!bit_test(jr->node_bitmap, n)) continue;
      ++job_node;
      if (n >= static_cast<int64_t>(js->total_node_cnt)) continue;
      bitstr_t* select = js->gres_bit_select[n];
      const node_record_t* node = node_record_table_ptr[n];
      VgpuDevices devs;
      if (!select || !ReadVgpuDevices(node, &sliced_, &devs)) continue;
      const uint32_t count = static_cast<uint32_t>(bit_set_count(select));
      if (!count) continue;
      Request req;
      req.shares = count;
      ClusterState one = OneNode(node, devs, false, RequestSharesPerDevice(req, devs.shares_per_device));
      req.types = RequestTypes(one, js);
      auto levels = DeviceLevels(one.node(0), req.types, KnownTypes(one, UntypedOrder()),
                                 LocalDevices(job, job_node, devs));
      std::vector<uint32_t> chosen =
          ChooseDevicesInOrder(one.node(0), req, devs.shares_per_device, levels);
      if (chosen.empty()) {
        info("select/cons_tres_pool: %pJ: no device of %s can take %u shares now; job stays "
             "pending", job, node->name, count);
        return ESLURM_NODES_BUSY;
      }
      if (!SelectBits(devs, chosen, RequestSharesPerDevice(req, devs.shares_per_device), select)) {
        info("select/cons_tres_pool: %pJ: no slice position of %s is free for %u shares now; job "
             "stays pending", job, node->name, count);
        return ESLURM_NODES_BUSY;
      }
    }
  }
  return SLURM_SUCCESS;
}

}  // namespace select_pool
}  // namespace vgpu
