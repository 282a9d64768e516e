#include "slice_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace vgpu {

std::string SliceLock::PathFor(const std::string& run_dir, const std::string& parent) {
  std::string name = parent;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != ':') c = '_';
  return run_dir + "/.slicing-" + name + ".lock";
}

SliceLock::SliceLock(const std::string& run_dir, const std::string& parent) {
  const std::string path = PathFor(run_dir, parent);
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    status_ = Status::Error("cannot open the slicing lock " + path + ": " + std::strerror(errno));
    return;
  }
  int rc;
  while ((rc = flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    status_ = Status::Error("cannot lock " + path + ": " + std::strerror(errno));
    close(fd_);
    fd_ = -1;
  }
}

SliceLock::~SliceLock() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

}  // namespace vgpu
