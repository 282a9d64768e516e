#include "read_file.h"

#include <sys/stat.h>

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

}  // namespace vgpu
