/* call_bench: what libvgpu.so costs a CUDA program, for bench/interposer.
 *
 *   call_bench calls N     N x (cuMemAlloc_v2 4 KiB + cuMemFree_v2), N x
 *                          cuMemGetInfo_v2 and N x cuLaunchKernel of an
 *                          empty kernel after a warm-up, each in kRounds
 *                          rounds of N / kRounds; prints the fastest
 *                          round's "alloc_free_ns X", "mem_get_info_ns Y"
 *                          and "launch_ns Z" per call (the fastest: a
 *                          round the machine interrupted measures the
 *                          machine, not the library)
 *   call_bench first       the first cuMemAlloc_v2 of the process (where
 *                          libvgpu.so reads the job's limits, maps the
 *                          region and takes a slot) and the second one;
 *                          prints "first_alloc_us X second_alloc_us Y
 *                          first_alloc_cpu_us Z" (Z: CPU time of the
 *                          first call, which other processes cannot inflate)
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

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int setup(void) {
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate_v2(&ctx, 0, dev)) {
    fprintf(stderr, "call_bench: CUDA init failed\n");
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2 || setup()) return 2;
  CUdeviceptr p;
  if (!strcmp(argv[1], "first")) {
    double c0 = cpu_ns();
    double t0 = now_ns();
    CUresult a = cuMemAlloc_v2(&p, 4096);
    double t1 = now_ns();
    double c1 = cpu_ns();
    CUdeviceptr q;
    CUresult b = cuMemAlloc_v2(&q, 4096);
    double t2 = now_ns();
    if (a || b) return 1;
    printf("first_alloc_us %.2f second_alloc_us %.2f first_alloc_cpu_us %.2f\n", (t1 - t0) / 1e3,
           (t2 - t1) / 1e3, (c1 - c0) / 1e3);
    return 0;
  }
  long n = argc > 2 ? atol(argv[2]) : 100000;
  enum { kRounds = 10 };
  long per_round = n / kRounds > 0 ? n / kRounds : 1;
  for (long i = 0; i < 1000; ++i) {
    if (cuMemAlloc_v2(&p, 4096) || cuMemFree_v2(p)) return 1;
  }
  /* Each call's rounds together: launches leave work queued that the
   * other calls would pay for. */
  double best_alloc = 1e300, best_info = 1e300, best_launch = 1e300;
  for (int round = 0; round < kRounds; ++round) {
    double t0 = now_ns();
    for (long i = 0; i < per_round; ++i) {
      cuMemAlloc_v2(&p, 4096);
      cuMemFree_v2(p);
    }
    double t1 = now_ns();
    if ((t1 - t0) / per_round < best_alloc) best_alloc = (t1 - t0) / per_round;
  }
  for (int round = 0; round < kRounds; ++round) {
    size_t f, t;
    double t0 = now_ns();
    for (long i = 0; i < per_round; ++i) cuMemGetInfo_v2(&f, &t);
    double t1 = now_ns();
    if ((t1 - t0) / per_round < best_info) best_info = (t1 - t0) / per_round;
  }
  CUmodule mod;
  CUfunction kernel;
  if (cuModuleLoadData(&mod, "stub") || cuModuleGetFunction(&kernel, mod, "busy_0us")) return 1;
  for (long i = 0; i < 1000; ++i) cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  for (int round = 0; round < kRounds; ++round) {
    double t0 = now_ns();
    for (long i = 0; i < per_round; ++i) cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    double t1 = now_ns();
    if ((t1 - t0) / per_round < best_launch) best_launch = (t1 - t0) / per_round;
  }
  printf("alloc_free_ns %.1f\nmem_get_info_ns %.1f\nlaunch_ns %.1f\n", best_alloc, best_info, best_launch);
  return 0;
}
