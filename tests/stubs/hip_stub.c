/* Stub HIP runtime (built as stubs/libamdhip64.so) for the interposer tests.
 * Devices and memory are simulated; kernels only occupy a simulated device
 * clock. Entry points: src/interposer/vendor/hip_api.h; the model, shared
 * with cuda_stub.c: stub_accel.h.
 *
 * HIP has no explicit init: the first call of any entry point reads the
 * environment, once (as the real runtime initialises once); its outcome
 * sticks for the life of the process.
 *   VGPU_STUB_HIP_DEVICES    "<pci_bus_id>,<memory_bytes>;..."
 *       e.g. "0000:c1:00.0,17179869184"
 *       pci_bus_id: "dddd:bb:dd.f" or "bb:dd.f" (hex), returned verbatim by
 *       hipDeviceGetPCIBusId. No record: every call that needs a device
 *       gives hipErrorNoDevice (hipGetDeviceCount too, with a count of 0);
 *       a bad bus id or size: hipErrorInvalidValue, with a line on stderr.
 *   VGPU_STUB_HIP_CLOCK_DIR  a directory: device <pci_bus_id>'s busy-until
 *       time lives in <dir>/<pci_bus_id>.clock (created if missing, mapped
 *       shared), so processes on one device queue their kernels after each
 *       other. Unset: a timeline per process. Unmappable: every call gives
 *       hipErrorNotInitialized. Use a fresh directory per test:
 *       CLOCK_MONOTONIC restarts at boot.
 *
 * Current device: per thread, 0 until hipSetDevice (a bad ordinal:
 * hipErrorInvalidDevice).
 *
 * Memory: each device has memory_bytes per process; an allocation takes the
 * bytes asked on the current device (pitch: see there); 0 bytes is
 * hipSuccess with a NULL pointer and takes nothing (HIP's rule). Device
 * pointers are 0x7f0000000000 + (device << 40) + offset, never reused
 * (offsets rise by the size rounded up to 256, up to 1 TiB per device).
 * hipFree and hipFreeAsync free any live pointer, on its own device;
 * unknown: hipErrorInvalidValue; hipFree(NULL) is hipSuccess as with the
 * real runtime, hipFreeAsync(NULL) hipErrorInvalidValue.
 *
 * Kernels: hipModuleGetFunction(&f, mod, "busy_<N>us") gives a function that
 * runs N microseconds, vgpu_stub_hip_graph(N) a graph exec that does (both
 * tagged integers, never dereferenced). hipLaunchKernel takes such an f as
 * its "function address" (there is no host stub to point at). A launch
 * returns at once; on its stream's device (hip_stub_more.h: a stream keeps
 * the device current when it was made; the null stream is the current
 * device's) it runs from max(now, busy-until) for its time; on a stream in
 * capture it does not run (stub_graph.h). hipDeviceSynchronize sleeps until
 * this process's last kernel on the current device has ended,
 * hipStreamSynchronize on the stream's device. Test exports: vgpu_stub_hip_graph(),
 * vgpu_stub_hip_kernels_launched(), vgpu_stub_hip_busy_ns() (sum of the
 * durations this process launched).
 *
 * Events (tagged integers too, checked against a table of live ones;
 * unknown or destroyed: hipErrorInvalidHandle) belong to the current device
 * when created and are recorded only on a stream of that device (else
 * hipErrorInvalidHandle), as clr wants. hipEventRecord is a zero-length kernel there: the event
 * completes at t = max(now, busy-until) as of the record (busy-until is not
 * moved; a new record replaces t). hipEventQuery: hipSuccess from t on (and
 * if never recorded), else hipErrorNotReady; hipEventSynchronize sleeps
 * until t; hipEventElapsedTime gives (t_end - t_start) in ms, possibly
 * negative: hipErrorInvalidHandle for an event never recorded, else
 * hipErrorNotReady until both completed.
 *
 * Build with -Wl,-Bsymbolic: the stub's own references bind to its own
 * functions even when an LD_PRELOADed interposer defines the same names.
 * One mutex guards the devices, the allocation table and the event table;
 * the initialisation runs once under pthread_once. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_api.h"

#define ACCEL_OK hipSuccess
#define ACCEL_INVALID_VALUE hipErrorInvalidValue
#define ACCEL_INVALID_DEVICE hipErrorInvalidDevice
#define ACCEL_INVALID_HANDLE hipErrorInvalidHandle
#define ACCEL_OUT_OF_MEMORY hipErrorOutOfMemory
#define ACCEL_NOT_READY hipErrorNotReady
#define ACCEL_NOT_FOUND hipErrorNotFound
#define ACCEL_NO_DEVICE hipErrorNoDevice
#define ACCEL_NO_CLOCK hipErrorNotInitialized
#define ACCEL_CAPTURE_UNSUPPORTED hipErrorStreamCaptureUnsupported
#define ACCEL_CAPTURE_INVALIDATED hipErrorStreamCaptureInvalidated
#define ACCEL_CAPTURE_IMPLICIT hipErrorStreamCaptureImplicit
#include "stub_accel.h"
#include "stub_vmm.h"
#include "stub_pool.h"
#include "stub_graph.h"

/* Arguments the simulation does not model (streams, grid sizes, flags,
 * pools) are ignored. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

hipGraphExec_t vgpu_stub_hip_graph(unsigned int duration_us);
unsigned long long vgpu_stub_hip_kernels_launched(void);
unsigned long long vgpu_stub_hip_busy_ns(void);

static struct ihipModule_t {
  int unused;
} g_module; /* the one module */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static hipError_t g_init_rc; /* written once, under g_once */
static _Thread_local int t_current; /* the current device */
static hipError_t stream_device(hipStream_t s, int* device); /* hip_stub_more.h */

/* A bus id "dddd:bb:dd.f" or "bb:dd.f"; 0 if good. */
static int parse_bus_id(const char* s, int device) {
  unsigned domain, bus, dev, fn;
  return stub_parse_bdf(s, &domain, &bus, &dev, &fn);
}

/* The one initialisation: reads VGPU_STUB_HIP_DEVICES and maps the clocks. */
static void init_once(void) {
  g_init_rc = accel_load("hip_stub", "VGPU_STUB_HIP_DEVICES", "VGPU_STUB_HIP_CLOCK_DIR", parse_bus_id);
}

/* Initialises on first use; the first outcome, every time. */
static hipError_t api_ready(void) {
  pthread_once(&g_once, init_once);
  return g_init_rc;
}

/* The calling thread's current device (always a valid ordinal once
 * initialised: hipSetDevice checks it, the default 0 exists). */
static hipError_t api_current_device(int* device) {
  TRY(api_ready());
  *device = t_current;
  return hipSuccess;
}

/* Books `bytes` on `device` under a new device pointer. 0 bytes: *ptr =
 * NULL, nothing booked. hipErrorOutOfMemory if the device has less left. */
static hipError_t reserve(int device, size_t bytes, void** ptr) {
  uint64_t key;
  if (bytes == 0) {
    *ptr = NULL;
    return hipSuccess;
  }
  TRY(accel_reserve(KIND_PTR, device, bytes, &key));
  *ptr = (void*)(uintptr_t)key;
  return hipSuccess;
}

/* Returns the bytes of `ptr`; hipErrorInvalidValue if not booked. */
static hipError_t release(const void* ptr) { return accel_release(KIND_PTR, (uintptr_t)ptr); }

/* A device pointer of `bytes` on the current device. */
static hipError_t alloc_current(void** ptr, size_t bytes) {
  int device;
  TRY(api_current_device(&device));
  if (ptr == NULL) return hipErrorInvalidValue;
  return reserve(device, bytes, ptr);
}

/* No devices: *count = 0 and hipErrorNoDevice, as the real runtime. */
hipError_t hipGetDeviceCount(int* count) {
  hipError_t rc;
  if (count == NULL) return hipErrorInvalidValue;
  rc = api_ready();
  *count = rc == hipSuccess ? g_count : 0;
  return rc;
}

hipError_t hipGetDevice(int* device) { return accel_get_device(device); }

/* For the calling thread only. */
hipError_t hipSetDevice(int device) {
  TRY(accel_device_call("", device));
  t_current = device;
  return hipSuccess;
}

/* The configured bus id; hipErrorInvalidValue if it and its NUL do not fit
 * in `length` bytes. */
hipError_t hipDeviceGetPCIBusId(char* bus_id, int length, int device) {
  size_t n;
  TRY(accel_device_call(bus_id, device));
  n = strlen(g_dev[device].id);
  if (length <= 0 || (size_t)length <= n) return hipErrorInvalidValue;
  memcpy(bus_id, g_dev[device].id, n + 1);
  return hipSuccess;
}

hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) { return accel_total_mem(bytes, device); }

hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total_bytes) { return accel_mem_info(free_bytes, total_bytes); }

hipError_t hipMalloc(void** ptr, size_t size) { return alloc_current(ptr, size); }
hipError_t hipExtMallocWithFlags(void** ptr, size_t size, unsigned int flags) { return alloc_current(ptr, size); }
hipError_t hipMallocManaged(void** ptr, size_t size, unsigned int flags) { return alloc_current(ptr, size); }

/* pitch = width rounded up to a multiple of 512; takes pitch * height.
 * Width or height 0: *ptr = NULL, *pitch = 0, hipSuccess. */
hipError_t hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  int d;
  size_t p, bytes;
  TRY(api_current_device(&d));
  if (ptr == NULL || pitch == NULL || width > SIZE_MAX - 511) return hipErrorInvalidValue;
  if (width == 0 || height == 0) {
    *ptr = NULL;
    *pitch = 0;
    return hipSuccess;
  }
  p = (width + 511) & ~(size_t)511;
  if (__builtin_mul_overflow(p, height, &bytes)) return hipErrorOutOfMemory;
  TRY(reserve(d, bytes, ptr));
  *pitch = p;
  return hipSuccess;
}

/* As hipMallocPitch; element_bytes (4, 8 or 16) is not modelled. */
hipError_t hipMemAllocPitch(hipDeviceptr_t* ptr, size_t* pitch, size_t width_bytes, size_t height,
                            unsigned int element_bytes) {
  return hipMallocPitch(ptr, pitch, width_bytes, height);
}

hipError_t hipFree(void* ptr) {
  TRY(api_ready());
  return ptr == NULL ? hipSuccess : release(ptr);
}

/* Back to its pool; a hipMalloc pointer is freed as hipFree would. */
/* On a stream in capture: a free node, nothing freed (stub_graph.h does
 * not run free nodes). */
hipError_t hipFreeAsync(void* ptr, hipStream_t stream) {
  TRY(api_ready());
  if (graph_capturing((uint64_t)(uintptr_t)stream)) return hipSuccess;
  return graph_free((uint64_t)(uintptr_t)ptr) || pool_free((uint64_t)(uintptr_t)ptr) ? hipSuccess : release(ptr);
}

/* Needs a device; the image is not read. */
hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  TRY(api_ready());
  if (module == NULL || image == NULL) return hipErrorInvalidValue;
  *module = &g_module;
  return hipSuccess;
}

/* "busy_<N>us" (decimal N, at most 2^40): a kernel of N microseconds. */
hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name) {
  uint64_t f;
  hipError_t rc = accel_function(function != NULL && name != NULL, module == &g_module, name, &f);
  if (rc == hipSuccess) *function = (hipFunction_t)(uintptr_t)f;
  return rc;
}

/* `function`: a hipFunction_t of hipModuleGetFunction (see the top); not
 * one: hipErrorInvalidDeviceFunction. On a stream in capture nothing runs
 * (stub_graph.h). */
#define CAPTURED(stream) graph_capturing((uint64_t)(uintptr_t)(stream))
/* Runs `call` (an expression) on stream `s`'s device (hip_stub_more.h);
 * on a stream in capture nothing runs. */
#define LAUNCH_ON(s, call)                                            \
  ({                                                                  \
    int saved_ = t_current, on_ = t_current;                          \
    hipError_t rc_ = stream_device((s), &on_);                        \
    if (rc_ == hipSuccess && !CAPTURED(s)) {                          \
      t_current = on_;                                                \
      rc_ = (call);                                                   \
      t_current = saved_;                                             \
    }                                                                 \
    rc_;                                                              \
  })
hipError_t hipLaunchKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                           hipStream_t stream) {
  return LAUNCH_ON(stream, accel_launch(function, TAG_FUNC, hipErrorInvalidDeviceFunction));
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared_bytes,
                                 hipStream_t stream, void** params, void** extra) {
  return LAUNCH_ON(stream, accel_launch(f, TAG_FUNC, hipErrorInvalidHandle));
}

/* An executable graph with memory (stub_graph.h), else a timed one. */
hipError_t hipGraphLaunch(hipGraphExec_t graph, hipStream_t stream) {
  int rc;
  TRY(api_ready());
  if (graph_exec_launch((uint64_t)(uintptr_t)graph, &rc)) return rc;
  return LAUNCH_ON(stream, accel_launch(graph, TAG_GRAPH, hipErrorInvalidHandle));
}

hipError_t hipGraphLaunch_spt(hipGraphExec_t graph, hipStream_t stream) { return hipGraphLaunch(graph, stream); }
hipError_t hipLaunchKernel_spt(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                               hipStream_t stream) {
  return hipLaunchKernel(function, grid, block, args, shared_bytes, stream);
}
hipError_t hipExtLaunchKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                              hipStream_t stream, hipEvent_t start, hipEvent_t stop, int flags) {
  return hipLaunchKernel(function, grid, block, args, shared_bytes, stream);
}
hipError_t hipLaunchCooperativeKernel(const void* function, dim3 grid, dim3 block, void** args,
                                      unsigned int shared_bytes, hipStream_t stream) {
  return hipLaunchKernel(function, grid, block, args, shared_bytes, stream);
}
hipError_t hipLaunchCooperativeKernel_spt(const void* function, dim3 grid, dim3 block, void** args,
                                          uint32_t shared_bytes, hipStream_t stream) {
  return hipLaunchKernel(function, grid, block, args, shared_bytes, stream);
}
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t global_x, uint32_t global_y, uint32_t global_z,
                                    uint32_t local_x, uint32_t local_y, uint32_t local_z, size_t shared_bytes,
                                    hipStream_t stream, void** params, void** extra, hipEvent_t start,
                                    hipEvent_t stop, uint32_t flags) {
  return LAUNCH_ON(stream, accel_launch(f, TAG_FUNC, hipErrorInvalidHandle));
}
hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t global_x, uint32_t global_y, uint32_t global_z,
                                    uint32_t local_x, uint32_t local_y, uint32_t local_z, size_t shared_bytes,
                                    hipStream_t stream, void** params, void** extra, hipEvent_t start,
                                    hipEvent_t stop) {
  return LAUNCH_ON(stream, accel_launch(f, TAG_FUNC, hipErrorInvalidHandle));
}
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                            unsigned int bx, unsigned int by, unsigned int bz,
                                            unsigned int shared_bytes, hipStream_t stream, void** params) {
  return LAUNCH_ON(stream, accel_launch(f, TAG_FUNC, hipErrorInvalidHandle));
}
/* Multi-device launches: every entry on its stream's device. */
hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams* list, int count, unsigned int flags) {
  if (list == NULL || count <= 0) return hipErrorInvalidValue;
  for (int i = 0; i < count; ++i)
    TRY(LAUNCH_ON(list[i].stream, accel_launch(list[i].func, TAG_FUNC, hipErrorInvalidDeviceFunction)));
  return hipSuccess;
}
hipError_t hipExtLaunchMultiKernelMultiDevice(hipLaunchParams* list, int count, unsigned int flags) {
  return hipLaunchCooperativeKernelMultiDevice(list, count, flags);
}
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams* list, unsigned int count,
                                                       unsigned int flags) {
  if (list == NULL || count == 0) return hipErrorInvalidValue;
  for (unsigned int i = 0; i < count; ++i)
    TRY(LAUNCH_ON(list[i].hStream, accel_launch(list[i].function, TAG_FUNC, hipErrorInvalidHandle)));
  return hipSuccess;
}
hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* function, void** args) {
  if (config == NULL) return hipErrorInvalidValue;
  return LAUNCH_ON(config->stream, accel_launch(function, TAG_FUNC, hipErrorInvalidDeviceFunction));
}
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG* config, hipFunction_t f, void** params, void** extra) {
  if (config == NULL) return hipErrorInvalidValue;
  return LAUNCH_ON(config->hStream, accel_launch(f, TAG_FUNC, hipErrorInvalidHandle));
}

/* The configurations hipConfigureCall pushed (their streams), per thread;
 * hipLaunchByPtr pops one and launches with the runtime's own call. */
static _Thread_local hipStream_t t_configured[16];
static _Thread_local int t_configured_depth;
hipError_t hipConfigureCall(dim3 grid, dim3 block, size_t shared_bytes, hipStream_t stream) {
  TRY(api_ready());
  if (t_configured_depth == 16) return hipErrorOutOfMemory;
  t_configured[t_configured_depth++] = stream;
  return hipSuccess;
}
hipError_t hipSetupArgument(const void* arg, size_t size, size_t offset) { return api_ready(); }
hipError_t hipLaunchByPtr(const void* function) {
  hipStream_t stream;
  TRY(api_ready());
  if (t_configured_depth == 0) return hipErrorInvalidConfiguration;
  stream = t_configured[--t_configured_depth];
  return LAUNCH_ON(stream, accel_launch(function, TAG_FUNC, hipErrorInvalidDeviceFunction));
}

hipGraphExec_t vgpu_stub_hip_graph(unsigned int duration_us) { return (hipGraphExec_t)accel_graph(duration_us); }

/* Sleeps until this process's last kernel on the current device ended. */
/* Pools give back what they reserve above their threshold (stub_pool.h). */
hipError_t hipDeviceSynchronize(void) {
  TRY(graph_unsafe_call());
  TRY(accel_synchronize());
  pool_synchronized();
  return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t stream) {
  int saved = t_current, d;
  hipError_t rc;
  TRY(stream_device(stream, &d));
  t_current = d;
  rc = hipDeviceSynchronize();
  t_current = saved;
  return rc;
}

/* On the current device. */
hipError_t hipEventCreate(hipEvent_t* event) {
  uint64_t key;
  hipError_t rc = accel_event_create(event != NULL, 0, &key);
  if (rc == hipSuccess) *event = (hipEvent_t)(uintptr_t)key;
  return rc;
}

/* A pending event may be destroyed, as with the real runtime. */
hipError_t hipEventDestroy(hipEvent_t event) { return accel_event_destroy((uintptr_t)event); }

/* On the event's device, whatever the stream and the current device. */
/* Under capture: stub_graph.h's rules. */
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  int captured, d;
  accel_event ev;
  TRY(stream_device(stream, &d));
  if (get_event((uintptr_t)event, &ev) != hipSuccess || ev.device != d) return hipErrorInvalidHandle;
  TRY(graph_event_record((uint64_t)(uintptr_t)stream, (uintptr_t)event, &captured));
  return captured ? hipSuccess : accel_event_record((uintptr_t)event);
}

hipError_t hipEventQuery(hipEvent_t event) {
  TRY(graph_event_use((uintptr_t)event));
  TRY(graph_unsafe_call());
  return accel_event_query((uintptr_t)event);
}
hipError_t hipEventSynchronize(hipEvent_t event) {
  TRY(graph_event_use((uintptr_t)event));
  TRY(graph_unsafe_call());
  return accel_event_synchronize((uintptr_t)event);
}

/* Handle errors (unknown, never recorded) come before hipErrorNotReady. */
hipError_t hipEventElapsedTime(float* milliseconds, hipEvent_t start, hipEvent_t stop) {
  TRY(graph_event_use((uintptr_t)start));
  TRY(graph_event_use((uintptr_t)stop));
  return accel_event_elapsed(milliseconds, (uintptr_t)start, (uintptr_t)stop);
}

unsigned long long vgpu_stub_hip_kernels_launched(void) { return atomic_load(&g_launched); }
unsigned long long vgpu_stub_hip_busy_ns(void) { return atomic_load(&g_busy_ns); }

#include "hip_stub_more.h"
#include "hip_stub_copies.h"

/* hipGetProcAddress: the stub's own entry points by name (the _spt twin
 * with HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM); a few suffice for
 * the tests. Works before initialisation. */
typedef void (*any_fn)(void);
static const struct {
  const char* name;
  any_fn fn, spt;
} g_procs[] = {
    {"hipMalloc", (any_fn)hipMalloc, NULL},
    {"hipFree", (any_fn)hipFree, NULL},
    {"hipGetDevice", (any_fn)hipGetDevice, NULL},
    {"hipGraphAddMemAllocNode", (any_fn)hipGraphAddMemAllocNode, NULL},
    {"hipGraphInstantiateWithFlags", (any_fn)hipGraphInstantiateWithFlags, NULL},
    {"hipStreamEndCapture", (any_fn)hipStreamEndCapture, (any_fn)hipStreamEndCapture_spt},
    {"hipMemCreate", (any_fn)hipMemCreate, NULL},
    {"hipLaunchKernel", (any_fn)hipLaunchKernel, (any_fn)hipLaunchKernel_spt},
    {"hipExtModuleLaunchKernel", (any_fn)hipExtModuleLaunchKernel, NULL},
};
hipError_t hipGetProcAddress(const char* symbol, void** pfn, int hip_version, uint64_t flags,
                             hipDriverProcAddressQueryResult* status) {
  if (symbol == NULL || pfn == NULL) return hipErrorInvalidValue;
  *pfn = NULL;
  for (size_t i = 0; i < sizeof(g_procs) / sizeof(g_procs[0]); ++i) {
    if (strcmp(g_procs[i].name, symbol) != 0) continue;
    any_fn fn = (flags & HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && g_procs[i].spt ? g_procs[i].spt : g_procs[i].fn;
    memcpy(pfn, &fn, sizeof(fn));
    if (status != NULL) *status = HIP_GET_PROC_ADDRESS_SUCCESS;
    return hipSuccess;
  }
  if (status != NULL) *status = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return hipErrorNotFound;
}
