// Slurm-style configuration text as vgpuctl check reads it: Key=Value
// words per line (slurm.conf, gres.conf, cgroup.conf, oci.conf).
#ifndef VGPU_TOOLS_CONF_TEXT_H_
#define VGPU_TOOLS_CONF_TEXT_H_

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "util/text.h"

namespace vgpu::check {

// Key=Value words of one configuration line (keys lower case); comments and
// blank lines give none.
inline std::map<std::string, std::string> ConfWords(const std::string& raw) {
  std::map<std::string, std::string> words;
  std::istringstream in(Trim(raw.substr(0, raw.find('#'))));
  std::string word;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) words[Lower(word.substr(0, eq))] = word.substr(eq + 1);
  }
  return words;
}

inline std::vector<std::string> ConfLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The last value a file's lines give `key` (lower case), as Slurm keeps the
// last; "" when none does.
inline std::string ConfValue(const std::string& text, const std::string& key) {
  std::string value;
  for (const std::string& line : ConfLines(text)) {
    auto w = ConfWords(line);
    if (auto it = w.find(key); it != w.end()) value = it->second;
  }
  return value;
}

}  // namespace vgpu::check

#endif  // VGPU_TOOLS_CONF_TEXT_H_
