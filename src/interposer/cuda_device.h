// Which of the job's devices a CUDA call is about (cuda_hooks.cc).
#ifndef VGPU_INTERPOSER_CUDA_DEVICE_H_
#define VGPU_INTERPOSER_CUDA_DEVICE_H_

#include "cuda_api.h"
#include "enforcer.h"

namespace vgpu {
namespace interposer {

// The device of the calling thread's current context.
CUresult CurrentDevice(CUdevice* dev);
// The job's account of CUDA device `dev` (matched by UUID), or null when
// it is not one of the job's devices (warned once). Cached per device.
DeviceAccount* AccountOf(Enforcer& e, CUdevice dev);

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_CUDA_DEVICE_H_
