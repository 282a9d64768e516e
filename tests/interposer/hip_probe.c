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
 *                           hipLaunchKernel, module =
 *                           hipModuleLaunchKernel, graph =
 *                           hipGraphLaunch), synchronising after
 *                           each                                    -> "work N BUSY_MS WALL_MS"
 *   hold                    prints "hold", sleeps until killed
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hip_api.h"

typedef struct {
  int kind; /* 0 pointer, 1 async pointer */
  void* ptr;
} held_t;

/* Stub-only: device time this process's kernels took (tests/stubs). */
unsigned long long vgpu_stub_hip_busy_ns(void);
hipGraphExec_t vgpu_stub_hip_graph(unsigned int duration_us);

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static hipError_t launch(const char* mode, hipFunction_t f, hipGraphExec_t g) {
  if (!strcmp(mode, "module")) return hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  if (!strcmp(mode, "graph")) return hipGraphLaunch(g, NULL);
  dim3 one = {1, 1, 1};
  /* The stub's "function address" is its hipFunction_t. */
  return hipLaunchKernel((const void*)f, one, one, NULL, 0, NULL);
}

static held_t held[4096];
static int nheld = 0;
static int device = 0;

static void keep(int kind, void* ptr) {
  if (nheld < 4096) held[nheld++] = (held_t){kind, ptr};
}

static unsigned long long num(const char* s) { return strtoull(s, NULL, 0); }

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; ++i) {
    const char* c = argv[i];
    const char* a1 = i + 1 < argc ? argv[i + 1] : "0";
    const char* a2 = i + 2 < argc ? argv[i + 2] : "0";
    const char* a3 = i + 3 < argc ? argv[i + 3] : "0";
    hipError_t rc;
    void* p = NULL;
    if (!strcmp(c, "init")) {
      int ordinal = (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') ? (int)num(argv[++i]) : 0;
      rc = hipSetDevice(ordinal);
      if (rc == hipSuccess) device = ordinal;
      printf("init %d\n", rc);
    } else if (!strcmp(c, "alloc")) {
      rc = hipMalloc(&p, num(a1));
      if (rc == hipSuccess) keep(0, p);
      printf("alloc %d\n", rc), ++i;
    } else if (!strcmp(c, "ext")) {
      rc = hipExtMallocWithFlags(&p, num(a1), 0);
      if (rc == hipSuccess) keep(0, p);
      printf("ext %d\n", rc), ++i;
    } else if (!strcmp(c, "managed")) {
      rc = hipMallocManaged(&p, num(a1), 1);
      if (rc == hipSuccess) keep(0, p);
      printf("managed %d\n", rc), ++i;
    } else if (!strcmp(c, "async")) {
      rc = hipMallocAsync(&p, num(a1), NULL);
      if (rc == hipSuccess) keep(1, p);
      printf("async %d\n", rc), ++i;
    } else if (!strcmp(c, "pool")) {
      rc = hipMallocFromPoolAsync(&p, num(a1), NULL, NULL);
      if (rc == hipSuccess) keep(1, p);
      printf("pool %d\n", rc), ++i;
    } else if (!strcmp(c, "pitch")) {
      size_t pitch = 0;
      rc = hipMallocPitch(&p, &pitch, num(a1), num(a2));
      if (rc == hipSuccess) keep(0, p);
      printf("pitch %d %zu\n", rc, pitch), i += 2;
    } else if (!strcmp(c, "free")) {
      if (nheld == 0) {
        printf("free none\n");
        continue;
      }
      held_t h = held[--nheld];
      rc = h.kind == 1 ? hipFreeAsync(h.ptr, NULL) : hipFree(h.ptr);
      printf("free %d\n", rc);
    } else if (!strcmp(c, "info")) {
      size_t f = 0, t = 0;
      rc = hipMemGetInfo(&f, &t);
      printf("info %d %zu %zu\n", rc, f, t);
    } else if (!strcmp(c, "total")) {
      size_t t = 0;
      rc = hipDeviceTotalMem(&t, device);
      printf("total %d %zu\n", rc, t);
    } else if (!strcmp(c, "work")) {
      hipModule_t mod;
      hipFunction_t f = NULL;
      char name[64];
      snprintf(name, sizeof(name), "busy_%sus", a2);
      hipGraphExec_t g = vgpu_stub_hip_graph((unsigned)num(a2));
      rc = hipModuleLoadData(&mod, "stub");
      if (rc == hipSuccess) rc = hipModuleGetFunction(&f, mod, name);
      double t0 = now_ms(), end = t0 + atof(a1) * 1e3;
      unsigned long long busy0 = vgpu_stub_hip_busy_ns(), n = 0;
      while (rc == hipSuccess && now_ms() < end) {
        rc = launch(a3, f, g);
        if (rc == hipSuccess) rc = hipDeviceSynchronize();
        ++n;
      }
      printf("work %llu %.1f %.1f\n", rc == hipSuccess ? n : 0ULL, (vgpu_stub_hip_busy_ns() - busy0) / 1e6,
             now_ms() - t0);
      i += 3;
    } else if (!strcmp(c, "hold")) {
      printf("hold\n");
      for (;;) pause();
    } else {
      fprintf(stderr, "hip_probe: unknown command %s\n", c);
      return 2;
    }
  }
  return 0;
}
