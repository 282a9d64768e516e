// Readers for the CSV files of the Alibaba "openb" GPU-sharing trace
// (cluster-trace-gpu-v2023): the node list and the pod (task) list that
// vgpu-sim replays.
//
// Format contract (both files):
//  * The first non-blank line names the columns. Columns are found by name
//    (case-insensitive, blanks around names ignored), in any order; columns
//    this reader does not use are ignored. A required column that is missing
//    is an error naming every missing one.
//  * Fields are separated by ','; quoting is not supported (the traces have
//    none), so a field holding '"' is an error. Every line has as many fields
//    as the header. Blanks around a field are ignored.
//  * LF or CRLF line endings; blank lines (e.g. a trailing one) are skipped.
//  * Numbers are whole, non-negative decimals.
//  * An empty file, or a header with no data lines, is an error.
// Every error message starts "SOURCE:LINE: " (or "SOURCE: " for the file as a
// whole) and names the column at fault, e.g.
//   pods.csv:12: column gpu_milli: "abc" is not a whole number
// Nothing here throws.
#ifndef VGPU_TOOLS_TRACE_CSV_H_
#define VGPU_TOOLS_TRACE_CSV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu::sim {

// One machine of the node list. Columns: `sn` (or `name`), cpu_milli,
// memory_mib, gpu, model. `model` may be empty (CPU-only nodes). Node names
// must be non-empty and unique within the file.
struct TraceNode {
  std::string name;
  uint64_t cpu_milli = 0;
  uint64_t memory_mib = 0;
  uint32_t gpus = 0;
  std::string model;
};

// One task of the pod list. Columns: name, cpu_milli, memory_mib, num_gpu,
// gpu_milli, and optionally gpu_spec (a file without it constrains nothing).
// The trace's rules, all checked:
//  * num_gpu = 0: CPU-only, gpu_milli = 0;
//  * num_gpu = 1, 1 <= gpu_milli < 1000: shares one GPU (thousandths of it);
//  * num_gpu = k >= 1, gpu_milli = 1000: takes k whole GPUs.
// gpu_spec lists acceptable GPU models separated by '|' (blanks and empty
// items dropped); an empty list means any model.
struct TraceTask {
  std::string name;
  uint64_t cpu_milli = 0;
  uint64_t memory_mib = 0;
  uint32_t num_gpu = 0;
  uint32_t gpu_milli = 0;
  std::vector<std::string> gpu_spec;  // empty = any model
};

// Read and parse a file; `path` is the SOURCE of messages. An unreadable file
// is an error naming the path and the system's reason.
Result<std::vector<TraceNode>> ReadNodeCsv(const std::string& path);
Result<std::vector<TraceTask>> ReadTaskCsv(const std::string& path);

// Parse text already in memory; `source` names it in messages.
Result<std::vector<TraceNode>> ParseNodeCsv(const std::string& text, const std::string& source);
Result<std::vector<TraceTask>> ParseTaskCsv(const std::string& text, const std::string& source);

}  // namespace vgpu::sim

#endif  // VGPU_TOOLS_TRACE_CSV_H_
