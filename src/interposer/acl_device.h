// Admitting memory and pacing work on the current AscendCL device
// (acl_hooks.cc), for the ACL hook files.
#ifndef VGPU_INTERPOSER_ACL_DEVICE_H_
#define VGPU_INTERPOSER_ACL_DEVICE_H_

#include <cstdint>

#include "accounting.h"
#include "acl_api.h"

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

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_ACL_DEVICE_H_
