// HIP fills and device-to-device copies are device work on AMD: clr makes
// hipMemset* and copies between device memory blit kernels on the compute
// units (rocclr's shader copy path), not DMA-engine transfers as CUDA's
// copies are. So they are paced as kernels are, on their stream's device.
// Copies from or to the host go to the DMA engines and are left alone, as
// is hipMemcpyDeviceToDeviceNoCU (the DMA engines by request). A copy of
// kind hipMemcpyDefault may be either: it is paced (telling would cost a
// pointer query on every copy). 3D copies, whose kind sits in a structure
// of a layout that changed between releases, are paced whatever their kind.
#include "enforcer.h"
#include "export.h"
#include "hip_api.h"
#include "hip_device.h"
#include "hooks.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

constexpr Vendor kHip = Vendor::kHip;

bool OnComputeUnits(hipMemcpyKind kind) { return kind == hipMemcpyDeviceToDevice || kind == hipMemcpyDefault; }

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

// `work`: whether this call runs on the compute units; `stream` its stream.
#define VGPU_HIP_COPY(name, params, args, stream, work)      \
  VGPU_HOOK hipError_t name params {                         \
    VGPU_REAL(kHip, name);                                   \
    if (!real) return hipErrorNotInitialized;                \
    if (!(work)) return real args;                           \
    const HipPaced paced = HipPaceBefore(stream);            \
    const hipError_t rc = real args;                         \
    HipPaceAfter(paced, rc, stream);                         \
    return rc;                                               \
  }

// The fills, copies and their per-thread-stream (_spt) twins.
#define VGPU_HIP_COPIES(S)                                                                                      \
  VGPU_HIP_COPY(hipMemset##S, (void* dst, int value, size_t bytes), (dst, value, bytes), nullptr, true)         \
  VGPU_HIP_COPY(hipMemsetAsync##S, (void* dst, int value, size_t bytes, hipStream_t stream),                    \
                (dst, value, bytes, stream), stream, true)                                                      \
  VGPU_HIP_COPY(hipMemset2D##S, (void* dst, size_t pitch, int value, size_t width, size_t height),              \
                (dst, pitch, value, width, height), nullptr, true)                                              \
  VGPU_HIP_COPY(hipMemset2DAsync##S,                                                                            \
                (void* dst, size_t pitch, int value, size_t width, size_t height, hipStream_t stream),          \
                (dst, pitch, value, width, height, stream), stream, true)                                       \
  VGPU_HIP_COPY(hipMemset3D##S, (hipPitchedPtr dst, int value, hipExtent extent), (dst, value, extent),         \
                nullptr, true)                                                                                  \
  VGPU_HIP_COPY(hipMemset3DAsync##S, (hipPitchedPtr dst, int value, hipExtent extent, hipStream_t stream),      \
                (dst, value, extent, stream), stream, true)                                                     \
  VGPU_HIP_COPY(hipMemcpy##S, (void* dst, const void* src, size_t bytes, hipMemcpyKind kind),                   \
                (dst, src, bytes, kind), nullptr, OnComputeUnits(kind))                                         \
  VGPU_HIP_COPY(hipMemcpyAsync##S,                                                                              \
                (void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t stream),             \
                (dst, src, bytes, kind, stream), stream, OnComputeUnits(kind))                                  \
  VGPU_HIP_COPY(hipMemcpy2D##S,                                                                                 \
                (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,         \
                 hipMemcpyKind kind),                                                                           \
                (dst, dpitch, src, spitch, width, height, kind), nullptr, OnComputeUnits(kind))                 \
  VGPU_HIP_COPY(hipMemcpy2DAsync##S,                                                                            \
                (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,         \
                 hipMemcpyKind kind, hipStream_t stream),                                                       \
                (dst, dpitch, src, spitch, width, height, kind, stream), stream, OnComputeUnits(kind))          \
  VGPU_HIP_COPY(hipMemcpy3D##S, (const hipMemcpy3DParms* p), (p), nullptr, true)                                \
  VGPU_HIP_COPY(hipMemcpy3DAsync##S, (const hipMemcpy3DParms* p, hipStream_t stream), (p, stream), stream, true)
VGPU_HIP_COPIES()
VGPU_HIP_COPIES(_spt)

VGPU_HIP_COPY(hipMemsetD8, (hipDeviceptr_t dst, unsigned char value, size_t count), (dst, value, count), nullptr,
              true)
VGPU_HIP_COPY(hipMemsetD8Async, (hipDeviceptr_t dst, unsigned char value, size_t count, hipStream_t stream),
              (dst, value, count, stream), stream, true)
VGPU_HIP_COPY(hipMemsetD16, (hipDeviceptr_t dst, unsigned short value, size_t count), (dst, value, count), nullptr,
              true)
VGPU_HIP_COPY(hipMemsetD16Async, (hipDeviceptr_t dst, unsigned short value, size_t count, hipStream_t stream),
              (dst, value, count, stream), stream, true)
VGPU_HIP_COPY(hipMemsetD32, (hipDeviceptr_t dst, int value, size_t count), (dst, value, count), nullptr, true)
VGPU_HIP_COPY(hipMemsetD32Async, (hipDeviceptr_t dst, int value, size_t count, hipStream_t stream),
              (dst, value, count, stream), stream, true)
VGPU_HIP_COPY(hipMemcpyWithStream,
              (void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t stream),
              (dst, src, bytes, kind, stream), stream, OnComputeUnits(kind))
VGPU_HIP_COPY(hipMemcpyDtoD, (hipDeviceptr_t dst, hipDeviceptr_t src, size_t bytes), (dst, src, bytes), nullptr, true)
VGPU_HIP_COPY(hipMemcpyDtoDAsync, (hipDeviceptr_t dst, hipDeviceptr_t src, size_t bytes, hipStream_t stream),
              (dst, src, bytes, stream), stream, true)
VGPU_HIP_COPY(hipMemcpyPeer, (void* dst, int dst_device, const void* src, int src_device, size_t bytes),
              (dst, dst_device, src, src_device, bytes), nullptr, true)
VGPU_HIP_COPY(hipMemcpyPeerAsync,
              (void* dst, int dst_device, const void* src, int src_device, size_t bytes, hipStream_t stream),
              (dst, dst_device, src, src_device, bytes, stream), stream, true)

namespace vgpu {
namespace interposer {

#define VGPU_HIP_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
#define VGPU_HIP_COPY_ENTRIES(S)                                                                                  \
  VGPU_HIP_ENTRY(hipMemset##S), VGPU_HIP_ENTRY(hipMemsetAsync##S), VGPU_HIP_ENTRY(hipMemset2D##S),                \
      VGPU_HIP_ENTRY(hipMemset2DAsync##S), VGPU_HIP_ENTRY(hipMemset3D##S), VGPU_HIP_ENTRY(hipMemset3DAsync##S),   \
      VGPU_HIP_ENTRY(hipMemcpy##S), VGPU_HIP_ENTRY(hipMemcpyAsync##S), VGPU_HIP_ENTRY(hipMemcpy2D##S),            \
      VGPU_HIP_ENTRY(hipMemcpy2DAsync##S), VGPU_HIP_ENTRY(hipMemcpy3D##S), VGPU_HIP_ENTRY(hipMemcpy3DAsync##S)
const Hook kHipCopyHooks[] = {
    VGPU_HIP_COPY_ENTRIES(),
    VGPU_HIP_COPY_ENTRIES(_spt),
    VGPU_HIP_ENTRY(hipMemsetD8),
    VGPU_HIP_ENTRY(hipMemsetD8Async),
    VGPU_HIP_ENTRY(hipMemsetD16),
    VGPU_HIP_ENTRY(hipMemsetD16Async),
    VGPU_HIP_ENTRY(hipMemsetD32),
    VGPU_HIP_ENTRY(hipMemsetD32Async),
    VGPU_HIP_ENTRY(hipMemcpyWithStream),
    VGPU_HIP_ENTRY(hipMemcpyDtoD),
    VGPU_HIP_ENTRY(hipMemcpyDtoDAsync),
    VGPU_HIP_ENTRY(hipMemcpyPeer),
    VGPU_HIP_ENTRY(hipMemcpyPeerAsync),
};
const size_t kHipCopyHookCount = sizeof(kHipCopyHooks) / sizeof(kHipCopyHooks[0]);

}  // namespace interposer
}  // namespace vgpu
