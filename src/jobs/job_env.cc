#include "jobs/job_env.h"

#include <map>

namespace vgpu {
namespace {

// A comma-separated list that keeps empty items ("a,,c").
class List {
 public:
  void Add(const std::string& item) {
    if (any_) text_ += ',';
    text_ += item;
    any_ = true;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  bool any_ = false;
};

}  // namespace

EnvVars BuildJobEnv(const DeviceTable& table, const std::vector<DeviceShare>& shares,
                    const JobEnvOptions& options) {
  EnvVars env;
  if (shares.empty()) return env;
  List devices, files, counts, offsets, quotas, types, models, uuids, buses;
  uint64_t on_node = 0;
  bool any_uuid = false, any_bus = false;
  // Visibility variable -> its value, in the order vendors first appear.
  std::vector<std::pair<std::string, List>> visible;
  std::map<std::string, int> local_count;
  const uint32_t s = table.shares_per_device() ? table.shares_per_device() : 1;
  for (const DeviceShare& ds : shares) {
    const Device& d = table.devices()[ds.device].device;
    devices.Add(std::to_string(ds.device));
    files.Add(d.files.empty() ? "" : d.files.front());
    counts.Add(std::to_string(ds.shares));
    offsets.Add(std::to_string(ds.first_share));
    // Shares x memory / S, rounded down so the sum never exceeds the device.
    unsigned __int128 quota = static_cast<unsigned __int128>(d.memory_bytes) * ds.shares / s;
    quotas.Add(std::to_string(static_cast<uint64_t>(quota)));
    types.Add(d.gres_type);
    models.Add(d.model_id.empty() ? "unknown" : d.model_id);
    uuids.Add(d.uuid);
    any_uuid = any_uuid || !d.uuid.empty();
    buses.Add(d.pci_bus_id);
    any_bus = any_bus || !d.pci_bus_id.empty();
    on_node += ds.shares;
    if (d.visible_devices_env.empty()) continue;
    int& local = local_count[d.visible_devices_env];
    int value = options.local_index || d.vendor_index < 0 ? local : d.vendor_index;
    ++local;
    auto it = visible.begin();
    while (it != visible.end() && it->first != d.visible_devices_env) ++it;
    if (it == visible.end()) it = visible.insert(visible.end(), {d.visible_devices_env, List()});
    it->second.Add(std::to_string(value));
  }
  env.emplace_back("VGPU_DEVICES", devices.text());
  env.emplace_back("VGPU_DEVICE_FILES", files.text());
  env.emplace_back("VGPU_SHARES", counts.text());
  env.emplace_back("VGPU_SHARE_OFFSETS", offsets.text());
  env.emplace_back("VGPU_SHARES_ON_NODE", std::to_string(on_node));
  env.emplace_back("VGPU_SHARES_PER_DEVICE", std::to_string(table.shares_per_device()));
  env.emplace_back("VGPU_MEMORY_QUOTA", quotas.text());
  env.emplace_back("VGPU_TYPES", types.text());
  env.emplace_back("VGPU_MODELS", models.text());
  if (any_uuid) env.emplace_back("VGPU_UUIDS", uuids.text());
  if (any_bus) env.emplace_back("VGPU_PCI_BUS_IDS", buses.text());
  for (auto& v : visible) env.emplace_back(v.first, v.second.text());
  return env;
}

std::vector<std::string> JobEnvVariablesToClear() {
  return {"VGPU_DEVICES",      "VGPU_DEVICE_FILES", "VGPU_SHARES",       "VGPU_SHARE_OFFSETS",
          "VGPU_SHARES_ON_NODE", "VGPU_SHARES_PER_DEVICE", "VGPU_MEMORY_QUOTA",
          "VGPU_TYPES",        "VGPU_MODELS",       "VGPU_UUIDS",
          "VGPU_PCI_BUS_IDS"};
}

}  // namespace vgpu
