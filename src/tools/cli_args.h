// The command lines of vgpuctl's subcommands and vgpu-exporter: flags
// ("--json"), and options with a value, as "--name VALUE" or "--name=VALUE";
// and the host's node name their defaults take.
#ifndef VGPU_TOOLS_CLI_ARGS_H_
#define VGPU_TOOLS_CLI_ARGS_H_

#include <string>
#include <vector>

namespace vgpu {

// Walks the arguments one by one: Next() moves to the next one, name() is
// it without any "=VALUE", Value() takes the option's value.
class ArgCursor {
 public:
  explicit ArgCursor(const std::vector<std::string>& args) : args_(args) {}

  // False past the last argument.
  bool Next();
  const std::string& name() const { return name_; }
  const std::string& arg() const { return args_[i_]; }  // as written
  // The value after '=', else the next argument (which is then taken);
  // false when there is none or it is empty.
  bool Value(std::string* value);

 private:
  const std::vector<std::string>& args_;
  size_t i_ = 0;
  bool started_ = false;
  std::string name_, inline_value_;
  bool has_inline_ = false;
};

// This host's name as Slurm's NodeName has it (the short name), the
// default of the options that name the node; "" when it has none.
std::string ShortHostName();

}  // namespace vgpu

#endif  // VGPU_TOOLS_CLI_ARGS_H_
