// job_setup: makes or removes a job's run directory for the interposer
// tests, the way vgpu-prolog/vgpu-epilog will (CreateJobRunDir).
//
//   job_setup create RUN_DIR JOB UID GID ID,MEMORY,SHARES,OF[,VENDOR] ...
// (ID: the vendor id libvgpu.so matches, e.g. a GPU UUID or a PCI bus id;
// VENDOR: nvidia unless given)
//   job_setup remove RUN_DIR JOB
#include <cstdio>
#include <cstdlib>
#include <string>

#include "jobs/job_limits.h"
#include "jobs/job_run_dir.h"

int main(int argc, char** argv) {
  const std::string verb = argc > 1 ? argv[1] : "";
  if (verb == "remove" && argc == 4) {
    vgpu::Status st = vgpu::RemoveJobRunDir(argv[2], static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)));
    if (!st.ok()) std::fprintf(stderr, "job_setup: %s\n", st.message().c_str());
    return st.ok() ? 0 : 1;
  }
  if (verb != "create" || argc < 7) {
    std::fprintf(stderr, "usage: job_setup create RUN_DIR JOB UID GID ID,MEMORY,SHARES,OF[,VENDOR] ... | remove RUN_DIR JOB\n");
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
