/* cuda_probe: a CUDA driver API program for the interposer tests. Runs the
 * commands of its arguments in order and prints one line per command, so a
 * test drives each allocation path and reads back what the driver (the
 * stub, behind libvgpu.so when preloaded) answered.
 *
 *   init [ORDINAL]          cuInit, cuDeviceGet, cuCtxCreate       -> "init RC"
 *   alloc|managed|create|async|async_ptsz|pool|pool_ptsz BYTES      -> "<cmd> RC"
 *   pitch WIDTH HEIGHT                                             -> "pitch RC PITCH"
 *   array W H | array3d W H D  (1-channel float)                   -> "<cmd> RC"
 *   free                    frees the newest allocation still held -> "free RC"
 *   info                    cuMemGetInfo_v2                        -> "info RC FREE TOTAL"
 *   total                   cuDeviceTotalMem_v2 of the device      -> "total RC BYTES"
 *   nvml                    NVML memory info of device 0, found
 *                           through dlopen + dlsym                 -> "nvml RC TOTAL FREE USED"
 *   proc NAME VERSION FLAGS cuGetProcAddress; which library the
 *                           entry point is in                      -> "proc RC libvgpu|libcuda|none"
 *   rtalloc BYTES           as the CUDA runtime does: dlopen libcuda,
 *                           dlsym cuGetProcAddress_v2, get
 *                           cuMemAlloc through it, allocate         -> "rtalloc RC"
 *   rtld_next               dlsym(RTLD_NEXT) still relative to the
 *                           caller                                  -> "rtld_next ok|wrong"
 *   setenv NAME VALUE | unsetenv NAME                               -> (nothing)
 *   getenv NAME                                                     -> "getenv VALUE"
 *   system CMD              system(3), as a shell would start jobs  -> CMD's output
 *   fork CMD...             runs the remaining commands in a child,
 *                           waits for it, then stops                -> child's lines
 *   exec CMD...             execs itself with the remaining commands
 *   work SECONDS US MODE    launches US-microsecond kernels of the stub
 *                           back to back for SECONDS (MODE: kernel,
 *                           ptsz, ex, coop, graph), synchronising after
 *                           each                                    -> "work N BUSY_MS WALL_MS"
 *   hold                    prints "hold", sleeps until killed
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_api.h"
#include "nvml_api.h"

typedef struct {
  int kind; /* 0 pointer, 1 handle, 2 array, 3 async pointer */
  unsigned long long key;
} held_t;

/* Stub-only: device time this process's kernels took (tests/stubs). */
unsigned long long vgpu_stub_cuda_busy_ns(void);
CUgraphExec vgpu_stub_cuda_graph(unsigned int duration_us);

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static CUresult launch(const char* mode, CUfunction f, CUgraphExec g) {
  if (!strcmp(mode, "ptsz")) return cuLaunchKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  if (!strcmp(mode, "coop")) return cuLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL);
  if (!strcmp(mode, "graph")) return cuGraphLaunch(g, NULL);
  if (!strcmp(mode, "ex")) {
    CUlaunchConfig c;
    memset(&c, 0, sizeof(c));
    c.gridDimX = c.gridDimY = c.gridDimZ = c.blockDimX = c.blockDimY = c.blockDimZ = 1;
    return cuLaunchKernelEx(&c, f, NULL, NULL);
  }
  return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
}

static held_t held[4096];
static int nheld = 0;
static CUdevice device = 0;

static void keep(int kind, unsigned long long key) {
  if (nheld < 4096) held[nheld++] = (held_t){kind, key};
}

static unsigned long long num(const char* s) { return strtoull(s, NULL, 0); }

static const char* where(void* fn) {
  Dl_info info;
  if (!fn) return "none";
  if (!dladdr(fn, &info) || !info.dli_fname) return "unknown";
  if (strstr(info.dli_fname, "libvgpu")) return "libvgpu";
  if (strstr(info.dli_fname, "libcuda")) return "libcuda";
  return info.dli_fname;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; ++i) {
    const char* c = argv[i];
    const char* a1 = i + 1 < argc ? argv[i + 1] : "0";
    const char* a2 = i + 2 < argc ? argv[i + 2] : "0";
    const char* a3 = i + 3 < argc ? argv[i + 3] : "0";
    CUresult rc;
    CUdeviceptr p = 0;
    if (!strcmp(c, "init")) {
      int ordinal = (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') ? (int)num(argv[++i]) : 0;
      CUcontext ctx;
      rc = cuInit(0);
      if (rc == CUDA_SUCCESS) rc = cuDeviceGet(&device, ordinal);
      if (rc == CUDA_SUCCESS) rc = cuCtxCreate_v2(&ctx, 0, device);
      printf("init %d\n", rc);
    } else if (!strcmp(c, "alloc")) {
      rc = cuMemAlloc_v2(&p, num(a1));
      if (rc == CUDA_SUCCESS) keep(0, p);
      printf("alloc %d\n", rc), ++i;
    } else if (!strcmp(c, "managed")) {
      rc = cuMemAllocManaged(&p, num(a1), 1);
      if (rc == CUDA_SUCCESS) keep(0, p);
      printf("managed %d\n", rc), ++i;
    } else if (!strcmp(c, "create")) {
      CUmemAllocationProp prop;
      CUmemGenericAllocationHandle h = 0;
      memset(&prop, 0, sizeof(prop));
      prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
      prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      prop.location.id = device;
      rc = cuMemCreate(&h, num(a1), &prop, 0);
      if (rc == CUDA_SUCCESS) keep(1, h);
      printf("create %d\n", rc), ++i;
    } else if (!strcmp(c, "async") || !strcmp(c, "async_ptsz")) {
      rc = !strcmp(c, "async") ? cuMemAllocAsync(&p, num(a1), NULL) : cuMemAllocAsync_ptsz(&p, num(a1), NULL);
      if (rc == CUDA_SUCCESS) keep(3, p);
      printf("%s %d\n", c, rc), ++i;
    } else if (!strcmp(c, "pool") || !strcmp(c, "pool_ptsz")) {
      rc = !strcmp(c, "pool") ? cuMemAllocFromPoolAsync(&p, num(a1), NULL, NULL)
                              : cuMemAllocFromPoolAsync_ptsz(&p, num(a1), NULL, NULL);
      if (rc == CUDA_SUCCESS) keep(3, p);
      printf("%s %d\n", c, rc), ++i;
    } else if (!strcmp(c, "pitch")) {
      size_t pitch = 0;
      rc = cuMemAllocPitch_v2(&p, &pitch, num(a1), num(a2), 4);
      if (rc == CUDA_SUCCESS) keep(0, p);
      printf("pitch %d %zu\n", rc, pitch), i += 2;
    } else if (!strcmp(c, "array")) {
      CUDA_ARRAY_DESCRIPTOR d = {num(a1), num(a2), CU_AD_FORMAT_FLOAT, 1};
      CUarray arr = NULL;
      rc = cuArrayCreate_v2(&arr, &d);
      if (rc == CUDA_SUCCESS) keep(2, (unsigned long long)(uintptr_t)arr);
      printf("array %d\n", rc), i += 2;
    } else if (!strcmp(c, "array3d")) {
      CUDA_ARRAY3D_DESCRIPTOR d = {num(a1), num(a2), num(a3), CU_AD_FORMAT_FLOAT, 1, 0};
      CUarray arr = NULL;
      rc = cuArray3DCreate_v2(&arr, &d);
      if (rc == CUDA_SUCCESS) keep(2, (unsigned long long)(uintptr_t)arr);
      printf("array3d %d\n", rc), i += 3;
    } else if (!strcmp(c, "free")) {
      if (nheld == 0) {
        printf("free none\n");
        continue;
      }
      held_t h = held[--nheld];
      if (h.kind == 0) rc = cuMemFree_v2(h.key);
      else if (h.kind == 1) rc = cuMemRelease(h.key);
      else if (h.kind == 2) rc = cuArrayDestroy((CUarray)(uintptr_t)h.key);
      else rc = cuMemFreeAsync(h.key, NULL);
      printf("free %d\n", rc);
    } else if (!strcmp(c, "info")) {
      size_t f = 0, t = 0;
      rc = cuMemGetInfo_v2(&f, &t);
      printf("info %d %zu %zu\n", rc, f, t);
    } else if (!strcmp(c, "total")) {
      size_t t = 0;
      rc = cuDeviceTotalMem_v2(&t, device);
      printf("total %d %zu\n", rc, t);
    } else if (!strcmp(c, "nvml")) {
      void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
      nvmlReturn_t (*init)(void) = h ? (nvmlReturn_t(*)(void))dlsym(h, "nvmlInit_v2") : NULL;
      nvmlReturn_t (*get)(unsigned, nvmlDevice_t*) =
          h ? (nvmlReturn_t(*)(unsigned, nvmlDevice_t*))dlsym(h, "nvmlDeviceGetHandleByIndex_v2") : NULL;
      nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t*) =
          h ? (nvmlReturn_t(*)(nvmlDevice_t, nvmlMemory_t*))dlsym(h, "nvmlDeviceGetMemoryInfo") : NULL;
      nvmlDevice_t dev = NULL;
      nvmlMemory_t m = {0, 0, 0};
      int r = (!init || !get || !mem) ? -1 : init();
      if (r == 0) r = get((unsigned)device, &dev);
      if (r == 0) r = mem(dev, &m);
      printf("nvml %d %llu %llu %llu\n", r, m.total, m.free, m.used);
    } else if (!strcmp(c, "proc")) {
      void* fn = NULL;
      rc = cuGetProcAddress(a1, &fn, (int)num(a2), num(a3));
      printf("proc %d %s\n", rc, where(fn)), i += 3;
    } else if (!strcmp(c, "rtalloc")) {
      void* h = dlopen("libcuda.so.1", RTLD_NOW);
      CUresult (*gpa)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*) =
          h ? (CUresult(*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*))dlsym(
                  h, "cuGetProcAddress_v2")
            : NULL;
      CUresult (*alloc)(CUdeviceptr*, size_t) = NULL;
      CUdriverProcAddressQueryResult st;
      rc = gpa ? gpa("cuMemAlloc", (void**)&alloc, 12040, 0, &st) : CUDA_ERROR_NOT_FOUND;
      if (rc == CUDA_SUCCESS && alloc) rc = alloc(&p, num(a1));
      if (rc == CUDA_SUCCESS) keep(0, p);
      printf("rtalloc %d %s\n", rc, where((void*)gpa)), ++i;
    } else if (!strcmp(c, "rtld_next")) {
      printf("rtld_next %s\n", dlsym(RTLD_NEXT, "dlsym") == dlsym(RTLD_DEFAULT, "dlsym") ? "ok" : "wrong");
    } else if (!strcmp(c, "setenv")) {
      setenv(a1, a2, 1), i += 2;
    } else if (!strcmp(c, "getenv")) {
      const char* v = getenv(a1);
      printf("getenv %s\n", v ? v : ""), ++i;
    } else if (!strcmp(c, "system")) {
      fflush(stdout);
      if (system(a1) == -1) printf("system failed\n");
      ++i;
    } else if (!strcmp(c, "unsetenv")) {
      unsetenv(a1), ++i;
    } else if (!strcmp(c, "fork")) {
      pid_t pid = fork();
      if (pid == 0) {
        nheld = 0;
        continue; /* the child runs the rest */
      }
      int status = 0;
      waitpid(pid, &status, 0);
      return 0;
    } else if (!strcmp(c, "exec")) {
      argv[i] = argv[0];
      execv("/proc/self/exe", argv + i);
      printf("exec failed\n");
      return 1;
    } else if (!strcmp(c, "work")) {
      CUmodule mod;
      CUfunction f = NULL;
      char name[64];
      snprintf(name, sizeof(name), "busy_%sus", a2);
      CUgraphExec g = vgpu_stub_cuda_graph((unsigned)num(a2));
      rc = cuModuleLoadData(&mod, "stub");
      if (rc == CUDA_SUCCESS) rc = cuModuleGetFunction(&f, mod, name);
      double t0 = now_ms(), end = t0 + atof(a1) * 1e3;
      unsigned long long busy0 = vgpu_stub_cuda_busy_ns(), n = 0;
      while (rc == CUDA_SUCCESS && now_ms() < end) {
        rc = launch(a3, f, g);
        if (rc == CUDA_SUCCESS) rc = cuCtxSynchronize();
        ++n;
      }
      printf("work %llu %.1f %.1f\n", rc == CUDA_SUCCESS ? n : 0ULL, (vgpu_stub_cuda_busy_ns() - busy0) / 1e6,
             now_ms() - t0);
      i += 3;
    } else if (!strcmp(c, "hold")) {
      printf("hold\n");
      for (;;) pause();
    } else {
      fprintf(stderr, "cuda_probe: unknown command %s\n", c);
      return 2;
    }
  }
  return 0;
}
