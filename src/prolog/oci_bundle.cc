#include "oci_bundle.h"

#include "jobs/job_identity.h"

namespace vgpu {
namespace {

Json::Value BindMount(const std::string& source, const std::string& destination, bool read_only) {
  Json::Value mount(Json::objectValue);
  mount["destination"] = destination;
  mount["type"] = "bind";
  mount["source"] = source;
  Json::Value options(Json::arrayValue);
  options.append("rbind");
  options.append("nosuid");
  options.append(read_only ? "ro" : "rw");
  mount["options"] = options;
  return mount;
}

// The mounts at `destination` or below it go: ours replace them.
void DropMountsAt(const std::string& destination, Json::Value* mounts) {
  Json::Value kept(Json::arrayValue);
  for (const Json::Value& m : *mounts) {
    const std::string at = m.isObject() ? m.get("destination", "").asString() : "";
    const bool covered = at == destination || at.rfind(destination + "/", 0) == 0;
    if (!covered) kept.append(m);
  }
  *mounts = kept;
}

}  // namespace

Status InjectVgpu(const OciInjection& injection, Json::Value* config) {
  if (!config->isObject() || !(*config)["process"].isObject())
    return Status::Error("config.json has no \"process\" object: not an OCI runtime configuration");
  Json::Value& mounts = (*config)["mounts"];
  if (mounts.isNull()) mounts = Json::Value(Json::arrayValue);
  if (!mounts.isArray()) return Status::Error("config.json's \"mounts\" is not a list");
  Json::Value& env = (*config)["process"]["env"];
  if (env.isNull()) env = Json::Value(Json::arrayValue);
  if (!env.isArray()) return Status::Error("config.json's \"process.env\" is not a list");

  for (const std::string& at : {injection.run_dir, injection.interposer, std::string("/etc/ld.so.preload")})
    DropMountsAt(at, &mounts);
  mounts.append(BindMount(injection.run_dir, injection.run_dir, false));
  mounts.append(BindMount(injection.interposer, injection.interposer, true));
  mounts.append(BindMount(injection.preload_list, "/etc/ld.so.preload", true));

  for (const auto& [name, value] : injection.env) {
    const std::string item = name + "=" + value;
    bool replaced = false;
    for (Json::Value& e : env)
      if (e.isString() && e.asString().rfind(name + "=", 0) == 0) {
        e = item;
        replaced = true;
      }
    if (!replaced) env.append(item);
  }

  if (config->isMember("linux") && (*config)["linux"].isObject()) {
    Json::Value& linux_section = (*config)["linux"];
    if (injection.cgroups_path.empty())
      linux_section.removeMember("cgroupsPath");
    else
      linux_section["cgroupsPath"] = injection.cgroups_path;
    // No cgroup namespace: the container's processes then show the job's
    // cgroup, which libvgpu.so proves its job by when nothing else is left
    // (a clean environment).
    if (linux_section["namespaces"].isArray()) {
      Json::Value kept(Json::arrayValue);
      for (const Json::Value& ns : linux_section["namespaces"])
        if (!(ns.isObject() && ns.get("type", "").asString() == "cgroup")) kept.append(ns);
      linux_section["namespaces"] = kept;
    }
  }
  return Status::Ok();
}

std::string OciCgroupsPath(const std::string& text, bool unified, const std::string& leaf) {
  std::string v2_path, devices_path;
  for (const CgroupLine& line : CgroupLines(text)) {
    const std::string path = line.path == "/" ? "" : line.path;
    if (line.hierarchy == "0" && line.controllers.empty()) v2_path = path;
    if (("," + line.controllers + ",").find(",devices,") != std::string::npos) devices_path = path;
  }
  // On a hybrid host the job may be in either: where Slurm put it counts.
  const std::string& own = unified ? v2_path : (devices_path.empty() ? v2_path : devices_path);
  return own.empty() ? "" : own + "/" + leaf;
}

std::string BundleArgument(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "-b" || a == "--bundle") && i + 1 < args.size()) return args[i + 1];
    if (a.rfind("--bundle=", 0) == 0) return a.substr(9);
  }
  return "";
}

const char* OciEnvLookup(const Json::Value& config, const char* name, std::string* storage) {
  const Json::Value& env = config["process"]["env"];
  if (!env.isArray()) return nullptr;
  const std::string prefix = std::string(name) + "=";
  for (const Json::Value& e : env)
    if (e.isString() && e.asString().rfind(prefix, 0) == 0) {
      *storage = e.asString().substr(prefix.size());
      return storage->c_str();
    }
  return nullptr;
}

}  // namespace vgpu
