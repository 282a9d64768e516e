// What a job asks of gres/vgpu at submit time, and whether it can ever be
// placed. Slurm hands a job_submit plugin the request as TRES strings
// ("gres:vgpu:ascend:10,gres:gpu:1"), one per form (per node, job, socket,
// task); only the per-node form maps onto shares of devices of one node.
#ifndef VGPU_CONFIG_VGPU_REQUEST_H_
#define VGPU_CONFIG_VGPU_REQUEST_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "util/status.h"

namespace vgpu {

struct VgpuAsk {
  std::string type;  // "" = any type
  uint64_t count = 0;
};

// The vgpu entries of a TRES string; other TRES are skipped. Entries look
// like "gres:vgpu[:type][:count]" ("gres/" also accepted), count with an
// optional k/m/g suffix, default 1. An unreadable vgpu entry is an error.
Result<std::vector<VgpuAsk>> ParseVgpuTres(const std::string& tres);

// The vgpu types a node's Gres= string offers ("vgpu:ascend:800,gpu:2").
std::vector<std::string> VgpuTypesOfGres(const std::string& gres);

struct JobTres {
  std::string per_node, per_job, per_socket, per_task;
};

// OK if the job's vgpu requests can be placed on some node some day: per
// node only; at most S shares, or a whole multiple of S; a type some node
// has (`known_types`, lower case; empty set = do not check types). Else a
// message for the user that names the request and what to ask instead.
Status CheckVgpuSubmission(const JobTres& tres, uint32_t shares_per_device,
                           const std::set<std::string>& known_types);

}  // namespace vgpu

#endif  // VGPU_CONFIG_VGPU_REQUEST_H_
