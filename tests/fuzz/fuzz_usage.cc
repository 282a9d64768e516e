// Fuzzes the usage record that vgpu-epilog keeps in a job's AdminComment
// and what reads it back:
// - vgpu::report::ParseUsageComment (tools/usage_report.h) on the input as
//   an AdminComment;
// - vgpu::report::ParseSacctJson on the input as sacct --json output, and
//   vgpu::report::Summarise on the jobs it gives;
// - vgpu::MergeUsageComment (prolog/job_usage.h) with the input as the
//   comment already there and one node's usage built here.
//
// Asserts, besides no crash, sanitizer report or escaping exception:
// - a record's devices have a type, shares >= 0, of > 0, busy_s >= 0;
// - a summary counts no more jobs than records, and its total no more than
//   the jobs with vgpu shares;
// - a comment that is a usage record (ParseUsageComment reads it) merges,
//   and what the merge writes is a usage record still: this node's entry
//   added, every other node's devices kept; merging the same usage into
//   that again changes nothing (RecordUsage stops on it).
#include <cmath>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "prolog/job_usage.h"
#include "tools/usage_report.h"

namespace {

const char kNode[] = "fuzz-node";

vgpu::NodeUsage Usage() {
  vgpu::NodeUsage usage;
  usage.node = kNode;
  usage.wall_s = 61.2;
  vgpu::DeviceUsage d;
  d.index = 0;
  d.type = "ascend";
  d.model = "ascend-910b";
  d.shares = 10;
  d.of = 100;
  d.memory_quota = 6871947673ull;
  d.memory_peak = 1073741824ull;
  d.busy_s = 12.5;
  d.slice = "vir03_1c_8g";
  usage.devices.push_back(d);
  vgpu::StepUsage step;
  step.step = 0;
  d.slice.clear();
  step.devices.push_back(d);
  usage.steps.push_back(step);
  return usage;
}

void CheckDevices(const std::vector<vgpu::report::DeviceUsage>& devices) {
  for (const vgpu::report::DeviceUsage& d : devices) {
    FUZZ_CHECK(!d.type.empty(), d.node + ": a device without a type");
    FUZZ_CHECK(d.shares >= 0 && d.of > 0 && d.busy_s >= 0, d.node + ": shares, of or busy_s out of range");
    FUZZ_CHECK(std::isfinite(d.shares) && std::isfinite(d.of) && std::isfinite(d.busy_s), d.node);
  }
}

size_t DevicesOnOtherNodes(const std::vector<vgpu::report::DeviceUsage>& devices) {
  size_t n = 0;
  for (const vgpu::report::DeviceUsage& d : devices) n += d.node != kNode;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::Run([&] {
    const std::string text = fuzz::Text(data, size);

    const auto record = vgpu::report::ParseUsageComment(text);
    if (record) CheckDevices(*record);

    auto jobs = vgpu::report::ParseSacctJson(text);
    if (jobs.ok()) {
      for (const vgpu::report::JobRecord& job : *jobs) {
        if (job.has_usage) CheckDevices(job.devices);
        FUZZ_CHECK(job.elapsed_s >= 0, "negative elapsed time");
      }
      const vgpu::report::Summary summary = vgpu::report::Summarise(*jobs);
      FUZZ_CHECK(summary.records == jobs->size(), "records");
      size_t with_vgpu = 0;
      for (const vgpu::report::JobRecord& job : *jobs) with_vgpu += job.HasVgpu();
      FUZZ_CHECK(summary.total.jobs == with_vgpu, "total jobs " + std::to_string(summary.total.jobs));
      FUZZ_CHECK(summary.total.jobs_with_usage <= summary.total.jobs, "jobs with usage");
    } else {
      FUZZ_CHECK(!jobs.message().empty(), "an error without a message");
    }

    const vgpu::NodeUsage usage = Usage();
    auto merged = vgpu::MergeUsageComment(text, usage);
    if (!record && !text.empty()) return;  // not ours: refused or kept as the merge sees fit
    FUZZ_CHECK(merged.ok(), "a usage record did not merge: " + merged.message());
    const auto after = vgpu::report::ParseUsageComment(*merged);
    FUZZ_CHECK(after.has_value(), "the merge wrote what is no usage record: " + *merged);
    CheckDevices(*after);
    FUZZ_CHECK(DevicesOnOtherNodes(*after) == (record ? DevicesOnOtherNodes(*record) : 0),
               "the merge lost or added other nodes' devices: " + *merged);
    FUZZ_CHECK(after->size() - DevicesOnOtherNodes(*after) == usage.devices.size(),
               "this node's devices are not in the merge: " + *merged);
    auto twice = vgpu::MergeUsageComment(*merged, usage);
    FUZZ_CHECK(twice.ok() && *twice == *merged, "merging again changes the comment:\n" + *merged + "\n" +
                                                    (twice.ok() ? *twice : twice.message()));
  });
}
