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
 *   work SECONDS US MODE    MODE kernel (aclrtLaunchKernel), kernelv2,
 *                           withconfig, hostargs, argsarray (the other
 *                           aclrtLaunchKernel* forms), model
 *                           (aclmdlExecuteAsync), op (aclopExecuteV2),
 *                           opv1 (aclopExecute), ophandle
 *                           (aclopExecWithHandle), compile, compilev2
 *                           (aclopCompileAndExecute(V2)),
 *                           aclnn (an operator of the stub operator
 *                           library found as torch_npu finds them: dlopen
 *                           libopapi.so, dlsym aclnnBusyGetWorkspaceSize
 *                           and aclnnBusy)
 *   mload HOW WORK WEIGHT   loads a stub model of WORK work and WEIGHT
 *                           weight bytes (acl_stub_models.h): HOW file,
 *                           mem, fileq, memq (the runtime allocates both),
 *                           filemem (aclmdlLoadFromFileWithMem with both
 *                           from aclrtMalloc), fileweight (work from
 *                           aclrtMalloc, weight by the runtime), config
 *                           (aclmdlLoadWithConfig of the file), configmem
 *                           (of the model in memory, work from aclrtMalloc) -> "mload RC"
 *   munload                 aclmdlUnload of the newest model loaded  -> "munload RC"
 *   aclnnsym NAME           which library dlsym(libopapi.so, NAME)
 *                           answers from                           -> "aclnnsym libvgpu|libopapi|none"
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
static const vmm_api vmm = {vmm_reserve, vmm_create, vmm_map, vmm_unmap, vmm_release, NULL};

static int work_load(const char* name) {
  snprintf(work_op, sizeof(work_op), "%s", name);
  return 0;
}

/* The stub operator library, opened as torch_npu opens libopapi.so. */
static void* opapi(void) {
  static void* handle;
  if (!handle) handle = dlopen("libopapi.so", RTLD_NOW);
  return handle;
}

/* aclnnBusy for `us` microseconds: plan, then run on the default stream. */
static int aclnn_busy(unsigned int us) {
  static aclError (*plan)(uint64_t, uint64_t*, void**);
  static aclError (*run)(void*, uint64_t, void*, aclrtStream);
  uint64_t workspace = 0;
  void* executor = NULL;
  if (!run) {
    plan = opapi() ? (aclError(*)(uint64_t, uint64_t*, void**))dlsym(opapi(), "aclnnBusyGetWorkspaceSize") : NULL;
    run = opapi() ? (aclError(*)(void*, uint64_t, void*, aclrtStream))dlsym(opapi(), "aclnnBusy") : NULL;
    if (!plan || !run) return -1;
  }
  aclError rc = plan(us, &workspace, &executor);
  return rc == ACL_SUCCESS ? run(NULL, workspace, executor, NULL) : rc;
}

/* Models loaded by mload, newest last. */
static uint32_t models[64];
static int nmodels;

static aclError model_load(const char* how, size_t work, size_t weight) {
  char name[96];
  void *work_mem = NULL, *weight_mem = NULL;
  uint32_t id = 0;
  aclError rc = ACL_SUCCESS;
  snprintf(name, sizeof(name), "/models/model-%zu-%zu.om", work, weight);
  const char* text = strrchr(name, '/') + 1;
  const size_t text_size = strlen(text) - 3; /* without ".om" */
  if (!strcmp(how, "filemem") || !strcmp(how, "fileweight") || !strcmp(how, "configmem"))
    rc = aclrtMalloc(&work_mem, work, ACL_MEM_MALLOC_HUGE_FIRST);
  if (rc == ACL_SUCCESS && !strcmp(how, "filemem")) rc = aclrtMalloc(&weight_mem, weight, ACL_MEM_MALLOC_HUGE_FIRST);
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
    }
    rc = aclmdlLoadWithConfig(config, &id);
    aclmdlDestroyConfigHandle(config);
  }
  if (rc == ACL_SUCCESS && nmodels < 64) models[nmodels++] = id;
  return rc;
}

static int work_launch(const char* mode, unsigned int us) {
  aclrtFuncHandle kernel = vgpu_stub_acl_kernel(us);
  if (!strcmp(mode, "aclnn")) return aclnn_busy(us);
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
    } else if (!strcmp(c, "mload")) {
      printf("mload %d\n", model_load(a1, num(arg(argc, argv, i + 2)), num(arg(argc, argv, i + 3)))), i += 3;
    } else if (!strcmp(c, "munload")) {
      printf("munload %d\n", nmodels ? aclmdlUnload(models[--nmodels]) : -1);
    } else if (!strcmp(c, "aclnnsym")) {
      void* fn = opapi() ? dlsym(opapi(), a1) : NULL;
      Dl_info info;
      const char* lib = !fn ? "none" : !dladdr(fn, &info) || !info.dli_fname ? "unknown"
                        : strstr(info.dli_fname, "libvgpu")                ? "libvgpu"
                        : strstr(info.dli_fname, "libopapi")               ? "libopapi"
                                                                           : info.dli_fname;
      printf("aclnnsym %s\n", lib), ++i;
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
