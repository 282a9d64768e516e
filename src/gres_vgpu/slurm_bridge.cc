#include "slurm_bridge.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <cstdlib>

#include "devices/share_layout.h"

// slurmd's configuration; absent (null) in slurmctld, which also loads this
// plugin, hence weak.
#pragma weak conf

namespace vgpu {
namespace slurm {
namespace {

std::string Str(const char* s) { return s ? s : ""; }

// Cores= for a device record: the original's, else the CPUs discovery found
// local to the device, converted to Slurm's abstract ids the way gres/gpu's
// AutoDetect does.
void SetCpus(gres_slurmd_conf_t* to, const gres_slurmd_conf_t* from, const GresRecord& rec,
             const node_config_load_t* node_conf) {
  if (from->cpus || rec.machine_cpus.empty() || !node_conf || !node_conf->xcpuinfo_mac_to_abs ||
      !to->cpu_cnt) {
    to->cpus = xstrdup(from->cpus);
    to->cpus_bitmap = from->cpus_bitmap ? bit_copy(from->cpus_bitmap) : nullptr;
    return;
  }
  char* abs = nullptr;
  if (node_conf->xcpuinfo_mac_to_abs(const_cast<char*>(rec.machine_cpus.c_str()), &abs) ||
      !abs) {
    info("gres/vgpu: cannot map CPUs %s of %s to Slurm's CPU ids; no Cores= for it",
         rec.machine_cpus.c_str(), rec.file.c_str());
    xfree(abs);
    return;
  }
  bitstr_t* bits = bit_alloc(to->cpu_cnt);
  if (bit_unfmt(bits, abs) != 0) {
    info("gres/vgpu: CPUs %s of %s are outside this node's %u CPUs; no Cores= for it", abs,
         rec.file.c_str(), to->cpu_cnt);
    FREE_NULL_BITMAP(bits);
    xfree(abs);
    return;
  }
  to->cpus = abs;
  to->cpus_bitmap = bits;
}

gres_slurmd_conf_t* CopyForDevice(const gres_slurmd_conf_t* from, const GresRecord& rec,
                                  const node_config_load_t* node_conf) {
  auto* to = static_cast<gres_slurmd_conf_t*>(xmalloc(sizeof(gres_slurmd_conf_t)));
  to->config_flags = (from->config_flags | GRES_CONF_HAS_FILE | GRES_CONF_HAS_TYPE) &
                     ~GRES_CONF_HAS_MULT;
  to->count = rec.count;
  to->cpu_cnt = from->cpu_cnt;
  SetCpus(to, from, rec, node_conf);
  to->file = xstrdup(rec.file.c_str());
  to->links = xstrdup(from->links);
  to->name = xstrdup(from->name);
  to->type_name = xstrdup(from->type_name);
  to->unique_id = xstrdup(from->unique_id);
  to->plugin_id = from->plugin_id;
  return to;
}

int DeviceNumber(const std::string& path, int fallback) {
  if (fallback >= 0) return fallback;
  size_t p = path.find_last_not_of("0123456789");
  if (p == std::string::npos || p + 1 >= path.size()) return -1;
  return std::atoi(path.c_str() + p + 1);
}

}  // namespace

std::vector<GresRecord> ReadRecords(list_t* gres_conf_list) {
  std::vector<GresRecord> out;
  list_itr_t* it = list_iterator_create(gres_conf_list);
  while (auto* c = static_cast<gres_slurmd_conf_t*>(list_next(it))) {
    GresRecord r;
    r.name = Str(c->name);
    r.type = Str(c->type_name);
    r.file = (c->config_flags & GRES_CONF_HAS_FILE) ? Str(c->file) : "";
    r.cpus = Str(c->cpus);
    r.links = Str(c->links);
    r.count = c->count;
    r.origin = out.size();
    out.push_back(r);
  }
  list_iterator_destroy(it);
  return out;
}

void ReplaceRecords(list_t* gres_conf_list, const std::vector<GresRecord>& records,
                    const node_config_load_t* node_conf) {
  std::vector<gres_slurmd_conf_t*> originals;
  while (auto* c = static_cast<gres_slurmd_conf_t*>(list_pop(gres_conf_list)))
    originals.push_back(c);
  std::vector<bool> kept(originals.size(), false);
  for (const GresRecord& rec : records) {
    gres_slurmd_conf_t* orig = originals.at(rec.origin);
    // vgpu records are always new (one per device); others pass through.
    if (!xstrcasecmp(orig->name, kGresName) || kept[rec.origin]) {
      list_append(gres_conf_list, CopyForDevice(orig, rec, node_conf));
    } else {
      kept[rec.origin] = true;
      list_append(gres_conf_list, orig);
    }
  }
  for (size_t i = 0; i < originals.size(); ++i)
    if (!kept[i]) destroy_gres_slurmd_conf(originals[i]);
}

list_t* BuildShareDevices(const DeviceTable& table) {
  list_t* devices = list_create(destroy_gres_device);
  for (const ShareDevice& sd : table.devices()) {
    const std::string& path = sd.device.files.front();
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
      error("gres/vgpu: %s is not a device file; ConstrainDevices cannot fence it",
            path.c_str());
      continue;
    }
    for (uint32_t bit = sd.first_bit; bit < sd.first_bit + sd.shares; ++bit) {
      auto* d = static_cast<gres_device_t*>(xmalloc(sizeof(gres_device_t)));
      d->index = static_cast<int>(bit);
      d->dev_desc.type = S_ISBLK(st.st_mode) ? DEV_TYPE_BLOCK : DEV_TYPE_CHAR;
      d->dev_desc.major = major(st.st_rdev);
      d->dev_desc.minor = minor(st.st_rdev);
      d->dev_num = DeviceNumber(path, sd.device.vendor_index);
      d->path = xstrdup(path.c_str());
      list_append(devices, d);
    }
  }
  return devices;
}

std::vector<uint32_t> SetBits(bitstr_t* bitmap) {
  std::vector<uint32_t> bits;
  if (!bitmap) return bits;
  int64_t size = bit_size(bitmap);
  for (int64_t i = bit_ffs(bitmap); i >= 0 && i < size; ++i)
    if (bit_test(bitmap, i)) bits.push_back(static_cast<uint32_t>(i));
  return bits;
}

void ApplyEnv(char*** env, const EnvVars& vars) {
  for (const auto& [name, value] : vars) env_array_overwrite(env, name.c_str(), value.c_str());
}

void ClearEnv(char*** env) {
  if (!*env) return;
  for (const std::string& name : JobEnvVariablesToClear()) unsetenvp(*env, name.c_str());
}

std::string SlurmdNodeName() {
  if (!&conf || !conf || !running_in_slurmd()) return "";
  return Str(conf->node_name);
}

std::string ConfigPath(const char* name) {
  char* path = get_extra_conf_path(const_cast<char*>(name));
  std::string out = Str(path);
  xfree(path);
  return out;
}

}  // namespace slurm
}  // namespace vgpu
