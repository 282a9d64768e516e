// Which of the job's devices a HIP call is about, and admitting memory on
// it (hip_hooks.cc), and graphs, for the HIP hook files.
#ifndef VGPU_INTERPOSER_HIP_DEVICE_H_
#define VGPU_INTERPOSER_HIP_DEVICE_H_

#include <cstdint>

#include "accounting.h"
#include "enforcer.h"
#include "hip_api.h"

namespace vgpu {
namespace interposer {

// The calling thread's current HIP device, or -1.
int HipCurrentDevice();
// The job's account of HIP device `dev`, matched by PCI bus id; null when it
// is not one of the job's devices (warned once).
DeviceAccount* HipAccountOf(int dev);
// Admit (accounting.h) for HIP, on device `dev`: hipSuccess (go on) or
// hipErrorOutOfMemory.
hipError_t HipAdmitOn(int dev, uint64_t bytes, Gate* g);
inline hipError_t HipAdmitHere(uint64_t bytes, Gate* g) { return HipAdmitOn(HipCurrentDevice(), bytes, g); }

class GraphCharges;
// The process's HIP graph memory charges (hip_graph_hooks.cc).
GraphCharges& HipGraphCharges();
// The id of the stream capture `stream` is in, or 0.
uint64_t HipCaptureOf(hipStream_t stream, bool per_thread);

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_HIP_DEVICE_H_
