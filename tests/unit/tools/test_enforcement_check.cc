// vgpuctl check's warnings (tools/enforcement_check.h): each configuration
// found to switch the limits off, on files in a temporary directory, with
// a node's /etc of its own (EnforcementInput::etc_dir).
#include <cppunit/extensions/HelperMacros.h>
#include <sys/stat.h>

#include <string>

#include "enforcement_check.h"
#include "temp_dir.h"

using vgpu::check::CheckEnforcement;
using vgpu::check::EnforcementFindings;
using vgpu::check::EnforcementInput;

namespace {

bool Any(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

const char kGood[] =
    "TaskPlugin=task/cgroup,task/affinity\n"
    "Prolog=/usr/sbin/vgpu-prolog\n"
    "PrologFlags=Alloc\n"
    "TaskProlog=/usr/sbin/vgpu-taskprolog\n";

}  // namespace

class EnforcementCheckTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(EnforcementCheckTest);
  CPPUNIT_TEST(GoodClusterHasNoWarning);
  CPPUNIT_TEST(DevicesNotFenced);
  CPPUNIT_TEST(PrologThatDoesNotRunVgpuProlog);
  CPPUNIT_TEST(NothingLoadsTheInterposer);
  CPPUNIT_TEST(SlurmContainers);
  CPPUNIT_TEST(AdoptedSessions);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    dir_ = std::make_unique<vgpu::TempDir>("vgpu-enforce");
    etc_ = std::make_unique<vgpu::TempDir>("vgpu-etc");
    dir_->Write("cgroup.conf", "CgroupPlugin=cgroup/v1\nConstrainDevices=yes\n");
  }
  void tearDown() override {
    dir_.reset();
    etc_.reset();
  }

  void GoodClusterHasNoWarning() {
    EnforcementFindings f = Check(kGood);
    CPPUNIT_ASSERT_MESSAGE(f.warnings.empty() ? "" : f.warnings[0], f.warnings.empty());
    CPPUNIT_ASSERT(f.notes.empty());
  }

  void DevicesNotFenced() {
    EnforcementFindings f = Check(std::string(kGood) + "TaskPlugin=task/affinity\n");  // the last one counts
    CPPUNIT_ASSERT(Any(f.warnings, "TaskPlugin= does not list task/cgroup"));
    dir_->Write("cgroup.conf", "CgroupPlugin=cgroup/v2\nConstrainDevices=no\n");
    f = Check(kGood);
    CPPUNIT_ASSERT(Any(f.warnings, "does not set ConstrainDevices=yes"));
  }

  void PrologThatDoesNotRunVgpuProlog() {
    EnforcementFindings f = Check("TaskPlugin=task/cgroup\nTaskProlog=/usr/sbin/vgpu-taskprolog\n");
    CPPUNIT_ASSERT(Any(f.warnings, "Prolog= is not set"));
    CPPUNIT_ASSERT(!Any(f.warnings, "SLUID"));  // cgroup/v1 names jobs by id
    // cgroup/v2 on 26.05 names them by SLUID unless CgroupJobIdPaths=yes.
    dir_->Write("cgroup.conf", "CgroupPlugin=cgroup/v2\nConstrainDevices=yes\n");
    f = Check("TaskPlugin=task/cgroup\nTaskProlog=/usr/sbin/vgpu-taskprolog\n");
    CPPUNIT_ASSERT(Any(f.warnings, "named by SLUID"));
    dir_->Write("cgroup.conf", "CgroupPlugin=cgroup/v2\nCgroupJobIdPaths=yes\nConstrainDevices=yes\n");
    CPPUNIT_ASSERT(!Any(Check("TaskPlugin=task/cgroup\n").warnings, "SLUID"));
    // A site's wrapper script that runs it, one that does not, one not here.
    const std::string runs = dir_->Write("prolog.sh", "#!/bin/sh\nexec /usr/sbin/vgpu-prolog\n");
    const std::string other = dir_->Write("other.sh", "#!/bin/sh\nexit 0\n");
    f = Check("TaskPlugin=task/cgroup\nTaskProlog=vgpu-taskprolog\nProlog=" + other + "," + runs + "\n");
    CPPUNIT_ASSERT(f.warnings.empty() && f.notes.empty());
    f = Check("TaskPlugin=task/cgroup\nTaskProlog=vgpu-taskprolog\nProlog=" + other + "\n");
    CPPUNIT_ASSERT(Any(f.warnings, "Prolog=" + other + " does not run vgpu-prolog"));
    f = Check("TaskPlugin=task/cgroup\nTaskProlog=vgpu-taskprolog\nProlog=/nonexistent/prolog\n");
    CPPUNIT_ASSERT(f.warnings.empty());
    CPPUNIT_ASSERT(Any(f.notes, "cannot read Prolog=/nonexistent/prolog"));
  }

  void NothingLoadsTheInterposer() {
    const std::string conf = "TaskPlugin=task/cgroup\nProlog=/usr/sbin/vgpu-prolog\n";
    EnforcementFindings f = Check(conf);
    CPPUNIT_ASSERT(f.warnings.empty());
    CPPUNIT_ASSERT(Any(f.notes, "nothing loads libvgpu.so"));  // the nodes' ld.so.preload may
    f = Check(conf, true);
    CPPUNIT_ASSERT(Any(f.warnings, "nothing loads libvgpu.so"));
    etc_->Write("ld.so.preload", "/usr/lib/x86_64-linux-gnu/slurm-vgpu/libvgpu.so\n");
    CPPUNIT_ASSERT(Check(conf, true).warnings.empty());
    // spank_vgpu.so loaded from plugstack.conf (or a file of plugstack.conf.d).
    dir_->Write("plugstack.conf", "# required /usr/lib/slurm/spank_vgpu.so\n");
    CPPUNIT_ASSERT(Any(Check(conf).notes, "nothing loads libvgpu.so"));  // commented out
    dir_->Write("plugstack.conf", "required /usr/lib/slurm/spank_vgpu.so\n");
    f = Check(conf);
    CPPUNIT_ASSERT(f.warnings.empty() && f.notes.empty());
  }

  void SlurmContainers() {
    dir_->Write("oci.conf", "RunTimeQuery=\"runc state %n.%u.%j.%s.%t\"\nRunTimeRun=\"runc run %n.%u.%j.%s.%t -b %b\"\n");
    CPPUNIT_ASSERT(Any(Check(kGood).warnings, "without vgpu-oci-runtime"));
    dir_->Write("oci.conf", "RunTimeRun=\"/usr/sbin/vgpu-oci-runtime runc run %n.%u.%j.%s.%t -b %b\"\n");
    CPPUNIT_ASSERT(Check(kGood).warnings.empty());
  }

  void AdoptedSessions() {
    const std::string contain = std::string(kGood) + "PrologFlags=Alloc,Contain\n";
    CPPUNIT_ASSERT(Any(Check(contain).notes, "pam_slurm_adopt"));
    CPPUNIT_ASSERT(Check(contain, true).warnings.empty());  // this node's PAM adopts nothing
    CPPUNIT_ASSERT_EQUAL(0, mkdir((etc_->path() + "/pam.d").c_str(), 0755));
    etc_->Write("pam.d/sshd", "  # account required pam_slurm_adopt.so (not yet)\n");  // a comment adopts nothing
    CPPUNIT_ASSERT(Check(contain, true).warnings.empty());
    etc_->Write("pam.d/sshd", "account required pam_slurm_adopt.so action_no_jobs=deny\n");
    CPPUNIT_ASSERT(Any(Check(contain, true).warnings, "adopts ssh sessions"));
    etc_->Write("ld.so.preload", "/usr/lib/x86_64-linux-gnu/slurm-vgpu/libvgpu.so\n");
    CPPUNIT_ASSERT(Check(contain, true).warnings.empty());
  }

 private:
  EnforcementFindings Check(const std::string& slurm_conf, bool local = false) {
    EnforcementInput in;
    in.slurm_conf = dir_->Write("slurm.conf", slurm_conf);
    in.slurm_conf_text = slurm_conf;
    in.local = local;
    in.etc_dir = etc_->path();
    return CheckEnforcement(in);
  }
  std::unique_ptr<vgpu::TempDir> dir_, etc_;
};
CPPUNIT_TEST_SUITE_REGISTRATION(EnforcementCheckTest);
