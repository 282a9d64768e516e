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

// `s` on one line: every run of blanks and newlines becomes one space, so
// that a parser's multi-line message stays one log line.
inline std::string OneLine(const std::string& s) {
  std::string out;
  bool blank = false;
  for (char c : Trim(s)) {
    bool is_blank = c == ' ' || c == '\t' || c == '\r' || c == '\n';
    if (is_blank && !blank) out += ' ';
    if (!is_blank) out += c;
    blank = is_blank;
  }
  return out;
}

}  // namespace vgpu

#endif  // VGPU_COMMON_TEXT_H_
