// What one node's part of a vgpu job holds, read back from the environment
// the GRES plugin gives Prolog and Epilog (job_env.h), and the limits file
// that follows from it (job_limits.h).
#ifndef VGPU_JOBS_JOB_ALLOCATION_H_
#define VGPU_JOBS_JOB_ALLOCATION_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "devices/chip_catalog.h"
#include "jobs/job_limits.h"
#include "util/status.h"

namespace vgpu {

struct AllocatedDevice {
  uint32_t node_index = 0;  // VGPU_DEVICES: the device's index on the node
  std::string file;         // VGPU_DEVICE_FILES
  uint32_t shares = 0;
  // VGPU_SHARE_OFFSETS: the lowest share held (of 0..S-1); unset when a
  // gres_vgpu.so of an earlier release did not say.
  std::optional<uint32_t> first_share;
  uint64_t memory_quota = 0;  // bytes; 0 = unknown
  std::string type;           // gres type: nvidia, ascend, dcu
  std::string model;          // catalog id, "unknown" when the catalog lacks it
  std::string uuid;           // "" when unknown
  std::string pci_bus_id;     // "" when unknown
};

struct JobAllocation {
  uint32_t job_id = 0;
  std::string sluid;  // SLURM_JOB_SLUID (Slurm 26.05 and later); "" before
  uid_t uid = 0;
  gid_t gid = 0;
  uint32_t shares_per_device = 0;
  std::vector<AllocatedDevice> devices;  // empty: the job has no vgpu here

  // Reads SLURM_JOB_ID, SLURM_JOB_SLUID, SLURM_JOB_UID, SLURM_JOB_GID and the VGPU_*
  // variables through `getenv` (a seam: tests pass a map). No VGPU_DEVICES
  // is a job without vgpu on this node. Lists of different lengths, a bad
  // number or a missing job id is an error that names the variable.
  using Getenv = std::function<const char*(const char*)>;
  static Result<JobAllocation> FromEnvironment(const Getenv& getenv);

  // The limits file's contents. Each device is named by the id its
  // vendor's runtime reports, which libvgpu.so matches: the GPU UUID for
  // NVIDIA, the physical id (N of /dev/davinciN) for Ascend, the PCI bus id
  // for DCU; "" (matched by position) when that is not known. A device
  // of unknown size (quota 0) gets no memory limit.
  JobLimits Limits(const ChipCatalog& catalog) const;
};

// The vendor name the limits file uses ("nvidia", "ascend", "dcu") for a
// device of `model` (null: unknown) and gres `type`.
std::string LimitsVendor(const ChipModel* model, const std::string& type);

}  // namespace vgpu

#endif  // VGPU_JOBS_JOB_ALLOCATION_H_
