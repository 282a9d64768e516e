// Running a helper program (sacct, squeue) without a shell and reading its output.
#ifndef VGPU_UTIL_RUN_COMMAND_H_
#define VGPU_UTIL_RUN_COMMAND_H_

#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu {

struct CommandOutput {
  int exit_status = 0;  // the exit status, or 128 + N when killed by signal N
  std::string out, err;  // everything it wrote to stdout and stderr
};

// Runs argv[0], an absolute or relative path (no PATH search), with
// arguments argv[1..], this process's environment, stdin from /dev/null,
// and waits for it. Error only when it cannot be run: "cannot run PATH:
// <reason>" (no such file, not executable, ...). argv must not be empty.
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv);

// Whether `path` is a regular file this process may execute.
bool IsExecutableFile(const std::string& path);

// The first "DIR/name" that is an executable regular file, for DIR in the
// colon-separated `path_list` (an empty entry means "."); "" when none.
std::string FindOnPath(const std::string& name, const std::string& path_list);

}  // namespace vgpu

#endif  // VGPU_UTIL_RUN_COMMAND_H_
