// vgpu-oci-runtime: the OCI runtime oci.conf names for `srun --container`,
// in front of the real one:
//   RunTimeRun="vgpu-oci-runtime runc --rootless=true --root=/run/user/%U/ run %n.%u.%j.%s.%t -b %b"
// (and so for RunTimeCreate). slurmstepd runs it as the job's user, in the
// step's cgroup. For a vgpu job it makes the bundle's config.json load
// libvgpu.so and show the node's run directory (oci_bundle.h), then runs
// the real runtime with the same arguments; other commands (state, kill,
// delete) and jobs without vgpu pass through unchanged. Which job: the
// cgroup, as libvgpu.so decides it (jobs/job_place.h). A process whose job
// cannot be proved is refused with the reason: its container would use the
// device unheld.
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "jobs/job_identity.h"
#include "jobs/job_place.h"
#include "jobs/task_env.h"
#include "oci_bundle.h"
#include "program.h"
#include "util/read_file.h"
#include "util/text.h"

namespace vgpu {
namespace {

// Whether /sys/fs/cgroup is cgroup v2 alone (a runtime then uses it, not
// the v1 hierarchies).
bool UnifiedHierarchy() {
  struct statfs fs;
  return statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

Status PrepareBundle(const std::string& bundle, bool systemd_cgroups) {
  JobPlace place = LocateJob(ProcessFacts::OfThisProcess(), VGPU_RUN_DIR);
  if (place.kind == JobPlace::Kind::kFailClosed)
    return Status::Error(place.failure + "; the container would use its devices unheld, so it is not started");
  if (place.kind != JobPlace::Kind::kVgpuJob) return Status::Ok();
  const std::string path = bundle + "/config.json";
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  Json::Value config;
  std::string errors;
  std::unique_ptr<Json::CharReader> reader(Json::CharReaderBuilder().newCharReader());
  if (!reader->parse(text->data(), text->data() + text->size(), &config, &errors))
    return Status::Error(path + ": not JSON: " + OneLine(errors));
  OciInjection injection;
  injection.run_dir = VGPU_RUN_DIR;
  injection.interposer = VGPU_INTERPOSER_PATH;
  injection.preload_list = VGPU_PRELOAD_LIST;
  // A rootful runtime makes the container's cgroup where cgroupsPath says
  // (runc: at the hierarchy's root when unset); a rootless one cannot make
  // one below the job's root-owned cgroup, stays in its own when none is
  // named, and fails when one is. A runtime driving cgroups through
  // systemd names them its own way.
  if (geteuid() == 0 && !systemd_cgroups)
    injection.cgroups_path = OciCgroupsPath(ProcSelfCgroup(), UnifiedHierarchy(), "oci-" + std::to_string(getpid()));
  std::string storage;
  injection.env = TaskExportsForJob(VGPU_RUN_DIR, place.job_id, VGPU_INTERPOSER_PATH, "",
                                    [&](const char* name) { return OciEnvLookup(config, name, &storage); });
  Status st = InjectVgpu(injection, &config);
  if (!st.ok()) return Status::Error(path + ": " + st.message());
  Json::StreamWriterBuilder writer;
  writer["indentation"] = "";
  return WriteFileAtomically(path, Json::writeString(writer, config), 0600);
}

}  // namespace
}  // namespace vgpu

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: vgpu-oci-runtime RUNTIME [ARGUMENT...]  (see vgpu-oci-runtime(8))\n");
    return 2;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  const std::string bundle = vgpu::BundleArgument(args);
  if (!bundle.empty()) {
    bool systemd = false;
    for (const std::string& a : args) systemd |= a.rfind("--systemd-cgroup", 0) == 0;
    vgpu::Status st = vgpu::PrepareBundle(bundle, systemd);
    if (!st.ok()) {
      std::fprintf(stderr, "vgpu-oci-runtime: %s\n", vgpu::OneLine(st.message()).c_str());
      return 1;
    }
  }
  execvp(argv[1], argv + 1);
  std::fprintf(stderr, "vgpu-oci-runtime: cannot run %s: %s\n", argv[1], std::strerror(errno));
  return 127;
}
