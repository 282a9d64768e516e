#include "slurm_bridge.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <cstdlib>

#include "devices/share_layout.h"
#include "devices/socket_alignment.h"

// slurmd's configuration and CPU id converter; absent in slurmctld, which
// also loads this plugin, hence weak.
#pragma weak conf
#pragma weak xcpuinfo_abs_to_mac

namespace vgpu {
namespace slurm {
namespace {

std::string Str(const char* s) { return s ? s : ""; }

// A device whose local cores were widened to whole sockets.
struct CoreWidening {
  std::string file;
  std::string from;  // abstract core ids
  std::string to;
};

// Slurm's core numbering of this node as slurmd registers it, which is what
// slurmctld checks Cores= against; unknown ({0, 0}) outside slurmd.
SocketLayout RegisteredLayout() {
  if (!&conf || !conf) return {};
  return {conf->sockets, conf->cores};
}

// `abs_cores` (an abstract core range) widened to what this release's
// slurmctld accepts; unchanged where it accepts it already.
std::string AlignedCores(const std::string& abs_cores) {
  constexpr auto kCheck = static_cast<SocketCheck>(VGPU_GRES_SOCKET_CHECK);
  const SocketLayout layout = RegisteredLayout();
  if (kCheck == SocketCheck::kNone || layout.cores() <= 0) return abs_cores;
  bitstr_t* bits = bit_alloc(layout.cores());
  std::vector<bool> cores(layout.cores(), false);
  const bool parsed = bit_unfmt(bits, const_cast<char*>(abs_cores.c_str())) == 0;
  for (int c = 0; parsed && c < layout.cores(); ++c) cores[c] = bit_test(bits, c);
  FREE_NULL_BITMAP(bits);
  if (!parsed) return abs_cores;  // slurmctld reports a range it cannot read
  const std::vector<bool> aligned = AlignToSockets(cores, layout, kCheck);
  return aligned == cores ? abs_cores : FormatCores(aligned);
}

// Machine CPU ids (what cpus_bitmap holds) of an abstract core range; "" when
// slurmd's converter is not there or refuses it.
std::string MachineCpus(const std::string& abs_cores) {
  char* mac = nullptr;
  if (!&xcpuinfo_abs_to_mac ||
      xcpuinfo_abs_to_mac(const_cast<char*>(abs_cores.c_str()), &mac) || !mac) {
    xfree(mac);
    return "";
  }
  std::string out = mac;
  xfree(mac);
  return out;
}

// Cores= (abstract core ids) and cpus_bitmap (machine CPU ids) for a device
// record: the original's, else the CPUs discovery found local to the device,
// converted the way gres/gpu's AutoDetect does and widened to whole sockets
// where the release requires it (noted in `widened`).
void SetCpus(gres_slurmd_conf_t* to, const gres_slurmd_conf_t* from, const GresRecord& rec,
             const node_config_load_t* node_conf, std::vector<CoreWidening>* widened) {
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
  const std::string local = abs;
  xfree(abs);
  std::string cores = AlignedCores(local);
  std::string machine = rec.machine_cpus;
  if (cores != local) {
    machine = MachineCpus(cores);
    if (machine.empty()) {
      info("gres/vgpu: cannot map cores %s of %s back to machine CPUs; no Cores= for it",
           cores.c_str(), rec.file.c_str());
      return;
    }
    widened->push_back({rec.file, local, cores});
  }
  bitstr_t* bits = bit_alloc(to->cpu_cnt);
  if (bit_unfmt(bits, const_cast<char*>(machine.c_str())) != 0) {
    info("gres/vgpu: CPUs %s of %s are outside this node's %u CPUs; no Cores= for it",
         machine.c_str(), rec.file.c_str(), to->cpu_cnt);
    FREE_NULL_BITMAP(bits);
    return;
  }
  to->cpus = xstrdup(cores.c_str());
  to->cpus_bitmap = bits;
}

// One line for the whole node: what was widened, why, and how an admin keeps
// NUMA-level binding instead.
void LogWidening(const std::vector<CoreWidening>& widened) {
  if (widened.empty()) return;
  const CoreWidening& first = widened.front();
  const SocketLayout layout = RegisteredLayout();
  info("gres/vgpu: Slurm %s drains a node whose GRES Cores= covers part of a socket, so the "
       "cores local to %zu device(s) were widened to whole sockets (%d sockets of %d cores; "
       "%s: %s -> %s%s). Jobs are then bound to the socket, not the device's NUMA node; to "
       "keep NUMA binding, set SlurmdParameters=numa_node_as_socket (or l3cache_as_socket) "
       "and the node's Sockets=/CoresPerSocket= to what `slurmd -C` then reports",
       SLURM_VERSION_STRING, widened.size(), layout.sockets, layout.cores_per_socket,
       first.file.c_str(), first.from.c_str(), first.to.c_str(),
       widened.size() > 1 ? ", ..." : "");
}

gres_slurmd_conf_t* CopyForDevice(const gres_slurmd_conf_t* from, const GresRecord& rec,
                                  const node_config_load_t* node_conf,
                                  std::vector<CoreWidening>* widened) {
  auto* to = static_cast<gres_slurmd_conf_t*>(xmalloc(sizeof(gres_slurmd_conf_t)));
  to->config_flags = (from->config_flags | GRES_CONF_HAS_FILE | GRES_CONF_HAS_TYPE) &
                     ~GRES_CONF_HAS_MULT;
  to->count = rec.count;
  to->cpu_cnt = from->cpu_cnt;
  SetCpus(to, from, rec, node_conf, widened);
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
  std::vector<CoreWidening> widened;
  for (const GresRecord& rec : records) {
    gres_slurmd_conf_t* orig = originals.at(rec.origin);
    // vgpu records are always new (one per device); others pass through.
    if (!xstrcasecmp(orig->name, kGresName) || kept[rec.origin]) {
      list_append(gres_conf_list, CopyForDevice(orig, rec, node_conf, &widened));
    } else {
      kept[rec.origin] = true;
      list_append(gres_conf_list, orig);
    }
  }
  for (size_t i = 0; i < originals.size(); ++i)
    if (!kept[i]) destroy_gres_slurmd_conf(originals[i]);
  LogWidening(widened);
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
