#include "devices/file_range.h"

#include <cctype>
#include <cstdint>

#include "util/text.h"

namespace vgpu {
namespace {

// Splits on commas that are not inside brackets.
std::vector<std::string> SplitTopLevel(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string Pad(uint64_t value, size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// Expands one bracket body ("0-3,7") into its numbers as strings. Numbers
// are at most 4294967295: a larger one is an error, so that no range can
// reach the top of the counter and wrap (which looped forever).
Status ExpandBody(const std::string& body, const std::string& item,
                  std::vector<std::string>* out) {
  for (const std::string& piece : SplitTopLevel(body)) {
    size_t dash = piece.find('-');
    std::string lo = piece.substr(0, dash);
    std::string hi = dash == std::string::npos ? lo : piece.substr(dash + 1);
    if (!AllDigits(lo) || !AllDigits(hi))
      return Status::Error("File=" + item + ": \"" + piece +
                           "\" is not a number or a range like 0-7");
    uint64_t from = 0, to = 0;
    if (!ParseU64(lo, UINT32_MAX, &from) || !ParseU64(hi, UINT32_MAX, &to))
      return Status::Error("File=" + item + ": \"" + piece + "\" has a number above 4294967295");
    if (to < from)
      return Status::Error("File=" + item + ": range \"" + piece + "\" runs backwards");
    if (to - from > 4096)
      return Status::Error("File=" + item + ": range \"" + piece + "\" is too long");
    size_t width = lo.size() > 1 && lo[0] == '0' ? lo.size() : 0;
    for (uint64_t n = from; n <= to; ++n) out->push_back(Pad(n, width));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> ExpandFileRange(const std::string& expression) {
  std::vector<std::string> files;
  if (expression.empty()) return Result<std::vector<std::string>>::Error("File= is empty");
  for (const std::string& item : SplitTopLevel(expression)) {
    if (item.empty())
      return Result<std::vector<std::string>>::Error("File=" + expression +
                                                     ": empty item between commas");
    size_t open = item.find('[');
    if (open == std::string::npos) {
      if (item.find(']') != std::string::npos)
        return Result<std::vector<std::string>>::Error("File=" + item + ": ']' without '['");
      files.push_back(item);
      continue;
    }
    size_t close = item.find(']', open);
    if (close == std::string::npos)
      return Result<std::vector<std::string>>::Error("File=" + item + ": '[' without ']'");
    if (item.find('[', close) != std::string::npos)
      return Result<std::vector<std::string>>::Error(
          "File=" + item + ": only one bracket range per file name is supported");
    std::vector<std::string> numbers;
    Status st = ExpandBody(item.substr(open + 1, close - open - 1), item, &numbers);
    if (!st.ok()) return st;
    std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    for (const std::string& n : numbers) files.push_back(prefix + n + suffix);
  }
  return files;
}

}  // namespace vgpu
