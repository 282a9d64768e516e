// Fuzzes vgpu.conf: vgpu::VgpuConfig::Parse (config/vgpu_config.h) with the
// input as the file's text, over the built-in defaults and over defaults
// that differ from them in every field.
//
// Asserts, besides no crash, sanitizer report or escaping exception:
// - an error names the file and line ("fuzz.conf:N: ...");
// - a configuration that parses has SharesPerDevice in 1..1024, a non-empty
//   lower-case PlacementPolicy, and TypePreference / HardwareSlicing lists
//   of lower-case items, none empty, none twice;
// - written back as vgpu.conf text, it parses to the same values.
#include <algorithm>
#include <string>
#include <vector>

#include "config/vgpu_config.h"
#include "fuzz_common.h"
#include "util/text.h"

namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// `c` as vgpu.conf text that, over the same defaults, parses back to `c`.
// An empty list or directory cannot be written: parsing never empties one
// that the defaults have, so leaving the key out gives the same value.
std::string Write(const vgpu::VgpuConfig& c) {
  std::string out = "SharesPerDevice=" + std::to_string(c.shares_per_device) + "\n";
  if (!c.chip_catalog_dirs.empty()) out += "ChipCatalogDir=" + c.chip_catalog_dirs + "\n";
  out += "Inventory=" + c.inventory + "\n";
  out += "PlacementPolicy=" + c.placement_policy + "\n";
  if (!c.type_preference.empty()) out += "TypePreference=" + Join(c.type_preference) + "\n";
  out += "HardwareSlicing=" + (c.hardware_slicing.empty() ? std::string("none") : Join(c.hardware_slicing)) + "\n";
  out += std::string("JobUserNamespaces=") + (c.deny_job_user_namespaces ? "deny" : "allow") + "\n";
  return out;
}

bool Same(const vgpu::VgpuConfig& a, const vgpu::VgpuConfig& b) {
  return a.shares_per_device == b.shares_per_device && a.chip_catalog_dirs == b.chip_catalog_dirs &&
         a.inventory == b.inventory && a.placement_policy == b.placement_policy &&
         a.type_preference == b.type_preference && a.hardware_slicing == b.hardware_slicing &&
         a.deny_job_user_namespaces == b.deny_job_user_namespaces;
}

void CheckList(const std::vector<std::string>& items, const std::string& what) {
  for (size_t i = 0; i < items.size(); ++i) {
    FUZZ_CHECK(!items[i].empty(), what + " has an empty item");
    FUZZ_CHECK(items[i] == vgpu::Lower(items[i]), what + " item not lower case: " + items[i]);
    FUZZ_CHECK(std::find(items.begin(), items.begin() + i, items[i]) == items.begin() + i,
               what + " lists " + items[i] + " twice");
  }
}

void Check(const std::string& text, const vgpu::VgpuConfig& defaults) {
  auto parsed = vgpu::VgpuConfig::Parse(text, "fuzz.conf", defaults);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.message().rfind("fuzz.conf:", 0) == 0, parsed.message());
    return;
  }
  const vgpu::VgpuConfig& c = *parsed;
  FUZZ_CHECK(c.shares_per_device >= 1 && c.shares_per_device <= 1024, std::to_string(c.shares_per_device));
  FUZZ_CHECK(!c.placement_policy.empty() && c.placement_policy == vgpu::Lower(c.placement_policy),
             c.placement_policy);
  CheckList(c.type_preference, "TypePreference");
  CheckList(c.hardware_slicing, "HardwareSlicing");
  (void)c.InventoryFor("n1");
  (void)c.SlicesModel("nvidia-h100", "nvidia");

  const std::string written = Write(c);
  auto again = vgpu::VgpuConfig::Parse(written, "written.conf", defaults);
  FUZZ_CHECK(again.ok(), "written back, it does not parse: " + again.message() + "\n" + written);
  FUZZ_CHECK(Same(c, *again), "written back, it parses to other values:\n" + written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::Run([&] {
    const std::string text = fuzz::Text(data, size);
    Check(text, vgpu::VgpuConfig());
    vgpu::VgpuConfig other;
    other.shares_per_device = 7;
    other.chip_catalog_dirs = "/etc/slurm/chips.d";
    other.inventory = "/lab/%n.json";
    other.placement_policy = "spread";
    other.type_preference = {"ascend", "nvidia"};
    other.hardware_slicing = {"nvidia-a100-80g"};
    other.deny_job_user_namespaces = true;
    Check(text, other);
  });
}
