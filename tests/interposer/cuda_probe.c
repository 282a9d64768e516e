/* cuda_probe: a CUDA driver API program for the interposer tests. Runs the
 * commands of its arguments in order and prints one line per command, so a
 * test drives each allocation path and reads back what the driver (the
 * stub, behind libvgpu.so when preloaded) answered.
 *
 *   init [ORDINAL]          cuInit, cuDeviceGet, cuCtxCreate       -> "init RC"
 *   alloc|managed|create|async|async_ptsz|pool|pool_ptsz BYTES      -> "<cmd> RC"
 *                           (pool: from the device's default pool)
 *   pitch WIDTH HEIGHT                                             -> "pitch RC PITCH"
 *   array W H | array3d W H D  (1-channel float)                   -> "<cmd> RC"
 *   mipmap W H LEVELS       cuMipmappedArrayCreate (float)          -> "mipmap RC"
 *   mipmapl W H LAYERS LEVELS  the same, layered                   -> "mipmapl RC"
 *   v1alloc BYTES           cuMemAlloc, the v1 (32-bit) entry point -> "v1alloc RC"
 *   setlimit stack|printf|heap VALUE  cuCtxSetLimit                 -> "setlimit RC"
 *   free                    frees the newest allocation still held -> "free RC"
 *   vmap BYTES              as PyTorch's expandable segments grow: cuMemCreate
 *                           BYTES, cuMemMap at the end of one reserved
 *                           address range, cuMemSetAccess            -> "vmap RC"
 *   vrelease                cuMemRelease of the newest mapping's handle,
 *                           mapping kept (as NCCL does)             -> "vrelease RC"
 *   vretain                 cuMemRetainAllocationHandle of the newest
 *                           mapping (one more reference to release)  -> "vretain RC"
 *   vunmap                  cuMemUnmap of the newest mapping          -> "vunmap RC"
 *   vfree                   as expandable segments shrink: cuMemUnmap
 *                           the newest mapping, then cuMemRelease   -> "vfree RC"
 *   mcbind | mcbindaddr     a multicast object the newest mapping's size,
 *                           its memory bound by handle | by address -> "<cmd> RC"
 *   mcunbind | mcrelease    cuMulticastUnbind | cuMemRelease of it  -> "<cmd> RC"
 *   threshold BYTES         the release threshold of the device's default
 *                           pool (PyTorch's cudaMallocAsync backend sets
 *                           UINT64_MAX: freed memory stays in the pool) -> "threshold RC"
 *   trim BYTES              cuMemPoolTrimTo of the default pool       -> "trim RC"
 *   sync                    cuCtxSynchronize (pools give back memory
 *                           above their threshold)                  -> "sync RC"
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
 *                           ptsz, ex, coop, graph, otherctx: into a
 *                           stream of device 1's context while the
 *                           device of init stays current), synchronising after
 *                           each                                    -> "work N BUSY_MS WALL_MS"
 *   hold                    prints "hold", sleeps until killed
 * Graphs that allocate memory (the address of each allocation node is held
 * at once, for `free` after a launch: cuMemFreeAsync):
 *   gnode BYTES             cuGraphAddMemAllocNode on the device, to the
 *                           current graph (made if there is none) -> "gnode RC"
 *   gaddnode BYTES          the same through cuGraphAddNode         -> "gaddnode RC"
 *   gchild                  a new graph with the current one moved in as
 *                           a child graph (cuGraphAddNode), now current -> "gchild RC"
 *   capture | endcapture    cuStreamBeginCapture (global mode) /
 *                           cuStreamEndCapture of a stream that async,
 *                           pool and klaunch then use; the captured graph
 *                           becomes current                        -> "<cmd> RC"
 *   afree                   cuMemFreeAsync of the newest allocation on it -> "afree RC"
 *   klaunch N               N launches of a 500 us kernel on that stream
 *                           (the legacy one outside a capture)     -> "klaunch RC"
 *   ginst flags|old|v2|params|upload  instantiates the current graph with
 *                           cuGraphInstantiateWithFlags, cuGraphInstantiate,
 *                           _v2, WithParams, or WithParams and the
 *                           upload flag                             -> "ginst RC"
 *   glaunch                 cuGraphLaunch of the newest instance    -> "glaunch RC"
 *   gupload                 cuGraphUpload of the newest instance    -> "gupload RC"
 *   gdestroy                cuGraphExecDestroy of the newest instance -> "gdestroy RC"
 *   gtrim                   cuDeviceGraphMemTrim                    -> "gtrim RC"
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_api.h"
#include "nvml_api.h"
#include "probe_common.h"

/* held_t kinds: which call frees the allocation. */
enum { HELD_PTR, HELD_HANDLE, HELD_ARRAY, HELD_ASYNC, HELD_MIPMAP };

/* Stub-only (tests/stubs): device time this process's kernels took; a
 * graph of duration_us microseconds. */
unsigned long long vgpu_stub_cuda_busy_ns(void);
CUgraphExec vgpu_stub_cuda_graph(unsigned int duration_us);

static CUfunction work_function;

static int work_load(const char* name) {
  CUmodule mod;
  CUresult rc = cuModuleLoadData(&mod, "stub");
  work_function = NULL;
  if (rc == CUDA_SUCCESS) rc = cuModuleGetFunction(&work_function, mod, name);
  return rc;
}

/* A stream of a context on device 1, made while the current context (on
 * the device of `init`) stays current: for launches into another
 * context's stream, as a CUkernel may be launched. */
static CUstream other_stream;
static CUstream other_context_stream(void) {
  CUcontext here = NULL, there = NULL;
  CUdevice d1 = 0;
  if (other_stream) return other_stream;
  if (cuCtxGetCurrent(&here) == CUDA_SUCCESS && cuDeviceGet(&d1, 1) == CUDA_SUCCESS &&
      cuCtxCreate_v2(&there, 0, d1) == CUDA_SUCCESS && cuStreamCreate(&other_stream, 0) != CUDA_SUCCESS)
    other_stream = NULL;
  cuCtxSetCurrent(here);
  return other_stream;
}

static int work_sync(void) {
  int rc = cuCtxSynchronize();
  return rc == CUDA_SUCCESS && other_stream ? cuStreamSynchronize(other_stream) : rc;
}

/* MODE: kernel (cuLaunchKernel), ptsz, ex, coop, graph, otherctx
 * (cuLaunchKernel into a stream of device 1's context), and the launches
 * before CUDA 4.0 (launch: cuLaunch, grid: cuLaunchGrid, gridasync) and
 * multi (cuLaunchCooperativeKernelMultiDevice with one entry). */
static int work_launch(const char* mode, unsigned int us) {
  CUfunction f = work_function;
  CUDA_LAUNCH_PARAMS lp = {f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL};
  if (!strcmp(mode, "launch")) return cuLaunch(f);
  if (!strcmp(mode, "grid")) return cuLaunchGrid(f, 1, 1);
  if (!strcmp(mode, "gridasync")) return cuLaunchGridAsync(f, 1, 1, NULL);
  if (!strcmp(mode, "multi")) return cuLaunchCooperativeKernelMultiDevice(&lp, 1, 0);
  if (!strcmp(mode, "ptsz")) return cuLaunchKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  if (!strcmp(mode, "coop")) return cuLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL);
  if (!strcmp(mode, "graph")) return cuGraphLaunch(vgpu_stub_cuda_graph(us), NULL);
  if (!strcmp(mode, "otherctx")) {
    CUstream s = other_context_stream();
    return s ? cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL) : CUDA_ERROR_INVALID_CONTEXT;
  }
  if (!strcmp(mode, "ex")) {
    CUlaunchConfig c;
    memset(&c, 0, sizeof(c));
    c.gridDimX = c.gridDimY = c.gridDimZ = c.blockDimX = c.blockDimY = c.blockDimZ = 1;
    return cuLaunchKernelEx(&c, f, NULL, NULL);
  }
  return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
}

static const probe_api api = {work_load, work_launch, work_sync, vgpu_stub_cuda_busy_ns};

static CUdevice device = 0; /* the device of `init` */

/* vmm_api over the driver (probe_common.h). */
static int vmm_reserve(uintptr_t* va, size_t bytes) {
  CUdeviceptr p = 0;
  int rc = cuMemAddressReserve(&p, bytes, 0, 0, 0);
  *va = (uintptr_t)p;
  return rc;
}
static CUmemAllocationProp device_prop(void) {
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof(prop));
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}
static int vmm_create(uint64_t* h, size_t bytes) {
  CUmemAllocationProp prop = device_prop();
  CUmemGenericAllocationHandle handle = 0;
  int rc = cuMemCreate(&handle, bytes, &prop, 0);
  *h = handle;
  return rc;
}
static int vmm_map(uintptr_t va, size_t bytes, uint64_t h) {
  CUmemAccessDesc access = {device_prop().location, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  int rc = cuMemMap(va, bytes, 0, h, 0);
  return rc == CUDA_SUCCESS ? cuMemSetAccess(va, bytes, &access, 1) : rc;
}
static int vmm_unmap(uintptr_t va, size_t bytes) { return cuMemUnmap(va, bytes); }
static int vmm_release(uint64_t h) { return cuMemRelease(h); }
static int vmm_retain(uint64_t* h, uintptr_t va) {
  CUmemGenericAllocationHandle handle = 0;
  int rc = cuMemRetainAllocationHandle(&handle, (void*)va);
  *h = handle;
  return rc;
}
static const vmm_api vmm = {vmm_reserve, vmm_create, vmm_map, vmm_unmap, vmm_release, vmm_retain};

/* The graph commands' state: the current graph, the newest instance, and
 * the stream allocations go to (a stream in capture, or the legacy one). */
static CUgraph graph;
static CUgraphExec graph_exec;
static CUstream stream;

static int graph_command(const char* c, const char* a1, int* i) {
  CUresult rc;
  if (!strcmp(c, "gnode") || !strcmp(c, "gaddnode")) {
    CUgraphNodeParams params;
    CUgraphNode node;
    memset(&params, 0, sizeof(params));
    params.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    params.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    params.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    params.alloc.poolProps.location.id = device;
    params.alloc.bytesize = num(a1);
    rc = graph ? CUDA_SUCCESS : cuGraphCreate(&graph, 0);
    if (rc == CUDA_SUCCESS)
      rc = !strcmp(c, "gnode") ? cuGraphAddMemAllocNode(&node, graph, NULL, 0, &params.alloc)
                               : cuGraphAddNode(&node, graph, NULL, 0, &params);
    allocated(c, rc, HELD_ASYNC, params.alloc.dptr), ++*i;
  } else if (!strcmp(c, "gchild")) {
    CUgraph parent = NULL;
    CUgraphNodeParams params;
    CUgraphNode node;
    memset(&params, 0, sizeof(params));
    params.type = CU_GRAPH_NODE_TYPE_GRAPH;
    params.graph.graph = graph;
    params.graph.ownership = 1; /* moved into the parent */
    rc = cuGraphCreate(&parent, 0);
    if (rc == CUDA_SUCCESS) rc = cuGraphAddNode(&node, parent, NULL, 0, &params);
    if (rc == CUDA_SUCCESS) graph = parent;
    printf("gchild %d\n", rc);
  } else if (!strcmp(c, "afree")) {
    held_t h;
    printf("afree %d\n", take(&h) ? cuMemFreeAsync(h.key, stream) : -1);
  } else if (!strcmp(c, "klaunch")) {
    unsigned long n = num(a1);
    rc = work_load("busy_500us");
    for (unsigned long k = 0; k < n && rc == CUDA_SUCCESS; ++k)
      rc = cuLaunchKernel(work_function, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL);
    printf("klaunch %d\n", rc), ++*i;
  } else if (!strcmp(c, "capture")) {
    stream = (CUstream)(uintptr_t)0x5;
    printf("capture %d\n", cuStreamBeginCapture_v2(stream, 0));
  } else if (!strcmp(c, "endcapture")) {
    printf("endcapture %d\n", cuStreamEndCapture(stream, &graph));
    stream = NULL;
  } else if (!strcmp(c, "ginst")) {
    if (!strcmp(a1, "old")) rc = cuGraphInstantiate(&graph_exec, graph, NULL, NULL, 0);
    else if (!strcmp(a1, "v2")) rc = cuGraphInstantiate_v2(&graph_exec, graph, NULL, NULL, 0);
    else if (!strcmp(a1, "params")) rc = cuGraphInstantiateWithParams(&graph_exec, graph, NULL);
    else if (!strcmp(a1, "upload")) {
      CUDA_GRAPH_INSTANTIATE_PARAMS params;
      memset(&params, 0, sizeof(params));
      params.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
      rc = cuGraphInstantiateWithParams(&graph_exec, graph, &params);
      if ((rc == CUDA_SUCCESS) != (params.result_out == 0)) rc = -1; /* result_out must agree */
    }
    else rc = cuGraphInstantiateWithFlags(&graph_exec, graph, 0);
    printf("ginst %d\n", rc), ++*i;
  } else if (!strcmp(c, "gupload")) {
    printf("gupload %d\n", cuGraphUpload(graph_exec, NULL));
  } else if (!strcmp(c, "glaunch")) {
    printf("glaunch %d\n", cuGraphLaunch(graph_exec, NULL));
  } else if (!strcmp(c, "gdestroy")) {
    printf("gdestroy %d\n", cuGraphExecDestroy(graph_exec));
  } else if (!strcmp(c, "gtrim")) {
    printf("gtrim %d\n", cuDeviceGraphMemTrim(device));
  } else {
    return 0;
  }
  return 1;
}

/* Multicast (NVLink SHARP, as NCCL uses it): an object the size of the
 * newest mapping, that mapping's memory bound to it by handle or address,
 * and unbound. */
static CUmemGenericAllocationHandle mc_object;
static size_t mc_size;
static int multicast_command(const char* c) {
  CUresult rc = -1;
  if (!strcmp(c, "mcbind") || !strcmp(c, "mcbindaddr")) {
    CUmulticastObjectProp prop = {1, 0, 0, 0};
    if (vmm_nmaps == 0) return printf("%s -1\n", c), 1;
    prop.size = mc_size = vmm_maps[vmm_nmaps - 1].size;
    rc = cuMulticastCreate(&mc_object, &prop);
    if (rc == CUDA_SUCCESS) rc = cuMulticastAddDevice(mc_object, device);
    if (rc == CUDA_SUCCESS && !strcmp(c, "mcbind"))
      rc = cuMulticastBindMem(mc_object, 0, vmm_maps[vmm_nmaps - 1].handle, 0, mc_size, 0);
    else if (rc == CUDA_SUCCESS)
      rc = cuMulticastBindAddr(mc_object, 0, vmm_maps[vmm_nmaps - 1].va, mc_size, 0);
  } else if (!strcmp(c, "mcunbind")) {
    rc = cuMulticastUnbind(mc_object, device, 0, mc_size);
  } else if (!strcmp(c, "mcrelease")) {
    rc = cuMemRelease(mc_object);
  } else {
    return 0;
  }
  printf("%s %d\n", c, rc);
  return 1;
}

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
    const char *a1 = arg(argc, argv, i + 1), *a2 = arg(argc, argv, i + 2), *a3 = arg(argc, argv, i + 3);
    CUresult rc;
    CUdeviceptr p = 0;
    if (!strcmp(c, "init")) {
      int ordinal = ordinal_arg(argc, argv, &i);
      CUcontext ctx;
      rc = cuInit(0);
      if (rc == CUDA_SUCCESS) rc = cuDeviceGet(&device, ordinal);
      if (rc == CUDA_SUCCESS) rc = cuCtxCreate_v2(&ctx, 0, device);
      printf("init %d\n", rc);
    } else if (!strcmp(c, "alloc")) {
      rc = cuMemAlloc_v2(&p, num(a1));
      allocated(c, rc, HELD_PTR, p), ++i;
    } else if (!strcmp(c, "managed")) {
      rc = cuMemAllocManaged(&p, num(a1), 1);
      allocated(c, rc, HELD_PTR, p), ++i;
    } else if (!strcmp(c, "create")) {
      CUmemAllocationProp prop;
      CUmemGenericAllocationHandle h = 0;
      memset(&prop, 0, sizeof(prop));
      prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
      prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      prop.location.id = device;
      rc = cuMemCreate(&h, num(a1), &prop, 0);
      allocated(c, rc, HELD_HANDLE, h), ++i;
    } else if (!strcmp(c, "async") || !strcmp(c, "async_ptsz")) {
      rc = !strcmp(c, "async") ? cuMemAllocAsync(&p, num(a1), stream) : cuMemAllocAsync_ptsz(&p, num(a1), stream);
      allocated(c, rc, HELD_ASYNC, p), ++i;
    } else if (!strcmp(c, "pool") || !strcmp(c, "pool_ptsz")) {
      CUmemoryPool pool = NULL;
      rc = cuDeviceGetDefaultMemPool(&pool, device);
      if (rc == CUDA_SUCCESS)
        rc = !strcmp(c, "pool") ? cuMemAllocFromPoolAsync(&p, num(a1), pool, stream)
                                : cuMemAllocFromPoolAsync_ptsz(&p, num(a1), pool, stream);
      allocated(c, rc, HELD_ASYNC, p), ++i;
    } else if (!strcmp(c, "pitch")) {
      size_t pitch = 0;
      rc = cuMemAllocPitch_v2(&p, &pitch, num(a1), num(a2), 4);
      if (rc == CUDA_SUCCESS) keep(HELD_PTR, p);
      printf("pitch %d %zu\n", rc, pitch), i += 2;
    } else if (!strcmp(c, "array")) {
      CUDA_ARRAY_DESCRIPTOR d = {num(a1), num(a2), CU_AD_FORMAT_FLOAT, 1};
      CUarray arr = NULL;
      rc = cuArrayCreate_v2(&arr, &d);
      allocated(c, rc, HELD_ARRAY, (uintptr_t)arr), i += 2;
    } else if (!strcmp(c, "array3d")) {
      CUDA_ARRAY3D_DESCRIPTOR d = {num(a1), num(a2), num(a3), CU_AD_FORMAT_FLOAT, 1, 0};
      CUarray arr = NULL;
      rc = cuArray3DCreate_v2(&arr, &d);
      allocated(c, rc, HELD_ARRAY, (uintptr_t)arr), i += 3;
    } else if (!strcmp(c, "mipmap")) {
      CUDA_ARRAY3D_DESCRIPTOR d = {num(a1), num(a2), 0, CU_AD_FORMAT_FLOAT, 1, 0};
      CUmipmappedArray m = NULL;
      rc = cuMipmappedArrayCreate(&m, &d, (unsigned int)num(a3));
      allocated(c, rc, HELD_MIPMAP, (uintptr_t)m), i += 3;
    } else if (!strcmp(c, "mipmapl")) {
      CUDA_ARRAY3D_DESCRIPTOR d = {num(a1), num(a2), num(a3), CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED};
      CUmipmappedArray m = NULL;
      rc = cuMipmappedArrayCreate(&m, &d, (unsigned int)num(arg(argc, argv, i + 4)));
      allocated(c, rc, HELD_MIPMAP, (uintptr_t)m), i += 4;
    } else if (!strcmp(c, "setlimit")) {
      CUlimit l = !strcmp(a1, "stack") ? CU_LIMIT_STACK_SIZE : !strcmp(a1, "printf") ? CU_LIMIT_PRINTF_FIFO_SIZE
                                                                                   : CU_LIMIT_MALLOC_HEAP_SIZE;
      printf("setlimit %d\n", cuCtxSetLimit(l, num(a2))), i += 2;
    } else if (!strcmp(c, "v1alloc")) {
      CUdeviceptr_v1 p1 = 0;
      printf("v1alloc %d\n", cuMemAlloc(&p1, (unsigned int)num(a1))), ++i;
    } else if (!strcmp(c, "free")) {
      held_t h;
      if (!take(&h)) continue;
      if (h.kind == HELD_PTR) rc = cuMemFree_v2(h.key);
      else if (h.kind == HELD_HANDLE) rc = cuMemRelease(h.key);
      else if (h.kind == HELD_ARRAY) rc = cuArrayDestroy((CUarray)(uintptr_t)h.key);
      else if (h.kind == HELD_MIPMAP) rc = cuMipmappedArrayDestroy((CUmipmappedArray)(uintptr_t)h.key);
      else rc = cuMemFreeAsync(h.key, NULL);
      printf("free %d\n", rc);
    } else if (vmm_command(&vmm, argc, argv, &i)) {
    } else if (graph_command(c, a1, &i)) {
    } else if (multicast_command(c)) {
    } else if (!strcmp(c, "threshold") || !strcmp(c, "trim")) {
      CUmemoryPool pool = NULL;
      cuuint64_t v = num(a1);
      rc = cuDeviceGetDefaultMemPool(&pool, device);
      if (rc == CUDA_SUCCESS)
        rc = !strcmp(c, "trim") ? cuMemPoolTrimTo(pool, v)
                                : cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v);
      printf("%s %d\n", c, rc), ++i;
    } else if (!strcmp(c, "sync")) {
      printf("sync %d\n", cuCtxSynchronize());
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
      if (rc == CUDA_SUCCESS) keep(HELD_PTR, p);
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
    } else {
      int status = probe_shared(&api, "cuda_probe", argc, argv, &i);
      if (status >= 0) return status;
    }
  }
  return 0;
}
