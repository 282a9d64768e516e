/* Stub NVML (built as stubs/libnvidia-ml.so.1, with nvml_stub_mig.c) for the
 * discovery and hardware slice tests.
 *
 * Environment, read on every call:
 *   VGPU_STUB_NVML_DEVICES   "<name>,<minor>,<memory_bytes>,<pci_bus_id>[,<uuid>];..."
 *       e.g. "NVIDIA H100 80GB HBM3,0,85899345920,0000:1b:00.0,GPU-aaaa;..."
 *       The bus id is reported NVML-style ("00000000:1B:00.0"). Without a
 *       uuid, device i reports "GPU-stub-<i>".
 *   VGPU_STUB_NVML_FAIL         functions that return NVML_ERROR_UNKNOWN (999)
 *   VGPU_STUB_NVML_UNSUPPORTED  functions that return NVML_ERROR_NOT_SUPPORTED (3)
 *   VGPU_STUB_NVML_STALL        functions that sleep 120 s first (a test kills
 *       the caller meanwhile, as if it died half way)
 *       e.g. VGPU_STUB_NVML_FAIL=nvmlDeviceGetName
 *
 *   VGPU_STUB_NVML_MIG_STATE, VGPU_STUB_NVML_MIG_MODE: simulated MIG, see
 *       nvml_stub_mig.c.
 *
 * Extra export for tests: vgpu_stub_nvml_init_depth(): nvmlInit_v2 calls not
 * yet matched by nvmlShutdown.
 *
 * Signatures follow the NVML API reference (nvml.h); nvmlReturn_t is an
 * int-sized enum, handles are opaque pointers (here: index + 1 for a GPU).
 */
#include "nvml_stub.h"

#include <unistd.h>

typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

static int init_depth = 0;

int vgpu_stub_nvml_init_depth(void) { return init_depth; }

nvmlReturn_t injected(const char* fn) {
  if (stub_listed("VGPU_STUB_NVML_STALL", fn)) sleep(120);  /* until the test kills the caller */
  if (stub_listed("VGPU_STUB_NVML_FAIL", fn)) return NVML_ERROR_UNKNOWN;
  if (stub_listed("VGPU_STUB_NVML_UNSUPPORTED", fn)) return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

const stub_record* lookup(nvmlDevice_t dev, stub_record* all, int* index) {
  int n = stub_read_records("VGPU_STUB_NVML_DEVICES", all);
  intptr_t i = (intptr_t)dev - 1;
  if (init_depth <= 0 || i < 0 || i >= n) return NULL;
  *index = (int)i;
  return &all[i];
}

nvmlReturn_t copy_string(const char* s, char* out, unsigned int length) {
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(s) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(out, s, strlen(s) + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) {
  nvmlReturn_t rc = injected("nvmlInit_v2");
  if (rc != NVML_SUCCESS) return rc;
  init_depth++;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  if (init_depth <= 0) return NVML_ERROR_UNINITIALIZED;
  init_depth--;
  return injected("nvmlShutdown");
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient Resources";
    case NVML_ERROR_UNKNOWN: return "Unknown Error";
    default: return "Stub Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  stub_record all[STUB_MAX_DEVICES];
  nvmlReturn_t rc = injected("nvmlDeviceGetCount_v2");
  if (rc != NVML_SUCCESS) return rc;
  if (init_depth <= 0) return NVML_ERROR_UNINITIALIZED;
  *count = (unsigned int)stub_read_records("VGPU_STUB_NVML_DEVICES", all);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  stub_record all[STUB_MAX_DEVICES];
  nvmlReturn_t rc = injected("nvmlDeviceGetHandleByIndex_v2");
  if (rc != NVML_SUCCESS) return rc;
  if (init_depth <= 0) return NVML_ERROR_UNINITIALIZED;
  if (index >= (unsigned int)stub_read_records("VGPU_STUB_NVML_DEVICES", all)) return NVML_ERROR_INVALID_ARGUMENT;
  *device = (nvmlDevice_t)(intptr_t)(index + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  stub_record all[STUB_MAX_DEVICES];
  int i;
  const stub_record* r;
  nvmlReturn_t rc = injected("nvmlDeviceGetName");
  if (rc != NVML_SUCCESS) return rc;
  if ((r = lookup(device, all, &i)) == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  return copy_string(r->field[0], name, length);
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  stub_record all[STUB_MAX_DEVICES];
  int i;
  const stub_record* r;
  nvmlReturn_t rc = injected("nvmlDeviceGetMinorNumber");
  if (rc != NVML_SUCCESS) return rc;
  if ((r = lookup(device, all, &i)) == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *minor = (unsigned int)stub_u64(r->field[1], 10);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  stub_record all[STUB_MAX_DEVICES];
  int i;
  const stub_record* r;
  nvmlReturn_t rc = injected("nvmlDeviceGetMemoryInfo");
  if (rc != NVML_SUCCESS) return rc;
  if ((r = lookup(device, all, &i)) == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  memory->total = stub_u64(r->field[2], 10);
  memory->used = memory->total / 100;
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  stub_record all[STUB_MAX_DEVICES];
  int i;
  unsigned domain, bus, dev, fn;
  const stub_record* r;
  nvmlReturn_t rc = injected("nvmlDeviceGetPciInfo_v3");
  if (rc != NVML_SUCCESS) return rc;
  if ((r = lookup(device, all, &i)) == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (stub_parse_bdf(r->field[3], &domain, &bus, &dev, &fn) != 0) return NVML_ERROR_UNKNOWN;
  memset(pci, 0, sizeof(*pci));
  pci->domain = domain;
  pci->bus = bus;
  pci->device = dev;
  pci->pciDeviceId = 0x233010deu;
  snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.%X", domain, bus, dev, fn);
  snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.%X", domain, bus, dev, fn);
  return NVML_SUCCESS;
}

const char* device_uuid(const stub_record* r, int i, char fallback[32]) {
  if (r->count > 4 && r->field[4][0] != '\0') return r->field[4];
  snprintf(fallback, 32, "GPU-stub-%d", i);
  return fallback;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  stub_record all[STUB_MAX_DEVICES];
  char fallback[32];
  int i;
  const stub_record* r;
  nvmlReturn_t rc = injected("nvmlDeviceGetUUID");
  if (rc != NVML_SUCCESS) return rc;
  if ((r = lookup(device, all, &i)) == NULL) return mig_device_uuid(device, uuid, length);
  return copy_string(device_uuid(r, i, fallback), uuid, length);
}

