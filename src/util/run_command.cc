// posix_spawn with stdout and stderr read through pipes (see run_command.h).
#include "util/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace vgpu {

namespace {

// Closes its descriptors when it goes.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
  void CloseEnd(int i) {
    if (fd[i] >= 0) close(fd[i]);
    fd[i] = -1;
  }
};

// Reads both pipes until both reach end of file.
void Drain(int out_fd, int err_fd, std::string* out, std::string* err) {
  struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {out, err};
  char buf[65536];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) sinks[i]->append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EINTR) fds[i].fd = -1;  // poll ignores negative descriptors
    }
  }
}

}  // namespace

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv) {
  using R = Result<CommandOutput>;
  if (argv.empty()) return R::Error("cannot run an empty command");
  const std::string& path = argv[0];
  if (!IsExecutableFile(path))
    return R::Error("cannot run " + path + ": " + (access(path.c_str(), F_OK) != 0 ? "no such file" : "not an executable file"));
  Pipe out, err;
  if (pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0)
    return R::Error("cannot run " + path + ": pipe: " + std::strerror(errno));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return R::Error("cannot run " + path + ": " + std::strerror(rc));
  out.CloseEnd(1);
  err.CloseEnd(1);

  CommandOutput result;
  Drain(out.fd[0], err.fd[0], &result.out, &result.err);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return R::Error("cannot run " + path + ": waitpid: " + std::strerror(errno));
  }
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string FindOnPath(const std::string& name, const std::string& path_list) {
  size_t from = 0;
  while (from <= path_list.size()) {
    size_t colon = path_list.find(':', from);
    if (colon == std::string::npos) colon = path_list.size();
    std::string dir = path_list.substr(from, colon - from);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    from = colon + 1;
  }
  return "";
}

}  // namespace vgpu
