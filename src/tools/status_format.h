// vgpuctl status's outputs: a table for people, JSON for other tools (the
// stable API, documented in doc/vgpuctl.1), and an SVG map of the pool.
#ifndef VGPU_TOOLS_STATUS_FORMAT_H_
#define VGPU_TOOLS_STATUS_FORMAT_H_

#include <string>

#include "pool_status.h"

namespace vgpu::status {

// The JSON document's "version": raised when a field changes meaning or
// goes away; new fields may appear without it.
constexpr int kJsonVersion = 1;

// Per type: shares, allocated, free, free %, pending; then one line per
// device: node, state, partitions, device, type, model, local CPUs, used,
// free, memory handed out as quotas, jobs (id:user:shares).
std::string FormatTable(const PoolStatus& pool);

// {"version": 1, "shares_per_device": S, "types": [{"type", "shares",
//  "allocated", "free", "pending"}], "pending_untyped": N,
//  "nodes": [{"name", "state", "partitions": [...], "devices": [{"index",
//  "type", "model", "sockets", "cpus", "shares", "allocated", "free",
//  "memory_bytes", "memory_quota_bytes", "jobs": [{"job_id", "user",
//  "shares"}]}]}], "notes": [...]}           (model "" and memory 0: unknown)
std::string FormatJson(const PoolStatus& pool);

// Nodes as rows, devices as cells filled in proportion to their allocated
// shares, one colour per type, with a legend. Well-formed for any pool.
std::string RenderPoolSvg(const PoolStatus& pool);

}  // namespace vgpu::status

#endif  // VGPU_TOOLS_STATUS_FORMAT_H_
