#include "devices/slice_geometry.h"

#include <algorithm>
#include <sstream>

#include "util/text.h"

namespace vgpu {

const SliceProfile* ProfileForShares(const ChipModel& model, uint32_t shares, uint32_t shares_per_device) {
  if (shares == 0 || shares_per_device == 0) return nullptr;
  const SliceProfile* best = nullptr;
  for (const SliceProfile& p : model.profiles) {
    // p.shares/100 >= shares/shares_per_device, in integers.
    if (static_cast<uint64_t>(p.shares) * shares_per_device < static_cast<uint64_t>(shares) * 100) continue;
    if (best == nullptr || p.shares < best->shares ||
        (p.shares == best->shares && p.memory_bytes < best->memory_bytes))
      best = &p;
  }
  return best;
}

Result<SliceGeometry> SliceGeometry::For(const ChipModel& model, uint32_t shares_per_device) {
  using R = Result<SliceGeometry>;
  if (model.slice_slots == 0 || model.profiles.empty())
    return R::Error(model.id + " has no slice positions (\"slice_slots\" and the profiles' \"slots\"/\"starts\" in " +
                    model.source + ")");
  SliceGeometry g;
  g.model_ = model;
  const uint32_t n = model.slice_slots;
  // Every slot owns at least one share, so that a slot in use shows in
  // the bitmap; then each position, smallest first, gets what it lacks
  // on its last slot (raising a slot never undoes a position already met).
  std::vector<uint64_t> width(n, 1);
  std::vector<const SliceProfile*> by_size;
  for (const SliceProfile& p : model.profiles) by_size.push_back(&p);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [](const SliceProfile* a, const SliceProfile* b) { return a->slots < b->slots; });
  for (const SliceProfile* p : by_size) {
    const uint64_t need = uint64_t{p->shares} * shares_per_device / 100;
    for (uint32_t start : p->starts) {
      uint64_t have = 0;
      for (uint32_t k = start; k < start + p->slots; ++k) have += width[k];
      if (have < need) width[start + p->slots - 1] += need - have;
    }
  }
  uint64_t total = 0;
  for (uint64_t w : width) total += w;
  if (total > shares_per_device)
    return R::Error(model.id + "'s slice positions need " + std::to_string(total) +
                    " shares per device to give each its shares; SharesPerDevice=" +
                    std::to_string(shares_per_device) + " is too few (raise it in vgpu.conf, or remove " +
                    model.id + " from HardwareSlicing=)");
  width[n - 1] += shares_per_device - total;
  g.first_share_.assign(1, 0);
  for (uint64_t w : width) g.first_share_.push_back(g.first_share_.back() + static_cast<uint32_t>(w));
  return g;
}

namespace {

SlotMask Mask(uint32_t start, uint32_t slots) {
  SlicePlacement at;
  at.start = start;
  at.slots = slots;
  return at.mask();
}

}  // namespace

uint32_t SliceGeometry::Serves(const SliceProfile& p) const {
  return static_cast<uint32_t>(uint64_t{p.shares} * shares_per_device() / 100);
}

SlicePlacement SliceGeometry::At(const SliceProfile& p, uint32_t start) const {
  SlicePlacement at;
  at.profile = p.name;
  at.start = start;
  at.slots = p.slots;
  at.first_share = first_share_[start];
  at.shares = first_share_[start + p.slots] - first_share_[start];
  return at;
}

SlotMask SliceGeometry::Taken(const std::function<bool(uint32_t share)>& allocated) const {
  SlotMask taken = 0;
  for (uint32_t k = 0; k < slots(); ++k)
    for (uint32_t s = first_share_[k]; s < first_share_[k + 1]; ++s)
      if (allocated(s)) {
        taken |= SlotMask{1} << k;
        break;
      }
  return taken;
}

uint32_t SliceGeometry::FreePositions(SlotMask taken) const {
  uint32_t free = 0;
  for (const SliceProfile& p : model_.profiles)
    for (uint32_t start : p.starts) free += (Mask(start, p.slots) & taken) == 0;
  return free;
}

SlicePlacement SliceGeometry::Whole() const {
  SlicePlacement at;
  at.slots = slots();
  at.shares = shares_per_device();
  return at;
}

std::optional<SlicePlacement> SliceGeometry::Choose(SlotMask taken, uint32_t shares) const {
  const SliceProfile* p = ProfileForShares(model_, shares, shares_per_device());
  if (!p && shares == shares_per_device() && taken == 0) return Whole();
  if (!p) return std::nullopt;
  std::optional<SlicePlacement> best;
  uint32_t best_left = 0;
  for (uint32_t start : p->starts) {
    const SlotMask mine = Mask(start, p->slots);
    if (mine & taken) continue;
    const uint32_t left = FreePositions(taken | mine);
    if (!best || left > best_left || (left == best_left && start > best->start)) {
      best = At(*p, start);
      best_left = left;
    }
  }
  return best;
}

uint32_t SliceGeometry::LargestFit(SlotMask taken) const {
  if (taken == 0) return shares_per_device();  // a profile of the whole device, or the device unsliced
  uint32_t largest = 0;
  for (const SliceProfile& p : model_.profiles)
    for (uint32_t start : p.starts)
      if ((Mask(start, p.slots) & taken) == 0) largest = std::max(largest, Serves(p));
  return largest;
}

std::optional<SlicePlacement> SliceGeometry::PlacementOf(uint32_t first_share, uint32_t shares) const {
  const SliceProfile* p = ProfileForShares(model_, shares, shares_per_device());
  if (!p && shares == shares_per_device() && first_share == 0) return Whole();
  if (!p) return std::nullopt;
  for (uint32_t start : p->starts) {
    const SlicePlacement at = At(*p, start);
    if (at.first_share == first_share && shares <= at.shares) return at;
  }
  return std::nullopt;
}

SlicedModels::SlicedModels(const ChipCatalog& catalog, uint32_t shares_per_device, const Slices& slices,
                           std::vector<std::string>* problems) {
  for (const ChipModel& m : catalog.models()) {
    if (m.slice_slots == 0 || m.profiles.empty() || !slices(m.id, m.gres_type)) continue;
    auto g = SliceGeometry::For(m, shares_per_device);
    if (!g.ok()) {
      if (problems) problems->push_back(g.message());
      continue;
    }
    geometries_.push_back({Lower(m.id), Lower(m.gres_type), std::move(g).value()});
  }
}

const SliceGeometry* SlicedModels::Find(const std::string& features, const std::string& type) const {
  const std::string t = Lower(type);
  for (const Entry& e : geometries_)
    if (e.id == t) return &e.geometry;
  const SliceGeometry* found = nullptr;
  std::istringstream list(features);
  std::string feature;
  while (std::getline(list, feature, ',')) {
    feature = Lower(Trim(feature));
    for (const Entry& e : geometries_) {
      if (e.id != feature || e.gres_type != t || found == &e.geometry) continue;
      if (found) return nullptr;
      found = &e.geometry;
    }
  }
  return found;
}

}  // namespace vgpu
