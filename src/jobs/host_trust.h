// Whether a process may believe a file is the host's: written by the
// host's root (vgpu-prolog) and by nobody else. In the host's user
// namespace that is "owned by uid 0 and not writable by others". Inside a
// user namespace the process (or a container runtime) made, uid 0 may be
// the job's own user, and a private mount namespace can put any file at
// any path, so ownership as shown proves nothing there; what the kernel
// still decides on real ids is whether the file is the caller's to change.
#ifndef VGPU_JOBS_HOST_TRUST_H_
#define VGPU_JOBS_HOST_TRUST_H_

#include <string>

#include "util/status.h"

namespace vgpu {

enum class UserNamespace {
  kHost,    // the initial user namespace (where slurmd runs)
  kNested,  // any other, or one the process cannot name
};

// The calling process's user namespace, asked of the kernel through a
// pidfd (Linux 6.11+: no path a mount namespace could replace), else
// through /proc/self/ns/user (checked to be nsfs). The initial user
// namespace has a fixed inode number (PROC_USER_INIT_INO).
UserNamespace CurrentUserNamespace();

// Whether the open file `fd` (shown in messages as `name`) is the host
// root's and nobody else may write it, seen from namespace `ns`:
//  * kHost: owned by uid 0; not writable by group or others.
//  * kNested: owned by a uid this namespace does not map (the host's root
//    shows as the overflow uid), not the caller's own (fchmod to its own
//    mode fails with EPERM: a file the process made, inside or outside
//    the namespace, is its own whatever uid it shows), on a writable
//    mount (a read-only one hides the answer), not writable by group or
//    others.
// `directory` says which kind of file it must be. The error names the
// file, what is wrong and, for the namespace cases, what would be right.
Status CheckHostRootOnly(int fd, const std::string& name, bool directory, UserNamespace ns);

}  // namespace vgpu

#endif  // VGPU_JOBS_HOST_TRUST_H_
