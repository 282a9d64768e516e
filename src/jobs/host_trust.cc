#include "jobs/host_trust.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vgpu {
namespace {

// include/linux/proc_ns.h: the initial user namespace's inode number.
constexpr ino_t kInitialUserNamespaceInode = 0xEFFFFFFDU;
constexpr long kNsfsMagic = 0x6e736673;  // include/uapi/linux/magic.h
// include/uapi/linux/pidfd.h (Linux 6.11); Debian 12's headers predate it.
constexpr unsigned long kPidfdGetUserNamespace = _IO(0xFF, 9);

// The user namespace open as `fd` (closed here), or -1 if fd is not one.
int NamespaceVerdict(int fd) {
  if (fd < 0) return -1;
  struct stat st {};
  struct statfs fs {};
  const bool ok = fstat(fd, &st) == 0 && fstatfs(fd, &fs) == 0 && fs.f_type == kNsfsMagic;
  close(fd);
  if (!ok) return -1;
  return st.st_ino == kInitialUserNamespaceInode ? 1 : 0;
}

uid_t OverflowUid() {
  // /proc/sys/kernel/overflowuid; 65534 unless an administrator changed it.
  int fd = open("/proc/sys/kernel/overflowuid", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 65534;
  char buf[16] = {};
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return 65534;
  uid_t uid = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) uid = uid * 10 + static_cast<uid_t>(buf[i] - '0');
  return uid;
}

}  // namespace

UserNamespace CurrentUserNamespace() {
#ifdef SYS_pidfd_open
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (pidfd >= 0) {
    int ns = ioctl(pidfd, kPidfdGetUserNamespace, 0);
    close(pidfd);
    int verdict = NamespaceVerdict(ns);
    if (verdict >= 0) return verdict ? UserNamespace::kHost : UserNamespace::kNested;
  }
#endif
  int verdict = NamespaceVerdict(open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC));
  if (verdict >= 0) return verdict ? UserNamespace::kHost : UserNamespace::kNested;
  // A kernel without user namespaces has no /proc/self/ns/user but the
  // other namespace files; anything else cannot be told apart from a
  // namespace that hides /proc.
  struct stat st {};
  struct statfs fs {};
  if (errno == ENOENT && stat("/proc/self/ns/mnt", &st) == 0 && statfs("/proc/self", &fs) == 0 &&
      fs.f_type == 0x9fa0 /* PROC_SUPER_MAGIC */)
    return UserNamespace::kHost;
  return UserNamespace::kNested;
}

Status CheckHostRootOnly(int fd, const std::string& name, bool directory, UserNamespace ns) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return Status::Error(name + ": " + std::strerror(errno));
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return Status::Error(name + " is not a " + (directory ? "directory" : "regular file"));
  const std::string shown = " (owner uid " + std::to_string(st.st_uid) + ", mode " +
                            std::to_string(st.st_mode & 07777) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return Status::Error(name + " may be written by others than root" + shown);
  if (ns == UserNamespace::kHost) {
    if (st.st_uid != 0) return Status::Error(name + " may be written by others than root" + shown);
    return Status::Ok();
  }
  const std::string here = " inside this user namespace";
  if (st.st_uid != OverflowUid())
    return Status::Error(name + " belongs to uid " + std::to_string(st.st_uid) + here +
                         ", so it was not written by the host's root (whose files show as the overflow uid " +
                         std::to_string(OverflowUid()) + " here)");
  // The kernel answers on real ids: only the owner (or a capability over
  // an owner this namespace maps) may change the mode.
  if (fchmod(fd, st.st_mode & 07777) == 0)
    return Status::Error(name + " is this process's own file (made by the job's user), not the host root's" + shown);
  if (errno == EROFS)
    return Status::Error(name + " is on a read-only mount" + here +
                         ", where who owns it cannot be told; make the run directory visible read-write "
                         "(the job still cannot write it)");
  if (errno != EPERM) return Status::Error(name + ": cannot tell who owns it: " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace vgpu
