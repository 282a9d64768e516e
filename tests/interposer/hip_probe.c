/* hip_probe: a HIP runtime API program for the interposer tests, the twin
 * of cuda_probe. Runs the commands of its arguments in order and prints one
 * line per command, so a test drives each allocation path and reads back
 * what the runtime (the stub, behind libvgpu.so when preloaded) answered.
 *
 *   init [ORDINAL]          hipSetDevice                           -> "init RC"
 *   alloc|ext|managed|async|pool BYTES                             -> "<cmd> RC"
 *                           hipMalloc, hipExtMallocWithFlags (0),
 *                           hipMallocManaged (1), hipMallocAsync and
 *                           hipMallocFromPoolAsync (NULL pool, NULL
 *                           stream)
 *   pitch WIDTH HEIGHT      hipMallocPitch                         -> "pitch RC PITCH"
 *   free                    frees the newest allocation still held
 *                           (hipFreeAsync for async/pool ones)     -> "free RC"
 *   info                    hipMemGetInfo                          -> "info RC FREE TOTAL"
 *   total                   hipDeviceTotalMem of the device        -> "total RC BYTES"
 *   work SECONDS US MODE    launches US-microsecond kernels of the stub
 *                           back to back for SECONDS (MODE: kernel =
 *                           hipLaunchKernel, module, graph and the
 *                           others of work_launch), synchronising after
 *                           each                                    -> "work N BUSY_MS WALL_MS"
 *   hold                    prints "hold", sleeps until killed
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_api.h"
#include "probe_common.h"

/* held_t kinds: which call frees the pointer. */
enum { HELD_PTR, HELD_ASYNC };

/* Stub-only (tests/stubs): device time this process's kernels took; a
 * graph of duration_us microseconds. */
unsigned long long vgpu_stub_hip_busy_ns(void);
hipGraphExec_t vgpu_stub_hip_graph(unsigned int duration_us);

static hipFunction_t work_function;

static int work_load(const char* name) {
  hipModule_t mod;
  hipError_t rc = hipModuleLoadData(&mod, "stub");
  work_function = NULL;
  if (rc == hipSuccess) rc = hipModuleGetFunction(&work_function, mod, name);
  return rc;
}

/* MODE: kernel (hipLaunchKernel), module (hipModuleLaunchKernel), graph
 * (hipGraphLaunch), and the other launch entry points: spt, coop,
 * coop_spt, ext (hipExtLaunchKernel), mcoop (hipModuleLaunchCooperativeKernel),
 * miopen (hipExtModuleLaunchKernel, MIOpen's path), hcc, graph_spt, and
 * the multi-device forms with one entry: multi, extmulti, mmulti. */
static int work_launch(const char* mode, unsigned int us) {
  hipFunction_t f = work_function;
  const void* fp = (const void*)f;
  dim3 one = {1, 1, 1};
  hipLaunchParams lp = {(void*)fp, one, one, NULL, 0, NULL};
  hipFunctionLaunchParams mp = {f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL};
  if (!strcmp(mode, "module")) return hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  if (!strcmp(mode, "graph")) return hipGraphLaunch(vgpu_stub_hip_graph(us), NULL);
  if (!strcmp(mode, "graph_spt")) return hipGraphLaunch_spt(vgpu_stub_hip_graph(us), NULL);
  if (!strcmp(mode, "spt")) return hipLaunchKernel_spt(fp, one, one, NULL, 0, NULL);
  if (!strcmp(mode, "coop")) return hipLaunchCooperativeKernel(fp, one, one, NULL, 0, NULL);
  if (!strcmp(mode, "coop_spt")) return hipLaunchCooperativeKernel_spt(fp, one, one, NULL, 0, NULL);
  if (!strcmp(mode, "ext")) return hipExtLaunchKernel(fp, one, one, NULL, 0, NULL, NULL, NULL, 0);
  if (!strcmp(mode, "mcoop")) return hipModuleLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL);
  if (!strcmp(mode, "miopen")) return hipExtModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL, NULL, NULL, 0);
  if (!strcmp(mode, "hcc")) return hipHccModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL, NULL, NULL);
  if (!strcmp(mode, "multi")) return hipLaunchCooperativeKernelMultiDevice(&lp, 1, 0);
  if (!strcmp(mode, "extmulti")) return hipExtLaunchMultiKernelMultiDevice(&lp, 1, 0);
  if (!strcmp(mode, "mmulti")) return hipModuleLaunchCooperativeKernelMultiDevice(&mp, 1, 0);
  return hipLaunchKernel(fp, one, one, NULL, 0, NULL);
}

static const probe_api api = {work_load, work_launch, hipDeviceSynchronize, vgpu_stub_hip_busy_ns};

static int device = 0; /* the device of `init` */

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; ++i) {
    const char* c = argv[i];
    const char *a1 = arg(argc, argv, i + 1), *a2 = arg(argc, argv, i + 2);
    hipError_t rc;
    void* p = NULL;
    if (!strcmp(c, "init")) {
      int ordinal = ordinal_arg(argc, argv, &i);
      rc = hipSetDevice(ordinal);
      if (rc == hipSuccess) device = ordinal;
      printf("init %d\n", rc);
    } else if (!strcmp(c, "alloc")) {
      rc = hipMalloc(&p, num(a1));
      allocated(c, rc, HELD_PTR, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "ext")) {
      rc = hipExtMallocWithFlags(&p, num(a1), 0);
      allocated(c, rc, HELD_PTR, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "managed")) {
      rc = hipMallocManaged(&p, num(a1), 1);
      allocated(c, rc, HELD_PTR, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "async")) {
      rc = hipMallocAsync(&p, num(a1), NULL);
      allocated(c, rc, HELD_ASYNC, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "pool")) {
      rc = hipMallocFromPoolAsync(&p, num(a1), NULL, NULL);
      allocated(c, rc, HELD_ASYNC, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "pitch")) {
      size_t pitch = 0;
      rc = hipMallocPitch(&p, &pitch, num(a1), num(a2));
      if (rc == hipSuccess) keep(HELD_PTR, (uintptr_t)p);
      printf("pitch %d %zu\n", rc, pitch), i += 2;
    } else if (!strcmp(c, "free")) {
      held_t h;
      if (!take(&h)) continue;
      p = (void*)(uintptr_t)h.key;
      rc = h.kind == HELD_ASYNC ? hipFreeAsync(p, NULL) : hipFree(p);
      printf("free %d\n", rc);
    } else if (!strcmp(c, "info")) {
      size_t f = 0, t = 0;
      rc = hipMemGetInfo(&f, &t);
      printf("info %d %zu %zu\n", rc, f, t);
    } else if (!strcmp(c, "total")) {
      size_t t = 0;
      rc = hipDeviceTotalMem(&t, device);
      printf("total %d %zu\n", rc, t);
    } else {
      int status = probe_shared(&api, "hip_probe", argc, argv, &i);
      if (status >= 0) return status;
    }
  }
  return 0;
}
