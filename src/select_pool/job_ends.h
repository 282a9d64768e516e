// Will-run on one node: when a request fits its devices as the jobs running
// there end. slurmctld's own answer (backfill, --test-only, squeue --start)
// counts free GRES bits per node, so a node with 60+30 free shares "fits"
// 80, and a sliced device with 30 free bits in two slots "fits" a 20-share
// job that needs a 2-slot slice.
#ifndef VGPU_SELECT_POOL_JOB_ENDS_H_
#define VGPU_SELECT_POOL_JOB_ENDS_H_

#include <ctime>
#include <vector>

#include "node_view.h"

namespace vgpu {
namespace select_pool {

// What one running job holds on the node's devices until it ends.
struct HeldUntil {
  time_t end = 0;
  std::vector<uint32_t> shares;  // per device
  std::vector<SlotMask> slots;   // per device; 0 on devices counted in shares
};

// The running and suspended jobs on node table index `n` (slurmctld's job
// list; none elsewhere).
std::vector<HeldUntil> RunningHolds(int n, const VgpuDevices& devs);

// `now` if `req` fits `devs` now, else the first end of a job in `held`
// after which it fits, or -1 if it fits not even when all have ended.
// Sliced devices are judged by their free positions, the rest by shares.
int64_t EarliestFitAsJobsEnd(const node_record_t* node, const VgpuDevices& devs, const Request& req,
                             const std::vector<HeldUntil>& held, int64_t now);

}  // namespace select_pool
}  // namespace vgpu

#endif  // VGPU_SELECT_POOL_JOB_ENDS_H_
