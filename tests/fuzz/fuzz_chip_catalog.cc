// Fuzzes the chip catalog's file format: vgpu::ChipCatalog::ParseModel
// (devices/chip_catalog.h) with the input as one chips.d/*.json file, then
// the lookups and vgpu::ProfileForShares (jobs/hardware_slice.h) on the
// model it gives.
//
// Asserts, besides no crash, sanitizer report or escaping exception:
// - an error names the file ("fuzz.json: ...");
// - a model that parses has what the format requires: id and gres_type made
//   of [A-Za-z0-9._-], at least one non-blank name, memory and compute
//   units above 0, an absolute device_file, a known discovery, and profiles
//   of 1..100 shares within the model's memory and compute units;
// - added to a catalog, it is found by its id, each of its names and its
//   type; ProfileForShares picks a profile that covers what was asked.
#include <cctype>
#include <set>
#include <string>

#include "devices/chip_catalog.h"
#include "fuzz_common.h"
#include "jobs/hardware_slice.h"
#include "util/text.h"

namespace {

bool IsToken(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::Run([&] {
    auto parsed = vgpu::ChipCatalog::ParseModel(fuzz::Text(data, size), "fuzz.json");
    if (!parsed.ok()) {
      FUZZ_CHECK(parsed.message().rfind("fuzz.json: ", 0) == 0, parsed.message());
      return;
    }
    const vgpu::ChipModel& m = *parsed;
    FUZZ_CHECK(IsToken(m.id) && IsToken(m.gres_type), m.id + " / " + m.gres_type);
    FUZZ_CHECK(!m.names.empty(), m.id);
    for (const std::string& n : m.names) FUZZ_CHECK(!vgpu::Trim(n).empty(), "a blank name");
    FUZZ_CHECK(m.memory_bytes > 0 && m.compute_units > 0, m.id);
    FUZZ_CHECK(!m.device_file.empty() && m.device_file[0] == '/', m.device_file);
    FUZZ_CHECK((std::set<std::string>{"nvml", "dcmi", "rocm-smi", "none"}.count(m.discovery)), m.discovery);
    for (const vgpu::SliceProfile& p : m.profiles) {
      FUZZ_CHECK(!vgpu::Trim(p.name).empty(), "a blank profile name");
      FUZZ_CHECK(p.shares >= 1 && p.shares <= 100, p.name + ": " + std::to_string(p.shares));
      FUZZ_CHECK(p.memory_bytes >= 1 && p.memory_bytes <= m.memory_bytes, p.name);
      FUZZ_CHECK(p.compute_units >= 1 && p.compute_units <= m.compute_units, p.name);
    }

    vgpu::ChipCatalog catalog = fuzz::SmallCatalog();
    catalog.Add(m);
    FUZZ_CHECK(catalog.FindById(m.id) != nullptr, m.id);
    FUZZ_CHECK(catalog.KnowsType(m.gres_type) && catalog.KnowsType(m.id), m.gres_type);
    for (const std::string& n : m.names) FUZZ_CHECK(catalog.FindByName(n) != nullptr, n);

    for (uint32_t shares : {1u, 12u, 50u, 99u, 100u, 101u}) {
      const vgpu::SliceProfile* p = vgpu::ProfileForShares(m, shares, 100);
      if (p) FUZZ_CHECK(p->shares >= shares, p->name + " for " + std::to_string(shares));
      if (shares > 100) FUZZ_CHECK(p == nullptr, "a profile for more than a device");
    }
  });
}
