/* Stub ROCm SMI (built as stubs/librocm_smi64.so.1) for the discovery tests.
 *
 * Environment, read on every call:
 *   VGPU_STUB_RSMI_DEVICES
 *     "<name>,<render_minor>,<vram_bytes>,<pci_bus_id>,<unique_id_hex>;..."
 *     e.g. "K100_AI,128,68719476736,0000:3d:00.0,a1b2c3d4e5f60718"
 *   VGPU_STUB_RSMI_FAIL         functions that return RSMI_STATUS_INTERNAL_EXCEPTION (6)
 *   VGPU_STUB_RSMI_UNSUPPORTED  functions that return RSMI_STATUS_NOT_SUPPORTED (2)
 *
 * Extra export for tests: vgpu_stub_rsmi_init_depth(): rsmi_init calls not
 * yet matched by rsmi_shut_down.
 *
 * Signatures follow rocm_smi.h: rsmi_status_t is an int-sized enum; device
 * indexes are uint32_t; the PCI id is packed as
 * domain << 32 | bus << 8 | device << 3 | function.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stub_devices.h"

typedef int rsmi_status_t;
#define RSMI_STATUS_SUCCESS 0
#define RSMI_STATUS_INVALID_ARGS 1
#define RSMI_STATUS_NOT_SUPPORTED 2
#define RSMI_STATUS_INTERNAL_EXCEPTION 6
#define RSMI_STATUS_INIT_ERROR 8
#define RSMI_STATUS_INSUFFICIENT_SIZE 11

enum { F_NAME, F_MINOR, F_VRAM, F_PCI, F_UID };

static int init_depth = 0;

int vgpu_stub_rsmi_init_depth(void) { return init_depth; }

static rsmi_status_t injected(const char* fn) {
  if (stub_listed("VGPU_STUB_RSMI_FAIL", fn)) return RSMI_STATUS_INTERNAL_EXCEPTION;
  if (stub_listed("VGPU_STUB_RSMI_UNSUPPORTED", fn)) return RSMI_STATUS_NOT_SUPPORTED;
  return RSMI_STATUS_SUCCESS;
}

static const stub_record* find(stub_record* all, uint32_t dv_ind) {
  int n = stub_read_records("VGPU_STUB_RSMI_DEVICES", all);
  if (init_depth <= 0 || dv_ind >= (uint32_t)n) return NULL;
  return &all[dv_ind];
}

rsmi_status_t rsmi_init(uint64_t init_flags) {
  rsmi_status_t rc = injected("rsmi_init");
  (void)init_flags;
  if (rc != RSMI_STATUS_SUCCESS) return rc;
  init_depth++;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_shut_down(void) {
  if (init_depth <= 0) return RSMI_STATUS_INIT_ERROR;
  init_depth--;
  return injected("rsmi_shut_down");
}

rsmi_status_t rsmi_status_string(rsmi_status_t status, const char** status_string) {
  switch (status) {
    case RSMI_STATUS_SUCCESS: *status_string = "RSMI_STATUS_SUCCESS"; break;
    case RSMI_STATUS_NOT_SUPPORTED: *status_string = "RSMI_STATUS_NOT_SUPPORTED"; break;
    case RSMI_STATUS_INTERNAL_EXCEPTION: *status_string = "RSMI_STATUS_INTERNAL_EXCEPTION"; break;
    default: *status_string = "RSMI_STATUS_UNKNOWN_ERROR"; break;
  }
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_num_monitor_devices(uint32_t* num_devices) {
  stub_record all[STUB_MAX_DEVICES];
  rsmi_status_t rc = injected("rsmi_num_monitor_devices");
  if (rc != RSMI_STATUS_SUCCESS) return rc;
  if (init_depth <= 0) return RSMI_STATUS_INIT_ERROR;
  *num_devices = (uint32_t)stub_read_records("VGPU_STUB_RSMI_DEVICES", all);
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_name_get(uint32_t dv_ind, char* name, size_t len) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  rsmi_status_t rc = injected("rsmi_dev_name_get");
  if (rc != RSMI_STATUS_SUCCESS) return rc;
  if ((r = find(all, dv_ind)) == NULL || name == NULL || len == 0) return RSMI_STATUS_INVALID_ARGS;
  strncpy(name, r->field[F_NAME], len - 1);
  name[len - 1] = '\0';
  return strlen(r->field[F_NAME]) < len ? RSMI_STATUS_SUCCESS : RSMI_STATUS_INSUFFICIENT_SIZE;
}

rsmi_status_t rsmi_dev_drm_render_minor_get(uint32_t dv_ind, uint32_t* minor) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  rsmi_status_t rc = injected("rsmi_dev_drm_render_minor_get");
  if (rc != RSMI_STATUS_SUCCESS) return rc;
  if ((r = find(all, dv_ind)) == NULL) return RSMI_STATUS_INVALID_ARGS;
  *minor = (uint32_t)stub_u64(r->field[F_MINOR], 10);
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv_ind, int mem_type, uint64_t* total) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  rsmi_status_t rc = injected("rsmi_dev_memory_total_get");
  if (rc != RSMI_STATUS_SUCCESS) return rc;
  if ((r = find(all, dv_ind)) == NULL) return RSMI_STATUS_INVALID_ARGS;
  if (mem_type != 0) return RSMI_STATUS_NOT_SUPPORTED; /* only RSMI_MEM_TYPE_VRAM */
  *total = stub_u64(r->field[F_VRAM], 10);
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t* bdfid) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  unsigned domain, bus, dev, fn;
  rsmi_status_t rc = injected("rsmi_dev_pci_id_get");
  if (rc != RSMI_STATUS_SUCCESS) return rc;
  if ((r = find(all, dv_ind)) == NULL) return RSMI_STATUS_INVALID_ARGS;
  if (stub_parse_bdf(r->field[F_PCI], &domain, &bus, &dev, &fn) != 0) return RSMI_STATUS_INTERNAL_EXCEPTION;
  *bdfid = ((uint64_t)domain << 32) | ((uint64_t)(bus & 0xff) << 8) | ((dev & 0x1f) << 3) | (fn & 0x7);
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv_ind, uint64_t* id) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  rsmi_status_t rc = injected("rsmi_dev_unique_id_get");
  if (rc != RSMI_STATUS_SUCCESS) return rc;
  if ((r = find(all, dv_ind)) == NULL) return RSMI_STATUS_INVALID_ARGS;
  if (r->field[F_UID][0] == '\0') return RSMI_STATUS_NOT_SUPPORTED;
  *id = stub_u64(r->field[F_UID], 16);
  return RSMI_STATUS_SUCCESS;
}
