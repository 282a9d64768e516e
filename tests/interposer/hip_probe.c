/* hip_probe: a HIP runtime API program for the interposer tests, the twin
 * of cuda_probe. Runs the commands of its arguments in order and prints one
 * line per command, so a test drives each allocation path and reads back
 * what the runtime (the stub, behind libvgpu.so when preloaded) answered.
 *
 *   init [ORDINAL]          hipSetDevice                           -> "init RC"
 *   alloc|ext|managed|async|pool BYTES                             -> "<cmd> RC"
 *                           hipMalloc, hipExtMallocWithFlags (0),
 *                           hipMallocManaged (1), hipMallocAsync and
 *                           hipMallocFromPoolAsync (the device's
 *                           default pool, NULL stream)
 *   setlimit heap|printf|stack VALUE  hipDeviceSetLimit            -> "setlimit RC"
 *   threshold BYTES | trim BYTES | sync
 *                           the default pool's release threshold,
 *                           hipMemPoolTrimTo, hipDeviceSynchronize  -> "<cmd> RC"
 *   pitch WIDTH HEIGHT      hipMallocPitch                         -> "pitch RC PITCH"
 *   mempitch WIDTH HEIGHT   hipMemAllocPitch (4-byte elements)      -> "mempitch RC PITCH"
 *   malloc3d W H D          hipMalloc3D (W bytes a row)              -> "malloc3d RC PITCH"
 *   array W H | array3d W H D | arraycreate W H | array3dcreate W H D
 *                           hipMallocArray, hipMalloc3DArray,
 *                           hipArrayCreate, hipArray3DCreate (one
 *                           32-bit float channel)                   -> "<cmd> RC"
 *   mipmap W H LEVELS       hipMallocMipmappedArray (float)         -> "mipmap RC"
 *   mipmap3d W H D LEVELS FLAGS | mipmapcreate W H D LEVELS FLAGS
 *                           hipMallocMipmappedArray with a depth and
 *                           flags (1: layered), hipMipmappedArrayCreate
 *                           (float; `free` frees it with
 *                           hipMipmappedArrayDestroy)               -> "<cmd> RC"
 *   mmfree destroy|free     frees the newest allocation held with
 *                           hipMipmappedArrayDestroy or
 *                           hipFreeMipmappedArray, however it was made -> "mmfree RC"
 *   managedvar NAME BYTES   __hipRegisterManagedVar of a variable NAME
 *                           (what a module constructor does for a
 *                           __managed__ variable); whether the runtime
 *                           set its pointer                        -> "managedvar set|null"
 *   sym NAME                dlsym of NAME in libamdhip64.so: which
 *                           library the function is in              -> "sym libvgpu|libamdhip64|none"
 *   stream ORDINAL          hipStreamCreate on device ORDINAL (then
 *                           back to the device of `init`): the stream
 *                           async and pool use from then on         -> "stream RC"
 *   devpool ORDINAL BYTES   hipMallocFromPoolAsync from device ORDINAL's
 *                           default pool                           -> "devpool RC"
 *   mkpool ORDINAL | frompool BYTES
 *                           hipMemPoolCreate on device ORDINAL;
 *                           hipMallocFromPoolAsync from that pool   -> "<cmd> RC"
 *   vmap BYTES | vrelease | vunmap | vfree
 *                           as cuda_probe's, with hipMemCreate,
 *                           hipMemMap, hipMemUnmap, hipMemRelease   -> "<cmd> RC"
 *   proc NAME FLAGS         hipGetProcAddress; which library the
 *                           entry point is in                      -> "proc RC libvgpu|libamdhip64|none"
 *   procalloc BYTES         hipMalloc found through hipGetProcAddress -> "procalloc RC"
 *   dlvsym BYTES            hipMalloc found with dlvsym(.., "hip_4.2"),
 *                           allocate                               -> "dlvsym RC libvgpu|libamdhip64"
 *   free                    frees the newest allocation still held
 *                           (hipFreeAsync for async/pool ones,
 *                           hipFreeArray, hipArrayDestroy or
 *                           hipFreeMipmappedArray for arrays)       -> "free RC"
 *   info                    hipMemGetInfo                          -> "info RC FREE TOTAL"
 *   total                   hipDeviceTotalMem of the device        -> "total RC BYTES"
 *   work SECONDS US MODE    launches US-microsecond kernels of the stub
 *                           back to back for SECONDS (MODE: kernel =
 *                           hipLaunchKernel, module, graph and the
 *                           others of work_launch), synchronising after
 *                           each                                    -> "work N BUSY_MS WALL_MS"
 *   hold                    prints "hold", sleeps until killed
 *   gnode BYTES | gaddnode BYTES | capture | endcapture | klaunch N | afree
 *   | gchild | gaddchild | gclone (a new graph with the current one cloned in
 *     by hipGraphAddChildGraphNode or hipGraphAddNode, or a clone; now current)
 *   | ginst flags|old|params|upload | gupload | glaunch | gdestroy | gtrim
 *                           graphs that allocate memory, as cuda_probe's
 *                           (hipGraphAddMemAllocNode, hipGraphAddNode,
 *                           hipStreamBeginCapture/EndCapture of a stream
 *                           async and pool then use, hipGraphInstantiate*,
 *                           hipGraphUpload, hipGraphLaunch,
 *                           hipGraphExecDestroy, hipDeviceGraphMemTrim) -> "<cmd> RC"
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_api.h"
#include "probe_common.h"

/* held_t kinds: which call frees the pointer. */
enum { HELD_PTR, HELD_ASYNC, HELD_ARRAY, HELD_ARRAY_DESTROY, HELD_MIPMAP, HELD_MIPMAP_DESTROY };

static const hipChannelFormatDesc kFloat = {32, 0, 0, 0, hipChannelFormatKindFloat};

static int device = 0; /* the device of `init` */

/* vmm_api over the runtime (probe_common.h). */
static int vmm_reserve(uintptr_t* va, size_t bytes) {
  void* p = NULL;
  int rc = hipMemAddressReserve(&p, bytes, 0, NULL, 0);
  *va = (uintptr_t)p;
  return rc;
}
static int vmm_create(uint64_t* h, size_t bytes) {
  hipMemAllocationProp prop;
  hipMemGenericAllocationHandle_t handle = NULL;
  memset(&prop, 0, sizeof(prop));
  prop.type = hipMemAllocationTypePinned;
  prop.location.type = hipMemLocationTypeDevice;
  prop.location.id = device;
  int rc = hipMemCreate(&handle, bytes, &prop, 0);
  *h = (uint64_t)(uintptr_t)handle;
  return rc;
}
static int vmm_map(uintptr_t va, size_t bytes, uint64_t h) {
  return hipMemMap((void*)va, bytes, 0, (hipMemGenericAllocationHandle_t)(uintptr_t)h, 0);
}
static int vmm_unmap(uintptr_t va, size_t bytes) { return hipMemUnmap((void*)va, bytes); }
static int vmm_release(uint64_t h) { return hipMemRelease((hipMemGenericAllocationHandle_t)(uintptr_t)h); }
static const vmm_api vmm = {vmm_reserve, vmm_create, vmm_map, vmm_unmap, vmm_release, NULL};

static const char* where(void* fn);
static int work_load(const char* name);
static hipFunction_t work_function;

/* The graph commands' state, as cuda_probe's. */
static hipGraph_t graph;
static hipGraphExec_t graph_exec;
static hipStream_t stream;

static int graph_command(const char* c, const char* a1, int* i) {
  hipError_t rc;
  if (!strcmp(c, "gnode") || !strcmp(c, "gaddnode")) {
    hipGraphNodeParams params;
    hipGraphNode_t node;
    memset(&params, 0, sizeof(params));
    params.type = hipGraphNodeTypeMemAlloc;
    params.alloc.poolProps.allocType = hipMemAllocationTypePinned;
    params.alloc.poolProps.location.type = hipMemLocationTypeDevice;
    params.alloc.poolProps.location.id = device;
    params.alloc.bytesize = num(a1);
    rc = graph ? hipSuccess : hipGraphCreate(&graph, 0);
    if (rc == hipSuccess)
      rc = !strcmp(c, "gnode") ? hipGraphAddMemAllocNode(&node, graph, NULL, 0, &params.alloc)
                               : hipGraphAddNode(&node, graph, NULL, 0, &params);
    allocated(c, rc, HELD_ASYNC, (uintptr_t)params.alloc.dptr), ++*i;
  } else if (!strcmp(c, "gchild") || !strcmp(c, "gaddchild") || !strcmp(c, "gclone")) {
    hipGraph_t made = NULL;
    hipGraphNode_t node;
    hipGraphNodeParams params;
    memset(&params, 0, sizeof(params));
    params.type = hipGraphNodeTypeGraph;
    params.graph.graph = graph;
    if (!strcmp(c, "gclone")) rc = hipGraphClone(&made, graph);
    else if ((rc = hipGraphCreate(&made, 0)) == hipSuccess)
      rc = !strcmp(c, "gchild") ? hipGraphAddChildGraphNode(&node, made, NULL, 0, graph)
                                : hipGraphAddNode(&node, made, NULL, 0, &params);
    if (rc == hipSuccess) graph = made;
    printf("%s %d\n", c, rc);
  } else if (!strcmp(c, "afree")) {
    held_t h;
    printf("afree %d\n", take(&h) ? hipFreeAsync((void*)(uintptr_t)h.key, stream) : -1);
  } else if (!strcmp(c, "klaunch")) {
    unsigned long n = num(a1);
    rc = work_load("busy_500us");
    for (unsigned long k = 0; k < n && rc == hipSuccess; ++k)
      rc = hipModuleLaunchKernel(work_function, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL);
    printf("klaunch %d\n", rc), ++*i;
  } else if (!strcmp(c, "capture")) {
    stream = (hipStream_t)(uintptr_t)0x5;
    printf("capture %d\n", hipStreamBeginCapture(stream, 0));
  } else if (!strcmp(c, "endcapture")) {
    printf("endcapture %d\n", hipStreamEndCapture(stream, &graph));
    stream = NULL;
  } else if (!strcmp(c, "ginst")) {
    if (!strcmp(a1, "old")) rc = hipGraphInstantiate(&graph_exec, graph, NULL, NULL, 0);
    else if (!strcmp(a1, "params")) rc = hipGraphInstantiateWithParams(&graph_exec, graph, NULL);
    else if (!strcmp(a1, "upload")) {
      hipGraphInstantiateParams params;
      memset(&params, 0, sizeof(params));
      params.flags = hipGraphInstantiateFlagUpload;
      rc = hipGraphInstantiateWithParams(&graph_exec, graph, &params);
      if ((rc == hipSuccess) != (params.result_out == 0)) rc = -1; /* result_out must agree */
    }
    else rc = hipGraphInstantiateWithFlags(&graph_exec, graph, 0);
    printf("ginst %d\n", rc), ++*i;
  } else if (!strcmp(c, "gupload")) {
    printf("gupload %d\n", hipGraphUpload(graph_exec, NULL));
  } else if (!strcmp(c, "glaunch")) {
    printf("glaunch %d\n", hipGraphLaunch(graph_exec, NULL));
  } else if (!strcmp(c, "gdestroy")) {
    printf("gdestroy %d\n", hipGraphExecDestroy(graph_exec));
  } else if (!strcmp(c, "gtrim")) {
    printf("gtrim %d\n", hipDeviceGraphMemTrim(device));
  } else {
    return 0;
  }
  return 1;
}
static hipMemPool_t created_pool; /* of mkpool */

/* The commands of memory paths beyond the plain ones (see the top): 1 if
 * `c` is one of them. */
static int path_command(const char* c, int argc, char** argv, int* i) {
  const char *a1 = arg(argc, argv, *i + 1), *a2 = arg(argc, argv, *i + 2), *a3 = arg(argc, argv, *i + 3),
             *a4 = arg(argc, argv, *i + 4), *a5 = arg(argc, argv, *i + 5);
  hipError_t rc;
  void* p = NULL;
  if (!strcmp(c, "mipmap3d") || !strcmp(c, "mipmapcreate")) {
    hipMipmappedArray_t mm = NULL;
    unsigned int levels = (unsigned)num(a4), flags = (unsigned)num(a5);
    if (!strcmp(c, "mipmap3d")) {
      rc = hipMallocMipmappedArray(&mm, &kFloat, (hipExtent){num(a1), num(a2), num(a3)}, levels, flags);
    } else {
      HIP_ARRAY3D_DESCRIPTOR d = {num(a1), num(a2), num(a3), HIP_AD_FORMAT_FLOAT, 1, flags};
      rc = hipMipmappedArrayCreate(&mm, &d, levels);
    }
    allocated(c, rc, !strcmp(c, "mipmap3d") ? HELD_MIPMAP : HELD_MIPMAP_DESTROY, (uintptr_t)mm), *i += 5;
  } else if (!strcmp(c, "mmfree")) {
    held_t h;
    ++*i;
    if (!take(&h)) return 1;
    hipMipmappedArray_t mm = (hipMipmappedArray_t)(uintptr_t)h.key;
    printf("mmfree %d\n", !strcmp(a1, "destroy") ? hipMipmappedArrayDestroy(mm) : hipFreeMipmappedArray(mm));
  } else if (!strcmp(c, "managedvar")) {
    static char init[64];
    __hipRegisterManagedVar(NULL, &p, init, a1, num(a2), 0);
    printf("managedvar %s\n", p ? "set" : "null"), *i += 2;
  } else if (!strcmp(c, "sym")) {
    void* h = dlopen("libamdhip64.so", RTLD_NOW);
    printf("sym %s\n", where(h ? dlsym(h, a1) : NULL)), ++*i;
  } else if (!strcmp(c, "stream")) {
    int ordinal = (int)num(a1);
    rc = hipSetDevice(ordinal);
    if (rc == hipSuccess) rc = hipStreamCreate(&stream);
    hipSetDevice(device);
    printf("stream %d\n", rc), ++*i;
  } else if (!strcmp(c, "devpool")) {
    hipMemPool_t pool = NULL;
    rc = hipDeviceGetDefaultMemPool(&pool, (int)num(a1));
    if (rc == hipSuccess) rc = hipMallocFromPoolAsync(&p, num(a2), pool, stream);
    allocated(c, rc, HELD_ASYNC, (uintptr_t)p), *i += 2;
  } else if (!strcmp(c, "mkpool")) {
    hipMemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = (int)num(a1);
    printf("mkpool %d\n", hipMemPoolCreate(&created_pool, &props)), ++*i;
  } else if (!strcmp(c, "frompool")) {
    rc = hipMallocFromPoolAsync(&p, num(a1), created_pool, stream);
    allocated(c, rc, HELD_ASYNC, (uintptr_t)p), ++*i;
  } else {
    return 0;
  }
  return 1;
}

/* After an allocation found through `fn`: "<cmd> RC LIBRARY". */
static void allocated_where(const char* c, int rc, uintptr_t p, void* fn) {
  if (rc == hipSuccess) keep(HELD_PTR, p);
  printf("%s %d %s\n", c, rc, where(fn));
}

static const char* where(void* fn) {
  Dl_info info;
  if (!fn) return "none";
  if (!dladdr(fn, &info) || !info.dli_fname) return "unknown";
  if (strstr(info.dli_fname, "libvgpu")) return "libvgpu";
  if (strstr(info.dli_fname, "libamdhip64")) return "libamdhip64";
  return info.dli_fname;
}


/* Stub-only (tests/stubs): device time this process's kernels took; a
 * graph of duration_us microseconds. */
unsigned long long vgpu_stub_hip_busy_ns(void);
hipGraphExec_t vgpu_stub_hip_graph(unsigned int duration_us);

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
 * the multi-device forms with one entry: multi, extmulti, mmulti, and the
 * configured ones (ROCm 6.2+): exc (hipLaunchKernelExC), drvex
 * (hipDrvLaunchKernelEx), byptr (hipConfigureCall + hipLaunchByPtr,
 * before hip-clang), onstream (hipModuleLaunchKernel on the stream of
 * `stream N`), and memset, d2d, h2d (hipMemsetAsync, hipMemcpyAsync device
 * to device and host to device of US x 1000 bytes: blit kernels of US
 * microseconds on the stub's device, or none for h2d). */
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
  if (!strcmp(mode, "exc")) {
    hipLaunchConfig_t c = {one, one, 0, NULL, NULL, 0};
    return hipLaunchKernelExC(&c, fp, NULL);
  }
  if (!strcmp(mode, "drvex")) {
    HIP_LAUNCH_CONFIG c = {1, 1, 1, 1, 1, 1, 0, NULL, NULL, 0};
    return hipDrvLaunchKernelEx(&c, f, NULL, NULL);
  }
  if (!strcmp(mode, "memset") || !strcmp(mode, "d2d") || !strcmp(mode, "h2d")) {
    static char host[1];
    void* buf = (void*)(uintptr_t)0x1000; /* the stub moves no byte */
    size_t bytes = (size_t)us * 1000;      /* its blits run at 1 GB/s */
    if (!strcmp(mode, "memset")) return hipMemsetAsync(buf, 0, bytes, NULL);
    return hipMemcpyAsync(buf, !strcmp(mode, "d2d") ? buf : host, bytes,
                          !strcmp(mode, "d2d") ? hipMemcpyDeviceToDevice : hipMemcpyHostToDevice, NULL);
  }
  if (!strcmp(mode, "onstream")) return hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL);
  if (!strcmp(mode, "byptr")) {
    hipError_t rc = hipConfigureCall(one, one, 0, NULL);
    return rc == hipSuccess ? hipLaunchByPtr(fp) : rc;
  }
  return hipLaunchKernel(fp, one, one, NULL, 0, NULL);
}

/* The current device, and the stream of `stream` (onstream's). */
static int work_sync(void) {
  hipError_t rc = hipDeviceSynchronize();
  return rc == hipSuccess && stream ? hipStreamSynchronize(stream) : rc;
}

static const probe_api api = {work_load, work_launch, work_sync, vgpu_stub_hip_busy_ns};


int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; ++i) {
    const char* c = argv[i];
    const char *a1 = arg(argc, argv, i + 1), *a2 = arg(argc, argv, i + 2), *a3 = arg(argc, argv, i + 3);
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
      rc = hipMallocAsync(&p, num(a1), stream);
      allocated(c, rc, HELD_ASYNC, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "pool")) {
      hipMemPool_t pool = NULL;
      rc = hipDeviceGetDefaultMemPool(&pool, device);
      if (rc == hipSuccess) rc = hipMallocFromPoolAsync(&p, num(a1), pool, stream);
      allocated(c, rc, HELD_ASYNC, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "pitch")) {
      size_t pitch = 0;
      rc = hipMallocPitch(&p, &pitch, num(a1), num(a2));
      if (rc == hipSuccess) keep(HELD_PTR, (uintptr_t)p);
      printf("pitch %d %zu\n", rc, pitch), i += 2;
    } else if (!strcmp(c, "mempitch") || !strcmp(c, "malloc3d")) {
      size_t pitch = 0;
      if (!strcmp(c, "mempitch")) {
        rc = hipMemAllocPitch(&p, &pitch, num(a1), num(a2), 4), i += 2;
      } else {
        hipPitchedPtr pp = {NULL, 0, 0, 0};
        rc = hipMalloc3D(&pp, (hipExtent){num(a1), num(a2), num(a3)}), i += 3;
        p = pp.ptr, pitch = pp.pitch;
      }
      if (rc == hipSuccess) keep(HELD_PTR, (uintptr_t)p);
      printf("%s %d %zu\n", c, rc, pitch);
    } else if (!strcmp(c, "array") || !strcmp(c, "array3d") || !strcmp(c, "arraycreate") ||
               !strcmp(c, "array3dcreate") || !strcmp(c, "mipmap")) {
      hipArray_t a = NULL;
      hipMipmappedArray_t mm = NULL;
      int kind = HELD_ARRAY;
      if (!strcmp(c, "array")) {
        rc = hipMallocArray(&a, &kFloat, num(a1), num(a2), 0), i += 2;
      } else if (!strcmp(c, "array3d")) {
        rc = hipMalloc3DArray(&a, &kFloat, (hipExtent){num(a1), num(a2), num(a3)}, 0), i += 3;
      } else if (!strcmp(c, "arraycreate")) {
        HIP_ARRAY_DESCRIPTOR d = {num(a1), num(a2), HIP_AD_FORMAT_FLOAT, 1};
        rc = hipArrayCreate(&a, &d), i += 2, kind = HELD_ARRAY_DESTROY;
      } else if (!strcmp(c, "array3dcreate")) {
        HIP_ARRAY3D_DESCRIPTOR d = {num(a1), num(a2), num(a3), HIP_AD_FORMAT_FLOAT, 1, 0};
        rc = hipArray3DCreate(&a, &d), i += 3, kind = HELD_ARRAY_DESTROY;
      } else {
        rc = hipMallocMipmappedArray(&mm, &kFloat, (hipExtent){num(a1), num(a2), 0}, (unsigned)num(a3), 0), i += 3;
        a = (hipArray_t)mm, kind = HELD_MIPMAP;
      }
      allocated(c, rc, kind, (uintptr_t)a);
    } else if (!strcmp(c, "proc")) {
      void* fn = NULL;
      rc = hipGetProcAddress(a1, &fn, 60200, num(a2), NULL);
      printf("proc %d %s\n", rc, where(fn)), i += 2;
    } else if (!strcmp(c, "dlvsym")) {
      void* h = dlopen("libamdhip64.so", RTLD_NOW);
      hipError_t (*alloc)(void**, size_t) = h ? (hipError_t(*)(void**, size_t))dlvsym(h, "hipMalloc", "hip_4.2") : NULL;
      rc = alloc ? alloc(&p, num(a1)) : hipErrorNotFound;
      allocated_where(c, rc, (uintptr_t)p, (void*)alloc), ++i;
    } else if (!strcmp(c, "procalloc")) {
      hipError_t (*alloc)(void**, size_t) = NULL;
      rc = hipGetProcAddress("hipMalloc", (void**)&alloc, 60200, 0, NULL);
      if (rc == hipSuccess) rc = alloc(&p, num(a1));
      allocated(c, rc, HELD_PTR, (uintptr_t)p), ++i;
    } else if (vmm_command(&vmm, argc, argv, &i)) {
    } else if (graph_command(c, a1, &i)) {
    } else if (path_command(c, argc, argv, &i)) {
    } else if (!strcmp(c, "free")) {
      held_t h;
      if (!take(&h)) continue;
      p = (void*)(uintptr_t)h.key;
      rc = h.kind == HELD_ASYNC           ? hipFreeAsync(p, NULL)
           : h.kind == HELD_ARRAY         ? hipFreeArray((hipArray_t)p)
           : h.kind == HELD_ARRAY_DESTROY ? hipArrayDestroy((hipArray_t)p)
           : h.kind == HELD_MIPMAP        ? hipFreeMipmappedArray((hipMipmappedArray_t)p)
           : h.kind == HELD_MIPMAP_DESTROY ? hipMipmappedArrayDestroy((hipMipmappedArray_t)p)
                                          : hipFree(p);
      printf("free %d\n", rc);
    } else if (!strcmp(c, "threshold") || !strcmp(c, "trim")) {
      hipMemPool_t pool = NULL;
      uint64_t v = num(a1);
      rc = hipDeviceGetDefaultMemPool(&pool, device);
      if (rc == hipSuccess)
        rc = !strcmp(c, "trim") ? hipMemPoolTrimTo(pool, v) : hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &v);
      printf("%s %d\n", c, rc), ++i;
    } else if (!strcmp(c, "setlimit")) {
      hipLimit_t l = !strcmp(a1, "stack") ? hipLimitStackSize : !strcmp(a1, "printf") ? hipLimitPrintfFifoSize
                                                                                     : hipLimitMallocHeapSize;
      printf("setlimit %d\n", hipDeviceSetLimit(l, num(a2))), i += 2;
    } else if (!strcmp(c, "sync")) {
      printf("sync %d\n", hipDeviceSynchronize());
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
