#include "discover_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "cli_args.h"
#include "devices/chip_catalog.h"
#include "devices/file_range.h"
#include "devices/nvml_api.h"
#include "devices/vendor_library.h"

namespace vgpu::discover {
namespace {

std::string DeviceName(const Device& d) {
  std::string name = (d.model_id.empty() ? d.name : d.model_id) + " " + std::to_string(d.vendor_index);
  if (!d.uuid.empty()) name += " (" + d.uuid + ")";
  return name;
}

// One gres.conf line's devices: those of one Type=.
struct TypeGroup {
  std::string type;
  std::vector<const Device*> devices;
};

// Devices by catalog family in order of first appearance; a family whose
// devices are of several models is split by model id, with a warning.
std::vector<TypeGroup> GroupByType(const std::vector<Device>& devices, std::vector<std::string>* warnings) {
  std::vector<TypeGroup> families;
  for (const Device& d : devices) {
    auto it = std::find_if(families.begin(), families.end(), [&](const TypeGroup& g) { return g.type == d.gres_type; });
    if (it == families.end()) it = families.insert(families.end(), TypeGroup{d.gres_type, {}});
    it->devices.push_back(&d);
  }
  std::vector<TypeGroup> out;
  for (TypeGroup& family : families) {
    std::vector<TypeGroup> models;
    for (const Device* d : family.devices) {
      auto it = std::find_if(models.begin(), models.end(), [&](const TypeGroup& g) { return g.type == d->model_id; });
      if (it == models.end()) it = models.insert(models.end(), TypeGroup{d->model_id, {}});
      it->devices.push_back(d);
    }
    if (models.size() == 1) {
      out.push_back(std::move(family));
      continue;
    }
    std::string list;
    for (const TypeGroup& m : models)
      list += (list.empty() ? "" : ", ") + m.type + " x" + std::to_string(m.devices.size());
    warnings->push_back("models mixed under Type=" + family.type + " (" + list + "): a job asking for vgpu:" +
                        family.type + " would get either, with a different memory per share; the lines "
                        "below name each model as its own Type= instead");
    for (TypeGroup& m : models) out.push_back(std::move(m));
  }
  return out;
}

void CheckDevice(const Device& d, const VgpuConfig& config, const HostFacts& host, std::vector<std::string>* warnings) {
  if (d.files.empty()) {
    warnings->push_back(DeviceName(d) + ": no device file known; set device_file in its chip catalog entry");
    return;
  }
  if (!host.file_exists(d.files[0]))
    warnings->push_back(DeviceName(d) + ": its device file " + d.files[0] +
                        " does not exist on this host: is the driver loaded? (gres/vgpu fences jobs by it; "
                        "slurmd will refuse the node)");
  if (!host.mig_mode) return;
  const std::optional<bool> mig = host.mig_mode(d);
  if (!mig) return;
  const bool sliced = config.SlicesModel(d.model_id, d.gres_type);
  if (*mig && !sliced)
    warnings->push_back(DeviceName(d) + ": MIG mode is on but vgpu.conf's HardwareSlicing does not name " +
                        d.model_id + ": jobs would share the GPU through libvgpu.so while MIG cuts it; add "
                        "HardwareSlicing=" + d.model_id + ", or turn MIG off (nvidia-smi -i " +
                        std::to_string(d.vendor_index) + " -mig 0)");
  if (!*mig && sliced)
    warnings->push_back(DeviceName(d) + ": vgpu.conf's HardwareSlicing names " + d.model_id +
                        " but MIG mode is off: every job's prolog would fail to make its slice; turn MIG on "
                        "(nvidia-smi -i " + std::to_string(d.vendor_index) + " -mig 1) or leave it out of "
                        "HardwareSlicing");
}

// NVML's MIG mode query, on a session of its own.
struct NvmlMig : nvml_api::NvmlSession {
  using NvmlSession::NvmlSession;
  Entry<nvml_api::nvmlReturn_t (*)(unsigned int, nvml_api::nvmlDevice_t*)> get_handle{
      lib, "nvmlDeviceGetHandleByIndex_v2"};
  Entry<nvml_api::nvmlReturn_t (*)(nvml_api::nvmlDevice_t, unsigned int*, unsigned int*)> mig_mode{
      lib, "nvmlDeviceGetMigMode", kOptional};
};

}  // namespace

const char kDiscoverUsage[] =
    "usage: vgpuctl discover [--conf SLURM_CONF] [--node NAME] [--inventory FILE]\n"
    "Prints the gres.conf lines and the slurm.conf Gres= for the devices this host's\n"
    "NVML, DCMI or ROCm SMI (or the inventory vgpu.conf names) find, and warns of models\n"
    "mixed under one type, MIG mode against HardwareSlicing, and missing device files.\n"
    "  --conf PATH       the cluster's slurm.conf; vgpu.conf beside it gives SharesPerDevice,\n"
    "                    the chip catalog, Inventory= and HardwareSlicing\n"
    "                    (default: $SLURM_CONF, else " VGPU_SLURM_CONF ")\n"
    "  --node NAME       this node's NodeName (default: the short host name)\n"
    "  --inventory FILE  a simulated inventory instead of what vgpu.conf says\n";

Result<DiscoverOptions> ParseDiscoverArgs(const std::vector<std::string>& args, const DiscoverOptions& defaults) {
  using R = Result<DiscoverOptions>;
  DiscoverOptions o = defaults;
  ArgCursor arg(args);
  while (arg.Next()) {
    const std::string& a = arg.name();
    if (a == "-h" || a == "--help") {
      o.help = true;
      continue;
    }
    if (a != "--conf" && a != "--node" && a != "--inventory") return R::Error("unknown argument \"" + arg.arg() + "\"");
    std::string value;
    if (!arg.Value(&value)) return R::Error(a + " needs a value");
    (a == "--conf" ? o.slurm_conf : a == "--node" ? o.node_name : o.inventory) = value;
  }
  if (o.node_name.empty() && !o.help) return R::Error("this host has no name: pass --node NAME");
  return o;
}

Suggestion Suggest(const std::vector<Device>& devices, const std::string& node, const VgpuConfig& config,
                   const HostFacts& host) {
  Suggestion s;
  for (const TypeGroup& g : GroupByType(devices, &s.warnings)) {
    std::vector<std::string> files;
    for (const Device* d : g.devices) {
      CheckDevice(*d, config, host, &s.warnings);
      if (!d->files.empty()) files.push_back(d->files[0]);
      if (!d->model_id.empty() && config.SlicesModel(d->model_id, d->gres_type) &&
          ("," + s.features + ",").find("," + d->model_id + ",") == std::string::npos)
        s.features += (s.features.empty() ? "" : ",") + d->model_id;
    }
    if (files.empty()) continue;
    s.gres_conf.push_back("NodeName=" + node + " Name=vgpu Type=" + g.type + " File=" + CompressFileRange(files));
    s.node_gres += (s.node_gres.empty() ? "" : ",") + std::string("vgpu:") + g.type + ":" +
                   std::to_string(static_cast<uint64_t>(files.size()) * config.shares_per_device);
  }
  return s;
}

std::optional<bool> NvmlMigMode(DiscoveryEnv& env, const Device& device, const std::string& library) {
  if (device.source != "nvml" || device.vendor_index < 0) return std::nullopt;
  auto lib = VendorLibrary::Open(env, library);
  if (!lib.ok()) return std::nullopt;
  NvmlMig nvml(*lib);
  if (!lib->CheckRequired().ok() || nvml.mig_mode == nullptr || nvml.init() != nvml_api::NVML_SUCCESS)
    return std::nullopt;
  std::optional<bool> on;
  nvml_api::nvmlDevice_t handle = nullptr;
  unsigned int current = 0, pending = 0;
  if (nvml.get_handle(static_cast<unsigned>(device.vendor_index), &handle) == nvml_api::NVML_SUCCESS &&
      nvml.mig_mode(handle, &current, &pending) == nvml_api::NVML_SUCCESS)
    on = current != 0;
  nvml.shutdown();
  return on;
}

int RunDiscover(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  DiscoverOptions defaults;
  const char* env = std::getenv("SLURM_CONF");
  defaults.slurm_conf = env && *env ? env : VGPU_SLURM_CONF;
  defaults.node_name = ShortHostName();
  auto o = ParseDiscoverArgs(args, defaults);
  if (!o.ok()) {
    err << "vgpuctl discover: " << o.message() << "\n" << kDiscoverUsage;
    return 2;
  }
  if (o->help) {
    out << kDiscoverUsage;
    return 0;
  }
  const std::string conf = BesideSlurmConf(o->slurm_conf, "vgpu.conf");
  VgpuConfig config_defaults;
  config_defaults.chip_catalog_dirs = VGPU_DEFAULT_CATALOG_DIR;
  auto config = VgpuConfig::Load(conf, config_defaults);
  if (!config.ok()) {
    err << "vgpuctl discover: " << config.message() << "\n";
    return 1;
  }
  auto catalog = ChipCatalog::LoadDirectories(config->chip_catalog_dirs);
  if (!catalog.ok()) {
    err << "vgpuctl discover: " << catalog.message() << " (ChipCatalogDir= in " << conf << ")\n";
    return 1;
  }
  const std::string inventory = o->inventory.empty() ? config->InventoryFor(o->node_name) : o->inventory;
  DiscoveryEnv& host_env = DiscoveryEnv::Default();
  const DiscoveryReport found = DiscoverDevices(*catalog, host_env, inventory);
  HostFacts host;
  host.file_exists = [](const std::string& f) {
    struct stat st;
    return stat(f.c_str(), &st) == 0;
  };
  host.mig_mode = [&host_env](const Device& d) { return NvmlMigMode(host_env, d); };
  Suggestion s = Suggest(found.devices, o->node_name, *config, host);
  for (const std::string& e : found.errors) s.warnings.push_back(e);

  out << "# vgpuctl discover on " << o->node_name << ": " << found.devices.size() << " device(s) from "
      << (inventory.empty() ? "the vendor libraries" : "the inventory " + inventory)
      << ", SharesPerDevice=" << config->shares_per_device << "\n";
  for (const std::string& n : found.notes) out << "# " << n << "\n";
  if (!s.gres_conf.empty()) {
    out << "# gres.conf\n";
    for (const std::string& line : s.gres_conf) out << line << "\n";
    out << "# slurm.conf: on the NodeName=" << o->node_name << " line\nGres=" << s.node_gres << "\n";
    if (!s.features.empty())
      out << "# and, among its Features, the models HardwareSlicing slices (slurmctld counts their slices)\n"
          << "Features=" << s.features << "\n";
  }
  for (const std::string& w : s.warnings) err << "vgpuctl discover: warning: " << w << "\n";
  if (found.devices.empty()) err << "vgpuctl discover: no device found (the notes above say which library is missing)\n";
  return found.devices.empty() || !s.warnings.empty() ? 1 : 0;
}

}  // namespace vgpu::discover
