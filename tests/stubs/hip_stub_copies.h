/* Part of hip_stub.c's translation unit (included after its launches and
 * hip_stub_more.h's streams): fills and copies. As on AMD hardware, fills
 * and device-to-device copies (and copies of kind hipMemcpyDefault, between
 * peers, and 3D ones) run as blit kernels on their stream's device, here at
 * 1 GB/s: `bytes` take bytes / 1000 microseconds (at least 1); copies from
 * or to the host, and hipMemcpyDeviceToDeviceNoCU, go to the DMA engines
 * and take no device time. No byte is moved. */
#ifndef VGPU_TESTS_HIP_STUB_COPIES_H_
#define VGPU_TESTS_HIP_STUB_COPIES_H_

/* Device work of `bytes` on `stream`, as a blit kernel. */
static hipError_t blit(hipStream_t stream, size_t bytes) {
  uint64_t us = bytes / 1000 ? bytes / 1000 : 1;
  TRY(api_ready());
  if (us > MAX_US) us = MAX_US;
  return LAUNCH_ON(stream, accel_launch((const void*)(uintptr_t)((TAG_FUNC << TAG_SHIFT) | us), TAG_FUNC,
                                        hipErrorInvalidValue));
}
static hipError_t copy(hipStream_t stream, size_t bytes, hipMemcpyKind kind) {
  if (kind == hipMemcpyDeviceToDevice || kind == hipMemcpyDefault) return blit(stream, bytes);
  return api_ready();
}

#define STUB_COPIES(S)                                                                                          \
  hipError_t hipMemset##S(void* dst, int value, size_t bytes) { return blit(NULL, bytes); }                     \
  hipError_t hipMemsetAsync##S(void* dst, int value, size_t bytes, hipStream_t stream) {                        \
    return blit(stream, bytes);                                                                                 \
  }                                                                                                             \
  hipError_t hipMemset2D##S(void* dst, size_t pitch, int value, size_t width, size_t height) {                  \
    return blit(NULL, width * height);                                                                          \
  }                                                                                                             \
  hipError_t hipMemset2DAsync##S(void* dst, size_t pitch, int value, size_t width, size_t height,              \
                                 hipStream_t stream) {                                                          \
    return blit(stream, width * height);                                                                        \
  }                                                                                                             \
  hipError_t hipMemset3D##S(hipPitchedPtr dst, int value, hipExtent e) {                                        \
    return blit(NULL, e.width * e.height * e.depth);                                                            \
  }                                                                                                             \
  hipError_t hipMemset3DAsync##S(hipPitchedPtr dst, int value, hipExtent e, hipStream_t stream) {               \
    return blit(stream, e.width * e.height * e.depth);                                                          \
  }                                                                                                             \
  hipError_t hipMemcpy##S(void* dst, const void* src, size_t bytes, hipMemcpyKind kind) {                       \
    return copy(NULL, bytes, kind);                                                                             \
  }                                                                                                             \
  hipError_t hipMemcpyAsync##S(void* dst, const void* src, size_t bytes, hipMemcpyKind kind,                    \
                               hipStream_t stream) {                                                            \
    return copy(stream, bytes, kind);                                                                           \
  }                                                                                                             \
  hipError_t hipMemcpy2D##S(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,             \
                            size_t height, hipMemcpyKind kind) {                                                \
    return copy(NULL, width * height, kind);                                                                    \
  }                                                                                                             \
  hipError_t hipMemcpy2DAsync##S(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,        \
                                 size_t height, hipMemcpyKind kind, hipStream_t stream) {                       \
    return copy(stream, width * height, kind);                                                                  \
  }                                                                                                             \
  hipError_t hipMemcpy3D##S(const hipMemcpy3DParms* p) { return blit(NULL, 1000); }                             \
  hipError_t hipMemcpy3DAsync##S(const hipMemcpy3DParms* p, hipStream_t stream) { return blit(stream, 1000); }
STUB_COPIES()
STUB_COPIES(_spt)
#undef STUB_COPIES

hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char value, size_t count) { return blit(NULL, count); }
hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count, hipStream_t stream) {
  return blit(stream, count);
}
hipError_t hipMemsetD16(hipDeviceptr_t dst, unsigned short value, size_t count) { return blit(NULL, 2 * count); }
hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short value, size_t count, hipStream_t stream) {
  return blit(stream, 2 * count);
}
hipError_t hipMemsetD32(hipDeviceptr_t dst, int value, size_t count) { return blit(NULL, 4 * count); }
hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream) {
  return blit(stream, 4 * count);
}
hipError_t hipMemcpyWithStream(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t stream) {
  return copy(stream, bytes, kind);
}
hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t bytes) { return blit(NULL, bytes); }
hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t bytes, hipStream_t stream) {
  return blit(stream, bytes);
}
hipError_t hipMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t bytes) {
  return blit(NULL, bytes);
}
hipError_t hipMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                              hipStream_t stream) {
  return blit(stream, bytes);
}

#endif /* VGPU_TESTS_HIP_STUB_COPIES_H_ */
