#include "job_env.h"

#include <map>

namespace vgpu {
namespace {

void Append(std::string* list, const std::string& item) {
  if (!list->empty()) *list += ',';
  *list += item;
}

}  // namespace

EnvVars BuildJobEnv(const DeviceTable& table, const std::vector<DeviceShare>& shares,
                    const JobEnvOptions& options) {
  EnvVars env;
  if (shares.empty()) return env;
  std::string devices, files, counts, quotas, types, models, uuids;
  uint64_t on_node = 0;
  bool any_uuid = false;
  // Visibility variable -> its value, in the order vendors first appear.
  std::vector<std::pair<std::string, std::string>> visible;
  std::map<std::string, int> local_count;
  const uint32_t s = table.shares_per_device() ? table.shares_per_device() : 1;
  for (const DeviceShare& ds : shares) {
    const Device& d = table.devices()[ds.device].device;
    Append(&devices, std::to_string(ds.device));
    Append(&files, d.files.empty() ? "" : d.files.front());
    Append(&counts, std::to_string(ds.shares));
    // Shares x memory / S, rounded down so the sum never exceeds the device.
    unsigned __int128 quota = static_cast<unsigned __int128>(d.memory_bytes) * ds.shares / s;
    Append(&quotas, std::to_string(static_cast<uint64_t>(quota)));
    Append(&types, d.gres_type);
    Append(&models, d.model_id.empty() ? "unknown" : d.model_id);
    Append(&uuids, d.uuid);
    any_uuid = any_uuid || !d.uuid.empty();
    on_node += ds.shares;
    if (d.visible_devices_env.empty()) continue;
    int& local = local_count[d.visible_devices_env];
    int value = options.local_index || d.vendor_index < 0 ? local : d.vendor_index;
    ++local;
    auto it = visible.begin();
    while (it != visible.end() && it->first != d.visible_devices_env) ++it;
    if (it == visible.end()) it = visible.insert(visible.end(), {d.visible_devices_env, ""});
    Append(&it->second, std::to_string(value));
  }
  env.emplace_back("VGPU_DEVICES", devices);
  env.emplace_back("VGPU_DEVICE_FILES", files);
  env.emplace_back("VGPU_SHARES", counts);
  env.emplace_back("VGPU_SHARES_ON_NODE", std::to_string(on_node));
  env.emplace_back("VGPU_SHARES_PER_DEVICE", std::to_string(table.shares_per_device()));
  env.emplace_back("VGPU_MEMORY_QUOTA", quotas);
  env.emplace_back("VGPU_TYPES", types);
  env.emplace_back("VGPU_MODELS", models);
  if (any_uuid) env.emplace_back("VGPU_UUIDS", uuids);
  for (auto& v : visible) env.push_back(v);
  return env;
}

std::vector<std::string> JobEnvVariablesToClear() {
  return {"VGPU_DEVICES",      "VGPU_DEVICE_FILES", "VGPU_SHARES",
          "VGPU_SHARES_ON_NODE", "VGPU_SHARES_PER_DEVICE", "VGPU_MEMORY_QUOTA",
          "VGPU_TYPES",        "VGPU_MODELS",       "VGPU_UUIDS"};
}

}  // namespace vgpu
