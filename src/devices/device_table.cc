#include "devices/device_table.h"

#include <algorithm>

#include <json/json.h>

#include <cstdint>
#include <memory>
#include <sstream>

#include "util/text.h"

namespace vgpu {

DeviceTable::DeviceTable(std::vector<ShareDevice> devices, uint32_t shares_per_device)
    : devices_(std::move(devices)), shares_per_device_(shares_per_device) {}

uint32_t DeviceTable::total_bits() const {
  return devices_.empty() ? 0 : devices_.back().first_bit + devices_.back().shares;
}

int DeviceTable::DeviceOfBit(uint32_t bit) const {
  // Few devices per node (at most 1024 bits): a linear scan is the fastest.
  for (size_t i = 0; i < devices_.size(); ++i) {
    const ShareDevice& d = devices_[i];
    if (bit >= d.first_bit && bit < d.first_bit + d.shares) return static_cast<int>(i);
  }
  return -1;
}

std::vector<DeviceShare> DeviceTable::Split(const std::vector<uint32_t>& bits,
                                            size_t* stray) const {
  std::vector<uint32_t> per_device(devices_.size(), 0);
  std::vector<uint32_t> lowest(devices_.size(), UINT32_MAX);
  size_t lost = 0;
  for (uint32_t bit : bits) {
    int d = DeviceOfBit(bit);
    if (d < 0) {
      ++lost;
    } else {
      ++per_device[d];
      lowest[d] = std::min(lowest[d], bit - devices_[d].first_bit);
    }
  }
  if (stray) *stray = lost;
  std::vector<DeviceShare> out;
  for (size_t i = 0; i < per_device.size(); ++i)
    if (per_device[i]) out.push_back({i, per_device[i], lowest[i]});
  return out;
}

std::string DeviceTable::Serialize() const {
  Json::Value root;
  root["shares_per_device"] = shares_per_device_;
  Json::Value& list = root["devices"];
  list = Json::Value(Json::arrayValue);
  for (const ShareDevice& sd : devices_) {
    const Device& d = sd.device;
    Json::Value v;
    v["first_bit"] = sd.first_bit;
    v["shares"] = sd.shares;
    v["source"] = d.source;
    v["model_id"] = d.model_id;
    v["name"] = d.name;
    v["gres_type"] = d.gres_type;
    v["vendor_index"] = d.vendor_index;
    v["uuid"] = d.uuid;
    v["pci_bus_id"] = d.pci_bus_id;
    Json::Value files(Json::arrayValue);
    for (const std::string& f : d.files) files.append(f);
    v["files"] = files;
    v["memory_bytes"] = Json::UInt64(d.memory_bytes);
    v["compute_units"] = d.compute_units;
    v["visible_devices_env"] = d.visible_devices_env;
    v["cpus"] = d.cpus;
    list.append(v);
  }
  Json::StreamWriterBuilder writer;
  writer["indentation"] = "";
  return Json::writeString(writer, root);
}

// Nothing throws out of here: jsoncpp's parser throws too (nesting deeper
// than its stack limit), so it runs inside the try block as well. Bits are
// contiguous from 0 and their total fits in 32 bits (total_bits()).
Result<DeviceTable> DeviceTable::Parse(const std::string& text) {
  try {
    Json::Value root;
    std::string errors;
    Json::CharReaderBuilder builder;
    std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
    if (!reader->parse(text.data(), text.data() + text.size(), &root, &errors))
      return Result<DeviceTable>::Error("device table is not valid JSON: " + OneLine(errors));
    std::vector<ShareDevice> devices;
    uint32_t next_bit = 0;
    for (const Json::Value& v : root["devices"]) {
      ShareDevice sd;
      sd.first_bit = v["first_bit"].asUInt();
      sd.shares = v["shares"].asUInt();
      if (sd.first_bit != next_bit || sd.shares == 0)
        return Result<DeviceTable>::Error("device table bits are not contiguous at bit " +
                                          std::to_string(sd.first_bit));
      if (sd.shares > UINT32_MAX - next_bit)
        return Result<DeviceTable>::Error("device table has more than 4294967295 bits at bit " +
                                          std::to_string(sd.first_bit));
      next_bit += sd.shares;
      Device& d = sd.device;
      d.source = v["source"].asString();
      d.model_id = v["model_id"].asString();
      d.name = v["name"].asString();
      d.gres_type = v["gres_type"].asString();
      d.vendor_index = v["vendor_index"].asInt();
      d.uuid = v["uuid"].asString();
      d.pci_bus_id = v["pci_bus_id"].asString();
      for (const Json::Value& f : v["files"]) d.files.push_back(f.asString());
      d.memory_bytes = v["memory_bytes"].asUInt64();
      d.compute_units = v["compute_units"].asUInt();
      d.visible_devices_env = v["visible_devices_env"].asString();
      d.cpus = v["cpus"].asString();
      devices.push_back(std::move(sd));
    }
    return DeviceTable(std::move(devices), root["shares_per_device"].asUInt());
  } catch (const Json::Exception& e) {
    return Result<DeviceTable>::Error(std::string("device table cannot be read: ") + e.what());
  }
}

}  // namespace vgpu
