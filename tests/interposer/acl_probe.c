/* acl_probe: an AscendCL program for the interposer tests, like
 * cuda_probe.c (one output line per command):
 *
 *   init [ORDINAL]          aclInit, aclrtSetDevice                 -> "init RC"
 *   alloc|cached|cfg|align32|tasksched BYTES  aclrtMalloc / aclrtMallocCached /
 *                           aclrtMallocWithCfg / aclrtMallocAlign32 /
 *                           aclrtMallocForTaskScheduler             -> "<cmd> RC"
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

/* vmm_api over AscendCL (probe_common.h). */
static int vmm_reserve(uintptr_t* va, size_t bytes) {
  void* p = NULL;
  int rc = aclrtReserveMemAddress(&p, bytes, 0, NULL, 0);
  *va = (uintptr_t)p;
  return rc;
}
static int vmm_create(uint64_t* h, size_t bytes) {
  aclrtPhysicalMemProp prop;
  aclrtDrvMemHandle handle = NULL;
  memset(&prop, 0, sizeof(prop));
  prop.memAttr = ACL_HBM_MEM_HUGE;
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = (uint32_t)device;
  int rc = aclrtMallocPhysical(&handle, bytes, &prop, 0);
  *h = (uint64_t)(uintptr_t)handle;
  return rc;
}
static int vmm_map(uintptr_t va, size_t bytes, uint64_t h) {
  return aclrtMapMem((void*)va, bytes, 0, (aclrtDrvMemHandle)(uintptr_t)h, 0);
}
static int vmm_unmap(uintptr_t va, size_t bytes) { return aclrtUnmapMem((void*)va); }
static int vmm_release(uint64_t h) { return aclrtFreePhysical((aclrtDrvMemHandle)(uintptr_t)h); }
static const vmm_api vmm = {vmm_reserve, vmm_create, vmm_map, vmm_unmap, vmm_release, NULL};

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
    } else if (!strcmp(c, "alloc") || !strcmp(c, "cached") || !strcmp(c, "cfg") || !strcmp(c, "align32") ||
               !strcmp(c, "tasksched")) {
      const size_t n = num(a1);
      rc = !strcmp(c, "alloc")     ? aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST)
           : !strcmp(c, "cached")  ? aclrtMallocCached(&p, n, ACL_MEM_MALLOC_HUGE_FIRST)
           : !strcmp(c, "align32") ? aclrtMallocAlign32(&p, n, ACL_MEM_MALLOC_HUGE_FIRST)
           : !strcmp(c, "tasksched") ? aclrtMallocForTaskScheduler(&p, n, ACL_MEM_MALLOC_HUGE_FIRST, NULL)
                                   : aclrtMallocWithCfg(&p, n, ACL_MEM_MALLOC_HUGE_FIRST, NULL);
      allocated(c, rc, 0, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "free")) {
      held_t h;
      if (!take(&h)) continue;
      printf("free %d\n", aclrtFree((void*)(uintptr_t)h.key));
    } else if (vmm_command(&vmm, argc, argv, &i)) {
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
