// Admitting memory and pacing work on the current AscendCL device
// (acl_hooks.cc), for the ACL hook files.
#ifndef VGPU_INTERPOSER_ACL_DEVICE_H_
#define VGPU_INTERPOSER_ACL_DEVICE_H_

#include <cstdint>

#include "accounting.h"
#include "acl_api.h"
#include "export.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {

// Admit (accounting.h) on the current device: ACL_SUCCESS (go on, *g says
// what was reserved) or ACL_ERROR_RT_MEMORY_ALLOCATION.
aclError AclAdmitHere(uint64_t bytes, Gate* g);
// Before work goes on `stream`: waits while the job is over its share of the
// current device; a ticket for AclPaceAfter (0: not measured).
uint64_t AclPaceBefore(aclrtStream stream);
// After: `rc` the runtime's answer (the work is measured if it was queued).
void AclPaceAfter(uint64_t ticket, aclError rc, aclrtStream stream);

// Whether the calling thread is inside a paced aclnn operator
// (aclnn_hooks.cc). The operator library of CANN 8.5 queues its kernels
// through the public, hooked launch calls; the operator's own pacing and
// measurement covers them, so those hooks must not pace them again.
bool AclInsideOperator();

// The pacer of AscendCL's events (acl_hooks.cc): model-RI captures are told
// to it (acl_work_hooks.cc).
class LaunchPacer;
LaunchPacer& AclPacer();

}  // namespace interposer
}  // namespace vgpu

// The hook `name` of work that goes on `stream`: paced like a CUDA launch,
// except inside a paced operator.
#define VGPU_ACL_WORK(name, params, args, stream)                                   \
  VGPU_HOOK aclError name params {                                                  \
    VGPU_REAL(::vgpu::interposer::Vendor::kAcl, name);                              \
    if (!real) return ACL_ERROR_UNINITIALIZE;                                       \
    const uint64_t ticket =                                                         \
        ::vgpu::interposer::AclInsideOperator() ? 0 : ::vgpu::interposer::AclPaceBefore(stream); \
    const aclError rc = real args;                                                  \
    ::vgpu::interposer::AclPaceAfter(ticket, rc, stream);                           \
    return rc;                                                                      \
  }

#endif  // VGPU_INTERPOSER_ACL_DEVICE_H_
