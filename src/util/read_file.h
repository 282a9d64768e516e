// Reading and writing a whole (small) file: configuration, catalog,
// inventory, trace; a job's limits and slices files.
#ifndef VGPU_UTIL_READ_FILE_H_
#define VGPU_UTIL_READ_FILE_H_

#include <string>

#include "util/status.h"

namespace vgpu {

// The file's bytes, or "cannot read PATH: <reason>" (no such file, a
// directory, permission, I/O error).
Result<std::string> ReadTextFile(const std::string& path);

// The same from an open file (read from its current offset to the end, at
// most `limit` bytes); `name` is the file in messages.
Result<std::string> ReadTextFd(int fd, const std::string& name, size_t limit = 1 << 20);

// Replaces `path` with `text` (mode `mode`) so that a reader sees the old
// file or the whole new one, never a part: written to PATH.new, synced,
// renamed. Does not follow a symbolic link at PATH.new.
Status WriteFileAtomically(const std::string& path, const std::string& text, unsigned mode);

}  // namespace vgpu

#endif  // VGPU_UTIL_READ_FILE_H_
