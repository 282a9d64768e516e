#include "trace_csv.h"

#include <cerrno>
#include <limits>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "util/read_file.h"
#include "util/text.h"

namespace vgpu::sim {
namespace {

// Walks a CSV text line by line: the header first (Start), then data lines
// (Next). Blank lines are skipped, a CR before LF dropped; `where()` is the
// "SOURCE:LINE: " prefix of the current line's messages.
class CsvReader {
 public:
  CsvReader(const std::string& text, const std::string& source) : text_(text), source_(source) {}

  // Reads the header. Each entry of `required` is a column name or names
  // separated by '|' (any one will do); all missing ones are named in the
  // error. `columns_hint` lists the expected columns for an empty file.
  Status Start(const std::vector<std::string>& required, const std::string& columns_hint) {
    if (!NextLine())
      return Status::Error(source_ + ": empty file, expected a header line naming the columns (" +
                           columns_hint + ")");
    Split();
    header_.clear();
    for (size_t i = 0; i < fields_.size(); ++i) {
      std::string name = Lower(Trim(std::string(fields_[i])));
      if (name.find('"') != std::string::npos)
        return Status::Error(where() + "header: column name " + name +
                             " holds a quote; quoted fields are not supported");
      if (!name.empty() && Column(name) >= 0)
        return Status::Error(where() + "header: column " + name + " appears twice");
      header_.push_back(name);
    }
    std::string missing;
    for (const std::string& want : required) {
      if (ColumnOf(want) < 0) missing += (missing.empty() ? "" : ", ") + want;
    }
    if (!missing.empty())
      return Status::Error(where() + "header: missing column(s) " + missing + " (columns are " +
                           columns_hint + ", in any order)");
    return Status::Ok();
  }

  // The index of column `name` (lower case), or -1.
  int Column(const std::string& name) const {
    for (size_t i = 0; i < header_.size(); ++i)
      if (header_[i] == name) return static_cast<int>(i);
    return -1;
  }
  // The first of the '|'-separated alternatives in `names` that is present.
  int ColumnOf(const std::string& names) const {
    std::istringstream in(names);
    std::string name;
    while (std::getline(in, name, '|'))
      if (Column(name) >= 0) return Column(name);
    return -1;
  }
  const std::string& ColumnName(int col) const { return header_[static_cast<size_t>(col)]; }

  // Moves to the next data line and splits it. False at the end of the text,
  // or with *status set when the line has a quote or the wrong field count.
  bool Next(Status* status) {
    *status = Status::Ok();
    if (!NextLine()) return false;
    Split();
    for (size_t i = 0; i < fields_.size(); ++i) {
      if (fields_[i].find('"') == std::string_view::npos) continue;
      std::string col = i < header_.size() && !header_[i].empty() ? "column " + header_[i]
                                                                   : "field " + std::to_string(i + 1);
      *status = Status::Error(where() + col + ": \"" + std::string(fields_[i]) +
                              "\" holds a quote; quoted fields are not supported");
      return true;
    }
    if (fields_.size() != header_.size())
      *status = Status::Error(where() + std::to_string(fields_.size()) + " fields, but the header has " +
                              std::to_string(header_.size()) + " columns");
    return true;
  }

  std::string where() const { return source_ + ":" + std::to_string(line_no_) + ": "; }
  size_t line_no() const { return line_no_; }
  std::string Field(int col) const { return Trim(std::string(fields_[static_cast<size_t>(col)])); }

  // Field `col` as a whole number in 0..max.
  Status Whole(int col, uint64_t max, uint64_t* out) const {
    std::string f = Field(col);
    std::string prefix = where() + "column " + ColumnName(col) + ": ";
    if (f.empty()) return Status::Error(prefix + "empty, expected a whole number");
    bool negative = f[0] == '-' && f.size() > 1;
    uint64_t v = 0;
    for (size_t i = negative ? 1 : 0; i < f.size(); ++i) {
      char c = f[i];
      if (c < '0' || c > '9') return Status::Error(prefix + "\"" + f + "\" is not a whole number");
      unsigned d = static_cast<unsigned>(c - '0');
      if (v > (max - d) / 10)
        return Status::Error(prefix + "\"" + f + "\" is too large (at most " + std::to_string(max) + ")");
      v = v * 10 + d;
    }
    if (negative && v != 0)
      return Status::Error(prefix + "\"" + f + "\" is negative, expected a whole number >= 0");
    *out = v;
    return Status::Ok();
  }

 private:
  // Advances to the next non-blank line; false at the end.
  bool NextLine() {
    while (pos_ < text_.size()) {
      size_t end = text_.find('\n', pos_);
      if (end == std::string::npos) end = text_.size();
      line_ = std::string_view(text_).substr(pos_, end - pos_);
      if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
      pos_ = end + 1;
      ++line_no_;
      if (line_.find_first_not_of(" \t\r") != std::string_view::npos) return true;
    }
    return false;
  }
  void Split() {
    fields_.clear();
    size_t start = 0;
    while (true) {
      size_t comma = line_.find(',', start);
      fields_.push_back(line_.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }

  const std::string& text_;
  const std::string& source_;
  size_t pos_ = 0;
  size_t line_no_ = 0;
  std::string_view line_;
  std::vector<std::string_view> fields_;
  std::vector<std::string> header_;
};

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMax32 = std::numeric_limits<uint32_t>::max();


}  // namespace

Result<std::vector<TraceNode>> ParseNodeCsv(const std::string& text, const std::string& source) {
  using R = Result<std::vector<TraceNode>>;
  CsvReader csv(text, source);
  Status st = csv.Start({"sn|name", "cpu_milli", "memory_mib", "gpu", "model"},
                        "sn,cpu_milli,memory_mib,gpu,model");
  if (!st.ok()) return R(st);
  const int name = csv.ColumnOf("sn|name"), cpu = csv.Column("cpu_milli"),
            mem = csv.Column("memory_mib"), gpu = csv.Column("gpu"), model = csv.Column("model");
  std::vector<TraceNode> nodes;
  std::unordered_map<std::string, size_t> seen;  // node name -> line
  while (csv.Next(&st)) {
    if (!st.ok()) return R(st);
    TraceNode n;
    n.name = csv.Field(name);
    if (n.name.empty())
      return R::Error(csv.where() + "column " + csv.ColumnName(name) + ": empty, expected a node name");
    auto [it, fresh] = seen.emplace(n.name, csv.line_no());
    if (!fresh)
      return R::Error(csv.where() + "column " + csv.ColumnName(name) + ": node \"" + n.name +
                      "\" already on line " + std::to_string(it->second));
    uint64_t gpus = 0;
    if (!(st = csv.Whole(cpu, kMax64, &n.cpu_milli)).ok() ||
        !(st = csv.Whole(mem, kMax64, &n.memory_mib)).ok() || !(st = csv.Whole(gpu, kMax32, &gpus)).ok())
      return R(st);
    n.gpus = static_cast<uint32_t>(gpus);
    n.model = csv.Field(model);
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) return R::Error(source + ": no nodes after the header line");
  return nodes;
}

Result<std::vector<TraceTask>> ParseTaskCsv(const std::string& text, const std::string& source) {
  using R = Result<std::vector<TraceTask>>;
  CsvReader csv(text, source);
  Status st = csv.Start({"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"},
                        "name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec]");
  if (!st.ok()) return R(st);
  const int name = csv.Column("name"), cpu = csv.Column("cpu_milli"), mem = csv.Column("memory_mib"),
            num = csv.Column("num_gpu"), milli = csv.Column("gpu_milli"), spec = csv.Column("gpu_spec");
  std::vector<TraceTask> tasks;
  while (csv.Next(&st)) {
    if (!st.ok()) return R(st);
    TraceTask t;
    t.name = csv.Field(name);
    if (t.name.empty()) return R::Error(csv.where() + "column name: empty, expected a task name");
    uint64_t num_gpu = 0, gpu_milli = 0;
    if (!(st = csv.Whole(cpu, kMax64, &t.cpu_milli)).ok() ||
        !(st = csv.Whole(mem, kMax64, &t.memory_mib)).ok() || !(st = csv.Whole(num, kMax32, &num_gpu)).ok() ||
        !(st = csv.Whole(milli, kMax32, &gpu_milli)).ok())
      return R(st);
    const std::string at = csv.where() + "column gpu_milli: ";
    const std::string m = std::to_string(gpu_milli), k = std::to_string(num_gpu);
    if (gpu_milli > 1000)
      return R::Error(at + m + " is more than 1000 (gpu_milli is thousandths of one GPU)");
    if (num_gpu == 0 && gpu_milli != 0)
      return R::Error(at + m + " with num_gpu 0: a CPU-only task (num_gpu 0) has gpu_milli 0");
    if (num_gpu >= 1 && gpu_milli == 0)
      return R::Error(at + "0 with num_gpu " + k +
                      ": a GPU task asks for 1..999 milli of one GPU (sharing) or 1000 (whole GPUs)");
    if (num_gpu > 1 && gpu_milli != 1000)
      return R::Error(at + m + " with num_gpu " + k +
                      ": the trace's rules are that GPU-sharing tasks have num_gpu 1 and gpu_milli < 1000,"
                      " and tasks with num_gpu > 1 take whole GPUs (gpu_milli 1000)");
    t.num_gpu = static_cast<uint32_t>(num_gpu);
    t.gpu_milli = static_cast<uint32_t>(gpu_milli);
    if (spec >= 0) {
      std::istringstream in(csv.Field(spec));
      std::string model;
      while (std::getline(in, model, '|'))
        if (!(model = Trim(model)).empty()) t.gpu_spec.push_back(model);
    }
    tasks.push_back(std::move(t));
  }
  if (tasks.empty()) return R::Error(source + ": no tasks after the header line");
  return tasks;
}

Result<std::vector<TraceNode>> ReadNodeCsv(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return Result<std::vector<TraceNode>>(text.status());
  return ParseNodeCsv(*text, path);
}

Result<std::vector<TraceTask>> ReadTaskCsv(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return Result<std::vector<TraceTask>>(text.status());
  return ParseTaskCsv(*text, path);
}

}  // namespace vgpu::sim
