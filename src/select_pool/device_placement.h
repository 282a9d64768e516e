// Moves a starting job's vgpu share bits onto devices: cons_tres picks the
// nodes and some free bits on each; this picks, per node, the device(s) the
// placement engine chooses and rewrites the node's gres_bit_select to free
// bits of those devices. The bits are then the job's allocation, saved,
// restored, sent to the node and released by Slurm itself: nothing is kept
// here.
#ifndef VGPU_SELECT_POOL_DEVICE_PLACEMENT_H_
#define VGPU_SELECT_POOL_DEVICE_PLACEMENT_H_

extern "C" {
#include "config.h"
#include "slurm/slurm.h"
#include "src/slurmctld/slurmctld.h"
}

namespace vgpu {
namespace select_pool {

// Called from select_p_job_begin, before Slurm copies the selected bits into
// the allocation. SLURM_SUCCESS, or an error when some node's share of the
// job fits on no device (the job then stays pending, nothing is changed).
int PlaceOnDevices(job_record_t* job);

// Clears from `candidates` the nodes where some vgpu request of `job` fits
// on no device: with what is free now (`run_now`), or even with every device
// free (will-run and test-only). Returns how many were cleared. Nodes whose
// device layout is not known yet are left to cons_tres.
int FilterNodes(job_record_t* job, bitstr_t* candidates, bool run_now);

}  // namespace select_pool
}  // namespace vgpu

#endif  // VGPU_SELECT_POOL_DEVICE_PLACEMENT_H_
