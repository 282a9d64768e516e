#include "jobs/task_env.h"

#include <sstream>

#include "util/read_file.h"

namespace vgpu {
namespace {

const char* VisibilityVariable(const std::string& vendor) {
  if (vendor == "nvidia") return "CUDA_VISIBLE_DEVICES";
  if (vendor == "ascend") return "ASCEND_RT_VISIBLE_DEVICES";
  return nullptr;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

}  // namespace

bool PreloadListsInterposer(const std::string& ld_so_preload) {
  std::istringstream in(ld_so_preload);
  std::string entry;
  while (in >> entry) {
    if (entry[0] == '#') {
      std::getline(in, entry);
      continue;
    }
    const size_t slash = entry.rfind('/');
    if (entry.substr(slash == std::string::npos ? 0 : slash + 1) == "libvgpu.so") return true;
  }
  return false;
}

std::vector<std::pair<std::string, std::string>> TaskExports(const TaskEnvInput& in) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!in.preloaded_system_wide && !in.interposer.empty()) {
    const char* old = in.getenv("LD_PRELOAD");
    std::string value = in.interposer;
    // Already first (a step of a task that exported it): keep it once.
    if (old && *old && std::string(old).rfind(in.interposer, 0) != 0) value += std::string(":") + old;
    if (old && std::string(old).rfind(in.interposer, 0) == 0) value = old;
    out.emplace_back("LD_PRELOAD", value);
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> lists;
  std::vector<std::pair<std::string, int>> position;  // items seen per variable
  for (const DeviceLimit& d : in.limits.devices) {
    const char* var = VisibilityVariable(d.vendor);
    const HardwareSlice* slice = nullptr;
    for (const HardwareSlice& s : in.slices)
      if (s.job_device == d.index && s.vendor == d.vendor) slice = &s;
    if (!var) continue;
    size_t k = 0;
    while (k < position.size() && position[k].first != var) ++k;
    if (k == position.size()) position.emplace_back(var, 0);
    const int item = position[k].second++;
    if (!slice) continue;
    size_t l = 0;
    while (l < lists.size() && lists[l].first != var) ++l;
    if (l == lists.size()) {
      const char* current = in.getenv(var);
      lists.emplace_back(var, Split(current ? current : ""));
    }
    auto& items = lists[l].second;
    if (items.size() <= static_cast<size_t>(item)) items.resize(item + 1);
    items[item] = slice->device;
  }
  for (const auto& l : lists) {
    std::string value;
    for (size_t i = 0; i < l.second.size(); ++i) value += (i ? "," : "") + l.second[i];
    out.emplace_back(l.first, value);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> TaskExportsForJob(
    const std::string& run_dir, uint32_t job_id, const std::string& interposer, const std::string& ld_so_preload,
    std::function<const char*(const char*)> getenv) {
  const std::string limits_path = JobLimitsPath(run_dir, job_id);
  auto text = ReadTextFile(limits_path);
  if (!text.ok()) {
    // No limits, yet Slurm gave the task vgpu shares on this node: the
    // prolog did not run (Slurm 22.05 skips it for a job requeued onto a
    // node that still caches its credential). The interposer goes in all
    // the same, and fails closed saying so.
    const char* shares = getenv("VGPU_SHARES");
    if (!shares || !*shares) return {};  // no vgpu here
  }
  TaskEnvInput in;
  if (text.ok()) {
    auto limits = JobLimits::Parse(*text, limits_path);
    if (limits.ok()) in.limits = *limits;
    auto slices = JobSlices(run_dir, job_id);
    if (slices.ok()) in.slices = *slices;
  }
  in.interposer = interposer;
  in.preloaded_system_wide = PreloadListsInterposer(ld_so_preload);
  in.getenv = std::move(getenv);
  return TaskExports(in);
}

}  // namespace vgpu
