// Pacing AscendCL work on the current device (acl_hooks.cc), for the ACL
// hook files.
#ifndef VGPU_INTERPOSER_ACL_DEVICE_H_
#define VGPU_INTERPOSER_ACL_DEVICE_H_

#include <cstdint>

#include "acl_api.h"

namespace vgpu {
namespace interposer {

// Before work goes on `stream`: waits while the job is over its share of the
// current device; a ticket for AclPaceAfter (0: not measured).
uint64_t AclPaceBefore(aclrtStream stream);
// After: `rc` the runtime's answer (the work is measured if it was queued).
void AclPaceAfter(uint64_t ticket, aclError rc, aclrtStream stream);

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_ACL_DEVICE_H_
