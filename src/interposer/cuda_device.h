// Which of the job's devices a CUDA call is about, and admitting memory on
// it (cuda_hooks.cc), and graphs.
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

class GraphCharges;
// The process's CUDA graph memory charges (cuda_graph_hooks.cc).
GraphCharges& CudaGraphCharges();
// The id of the stream capture `stream` is in (the per-thread default
// stream's for a null stream when `per_thread`), or 0.
uint64_t CudaCaptureOf(CUstream stream, bool per_thread);
class LaunchPacer;
LaunchPacer& CudaPacer();

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_CUDA_DEVICE_H_
