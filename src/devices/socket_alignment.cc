#include "devices/socket_alignment.h"

#include <algorithm>

namespace vgpu {

std::vector<bool> AlignToSockets(const std::vector<bool>& cores, SocketLayout layout,
                                 SocketCheck check) {
  const int per = layout.cores_per_socket;
  if (check == SocketCheck::kNone || layout.sockets <= 0 || per <= 0 ||
      static_cast<int>(cores.size()) != layout.cores() ||
      std::none_of(cores.begin(), cores.end(), [](bool b) { return b; }))
    return cores;

  std::vector<bool> out(cores.size(), false);
  int touched = 0;
  for (int s = 0; s < layout.sockets; ++s) {
    const auto first = cores.begin() + s * per;
    if (std::none_of(first, first + per, [](bool b) { return b; })) continue;
    ++touched;
    std::fill(out.begin() + s * per, out.begin() + (s + 1) * per, true);
  }
  // 25.11 accepts several sockets only as the whole node.
  if (check == SocketCheck::kOneSocketOrAll && touched > 1) out.assign(cores.size(), true);
  return out;
}

std::string FormatCores(const std::vector<bool>& cores) {
  std::string out;
  const size_t n = cores.size();
  for (size_t i = 0; i < n;) {
    if (!cores[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < n && cores[j + 1]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(i);
    if (j > i) out += '-' + std::to_string(j);
    i = j + 1;
  }
  return out;
}

}  // namespace vgpu
