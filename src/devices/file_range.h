// Expansion of gres.conf File= expressions, the same bracket syntax Slurm's
// hostlist accepts for device files: "/dev/davinci[0-7]",
// "/dev/nvidia[0-1,3]", "/dev/dri/renderD[128-131]", and comma lists of
// such items. Zero padding in a range ("[00-03]") is kept. Numbers are
// whole and at most 4294967295; one range spans at most 4,097 of them.
#ifndef VGPU_DEVICES_FILE_RANGE_H_
#define VGPU_DEVICES_FILE_RANGE_H_

#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu {

// Files in the order written; an error names the malformed part.
Result<std::vector<std::string>> ExpandFileRange(const std::string& expression);

// The shortest expression ExpandFileRange turns back into `files`, in their
// order: neighbours that differ only in a rising number at the end (no
// zero padding) share brackets ("/dev/nvidia[0-3,5]"); others are listed
// as they are, separated by commas.
std::string CompressFileRange(const std::vector<std::string>& files);

}  // namespace vgpu

#endif  // VGPU_DEVICES_FILE_RANGE_H_
