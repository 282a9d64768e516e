// Fuzzes the readers of the trace CSV files vgpu-sim replays
// (tools/trace_csv.h): vgpu::sim::ParseNodeCsv and vgpu::sim::ParseTaskCsv,
// both on each input.
//
// Asserts, besides no crash, sanitizer report or escaping exception:
// - errors name the file ("nodes.csv: ..." or "nodes.csv:LINE: ...");
// - nodes that parse have non-empty, unique names; tasks follow the
//   trace's rules (num_gpu 0 with gpu_milli 0, num_gpu 1 with 1..1000, more
//   GPUs with 1000) and have non-empty names and gpu_spec items;
// - written back as CSV, each list parses to the same values.
#include <set>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "tools/trace_csv.h"

namespace {

using vgpu::sim::TraceNode;
using vgpu::sim::TraceTask;

void CheckNodes(const std::string& text) {
  auto nodes = vgpu::sim::ParseNodeCsv(text, "nodes.csv");
  if (!nodes.ok()) {
    FUZZ_CHECK(nodes.message().rfind("nodes.csv:", 0) == 0, nodes.message());
    return;
  }
  FUZZ_CHECK(!nodes->empty(), "no nodes, no error");
  std::set<std::string> names;
  std::string csv = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (const TraceNode& n : *nodes) {
    FUZZ_CHECK(!n.name.empty() && names.insert(n.name).second, "node name \"" + n.name + "\"");
    csv += n.name + "," + std::to_string(n.cpu_milli) + "," + std::to_string(n.memory_mib) + "," +
           std::to_string(n.gpus) + "," + n.model + "\n";
  }
  auto again = vgpu::sim::ParseNodeCsv(csv, "written.csv");
  FUZZ_CHECK(again.ok() && again->size() == nodes->size(), "written back: " + again.message() + "\n" + csv);
  for (size_t i = 0; i < nodes->size(); ++i) {
    const TraceNode &a = (*nodes)[i], &b = (*again)[i];
    FUZZ_CHECK(a.name == b.name && a.cpu_milli == b.cpu_milli && a.memory_mib == b.memory_mib && a.gpus == b.gpus &&
                   a.model == b.model,
               "node " + a.name + " changes when written back");
  }
}

void CheckTasks(const std::string& text) {
  auto tasks = vgpu::sim::ParseTaskCsv(text, "pods.csv");
  if (!tasks.ok()) {
    FUZZ_CHECK(tasks.message().rfind("pods.csv:", 0) == 0, tasks.message());
    return;
  }
  FUZZ_CHECK(!tasks->empty(), "no tasks, no error");
  std::string csv = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
  for (const TraceTask& t : *tasks) {
    FUZZ_CHECK(!t.name.empty(), "a task without a name");
    FUZZ_CHECK(t.num_gpu == 0 ? t.gpu_milli == 0
                              : t.num_gpu == 1 ? t.gpu_milli >= 1 && t.gpu_milli <= 1000 : t.gpu_milli == 1000,
               t.name + ": num_gpu " + std::to_string(t.num_gpu) + ", gpu_milli " + std::to_string(t.gpu_milli));
    std::string spec;
    for (const std::string& m : t.gpu_spec) {
      FUZZ_CHECK(!m.empty(), t.name + ": an empty gpu_spec item");
      spec += (spec.empty() ? "" : "|") + m;
    }
    csv += t.name + "," + std::to_string(t.cpu_milli) + "," + std::to_string(t.memory_mib) + "," +
           std::to_string(t.num_gpu) + "," + std::to_string(t.gpu_milli) + "," + spec + "\n";
  }
  auto again = vgpu::sim::ParseTaskCsv(csv, "written.csv");
  FUZZ_CHECK(again.ok() && again->size() == tasks->size(), "written back: " + again.message() + "\n" + csv);
  for (size_t i = 0; i < tasks->size(); ++i) {
    const TraceTask &a = (*tasks)[i], &b = (*again)[i];
    FUZZ_CHECK(a.name == b.name && a.cpu_milli == b.cpu_milli && a.memory_mib == b.memory_mib &&
                   a.num_gpu == b.num_gpu && a.gpu_milli == b.gpu_milli && a.gpu_spec == b.gpu_spec,
               "task " + a.name + " changes when written back");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::Run([&] {
    const std::string text = fuzz::Text(data, size);
    CheckNodes(text);
    CheckTasks(text);
  });
}
