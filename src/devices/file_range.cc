#include "devices/file_range.h"

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

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

namespace {

// "/dev/nvidia12" -> ("/dev/nvidia", 12); false when the name does not end
// in a number without zero padding, or holds what the syntax reserves.
bool SplitNumbered(const std::string& file, std::string* prefix, uint64_t* number) {
  if (file.find_first_of("[],") != std::string::npos) return false;
  size_t start = file.size();
  while (start > 0 && std::isdigit(static_cast<unsigned char>(file[start - 1]))) --start;
  const size_t digits = file.size() - start;
  if (digits == 0 || digits > 9 || (digits > 1 && file[start] == '0')) return false;
  *prefix = file.substr(0, start);
  *number = std::stoull(file.substr(start));
  return true;
}

}  // namespace

std::string CompressFileRange(const std::vector<std::string>& files) {
  std::string out;
  for (size_t i = 0; i < files.size();) {
    if (!out.empty()) out += ',';
    std::string prefix, next_prefix;
    uint64_t first = 0, next = 0;
    if (!SplitNumbered(files[i], &prefix, &first)) {
      out += files[i++];
      continue;
    }
    // The run of files[i..j) with this prefix and rising numbers.
    std::vector<uint64_t> numbers{first};
    size_t j = i + 1;
    while (j < files.size() && SplitNumbered(files[j], &next_prefix, &next) && next_prefix == prefix &&
           next > numbers.back()) {
      numbers.push_back(next);
      ++j;
    }
    if (numbers.size() == 1) {
      out += files[i];
    } else {
      out += prefix + '[';
      for (size_t k = 0; k < numbers.size();) {
        size_t end = k;
        while (end + 1 < numbers.size() && numbers[end + 1] == numbers[end] + 1) ++end;
        if (k > 0) out += ',';
        out += std::to_string(numbers[k]);
        if (end > k) out += '-' + std::to_string(numbers[end]);
        k = end + 1;
      }
      out += ']';
    }
    i = j;
  }
  return out;
}

}  // namespace vgpu
