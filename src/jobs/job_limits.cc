#include "jobs/job_limits.h"

#include <sstream>

#include "util/text.h"

namespace vgpu {

double DeviceLimit::ComputeShare() const {
  if (shares_per_device == 0) return 0;
  return shares >= shares_per_device ? 1.0 : static_cast<double>(shares) / shares_per_device;
}

Result<JobLimits> JobLimits::Parse(const std::string& text, const std::string& source) {
  using R = Result<JobLimits>;
  JobLimits out;
  std::istringstream in(text), words;
  std::string key;
  int line_no = 0;
  bool have_version = false, have_job = false;
  while (NextRecord(in, &line_no, &words, &key)) {
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (!have_version && key != "vgpu-limits")
      return R::Error(where + "not a vgpu limits file (the first line must be \"vgpu-limits " +
                      std::to_string(kVersion) + "\"); it is written by vgpu-prolog");
    std::string value;
    if (key == "vgpu-limits") {
      if (have_version) return R::Error(where + "\"vgpu-limits\" twice");
      uint64_t v = 0;
      if (!(words >> value) || !ParseU64(value, 1000, &v) || v != kVersion)
        return R::Error(where + "version \"" + value + "\" is not " + std::to_string(kVersion) +
                        "; the prolog and libvgpu.so are from different releases");
      have_version = true;
    } else if (key == "job") {
      uint64_t v = 0;
      if (have_job || !(words >> value) || !ParseU64(value, UINT32_MAX, &v) || v == 0)
        return R::Error(where + "\"job ID\" needs one job id (1..4294967295), once");
      out.job_id = static_cast<uint32_t>(v);
      have_job = true;
    } else if (key == "device") {
      DeviceLimit d;
      uint64_t v = 0;
      if (!(words >> value) || !ParseU64(value, 1023, &v))
        return R::Error(where + "\"device N\" needs the device's position 0..1023");
      d.index = static_cast<uint32_t>(v);
      if (d.index != out.devices.size())
        return R::Error(where + "device " + value + " out of order (expected device " +
                        std::to_string(out.devices.size()) + ")");
      bool has_uuid = false, has_vendor = false, has_memory = false, has_shares = false, has_of = false;
      std::string field;
      while (words >> field) {
        const size_t eq = field.find('=');
        const std::string k = eq == std::string::npos ? field : field.substr(0, eq);
        const std::string val = eq == std::string::npos ? "" : field.substr(eq + 1);
        if (eq == std::string::npos || val.empty())
          return R::Error(where + "\"" + field + "\" is not KEY=VALUE");
        if (k == "uuid") {
          d.uuid = val == "-" ? "" : val;
          has_uuid = true;
        } else if (k == "vendor") {
          d.vendor = Lower(val);
          has_vendor = true;
        } else if (k == "memory") {
          if (!ParseU64(val, UINT64_MAX, &d.memory_bytes))
            return R::Error(where + "memory=" + val + " is not a byte count");
          has_memory = true;
        } else if (k == "shares" || k == "of") {
          if (!ParseU64(val, 65535, &v))
            return R::Error(where + k + "=" + val + " is not a share count (0..65535)");
          (k == "shares" ? d.shares : d.shares_per_device) = static_cast<uint32_t>(v);
          (k == "shares" ? has_shares : has_of) = true;
        } else if (k == "node") {
          if (!ParseU64(val, 65535, &v)) return R::Error(where + "node=" + val + " is not a device index");
          d.node_index = static_cast<int32_t>(v);
        } else {
          return R::Error(where + "unknown field \"" + k + "\" (known: uuid, vendor, memory, shares, of, node)");
        }
      }
      if (!has_uuid || !has_vendor || !has_memory || !has_shares || !has_of)
        return R::Error(where + "a device needs uuid=, vendor=, memory=, shares= and of=");
      // shares=0: none of the device (a job step's limits, for a device of
      // its job the step holds nothing of; jobs/step_limits.h).
      if (d.shares_per_device == 0) return R::Error(where + "of= must be at least 1");
      if (!d.uuid.empty() && out.FindByUuid(d.uuid))
        return R::Error(where + "uuid " + d.uuid + " listed twice");
      out.devices.push_back(std::move(d));
    } else {
      return R::Error(where + "unknown record \"" + key + "\" (known: vgpu-limits, job, device)");
    }
    std::string extra;
    if (key != "device" && (words >> extra))
      return R::Error(where + "unexpected \"" + extra + "\" after \"" + key + "\"");
  }
  if (!have_version)
    return R::Error(source + ": empty; a limits file starts with \"vgpu-limits " +
                    std::to_string(kVersion) + "\"");
  if (!have_job) return R::Error(source + ": no \"job ID\" line");
  if (out.devices.empty()) return R::Error(source + ": no device");
  return out;
}

std::string JobLimits::Serialize() const {
  std::ostringstream o;
  o << "vgpu-limits " << kVersion << "\njob " << job_id << "\n";
  for (const auto& d : devices) {
    o << "device " << d.index << " uuid=" << (d.uuid.empty() ? "-" : d.uuid) << " vendor=" << d.vendor
      << " memory=" << d.memory_bytes << " shares=" << d.shares << " of=" << d.shares_per_device;
    if (d.node_index >= 0) o << " node=" << d.node_index;
    o << "\n";
  }
  return o.str();
}

const DeviceLimit* JobLimits::FindByUuid(const std::string& uuid) const {
  const std::string key = Lower(uuid);
  for (const auto& d : devices)
    if (!d.uuid.empty() && Lower(d.uuid) == key) return &d;
  return nullptr;
}

std::string JobRunDir(const std::string& run_dir, uint32_t job_id) {
  return run_dir + "/job_" + std::to_string(job_id);
}

std::string JobLimitsPath(const std::string& run_dir, uint32_t job_id) {
  return JobRunDir(run_dir, job_id) + "/limits";
}

std::string UsageRegionPath(const std::string& run_dir, uint32_t job_id, uint32_t device_index) {
  return JobRunDir(run_dir, job_id) + "/" + UsageRegionName(device_index);
}

std::string UsageRegionName(uint32_t device_index) { return "usage." + std::to_string(device_index); }

std::string StepDirName(uint32_t step_id) { return "step_" + std::to_string(step_id); }

}  // namespace vgpu
