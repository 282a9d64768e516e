// Device discovery. Each vendor backend loads its management library with
// dlopen at run time; every backend is optional, and a missing library is a
// logged fact ("libnvidia-ml.so.1 not found: no NVIDIA devices"), not an
// error. The simulated inventory (a JSON file) is one more backend and goes
// through the same resolution code as the real ones.
#ifndef VGPU_DEVICES_DISCOVERY_H_
#define VGPU_DEVICES_DISCOVERY_H_

#include <memory>
#include <string>
#include <vector>

#include "devices/chip_catalog.h"
#include "devices/device.h"
#include "util/status.h"

namespace vgpu {

// RAII handle on a dlopen()ed library.
class DynamicLibrary {
 public:
  virtual ~DynamicLibrary() = default;
  // The address of `symbol`, or nullptr.
  virtual void* Symbol(const char* symbol) const = 0;
};

// The outside world as discovery sees it; tests substitute their own.
class DiscoveryEnv {
 public:
  virtual ~DiscoveryEnv() = default;
  // Opens a shared library by soname or path; an error when it cannot.
  virtual Result<std::unique_ptr<DynamicLibrary>> OpenLibrary(const std::string& name) = 0;
  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  // CPU ids (machine numbering, "0-15,32-47") local to a PCI device, or "".
  virtual std::string CpusForPciBusId(const std::string& pci_bus_id) = 0;
  // The process-wide default: dlopen, the filesystem, hwloc.
  static DiscoveryEnv& Default();
};

// What a backend reports before catalog resolution. Backends fill what their
// API gives; Resolve() completes the rest from the catalog.
struct RawDevice {
  std::string name;         // as the driver reports it
  std::string model_id;     // set only by the inventory, which may name the model directly
  int vendor_index = -1;
  int device_number = -1;   // %d in the catalog's device_file (minor, logic id)
  std::string file;         // explicit device file (inventory), overrides device_file
  std::string uuid;
  std::string pci_bus_id;
  uint64_t memory_bytes = 0;  // 0 = unknown, take the catalog's
  std::string cpus;           // "" = ask the env via pci_bus_id
};

class DiscoveryBackend {
 public:
  virtual ~DiscoveryBackend() = default;
  virtual std::string name() const = 0;
  // The library is missing: return an empty list and say so in `note`.
  // The library is present but fails: an error naming the call.
  virtual Result<std::vector<RawDevice>> Enumerate(std::string* note) = 0;
};

// Library names can be overridden (tests point them at stub libraries).
std::unique_ptr<DiscoveryBackend> MakeNvmlBackend(DiscoveryEnv& env,
                                                  std::string library = "libnvidia-ml.so.1");
std::unique_ptr<DiscoveryBackend> MakeDcmiBackend(DiscoveryEnv& env,
                                                  std::string library = "libdcmi.so");
std::unique_ptr<DiscoveryBackend> MakeRocmSmiBackend(DiscoveryEnv& env,
                                                     std::string library = "librocm_smi64.so.1");
// Simulated inventory file. Format:
// { "devices": [ { "model": "ascend-910b",          // catalog id, or
//                  "name": "Ascend910B",            // a name the catalog knows
//                  "index": 0,                      // vendor_index
//                  "file": "/lab/dev/n1/davinci0",
//                  "uuid": "...", "pci_bus_id": "...", "memory_bytes": 0, "cpus": "0-1" } ] }
std::unique_ptr<DiscoveryBackend> MakeInventoryBackend(DiscoveryEnv& env, std::string path);

// Turns raw reports into Devices using the catalog. A device whose name the
// catalog does not know is left out, with a note that says which file to add
// under chips.d/.
std::vector<Device> Resolve(const std::string& source, const std::vector<RawDevice>& raw,
                            const ChipCatalog& catalog, DiscoveryEnv& env,
                            std::vector<std::string>* notes);

struct DiscoveryReport {
  std::vector<Device> devices;
  std::vector<std::string> notes;   // facts to log at info level
  std::vector<std::string> errors;  // failures to log at error level
};

// Runs each backend (errors of one do not stop the others) and resolves the
// results. With an inventory path, only the inventory is used: a simulated
// node must not pick up real hardware, and vice versa.
DiscoveryReport DiscoverDevices(const ChipCatalog& catalog, DiscoveryEnv& env,
                                const std::string& inventory_path);

}  // namespace vgpu

#endif  // VGPU_DEVICES_DISCOVERY_H_
