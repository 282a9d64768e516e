// Translation between Slurm's C structures and the libraries' value types,
// for the gres/vgpu entry points. Nothing here throws into Slurm: callers
// wrap each entry point in a catch-all.
#ifndef VGPU_GRES_SLURM_BRIDGE_H_
#define VGPU_GRES_SLURM_BRIDGE_H_

#include <string>
#include <vector>

#include "devices/device_table.h"
#include "devices/gres_record.h"
#include "compat/slurm_compat.h"
#include "jobs/job_env.h"

namespace vgpu {
namespace slurm {

// Copies the records of Slurm's gres.conf list, in list order.
std::vector<GresRecord> ReadRecords(list_t* gres_conf_list);

// Replaces the list's contents with `records`. Each record reuses (or, for
// vgpu device records, copies) the original Slurm record at its origin;
// originals no longer referenced are freed. `node_conf` converts discovered
// CPU affinity into Cores=.
void ReplaceRecords(list_t* gres_conf_list, const std::vector<GresRecord>& records,
                    const node_config_load_t* node_conf);

// One gres_device_t per share bit (index = bit), so that task/cgroup's
// ConstrainDevices allows a device exactly when one of its bits is held.
// Devices whose file cannot be stat()ed are logged and left out.
list_t* BuildShareDevices(const DeviceTable& table);

// Set bits of `bitmap` (may be null).
std::vector<uint32_t> SetBits(bitstr_t* bitmap);

// Sets `vars` in, or (with no allocation) removes our variables from, *env.
void ApplyEnv(char*** env, const EnvVars& vars);
void ClearEnv(char*** env);

// The node slurmd serves (several slurmd may share a host), or "" outside slurmd.
std::string SlurmdNodeName();

// A file next to slurm.conf.
std::string ConfigPath(const char* name);

}  // namespace slurm
}  // namespace vgpu

#endif  // VGPU_GRES_SLURM_BRIDGE_H_
