// job_submit/vgpu: refuses, at sbatch/srun/salloc time and with a message
// the user sees, vgpu requests that can never be placed (more than one
// device's shares that are not whole devices, more than any node has,
// per-task/socket/job forms, a type no node has, vgpu asked twice, a count
// that is not a whole number). Everything else passes unchanged.
//
// Entry points only; the rules are vgpu::CheckVgpuSubmission (config/vgpu_request.h).
#include <exception>
#include <string>

#include "compat/slurm_compat.h"
#include "config/vgpu_config.h"
#include "config/vgpu_request.h"
#include "slurm_plugin.h"

VGPU_SLURM_PLUGIN("Refuse vgpu requests that can never be placed", "job_submit/vgpu");

namespace {

// vgpu.conf, read again when it changes: slurmctld does not re-init
// job_submit plugins on `scontrol reconfigure` in every release.
vgpu::VgpuConfigFile* g_config = nullptr;

uint32_t SharesPerDevice() {
  if (!g_config) return vgpu::VgpuConfig::kDefaultSharesPerDevice;
  vgpu::Status st = g_config->Refresh();
  if (!st.ok())
    error("job_submit/vgpu: %s (SharesPerDevice=%u)", st.message().c_str(), g_config->config().shares_per_device);
  return g_config->config().shares_per_device;
}

// What every node's configured Gres= offers. Called with slurmctld's node
// read lock held (job_submit_plugin_submit asserts it).
vgpu::VgpuCapacity NodeCapacity() {
  vgpu::VgpuCapacity nodes;
  for (int i = 0; i < node_record_count; ++i) {
    node_record_t* node = node_record_table_ptr[i];
    if (node && node->config_ptr && node->config_ptr->gres) nodes.AddNode(node->config_ptr->gres);
  }
  return nodes;
}

std::string Str(const char* s) { return s ? s : ""; }

int Check(const job_desc_msg_t* job, char** err_msg) {
  vgpu::JobTres tres{Str(job->tres_per_node), Str(job->tres_per_job), Str(job->tres_per_socket),
                     Str(job->tres_per_task)};
  vgpu::Status st = vgpu::CheckVgpuSubmission(tres, SharesPerDevice(), NodeCapacity());
  if (st.ok()) return SLURM_SUCCESS;
  if (err_msg) *err_msg = xstrdup(st.message().c_str());
  info("job_submit/vgpu: refused a job of uid %u: %s", job->user_id, st.message().c_str());
  return ESLURM_INVALID_GRES;
}

template <typename F>
int Guard(const char* entry, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    error("job_submit/vgpu: %s failed: %s", entry, e.what());
  } catch (...) {
    error("job_submit/vgpu: %s failed", entry);
  }
  return SLURM_SUCCESS;  // never refuse a job over our own fault
}

}  // namespace

VGPU_EXPORT int init(void) {
  return Guard("init", [] {
    char* path = get_extra_conf_path(const_cast<char*>("vgpu.conf"));
    delete g_config;
    g_config = new vgpu::VgpuConfigFile(Str(path));
    xfree(path);
    SharesPerDevice();  // reports a mistake now rather than at the first job
    return SLURM_SUCCESS;
  });
}

VGPU_EXPORT int fini(void) {
  delete g_config;
  g_config = nullptr;
  return SLURM_SUCCESS;
}

VGPU_EXPORT int job_submit(job_desc_msg_t* job_desc, uint32_t, char** err_msg) {
  return Guard("job_submit", [&] { return Check(job_desc, err_msg); });
}

// `scontrol update job ... gres=` goes through the same rules; Slurm 22.05
// has no message channel for modify, so there the refusal is only logged.
VGPU_EXPORT int job_modify VGPU_JOB_MODIFY_PARAMS {
  (void)job;
  (void)submit_uid;
  return Guard("job_modify", [&] { return Check(job_desc, VGPU_JOB_MODIFY_ERR_MSG); });
}
