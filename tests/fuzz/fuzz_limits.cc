// Fuzzes the files a job's run directory holds and the device table
// slurmd hands to slurmstepd; each input goes to all three parsers (each
// refuses the others' formats at once):
// - the limits file, vgpu::JobLimits::Parse (jobs/job_limits.h);
// - the slices file, vgpu::ParseSlices (jobs/hardware_slice.h);
// - the device table, vgpu::DeviceTable::Parse (devices/device_table.h).
//
// Asserts, besides no crash, sanitizer report or escaping exception:
// - errors name the file ("limits:LINE: ...", "slices: ...");
// - limits that parse have a job id, devices numbered 0..n-1, of= at least
//   1, each uuid once; slices have their required fields non-empty and no
//   slice twice; a device table has contiguous bits from 0 (no wrap-around)
//   and devices of at least one share;
// - each writes back (Serialize) to text that parses to the same thing.
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "devices/device_table.h"
#include "fuzz_common.h"
#include "jobs/hardware_slice.h"
#include "jobs/job_limits.h"
#include "util/text.h"

namespace {

void CheckLimits(const std::string& text) {
  auto limits = vgpu::JobLimits::Parse(text, "limits");
  if (!limits.ok()) {
    FUZZ_CHECK(limits.message().rfind("limits:", 0) == 0, limits.message());
    return;
  }
  FUZZ_CHECK(limits->job_id != 0 && !limits->devices.empty(), "job or devices missing");
  std::set<std::string> uuids;
  for (size_t i = 0; i < limits->devices.size(); ++i) {
    const vgpu::DeviceLimit& d = limits->devices[i];
    FUZZ_CHECK(d.index == i, "device " + std::to_string(d.index) + " at position " + std::to_string(i));
    FUZZ_CHECK(d.shares_per_device >= 1, "of=0");
    const double share = d.ComputeShare();
    FUZZ_CHECK(share >= 0 && share <= 1, std::to_string(share));
    if (!d.uuid.empty()) FUZZ_CHECK(uuids.insert(vgpu::Lower(d.uuid)).second, "uuid twice: " + d.uuid);
  }
  const std::string written = limits->Serialize();
  auto again = vgpu::JobLimits::Parse(written, "written");
  FUZZ_CHECK(again.ok(), again.message() + "\n" + written);
  FUZZ_CHECK(again->Serialize() == written, "limits change when written back:\n" + written);
}

void CheckSlices(const std::string& text) {
  auto slices = vgpu::ParseSlices(text, "slices");
  if (!slices.ok()) {
    FUZZ_CHECK(slices.message().rfind("slices:", 0) == 0, slices.message());
    return;
  }
  std::set<std::tuple<std::string, std::string, uint32_t, uint32_t>> seen;
  for (const vgpu::HardwareSlice& s : *slices) {
    FUZZ_CHECK(s.vendor == "nvidia" || s.vendor == "ascend", s.vendor);
    FUZZ_CHECK(!s.parent.empty() && !s.profile.empty() && !s.device.empty(), "an empty field");
    FUZZ_CHECK(seen.insert({s.vendor, s.parent, s.instance, s.sub_instance}).second, "a slice twice");
  }
  const std::string written = vgpu::SerializeSlices(*slices);
  auto again = vgpu::ParseSlices(written, "written");
  FUZZ_CHECK(again.ok(), again.message() + "\n" + written);
  FUZZ_CHECK(vgpu::SerializeSlices(*again) == written, "slices change when written back:\n" + written);
  for (size_t i = 0; i < slices->size(); ++i) {
    const vgpu::HardwareSlice &a = (*slices)[i], &b = (*again)[i];
    FUZZ_CHECK(a.parent == b.parent && a.profile == b.profile && a.device == b.device, "a value changed");
  }
}

void CheckTable(const std::string& text) {
  auto table = vgpu::DeviceTable::Parse(text);
  if (!table.ok()) {
    FUZZ_CHECK(table.message().rfind("device table ", 0) == 0, table.message());
    return;
  }
  uint64_t bits = 0;
  for (const vgpu::ShareDevice& d : table->devices()) {
    FUZZ_CHECK(d.first_bit == bits && d.shares >= 1, "bits not contiguous at " + std::to_string(d.first_bit));
    bits += d.shares;
  }
  FUZZ_CHECK(table->total_bits() == bits, "total_bits " + std::to_string(table->total_bits()) + ", devices " +
                                              std::to_string(bits));
  if (bits > 0) {
    FUZZ_CHECK(table->DeviceOfBit(0) == 0, "bit 0");
    FUZZ_CHECK(table->DeviceOfBit(static_cast<uint32_t>(bits - 1)) == static_cast<int>(table->devices().size()) - 1,
               "last bit");
  }
  const std::string written = table->Serialize();
  auto again = vgpu::DeviceTable::Parse(written);
  FUZZ_CHECK(again.ok(), again.message() + "\n" + written);
  FUZZ_CHECK(again->Serialize() == written, "the device table changes when written back:\n" + written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::Run([&] {
    const std::string text = fuzz::Text(data, size);
    CheckLimits(text);
    CheckSlices(text);
    CheckTable(text);
  });
}
