// A plain copy of one gres.conf record as Slurm hands it to a GRES plugin
// (gres_slurmd_conf_t), so that record rewriting is testable without Slurm.
#ifndef VGPU_DEVICES_GRES_RECORD_H_
#define VGPU_DEVICES_GRES_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace vgpu {

struct GresRecord {
  static constexpr size_t kNoOrigin = static_cast<size_t>(-1);

  std::string name;   // "vgpu", "gpu", ...
  std::string type;   // Type=, may be empty
  std::string file;   // File= expression, empty for count-only records
  std::string cpus;   // Cores= as Slurm keeps it (abstract ids), may be empty
  // CPUs local to the device in machine numbering, from discovery, for a
  // record without Cores=; Slurm's side converts them to abstract ids.
  std::string machine_cpus;
  std::string links;
  uint64_t count = 0;
  // Index of the input record this one came from, so the Slurm side can copy
  // what this struct does not carry (flags, CPU bitmap, unique id).
  size_t origin = kNoOrigin;
};

}  // namespace vgpu

#endif  // VGPU_DEVICES_GRES_RECORD_H_
