// vgpu-oci-runtime's edit of a container's config.json (prolog/oci_bundle.h).
#include <cppunit/extensions/HelperMacros.h>
#include <json/json.h>

#include <memory>
#include <string>

#include "oci_bundle.h"

namespace {

Json::Value Parse(const std::string& text) {
  Json::Value v;
  std::string errors;
  std::unique_ptr<Json::CharReader> reader(Json::CharReaderBuilder().newCharReader());
  CPPUNIT_ASSERT_MESSAGE(errors, reader->parse(text.data(), text.data() + text.size(), &v, &errors));
  return v;
}

vgpu::OciInjection Injection() {
  vgpu::OciInjection in;
  in.run_dir = "/run/slurm-vgpu";
  in.interposer = "/usr/lib/slurm-vgpu/libvgpu.so";
  in.preload_list = "/usr/lib/slurm-vgpu/ld.so.preload";
  in.env = {{"LD_PRELOAD", "/usr/lib/slurm-vgpu/libvgpu.so:/opt/own.so"}, {"CUDA_VISIBLE_DEVICES", "MIG-1"}};
  return in;
}

const Json::Value* MountAt(const Json::Value& config, const std::string& destination) {
  for (const Json::Value& m : config["mounts"])
    if (m["destination"].asString() == destination) return &m;
  return nullptr;
}

}  // namespace

class OciBundleTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(OciBundleTest);
  CPPUNIT_TEST(InjectsMountsAndEnvironment);
  CPPUNIT_TEST(ReplacesTheBundlesOwn);
  CPPUNIT_TEST(RefusesWhatIsNoOciConfig);
  CPPUNIT_TEST(FindsTheBundleArgument);
  CPPUNIT_TEST(ContainerCgroupBelowTheJobs);
  CPPUNIT_TEST_SUITE_END();

 public:
  void InjectsMountsAndEnvironment() {
    Json::Value c = Parse(R"({"process": {"args": ["sh"], "env": ["PATH=/bin", "SLURM_JOB_ID=7"]},
                              "linux": {"cgroupsPath": "/anywhere/at/all",
                                        "namespaces": [{"type": "pid"}, {"type": "cgroup"}, {"type": "user"}]}})");
    vgpu::Status st = vgpu::InjectVgpu(Injection(), &c);
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    const Json::Value* run = MountAt(c, "/run/slurm-vgpu");
    CPPUNIT_ASSERT(run && (*run)["source"].asString() == "/run/slurm-vgpu");
    CPPUNIT_ASSERT_EQUAL(std::string("rw"), (*run)["options"][2].asString());
    const Json::Value* lib = MountAt(c, "/usr/lib/slurm-vgpu/libvgpu.so");
    CPPUNIT_ASSERT(lib && (*lib)["options"][2].asString() == "ro");
    const Json::Value* preload = MountAt(c, "/etc/ld.so.preload");
    CPPUNIT_ASSERT(preload && (*preload)["source"].asString() == "/usr/lib/slurm-vgpu/ld.so.preload");
    std::string storage;
    CPPUNIT_ASSERT_EQUAL(std::string("/usr/lib/slurm-vgpu/libvgpu.so:/opt/own.so"),
                         std::string(vgpu::OciEnvLookup(c, "LD_PRELOAD", &storage)));
    CPPUNIT_ASSERT_EQUAL(std::string("7"), std::string(vgpu::OciEnvLookup(c, "SLURM_JOB_ID", &storage)));
    CPPUNIT_ASSERT(vgpu::OciEnvLookup(c, "NOPE", &storage) == nullptr);
    // The job's cgroup, not one the bundle names.
    CPPUNIT_ASSERT(!c["linux"].isMember("cgroupsPath"));
    // And the job's cgroup shown: no cgroup namespace, the others kept.
    CPPUNIT_ASSERT_EQUAL(2u, c["linux"]["namespaces"].size());
    CPPUNIT_ASSERT_EQUAL(std::string("user"), c["linux"]["namespaces"][1]["type"].asString());
  }

  void ReplacesTheBundlesOwn() {
    // A bundle that brings its own run directory, library or preload list,
    // and its own LD_PRELOAD: ours replace them, the rest stays.
    Json::Value c = Parse(R"({"process": {"env": ["LD_PRELOAD=/opt/own.so", "CUDA_VISIBLE_DEVICES=0,1"]},
      "mounts": [{"destination": "/run/slurm-vgpu", "type": "tmpfs", "source": "tmpfs"},
                 {"destination": "/run/slurm-vgpu/job_7", "type": "bind", "source": "/home/u/forged"},
                 {"destination": "/etc/ld.so.preload", "type": "bind", "source": "/dev/null"},
                 {"destination": "/data", "type": "bind", "source": "/scratch"}]})");
    CPPUNIT_ASSERT(vgpu::InjectVgpu(Injection(), &c).ok());
    CPPUNIT_ASSERT_EQUAL(4u, c["mounts"].size());  // /data and our three
    CPPUNIT_ASSERT(MountAt(c, "/data") != nullptr);
    CPPUNIT_ASSERT(MountAt(c, "/run/slurm-vgpu/job_7") == nullptr);
    CPPUNIT_ASSERT_EQUAL(std::string("/run/slurm-vgpu"), (*MountAt(c, "/run/slurm-vgpu"))["source"].asString());
    CPPUNIT_ASSERT_EQUAL(std::string("/usr/lib/slurm-vgpu/ld.so.preload"),
                         (*MountAt(c, "/etc/ld.so.preload"))["source"].asString());
    CPPUNIT_ASSERT_EQUAL(2u, c["process"]["env"].size());
    std::string storage;
    CPPUNIT_ASSERT_EQUAL(std::string("MIG-1"), std::string(vgpu::OciEnvLookup(c, "CUDA_VISIBLE_DEVICES", &storage)));
  }

  void RefusesWhatIsNoOciConfig() {
    Json::Value c = Parse(R"({"mounts": []})");
    vgpu::Status st = vgpu::InjectVgpu(Injection(), &c);
    CPPUNIT_ASSERT(!st.ok() && st.message().find("\"process\"") != std::string::npos);
    c = Parse(R"({"process": {}, "mounts": {"a": 1}})");
    st = vgpu::InjectVgpu(Injection(), &c);
    CPPUNIT_ASSERT(!st.ok() && st.message().find("\"mounts\" is not a list") != std::string::npos);
    c = Parse(R"({"process": {"env": "PATH=/bin"}})");
    CPPUNIT_ASSERT(!vgpu::InjectVgpu(Injection(), &c).ok());
  }

  void FindsTheBundleArgument() {
    using vgpu::BundleArgument;
    CPPUNIT_ASSERT_EQUAL(std::string("/spool/b"), BundleArgument({"--rootless=true", "run", "id", "-b", "/spool/b"}));
    CPPUNIT_ASSERT_EQUAL(std::string("/x"), BundleArgument({"create", "--bundle", "/x", "id"}));
    CPPUNIT_ASSERT_EQUAL(std::string("/y"), BundleArgument({"run", "--bundle=/y", "id"}));
    CPPUNIT_ASSERT_EQUAL(std::string(""), BundleArgument({"state", "id"}));
    CPPUNIT_ASSERT_EQUAL(std::string(""), BundleArgument({"run", "-b"}));  // no value
  }

  void ContainerCgroupBelowTheJobs() {
    using vgpu::OciCgroupsPath;
    const std::string v1 = "9:freezer:/slurm_n3/uid_0/job_5/step_0\n5:devices:/slurm_n3/uid_0/job_5/step_0/task_0\n0::/\n";
    CPPUNIT_ASSERT_EQUAL(std::string("/slurm_n3/uid_0/job_5/step_0/task_0/oci-1"), OciCgroupsPath(v1, false, "oci-1"));
    CPPUNIT_ASSERT_EQUAL(std::string(""), OciCgroupsPath(v1, true, "oci-1"));  // "/" is no job's
    const std::string v2 = "0::/system.slice/n3_slurmstepd.scope/sBGSM98HZTST00/step_0/user/task_0\n";
    CPPUNIT_ASSERT_EQUAL(std::string("/system.slice/n3_slurmstepd.scope/sBGSM98HZTST00/step_0/user/task_0/oci-2"),
                         OciCgroupsPath(v2, true, "oci-2"));
    // Slurm's cgroup/v2 on a hybrid host: the v1 lines are "/".
    CPPUNIT_ASSERT_EQUAL(std::string("/system.slice/n3_slurmstepd.scope/sBGSM98HZTST00/step_0/user/task_0/oci-2"),
                         OciCgroupsPath("5:devices:/\n" + v2, false, "oci-2"));
    CPPUNIT_ASSERT_EQUAL(std::string(""), OciCgroupsPath("5:devices:/\n0::/\n", false, "oci-2"));
    // Set in config.json when given.
    Json::Value c = Parse(R"({"process": {}, "linux": {"cgroupsPath": "/elsewhere"}})");
    vgpu::OciInjection in = Injection();
    in.cgroups_path = "/a/job_5/oci-3";
    CPPUNIT_ASSERT(vgpu::InjectVgpu(in, &c).ok());
    CPPUNIT_ASSERT_EQUAL(std::string("/a/job_5/oci-3"), c["linux"]["cgroupsPath"].asString());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(OciBundleTest);
