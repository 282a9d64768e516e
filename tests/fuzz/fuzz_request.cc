// Fuzzes the --gres=vgpu request syntax (config/vgpu_request.h):
// vgpu::ParseVgpuTres, vgpu::VgpuCapacity::AddNode and
// vgpu::CheckVgpuSubmission. The input is lines:
//   [S=<shares per device>]    optional first line; 1..1024, default 100
//   <TRES per node>            e.g. gres:vgpu:ascend:10
//   <TRES per job>
//   <TRES per socket>
//   <TRES per task>
//   <Gres= of a node>...       one line per node, e.g. vgpu:ascend:800(S:0)
//
// Asserts, besides no crash, sanitizer report or escaping exception:
// - a TRES string that parses gives at most one ask per ',' item, each with
//   a type free of ':' and ',';
// - the capacity's types are lower case and non-empty;
// - a refusal starts "vgpu: "; an accepted job asks nothing per job, socket
//   or task, asks at most once per node, and asks S shares or fewer or a
//   whole number of devices (a multiple of S), no more than the most one
//   node offers of its type when nodes are known.
#include <algorithm>
#include <string>
#include <vector>

#include "config/vgpu_request.h"
#include "fuzz_common.h"
#include "util/text.h"

namespace {

void CheckTres(const std::string& tres) {
  auto asks = vgpu::ParseVgpuTres(tres);
  if (!asks.ok()) {
    FUZZ_CHECK(!asks.message().empty(), tres);
    return;
  }
  FUZZ_CHECK(asks->size() <= static_cast<size_t>(std::count(tres.begin(), tres.end(), ',')) + 1, tres);
  for (const vgpu::VgpuAsk& a : *asks) FUZZ_CHECK(a.type.find_first_of(":,") == std::string::npos, a.type);
}

void CheckSubmission(const vgpu::JobTres& tres, uint32_t s, const vgpu::VgpuCapacity& nodes) {
  vgpu::Status status = vgpu::CheckVgpuSubmission(tres, s, nodes);
  if (!status.ok()) {
    FUZZ_CHECK(status.message().rfind("vgpu: ", 0) == 0, status.message());
    return;
  }
  for (const std::string* other : {&tres.per_job, &tres.per_socket, &tres.per_task}) {
    auto asks = vgpu::ParseVgpuTres(*other);
    FUZZ_CHECK(asks.ok() && asks->empty(), "accepted with vgpu asked other than per node: " + *other);
  }
  auto asks = vgpu::ParseVgpuTres(tres.per_node);
  FUZZ_CHECK(asks.ok() && asks->size() <= 1, "accepted: " + tres.per_node);
  for (const vgpu::VgpuAsk& a : *asks) {
    FUZZ_CHECK(a.count <= s || a.count % s == 0, "accepted part of a device beyond one: " + tres.per_node);
    if (nodes.empty()) continue;
    const bool known = a.type.empty() || nodes.most_by_type().count(vgpu::Lower(a.type)) > 0;
    FUZZ_CHECK(known || nodes.most_by_type().empty(), "accepted a type no node has: " + tres.per_node);
    if (known) FUZZ_CHECK(a.count <= nodes.MostOnOneNode(a.type), "accepted more than a node has: " + tres.per_node);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::Run([&] {
    std::vector<std::string> lines = fuzz::Lines(fuzz::Text(data, size));
    uint32_t s = 100;
    if (!lines.empty() && lines[0].rfind("S=", 0) == 0) {
      uint64_t v = 0;
      if (vgpu::ParseU64(lines[0].substr(2), 1024, &v) && v >= 1) s = static_cast<uint32_t>(v);
      lines.erase(lines.begin());
    }
    lines.resize(std::max<size_t>(lines.size(), 4));
    vgpu::JobTres tres{lines[0], lines[1], lines[2], lines[3]};
    for (size_t i = 0; i < 4; ++i) CheckTres(lines[i]);

    vgpu::VgpuCapacity nodes;
    for (size_t i = 4; i < lines.size(); ++i) nodes.AddNode(lines[i]);
    for (const auto& [type, most] : nodes.most_by_type())
      FUZZ_CHECK(!type.empty() && type == vgpu::Lower(type), "capacity type \"" + type + "\"");

    CheckSubmission(tres, s, nodes);
    CheckSubmission(tres, s, vgpu::VgpuCapacity());
  });
}
