// spank_vgpu.so: slurm-vgpu's SPANK plugin, loaded by slurmstepd from
// plugstack.conf:
//
//   required /usr/lib/slurm-vgpu/spank_vgpu.so [vgpu_conf=/etc/slurm/vgpu.conf]
//
// For each task of a job that has vgpu shares on the node, in slurmstepd as
// root after the task's fork and before its program runs
// (slurm_spank_task_init_privileged):
//  * hands the task its run directory as an open descriptor
//    (VGPU_RUN_DIR_FD), which libvgpu.so uses where a container does not
//    show /run/slurm-vgpu;
//  * for a job step that holds part of the job's shares (srun --gres=vgpu:20
//    inside a job of 50), makes the step's own limits and usage regions
//    (jobs/step_limits.h), so that the step is held to its part;
//  * puts libvgpu.so in LD_PRELOAD and sets the hardware slices' visibility
//    variables (what vgpu-taskprolog does, without depending on TaskProlog);
//  * with JobUserNamespaces=deny in vgpu.conf, loads the seccomp filter of
//    user_namespace_filter.h.
// Elsewhere (srun, sbatch, salloc: the local and allocator contexts) it does
// nothing. A job without vgpu on the node is left alone.
#include <cstring>
#include <string>

#include "compat/slurm_spank.h"
#include "config/vgpu_config.h"
#include "slurm_plugin.h"
#include "spank_vgpu/task_handoff.h"
#include "spank_vgpu/user_namespace_filter.h"
#include "util/read_file.h"

VGPU_SLURM_PLUGIN("vgpu", "spank");
VGPU_EXPORT const unsigned int spank_plugin_version = 1;

namespace {

constexpr const char* kDefaultConfig = "/etc/slurm/vgpu.conf";

// vgpu_conf=PATH from the plugin's arguments in plugstack.conf.
std::string ConfigPath(int argc, char** argv) {
  for (int i = 0; i < argc; ++i)
    if (std::strncmp(argv[i], "vgpu_conf=", 10) == 0) return argv[i] + 10;
  return kDefaultConfig;
}

int TaskInitPrivileged(spank_t sp, int argc, char** argv) {
  if (!spank_remote(sp)) return 0;
  uint32_t job_id = 0;
  if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS || job_id == 0) return 0;

  std::string env_value;  // spank_getenv copies into a buffer of ours
  auto task_env = [&](const char* name) -> const char* {
    char buf[8192];
    if (spank_getenv(sp, name, buf, sizeof(buf)) != ESPANK_SUCCESS) return nullptr;
    env_value = buf;
    return env_value.c_str();
  };
  auto preload = vgpu::ReadTextFile("/etc/ld.so.preload");
  auto handoff = vgpu::PrepareTaskHandoff(job_id, VGPU_RUN_DIR, VGPU_INTERPOSER_PATH,
                                          preload.ok() ? *preload : "", task_env);
  if (!handoff.ok()) {
    // libvgpu.so will fail closed in the task, and say why there too.
    slurm_error("spank_vgpu: job %u: %s", job_id, handoff.message().c_str());
    return 0;
  }
  auto export_all = [&] {
    for (const auto& [name, value] : handoff->exports)
      if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS)
        slurm_error("spank_vgpu: job %u: cannot set %s in the task's environment", job_id, name.c_str());
  };
  if (!handoff->vgpu_job) {
    // No run directory. A task Slurm gave vgpu shares still gets
    // libvgpu.so, which fails closed: its prolog did not run (task_env.h).
    export_all();
    return 0;
  }

  // A step holding part of the job's shares gets limits of its own. Step
  // ids from 0xfffffff0 up are Slurm's special steps (batch, extern,
  // interactive), which hold the job's whole part.
  uint32_t step_id = 0;
  if (spank_get_item(sp, S_JOB_STEPID, &step_id) == ESPANK_SUCCESS && step_id < 0xfffffff0u) {
    uid_t uid = 0;
    gid_t gid = 0;
    const char* devices = task_env("VGPU_DEVICES");
    const std::string step_devices = devices ? devices : "";
    const char* uuids = task_env("VGPU_UUIDS");
    const std::string step_uuids = uuids ? uuids : "";
    const char* shares = task_env("VGPU_SHARES");
    const std::string step_shares = shares ? shares : "";
    vgpu::Status st = spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS &&
                              spank_get_item(sp, S_JOB_GID, &gid) == ESPANK_SUCCESS
                          ? vgpu::PrepareStepLimits(job_id, step_id, VGPU_RUN_DIR, step_devices, step_uuids,
                                                    step_shares, uid, gid)
                          : vgpu::Status::Error("cannot read the job's user and group");
    if (!st.ok()) {
      // Without them the step is held to the job's limits, never more.
      slurm_error("spank_vgpu: job %u step %u: %s; the step is held to the job's limits", job_id, step_id,
                  st.message().c_str());
    }
  }
  export_all();

  const std::string config_path = ConfigPath(argc, argv);
  auto config = vgpu::VgpuConfig::Load(config_path, vgpu::VgpuConfig());
  if (!config.ok()) {
    // The site may have asked for the filter: do not run the task without it.
    slurm_error("spank_vgpu: job %u: %s (fix it, or name the file with vgpu_conf= in plugstack.conf)", job_id,
                config.message().c_str());
    return -1;
  }
  if (config->deny_job_user_namespaces) {
    vgpu::Status st = vgpu::DenyNewUserNamespaces();
    if (!st.ok()) {
      slurm_error("spank_vgpu: job %u: %s", job_id, st.message().c_str());
      return -1;
    }
  }
  return 0;
}

}  // namespace

// Slurm calls these from C; nothing may throw across them.
VGPU_EXPORT int slurm_spank_task_init_privileged(spank_t sp, int argc, char** argv) {
  try {
    return TaskInitPrivileged(sp, argc, argv);
  } catch (const std::exception& e) {
    slurm_error("spank_vgpu: %s", e.what());
    return -1;
  }
}
