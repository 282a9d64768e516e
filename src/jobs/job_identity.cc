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

int64_t StepIdFromCgroup(const std::string& text) {
  static const std::string kTag = "/step_";
  const uint32_t job = JobIdFromCgroup(text);
  if (job == 0) return -1;
  const std::string after = "/job_" + std::to_string(job) + kTag;
  size_t at = text.find(after);
  if (at == std::string::npos) return -1;
  size_t i = at + after.size();
  int64_t id = 0;
  size_t digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 10) {
    id = id * 10 + (text[i] - '0');
    ++i;
    ++digits;
  }
  const bool ends = i == text.size() || text[i] == '/' || text[i] == '\n';
  return digits > 0 && ends && id <= UINT32_MAX ? id : -1;
}

namespace {

std::string ProcSelfCgroup() {
  int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0 && text.size() < 65536) text.append(buf, static_cast<size_t>(n));
  close(fd);
  return text;
}

}  // namespace

uint32_t CurrentJobId() { return JobIdFromCgroup(ProcSelfCgroup()); }

void CurrentJobAndStep(uint32_t* job_id, int64_t* step_id) {
  const std::string text = ProcSelfCgroup();
  *job_id = JobIdFromCgroup(text);
  *step_id = StepIdFromCgroup(text);
}

}  // namespace vgpu
