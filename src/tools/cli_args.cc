#include "cli_args.h"

#include <unistd.h>

namespace vgpu {

bool ArgCursor::Next() {
  if (started_) ++i_;
  started_ = true;
  if (i_ >= args_.size()) return false;
  const std::string& a = args_[i_];
  const size_t eq = a.find('=');
  has_inline_ = a.rfind("--", 0) == 0 && eq != std::string::npos;
  name_ = has_inline_ ? a.substr(0, eq) : a;
  inline_value_ = has_inline_ ? a.substr(eq + 1) : "";
  return true;
}

bool ArgCursor::Value(std::string* value) {
  if (has_inline_) {
    *value = inline_value_;
  } else {
    if (i_ + 1 >= args_.size()) return false;
    *value = args_[++i_];
  }
  return !value->empty();
}

std::string ShortHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  const std::string n = name;
  return n.substr(0, n.find('.'));
}

}  // namespace vgpu
