// Hardware slices for jobs: NVIDIA MIG instances (NVML) and Huawei Ascend
// vNPUs (DCMI). vgpu-prolog creates one per device of a job whose request a
// catalog profile covers, records them in the job run directory's "slices"
// file, and vgpu-epilog destroys what that file lists.
//
// The vendor libraries are loaded with dlopen, like discovery's backends
// (DiscoveryEnv::Default().OpenLibrary); nothing is linked against them.
//
// The "slices" file (root-owned, in the job's run directory, which the job's
// user cannot write). Text, '#' comments, blank lines ignored:
//
//   vgpu-slices 1
//   slice vendor=nvidia parent=GPU-8f2c... profile=1g.10gb device=MIG-5f1e... instance=7 sub_instance=0 memory=10334765056 job_device=0
//   slice vendor=ascend parent=3 profile=vir03_1c_8g device=100 instance=100 sub_instance=0 memory=0 job_device=1
//
// Every field is required, once. A slice whose sub_instance is 4294967295
// (kUnknownSubInstance) was recorded while being made and may have no
// device. A value is written percent-encoded where it
// holds a byte outside [A-Za-z0-9._:/+-] (so "%20" for a space), and an empty
// value is written "-" (a value that is just "-" is written "%2D"): whatever
// SerializeSlices writes, ParseSlices reads back identically. A file with the
// header and no slice line is valid (no slices).
#ifndef VGPU_JOBS_HARDWARE_SLICE_H_
#define VGPU_JOBS_HARDWARE_SLICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devices/chip_catalog.h"
#include "devices/slice_geometry.h"
#include "util/status.h"

namespace vgpu {

// sub_instance of a slice recorded before its compute instance was known.
constexpr uint32_t kUnknownSubInstance = 4294967295u;

// A hardware slice made for a job on one device.
struct HardwareSlice {
  std::string vendor;   // "nvidia" (MIG) | "ascend" (vNPU)
  std::string parent;   // NVIDIA: the GPU's UUID ("GPU-..."); Ascend: the NPU's physical id (decimal, N of /dev/davinciN)
  std::string profile;  // the catalog profile name ("1g.10gb", "vir03_1c_8g")
  std::string device;   // what the job is pointed at: MIG device UUID ("MIG-...") / vNPU device id (decimal)
  uint32_t instance = 0;      // NVIDIA: GPU instance id; Ascend: vdev id
  uint32_t sub_instance = 0;  // NVIDIA: compute instance id; Ascend: 0
  uint64_t memory_bytes = 0;  // the slice's memory as the driver reports it (0 = unknown)
  uint32_t job_device = 0;    // the job's device (limits file index) it was cut for; set by the caller
};

class SliceDriver {
 public:
  // Called by Create as soon as part of the slice exists on the device,
  // with what is known of it then: so that a caller killed before Create
  // returns has a record from which Destroy removes everything Create made.
  // An error from it makes Create undo what it made and fail.
  using MadeSoFar = std::function<Status(const HardwareSlice& partial)>;

  virtual ~SliceDriver() = default;
  // Creates a slice of `profile` on device `parent`. An error names the device, the profile, the driver's error and what to do.
  Result<HardwareSlice> Create(const std::string& parent, const SliceProfile& profile) {
    return Create(parent, profile, std::nullopt, MadeSoFar());
  }
  Result<HardwareSlice> Create(const std::string& parent, const SliceProfile& profile, const MadeSoFar& made_so_far) {
    return Create(parent, profile, std::nullopt, made_so_far);
  }
  // The same at slot `start` of the device (slice_geometry.h: where
  // slurmctld placed the job; nullopt: where the driver likes), reporting
  // partial progress to `made_so_far` (may be empty).
  virtual Result<HardwareSlice> Create(const std::string& parent, const SliceProfile& profile,
                                       std::optional<uint32_t> start, const MadeSoFar& made_so_far) = 0;
  // Destroys it; a slice (or parent) that is already gone is success (idempotent).
  virtual Status Destroy(const HardwareSlice& slice) = 0;
  // The slices on device `parent` now, each as a partial slice (its
  // instance; no device, sub_instance kUnknownSubInstance) from which
  // Destroy removes it. A driver that cannot list answers none.
  virtual Result<std::vector<HardwareSlice>> InPlace(const std::string& /*parent*/) {
    return std::vector<HardwareSlice>();
  }
};

// dlopen the vendor library (`library` empty = the vendor's soname: libnvidia-ml.so.1 / libdcmi.so), init it; error names the library and the fix.
//
// MIG contract: Create needs MIG mode enabled on the GPU; it maps the catalog
// profile to the GPU instance profile with the slice count of the name ("Ng")
// and a memory size within 15% of the catalog's, creates the GPU instance
// (with a `start`: at the driver's possible placement starting there, an
// error naming the catalog file when the driver offers none; drivers
// without nvmlDeviceCreateGpuInstanceWithPlacement place it themselves) and
// one compute instance spanning it, and returns the MIG device's UUID. A
// failure after the GPU instance exists undoes what was made. Once the GPU
// instance exists, made_so_far gets a partial slice: its instance, no
// device ("") and sub_instance kUnknownSubInstance. Destroy removes the
// compute instance and then the GPU instance (every compute instance of it
// for a partial slice); if the MIG device at those ids no longer has
// slice.device's UUID, the ids were reused by a newer slice and nothing is
// destroyed (success). The driver calls nvmlShutdown and
// dlclose when destroyed.
//
// InPlace (MIG): the GPU instances of the GPU, none when MIG is off; vNPU
// lists none.
//
// vNPU contract: `parent` is the physical id, mapped to DCMI's (card, device)
// by enumeration; the template name is the profile name; the vdev id is
// chosen by the driver, and so is where the vNPU sits (`start` unused). Destroy treats DCMI_ERR_CODE_DEVICE_NOT_EXIST
// (-8008) as already gone.
Result<std::unique_ptr<SliceDriver>> OpenMigDriver(const std::string& library = "");
Result<std::unique_ptr<SliceDriver>> OpenVnpuDriver(const std::string& library = "");

// The job run dir's "slices" file (format above). Parse is strict: an
// unknown record or field, a field missing or given twice, a bad number, an
// unknown vendor or a slice listed twice (same vendor, parent, instance and
// sub_instance) is an error naming `source`, the line and the fix.
std::string SerializeSlices(const std::vector<HardwareSlice>& slices);
Result<std::vector<HardwareSlice>> ParseSlices(const std::string& text, const std::string& source);

// <run_dir>/job_<id>.slices: the hardware slices made for the job (root's,
// 0644). Outside the job's directory, so that re-making that directory
// cannot lose the record of a slice.
std::string JobSlicesPath(const std::string& run_dir, uint32_t job_id);
// The slices on record for the job (none when there is no record).
Result<std::vector<HardwareSlice>> JobSlices(const std::string& run_dir, uint32_t job_id);


}  // namespace vgpu

#endif  // VGPU_JOBS_HARDWARE_SLICE_H_
