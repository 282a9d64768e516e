// Keeping a device type for the requests that can use nothing else.
//
// A fragmentation measure (fgd's F, placement_fgd.h) counts all of a node's
// idle shares as fragmented for every task class whose type list excludes
// the node's type. On a workload where many tasks pin a scarce type, taking
// that type's idle devices with unpinned tasks therefore *lowers* F: fgd
// steers the flexible tasks onto exactly the devices the pinned ones will
// need. TypeReservation prices that.
//
// From the workload: f_t, the share of all device demand (shares, weighted by
// popularity) pinned to type t. A class allowing several types splits its
// demand over them in proportion to the cluster's capacity of each.
// At a decision, the pressure on type t is
//   p_t = f_t * (idle shares of the cluster) / (idle shares of type t),
// the pinned demand's claim on t relative to t's part of what is idle. A
// request allowed the types A that takes x shares of type t costs
//   (p_t - min over a in A of p_a) * x,
// nothing on the least pressed type it may use: an untyped request pays for
// taking a type others are pinned to, a pinned request never pays for its
// own type. With no pinned demand every cost is 0.
#ifndef VGPU_PLACEMENT_TYPE_RESERVATION_H_
#define VGPU_PLACEMENT_TYPE_RESERVATION_H_

#include <cstdint>
#include <vector>

#include "placement/placement.h"

namespace vgpu {

class TypeReservation {
 public:
  // The pinned shares f_t of `model` on `cluster`'s types and capacity.
  TypeReservation(const WorkloadModel& model, const ClusterState& cluster);

  // Some demand is pinned: costs can be non-zero.
  bool active() const { return active_; }
  // Built for this cluster's types and capacity (slurmctld's nodes change).
  bool BuiltFor(const ClusterState& cluster) const;
  double pinned_share(DeviceType t) const { return t < pinned_.size() ? pinned_[t] : 0.0; }

  // Pressures from what is idle on `cluster` now, and the floor of a
  // request allowed `types` (empty: any): once per decision, O(types).
  void Refresh(const ClusterState& cluster, const std::vector<DeviceType>& types);
  // The types with something idle, least pressed first, at the last
  // Refresh: the order in which an untyped request should take them.
  std::vector<DeviceType> TypesByPressure() const;
  // Cost per share of taking type t for the request of the last Refresh.
  double CostPerShare(DeviceType t) const {
    return t < pressure_.size() ? pressure_[t] - floor_ : 0.0;
  }

 private:
  std::vector<double> pinned_;    // f_t, [type]
  std::vector<double> pressure_;  // p_t at the last Refresh
  std::vector<uint64_t> capacity_;  // shares per type when built
  double floor_ = 0;
  bool active_ = false;
};

}  // namespace vgpu

#endif  // VGPU_PLACEMENT_TYPE_RESERVATION_H_
