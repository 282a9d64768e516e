// Small string helpers shared by the parsers of libvgpucore.
#ifndef VGPU_COMMON_TEXT_H_
#define VGPU_COMMON_TEXT_H_

#include <cctype>
#include <string>

namespace vgpu {

// ASCII lower case: Slurm's and our keys and types compare case-insensitively.
inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// `s` without leading and trailing blanks (space, tab, CR, LF).
inline std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace vgpu

#endif  // VGPU_COMMON_TEXT_H_
