/* Stub CUDA driver (built as stubs/libcuda.so.1) for the interposer tests.
 * Devices, contexts and memory are simulated; kernels only occupy a
 * simulated device clock. Entry points: src/interposer/vendor/cuda_api.h;
 * the model, shared with hip_stub.c: stub_accel.h.
 *
 * Environment, read by the first successful cuInit (later calls keep the
 * state and return CUDA_SUCCESS; a failed one leaves nothing behind):
 *   VGPU_STUB_CUDA_DEVICES    "<uuid>,<memory_bytes>;..."
 *       e.g. "GPU-11111111-2222-3333-4444-555555555555,8589934592"
 *       uuid: "GPU-" and 32 hex digits (dashes anywhere): the 16 bytes of
 *       cuDeviceGetUuid. No record: CUDA_ERROR_NO_DEVICE; a bad uuid or
 *       size: CUDA_ERROR_INVALID_VALUE, with a line on stderr.
 *   VGPU_STUB_CUDA_PROC_INTERNAL  set: cuGetProcAddress("cuMemAlloc", >= 3020)
 *       hands out an internal entry point (not the exported cuMemAlloc_v2),
 *       as a driver may.
 *   VGPU_STUB_CUDA_CLOCK_DIR  a directory: device <uuid>'s busy-until time
 *       lives in <dir>/<uuid>.clock (created if missing, mapped shared), so
 *       processes on one device queue their kernels after each other. Unset:
 *       a timeline per process. Unmappable: cuInit gives CUDA_ERROR_NOT_PERMITTED.
 *       Use a fresh directory per test: CLOCK_MONOTONIC restarts at boot.
 *
 * Memory: each device has memory_bytes per process; an allocation takes the
 * bytes asked (arrays, pitch: see there); 0 bytes is CUDA_ERROR_INVALID_VALUE.
 * Device pointers are 0x7f0000000000 + (device << 40) + offset, never reused
 * (offsets rise by the size rounded up to 256, up to 1 TiB per device).
 *
 * Kernels: cuModuleGetFunction(&f, mod, "busy_<N>us") gives a function that
 * runs N microseconds, vgpu_stub_cuda_graph(N) a graph exec that does (both
 * tagged integers, never dereferenced). A launch returns at once; on the
 * current context's device it runs from max(now, busy-until) for its time.
 * cuCtxSynchronize/cuStreamSynchronize sleep until this process's last
 * kernel on the current (the stream's) device has ended. Streams:
 * cuda_stub_streams.h. Test exports: vgpu_stub_cuda_graph(),
 * vgpu_stub_cuda_kernels_launched(), vgpu_stub_cuda_busy_ns() (sum of the
 * durations this process launched).
 *
 * Events (tagged integers too, checked against a table of live ones;
 * unknown or destroyed: CUDA_ERROR_INVALID_HANDLE) belong to the current
 * context's device when created. cuEventRecord(_ptsz) is a zero-length
 * kernel there: the event completes at t = max(now, busy-until) as of the
 * record (busy-until is not moved; a new record replaces t). cuEventQuery:
 * CUDA_SUCCESS from t on (and if never recorded), else CUDA_ERROR_NOT_READY;
 * cuEventSynchronize sleeps until t; cuEventElapsedTime gives (t_end -
 * t_start) in ms, possibly negative: CUDA_ERROR_INVALID_HANDLE for an event
 * never recorded or created with CU_EVENT_DISABLE_TIMING, else
 * CUDA_ERROR_NOT_READY until both completed.
 *
 * Build with -Wl,-Bsymbolic: cuGetProcAddress must return this library's
 * functions even when an LD_PRELOADed interposer defines the same names.
 * One mutex guards the devices, the allocation table and the event table. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"

#define ACCEL_OK CUDA_SUCCESS
#define ACCEL_INVALID_VALUE CUDA_ERROR_INVALID_VALUE
#define ACCEL_INVALID_DEVICE CUDA_ERROR_INVALID_DEVICE
#define ACCEL_INVALID_HANDLE CUDA_ERROR_INVALID_HANDLE
#define ACCEL_OUT_OF_MEMORY CUDA_ERROR_OUT_OF_MEMORY
#define ACCEL_NOT_READY CUDA_ERROR_NOT_READY
#define ACCEL_NOT_FOUND CUDA_ERROR_NOT_FOUND
#define ACCEL_NO_DEVICE CUDA_ERROR_NO_DEVICE
#define ACCEL_NO_CLOCK CUDA_ERROR_NOT_PERMITTED
#define ACCEL_CAPTURE_UNSUPPORTED CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
#define ACCEL_CAPTURE_INVALIDATED CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
#define ACCEL_CAPTURE_IMPLICIT CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
#include "stub_accel.h"
#include "stub_vmm.h"
#include "stub_pool.h"
#include "stub_graph.h"

/* Arguments the simulation does not model (streams, grid sizes, flags) are
 * ignored. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

CUgraphExec vgpu_stub_cuda_graph(unsigned int duration_us);
unsigned long long vgpu_stub_cuda_kernels_launched(void);
unsigned long long vgpu_stub_cuda_busy_ns(void);

struct CUctx_st {
  int device, alive; /* alive: cleared by cuCtxDestroy_v2; never freed */
};
static struct CUmod_st {
  int unused;
} g_module; /* the one module */

#define EVENT_FLAGS 0x7U /* CU_EVENT_BLOCKING_SYNC 1, DISABLE_TIMING 2, INTERPROCESS 4 */

static atomic_int g_ready;
static unsigned char g_uuid[STUB_MAX_DEVICES][16];   /* each device's cuDeviceGetUuid */
static struct CUctx_st g_primary[STUB_MAX_DEVICES]; /* each device's primary context */
static _Thread_local CUcontext t_current;

static int ready(void) { return atomic_load_explicit(&g_ready, memory_order_acquire); }

static int api_ready(void) { return ready() ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }

#include "cuda_stub_streams.h"

/* The current context's device; CUDA_ERROR_INVALID_CONTEXT without one. */
static int api_current_device(int* device) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (t_current == NULL || !t_current->alive) return CUDA_ERROR_INVALID_CONTEXT;
  *device = t_current->device;
  return CUDA_SUCCESS;
}

/* Device `device`'s uuid `s` into g_uuid: "GPU-" and exactly 32 hex digits,
 * dashes ignored; 0 on success. */
static int parse_uuid(const char* s, int device) {
  unsigned char* out = g_uuid[device];
  int n = 0;
  if (strncmp(s, "GPU-", 4) != 0) return -1;
  for (s += 4; *s != '\0'; ++s) {
    int v;
    if (*s == '-') continue;
    if (*s >= '0' && *s <= '9') v = *s - '0';
    else if (*s >= 'a' && *s <= 'f') v = *s - 'a' + 10;
    else if (*s >= 'A' && *s <= 'F') v = *s - 'A' + 10;
    else return -1;
    if (n == 32) return -1;
    if (n % 2 == 0) out[n / 2] = (unsigned char)(v << 4);
    else out[n / 2] |= (unsigned char)v;
    n++;
  }
  return n == 32 ? 0 : -1;
}

/* Books `bytes` on `device` under a new key of `kind` (a device pointer for
 * KIND_PTR). 0 bytes: CUDA_ERROR_INVALID_VALUE; CUDA_ERROR_OUT_OF_MEMORY if
 * the device has less left. */
static CUresult reserve(int kind, int device, size_t bytes, unsigned long long* key) {
  uint64_t k;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  TRY(accel_reserve(kind, device, bytes, &k));
  *key = k;
  return CUDA_SUCCESS;
}

/* A device pointer of `bytes` on the current context's device. */
static CUresult alloc_current(CUdeviceptr* dptr, size_t bytes) {
  int device;
  TRY(api_current_device(&device));
  if (dptr == NULL) return CUDA_ERROR_INVALID_VALUE;
  return reserve(KIND_PTR, device, bytes, dptr);
}

/* Queues kernel or graph `handle` (see accel_launch); one without `tag`:
 * CUDA_ERROR_INVALID_HANDLE. */
static CUresult launch_tagged(const void* handle, uint64_t tag) {
  return accel_launch(handle, tag, CUDA_ERROR_INVALID_HANDLE);
}

CUresult cuInit(unsigned int flags) {
  CUresult rc = CUDA_SUCCESS;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  if (!ready()) {
    rc = accel_load("cuda_stub", "VGPU_STUB_CUDA_DEVICES", "VGPU_STUB_CUDA_CLOCK_DIR", parse_uuid);
    if (rc == CUDA_SUCCESS) {
      for (int i = 0; i < g_count; ++i) g_primary[i] = (struct CUctx_st){i, 1};
      atomic_store_explicit(&g_ready, 1, memory_order_release);
    }
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* Works before cuInit, as the real driver's does. */
CUresult cuDriverGetVersion(int* version) {
  if (version == NULL) return CUDA_ERROR_INVALID_VALUE;
  *version = 12040;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (count == NULL) return CUDA_ERROR_INVALID_VALUE;
  *count = g_count;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  CUresult rc = accel_device_call(device, ordinal);
  if (rc == CUDA_SUCCESS) *device = ordinal;
  return rc;
}

CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device) {
  CUresult rc = accel_device_call(uuid, device);
  if (rc == CUDA_SUCCESS) memcpy(uuid->bytes, g_uuid[device], 16);
  return rc;
}

CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) { return cuDeviceGetUuid(uuid, device); }

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) { return accel_total_mem(bytes, device); }

/* The device's one primary context; not made current. */
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  CUresult rc = accel_device_call(ctx, device);
  if (rc == CUDA_SUCCESS) *ctx = &g_primary[device];
  return rc;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) { return accel_device_call("", device); }

/* A new context on `device`, made current on this thread. */
CUresult cuCtxCreate_v2(CUcontext* ctx, unsigned int flags, CUdevice device) {
  TRY(accel_device_call(ctx, device));
  if ((*ctx = malloc(sizeof(**ctx))) == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  **ctx = (struct CUctx_st){device, 1};
  t_current = *ctx;
  return CUDA_SUCCESS;
}

/* Primary contexts stay alive; others become invalid (unbound here). */
CUresult cuCtxDestroy_v2(CUcontext ctx) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (ctx != &g_primary[ctx->device]) ctx->alive = 0;
  if (t_current == ctx && !ctx->alive) t_current = NULL;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx != NULL && !ctx->alive) return CUDA_ERROR_INVALID_CONTEXT;
  t_current = ctx;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* ctx) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL) return CUDA_ERROR_INVALID_VALUE;
  *ctx = t_current;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) { return accel_get_device(device); }

/* Sleeps until this process's last kernel on the current device ended. */
/* Pools give back what they reserve above their threshold (stub_pool.h). */
CUresult cuCtxSynchronize(void) {
  TRY(graph_unsafe_call());
  TRY(accel_synchronize());
  pool_synchronized();
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream) { return ON_STREAM(stream, cuCtxSynchronize()); }

/* Needs a current context; the image is not read. */
CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  int d;
  TRY(api_current_device(&d));
  if (module == NULL || image == NULL) return CUDA_ERROR_INVALID_VALUE;
  *module = &g_module;
  return CUDA_SUCCESS;
}

/* "busy_<N>us" (decimal N, at most 2^40): a kernel of N microseconds. */
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  uint64_t f;
  CUresult rc = accel_function(function != NULL && name != NULL, module == &g_module, name, &f);
  if (rc == CUDA_SUCCESS) *function = (CUfunction)(uintptr_t)f;
  return rc;
}

CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) { return accel_mem_info(free_bytes, total_bytes); }

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes) { return alloc_current(dptr, bytes); }
CUresult cuMemFree_v2(CUdeviceptr dptr) { return accel_release(KIND_PTR, dptr); }

/* pitch = width_bytes rounded up to a multiple of 512; takes pitch * height. */
CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width_bytes, size_t height,
                            unsigned int element_bytes) {
  int d;
  size_t p, bytes;
  TRY(api_current_device(&d));
  if (dptr == NULL || pitch == NULL || width_bytes == 0 || height == 0 || width_bytes > SIZE_MAX - 511)
    return CUDA_ERROR_INVALID_VALUE;
  p = (width_bytes + 511) & ~(size_t)511;
  if (__builtin_mul_overflow(p, height, &bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  TRY(reserve(KIND_PTR, d, bytes, dptr));
  *pitch = p;
  return CUDA_SUCCESS;
}

CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytes, unsigned int flags) {
  return alloc_current(dptr, bytes);
}


/* Width * max(Height,1) * max(Depth,1) * NumChannels * element bytes of
 * Format (1: INT8, 2: INT16/HALF, 4: INT32/FLOAT; else invalid), on the
 * current context's device. */
static CUresult array_create(CUarray* array, size_t w, size_t h, size_t depth, int format, unsigned ch) {
  int d;
  size_t elem, bytes;
  unsigned long long key;
  CUresult rc;
  TRY(api_current_device(&d));
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: elem = 1; break;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: elem = 2; break;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: elem = 4; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (array == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (__builtin_mul_overflow(w, h ? h : 1, &bytes) || __builtin_mul_overflow(bytes, depth ? depth : 1, &bytes) ||
      __builtin_mul_overflow(bytes, (size_t)ch * elem, &bytes))
    return CUDA_ERROR_OUT_OF_MEMORY;
  if ((rc = reserve(KIND_ARRAY, d, bytes, &key)) == CUDA_SUCCESS) *array = (CUarray)(uintptr_t)key;
  return rc;
}

CUresult cuArrayCreate_v2(CUarray* array, const CUDA_ARRAY_DESCRIPTOR* desc) {
  if (desc == NULL) return ready() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return array_create(array, desc->Width, desc->Height, 1, desc->Format, desc->NumChannels);
}

CUresult cuArray3DCreate_v2(CUarray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  if (desc == NULL) return ready() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return array_create(array, desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels);
}

CUresult cuArrayDestroy(CUarray array) { return accel_release(KIND_ARRAY, (uint64_t)(uintptr_t)array); }



/* Every launch variant: the kernel's time on its stream's device
 * (cuda_stub_streams.h; config->hStream for cuLaunchKernelEx); on a stream
 * in capture nothing runs (stub_graph.h). */
#define LAUNCH_ON(s, call) (graph_capturing((uint64_t)(uintptr_t)(s)) ? CUDA_SUCCESS : ON_STREAM(s, call))
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void** p, void** e) {
  return LAUNCH_ON(s, launch_tagged(f, TAG_FUNC));
}
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                             unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void** p, void** e) {
  return LAUNCH_ON(s, launch_tagged(f, TAG_FUNC));
}
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  if (config == NULL) return ready() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return LAUNCH_ON(config->hStream, launch_tagged(f, TAG_FUNC));
}
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  return cuLaunchKernelEx(config, f, params, extra);
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shm,
                                   CUstream s, void** p) {
  return LAUNCH_ON(s, launch_tagged(f, TAG_FUNC));
}
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shm,
                                        CUstream s, void** p) {
  return LAUNCH_ON(s, launch_tagged(f, TAG_FUNC));
}
/* An executable graph with memory (stub_graph.h), else a timed one. */
CUresult cuGraphLaunch(CUgraphExec graph, CUstream s) {
  int rc;
  TRY(api_ready());
  return graph_exec_launch((uint64_t)(uintptr_t)graph, &rc) ? rc : LAUNCH_ON(s, launch_tagged(graph, TAG_GRAPH));
}
CUresult cuGraphLaunch_ptsz(CUgraphExec graph, CUstream s) { return cuGraphLaunch(graph, s); }



CUgraphExec vgpu_stub_cuda_graph(unsigned int duration_us) { return (CUgraphExec)accel_graph(duration_us); }

/* On the current context's device; flags beyond the driver's three:
 * CUDA_ERROR_INVALID_VALUE (the others only matter for timing). */
CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  uint64_t key;
  CUresult rc = accel_event_create(event != NULL && (flags & ~EVENT_FLAGS) == 0,
                                   (flags & CU_EVENT_DISABLE_TIMING) != 0, &key);
  if (rc == CUDA_SUCCESS) *event = (CUevent)(uintptr_t)key;
  return rc;
}

/* A pending event may be destroyed, as with the real driver. */
CUresult cuEventDestroy_v2(CUevent event) { return accel_event_destroy((uintptr_t)event); }

/* On the event's device, whatever the current context; a stream of
 * another device's context: CUDA_ERROR_INVALID_HANDLE. */
CUresult cuEventRecord(CUevent event, CUstream stream) {
  CUcontext ctx = stream_context(stream);
  accel_event ev;
  int captured;
  if (ctx != NULL && (get_event((uintptr_t)event, &ev) != CUDA_SUCCESS || ev.device != ctx->device))
    return CUDA_ERROR_INVALID_HANDLE;
  TRY(graph_event_record((uint64_t)(uintptr_t)stream, (uintptr_t)event, &captured));
  return captured ? CUDA_SUCCESS : accel_event_record((uintptr_t)event);
}
CUresult cuEventRecord_ptsz(CUevent event, CUstream stream) { return cuEventRecord(event, stream); }

/* Under capture: stub_graph.h's rules. */
CUresult cuEventQuery(CUevent event) {
  TRY(graph_event_use((uintptr_t)event));
  TRY(graph_unsafe_call());
  return accel_event_query((uintptr_t)event);
}
CUresult cuEventSynchronize(CUevent event) {
  TRY(graph_event_use((uintptr_t)event));
  TRY(graph_unsafe_call());
  TRY(accel_event_synchronize((uintptr_t)event));
  pool_synchronized();
  return CUDA_SUCCESS;
}

/* Handle errors (unknown, never recorded, DISABLE_TIMING) come before
 * CUDA_ERROR_NOT_READY. */
CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  TRY(graph_event_use((uintptr_t)start));
  TRY(graph_event_use((uintptr_t)end));
  return accel_event_elapsed(milliseconds, (uintptr_t)start, (uintptr_t)end);
}

unsigned long long vgpu_stub_cuda_kernels_launched(void) { return atomic_load(&g_launched); }
unsigned long long vgpu_stub_cuda_busy_ns(void) { return atomic_load(&g_busy_ns); }

#include "cuda_stub_more.h"

/* cuGetProcAddress table: per base name, newest first; an entry serves
 * cudaVersion >= since. ptsz: the per-thread-default-stream twin. */
typedef void (*any_fn)(void);
typedef struct {
  const char* name;
  int since;
  any_fn fn, ptsz;
} proc_t;
#define P(name, since, fn) {name, since, (any_fn)fn, NULL}
#define PT(name, fn) {name, 0, (any_fn)fn, (any_fn)fn##_ptsz}
static const proc_t g_procs[] = {
    P("cuInit", 0, cuInit), P("cuDriverGetVersion", 0, cuDriverGetVersion),
    P("cuDeviceGetCount", 0, cuDeviceGetCount), P("cuDeviceGet", 0, cuDeviceGet),
    P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2), P("cuDeviceGetUuid", 0, cuDeviceGetUuid),
    P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2), P("cuDevicePrimaryCtxRetain", 0, cuDevicePrimaryCtxRetain),
    P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2), P("cuCtxCreate", 3020, cuCtxCreate_v2),
    P("cuCtxDestroy", 3020, cuCtxDestroy_v2), P("cuCtxSetCurrent", 0, cuCtxSetCurrent),
    P("cuCtxGetCurrent", 0, cuCtxGetCurrent), P("cuCtxGetDevice", 0, cuCtxGetDevice),
    P("cuCtxSynchronize", 0, cuCtxSynchronize), P("cuStreamSynchronize", 0, cuStreamSynchronize),
    P("cuStreamCreate", 0, cuStreamCreate), P("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    PT("cuStreamGetCtx", cuStreamGetCtx), P("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    P("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    P("cuModuleLoadData", 0, cuModuleLoadData), P("cuModuleGetFunction", 0, cuModuleGetFunction),
    P("cuMemGetInfo", 3020, cuMemGetInfo_v2), P("cuMemAlloc", 3020, cuMemAlloc_v2), P("cuMemAlloc", 0, cuMemAlloc),
    P("cuMemAllocPitch", 3020, cuMemAllocPitch_v2), P("cuMemAllocManaged", 0, cuMemAllocManaged),
    P("cuMemFree", 3020, cuMemFree_v2), P("cuMemCreate", 0, cuMemCreate), P("cuMemRelease", 0, cuMemRelease),
    P("cuMemAddressReserve", 0, cuMemAddressReserve), P("cuMemAddressFree", 0, cuMemAddressFree),
    P("cuMemMap", 0, cuMemMap), P("cuMemUnmap", 0, cuMemUnmap), P("cuMemSetAccess", 0, cuMemSetAccess),
    P("cuMemRetainAllocationHandle", 0, cuMemRetainAllocationHandle),
    P("cuMulticastCreate", 0, cuMulticastCreate), P("cuMulticastAddDevice", 0, cuMulticastAddDevice),
    P("cuMulticastBindMem", 0, cuMulticastBindMem), P("cuMulticastBindAddr", 0, cuMulticastBindAddr),
    P("cuMulticastUnbind", 0, cuMulticastUnbind),
    PT("cuMemAllocAsync", cuMemAllocAsync), PT("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync),
    PT("cuMemFreeAsync", cuMemFreeAsync), P("cuDeviceGetDefaultMemPool", 0, cuDeviceGetDefaultMemPool),
    P("cuDeviceGetMemPool", 0, cuDeviceGetMemPool), P("cuMemPoolCreate", 0, cuMemPoolCreate),
    P("cuMemPoolDestroy", 0, cuMemPoolDestroy), P("cuMemPoolTrimTo", 0, cuMemPoolTrimTo),
    P("cuMemPoolSetAttribute", 0, cuMemPoolSetAttribute), P("cuMemPoolGetAttribute", 0, cuMemPoolGetAttribute), P("cuArrayCreate", 3020, cuArrayCreate_v2),
    P("cuArray3DCreate", 3020, cuArray3DCreate_v2), P("cuArrayDestroy", 0, cuArrayDestroy),
    PT("cuLaunchKernel", cuLaunchKernel), PT("cuLaunchKernelEx", cuLaunchKernelEx),
    PT("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel), PT("cuGraphLaunch", cuGraphLaunch),
    P("cuLaunch", 0, cuLaunch), P("cuLaunchGrid", 0, cuLaunchGrid), P("cuLaunchGridAsync", 0, cuLaunchGridAsync),
    P("cuLaunchCooperativeKernelMultiDevice", 0, cuLaunchCooperativeKernelMultiDevice),
    P("cuCtxSetLimit", 0, cuCtxSetLimit), P("cuCtxGetLimit", 0, cuCtxGetLimit),
    P("cuDeviceGetAttribute", 0, cuDeviceGetAttribute),
    P("cuMipmappedArrayCreate", 0, cuMipmappedArrayCreate), P("cuMipmappedArrayDestroy", 0, cuMipmappedArrayDestroy),
    P("cuGraphCreate", 0, cuGraphCreate), P("cuGraphDestroy", 0, cuGraphDestroy),
    P("cuGraphAddMemAllocNode", 0, cuGraphAddMemAllocNode), P("cuGraphAddNode", 12030, cuGraphAddNode_v2),
    P("cuGraphAddNode", 0, cuGraphAddNode),
    P("cuGraphInstantiate", 12000, cuGraphInstantiateWithFlags), P("cuGraphInstantiate", 0, cuGraphInstantiate_v2),
    P("cuGraphInstantiateWithFlags", 0, cuGraphInstantiateWithFlags),
    PT("cuGraphInstantiateWithParams", cuGraphInstantiateWithParams), P("cuGraphExecDestroy", 0, cuGraphExecDestroy),
    PT("cuGraphUpload", cuGraphUpload),
    P("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2), P("cuStreamBeginCapture", 0, cuStreamBeginCapture), P("cuStreamBeginCaptureToGraph", 0, cuStreamBeginCaptureToGraph),
    PT("cuStreamEndCapture", cuStreamEndCapture), PT("cuStreamGetCaptureInfo", cuStreamGetCaptureInfo),
    P("cuDeviceGetGraphMemAttribute", 0, cuDeviceGetGraphMemAttribute), P("cuDeviceGraphMemTrim", 0, cuDeviceGraphMemTrim),
    P("cuEventCreate", 0, cuEventCreate), P("cuEventDestroy", 4000, cuEventDestroy_v2),
    PT("cuEventRecord", cuEventRecord), P("cuEventQuery", 0, cuEventQuery),
    P("cuEventSynchronize", 0, cuEventSynchronize), P("cuEventElapsedTime", 0, cuEventElapsedTime),
    P("cuGetProcAddress", 12000, cuGetProcAddress_v2), P("cuGetProcAddress", 0, cuGetProcAddress),
};

/* What VGPU_STUB_CUDA_PROC_INTERNAL hands out for cuMemAlloc. */
static CUresult internal_mem_alloc(CUdeviceptr* dptr, size_t bytes) { return cuMemAlloc_v2(dptr, bytes); }

/* Works before cuInit. `status` may be NULL. */
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  any_fn fn;
  if (symbol == NULL || pfn == NULL) return CUDA_ERROR_INVALID_VALUE;
  *pfn = NULL;
  for (size_t i = 0; i < sizeof(g_procs) / sizeof(g_procs[0]); ++i) {
    const proc_t* e = &g_procs[i];
    if (strcmp(e->name, symbol) != 0) continue;
    st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    if (cuda_version < e->since) continue;
    fn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && e->ptsz ? e->ptsz : e->fn;
    if (fn == (any_fn)cuMemAlloc_v2 && getenv("VGPU_STUB_CUDA_PROC_INTERNAL") != NULL) fn = (any_fn)internal_mem_alloc;
    memcpy(pfn, &fn, sizeof(fn)); /* POSIX: function and data pointers agree */
    if (status != NULL) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  if (status != NULL) *status = st;
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cuda_version, flags, NULL);
}
