// The seccomp filter spank_vgpu.so puts on a vgpu job's task where vgpu.conf
// says JobUserNamespaces=deny: in a user namespace of its own, a job can
// show libvgpu.so a filesystem it arranged (doc/enforcement.md), and only
// the kernel can keep it from making one.
//
// Refused with EPERM: unshare(2) and clone(2) with CLONE_NEWUSER, setns(2)
// into a user namespace or with nstype 0 (which joins whatever the
// descriptor names). clone3(2) passes its flags in memory a filter cannot
// read, so it answers ENOSYS, and the C library falls back to clone(2) (as
// container runtimes' own filters do). Every other call is allowed. The
// filter is inherited by every descendant and survives exec and setuid.
#ifndef VGPU_SPANK_VGPU_USER_NAMESPACE_FILTER_H_
#define VGPU_SPANK_VGPU_USER_NAMESPACE_FILTER_H_

#include "util/status.h"

namespace vgpu {

// Loads the filter into the calling process, which must have one thread
// (a task in slurmstepd between fork and exec has).
// As root it needs no no_new_privs, so setuid programs keep working in the
// job; otherwise no_new_privs is set first, as the kernel requires.
Status DenyNewUserNamespaces();

}  // namespace vgpu

#endif  // VGPU_SPANK_VGPU_USER_NAMESPACE_FILTER_H_
