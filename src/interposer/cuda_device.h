// Which of the job's devices a CUDA call is about, and admitting memory on
// it (cuda_hooks.cc).
#ifndef VGPU_INTERPOSER_CUDA_DEVICE_H_
#define VGPU_INTERPOSER_CUDA_DEVICE_H_

#include <cstdint>

#include "accounting.h"
#include "cuda_api.h"
#include "enforcer.h"

namespace vgpu {
namespace interposer {

// The device of the calling thread's current context.
CUresult CurrentDevice(CUdevice* dev);
// The job's account of CUDA device `dev` (matched by UUID), or null when
// it is not one of the job's devices (warned once). Cached per device.
DeviceAccount* AccountOf(Enforcer& e, CUdevice dev);
// Admit (accounting.h) for CUDA: `bytes` on device *dev, or on the current
// context's device when dev is null. CUDA_SUCCESS (go on, *g says what was
// reserved) or what to answer: CUDA_ERROR_OUT_OF_MEMORY, or the context
// error.
CUresult AdmitOnDevice(const CUdevice* dev, uint64_t bytes, Gate* g);

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_CUDA_DEVICE_H_
