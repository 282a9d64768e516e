// Fuzzes what vgpuctl status reads from Slurm's commands
// (tools/pool_status.h): the input as Slurm's node list and as its job
// list (each beside a fixed, valid other), and as a GRES string, a
// hostlist and an array task string.
//
// Asserts, besides no crash, sanitizer report or escaping exception:
// - a device's free shares never exceed its shares, and its jobs' shares
//   never exceed its bits;
// - a type's free shares never exceed its shares;
// - every node has devices (nodes without vgpu are left out);
// - an error has a message.
#include <string>

#include "fuzz_common.h"
#include "tools/pool_status.h"

namespace {

const char kNodes[] =
    R"js({"nodes": [{"name": "n2", "state": "mixed", "partitions": ["debug"],)js"
    R"js( "gres": "vgpu:nvidia:400,vgpu:dcu:400(S:0)", "gres_used": "vgpu:dcu:30(IDX:400-429)"}]})js";
const char kJobs[] =
    R"js({"jobs": [{"job_id": 7, "user_name": "alice", "job_state": "RUNNING", "nodes": "n2",)js"
    R"js( "gres_detail": ["vgpu:dcu:30(IDX:400-429)"]}]})js";

void Check(const vgpu::Result<vgpu::status::PoolStatus>& pool) {
  if (!pool.ok()) {
    FUZZ_CHECK(!pool.message().empty(), "an error without a message");
    return;
  }
  for (const auto& t : pool->types) FUZZ_CHECK(t.free() <= t.shares, "type " + t.type + ": free > shares");
  for (const auto& n : pool->nodes) {
    FUZZ_CHECK(!n.devices.empty(), n.name + ": a node without devices");
    for (const auto& d : n.devices) {
      FUZZ_CHECK(d.free() <= d.shares, n.name + ": free > shares");
      for (const auto& j : d.jobs) FUZZ_CHECK(j.shares <= 1u << 16, n.name + ": a job with more shares than bits");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::Run([&] {
    const std::string text = fuzz::Text(data, size);
    Check(vgpu::status::ReadPool(text, kJobs, 100, {}));
    Check(vgpu::status::ReadPool(kNodes, text, 100, {}));
    for (const auto& g : vgpu::status::ParseGres(text)) FUZZ_CHECK(g.bits.size() <= 1u << 16, "bits");
    FUZZ_CHECK(vgpu::status::ExpandHostlist(text).size() <= 1u << 20, "hosts");
    FUZZ_CHECK(vgpu::status::ArrayTaskCount(text) >= 1, "tasks");
  });
}
