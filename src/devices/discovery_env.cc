// DiscoveryEnv::Default(): the real outside world (dlopen, the filesystem,
// hwloc). Nothing here runs at static-initialisation time: the env object and
// the hwloc topology are function-local statics built on first use.
#include <dlfcn.h>
#include <hwloc.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <sys/stat.h>

#include "devices/discovery.h"
#include "util/read_file.h"

namespace vgpu {
namespace {

// Owns one dlopen() handle; dlclose() when destroyed.
class DlLibrary : public DynamicLibrary {
 public:
  explicit DlLibrary(void* handle) : handle_(handle) {}
  ~DlLibrary() override {
    if (handle_ != nullptr) dlclose(handle_);
  }
  DlLibrary(const DlLibrary&) = delete;
  DlLibrary& operator=(const DlLibrary&) = delete;

  void* Symbol(const char* symbol) const override { return dlsym(handle_, symbol); }

 private:
  void* handle_;
};

// The machine topology with PCI devices, loaded once. `topo_` stays null
// when hwloc cannot load it; lookups then answer "".
class PciTopology {
 public:
  PciTopology() {
    if (hwloc_topology_init(&topo_) != 0) {
      topo_ = nullptr;
      return;
    }
    // Keep the PCI devices that matter (GPUs, accelerators, NICs...): the
    // default filter drops all I/O objects.
    hwloc_topology_set_io_types_filter(topo_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo_) != 0) {
      hwloc_topology_destroy(topo_);
      topo_ = nullptr;
    }
  }
  ~PciTopology() {
    if (topo_ != nullptr) hwloc_topology_destroy(topo_);
  }
  PciTopology(const PciTopology&) = delete;
  PciTopology& operator=(const PciTopology&) = delete;

  std::string CpusFor(const std::string& bus_id) {
    if (topo_ == nullptr || bus_id.empty()) return "";
    std::lock_guard<std::mutex> lock(mu_);  // hwloc lookups are not documented thread-safe
    hwloc_obj_t dev = hwloc_get_pcidev_by_busidstring(topo_, bus_id.c_str());
    if (dev == nullptr) return "";
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo_, dev);
    if (anc == nullptr || anc->cpuset == nullptr) return "";
    char* list = nullptr;
    if (hwloc_bitmap_list_asprintf(&list, anc->cpuset) < 0 || list == nullptr) return "";
    std::string out(list);
    free(list);
    return out;
  }

 private:
  hwloc_topology_t topo_ = nullptr;
  std::mutex mu_;
};

class DefaultEnv : public DiscoveryEnv {
 public:
  Result<std::unique_ptr<DynamicLibrary>> OpenLibrary(const std::string& name) override {
    // dlerror() state is per thread; clear it so the message is this call's.
    dlerror();
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* err = dlerror();
      std::string why = err != nullptr ? err : "unknown dlopen error";
      // dlerror() usually starts with the name already; do not repeat it.
      if (why.find(name) == std::string::npos) why = name + ": " + why;
      return Result<std::unique_ptr<DynamicLibrary>>::Error(why);
    }
    return std::unique_ptr<DynamicLibrary>(new DlLibrary(handle));
  }

  Result<std::string> ReadFile(const std::string& path) override {
    return ReadTextFile(path);
  }

  std::string CpusForPciBusId(const std::string& pci_bus_id) override {
    static PciTopology topology;  // loaded on first use, once (thread-safe init)
    return topology.CpusFor(pci_bus_id);
  }
};

}  // namespace

DiscoveryEnv& DiscoveryEnv::Default() {
  static DefaultEnv env;
  return env;
}

}  // namespace vgpu
