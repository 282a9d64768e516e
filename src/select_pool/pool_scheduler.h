// What select/cons_tres_pool adds to cons_tres, job by job, in slurmctld:
//  * job_test: drop nodes where a request fits on no single device; for a
//    one-node job starting now, try first the node the configured
//    PlacementPolicy ranks best (untyped requests: TypePreference first);
//  * job_begin: move each node's share bits onto the device(s) chosen on
//    that node (preferred type, then devices local to the job's cores,
//    tightest fit first);
//  * will-run (backfill, --test-only, squeue --start): a start time that
//    waits for a device to have room, not for enough free bits.
// The job's GRES bitmap is the placement: nothing is kept here but the
// settings, the policy and its workload model (statistics of the jobs
// slurmctld holds, rebuilt at most once a minute), and the last snapshot
// of the nodes while none has changed.
#ifndef VGPU_SELECT_POOL_POOL_SCHEDULER_H_
#define VGPU_SELECT_POOL_POOL_SCHEDULER_H_

#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/vgpu_config.h"
#include "cons_tres_ops.h"
#include "node_view.h"
#include "placement/placement.h"
#include "placement/type_reservation.h"

namespace vgpu {
namespace select_pool {

class PoolScheduler {
 public:
  // `config`: vgpu.conf as read; a policy name the engine does not know
  // falls back to the default with an error in the log; the chip catalog
  // is read from its ChipCatalogDir for the models it slices.
  PoolScheduler(const VgpuConfig& config, const ConsTresOps* cons_tres);

  // cons_tres's job_test for the job at hand, on the nodes of a bitmap; the
  // rest of its arguments (which differ between Slurm releases) bound.
  using ConsTresJobTest = std::function<int(bitstr_t* nodes)>;

  // select_p_job_test. Calls `cons_tres_job_test` (once, or twice when the
  // ranked node alone does not do) and returns its result.
  int JobTest(job_record_t* job, bitstr_t* bitmap, uint32_t min_nodes, uint32_t req_nodes,
              uint16_t mode, list_t* preemptee_candidates, const ConsTresJobTest& cons_tres_job_test);

  // select_p_job_begin, before cons_tres's: SLURM_SUCCESS, or
  // ESLURM_NODES_BUSY when some node's share of the job fits on no device
  // (the job stays pending, nothing changed).
  int PlaceOnDevices(job_record_t* job);

 private:
  // Clears nodes where a vgpu request fits on no device (now, or with
  // every device free for will-run and test-only). Nodes whose layout is
  // not known yet: cleared when starting now (their devices cannot be
  // checked), left to cons_tres otherwise.
  // `view`, when given, is a snapshot of now taken for this job_test.
  void FilterNodes(const job_record_t* job, bitstr_t* bitmap, bool run_now,
                   const ClusterView* view) const;
  // Will-run: cons_tres counts free bits per node, so a node with 60+30
  // free shares answers "80 can start now". Moves job->start_time to when
  // the shares fit on devices of each chosen node, as running jobs end.
  void CorrectStartTime(job_record_t* job, const bitstr_t* nodes) const;
  // Whether a node is ranked for the job: one node, one vgpu request, no
  // preemption, no nodes the user named.
  static bool Ranks(const job_record_t* job, uint32_t min_nodes, uint32_t req_nodes,
                    list_t* preemptee_candidates);
  // The node to try first among `bitmap`'s, ranked on `view`, or -1 to
  // leave the choice to cons_tres.
  int RankedNode(const job_record_t* job, const bitstr_t* bitmap, const ClusterView& view);
  // Every node as now: the view of an earlier job_test while no node has
  // changed since (most job_tests of a scheduling pass start nothing),
  // else a new one.
  const ClusterView& CurrentView();
  PlacementPolicy* PolicyFor(const ClusterState& cluster);
  // Without a TypePreference, pool's untyped requests take the least
  // pressed device type of a node first (TypeReservation): refreshed at
  // each ranking, used when the job's devices are chosen.
  void UpdateUntypedOrder(const ClusterState& cluster);
  const std::vector<std::string>& UntypedOrder() const;

  const ConsTresOps* cons_tres_;
  uint32_t shares_per_device_;
  // Devices counted in slices (the chip catalog's positions of the models
  // HardwareSlicing names), read at construction.
  SlicedModels sliced_;
  std::vector<std::string> type_preference_;
  std::string policy_name_;
  // Built by PolicyFor for the type names of the cluster it was given.
  std::unique_ptr<PlacementPolicy> policy_;
  std::vector<std::string> policy_types_;
  time_t policy_built_ = 0;
  std::optional<TypeReservation> reservation_;  // pool's, when some demand is pinned
  std::vector<std::string> untyped_order_;
  std::optional<ClusterView> view_;
  time_t view_built_ = 0;
  int view_node_count_ = -1;
  const void* view_table_ = nullptr;
};

}  // namespace select_pool
}  // namespace vgpu

#endif  // VGPU_SELECT_POOL_POOL_SCHEDULER_H_
