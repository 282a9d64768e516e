// Where hardware slices (MIG instances, vNPUs) sit on a device, written in
// the device's share bits, so that slurmctld knows which slices still fit
// from Slurm's own GRES bitmaps and vgpu-prolog knows where to cut a job's.
//
// A model with "slice_slots" (chip_catalog.h) has that many slots; a
// profile occupies `slots` of them from one of its `starts`. Each slot owns
// a run of the device's S shares (bits), slot 0 the lowest:
//
//   A100 80GB, S=100:  slot  0   1   2   3   4   5   6   7
//                      bits 14  14  14  15  14  14  14   1
//
// chosen so that every position of every profile owns at least as many
// bits as the largest request that gets that profile (ProfileForShares):
// a job's bits are then the lowest of its slice's run. So:
//  * a slot is taken when any of its bits is allocated (whoever holds it);
//  * a job's slice starts at the slot of its lowest bit on the device.
// Nothing but the bitmap is needed, and the bitmap survives a restart of
// slurmctld with the job.
#ifndef VGPU_DEVICES_SLICE_GEOMETRY_H_
#define VGPU_DEVICES_SLICE_GEOMETRY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "devices/chip_catalog.h"
#include "util/status.h"

namespace vgpu {

// The smallest profile of `model` whose shares (catalog profiles are "of
// 100") cover `shares` out of `shares_per_device`; null when none does.
// "Smallest" is fewest shares, then least memory, then catalog order. Null
// too when `shares` or `shares_per_device` is 0.
const SliceProfile* ProfileForShares(const ChipModel& model, uint32_t shares, uint32_t shares_per_device);

// Slots as bits: bit k set = slot k taken.
using SlotMask = uint64_t;

// A slice's position: its profile, first slot, and the device's shares
// (bit offsets within the device) its slots own.
struct SlicePlacement {
  std::string profile;  // "" for the whole device unsliced (no profile holds S shares)
  uint32_t start = 0;
  uint32_t slots = 0;
  uint32_t first_share = 0;
  uint32_t shares = 0;  // shares the position owns (its slots' runs)

  // Its slots as a mask.
  SlotMask mask() const { return (slots >= 64 ? ~SlotMask{0} : (SlotMask{1} << slots) - 1) << start; }
};

class SliceGeometry {
 public:
  // The geometry of `model` at `shares_per_device` shares per device. An
  // error when the model has no slice_slots, or when S is too small to give
  // every position its shares (names the model and the least S).
  static Result<SliceGeometry> For(const ChipModel& model, uint32_t shares_per_device);

  const std::string& model_id() const { return model_.id; }
  uint32_t slots() const { return static_cast<uint32_t>(first_share_.size()) - 1; }
  uint32_t shares_per_device() const { return first_share_.back(); }
  // The first share of `slot` (slots() gives S).
  uint32_t FirstShare(uint32_t slot) const { return first_share_[slot]; }

  // The slots some allocated share lies in; `allocated(i)` for i < S.
  SlotMask Taken(const std::function<bool(uint32_t share)>& allocated) const;

  // Where a request of `shares` goes when `taken` is in use: the position
  // of its profile that leaves the most positions of all profiles free
  // (then the highest start, keeping the low slots for the profiles that
  // only start at 0); none when no profile holds `shares` or no position
  // of it is free. A request of the whole device (S shares) that no
  // profile holds takes the device unsliced, when nothing is on it.
  std::optional<SlicePlacement> Choose(SlotMask taken, uint32_t shares) const;

  // The largest request (shares) that fits now: the most shares a profile
  // with a free position serves; 0 when none has one. A request of x fits
  // exactly when x <= LargestFit (a profile that fits leaves a position
  // for every smaller one, as MIG's and vNPU's positions do).
  uint32_t LargestFit(SlotMask taken) const;

  // The position of a job holding `shares` from `first_share` on: none when
  // those shares are not the lowest of a position of the request's profile
  // (an allocation made by a slurmctld that did not know the geometry).
  std::optional<SlicePlacement> PlacementOf(uint32_t first_share, uint32_t shares) const;

 private:
  SliceGeometry() = default;
  // The most shares a request that gets `p` can hold.
  uint32_t Serves(const SliceProfile& p) const;
  SlicePlacement At(const SliceProfile& p, uint32_t start) const;
  SlicePlacement Whole() const;
  // Free positions, of all profiles, when `taken` is in use.
  uint32_t FreePositions(SlotMask taken) const;

  ChipModel model_;                   // its profiles (ProfileForShares)
  std::vector<uint32_t> first_share_;  // slots()+1 entries, the last S
};

// Which devices slurmctld counts in slices, and by which geometry. slurmctld
// sees a device's GRES type, not its model, so a device is sliced when
// vgpu-prolog slices its model (the `slices` predicate: vgpu.conf's
// HardwareSlicing) and either its type is the model's id (Type=nvidia-a100-80g)
// or its node's slurm.conf Features name the model and the type is the
// model's gres_type (NodeName=n3 Features=nvidia-a100-80g Gres=vgpu:nvidia:200).
class SlicedModels {
 public:
  using Slices = std::function<bool(const std::string& model_id, const std::string& type)>;

  SlicedModels() = default;
  // Models the catalog gives positions and `slices` names. One whose
  // geometry does not fit S shares is left out, with a message in
  // *problems.
  SlicedModels(const ChipCatalog& catalog, uint32_t shares_per_device, const Slices& slices,
               std::vector<std::string>* problems);

  bool empty() const { return geometries_.empty(); }
  // The geometry of a device of GRES `type` on a node whose features are
  // `features` (Slurm's comma-separated list); null: counted in shares. Two
  // named models of the type: null (which device is which is not known).
  const SliceGeometry* Find(const std::string& features, const std::string& type) const;

 private:
  struct Entry {
    std::string id, gres_type;  // lower case
    SliceGeometry geometry;
  };
  std::vector<Entry> geometries_;
};

}  // namespace vgpu

#endif  // VGPU_DEVICES_SLICE_GEOMETRY_H_
