#include "spank_vgpu/user_namespace_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace vgpu {
namespace {

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

Status Failed(const char* step, int rc) {
  return Status::Error(std::string("cannot set up the user namespace filter (") + step +
                       "): " + std::strerror(-rc) + "; set JobUserNamespaces=allow in vgpu.conf to run without it");
}

}  // namespace

Status DenyNewUserNamespaces() {
  std::unique_ptr<void, FilterDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Status::Error("cannot set up the user namespace filter: seccomp_init failed");
  int rc;
  // The 32-bit system call tables of an x86_64 kernel reach the same
  // calls: without them a 32-bit program would pass the filter.
  if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
    for (uint32_t arch : {SCMP_ARCH_X86, SCMP_ARCH_X32}) {
      rc = seccomp_arch_add(ctx.get(), arch);
      if (rc != 0 && rc != -EEXIST) return Failed("seccomp_arch_add", rc);
    }
  }
  const scmp_datum_t user = CLONE_NEWUSER;
  const auto eperm = SCMP_ACT_ERRNO(EPERM);
  struct Rule {
    int syscall;
    uint32_t action;
    unsigned arg;
    enum scmp_compare op;
    scmp_datum_t mask, value;
    bool any_args;
  };
  const Rule rules[] = {
      {SCMP_SYS(unshare), eperm, 0, SCMP_CMP_MASKED_EQ, user, user, false},
      {SCMP_SYS(clone), eperm, 0, SCMP_CMP_MASKED_EQ, user, user, false},
      {SCMP_SYS(setns), eperm, 1, SCMP_CMP_MASKED_EQ, user, user, false},
      {SCMP_SYS(setns), eperm, 1, SCMP_CMP_EQ, 0, 0, false},
      {SCMP_SYS(clone3), SCMP_ACT_ERRNO(ENOSYS), 0, SCMP_CMP_EQ, 0, 0, true},
  };
  for (const Rule& r : rules) {
    if (r.any_args) {
      rc = seccomp_rule_add(ctx.get(), r.action, r.syscall, 0);
    } else {
      const struct scmp_arg_cmp cmp = {r.arg, r.op, r.op == SCMP_CMP_MASKED_EQ ? r.mask : r.value, r.value};
      rc = seccomp_rule_add_array(ctx.get(), r.action, r.syscall, 1, &cmp);
    }
    // A system call this architecture does not have (clone3 on an old
    // libseccomp) is not an error.
    if (rc != 0 && rc != -EDOM && rc != -EFAULT) return Failed("seccomp_rule_add", rc);
  }
  if (geteuid() == 0) {
    rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0);
    if (rc != 0) return Failed("no_new_privs", rc);
  }
  rc = seccomp_load(ctx.get());
  if (rc != 0) return Failed("seccomp_load", rc);
  return Status::Ok();
}

}  // namespace vgpu
