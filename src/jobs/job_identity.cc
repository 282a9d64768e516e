#include "jobs/job_identity.h"

#include <fcntl.h>
#include <unistd.h>

namespace vgpu {

uint32_t JobIdFromCgroup(const std::string& text) {
  static const std::string kTag = "/job_";
  for (size_t at = text.find(kTag); at != std::string::npos; at = text.find(kTag, at + 1)) {
    size_t i = at + kTag.size();
    uint64_t id = 0;
    size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 11) {
      id = id * 10 + static_cast<uint64_t>(text[i] - '0');
      ++i;
      ++digits;
    }
    // A whole component: "/job_42/" or "/job_42" at the end of a line.
    const bool ends = i == text.size() || text[i] == '/' || text[i] == '\n';
    if (digits > 0 && ends && id > 0 && id <= UINT32_MAX) return static_cast<uint32_t>(id);
  }
  return 0;
}

uint32_t CurrentJobId() {
  int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0 && text.size() < 65536) text.append(buf, static_cast<size_t>(n));
  close(fd);
  return JobIdFromCgroup(text);
}

}  // namespace vgpu
