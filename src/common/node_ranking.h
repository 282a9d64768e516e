// How the select plugin turns the placement engine into choices inside
// slurmctld: which candidate node to try first for a job, and which devices
// of the chosen node take its shares. Pure functions over engine values;
// the Slurm side (src/select_pool) builds those values from node records.
#ifndef VGPU_COMMON_NODE_RANKING_H_
#define VGPU_COMMON_NODE_RANKING_H_

#include <cstdint>
#include <vector>

#include "placement.h"
#include "status.h"

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

// The device sets ChooseDevicesInOrder should try on `node`, best first:
// for each type group (the request's allowed types when it names any;
// else each preferred type alone, then any type) the devices of that group
// local to the job's cores (`local`, one entry per device; empty = no
// locality known), then all devices of the group.
std::vector<std::vector<bool>> DeviceLevels(const NodeState& node,
                                            const std::vector<DeviceType>& allowed,
                                            const std::vector<DeviceType>& preference,
                                            const std::vector<bool>& local);

}  // namespace vgpu

#endif  // VGPU_COMMON_NODE_RANKING_H_
