#include "placement/node_ranking.h"

#include <algorithm>
#include <cmath>

#include "placement/placement_internal.h"

namespace vgpu {

Result<std::vector<uint32_t>> RankNodes(PlacementPolicy& policy, const ClusterState& cluster,
                                        const Request& req,
                                        const std::vector<DeviceType>& preference,
                                        const std::vector<bool>& candidates) {
  using R = Result<std::vector<uint32_t>>;
  std::vector<std::vector<DeviceType>> groups;
  if (req.types.empty())
    for (DeviceType t : preference) groups.push_back({t});
  groups.push_back(req.types);

  std::vector<uint32_t> order;
  std::vector<bool> listed(cluster.size(), false);
  std::vector<double> scores;
  for (const auto& types : groups) {
    Request r = req;
    r.types = types;
    Status st = policy.Scores(cluster, r, &scores);
    if (!st.ok()) return R::Error(st.message());
    std::vector<uint32_t> level;
    for (uint32_t i = 0; i < cluster.size() && i < scores.size(); ++i) {
      if (listed[i] || std::isnan(scores[i])) continue;
      if (!candidates.empty() && (i >= candidates.size() || !candidates[i])) continue;
      level.push_back(i);
    }
    std::stable_sort(level.begin(), level.end(),
                     [&](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
    for (uint32_t i : level) {
      listed[i] = true;
      order.push_back(i);
    }
  }
  return order;
}

int64_t LeastSharedCpus(const ClusterState& cluster, const std::vector<uint32_t>& order, const Request& req,
                        const std::vector<DeviceType>& preference,
                        const std::vector<uint64_t>& held_cpu_milli) {
  if (order.empty() || order.front() >= cluster.size()) return -1;
  const uint32_t best = order.front();
  const uint32_t spd = cluster.shares_per_device();
  Request same_type = req;
  if (same_type.types.empty()) {
    const NodeState& n = cluster.node(best);
    auto chosen = ChooseDevicesInOrder(n, req, spd, DeviceLevels(n, {}, preference, {}));
    if (!chosen.empty()) same_type.types = {n.devices[chosen.front()].type};
  }
  int64_t found = -1;
  uint64_t found_row = 0;
  for (uint32_t i : order) {
    if (i >= cluster.size()) continue;
    const NodeState& n = cluster.node(i);
    if (n.cpu_total == 0 || ChooseDevicesOnNode(n, same_type, spd).empty()) continue;
    const uint64_t held = i < held_cpu_milli.size()
                              ? held_cpu_milli[i]
                              : n.cpu_total - std::min(n.cpu_free, n.cpu_total);
    const uint64_t row = (held + req.cpu_milli + n.cpu_total - 1) / n.cpu_total;
    if (found < 0 || row < found_row) {
      found = i;
      found_row = row;
      if (row <= 1) break;  // idle cores: nothing later in order does better
    }
  }
  return found < 0 ? best : found;
}

int64_t ChosenNode(const ClusterState& cluster, const std::vector<uint32_t>& order, const Request& req,
                   bool shares_cores, const std::vector<DeviceType>& preference,
                   const std::vector<uint64_t>& held_cpu_milli) {
  if (order.empty() || order.front() >= cluster.size()) return -1;
  if (shares_cores) return LeastSharedCpus(cluster, order, req, preference, held_cpu_milli);
  return order.front();
}

std::vector<std::vector<bool>> DeviceLevels(const NodeState& node,
                                            const std::vector<DeviceType>& allowed,
                                            const std::vector<DeviceType>& preference,
                                            const std::vector<bool>& local) {
  std::vector<std::vector<DeviceType>> groups;
  if (allowed.empty())
    for (DeviceType t : preference) groups.push_back({t});
  groups.push_back(allowed);

  std::vector<std::vector<bool>> levels;
  auto add = [&levels](std::vector<bool> mask) {
    if (std::none_of(mask.begin(), mask.end(), [](bool b) { return b; })) return;
    if (std::find(levels.begin(), levels.end(), mask) != levels.end()) return;
    levels.push_back(std::move(mask));
  };
  const size_t n = node.devices.size();
  for (const auto& types : groups) {
    std::vector<bool> of_type(n), near(n);
    for (size_t d = 0; d < n; ++d) {
      of_type[d] = TypeAllowed(types, node.devices[d].type);
      near[d] = of_type[d] && d < local.size() && local[d];
    }
    add(near);
    add(of_type);
  }
  return levels;
}

int64_t EarliestFit(NodeState node, const Request& req, uint32_t shares_per_device,
                    std::vector<ShareRelease> releases, int64_t now) {
  if (!ChooseDevicesOnNode(node, req, shares_per_device).empty()) return now;
  std::stable_sort(releases.begin(), releases.end(),
                   [](const ShareRelease& a, const ShareRelease& b) { return a.time < b.time; });
  for (size_t i = 0; i < releases.size(); ++i) {
    const ShareRelease& r = releases[i];
    for (size_t d = 0; d < r.shares.size() && d < node.devices.size(); ++d)
      node.devices[d].free = std::min(shares_per_device, node.devices[d].free + r.shares[d]);
    // Jobs ending at the same moment free their shares together.
    if (i + 1 < releases.size() && releases[i + 1].time == r.time) continue;
    if (!ChooseDevicesOnNode(node, req, shares_per_device).empty()) return std::max(r.time, now);
  }
  return -1;
}

}  // namespace vgpu
