// vgpu-sim's sliced devices: the chip catalog's slice geometry
// (devices/slice_geometry.h) as the placement engine's SliceLayout, so a
// replay packs a device by MIG instances or vNPUs, the way slurmctld counts
// a device that HardwareSlicing slices.
#ifndef VGPU_TOOLS_SLICE_LAYOUT_H_
#define VGPU_TOOLS_SLICE_LAYOUT_H_

#include <memory>
#include <string>

#include "devices/slice_geometry.h"
#include "placement/placement.h"
#include "util/status.h"

namespace vgpu::sim {

class CatalogSliceLayout : public SliceLayout {
 public:
  explicit CatalogSliceLayout(SliceGeometry geometry) : geometry_(std::move(geometry)) {}
  std::optional<uint64_t> Take(uint64_t taken, uint32_t shares) const override;
  uint32_t LargestFit(uint64_t taken) const override { return geometry_.LargestFit(taken); }

 private:
  SliceGeometry geometry_;
};

// Slices every device of `cluster` as model `model_id` of the catalog in
// `catalog_dirs` (':'-separated). An error names an unknown model, one
// without slice positions, or a catalog that cannot be read.
Status SliceEveryDevice(ClusterState* cluster, const std::string& catalog_dirs, const std::string& model_id);

}  // namespace vgpu::sim

#endif  // VGPU_TOOLS_SLICE_LAYOUT_H_
