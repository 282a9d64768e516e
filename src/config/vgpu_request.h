// What a job asks of gres/vgpu at submit time, and whether it can ever be
// placed. Slurm hands a job_submit plugin the request as TRES strings
// ("gres:vgpu:ascend:10,gres:gpu:1"), one per form (per node, job, socket,
// task); only the per-node form maps onto shares of devices of one node.
#ifndef VGPU_CONFIG_VGPU_REQUEST_H_
#define VGPU_CONFIG_VGPU_REQUEST_H_

#include <cstdint>
#include <map>
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
// optional k/m/g suffix, default 1. An unreadable vgpu entry is an error,
// and so is a last field that starts like a number but is not a count
// ("-5", "1.5": not a type named so).
Result<std::vector<VgpuAsk>> ParseVgpuTres(const std::string& tres);

// The vgpu counts of a node's Gres= string by lower-case type ("" for
// untyped entries): "vgpu:ascend:800,vgpu:nvidia:400(S:1),gpu:2" gives
// ascend 800, nvidia 400.
std::map<std::string, uint64_t> VgpuCountsOfGres(const std::string& gres);

// What the cluster's nodes offer, from their Gres= strings: the most
// shares one node has of each vgpu type (lower case), and in all.
class VgpuCapacity {
 public:
  // Adds one node's Gres= ("vgpu:ascend:800,vgpu:nvidia:400(S:0),gpu:2").
  void AddNode(const std::string& gres);
  bool empty() const { return most_by_type_.empty() && most_total_ == 0; }
  const std::map<std::string, uint64_t>& most_by_type() const { return most_by_type_; }
  // The most shares of `type` ("": of any type) one node offers; 0: none.
  uint64_t MostOnOneNode(const std::string& type) const;

 private:
  std::map<std::string, uint64_t> most_by_type_;
  uint64_t most_total_ = 0;
};

struct JobTres {
  std::string per_node, per_job, per_socket, per_task;
};

// OK if the job's vgpu request can be placed on some node some day: per
// node only; asked once (one type); at most S shares, or a whole multiple
// of S; a type some node has, and no more shares than one node has of it
// (`nodes`; empty: neither is checked). Else a message for the user that
// names the request and what to ask instead.
Status CheckVgpuSubmission(const JobTres& tres, uint32_t shares_per_device, const VgpuCapacity& nodes);

}  // namespace vgpu

#endif  // VGPU_CONFIG_VGPU_REQUEST_H_
