// Small string helpers shared by our parsers.
#ifndef VGPU_UTIL_TEXT_H_
#define VGPU_UTIL_TEXT_H_

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <istream>
#include <sstream>
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

// The last non-blank line of `text` (a command's fatal message comes last),
// or `fallback` when there is none.
inline std::string LastLine(const std::string& text, const std::string& fallback) {
  std::string t = Trim(text);
  size_t nl = t.find_last_of('\n');
  std::string line = Trim(nl == std::string::npos ? t : t.substr(nl + 1));
  return line.empty() ? fallback : line;
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

// Parses `s` as a plain decimal number (digits only: no sign, no blanks) of
// at most `max` into *out; false, leaving *out alone, when it is not one.
inline bool ParseU64(const std::string& s, uint64_t max, uint64_t* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v > max) return false;
  *out = v;
  return true;
}

// The line reader of our record files (limits, slices): reads `in` up to its
// next line that holds a word once its '#' comment is cut, leaves that line
// in *words positioned after its first word, *key. *line_no counts every
// line read, blank or not, for messages. False at the end of `in`.
inline bool NextRecord(std::istream& in, int* line_no, std::istringstream* words, std::string* key) {
  std::string line;
  while (std::getline(in, line)) {
    ++*line_no;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    words->clear();
    words->str(line);
    if (*words >> *key) return true;
  }
  return false;
}

}  // namespace vgpu

#endif  // VGPU_UTIL_TEXT_H_
