// Catalog resolution of raw backend reports, and the discovery driver that
// runs the backends. Nothing here throws for expected failures; the backends
// report theirs as notes or errors.
#include "devices/discovery.h"

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <utility>

#include "devices/discovery_internal.h"

namespace vgpu {

namespace discovery_internal {

std::string FormatPciBusId(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%x", domain & 0xffffffffu, bus & 0xffu,
                device & 0x1fu, function & 0x7u);
  return buf;
}

std::string NormalizePciBusId(const std::string& text) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) == 4) {
    return FormatPciBusId(domain, bus, device, function);
  }
  if (std::sscanf(text.c_str(), "%x:%x.%x%c", &bus, &device, &function, &tail) == 3) {
    return FormatPciBusId(0, bus, device, function);
  }
  return "";
}

std::string LibraryMissingNote(const std::string& library, const std::string& vendor,
                               const std::string& detail) {
  std::string note = library + " not found: no " + vendor + " devices discovered";
  if (!detail.empty()) note += " (" + detail + ")";
  return note;
}

}  // namespace discovery_internal

namespace {

// device_file with its first "%d" replaced by `number`. Done by hand: the
// catalog is data and must never reach printf as a format string.
std::string ExpandDeviceFile(const std::string& pattern, int number) {
  size_t at = pattern.find("%d");
  if (at == std::string::npos) return pattern;
  return pattern.substr(0, at) + std::to_string(number) + pattern.substr(at + 2);
}

// How a note names a device whose model is unknown: its file if the backend
// gave one, else its PCI address, else its index.
std::string Where(const RawDevice& raw) {
  if (!raw.file.empty()) return raw.file;
  if (!raw.pci_bus_id.empty()) return "PCI " + raw.pci_bus_id;
  if (raw.device_number >= 0) return "device number " + std::to_string(raw.device_number);
  return "index " + std::to_string(raw.vendor_index);
}

}  // namespace

std::vector<Device> Resolve(const std::string& source, const std::vector<RawDevice>& raw,
                            const ChipCatalog& catalog, DiscoveryEnv& env,
                            std::vector<std::string>* notes) {
  auto note = [notes](std::string text) {
    if (notes != nullptr) notes->push_back(std::move(text));
  };
  std::vector<Device> out;
  for (const RawDevice& r : raw) {
    const ChipModel* model = nullptr;
    if (!r.model_id.empty()) {
      model = catalog.FindById(r.model_id);
      if (model == nullptr) {
        note("device " + (r.name.empty() ? r.model_id : r.name) + " (" + Where(r) + ") reported by " +
             source + " names model \"" + r.model_id +
             "\", which is not in the chip catalog: add chips.d/" + r.model_id + ".json");
        continue;
      }
    } else {
      model = catalog.FindByName(r.name);
      if (model == nullptr) {
        note("device " + r.name + " (" + Where(r) + ") reported by " + source +
             " is not in the chip catalog: add a file under chips.d/ whose \"names\" contains \"" +
             r.name + "\"");
        continue;
      }
    }

    Device d;
    d.source = source;
    d.model_id = model->id;
    d.name = r.name.empty() ? model->names.front() : r.name;
    d.gres_type = model->gres_type;
    d.vendor_index = r.vendor_index;
    d.uuid = r.uuid;
    d.pci_bus_id = r.pci_bus_id;
    if (!r.file.empty()) {
      d.files.push_back(r.file);
    } else {
      int number = r.device_number >= 0 ? r.device_number : r.vendor_index;
      if (number < 0) {
        note("device " + d.name + " (" + Where(r) + ") reported by " + source +
             " has neither a device file nor a device number: left out");
        continue;
      }
      d.files.push_back(ExpandDeviceFile(model->device_file, number));
    }
    d.memory_bytes = r.memory_bytes != 0 ? r.memory_bytes : model->memory_bytes;
    d.compute_units = model->compute_units;
    d.visible_devices_env = model->visible_devices_env;
    d.cpus = !r.cpus.empty() ? r.cpus
                             : (r.pci_bus_id.empty() ? std::string() : env.CpusForPciBusId(r.pci_bus_id));
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

// A backend over one vendor management library: a library that is not
// installed is a note and no devices, not an error.
class VendorBackend : public DiscoveryBackend {
 public:
  using ListFn = Result<std::vector<RawDevice>> (*)(VendorLibrary& library);

  // `vendor` names the devices in the note: "NVIDIA".
  VendorBackend(DiscoveryEnv& env, std::string library, const char* name, const char* vendor, ListFn list)
      : env_(env), library_(std::move(library)), name_(name), vendor_(vendor), list_(list) {}

  std::string name() const override { return name_; }

  Result<std::vector<RawDevice>> Enumerate(std::string* note) override {
    Result<VendorLibrary> library = VendorLibrary::Open(env_, library_);
    if (!library.ok()) {
      if (note != nullptr) *note = discovery_internal::LibraryMissingNote(library_, vendor_, library.message());
      return std::vector<RawDevice>{};
    }
    return list_(*library);
  }

 private:
  DiscoveryEnv& env_;
  std::string library_;
  const char* name_;
  const char* vendor_;
  ListFn list_;
};

}  // namespace

std::unique_ptr<DiscoveryBackend> MakeNvmlBackend(DiscoveryEnv& env, std::string library) {
  return std::make_unique<VendorBackend>(env, std::move(library), "nvml", "NVIDIA", &discovery_internal::ListNvmlDevices);
}

std::unique_ptr<DiscoveryBackend> MakeDcmiBackend(DiscoveryEnv& env, std::string library) {
  return std::make_unique<VendorBackend>(env, std::move(library), "dcmi", "Ascend", &discovery_internal::ListDcmiDevices);
}

std::unique_ptr<DiscoveryBackend> MakeRocmSmiBackend(DiscoveryEnv& env, std::string library) {
  return std::make_unique<VendorBackend>(env, std::move(library), "rocm-smi", "DCU/ROCm",
                                         &discovery_internal::ListRocmSmiDevices);
}

DiscoveryReport DiscoverDevices(const ChipCatalog& catalog, DiscoveryEnv& env,
                                const std::string& inventory_path) {
  DiscoveryReport report;
  std::vector<std::unique_ptr<DiscoveryBackend>> backends;
  if (!inventory_path.empty()) {
    backends.push_back(MakeInventoryBackend(env, inventory_path));
  } else {
    backends.push_back(MakeNvmlBackend(env));
    backends.push_back(MakeDcmiBackend(env));
    backends.push_back(MakeRocmSmiBackend(env));
  }
  for (const auto& backend : backends) {
    std::string note;
    Result<std::vector<RawDevice>> raw = backend->Enumerate(&note);
    if (!note.empty()) report.notes.push_back(note);
    if (!raw.ok()) {
      report.errors.push_back(backend->name() + ": " + raw.message());
      continue;
    }
    std::vector<Device> devices = Resolve(backend->name(), *raw, catalog, env, &report.notes);
    for (Device& d : devices) report.devices.push_back(std::move(d));
  }
  return report;
}

}  // namespace vgpu
