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
// The device work on `stream` runs on: the stream's (a stream keeps the
// device it was made on), the current one for the null stream or when the
// runtime cannot say.
int HipStreamDevice(hipStream_t stream);
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
class LaunchPacer;
LaunchPacer& HipPacer();
// Pacing of work on `stream`, by the job's share of the stream's device,
// with that device current while the pacer records (hip_hooks.cc).
struct HipPaced {
  uint64_t ticket;
  int device;  // the device made current, or -1 (the current one)
};
HipPaced HipPaceBefore(hipStream_t stream);
void HipPaceAfter(const HipPaced& paced, hipError_t rc, hipStream_t stream);
// False (with a warning) in a job whose environment turns off clr's
// graph memory pools (HIP_MEM_POOL_USE_VM=0): the runtime then allocates a
// graph's memory when an allocation node is made or a stream-ordered
// allocation captured, not at launch, where it is admitted and charged; so
// such nodes are refused in a job.
bool HipGraphMemoryAtLaunch();

}  // namespace interposer
}  // namespace vgpu

#endif  // VGPU_INTERPOSER_HIP_DEVICE_H_
