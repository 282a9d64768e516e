#include "slice_layout.h"

#include "devices/chip_catalog.h"

namespace vgpu::sim {

std::optional<uint64_t> CatalogSliceLayout::Take(uint64_t taken, uint32_t shares) const {
  const std::optional<SlicePlacement> at = geometry_.Choose(taken, shares);
  if (!at) return std::nullopt;
  return taken | at->mask();
}

Status SliceEveryDevice(ClusterState* cluster, const std::string& catalog_dirs, const std::string& model_id) {
  auto catalog = ChipCatalog::LoadDirectories(catalog_dirs);
  if (!catalog.ok()) return Status::Error(catalog.message());
  const ChipModel* model = catalog->FindById(model_id);
  if (!model) return Status::Error("--slice " + model_id + ": no such model in the chip catalog (" + catalog_dirs + ")");
  auto geometry = SliceGeometry::For(*model, cluster->shares_per_device());
  if (!geometry.ok()) return Status::Error("--slice " + model_id + ": " + geometry.message());
  auto layout = std::make_shared<const CatalogSliceLayout>(std::move(geometry).value());
  for (size_t t = 0; t < cluster->type_count(); ++t) {
    Status st = cluster->SliceDevices(static_cast<DeviceType>(t), layout);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace vgpu::sim
