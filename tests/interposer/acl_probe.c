/* acl_probe: an AscendCL program for the interposer tests, like
 * cuda_probe.c (one output line per command):
 *
 *   init [ORDINAL]          aclInit, aclrtSetDevice                 -> "init RC"
 *   alloc|cached|cfg|align32 BYTES  aclrtMalloc / aclrtMallocCached /
 *                           aclrtMallocWithCfg / aclrtMallocAlign32 -> "<cmd> RC"
 *   vmap BYTES              as torch_npu's expandable segments grow:
 *                           aclrtMallocPhysical, aclrtMapMem at the end
 *                           of one aclrtReserveMemAddress range     -> "vmap RC"
 *   vrelease                aclrtFreePhysical of the newest mapping's
 *                           handle, mapping kept                     -> "vrelease RC"
 *   vunmap                  aclrtUnmapMem of the newest mapping       -> "vunmap RC"
 *   vfree                   aclrtUnmapMem, then aclrtFreePhysical    -> "vfree RC"
 *   free                    aclrtFree of the newest one held        -> "free RC"
 *   info                    aclrtGetMemInfo(ACL_HBM_MEM)            -> "info RC FREE TOTAL"
 *   host                    aclrtGetMemInfo(ACL_DDR_MEM)            -> "host RC FREE TOTAL"
 *   work SECONDS US MODE    MODE kernel (aclrtLaunchKernel), model
 *                           (aclmdlExecuteAsync), op (aclopExecuteV2)
 *   hold                    (see probe_common.h)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_api.h"
#include "probe_common.h"

/* Stub-only (tests/stubs): device time this process's work took; a kernel
 * of duration_us microseconds. */
unsigned long long vgpu_stub_acl_busy_ns(void);
aclrtFuncHandle vgpu_stub_acl_kernel(unsigned int duration_us);

static char work_op[64];
static int device = 0; /* the device of `init` */

/* vmap's mappings, newest last, in one reserved address range. */
typedef struct {
  uintptr_t va;
  size_t size;
  aclrtDrvMemHandle handle;
  int released;
} mapping_t;
static mapping_t maps[256];
static int nmaps = 0;
static void* va_base = NULL;
static size_t va_used = 0;

static aclError vmap(size_t bytes) {
  aclrtPhysicalMemProp prop;
  aclrtDrvMemHandle h = NULL;
  aclError rc = ACL_SUCCESS;
  if (nmaps == 256) return ACL_ERROR_INVALID_PARAM;
  if (!va_base) rc = aclrtReserveMemAddress(&va_base, 64ULL << 30, 0, NULL, 0);
  memset(&prop, 0, sizeof(prop));
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = (uint32_t)device;
  if (rc == ACL_SUCCESS) rc = aclrtMallocPhysical(&h, bytes, &prop, 0);
  if (rc != ACL_SUCCESS) return rc;
  rc = aclrtMapMem((char*)va_base + va_used, bytes, 0, h, 0);
  if (rc != ACL_SUCCESS) {
    aclrtFreePhysical(h);
    return rc;
  }
  maps[nmaps++] = (mapping_t){(uintptr_t)va_base + va_used, bytes, h, 0};
  va_used += bytes;
  return rc;
}

/* Unmaps the newest mapping (popped), then frees its physical memory if
 * `release` and not freed yet. */
static aclError vunmap(int release) {
  mapping_t m;
  aclError rc;
  if (nmaps == 0) return ACL_ERROR_INVALID_PARAM;
  m = maps[--nmaps];
  va_used -= m.size;
  rc = aclrtUnmapMem((void*)m.va);
  if (rc == ACL_SUCCESS && release && !m.released) rc = aclrtFreePhysical(m.handle);
  return rc;
}

static int work_load(const char* name) {
  snprintf(work_op, sizeof(work_op), "%s", name);
  return 0;
}

static int work_launch(const char* mode, unsigned int us) {
  if (!strcmp(mode, "model")) return aclmdlExecuteAsync(us, NULL, NULL, NULL);
  if (!strcmp(mode, "op")) return aclopExecuteV2(work_op, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL);
  return aclrtLaunchKernel(vgpu_stub_acl_kernel(us), 1, NULL, 0, NULL);
}

static int work_sync(void) { return aclrtSynchronizeDevice(); }

static const probe_api api = {work_load, work_launch, work_sync, vgpu_stub_acl_busy_ns};

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; ++i) {
    const char* c = argv[i];
    const char* a1 = arg(argc, argv, i + 1);
    aclError rc;
    void* p = NULL;
    if (!strcmp(c, "init")) {
      int ordinal = ordinal_arg(argc, argv, &i);
      rc = aclInit(NULL);
      if (rc == ACL_SUCCESS) rc = aclrtSetDevice(ordinal);
      device = ordinal;
      printf("init %d\n", rc);
    } else if (!strcmp(c, "alloc") || !strcmp(c, "cached") || !strcmp(c, "cfg") || !strcmp(c, "align32")) {
      const size_t n = num(a1);
      rc = !strcmp(c, "alloc")     ? aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST)
           : !strcmp(c, "cached")  ? aclrtMallocCached(&p, n, ACL_MEM_MALLOC_HUGE_FIRST)
           : !strcmp(c, "align32") ? aclrtMallocAlign32(&p, n, ACL_MEM_MALLOC_HUGE_FIRST)
                                   : aclrtMallocWithCfg(&p, n, ACL_MEM_MALLOC_HUGE_FIRST, NULL);
      allocated(c, rc, 0, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "free")) {
      held_t h;
      if (!take(&h)) continue;
      printf("free %d\n", aclrtFree((void*)(uintptr_t)h.key));
    } else if (!strcmp(c, "vmap")) {
      printf("vmap %d\n", vmap(num(a1))), ++i;
    } else if (!strcmp(c, "vrelease")) {
      rc = nmaps ? aclrtFreePhysical(maps[nmaps - 1].handle) : ACL_ERROR_INVALID_PARAM;
      if (rc == ACL_SUCCESS) maps[nmaps - 1].released = 1;
      printf("vrelease %d\n", rc);
    } else if (!strcmp(c, "vunmap") || !strcmp(c, "vfree")) {
      printf("%s %d\n", c, vunmap(!strcmp(c, "vfree")));
    } else if (!strcmp(c, "info") || !strcmp(c, "host")) {
      size_t f = 0, t = 0;
      rc = aclrtGetMemInfo(!strcmp(c, "info") ? ACL_HBM_MEM : ACL_DDR_MEM, &f, &t);
      printf("%s %d %zu %zu\n", c, rc, f, t);
    } else {
      int status = probe_shared(&api, "acl_probe", argc, argv, &i);
      if (status >= 0) return status;
    }
  }
  return 0;
}
