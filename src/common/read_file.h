// Reading a whole (small) file: configuration, catalog, inventory, trace.
#ifndef VGPU_COMMON_READ_FILE_H_
#define VGPU_COMMON_READ_FILE_H_

#include <string>

#include "status.h"

namespace vgpu {

// The file's bytes, or "cannot read PATH: <reason>" (no such file, a
// directory, permission, I/O error).
Result<std::string> ReadTextFile(const std::string& path);

}  // namespace vgpu

#endif  // VGPU_COMMON_READ_FILE_H_
