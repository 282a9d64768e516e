// Slurm's per-type allocation counts of vgpu, kept equal to the share bits.
//
// Besides the bitmap of allocated bits, Slurm keeps per node and GRES type
// a count of what is allocated (gres_node_state_t.type_cnt_alloc); typed
// requests are checked against it and AllocTRES shows it. Slurm 22.05 does
// not save a node's GRES topology (gres.c:4187-4235, gres_node_state_pack),
// so a restarted slurmctld re-adds running jobs before it knows which bits
// are of which type, and then sets each type's count to one job's total
// instead of adding (_set_node_type_cnt, gres_ctld.c:873-901): two untyped
// jobs on one type count as one, the second release underflows ("gres
// count underflow"), and AllocTRES is wrong until the jobs end. Any GRES
// with types has this on 22.05 (gres/gpu with plain cons_tres too; see
// doc/admin-guide.md). 23.11 and later save the topology (23.11
// interfaces/gres.c:4627-4637) and keep the counts right.
//
// For vgpu the allocated bits are exact: every share is a bit and every
// device a topology record of one type. So the counts are recomputed from
// the bits, at the points where Slurm reads or changes them; on releases
// without the fault this finds nothing to change.
#ifndef VGPU_SELECT_POOL_TYPE_COUNTS_H_
#define VGPU_SELECT_POOL_TYPE_COUNTS_H_

#include "compat/slurm_internal.h"

namespace vgpu {
namespace select_pool {

// Sets the node's vgpu per-type and per-device allocated counts to what its
// allocated bits say. A node whose devices are not known yet (slurmctld
// restarted, the node has not registered since) is left alone. Returns
// true when a count was wrong (and logs it once per call).
bool CorrectVgpuTypeCounts(node_record_t* node);

// Every node of the job's allocation; the job's nodes, or none.
bool CorrectVgpuTypeCounts(const job_record_t* job);

// Every node of the node table.
bool CorrectAllVgpuTypeCounts();

}  // namespace select_pool
}  // namespace vgpu

#endif  // VGPU_SELECT_POOL_TYPE_COUNTS_H_
