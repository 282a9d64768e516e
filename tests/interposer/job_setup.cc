// job_setup: makes or removes a job's run directory for the interposer
// tests, the way vgpu-prolog/vgpu-epilog will (CreateJobRunDir).
//
//   job_setup create RUN_DIR JOB UID GID ID,MEMORY,SHARES,OF[,VENDOR] ...
// (ID: the vendor id libvgpu.so matches, e.g. a GPU UUID or a PCI bus id;
// VENDOR: nvidia unless given)
//   job_setup remove RUN_DIR JOB
//   job_setup usage RUN_DIR JOB       device time charged to the job's device 0,
//                                     in ms ("usage MS")
//   job_setup step RUN_DIR JOB STEP UID GID UUIDS SHARES
//                                     the step's own limits, as spank_vgpu.so
//                                     makes them (UUIDS, SHARES: the step's
//                                     VGPU_UUIDS and VGPU_SHARES)
//   job_setup tie RUN_DIR JOB SLUID   the tie of a SLUID to job JOB, as
//                                     vgpu-prolog records it
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "jobs/job_identity.h"
#include "jobs/job_limits.h"
#include "jobs/job_run_dir.h"
#include "jobs/step_limits.h"
#include "jobs/usage_region.h"
#include "util/read_file.h"

int main(int argc, char** argv) {
  const std::string verb = argc > 1 ? argv[1] : "";
  if (verb == "remove" && argc == 4) {
    const uint32_t job = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
    vgpu::Status st = vgpu::RemoveJobRunDir(argv[2], job);
    if (st.ok()) st = vgpu::ForgetSluidTies(argv[2], job);
    if (!st.ok()) std::fprintf(stderr, "job_setup: %s\n", st.message().c_str());
    return st.ok() ? 0 : 1;
  }
  if (verb == "tie" && argc == 5) {
    vgpu::Status st =
        vgpu::RecordSluidTie(argv[2], argv[4], static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)));
    if (!st.ok()) std::fprintf(stderr, "job_setup: %s\n", st.message().c_str());
    return st.ok() ? 0 : 1;
  }
  if (verb == "usage" && argc == 4) {
    const uint32_t job = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
    auto region = vgpu::UsageRegion::Open(vgpu::UsageRegionPath(argv[2], job, 0));
    if (!region.ok()) {
      std::fprintf(stderr, "job_setup: %s\n", region.message().c_str());
      return 1;
    }
    std::printf("usage %llu\n", static_cast<unsigned long long>((*region)->BusyNs() / 1000000));
    return 0;
  }
  if (verb == "step" && argc == 9) {
    const uint32_t job = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
    auto text = vgpu::ReadTextFile(vgpu::JobLimitsPath(argv[2], job));
    auto limits = text.ok() ? vgpu::JobLimits::Parse(*text, "limits") : vgpu::Result<vgpu::JobLimits>(text.status());
    auto step = limits.ok() ? vgpu::StepLimitsFor(*limits, "", argv[7], argv[8])
                            : vgpu::Result<std::optional<vgpu::JobLimits>>(limits.status());
    vgpu::Status st = !step.ok() ? step.status()
                      : !step->has_value()
                          ? vgpu::Status::Error("the step holds the job's whole part")
                          : vgpu::CreateStepRunDir(argv[2], static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10)),
                                                   **step, static_cast<uid_t>(std::strtoul(argv[5], nullptr, 10)),
                                                   static_cast<gid_t>(std::strtoul(argv[6], nullptr, 10)));
    if (!st.ok()) std::fprintf(stderr, "job_setup: %s\n", st.message().c_str());
    return st.ok() ? 0 : 1;
  }
  if (verb != "create" || argc < 7) {
    std::fprintf(stderr, "usage: job_setup create RUN_DIR JOB UID GID ID,MEMORY,SHARES,OF[,VENDOR] ... | remove RUN_DIR JOB | usage RUN_DIR JOB | tie RUN_DIR JOB SLUID\n");
    return 2;
  }
  vgpu::JobLimits limits;
  limits.job_id = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
  for (int i = 6; i < argc; ++i) {
    vgpu::DeviceLimit d;
    char uuid[128] = {0}, vendor[32] = "nvidia";
    unsigned long long memory = 0;
    unsigned shares = 0, of = 0;
    const int n = std::sscanf(argv[i], "%127[^,],%llu,%u,%u,%31s", uuid, &memory, &shares, &of, vendor);
    if (n != 4 && n != 5) {
      std::fprintf(stderr, "job_setup: bad device \"%s\"\n", argv[i]);
      return 2;
    }
    d.index = static_cast<uint32_t>(limits.devices.size());
    d.uuid = uuid;
    d.vendor = vendor;
    d.memory_bytes = memory;
    d.shares = shares;
    d.shares_per_device = of;
    limits.devices.push_back(d);
  }
  vgpu::Status st = vgpu::CreateJobRunDir(argv[2], limits, static_cast<uid_t>(std::strtoul(argv[4], nullptr, 10)),
                                          static_cast<gid_t>(std::strtoul(argv[5], nullptr, 10)));
  if (!st.ok()) std::fprintf(stderr, "job_setup: %s\n", st.message().c_str());
  return st.ok() ? 0 : 1;
}
