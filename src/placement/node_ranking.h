// How the select plugin turns the placement engine into choices inside
// slurmctld: which candidate node to try first for a job, and which devices
// of the chosen node take its shares. Pure functions over engine values;
// the Slurm side (src/select_pool) builds those values from node records.
#ifndef VGPU_PLACEMENT_NODE_RANKING_H_
#define VGPU_PLACEMENT_NODE_RANKING_H_

#include <cstdint>
#include <vector>

#include "placement/placement.h"
#include "util/status.h"

namespace vgpu {

// The nodes of `cluster` where one node's part of `req` fits now, best
// first. `policy` scores them (higher first; equal scores: lower index).
// An untyped request (req.types empty) follows `preference`: nodes where
// the first preferred type fits come first, then those of the second, and
// so on, then every other node where it fits with any type. A typed
// request ignores `preference`. `candidates`, when not empty, limits the
// nodes considered (true = may be used; one entry per node).
Result<std::vector<uint32_t>> RankNodes(PlacementPolicy& policy, const ClusterState& cluster,
                                        const Request& req,
                                        const std::vector<DeviceType>& preference,
                                        const std::vector<bool>& candidates);

// For a job that may share cores (OverSubscribe=FORCE): of the nodes of
// `order` (RankNodes' answer for `cluster` and `req`) where `req` fits on
// the device type the first node of `order` would give it (an untyped
// request: by `preference`, as DeviceLevels orders it), the one whose
// cores the job would share with the fewest others: the lowest
// ceil((held + req.cpu_milli) / cpu_total), where `held_cpu_milli[i]` is
// the CPUs the jobs running on node i hold, each job counted (shared cores
// once per job). Ties go to the earlier node of `order`; -1 when `order`
// is empty. This is the row cons_tres would put the job in: idle cores
// anywhere before a shared core, and once every node's cores are held,
// the node with the fewest sharers. A ranking that leaves CPUs out of its
// scores (RequestOf in src/select_pool) would otherwise stack such jobs on
// the best-ranked node, and in Slurm one slurmd then launches them all
// while the others idle. The type stays the policy's choice: idle cores do
// not outweigh a type it keeps for others. `held_cpu_milli` empty or too
// short: held = cpu_total - cpu_free (cons_tres's count, which stops at
// the node's CPUs).
int64_t LeastSharedCpus(const ClusterState& cluster, const std::vector<uint32_t>& order, const Request& req,
                        const std::vector<DeviceType>& preference,
                        const std::vector<uint64_t>& held_cpu_milli);

// The node a one-node job goes to, by RankNodes' `order`: its first node,
// or LeastSharedCpus for a job that may share cores (`shares_cores`);
// -1 when `order` is empty (no candidate node fits the job now: slurmctld
// asks about such jobs too, e.g. when the only node of the type asked for
// is drained), else an index below cluster.size().
int64_t ChosenNode(const ClusterState& cluster, const std::vector<uint32_t>& order, const Request& req,
                   bool shares_cores, const std::vector<DeviceType>& preference,
                   const std::vector<uint64_t>& held_cpu_milli = {});

// The device sets ChooseDevicesInOrder should try on `node`, best first:
// for each type group (the request's allowed types when it names any;
// else each preferred type alone, then any type) the devices of that group
// local to the job's cores (`local`, one entry per device; empty = no
// locality known), then all devices of the group.
std::vector<std::vector<bool>> DeviceLevels(const NodeState& node,
                                            const std::vector<DeviceType>& allowed,
                                            const std::vector<DeviceType>& preference,
                                            const std::vector<bool>& local);

// Shares that running jobs give back on a node when they end.
struct ShareRelease {
  int64_t time = 0;              // when (the job's expected end)
  std::vector<uint32_t> shares;  // per device of the node
};

// When one node's part of `req` can start on `node` if jobs end as
// `releases` say (devices only; CPU and memory are cons_tres's): `now` if
// it fits already, else the first release time after which it fits, or -1
// if it fits not even when they have all ended. slurmctld's will-run
// answers (backfill, --test-only, squeue --start) count free GRES bits per
// node; a node with 60+30 free shares "fits" 80 by that count, so they need
// this correction.
int64_t EarliestFit(NodeState node, const Request& req, uint32_t shares_per_device,
                    std::vector<ShareRelease> releases, int64_t now);

}  // namespace vgpu

#endif  // VGPU_PLACEMENT_NODE_RANKING_H_
