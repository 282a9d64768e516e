/* Internal to the stub NVML (nvml_stub.c: devices; nvml_stub_mig.c: MIG),
 * both linked into stubs/libnvidia-ml.so.1. The helpers are hidden: the
 * library exports NVML's names only (and vgpu_stub_nvml_init_depth). */
#ifndef VGPU_TESTS_NVML_STUB_H_
#define VGPU_TESTS_NVML_STUB_H_

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stub_devices.h"

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_IN_USE 19
#define NVML_ERROR_INSUFFICIENT_RESOURCES 23
#define NVML_ERROR_UNKNOWN 999

#define STUB_HIDDEN __attribute__((visibility("hidden")))

/* nvmlInit_v2 calls not yet matched by nvmlShutdown. */
int vgpu_stub_nvml_init_depth(void);
/* The injected result for `fn`, or NVML_SUCCESS to go on. */
STUB_HIDDEN nvmlReturn_t injected(const char* fn);
/* The record of GPU handle `dev` (NULL before nvmlInit_v2 or for any other
 * handle). `all` receives the parsed list, *index the GPU's index. */
STUB_HIDDEN const stub_record* lookup(nvmlDevice_t dev, stub_record* all, int* index);
STUB_HIDDEN nvmlReturn_t copy_string(const char* s, char* out, unsigned int length);
/* The UUID GPU `i` (record `r`) reports: its uuid field, else "GPU-stub-<i>"
 * (written into `fallback`). */
STUB_HIDDEN const char* device_uuid(const stub_record* r, int i, char fallback[32]);
/* nvmlDeviceGetUUID of a handle that is no GPU: a MIG device's UUID. */
STUB_HIDDEN nvmlReturn_t mig_device_uuid(nvmlDevice_t device, char* uuid, unsigned int length);

#endif /* VGPU_TESTS_NVML_STUB_H_ */
