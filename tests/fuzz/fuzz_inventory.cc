// Fuzzes the simulated inventory file (devices/discovery.h): the input is
// what vgpu::DiscoverDevices reads from the Inventory= path, through a
// vgpu::DiscoveryEnv whose ReadFile returns it (and which opens no library
// and knows no PCI topology), with a three-model catalog (fuzz_common.h).
//
// Asserts, besides no crash, sanitizer report or escaping exception:
// - a broken inventory is one error naming the backend and the path, and
//   gives no device at all (a simulated node must not come up half-listed);
// - otherwise every device is the inventory's, of a model in the catalog
//   and with that model's type, one device file, memory above 0, a PCI
//   address in the long form or none; and no more devices than the file
//   has entries.
#include <algorithm>
#include <memory>
#include <string>

#include "devices/discovery.h"
#include "fuzz_common.h"

namespace {

const char kPath[] = "/etc/slurm/vgpu-inventory/n1.json";

class InputEnv : public vgpu::DiscoveryEnv {
 public:
  explicit InputEnv(std::string text) : text_(std::move(text)) {}
  vgpu::Result<std::unique_ptr<vgpu::DynamicLibrary>> OpenLibrary(const std::string& name) override {
    return vgpu::Result<std::unique_ptr<vgpu::DynamicLibrary>>::Error(name + ": not in a fuzz run");
  }
  vgpu::Result<std::string> ReadFile(const std::string& path) override {
    FUZZ_CHECK(path == kPath, "read " + path);
    return text_;
  }
  std::string CpusForPciBusId(const std::string& pci_bus_id) override { return pci_bus_id.empty() ? "" : "0-7"; }

 private:
  std::string text_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::Run([&] {
    const std::string text = fuzz::Text(data, size);
    InputEnv env(text);
    const vgpu::ChipCatalog catalog = fuzz::SmallCatalog();
    const vgpu::DiscoveryReport report = vgpu::DiscoverDevices(catalog, env, kPath);

    if (!report.errors.empty()) {
      FUZZ_CHECK(report.errors.size() == 1, "more than one error from one backend");
      FUZZ_CHECK(report.errors[0].rfind(std::string("inventory: inventory ") + kPath + ": ", 0) == 0,
                 report.errors[0]);
      FUZZ_CHECK(report.devices.empty(), "devices from a broken inventory");
      return;
    }
    // Each entry is an object that opens with '{': an upper bound on entries.
    FUZZ_CHECK(report.devices.size() <= static_cast<size_t>(std::count(text.begin(), text.end(), '{')),
               "more devices than entries");
    for (const vgpu::Device& d : report.devices) {
      FUZZ_CHECK(d.source == "inventory", d.source);
      const vgpu::ChipModel* m = catalog.FindById(d.model_id);
      FUZZ_CHECK(m != nullptr, "model " + d.model_id);
      FUZZ_CHECK(d.gres_type == m->gres_type, d.gres_type);
      FUZZ_CHECK(d.files.size() == 1 && !d.files[0].empty(), d.name);
      FUZZ_CHECK(d.memory_bytes > 0, d.name);
      FUZZ_CHECK(d.pci_bus_id.empty() || d.pci_bus_id.size() >= 12, d.pci_bus_id);
    }
  });
}
