/* The part of NVML (nvml.h) the interposer hooks, declared from NVIDIA's
 * public API reference (no NVML header is installable from Debian). */
#ifndef VGPU_INTERPOSER_VENDOR_NVML_API_H_
#define VGPU_INTERPOSER_VENDOR_NVML_API_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef int nvmlReturn_t;
enum { NVML_SUCCESS = 0, NVML_ERROR_NO_PERMISSION = 4 };
typedef struct nvmlDevice_st* nvmlDevice_t;

typedef struct nvmlMemory_st {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
  unsigned int version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory);
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length);

#ifdef __cplusplus
}
#endif

#endif /* VGPU_INTERPOSER_VENDOR_NVML_API_H_ */
