// Finds the gres.conf line a record came from, so that error messages name
// the line an admin must edit. Slurm's parsed records carry no line numbers,
// so the locator reads gres.conf's text itself and matches on Name=, Type=
// and the files the line's File= expands to.
#ifndef VGPU_DEVICES_GRES_CONF_LOCATOR_H_
#define VGPU_DEVICES_GRES_CONF_LOCATOR_H_

#include <string>
#include <vector>

namespace vgpu {

struct GresConfLine {
  int number = 0;            // 1-based
  std::string text;          // the line as written, trimmed
  std::vector<std::string> files;  // File= expanded (empty if none or malformed)
};

class GresConfLocator {
 public:
  GresConfLocator() = default;
  // `path` is only used in descriptions ("gres.conf:3").
  GresConfLocator(const std::string& path, const std::string& text);

  // The first line for `node` (its NodeName= lists the node, or it has no
  // NodeName=) with Name=`name` (case-insensitive) whose File= lists `file`,
  // else nullptr.
  const GresConfLine* FindByFile(const std::string& node, const std::string& name,
                                 const std::string& file) const;

  // Every line for `node` whose File= lists `file`, of any Name=, in order.
  std::vector<const GresConfLine*> AllByFile(const std::string& node, const std::string& file) const;

  // "/etc/slurm/gres.conf line 3 (NodeName=n1 Name=vgpu ...)" or, when the
  // line is unknown, a description built from the record itself.
  std::string Describe(const GresConfLine* line, const std::string& fallback) const;

 private:
  std::string path_;
  std::vector<GresConfLine> lines_;
  std::vector<std::string> names_;  // Name= of each line, lower case
  std::vector<std::vector<std::string>> nodes_;  // NodeName= expanded; empty = every node
};

}  // namespace vgpu

#endif  // VGPU_DEVICES_GRES_CONF_LOCATOR_H_
