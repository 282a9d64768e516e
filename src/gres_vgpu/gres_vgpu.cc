// gres/vgpu: fractional accelerator shares as GRES bits.
//
// Entry points only: each translates Slurm's arguments with slurm_bridge,
// calls the libraries (src/devices, src/jobs, src/config), and catches everything so that no exception reaches a
// Slurm daemon. The plugin's state is what Slurm forces on it: the node's
// device table and the gres_device_t list task/cgroup asks for.
#include <sys/stat.h>

#include <exception>
#include <string>
#include <vector>

#include "config/vgpu_config.h"
#include "devices/chip_catalog.h"
#include "devices/discovery.h"
#include "devices/gres_conf_locator.h"
#include "devices/share_layout.h"
#include "jobs/job_env.h"
#include "slurm_bridge.h"
#include "slurm_plugin.h"

#ifndef VGPU_DEFAULT_CATALOG_DIR
#define VGPU_DEFAULT_CATALOG_DIR "/usr/share/slurm-vgpu/chips.d"
#endif

VGPU_SLURM_PLUGIN("Fractional accelerator shares (vgpu) GRES plugin", "gres/vgpu");

namespace {

using vgpu::DeviceTable;

struct PluginState {
  DeviceTable table;
  list_t* devices = nullptr;  // gres_device_t, one per share bit
};

PluginState& State() {
  static PluginState state;
  return state;
}

void SetTable(DeviceTable table, bool build_devices) {
  PluginState& st = State();
  FREE_NULL_LIST(st.devices);
  st.table = std::move(table);
  if (build_devices) st.devices = vgpu::slurm::BuildShareDevices(st.table);
}

void LogPrefixed(bool is_error, const std::string& message) {
  const char* prefix = message.rfind("gres/vgpu", 0) == 0 ? "" : "gres/vgpu: ";
  if (is_error)
    error("%s%s", prefix, message.c_str());
  else
    info("%s%s", prefix, message.c_str());
}

// Leaves only the other GRES in the list: slurmctld then sees fewer vgpu than
// slurm.conf says and drains the node, rather than scheduling shares onto a
// layout nobody can vouch for.
void ReportNoVgpu(list_t* gres_conf_list, node_config_load_t* node_conf,
                  const std::vector<vgpu::GresRecord>& merged, const std::string& why) {
  LogPrefixed(true, why + "; this node reports no vgpu until that is fixed");
  std::vector<vgpu::GresRecord> others;
  for (const auto& r : merged)
    if (r.name != vgpu::kGresName) others.push_back(r);
  vgpu::slurm::ReplaceRecords(gres_conf_list, others, node_conf);
  SetTable(DeviceTable(), false);
}

// Builds the share layout for this node and rewrites Slurm's record list.
int LoadNodeConfig(list_t* gres_conf_list, node_config_load_t* node_conf) {
  const std::string node = vgpu::slurm::SlurmdNodeName();
  vgpu::VgpuConfig defaults;
  defaults.chip_catalog_dirs = VGPU_DEFAULT_CATALOG_DIR;
  const std::string config_path = vgpu::slurm::ConfigPath("vgpu.conf");
  auto config = vgpu::VgpuConfig::Load(config_path, defaults);
  std::vector<vgpu::GresRecord> merged = vgpu::slurm::ReadRecords(gres_conf_list);
  if (!config.ok()) {
    // Without a trustworthy S the layout could disagree with slurm.conf.
    ReportNoVgpu(gres_conf_list, node_conf, merged, config.message());
    return SLURM_SUCCESS;
  }

  auto catalog = vgpu::ChipCatalog::LoadDirectories(config->chip_catalog_dirs);
  if (!catalog.ok()) LogPrefixed(true, catalog.message());
  // Skipped catalog files: only devices of their models are affected (the
  // layout below refuses a Type= no model has).
  if (catalog.ok())
    for (const std::string& p : catalog->problems()) LogPrefixed(true, "chip catalog: " + p);
  vgpu::ChipCatalog empty;
  const vgpu::ChipCatalog& chips = catalog.ok() ? *catalog : empty;

  vgpu::ShareLayoutInput in;
  in.node_name = node;
  in.shares_per_device = config->shares_per_device;
  in.catalog = &chips;
  // Device files live on the compute node: slurmctld (loading gres.conf for
  // cloud nodes) cannot check them.
  const bool on_node = node_conf->in_slurmd;
  in.file_exists = [on_node](const std::string& f) {
    struct stat st;
    return !on_node || stat(f.c_str(), &st) == 0;
  };
  if (node_conf->in_slurmd) {
    const std::string inventory = config->InventoryFor(node);
    vgpu::DiscoveryReport found =
        vgpu::DiscoverDevices(chips, vgpu::DiscoveryEnv::Default(), inventory);
    for (const auto& n : found.notes) LogPrefixed(false, n);
    // A vendor library failing leaves devices known by their files only; a
    // broken inventory the admin asked for is a configuration error.
    if (!inventory.empty() && !found.errors.empty()) {
      ReportNoVgpu(gres_conf_list, node_conf, merged, found.errors.front());
      return SLURM_SUCCESS;
    }
    for (const auto& e : found.errors) LogPrefixed(true, e);
    in.discovered = std::move(found.devices);
  }
  const std::string gres_conf = vgpu::slurm::ConfigPath("gres.conf");
  auto gres_conf_text = vgpu::DiscoveryEnv::Default().ReadFile(gres_conf);
  vgpu::GresConfLocator locator(gres_conf, gres_conf_text.ok() ? *gres_conf_text : "");
  in.locator = &locator;

  vgpu::ShareLayout layout = vgpu::BuildShareLayout(merged, in);
  for (const auto& n : layout.notes) LogPrefixed(false, n);
  for (const auto& e : layout.errors) LogPrefixed(true, e);
  vgpu::slurm::ReplaceRecords(gres_conf_list, layout.records, node_conf);
  for (const auto& d : layout.table.devices())
    info("gres/vgpu: device %s type=%s model=%s bits %u-%u memory=%llu",
         d.device.files.front().c_str(), d.device.gres_type.c_str(),
         d.device.model_id.empty() ? "unknown" : d.device.model_id.c_str(), d.first_bit,
         d.first_bit + d.shares - 1, static_cast<unsigned long long>(d.device.memory_bytes));
  SetTable(std::move(layout.table), node_conf->in_slurmd);
  return SLURM_SUCCESS;
}

void SetEnvForBits(char*** env, bitstr_t* bits, const char* what) {
  if (!bits) {
    vgpu::slurm::ClearEnv(env);
    return;
  }
  const DeviceTable& table = State().table;
  size_t stray = 0;
  auto shares = table.Split(vgpu::slurm::SetBits(bits), &stray);
  if (stray)
    error("gres/vgpu: %s: %zu share bit(s) fall on no known device (node has %u bits); "
          "restart slurmd after changing gres.conf", what, stray, table.total_bits());
  vgpu::JobEnvOptions options;
  options.local_index = gres_use_local_device_index();
  vgpu::slurm::ClearEnv(env);
  vgpu::slurm::ApplyEnv(env, vgpu::BuildJobEnv(table, shares, options));
}

template <typename F>
void Guard(const char* entry, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    error("gres/vgpu: %s failed: %s", entry, e.what());
  } catch (...) {
    error("gres/vgpu: %s failed with an unknown exception", entry);
  }
}

}  // namespace

VGPU_EXPORT int init(void) { return SLURM_SUCCESS; }

VGPU_EXPORT int fini(void) {
  Guard("fini", [] { SetTable(DeviceTable(), false); });
  return SLURM_SUCCESS;
}

VGPU_EXPORT int gres_p_node_config_load(list_t* gres_conf_list, node_config_load_t* node_conf) {
  int rc = SLURM_SUCCESS;
  Guard("node_config_load", [&] { rc = LoadNodeConfig(gres_conf_list, node_conf); });
  return rc;
}

VGPU_EXPORT void gres_p_job_set_env(char*** env, bitstr_t* bits, uint64_t, gres_internal_flags_t) {
  Guard("job_set_env", [&] { SetEnvForBits(env, bits, "job"); });
}

VGPU_EXPORT void gres_p_step_set_env(char*** env, bitstr_t* bits, uint64_t,
                                     gres_internal_flags_t) {
  Guard("step_set_env", [&] { SetEnvForBits(env, bits, "step"); });
}

// Called only with --gpu-bind/--tres-bind, which vgpu does not interpret:
// every task of a step sees the step's shares.
VGPU_EXPORT void gres_p_task_set_env(char***, bitstr_t*, uint64_t, bitstr_t*,
                                     gres_internal_flags_t) {}

VGPU_EXPORT void gres_p_send_stepd(buf_t* buffer) {
  Guard("send_stepd", [&] { packstr(const_cast<char*>(State().table.Serialize().c_str()), buffer); });
}

VGPU_EXPORT void gres_p_recv_stepd(buf_t* buffer) {
  Guard("recv_stepd", [&] {
    char* text = nullptr;
    uint32_t len = 0;
    if (unpackstr_xmalloc(&text, &len, buffer) != SLURM_SUCCESS) {
      error("gres/vgpu: recv_stepd: no device table from slurmd");
      return;
    }
    auto table = DeviceTable::Parse(text ? text : "");
    xfree(text);
    if (!table.ok()) {
      error("gres/vgpu: recv_stepd: %s", table.message().c_str());
      return;
    }
    SetTable(std::move(*table), true);
  });
}

#if VGPU_GRES_HAS_JOB_INFO
VGPU_EXPORT int gres_p_get_job_info(gres_job_state_t*, uint32_t, enum gres_job_data_type, void*) {
  return EINVAL;
}

VGPU_EXPORT int gres_p_get_step_info(gres_step_state_t*, uint32_t, enum gres_step_data_type,
                                     void*) {
  return EINVAL;
}
#endif

VGPU_EXPORT list_t* gres_p_get_devices(void) { return State().devices; }

VGPU_EXPORT void gres_p_step_hardware_init(bitstr_t*, char*) {}
VGPU_EXPORT void gres_p_step_hardware_fini(void) {}

// Runs in slurmctld: keeps the job's per-node share bits for the node side.
VGPU_EXPORT gres_prep_t* VGPU_GRES_PREP_ENTRY(build_env)(gres_job_state_t* gres_js) {
  gres_prep_t* ei = nullptr;
  Guard("prep_build_env", [&] {
    ei = static_cast<gres_prep_t*>(xmalloc(sizeof(gres_prep_t)));
    ei->node_cnt = gres_js->node_cnt;
    ei->gres_bit_alloc =
        static_cast<bitstr_t**>(xcalloc(ei->node_cnt ? ei->node_cnt : 1, sizeof(bitstr_t*)));
    ei->gres_cnt_node_alloc =
        static_cast<uint64_t*>(xcalloc(ei->node_cnt ? ei->node_cnt : 1, sizeof(uint64_t)));
    for (uint32_t i = 0; i < ei->node_cnt; ++i) {
      if (gres_js->gres_bit_alloc && gres_js->gres_bit_alloc[i])
        ei->gres_bit_alloc[i] = bit_copy(gres_js->gres_bit_alloc[i]);
      if (gres_js->gres_cnt_node_alloc)
        ei->gres_cnt_node_alloc[i] = gres_js->gres_cnt_node_alloc[i];
    }
  });
  return ei;
}

VGPU_EXPORT void VGPU_GRES_PREP_ENTRY(set_env)(char*** env, gres_prep_t* ei, int node_inx) {
  Guard("prep_set_env", [&] {
    bitstr_t* bits = nullptr;
    if (ei && node_inx >= 0 && static_cast<uint32_t>(node_inx) < ei->node_cnt &&
        ei->gres_bit_alloc)
      bits = ei->gres_bit_alloc[node_inx];
    if (bits) SetEnvForBits(env, bits, "prolog/epilog");
  });
}
