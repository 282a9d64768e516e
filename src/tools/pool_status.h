// vgpuctl status's data: the pool as slurmctld holds it, device by device.
//
// Read from what Slurm's commands print with --json (nodes: `scontrol
// --json show nodes`, or `sinfo --json` on 22.05, which has no scontrol
// --json; jobs: `squeue --json`). Per node its "gres" ("vgpu:nvidia:400,
// vgpu:dcu:400(S:0)"), "gres_used" ("vgpu:dcu:60(IDX:400-459)"), state
// and partitions; per job its state, user, node list, "gres_detail" (per
// node, "vgpu:dcu:60(IDX:400-459)"), tres_per_node and task count.
//
// The device layout is gres/vgpu's own: a node's share bits are its
// devices in turn, SharesPerDevice bits each, the types in the order of the
// node's Gres= (Slurm keeps gres.conf's order), so bit b is device b / S.
#ifndef VGPU_TOOLS_POOL_STATUS_H_
#define VGPU_TOOLS_POOL_STATUS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu::status {

// One job's part of one device.
struct DeviceJob {
  uint64_t job_id = 0;
  std::string user;
  uint32_t shares = 0;
};

struct DeviceStatus {
  uint32_t index = 0;          // on its node, in bit order
  std::string type;            // the Type= of its gres.conf line ("" untyped)
  std::string model;           // chip catalog id, "" when the type names several
  std::string sockets;         // Slurm's socket affinity of its type, "" when none
  std::string cpus;            // CPUs local to it (an inventory tells), "" when unknown
  uint32_t shares = 0;         // SharesPerDevice
  uint32_t allocated = 0;      // bits slurmctld has allocated
  uint64_t memory_bytes = 0;   // the model's memory, 0 when unknown
  std::vector<DeviceJob> jobs;
  uint32_t free() const { return allocated >= shares ? 0 : shares - allocated; }
  // Device memory handed out as quotas: allocated x memory / shares.
  uint64_t memory_quota() const;
};

struct NodeStatus {
  std::string name;
  std::string state;                    // lower case, flags joined by '+'
  std::string reason;                   // why it is drained or down ("" when none)
  std::vector<std::string> partitions;
  std::vector<DeviceStatus> devices;
};

struct TypeStatus {
  std::string type;
  uint64_t shares = 0, allocated = 0;
  uint64_t pending = 0;  // shares pending jobs ask of this type
  uint64_t free() const { return allocated >= shares ? 0 : shares - allocated; }
};

struct PoolStatus {
  uint32_t shares_per_device = 0;
  std::vector<TypeStatus> types;   // by name
  uint64_t pending_untyped = 0;    // shares pending jobs ask of any type
  std::vector<NodeStatus> nodes;   // by name, only nodes with vgpu
  std::vector<std::string> notes;  // what did not add up (a count not a multiple of S, ...)
};

// Type -> (catalog model id, device memory in bytes); a type missing has no
// known model.
using ModelTable = std::map<std::string, std::pair<std::string, uint64_t>>;

// The pool from the two documents' text. Errors name the document and
// what is wrong with it (not JSON, no "nodes" or "jobs" array, Slurm's own
// "errors").
Result<PoolStatus> ReadPool(const std::string& nodes_json, const std::string& jobs_json,
                            uint32_t shares_per_device, const ModelTable& models);

// Pieces, exposed for the tests.
struct GresEntry {
  std::string name, type;     // "vgpu", "ascend"
  uint64_t count = 0;
  std::string sockets;        // "0-1" of "(S:0-1)"
  std::vector<uint64_t> bits; // of "(IDX:0-9,20-29)"
};
// A Gres=, GresUsed or gres_detail string: entries separated by commas
// outside parentheses. Malformed entries are skipped.
std::vector<GresEntry> ParseGres(const std::string& text);
// Slurm's hostlist syntax ("n[1-3,7],gpu05") as names, in order.
std::vector<std::string> ExpandHostlist(const std::string& text);
// The number of tasks of an array task string ("0-99%5", "1,3,5-7");
// 1 when empty.
uint64_t ArrayTaskCount(const std::string& text);

}  // namespace vgpu::status

#endif  // VGPU_TOOLS_POOL_STATUS_H_
