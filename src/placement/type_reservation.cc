// Pinned shares per device type and their pressure (see type_reservation.h).
#include "placement/type_reservation.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vgpu {

TypeReservation::TypeReservation(const WorkloadModel& model, const ClusterState& c) {
  const size_t types = c.type_count();
  pinned_.assign(types, 0.0);
  pressure_.assign(types, 0.0);
  capacity_.resize(types);
  for (size_t t = 0; t < types; ++t) capacity_[t] = c.total_shares_of(static_cast<DeviceType>(t));
  double demand = 0;
  for (const auto& cl : model.classes()) {
    const double d = cl.weight * static_cast<double>(cl.shares) * cl.devices;
    demand += d;
    if (cl.types.empty() || d <= 0) continue;
    double cap = 0;  // of the allowed types this cluster has
    for (DeviceType t : cl.types)
      if (t < types) cap += static_cast<double>(capacity_[t]);
    if (cap <= 0) continue;  // fits nowhere here: claims nothing
    for (DeviceType t : cl.types)
      if (t < types) pinned_[t] += d * static_cast<double>(capacity_[t]) / cap;
  }
  if (demand <= 0) return;
  for (double& f : pinned_) {
    f /= demand;
    active_ = active_ || f > 0;
  }
}

bool TypeReservation::BuiltFor(const ClusterState& c) const {
  if (c.type_count() != capacity_.size()) return false;
  for (size_t t = 0; t < capacity_.size(); ++t)
    if (c.total_shares_of(static_cast<DeviceType>(t)) != capacity_[t]) return false;
  return true;
}

void TypeReservation::Refresh(const ClusterState& c, const std::vector<DeviceType>& types) {
  const double idle = static_cast<double>(c.free_shares());
  // A type with nothing idle cannot be taken; its pressure never matters
  // and must not set the floor.
  constexpr double kNone = std::numeric_limits<double>::infinity();
  for (size_t t = 0; t < pressure_.size(); ++t) {
    const uint64_t free = c.free_shares_of(static_cast<DeviceType>(t));
    pressure_[t] = free == 0 ? kNone : pinned_[t] * idle / static_cast<double>(free);
  }
  floor_ = kNone;
  if (types.empty()) {
    for (double p : pressure_) floor_ = std::min(floor_, p);
  } else {
    for (DeviceType t : types)
      if (t < pressure_.size()) floor_ = std::min(floor_, pressure_[t]);
  }
  if (floor_ == kNone) floor_ = 0;  // nothing it may use is idle: fits nowhere
}

std::vector<DeviceType> TypeReservation::TypesByPressure() const {
  std::vector<DeviceType> out;
  for (size_t t = 0; t < pressure_.size(); ++t)
    if (std::isfinite(pressure_[t])) out.push_back(static_cast<DeviceType>(t));
  std::stable_sort(out.begin(), out.end(),
                   [this](DeviceType a, DeviceType b) { return pressure_[a] < pressure_[b]; });
  return out;
}

}  // namespace vgpu
