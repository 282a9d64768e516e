/* gpu_check: libvgpu.so against a real CUDA driver (or the stub driver),
 * for tests/gpu/run. Plain C on the driver API: kernels are PTX, JIT-
 * compiled by the driver (no CUDA toolkit needed), spinning on the GPU's
 * %globaltimer; the stub driver reads the same names ("busy_<N>us").
 *
 *   gpu_check uuid                 the UUID of device 0     -> "uuid GPU-..."
 *   gpu_check quota CHUNK_MIB      allocates CHUNK_MIB until refused, then
 *                                  asks cuMemGetInfo          -> "quota MIB RC FREE_MIB TOTAL_MIB"
 *   gpu_check pace SECONDS US      US-microsecond kernels back to back,
 *                                  synchronising after each   -> "pace N BUSY_PERCENT"
 *   gpu_check overhead N           N x (cuMemAlloc 4 KiB + cuMemFree), N
 *                                  launches of an empty kernel -> "overhead ALLOC_NS LAUNCH_NS"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_api.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int check(CUresult rc, const char* what) {
  if (rc != CUDA_SUCCESS) fprintf(stderr, "gpu_check: %s: CUDA error %d\n", what, rc);
  return rc == CUDA_SUCCESS;
}

/* A kernel named busy_<us>us that spins `us` microseconds on %globaltimer. */
static CUfunction busy_kernel(unsigned us) {
  char name[32], ptx[1024];
  CUmodule mod;
  CUfunction f = NULL;
  snprintf(name, sizeof(name), "busy_%uus", us);
  snprintf(ptx, sizeof(ptx),
           ".version 7.0\n.target sm_50\n.address_size 64\n"
           ".visible .entry %s()\n{\n"
           "  .reg .u64 %%t0, %%t1, %%d;\n  .reg .pred %%p;\n"
           "  mov.u64 %%t0, %%globaltimer;\nLOOP:\n"
           "  mov.u64 %%t1, %%globaltimer;\n  sub.u64 %%d, %%t1, %%t0;\n"
           "  setp.lt.u64 %%p, %%d, %llu;\n  @%%p bra LOOP;\n  ret;\n}\n",
           name, (unsigned long long)us * 1000ULL);
  if (!check(cuModuleLoadData(&mod, ptx), "cuModuleLoadData") ||
      !check(cuModuleGetFunction(&f, mod, name), "cuModuleGetFunction"))
    return NULL;
  return f;
}

static CUresult launch(CUfunction f) { return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL); }

int main(int argc, char** argv) {
  CUdevice dev;
  CUcontext ctx;
  if (argc < 2) return 2;
  if (!check(cuInit(0), "cuInit") || !check(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
      !check(cuCtxCreate_v2(&ctx, 0, dev), "cuCtxCreate"))
    return 1;
  if (!strcmp(argv[1], "uuid")) {
    CUuuid u;
    if (!check(cuDeviceGetUuid(&u, dev), "cuDeviceGetUuid")) return 1;
    printf("uuid GPU-");
    for (int i = 0; i < 16; ++i) printf("%s%02x", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "", (unsigned char)u.bytes[i]);
    printf("\n");
  } else if (!strcmp(argv[1], "quota") && argc > 2) {
    const size_t chunk = (size_t)atol(argv[2]) << 20;
    size_t total = 0, f = 0, t = 0;
    CUdeviceptr p;
    CUresult rc;
    while ((rc = cuMemAlloc_v2(&p, chunk)) == CUDA_SUCCESS && total < ((size_t)1 << 42)) total += chunk;
    cuMemGetInfo_v2(&f, &t);
    printf("quota %zu %d %zu %zu\n", total >> 20, rc, f >> 20, t >> 20);
  } else if (!strcmp(argv[1], "pace") && argc > 3) {
    const unsigned us = (unsigned)atoi(argv[3]);
    CUfunction k = busy_kernel(us);
    if (!k) return 1;
    double t0 = now_ns(), end = t0 + atof(argv[2]) * 1e9;
    unsigned long long n = 0;
    while (now_ns() < end) {
      if (!check(launch(k), "cuLaunchKernel") || !check(cuCtxSynchronize(), "cuCtxSynchronize")) return 1;
      ++n;
    }
    printf("pace %llu %.1f\n", n, 100.0 * n * us * 1e3 / (now_ns() - t0));
  } else if (!strcmp(argv[1], "overhead") && argc > 2) {
    const long n = atol(argv[2]);
    CUdeviceptr p;
    CUfunction k = busy_kernel(0);
    if (!k) return 1;
    for (long i = 0; i < 100; ++i)
      if (!check(cuMemAlloc_v2(&p, 4096), "cuMemAlloc") || !check(cuMemFree_v2(p), "cuMemFree")) return 1;
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) {
      cuMemAlloc_v2(&p, 4096);
      cuMemFree_v2(p);
    }
    double t1 = now_ns();
    for (long i = 0; i < n; ++i) launch(k);
    cuCtxSynchronize();
    double t2 = now_ns();
    printf("overhead %.0f %.0f\n", (t1 - t0) / n, (t2 - t1) / n);
  } else {
    return 2;
  }
  return 0;
}
