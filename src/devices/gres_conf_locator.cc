#include "devices/gres_conf_locator.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "devices/file_range.h"
#include "util/text.h"

namespace vgpu {
namespace {

// Value of `key` (case-insensitive) among the line's blank-separated
// Key=Value words, or "".
std::string ValueOf(const std::string& line, const std::string& key) {
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    size_t eq = word.find('=');
    if (eq != std::string::npos && Lower(word.substr(0, eq)) == key) return word.substr(eq + 1);
  }
  return "";
}

}  // namespace

GresConfLocator::GresConfLocator(const std::string& path, const std::string& text)
    : path_(path) {
  std::istringstream in(text);
  std::string raw;
  int number = 0;
  while (std::getline(in, raw)) {
    ++number;
    std::string line = Trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    GresConfLine entry;
    entry.number = number;
    entry.text = line;
    std::string file = ValueOf(line, "file");
    if (file.empty()) file = ValueOf(line, "multiplefiles");
    if (!file.empty()) {
      auto files = ExpandFileRange(file);
      if (files.ok()) entry.files = *files;
    }
    lines_.push_back(entry);
    names_.push_back(Lower(ValueOf(line, "name")));
    // NodeName= takes the same bracket syntax as File=.
    std::vector<std::string> nodes;
    std::string node_expr = ValueOf(line, "nodename");
    if (!node_expr.empty()) {
      auto expanded = ExpandFileRange(node_expr);
      nodes = expanded.ok() ? *expanded : std::vector<std::string>{node_expr};
    }
    nodes_.push_back(nodes);
  }
}

const GresConfLine* GresConfLocator::FindByFile(const std::string& node,
                                                const std::string& name,
                                                const std::string& file) const {
  std::string want = Lower(name);
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (names_[i] != want) continue;
    const auto& nodes = nodes_[i];
    if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) continue;
    const auto& files = lines_[i].files;
    if (std::find(files.begin(), files.end(), file) != files.end()) return &lines_[i];
  }
  return nullptr;
}

std::vector<const GresConfLine*> GresConfLocator::AllByFile(const std::string& node,
                                                            const std::string& file) const {
  std::vector<const GresConfLine*> out;
  for (size_t i = 0; i < lines_.size(); ++i) {
    const auto& nodes = nodes_[i];
    if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) continue;
    const auto& files = lines_[i].files;
    if (std::find(files.begin(), files.end(), file) != files.end()) out.push_back(&lines_[i]);
  }
  return out;
}

std::string GresConfLocator::Describe(const GresConfLine* line,
                                      const std::string& fallback) const {
  if (!line) return "gres.conf record (" + fallback + ")";
  return path_ + " line " + std::to_string(line->number) + " (" + line->text + ")";
}

}  // namespace vgpu
