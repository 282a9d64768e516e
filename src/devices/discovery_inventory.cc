// Simulated inventory backend: a JSON file that lists devices (format in
// discovery.h), for machines without accelerators, tests and the demo.
//
// Contract:
// - A missing, unreadable or malformed file is an error naming the path and
//   the problem (a simulated node with a broken inventory must not come up
//   looking empty).
// - Each entry needs "model" (a catalog id) or "name" (a name the catalog
//   knows), or both; "index" defaults to the entry's position; "file" names
//   the device file, else the catalog's device_file with %d = index.
// - Unknown keys are errors, so a misspelt "file" does not silently fall back
//   to /dev paths; keys starting with '_' are comments.
// - Two entries of one model with the same index, or two with the same
//   file, are an error.
// - jsoncpp exceptions are caught here and become errors.
#include <json/json.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "devices/discovery.h"
#include "devices/discovery_internal.h"
#include "util/text.h"

namespace vgpu {
namespace {

const std::set<std::string> kEntryKeys = {"model", "name", "index", "file", "uuid",
                                          "pci_bus_id", "memory_bytes", "cpus"};

class InventoryBackend : public DiscoveryBackend {
 public:
  InventoryBackend(DiscoveryEnv& env, std::string path) : env_(env), path_(std::move(path)) {}

  std::string name() const override { return "inventory"; }

  Result<std::vector<RawDevice>> Enumerate(std::string* /*note*/) override {
    Result<std::string> text = env_.ReadFile(path_);
    if (!text.ok()) return Error(text.message());
    try {
      return Parse(*text);
    } catch (const std::exception& e) {
      return Error(std::string("cannot parse: ") + e.what());
    }
  }

 private:
  Result<std::vector<RawDevice>> Error(const std::string& what) const {
    return Result<std::vector<RawDevice>>::Error("inventory " + path_ + ": " + what);
  }

  Result<std::vector<RawDevice>> Parse(const std::string& text) const {
    Json::CharReaderBuilder builder;
    Json::CharReaderBuilder::strictMode(&builder.settings_);
    std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
    Json::Value root;
    std::string errors;
    if (!reader->parse(text.data(), text.data() + text.size(), &root, &errors)) {
      return Error("invalid JSON: " + OneLine(errors));
    }
    if (!root.isObject() || !root.isMember("devices") || !root["devices"].isArray()) {
      return Error("key \"devices\" must be an array of device objects");
    }
    const Json::Value& list = root["devices"];
    std::vector<RawDevice> out;
    for (Json::ArrayIndex i = 0; i < list.size(); ++i) {
      const Json::Value& e = list[i];
      std::string at = "devices[" + std::to_string(i) + "]";
      if (!e.isObject()) return Error(at + " must be an object");
      for (const std::string& key : e.getMemberNames()) {
        if (kEntryKeys.count(key) == 0 && !(key.size() > 0 && key[0] == '_')) {
          return Error(at + ": unknown key \"" + key + "\"");
        }
      }
      RawDevice r;
      std::string bad;
      auto str = [&](const char* key, std::string* dst) {
        if (!e.isMember(key) || !bad.empty()) return;
        if (!e[key].isString()) {
          bad = key;
          return;
        }
        *dst = e[key].asString();
      };
      str("model", &r.model_id);
      str("name", &r.name);
      str("file", &r.file);
      str("uuid", &r.uuid);
      str("pci_bus_id", &r.pci_bus_id);
      str("cpus", &r.cpus);
      if (!bad.empty()) return Error(at + ": key \"" + bad + "\" must be a string");
      if (r.model_id.empty() && r.name.empty()) return Error(at + " needs \"model\" or \"name\"");
      if (!r.pci_bus_id.empty()) {
        std::string norm = discovery_internal::NormalizePciBusId(r.pci_bus_id);
        if (norm.empty()) return Error(at + ": key \"pci_bus_id\" must look like 0000:c1:00.0");
        r.pci_bus_id = norm;
      }
      r.vendor_index = static_cast<int>(i);
      if (e.isMember("index")) {
        const Json::Value& v = e["index"];
        if (v.isBool() || !v.isInt() || v.asInt() < 0) {
          return Error(at + ": key \"index\" must be a non-negative integer");
        }
        r.vendor_index = v.asInt();
      }
      // Each vendor's runtime numbers its own devices from 0, so an index is
      // unique per model, not per node; a device file is unique per node.
      auto model_key = [](const RawDevice& d) { return d.model_id.empty() ? d.name : d.model_id; };
      for (size_t j = 0; j < out.size(); ++j) {
        if (out[j].vendor_index == r.vendor_index && model_key(out[j]) == model_key(r)) {
          return Error(at + ": index " + std::to_string(r.vendor_index) + " is already used by devices[" +
                       std::to_string(j) + "] of the same model");
        }
        if (!r.file.empty() && out[j].file == r.file) {
          return Error(at + ": file " + r.file + " is already used by devices[" + std::to_string(j) + "]");
        }
      }
      if (e.isMember("memory_bytes")) {
        const Json::Value& v = e["memory_bytes"];
        if (v.isBool() || !v.isUInt64()) {
          return Error(at + ": key \"memory_bytes\" must be a non-negative integer");
        }
        r.memory_bytes = v.asUInt64();  // 0 = take the catalog's
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  DiscoveryEnv& env_;
  std::string path_;
};

}  // namespace

std::unique_ptr<DiscoveryBackend> MakeInventoryBackend(DiscoveryEnv& env, std::string path) {
  return std::unique_ptr<DiscoveryBackend>(new InventoryBackend(env, std::move(path)));
}

}  // namespace vgpu
