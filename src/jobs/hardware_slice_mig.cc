// NVIDIA MIG slices through NVML (libnvidia-ml.so.1, loaded with dlopen).
//
// No NVIDIA header is used (see devices/nvml_api.h). GPU instance and
// compute instance handles are opaque pointers; the profile and instance
// info structures are repeated field for field from the NVML API reference
// (the v1 layouts that nvmlDeviceGetGpuInstanceProfileInfo,
// nvmlGpuInstanceGetComputeInstanceProfileInfo and nvmlGpuInstanceGetInfo
// fill).
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "devices/nvml_api.h"
#include "jobs/hardware_slice.h"
#include "jobs/hardware_slice_internal.h"

namespace vgpu {
namespace {

using namespace nvml_api;  // NOLINT: NVML's own names, as nvml.h spells them

// --- NVML API (nvml.h) ------------------------------------------------------
constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;
constexpr unsigned int NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED = 0;
// Profile ids are probed up to these bounds (NVML_*_INSTANCE_PROFILE_COUNT
// grows with driver releases; unknown ids answer "invalid argument").
constexpr unsigned int kMaxGpuInstanceProfiles = 32;
constexpr unsigned int kMaxComputeInstanceProfiles = 16;
// Compute instances a GPU instance can hold (one per slice of a 7g/8g one).
constexpr unsigned int kMaxComputeInstances = 8;
// GPU instance ids probed on a GPU (7 at most are in use on an A100/H100).
constexpr unsigned int kMaxGpuInstanceIds = 32;
// Placements a GPU instance profile can have (one per memory slice).
constexpr unsigned int kMaxPlacements = 16;

typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;

struct nvmlGpuInstanceProfileInfo_t {
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
};

struct nvmlComputeInstanceProfileInfo_t {
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
};

struct nvmlGpuInstancePlacement_t {
  unsigned int start;
  unsigned int size;
};

struct nvmlGpuInstanceInfo_t {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
};

struct Nvml : NvmlSession {
  using NvmlSession::NvmlSession;
  Entry<nvmlReturn_t (*)(const char*, nvmlDevice_t*)> handle_by_uuid{lib, "nvmlDeviceGetHandleByUUID"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*)> mig_mode{lib, "nvmlDeviceGetMigMode"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstanceProfileInfo_t*)> gi_profile{
      lib, "nvmlDeviceGetGpuInstanceProfileInfo"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstance_t*)> create_gi{lib, "nvmlDeviceCreateGpuInstance"};
  Entry<nvmlReturn_t (*)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*)> gi_info{lib, "nvmlGpuInstanceGetInfo"};
  Entry<nvmlReturn_t (*)(nvmlGpuInstance_t, unsigned int, unsigned int, nvmlComputeInstanceProfileInfo_t*)> ci_profile{
      lib, "nvmlGpuInstanceGetComputeInstanceProfileInfo"};
  Entry<nvmlReturn_t (*)(nvmlGpuInstance_t, unsigned int, nvmlComputeInstance_t*)> create_ci{
      lib, "nvmlGpuInstanceCreateComputeInstance"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*)> max_mig{lib, "nvmlDeviceGetMaxMigDeviceCount"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t*)> mig_by_index{
      lib, "nvmlDeviceGetMigDeviceHandleByIndex"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*)> gi_id{lib, "nvmlDeviceGetGpuInstanceId"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*)> ci_id{lib, "nvmlDeviceGetComputeInstanceId"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int)> uuid{lib, "nvmlDeviceGetUUID"};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstance_t*)> gi_by_id{lib, "nvmlDeviceGetGpuInstanceById"};
  Entry<nvmlReturn_t (*)(nvmlGpuInstance_t, unsigned int, nvmlComputeInstance_t*)> ci_by_id{
      lib, "nvmlGpuInstanceGetComputeInstanceById"};
  Entry<nvmlReturn_t (*)(nvmlComputeInstance_t)> destroy_ci{lib, "nvmlComputeInstanceDestroy"};
  Entry<nvmlReturn_t (*)(nvmlGpuInstance_t)> destroy_gi{lib, "nvmlGpuInstanceDestroy"};
  // Optional: nvidia-smi -i then takes the GPU's UUID instead of its index.
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*)> get_index{lib, "nvmlDeviceGetIndex", kOptional};
  // Optional (drivers from R470): instances where slurmctld placed them.
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstancePlacement_t*, unsigned int*)> gi_placements{
      lib, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", kOptional};
  Entry<nvmlReturn_t (*)(nvmlDevice_t, unsigned int, const nvmlGpuInstancePlacement_t*, nvmlGpuInstance_t*)>
      create_gi_placed{lib, "nvmlDeviceCreateGpuInstanceWithPlacement", kOptional};
};
// -----------------------------------------------------------------------------

// |a - b|.
unsigned long long MiBApart(unsigned long long a, unsigned long long b) { return a > b ? a - b : b - a; }

// The slice count of a MIG profile name ("3g.40gb" -> 3), or 0.
unsigned int SlicesOfName(const std::string& name) {
  size_t digits = name.find_first_not_of("0123456789");
  if (digits == 0 || digits == std::string::npos || name[digits] != 'g') return 0;
  return static_cast<unsigned int>(std::strtoul(name.c_str(), nullptr, 10));
}

class MigDriver : public slice_internal::VendorSliceDriver<Nvml> {
 public:
  using VendorSliceDriver::VendorSliceDriver;
  ~MigDriver() override {
    if (started_) api_.shutdown();
  }

  Status Start() override;
  Result<HardwareSlice> Create(const std::string& parent, const SliceProfile& profile, std::optional<uint32_t> start,
                               const MadeSoFar& made_so_far) override;
  Status Destroy(const HardwareSlice& slice) override;
  Result<std::vector<HardwareSlice>> InPlace(const std::string& parent) override;

 private:
  // The driver's placement of GPU instance profile `id` that begins at
  // `start`; nullopt in the value when the driver has no placement calls.
  Result<std::optional<nvmlGpuInstancePlacement_t>> PlacementAt(nvmlDevice_t dev, unsigned int id, uint32_t start,
                                                                const SliceProfile& profile) const;
  struct MigDevice {
    unsigned int ci = 0;
    std::string uuid;
  };

  // "nvmlX failed: NVML error 23 (Insufficient Resources)".
  std::string Failed(const std::string& call, nvmlReturn_t rc) const { return api_.Failed(call, rc); }
  // What nvidia-smi -i takes for this GPU: its index, else its UUID.
  std::string SmiId(nvmlDevice_t dev, const std::string& uuid) const {
    unsigned int index = 0;
    if (api_.get_index != nullptr && api_.get_index(dev, &index) == NVML_SUCCESS) return std::to_string(index);
    return uuid;
  }
  // The MIG device of GPU instance `gi` (and compute instance `ci` if given);
  // nullopt in the value when there is none.
  Result<std::optional<MigDevice>> FindMigDevice(nvmlDevice_t dev, unsigned int gi,
                                                 std::optional<unsigned int> ci) const;
  // Destroys what a failed Create made; "" or a note on what is left behind.
  std::string Undo(nvmlGpuInstance_t gi, nvmlComputeInstance_t ci, const std::string& smi) const;

  bool started_ = false;
};

Status MigDriver::Start() {
  const nvmlReturn_t rc = api_.init();
  if (rc != NVML_SUCCESS) {
    return Status::Error(lib_.soname() + ": " + api_.Failed("nvmlInit_v2", rc) +
                         "; check that the NVIDIA driver is loaded (nvidia-smi) and that this runs as root");
  }
  started_ = true;
  return Status::Ok();
}

Result<std::optional<MigDriver::MigDevice>> MigDriver::FindMigDevice(nvmlDevice_t dev, unsigned int gi,
                                                                     std::optional<unsigned int> ci) const {
  using R = Result<std::optional<MigDevice>>;
  unsigned int max = 0;
  nvmlReturn_t rc = api_.max_mig(dev, &max);
  if (rc != NVML_SUCCESS) return R::Error(Failed("nvmlDeviceGetMaxMigDeviceCount", rc));
  for (unsigned int i = 0; i < max; ++i) {
    nvmlDevice_t mig = nullptr;
    unsigned int gi_id = 0, ci_id = 0;
    rc = api_.mig_by_index(dev, i, &mig);
    if (rc == NVML_ERROR_NOT_FOUND) continue;  // an empty slot
    if (rc != NVML_SUCCESS)
      return R::Error(Failed("nvmlDeviceGetMigDeviceHandleByIndex(" + std::to_string(i) + ")", rc));
    rc = api_.gi_id(mig, &gi_id);
    if (rc != NVML_SUCCESS) return R::Error(Failed("nvmlDeviceGetGpuInstanceId", rc));
    if (gi_id != gi) continue;
    rc = api_.ci_id(mig, &ci_id);
    if (rc != NVML_SUCCESS) return R::Error(Failed("nvmlDeviceGetComputeInstanceId", rc));
    if (ci && *ci != ci_id) continue;
    char buf[kUuidBufferSize] = {};
    rc = api_.uuid(mig, buf, kUuidBufferSize);
    if (rc != NVML_SUCCESS) return R::Error(Failed("nvmlDeviceGetUUID(MIG device)", rc));
    buf[kUuidBufferSize - 1] = '\0';
    return std::optional<MigDevice>(MigDevice{ci_id, buf});
  }
  return std::optional<MigDevice>();
}

std::string MigDriver::Undo(nvmlGpuInstance_t gi, nvmlComputeInstance_t ci, const std::string& smi) const {
  const char* call = "nvmlComputeInstanceDestroy";
  nvmlReturn_t rc = ci != nullptr ? api_.destroy_ci(ci) : NVML_SUCCESS;
  if (rc == NVML_SUCCESS || rc == NVML_ERROR_NOT_FOUND) {
    call = "nvmlGpuInstanceDestroy";
    rc = api_.destroy_gi(gi);
  }
  if (rc == NVML_SUCCESS || rc == NVML_ERROR_NOT_FOUND) return "";
  return "; undoing it failed too (" + Failed(call, rc) + "): nvidia-smi mig -i " + smi +
         " -lgi lists it, remove it with -dci and -dgi";
}

Result<std::optional<nvmlGpuInstancePlacement_t>> MigDriver::PlacementAt(nvmlDevice_t dev, unsigned int id,
                                                                          uint32_t start,
                                                                          const SliceProfile& profile) const {
  using R = Result<std::optional<nvmlGpuInstancePlacement_t>>;
  if (api_.gi_placements == nullptr || api_.create_gi_placed == nullptr)
    return std::optional<nvmlGpuInstancePlacement_t>();
  nvmlGpuInstancePlacement_t placements[kMaxPlacements] = {};
  unsigned int count = kMaxPlacements;
  const nvmlReturn_t rc = api_.gi_placements(dev, id, placements, &count);
  if (rc != NVML_SUCCESS) return R::Error(Failed("nvmlDeviceGetGpuInstancePossiblePlacements_v2", rc));
  std::string offered;
  for (unsigned int i = 0; i < count && i < kMaxPlacements; ++i) {
    if (placements[i].start == start && placements[i].size == profile.slots)
      return std::optional<nvmlGpuInstancePlacement_t>(placements[i]);
    offered += (offered.empty() ? "" : ", ") + std::to_string(placements[i].start) + ":" +
               std::to_string(placements[i].size);
  }
  return R::Error("the driver has no placement of " + std::to_string(profile.slots) + " slots at slot " +
                  std::to_string(start) + " (it offers start:size " + (offered.empty() ? "none" : offered) +
                  "); make the profile's \"slots\" and \"starts\" in chips.d match nvidia-smi mig -lgipp");
}

Result<HardwareSlice> MigDriver::Create(const std::string& parent, const SliceProfile& profile,
                                        std::optional<uint32_t> start, const MadeSoFar& made_so_far) {
  using R = Result<HardwareSlice>;
  const std::string what = "MIG " + profile.name + " on GPU " + parent + ": ";
  nvmlDevice_t dev = nullptr;
  nvmlReturn_t rc = api_.handle_by_uuid(parent.c_str(), &dev);
  if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
    return R::Error(what + "no such GPU on this node (" + Failed("nvmlDeviceGetHandleByUUID", rc) +
                    "); nvidia-smi -L lists the node's GPUs");
  if (rc != NVML_SUCCESS) return R::Error(what + Failed("nvmlDeviceGetHandleByUUID", rc));
  const std::string smi = SmiId(dev, parent);

  unsigned int current = 0, pending = 0;
  rc = api_.mig_mode(dev, &current, &pending);
  if (rc == NVML_ERROR_NOT_SUPPORTED)
    return R::Error(what + "this GPU has no MIG (" + Failed("nvmlDeviceGetMigMode", rc) +
                    "); remove the MIG profiles from its chips.d model or use A100/H100/H200 nodes");
  if (rc != NVML_SUCCESS) return R::Error(what + Failed("nvmlDeviceGetMigMode", rc));
  if (current != NVML_DEVICE_MIG_ENABLE) {
    std::string text = what + "MIG mode is not enabled on this GPU; enable it with nvidia-smi -i " + smi +
                       " -mig 1 (as root, with no process on the GPU)";
    if (pending == NVML_DEVICE_MIG_ENABLE) text += ": it is pending, reset the GPU (nvidia-smi -i " + smi + " -r)";
    return R::Error(text);
  }

  // The GPU instance profile: the name's slice count, memory within 15% of
  // the catalog's (closest wins, then the lowest id: "1g.10gb" is profile 0,
  // not 1g.10gb+me).
  const unsigned int slices = SlicesOfName(profile.name);
  if (slices == 0)
    return R::Error(what + "not a MIG profile name (<slices>g.<memory>gb); fix the profile in chips.d");
  const unsigned long long want_mb = profile.memory_bytes >> 20;
  std::optional<nvmlGpuInstanceProfileInfo_t> best;
  std::string offered;
  for (unsigned int id = 0; id < kMaxGpuInstanceProfiles; ++id) {
    nvmlGpuInstanceProfileInfo_t info = {};
    rc = api_.gi_profile(dev, id, &info);
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) continue;
    if (rc != NVML_SUCCESS)
      return R::Error(what + Failed("nvmlDeviceGetGpuInstanceProfileInfo(" + std::to_string(id) + ")", rc));
    offered += (offered.empty() ? "" : ", ") + std::to_string(info.sliceCount) + "g/" +
               std::to_string(info.memorySizeMB) + "MiB";
    if (info.sliceCount != slices) continue;
    if (want_mb != 0 && MiBApart(info.memorySizeMB, want_mb) * 100 > want_mb * 15) continue;
    if (!best || MiBApart(info.memorySizeMB, want_mb) < MiBApart(best->memorySizeMB, want_mb)) best = info;
  }
  if (!best)
    return R::Error(what + "the GPU has no MIG profile of " + std::to_string(slices) + " slices and about " +
                    std::to_string(want_mb) + " MiB (it offers: " + (offered.empty() ? "none" : offered) +
                    "); make the chips.d profile match nvidia-smi mig -i " + smi + " -lgip");

  std::optional<nvmlGpuInstancePlacement_t> placement;
  if (start) {
    auto at = PlacementAt(dev, best->id, *start, profile);
    if (!at.ok()) return R::Error(what + at.message());
    placement = *at;
  }
  nvmlGpuInstance_t gi = nullptr;
  const char* create = placement ? "nvmlDeviceCreateGpuInstanceWithPlacement" : "nvmlDeviceCreateGpuInstance";
  rc = placement ? api_.create_gi_placed(dev, best->id, &*placement, &gi) : api_.create_gi(dev, best->id, &gi);
  if (rc == NVML_ERROR_INSUFFICIENT_RESOURCES)
    return R::Error(what + Failed(create, rc) +
                    (placement ? " at slot " + std::to_string(*start) : std::string()) +
                    ": the GPU's free MIG slices do not fit this profile; nvidia-smi mig -i " + smi +
                    " -lgi lists the instances in place (remove leftovers with -dci/-dgi)");
  if (rc == NVML_ERROR_NO_PERMISSION)
    return R::Error(what + Failed(create, rc) + ": MIG instances are made by root");
  if (rc != NVML_SUCCESS) return R::Error(what + Failed(create, rc));

  // From here on a failure undoes the GPU instance (and compute instance).
  nvmlGpuInstanceInfo_t gi_info = {};
  rc = api_.gi_info(gi, &gi_info);
  if (rc != NVML_SUCCESS) return R::Error(what + Failed("nvmlGpuInstanceGetInfo", rc) + Undo(gi, nullptr, smi));
  const std::string gi_text = " (GPU instance " + std::to_string(gi_info.id) + ")";
  HardwareSlice s;
  s.vendor = "nvidia";
  s.parent = parent;
  s.profile = profile.name;
  s.instance = gi_info.id;
  s.sub_instance = kUnknownSubInstance;
  if (made_so_far) {
    Status recorded = made_so_far(s);
    if (!recorded.ok()) return R::Error(what + recorded.message() + gi_text + Undo(gi, nullptr, smi));
  }

  std::optional<nvmlComputeInstanceProfileInfo_t> whole;  // the compute profile spanning the GPU instance
  for (unsigned int id = 0; id < kMaxComputeInstanceProfiles && !whole; ++id) {
    nvmlComputeInstanceProfileInfo_t info = {};
    rc = api_.ci_profile(gi, id, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info);
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) continue;
    if (rc != NVML_SUCCESS)
      return R::Error(what + Failed("nvmlGpuInstanceGetComputeInstanceProfileInfo", rc) + gi_text +
                      Undo(gi, nullptr, smi));
    if (info.sliceCount == best->sliceCount) whole = info;
  }
  if (!whole)
    return R::Error(what + "no compute instance profile spans the GPU instance's " +
                    std::to_string(best->sliceCount) + " slices" + gi_text + Undo(gi, nullptr, smi));

  nvmlComputeInstance_t ci = nullptr;
  rc = api_.create_ci(gi, whole->id, &ci);
  if (rc != NVML_SUCCESS)
    return R::Error(what + Failed("nvmlGpuInstanceCreateComputeInstance", rc) + gi_text +
                    Undo(gi, nullptr, smi));

  auto mig = FindMigDevice(dev, gi_info.id, std::nullopt);
  if (!mig.ok()) return R::Error(what + mig.message() + gi_text + Undo(gi, ci, smi));
  if (!*mig)
    return R::Error(what + "NVML lists no MIG device for the new instance" + gi_text + Undo(gi, ci, smi));

  s.device = (*mig)->uuid;
  s.sub_instance = (*mig)->ci;
  s.memory_bytes = best->memorySizeMB << 20;
  return s;
}

Status MigDriver::Destroy(const HardwareSlice& slice) {
  if (slice.vendor != "nvidia") return Status::Error("the MIG driver cannot destroy a \"" + slice.vendor + "\" slice");
  const std::string gi_id = std::to_string(slice.instance);
  const std::string ci_id =
      slice.sub_instance == kUnknownSubInstance ? "not recorded" : std::to_string(slice.sub_instance);
  const std::string what = "destroying MIG " + slice.profile + " (GPU instance " + gi_id + ", compute instance " +
                           ci_id + ") on GPU " + slice.parent + ": ";
  nvmlDevice_t dev = nullptr;
  nvmlReturn_t rc = api_.handle_by_uuid(slice.parent.c_str(), &dev);
  if (rc == NVML_ERROR_NOT_FOUND) return Status::Ok();  // the GPU is gone, and its instances with it
  if (rc != NVML_SUCCESS) return Status::Error(what + Failed("nvmlDeviceGetHandleByUUID", rc));
  const std::string smi = SmiId(dev, slice.parent);
  const std::string ci_option = slice.sub_instance == kUnknownSubInstance ? "" : " -ci " + ci_id;
  const std::string by_hand = "; remove it by hand: nvidia-smi mig -i " + smi + " -gi " + gi_id + ci_option +
                              " -dci, then nvidia-smi mig -i " + smi + " -gi " + gi_id + " -dgi";

  unsigned int current = 0, pending = 0;
  rc = api_.mig_mode(dev, &current, &pending);
  if (rc == NVML_ERROR_NOT_SUPPORTED || (rc == NVML_SUCCESS && current != NVML_DEVICE_MIG_ENABLE))
    return Status::Ok();  // no MIG now: no instance can exist
  if (rc != NVML_SUCCESS) return Status::Error(what + Failed("nvmlDeviceGetMigMode", rc));

  // Ids are reused: destroy only while the MIG device there is still ours.
  if (!slice.device.empty()) {
    auto mig = FindMigDevice(dev, slice.instance, slice.sub_instance);
    if (!mig.ok()) return Status::Error(what + mig.message() + by_hand);
    if (*mig && (*mig)->uuid != slice.device) return Status::Ok();
  }

  nvmlGpuInstance_t gi = nullptr;
  rc = api_.gi_by_id(dev, slice.instance, &gi);
  if (rc == NVML_ERROR_NOT_FOUND) return Status::Ok();
  if (rc != NVML_SUCCESS) return Status::Error(what + Failed("nvmlDeviceGetGpuInstanceById", rc) + by_hand);
  // A partial slice (its prolog was killed inside Create) names no compute
  // instance: any of the GPU instance's may be the one Create made.
  std::vector<unsigned int> ci_ids;
  if (slice.sub_instance != kUnknownSubInstance) {
    ci_ids.push_back(slice.sub_instance);
  } else {
    for (unsigned int id = 0; id < kMaxComputeInstances; ++id) ci_ids.push_back(id);
  }
  for (unsigned int id : ci_ids) {
    nvmlComputeInstance_t ci = nullptr;
    rc = api_.ci_by_id(gi, id, &ci);
    if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_ERROR_INVALID_ARGUMENT && ci_ids.size() > 1)) continue;
    if (rc != NVML_SUCCESS)
      return Status::Error(what + Failed("nvmlGpuInstanceGetComputeInstanceById", rc) + by_hand);
    rc = api_.destroy_ci(ci);
    if (rc == NVML_ERROR_IN_USE)
      return Status::Error(what + Failed("nvmlComputeInstanceDestroy", rc) +
                           ": processes still run on it; nvidia-smi -i " + smi + " lists them, stop them and retry");
    if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_FOUND)
      return Status::Error(what + Failed("nvmlComputeInstanceDestroy", rc) + by_hand);
  }
  rc = api_.destroy_gi(gi);
  if (rc == NVML_SUCCESS || rc == NVML_ERROR_NOT_FOUND) return Status::Ok();
  if (rc == NVML_ERROR_IN_USE)
    return Status::Error(what + Failed("nvmlGpuInstanceDestroy", rc) +
                         ": the GPU instance holds other compute instances or processes; nvidia-smi mig -i " + smi +
                         " -lci lists them");
  return Status::Error(what + Failed("nvmlGpuInstanceDestroy", rc) + by_hand);
}

Result<std::vector<HardwareSlice>> MigDriver::InPlace(const std::string& parent) {
  using R = Result<std::vector<HardwareSlice>>;
  std::vector<HardwareSlice> out;
  nvmlDevice_t dev = nullptr;
  nvmlReturn_t rc = api_.handle_by_uuid(parent.c_str(), &dev);
  if (rc != NVML_SUCCESS) return R::Error("GPU " + parent + ": " + Failed("nvmlDeviceGetHandleByUUID", rc));
  unsigned int current = 0, pending = 0;
  rc = api_.mig_mode(dev, &current, &pending);
  if (rc == NVML_ERROR_NOT_SUPPORTED || (rc == NVML_SUCCESS && current != NVML_DEVICE_MIG_ENABLE)) return out;
  if (rc != NVML_SUCCESS) return R::Error("GPU " + parent + ": " + Failed("nvmlDeviceGetMigMode", rc));
  for (unsigned int id = 0; id < kMaxGpuInstanceIds; ++id) {
    nvmlGpuInstance_t gi = nullptr;
    rc = api_.gi_by_id(dev, id, &gi);
    if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT) continue;
    if (rc != NVML_SUCCESS) return R::Error("GPU " + parent + ": " + Failed("nvmlDeviceGetGpuInstanceById", rc));
    HardwareSlice s;
    s.vendor = "nvidia";
    s.parent = parent;
    s.profile = "GPU instance " + std::to_string(id);
    s.instance = id;
    s.sub_instance = kUnknownSubInstance;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<SliceDriver>> OpenMigDriver(const std::string& library) {
  return slice_internal::OpenDriver<MigDriver>(
      library.empty() ? "libnvidia-ml.so.1" : library,
      "MIG slices need the NVML library of an NVIDIA driver with MIG (R450 or newer) on this node");
}

}  // namespace vgpu
