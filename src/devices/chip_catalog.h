// The chip catalog: one JSON file per chip model (etc/chips.d/<id>.json).
// Supporting a new chip is adding one file; nothing is compiled in.
//
// File format (all keys required unless marked optional):
// {
//   "id": "nvidia-h100",                     // unique; file stem by convention
//   "vendor": "nvidia",                      // "nvidia" | "huawei" | "hygon" | any
//   "gres_type": "nvidia",                   // Slurm GRES type (Type= in gres.conf)
//   "names": ["NVIDIA H100 80GB HBM3", ...], // as the driver reports them
//   "memory_bytes": 85899345920,
//   "compute_units": 132,
//   "compute_unit_name": "SM",               // optional, default "CU"
//   "device_file": "/dev/nvidia%d",          // %d = the backend's device number
//   "shared_files": ["/dev/nvidiactl", ...], // optional
//   "visible_devices_env": "CUDA_VISIBLE_DEVICES",
//   "discovery": "nvml",                     // "nvml" | "dcmi" | "rocm-smi" | "none"
//   "slice_slots": 8,                        // optional: the device's slicing positions
//   "profiles": [                            // optional hardware slices (MIG, vNPU)
//     {"name": "1g.10gb", "shares": 14, "memory_bytes": 10737418240, "compute_units": 16,
//      "slots": 1, "starts": [0, 1, 2, 3, 4, 5, 6]}
//   ]
// }
//
// slice_slots (at most 64) is what slurmctld needs to know which slices still
// fit a device (slice_geometry.h): the positions a slice occupies, NVML's MIG
// placement units (memory slices) or, for a chip whose slices can sit
// anywhere, one per smallest slice. With it every profile gives `slots`
// (how many it occupies) and `starts` (the first slot of each position it
// may take); without it, profiles have neither and only vgpu-prolog knows
// whether a slice fits.
#ifndef VGPU_DEVICES_CHIP_CATALOG_H_
#define VGPU_DEVICES_CHIP_CATALOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu {

constexpr uint32_t kMaxSliceSlots = 64;

struct SliceProfile {
  std::string name;
  uint32_t shares = 0;  // of 100
  uint64_t memory_bytes = 0;
  uint32_t compute_units = 0;
  uint32_t slots = 0;            // slots occupied; 0 without the model's slice_slots
  std::vector<uint32_t> starts;  // first slot of each allowed position
};

struct ChipModel {
  std::string id;
  std::string vendor;
  std::string gres_type;
  std::vector<std::string> names;
  uint64_t memory_bytes = 0;
  uint32_t compute_units = 0;
  std::string compute_unit_name = "CU";
  std::string device_file;
  std::vector<std::string> shared_files;
  std::string visible_devices_env;
  std::string discovery;
  uint32_t slice_slots = 0;  // 0: slice positions not described
  std::vector<SliceProfile> profiles;
  std::string source;  // path of the file it came from, for messages
};

class ChipCatalog {
 public:
  ChipCatalog() = default;

  // Reads every *.json file of each directory in `dirs` (a ':'-separated
  // list). A later directory's file with an id already seen replaces the
  // earlier one, so a site directory can override the shipped catalog.
  // Missing directories are skipped. A malformed file (bad JSON, a bad key,
  // an id another file of its directory has) is skipped and listed in
  // problems(), naming the file and the key or the line and column: one
  // mistake takes away that model only, and the devices that need it. An
  // empty catalog is not an error.
  static Result<ChipCatalog> LoadDirectories(const std::string& dirs);

  // What LoadDirectories skipped, one message per file or directory.
  const std::vector<std::string>& problems() const { return problems_; }

  // Parses one catalog file's text; `source` names it in messages.
  static Result<ChipModel> ParseModel(const std::string& json_text, const std::string& source);

  // Adds or replaces (same id) a model.
  void Add(ChipModel model);

  // Model whose names contain `reported_name` (case-insensitive, surrounding
  // blanks ignored), else nullptr.
  const ChipModel* FindByName(const std::string& reported_name) const;
  const ChipModel* FindById(const std::string& id) const;

  // True if `type` is some model's gres_type or id (case-insensitive): what
  // gres.conf may say in Type=.
  bool KnowsType(const std::string& type) const;
  // The distinct gres_type values, sorted, for messages ("known: ascend, dcu, nvidia").
  std::vector<std::string> Types() const;

  const std::vector<ChipModel>& models() const { return models_; }

 private:
  std::vector<ChipModel> models_;
  std::vector<std::string> problems_;
};

}  // namespace vgpu

#endif  // VGPU_DEVICES_CHIP_CATALOG_H_
