#include "accounting.h"

namespace vgpu {
namespace interposer {

bool JobMemory(DeviceAccount* account, uint64_t* free_bytes, uint64_t* total_bytes) {
  Enforcer& e = Enforcer::Get();
  if (!e.active()) return false;
  // Not one of the job's devices: nothing of it is the job's.
  const uint64_t limit = account ? account->held_to().memory_bytes : 0;
  const uint64_t used = account ? e.Used(account) : 0;
  const uint64_t left = limit > used ? limit - used : 0;
  if (total_bytes) *total_bytes = limit;
  if (free_bytes && *free_bytes > left) *free_bytes = left;
  return true;
}

}  // namespace interposer
}  // namespace vgpu
