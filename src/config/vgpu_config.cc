#include "config/vgpu_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/read_file.h"
#include "util/text.h"

namespace vgpu {

Result<VgpuConfig> VgpuConfig::Parse(const std::string& text, const std::string& source,
                                     const VgpuConfig& defaults) {
  VgpuConfig config = defaults;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    line = Trim(line);
    if (line.empty()) continue;
    std::string where = source + ":" + std::to_string(line_no) + ": ";
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      return Result<VgpuConfig>::Error(where + "expected Key=Value, got \"" + line + "\"");
    std::string key = Lower(Trim(line.substr(0, eq)));
    std::string value = Trim(line.substr(eq + 1));
    if (key == "sharesperdevice") {
      char* end = nullptr;
      errno = 0;
      long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || n < 1 || n > 1024)
        return Result<VgpuConfig>::Error(
            where + "SharesPerDevice=" + value +
            " must be a whole number from 1 to 1024 (Slurm allows 1024 GRES bits per node)");
      config.shares_per_device = static_cast<uint32_t>(n);
    } else if (key == "sweepinterval") {
      uint64_t n = 0;
      if (!ParseU64(value, 86400, &n))
        return Result<VgpuConfig>::Error(where + "SweepInterval=" + value +
                                         " must be a whole number of seconds from 0 to 86400 (0: every "
                                         "vgpu-prolog and vgpu-epilog asks slurmctld about ended jobs)");
      config.sweep_interval_s = static_cast<uint32_t>(n);
    } else if (key == "chipcatalogdir") {
      if (value.empty())
        return Result<VgpuConfig>::Error(where + "ChipCatalogDir= needs a directory");
      config.chip_catalog_dirs = value;
    } else if (key == "inventory") {
      config.inventory = value;
    } else if (key == "placementpolicy") {
      // The name is checked by whoever places (the select plugin, vgpu-sim),
      // against the engine's registry.
      if (value.empty())
        return Result<VgpuConfig>::Error(where + "PlacementPolicy= needs a policy name");
      config.placement_policy = Lower(value);
    } else if (key == "typepreference" || key == "hardwareslicing") {
      const std::string name = key == "typepreference" ? "TypePreference" : "HardwareSlicing";
      std::vector<std::string> items;
      std::istringstream list(value);
      std::string item;
      while (std::getline(list, item, ',')) {
        item = Lower(Trim(item));
        if (item.empty() || item.find_first_of(" \t:") != std::string::npos)
          return Result<VgpuConfig>::Error(
              where + name + "=" + value + " must be a comma-separated list of " +
              (key == "typepreference" ? "device types, e.g. TypePreference=nvidia,ascend"
                                       : "chip models or types, e.g. HardwareSlicing=nvidia-a100-80g"));
        if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
      }
      if (key == "hardwareslicing") {
        if (items == std::vector<std::string>{"none"}) items.clear();
        config.hardware_slicing = items;
        continue;
      }
      if (items.empty())
        return Result<VgpuConfig>::Error(where + "TypePreference= needs at least one type");
      config.type_preference = items;
    } else if (key == "jobusernamespaces") {
      const std::string v = Lower(value);
      if (v != "allow" && v != "deny")
        return Result<VgpuConfig>::Error(where + "JobUserNamespaces=" + value +
                                         " must be allow or deny (deny: spank_vgpu.so refuses new user "
                                         "namespaces to the tasks of vgpu jobs)");
      config.deny_job_user_namespaces = v == "deny";
    } else {
      return Result<VgpuConfig>::Error(
          where + "unknown key \"" + Trim(line.substr(0, eq)) +
          "\" (known: SharesPerDevice, ChipCatalogDir, Inventory, PlacementPolicy, TypePreference,"
          " HardwareSlicing, JobUserNamespaces, SweepInterval; see vgpu.conf(5))");
    }
  }
  return config;
}

Result<VgpuConfig> VgpuConfig::Load(const std::string& path, const VgpuConfig& defaults) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 && errno == ENOENT) return defaults;
  auto text = ReadTextFile(path);
  if (!text.ok()) return Result<VgpuConfig>::Error(text.message());
  return Parse(*text, path, defaults);
}

Status VgpuConfigFile::Refresh() {
  struct stat st;
  Identity now;  // a missing file: inode 0, mtime -1
  if (stat(path_.c_str(), &st) == 0)
    now = Identity{static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
  if (seen_ && now == identity_) return Status::Ok();
  identity_ = now;  // a mistake is reported once, not at every call
  seen_ = true;
  auto loaded = VgpuConfig::Load(path_, defaults_);
  if (!loaded.ok()) return Status::Error(loaded.message() + "; keeping the configuration read before");
  config_ = *loaded;
  ++generation_;
  return Status::Ok();
}

std::string VgpuConfig::InventoryFor(const std::string& node_name) const {
  std::string out;
  for (size_t i = 0; i < inventory.size(); ++i) {
    if (inventory[i] == '%' && i + 1 < inventory.size() && inventory[i + 1] == 'n') {
      out += node_name;
      ++i;
    } else {
      out += inventory[i];
    }
  }
  return out;
}

std::string BesideSlurmConf(const std::string& slurm_conf, const std::string& file) {
  const size_t slash = slurm_conf.rfind('/');
  return (slash == std::string::npos ? std::string(".") : slurm_conf.substr(0, slash)) + "/" + file;
}

bool VgpuConfig::SlicesModel(const std::string& model_id, const std::string& type) const {
  for (const std::string& s : hardware_slicing)
    if (s == Lower(model_id) || s == Lower(type)) return true;
  return false;
}

}  // namespace vgpu
