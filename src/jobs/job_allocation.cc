#include "jobs/job_allocation.h"

#include "jobs/job_identity.h"
#include "util/text.h"

namespace vgpu {
namespace {

using R = Result<JobAllocation>;

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The trailing decimal number of a device file's name ("/dev/davinci3" ->
// "3"), or "".
std::string TrailingNumber(const std::string& file) {
  size_t end = file.size(), start = end;
  while (start > 0 && file[start - 1] >= '0' && file[start - 1] <= '9') --start;
  return file.substr(start, end - start);
}

}  // namespace

std::string LimitsVendor(const ChipModel* model, const std::string& type) {
  const std::string vendor = Lower(model ? model->vendor : type);
  if (vendor == "nvidia") return "nvidia";
  if (vendor == "huawei" || vendor == "ascend") return "ascend";
  if (vendor == "hygon" || vendor == "amd" || vendor == "dcu") return "dcu";
  return vendor.empty() ? Lower(type) : vendor;
}

Result<JobAllocation> JobAllocation::FromEnvironment(const Getenv& getenv) {
  auto var = [&](const char* name) {
    const char* v = getenv(name);
    return std::string(v ? v : "");
  };
  JobAllocation out;
  uint64_t n = 0;
  if (!ParseU64(var("SLURM_JOB_ID"), UINT32_MAX, &n) || n == 0)
    return R::Error("SLURM_JOB_ID=\"" + var("SLURM_JOB_ID") +
                    "\" is not a job id; run this program as Slurm's Prolog or Epilog");
  out.job_id = static_cast<uint32_t>(n);
  out.sluid = var("SLURM_JOB_SLUID");
  if (!out.sluid.empty() && !IsSluid(out.sluid))
    return R::Error("SLURM_JOB_SLUID=\"" + out.sluid + "\" is not a SLUID (s and 13 base32 characters)");
  if (!ParseU64(var("SLURM_JOB_UID"), UINT32_MAX - 1, &n))
    return R::Error("SLURM_JOB_UID=\"" + var("SLURM_JOB_UID") + "\" is not a user id");
  out.uid = static_cast<uid_t>(n);
  if (!ParseU64(var("SLURM_JOB_GID"), UINT32_MAX - 1, &n))
    return R::Error("SLURM_JOB_GID=\"" + var("SLURM_JOB_GID") + "\" is not a group id");
  out.gid = static_cast<gid_t>(n);

  const std::vector<std::string> indices = SplitList(var("VGPU_DEVICES"));
  if (indices.empty()) return out;
  if (!ParseU64(var("VGPU_SHARES_PER_DEVICE"), 1024, &n) || n == 0)
    return R::Error("VGPU_SHARES_PER_DEVICE=\"" + var("VGPU_SHARES_PER_DEVICE") +
                    "\" is not 1..1024; is gres_vgpu.so the same release as this program?");
  out.shares_per_device = static_cast<uint32_t>(n);

  struct Column {
    const char* name;
    bool required;
    std::vector<std::string> values;
  };
  std::vector<Column> cols = {{"VGPU_DEVICE_FILES", true, {}}, {"VGPU_SHARES", true, {}},
                              {"VGPU_MEMORY_QUOTA", true, {}}, {"VGPU_TYPES", true, {}},
                              {"VGPU_MODELS", false, {}},      {"VGPU_UUIDS", false, {}},
                              {"VGPU_PCI_BUS_IDS", false, {}}, {"VGPU_SHARE_OFFSETS", false, {}}};
  for (Column& c : cols) {
    const char* raw = getenv(c.name);
    if (!raw) {
      if (c.required) return R::Error(std::string(c.name) + " is not set but VGPU_DEVICES is");
      c.values.assign(indices.size(), "");
      continue;
    }
    c.values = SplitList(raw);
    if (c.values.size() != indices.size())
      return R::Error(std::string(c.name) + " lists " + std::to_string(c.values.size()) +
                      " values for " + std::to_string(indices.size()) + " devices in VGPU_DEVICES");
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    AllocatedDevice d;
    if (!ParseU64(indices[i], UINT32_MAX, &n))
      return R::Error("VGPU_DEVICES item \"" + indices[i] + "\" is not a device index");
    d.node_index = static_cast<uint32_t>(n);
    d.file = cols[0].values[i];
    if (!ParseU64(cols[1].values[i], out.shares_per_device, &n) || n == 0)
      return R::Error("VGPU_SHARES item \"" + cols[1].values[i] + "\" is not 1.." +
                      std::to_string(out.shares_per_device));
    d.shares = static_cast<uint32_t>(n);
    if (!ParseU64(cols[2].values[i], UINT64_MAX, &d.memory_quota))
      return R::Error("VGPU_MEMORY_QUOTA item \"" + cols[2].values[i] + "\" is not a byte count");
    d.type = cols[3].values[i];
    d.model = cols[4].values[i].empty() ? "unknown" : cols[4].values[i];
    d.uuid = cols[5].values[i];
    d.pci_bus_id = cols[6].values[i];
    if (!cols[7].values[i].empty()) {
      if (!ParseU64(cols[7].values[i], out.shares_per_device - 1, &n))
        return R::Error("VGPU_SHARE_OFFSETS item \"" + cols[7].values[i] + "\" is not 0.." +
                        std::to_string(out.shares_per_device - 1));
      d.first_share = static_cast<uint32_t>(n);
    }
    out.devices.push_back(std::move(d));
  }
  return out;
}

JobLimits JobAllocation::Limits(const ChipCatalog& catalog) const {
  JobLimits limits;
  limits.job_id = job_id;
  for (size_t i = 0; i < devices.size(); ++i) {
    const AllocatedDevice& d = devices[i];
    DeviceLimit l;
    l.index = static_cast<uint32_t>(i);
    l.vendor = LimitsVendor(catalog.FindById(d.model), d.type);
    if (l.vendor == "ascend")
      l.uuid = TrailingNumber(d.file);
    else if (l.vendor == "dcu")
      l.uuid = d.pci_bus_id;
    else
      l.uuid = d.uuid;
    // An unknown device size gives no quota to enforce (0 would forbid all).
    l.memory_bytes = d.memory_quota ? d.memory_quota : UINT64_MAX;
    l.shares = d.shares;
    l.shares_per_device = shares_per_device;
    l.node_index = static_cast<int32_t>(d.node_index);
    limits.devices.push_back(std::move(l));
  }
  return limits;
}

}  // namespace vgpu
