#include "util/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace vgpu {

Result<std::string> ReadTextFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return Result<std::string>::Error("cannot read " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return Result<std::string>::Error("cannot read " + path + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Result<std::string>::Error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Result<std::string>::Error("cannot read " + path + ": read error");
  return text.str();
}

Result<std::string> ReadTextFd(int fd, const std::string& name, size_t limit) {
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Result<std::string>::Error("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > limit)
      return Result<std::string>::Error("cannot read " + name + ": larger than " + std::to_string(limit) + " bytes");
  }
}

Status WriteFileAtomically(const std::string& path, const std::string& text, unsigned mode) {
  const std::string tmp = path + ".new";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return Status::Error("cannot create " + tmp + ": " + std::strerror(errno));
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool synced = fsync(fd) == 0 && fchmod(fd, mode) == 0;
  close(fd);
  if (!written || !synced || rename(tmp.c_str(), path.c_str()) != 0) {
    Status st = Status::Error("cannot write " + path + ": " + std::strerror(errno));
    unlink(tmp.c_str());
    return st;
  }
  return Status::Ok();
}

}  // namespace vgpu
