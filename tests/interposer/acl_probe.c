/* acl_probe: an AscendCL program for the interposer tests, like
 * cuda_probe.c (one output line per command):
 *
 *   init [ORDINAL]          aclInit, aclrtSetDevice                 -> "init RC"
 *   alloc|cached|cfg|align32|tasksched BYTES  aclrtMalloc / aclrtMallocCached /
 *                           aclrtMallocWithCfg / aclrtMallocAlign32 /
 *                           aclrtMallocForTaskScheduler             -> "<cmd> RC"
 *   cfgdev|taskscheddev BYTES DEVICE  aclrtMallocWithCfg /
 *                           aclrtMallocForTaskScheduler with an
 *                           ACL_RT_MEM_ATTR_DEVICE_ID of DEVICE     -> "<cmd> RC"
 *   implsym NAME            which library dlsym(libascendcl.so, NAME)
 *                           answers from             -> "implsym libvgpu|libascendcl|none"
 *   implalloc BYTES         the runtime's twin aclrtMallocImpl, found by
 *                           dlsym                                   -> "implalloc RC"
 *   vmap BYTES              as torch_npu's expandable segments grow:
 *                           aclrtMallocPhysical, aclrtMapMem at the end
 *                           of one aclrtReserveMemAddress range     -> "vmap RC"
 *   vrelease                aclrtFreePhysical of the newest mapping's
 *                           handle, mapping kept                     -> "vrelease RC"
 *   vunmap                  aclrtUnmapMem of the newest mapping       -> "vunmap RC"
 *   vfree                   aclrtUnmapMem, then aclrtFreePhysical    -> "vfree RC"
 *   vretain                 aclrtMemRetainAllocationHandle of the newest
 *                           mapping                                 -> "vretain RC"
 *   vremap BYTES            maps the handle the last vunmap unmapped
 *                           again, in a range of its own            -> "vremap RC"
 *   vunremap                aclrtUnmapMem of that mapping, then
 *                           aclrtFreePhysical of its handle         -> "vunremap RC"
 *   free                    aclrtFree of the newest one held        -> "free RC"
 *   freesync                aclrtFreeWithDevSync of it              -> "freesync RC"
 *   info                    aclrtGetMemInfo(ACL_HBM_MEM)            -> "info RC FREE TOTAL"
 *   host                    aclrtGetMemInfo(ACL_DDR_MEM)            -> "host RC FREE TOTAL"
 *   meminfo ATTR            aclrtGetMemInfo(ATTR, an aclrtMemAttr)  -> "meminfo RC FREE TOTAL"
 *   work SECONDS US MODE    MODE kernel (aclrtLaunchKernel), kernelv2,
 *                           withconfig, hostargs, argsarray (the other
 *                           aclrtLaunchKernel* forms), model
 *                           (aclmdlExecuteAsync), op (aclopExecuteV2),
 *                           opv1 (aclopExecute), ophandle
 *                           (aclopExecWithHandle), compile, compilev2
 *                           (aclopCompileAndExecute(V2)), cast
 *                           (aclopCast), ri / risync (a model runtime
 *                           instance: aclmdlRIExecuteAsync / aclmdlRIExecute),
 *                           modelv2 / modelasyncv2 (aclmdlExecuteV2 /
 *                           aclmdlExecuteAsyncV2),
 *                           aclnn (an operator of the stub operator
 *                           library found as torch_npu finds them: dlopen
 *                           libopapi.so, dlsym aclnnBusyGetWorkspaceSize
 *                           and aclnnBusy), aclnnhost (as aclnn, the
 *                           operator aclnnBusyHost, which launches through
 *                           aclrtLaunchKernelWithHostArgs), aclnnlinked
 *                           (aclnnBusyHost as a program linked against the
 *                           library calls it: dlsym(RTLD_DEFAULT))
 *   burstof SECONDS US N MODE  burst (probe_common.h) of work in MODE (as
 *                           for work)               -> "burst KERNELS BUSY_MS WALL_MS"
 *   mload HOW WORK WEIGHT   loads a stub model of WORK work and WEIGHT
 *                           weight bytes (acl_stub_models.h): HOW file,
 *                           mem, fileq, memq (the runtime allocates both),
 *                           filemem (aclmdlLoadFromFileWithMem with both
 *                           from aclrtMalloc), fileweight (work from
 *                           aclrtMalloc, weight by the runtime), config
 *                           (aclmdlLoadWithConfig of the file), configmem
 *                           (of the model in memory, work from aclrtMalloc) -> "mload RC"
 *   mloadx HOW WORK WEIGHT EXTRA  as mload, a model with EXTRA bytes in
 *                           its other partitions; HOW also configkernel
 *                           (aclmdlLoadWithConfig of the file, its
 *                           kernel partition from aclrtMalloc)      -> "mload RC"
 *   munload                 aclmdlUnload of the newest model loaded  -> "munload RC"
 *   bload file|mem WORK WEIGHT  aclmdlBundleLoadFromFile / FromMem of a
 *                           stub model                              -> "bload RC"
 *   bunload                 aclmdlBundleUnload of the newest bundle  -> "bunload RC"
 *   aclnnsym NAME           which library dlsym(libopapi.so, NAME)
 *                           answers from                           -> "aclnnsym libvgpu|libopapi|none"
 *   capture | endcapture    aclmdlRICaptureBegin (global mode) / End of a
 *                           stream klaunch then uses; the RI is kept -> "<cmd> RC"
 *   klaunch N               N launches of a 500 us kernel on it (the
 *                           default stream outside a capture)       -> "klaunch RC"
 *   rirun                   aclmdlRIExecuteAsync of the captured RI  -> "rirun RC"
 *   sync                    aclrtSynchronizeDevice                  -> "sync RC"
 *   hold                    (see probe_common.h)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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
static int vmm_retain(uint64_t* h, uintptr_t va) {
  aclrtDrvMemHandle handle = NULL;
  int rc = aclrtMemRetainAllocationHandle((void*)va, &handle);
  *h = (uint64_t)(uintptr_t)handle;
  return rc;
}
static const vmm_api vmm = {vmm_reserve, vmm_create, vmm_map, vmm_unmap, vmm_release, vmm_retain};

/* vremap / vunremap: the handle of the newest mapping (what vunmap then
 * unmaps), mapped again. */
static uintptr_t remapped_va;
static uint64_t remapped_handle;
static int vmm_remap(size_t bytes) {
  uintptr_t va = 0;
  int rc;
  if (!remapped_handle) return -1;
  rc = vmm_reserve(&va, bytes);
  if (rc == 0) rc = vmm_map(va, bytes, remapped_handle);
  if (rc == 0) remapped_va = va;
  return rc;
}
static int vmm_unremap(void) {
  int rc = remapped_va ? aclrtUnmapMem((void*)remapped_va) : -1;
  if (rc == 0) rc = vmm_release(remapped_handle);
  remapped_va = 0, remapped_handle = 0;
  return rc;
}

static int work_load(const char* name) {
  snprintf(work_op, sizeof(work_op), "%s", name);
  return 0;
}

/* The stub operator library, opened as torch_npu opens libopapi.so (and
 * global, so that aclnnlinked finds it as the linker would). */
static void* opapi(void) {
  static void* handle;
  if (!handle) handle = dlopen("libopapi.so", RTLD_NOW | RTLD_GLOBAL);
  return handle;
}

/* Operator `op` (aclnnBusy, aclnnBusyHost) for `us` microseconds: plan, then
 * run on the default stream; found in `handle` (RTLD_DEFAULT: as a program
 * linked against the library calls it). */
static int aclnn_busy(const char* op, void* handle, unsigned int us) {
  char plan_name[64];
  uint64_t workspace = 0;
  void* executor = NULL;
  if (!opapi()) return -1;
  snprintf(plan_name, sizeof(plan_name), "%sGetWorkspaceSize", op);
  aclError (*plan)(uint64_t, uint64_t*, void**) = (aclError(*)(uint64_t, uint64_t*, void**))dlsym(handle, plan_name);
  aclError (*run)(void*, uint64_t, void*, aclrtStream) = (aclError(*)(void*, uint64_t, void*, aclrtStream))dlsym(handle, op);
  if (!plan || !run) return -1;
  aclError rc = plan(us, &workspace, &executor);
  return rc == ACL_SUCCESS ? run(NULL, workspace, executor, NULL) : rc;
}

/* The runtime library, to look up its twins. */
static void* ascendcl(void) {
  static void* handle;
  if (!handle) handle = dlopen("libascendcl.so", RTLD_NOW);
  return handle;
}

/* Which library `fn` is in (see the commands). */
static const char* library_of(void* fn, const char* vendor) {
  Dl_info info;
  return !fn ? "none" : !dladdr(fn, &info) || !info.dli_fname ? "unknown"
         : strstr(info.dli_fname, "libvgpu")                ? "libvgpu"
         : strstr(info.dli_fname, vendor)                   ? vendor
                                                            : info.dli_fname;
}

/* Models loaded by mload, newest last. */
static uint32_t models[64];
static int nmodels;

/* Bundles loaded by bload, newest last. */
static uint32_t bundles[64];
static int nbundles;

/* A stub model's name (acl_stub_models.h) in name[size]: the file's path;
 * *text: the model in memory, *text_size its length. */
static void model_name(char* name, size_t size, size_t work, size_t weight, size_t extra, const char** text,
                       size_t* text_size) {
  if (extra) snprintf(name, size, "/models/model-%zu-%zu-%zu.om", work, weight, extra);
  else snprintf(name, size, "/models/model-%zu-%zu.om", work, weight);
  *text = strrchr(name, '/') + 1;
  *text_size = strlen(*text) - 3; /* without ".om" */
}

static aclError model_load(const char* how, size_t work, size_t weight, size_t extra) {
  char name[128];
  void *work_mem = NULL, *weight_mem = NULL, *kernel_mem = NULL;
  uint32_t id = 0;
  aclError rc = ACL_SUCCESS;
  const char* text;
  size_t text_size;
  model_name(name, sizeof(name), work, weight, extra, &text, &text_size);
  if (!strcmp(how, "filemem") || !strcmp(how, "fileweight") || !strcmp(how, "configmem"))
    rc = aclrtMalloc(&work_mem, work, ACL_MEM_MALLOC_HUGE_FIRST);
  if (rc == ACL_SUCCESS && !strcmp(how, "filemem")) rc = aclrtMalloc(&weight_mem, weight, ACL_MEM_MALLOC_HUGE_FIRST);
  /* The kernel partition's share of EXTRA (acl_stub_models.h). */
  if (rc == ACL_SUCCESS && !strcmp(how, "configkernel")) rc = aclrtMalloc(&kernel_mem, extra / 6, ACL_MEM_MALLOC_HUGE_FIRST);
  if (rc != ACL_SUCCESS) return rc;
  if (!strcmp(how, "file")) rc = aclmdlLoadFromFile(name, &id);
  else if (!strcmp(how, "mem")) rc = aclmdlLoadFromMem(text, text_size, &id);
  else if (!strcmp(how, "fileq")) rc = aclmdlLoadFromFileWithQ(name, &id, NULL, 0, NULL, 0);
  else if (!strcmp(how, "memq")) rc = aclmdlLoadFromMemWithQ(text, text_size, &id, NULL, 0, NULL, 0);
  else if (!strcmp(how, "filemem") || !strcmp(how, "fileweight"))
    rc = aclmdlLoadFromFileWithMem(name, &id, work_mem, work, weight_mem, weight);
  else {
    aclmdlConfigHandle* config = aclmdlCreateConfigHandle();
    const int mem = !strcmp(how, "configmem");
    size_t type = mem ? ACL_MDL_LOAD_FROM_MEM_WITH_MEM : ACL_MDL_LOAD_FROM_FILE;
    const char* path = name;
    const void* model = text;
    size_t model_size = text_size;
    aclmdlSetConfigOpt(config, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof(type));
    if (mem) {
      aclmdlSetConfigOpt(config, ACL_MDL_MEM_ADDR_PTR, &model, sizeof(model));
      aclmdlSetConfigOpt(config, ACL_MDL_MEM_SIZET, &model_size, sizeof(model_size));
      aclmdlSetConfigOpt(config, ACL_MDL_WORKSPACE_ADDR_PTR, &work_mem, sizeof(work_mem));
    } else {
      aclmdlSetConfigOpt(config, ACL_MDL_PATH_PTR, &path, sizeof(path));
      if (kernel_mem) aclmdlSetConfigOpt(config, ACL_MDL_KERNEL_PTR, &kernel_mem, sizeof(kernel_mem));
    }
    rc = aclmdlLoadWithConfig(config, &id);
    aclmdlDestroyConfigHandle(config);
  }
  if (rc == ACL_SUCCESS && nmodels < 64) models[nmodels++] = id;
  return rc;
}

static aclError bundle_load(const char* how, size_t work, size_t weight) {
  char name[128];
  const char* text;
  size_t text_size;
  uint32_t id = 0;
  model_name(name, sizeof(name), work, weight, 0, &text, &text_size);
  aclError rc = !strcmp(how, "mem") ? aclmdlBundleLoadFromMem(text, text_size, &id) : aclmdlBundleLoadFromFile(name, &id);
  if (rc == ACL_SUCCESS && nbundles < 64) bundles[nbundles++] = id;
  return rc;
}

static int work_launch(const char* mode, unsigned int us) {
  aclrtFuncHandle kernel = vgpu_stub_acl_kernel(us);
  if (!strcmp(mode, "aclnn")) return aclnn_busy("aclnnBusy", opapi(), us);
  if (!strcmp(mode, "aclnnhost")) return aclnn_busy("aclnnBusyHost", opapi(), us);
  if (!strcmp(mode, "aclnnlinked")) return aclnn_busy("aclnnBusyHost", RTLD_DEFAULT, us);
  if (!strcmp(mode, "ri")) return aclmdlRIExecuteAsync(kernel, NULL);
  if (!strcmp(mode, "risync")) return aclmdlRIExecute(kernel, -1);
  if (!strcmp(mode, "modelv2")) return aclmdlExecuteV2(us, NULL, NULL, NULL, NULL);
  if (!strcmp(mode, "modelasyncv2")) return aclmdlExecuteAsyncV2(us, NULL, NULL, NULL, NULL);
  if (!strcmp(mode, "cast")) return aclopCast(kernel, NULL, NULL, NULL, 0, NULL);
  if (!strcmp(mode, "kernelv2")) return aclrtLaunchKernelV2(kernel, 1, NULL, 0, NULL, NULL);
  if (!strcmp(mode, "withconfig")) return aclrtLaunchKernelWithConfig(kernel, 1, NULL, NULL, NULL, NULL);
  if (!strcmp(mode, "hostargs")) return aclrtLaunchKernelWithHostArgs(kernel, 1, NULL, NULL, NULL, 0, NULL, 0);
  if (!strcmp(mode, "argsarray")) return aclrtLaunchKernelWithArgsArray(kernel, 1, NULL, NULL, NULL);
  if (!strcmp(mode, "ophandle")) return aclopExecWithHandle(kernel, 0, NULL, 0, NULL, NULL);
  if (!strcmp(mode, "opv1")) return aclopExecute(work_op, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL);
  if (!strcmp(mode, "compile"))
    return aclopCompileAndExecute(work_op, 0, NULL, NULL, 0, NULL, NULL, NULL, 0, 0, NULL, NULL);
  if (!strcmp(mode, "compilev2"))
    return aclopCompileAndExecuteV2(work_op, 0, NULL, NULL, 0, NULL, NULL, NULL, 0, 0, NULL, NULL);
  if (!strcmp(mode, "model")) return aclmdlExecuteAsync(us, NULL, NULL, NULL);
  if (!strcmp(mode, "op")) return aclopExecuteV2(work_op, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL);
  return aclrtLaunchKernel(kernel, 1, NULL, 0, NULL);
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
    static aclrtStream capture_stream;
    static aclmdlRI captured;
    if (!strcmp(c, "capture")) {
      capture_stream = (aclrtStream)(uintptr_t)0x5;
      printf("capture %d\n", aclmdlRICaptureBegin(capture_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    } else if (!strcmp(c, "endcapture")) {
      printf("endcapture %d\n", aclmdlRICaptureEnd(capture_stream, &captured));
      capture_stream = NULL;
    } else if (!strcmp(c, "klaunch")) {
      aclrtFuncHandle k = vgpu_stub_acl_kernel(500);
      rc = ACL_SUCCESS;
      for (unsigned long n = num(a1), j = 0; j < n && rc == ACL_SUCCESS; ++j)
        rc = aclrtLaunchKernel(k, 1, NULL, 0, capture_stream);
      printf("klaunch %d\n", rc), ++i;
    } else if (!strcmp(c, "rirun")) {
      printf("rirun %d\n", aclmdlRIExecuteAsync(captured, NULL));
    } else if (!strcmp(c, "sync")) {
      printf("sync %d\n", aclrtSynchronizeDevice());
    } else if (!strcmp(c, "init")) {
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
    } else if (!strcmp(c, "cfgdev") || !strcmp(c, "taskscheddev")) {
      aclrtMallocAttribute attr;
      aclrtMallocConfig cfg = {&attr, 1};
      memset(&attr, 0, sizeof(attr));
      attr.attr = ACL_RT_MEM_ATTR_DEVICE_ID;
      attr.value.deviceId = (uint32_t)num(arg(argc, argv, i + 2));
      rc = !strcmp(c, "cfgdev") ? aclrtMallocWithCfg(&p, num(a1), ACL_MEM_MALLOC_HUGE_FIRST, &cfg)
                                : aclrtMallocForTaskScheduler(&p, num(a1), ACL_MEM_MALLOC_HUGE_FIRST, &cfg);
      allocated(c, rc, 0, (uintptr_t)p), i += 2;
    } else if (!strcmp(c, "implsym")) {
      printf("implsym %s\n", library_of(ascendcl() ? dlsym(ascendcl(), a1) : NULL, "libascendcl")), ++i;
    } else if (!strcmp(c, "implalloc")) {
      aclError (*twin)(void**, size_t, aclrtMemMallocPolicy) =
          ascendcl() ? (aclError(*)(void**, size_t, aclrtMemMallocPolicy))dlsym(ascendcl(), "aclrtMallocImpl") : NULL;
      rc = twin ? twin(&p, num(a1), ACL_MEM_MALLOC_HUGE_FIRST) : -1;
      allocated(c, rc, 0, (uintptr_t)p), ++i;
    } else if (!strcmp(c, "free") || !strcmp(c, "freesync")) {
      held_t h;
      if (!take(&h)) continue;
      rc = !strcmp(c, "free") ? aclrtFree((void*)(uintptr_t)h.key) : aclrtFreeWithDevSync((void*)(uintptr_t)h.key);
      printf("%s %d\n", c, rc);
    } else if (!strcmp(c, "mload")) {
      printf("mload %d\n", model_load(a1, num(arg(argc, argv, i + 2)), num(arg(argc, argv, i + 3)), 0)), i += 3;
    } else if (!strcmp(c, "mloadx")) {
      printf("mload %d\n", model_load(a1, num(arg(argc, argv, i + 2)), num(arg(argc, argv, i + 3)),
                                        num(arg(argc, argv, i + 4)))),
          i += 4;
    } else if (!strcmp(c, "munload")) {
      printf("munload %d\n", nmodels ? aclmdlUnload(models[--nmodels]) : -1);
    } else if (!strcmp(c, "burstof")) {
      probe_launches(&api, "burst", a1, arg(argc, argv, i + 2), arg(argc, argv, i + 4),
                     (unsigned)num(arg(argc, argv, i + 3))),
          i += 4;
    } else if (!strcmp(c, "bload")) {
      printf("bload %d\n", bundle_load(a1, num(arg(argc, argv, i + 2)), num(arg(argc, argv, i + 3)))), i += 3;
    } else if (!strcmp(c, "bunload")) {
      printf("bunload %d\n", nbundles ? aclmdlBundleUnload(bundles[--nbundles]) : -1);
    } else if (!strcmp(c, "aclnnsym")) {
      printf("aclnnsym %s\n", library_of(opapi() ? dlsym(opapi(), a1) : NULL, "libopapi")), ++i;
    } else if (!strcmp(c, "vunmap") && vmm_nmaps > 0) {
      remapped_handle = vmm_maps[vmm_nmaps - 1].handle;
      vmm_command(&vmm, argc, argv, &i);
    } else if (!strcmp(c, "vremap")) {
      printf("vremap %d\n", vmm_remap(num(a1))), ++i;
    } else if (!strcmp(c, "vunremap")) {
      printf("vunremap %d\n", vmm_unremap());
    } else if (vmm_command(&vmm, argc, argv, &i)) {
    } else if (!strcmp(c, "info") || !strcmp(c, "host") || !strcmp(c, "meminfo")) {
      size_t f = 0, t = 0;
      const aclrtMemAttr attr = !strcmp(c, "info") ? ACL_HBM_MEM : !strcmp(c, "host") ? ACL_DDR_MEM
                                                                                     : (aclrtMemAttr)num(a1);
      rc = aclrtGetMemInfo(attr, &f, &t);
      printf("%s %d %zu %zu\n", c, rc, f, t);
      if (!strcmp(c, "meminfo")) ++i;
    } else {
      int status = probe_shared(&api, "acl_probe", argc, argv, &i);
      if (status >= 0) return status;
    }
  }
  return 0;
}
