/* Stub CUDA driver (built as stubs/libcuda.so.1) for the interposer tests.
 * Devices, contexts and memory are simulated; kernels only occupy a
 * simulated device clock. Entry points: src/interposer/vendor/cuda_api.h.
 *
 * Environment, read by the first successful cuInit (later calls keep the
 * state and return CUDA_SUCCESS; a failed one leaves nothing behind):
 *   VGPU_STUB_CUDA_DEVICES    "<uuid>,<memory_bytes>;..."
 *       e.g. "GPU-11111111-2222-3333-4444-555555555555,8589934592"
 *       uuid: "GPU-" and 32 hex digits (dashes anywhere): the 16 bytes of
 *       cuDeviceGetUuid. No record: CUDA_ERROR_NO_DEVICE; a bad uuid or
 *       size: CUDA_ERROR_INVALID_VALUE, with a line on stderr.
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
 * cuCtxSynchronize/cuStreamSynchronize (any stream) sleep until this
 * process's last kernel on the current device has ended. Stream arguments
 * are otherwise ignored. Test exports: vgpu_stub_cuda_graph(),
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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuda_api.h"
#include "stub_devices.h"

/* Arguments the simulation does not model (streams, grid sizes, flags) are
 * ignored. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_LONG_LOCK_FREE == 2, "shared clock: lock-free 64 bits");

CUgraphExec vgpu_stub_cuda_graph(unsigned int duration_us);
unsigned long long vgpu_stub_cuda_kernels_launched(void);
unsigned long long vgpu_stub_cuda_busy_ns(void);

struct CUctx_st {
  int device, alive; /* alive: cleared by cuCtxDestroy_v2; never freed */
};
static struct CUmod_st {
  int unused;
} g_module; /* the one module */

typedef struct {
  char uuid_text[STUB_FIELD_LEN];
  unsigned char uuid[16];
  size_t memory, used;
  uint64_t next_offset;
  struct CUctx_st primary;
  _Atomic uint64_t* busy_until; /* the shared clock file, or local_busy */
  _Atomic uint64_t local_busy;
  _Atomic uint64_t last_end; /* end of this process's last kernel here */
} device_t;

typedef struct {
  uint64_t key; /* the CUevent's value */
  int device, recorded;
  unsigned int flags;
  uint64_t t; /* completion time of the last record */
} event_t;

enum { KIND_PTR, KIND_HANDLE, KIND_ARRAY };
typedef struct {
  int kind, device;
  uint64_t key; /* device pointer, handle, or array address */
  size_t bytes, pitch;
} alloc_t;

#define PTR_BASE 0x7f0000000000ULL
#define TAG_SHIFT 60
#define TAG_FUNC 0xfULL
#define TAG_GRAPH 0xeULL
#define TAG_EVENT 0xdULL
#define EVENT_FLAGS 0x7U /* CU_EVENT_BLOCKING_SYNC 1, DISABLE_TIMING 2, INTERPROCESS 4 */
#define MAX_US (1ULL << 40)
#define CLOCK_FILE_BYTES 64
#define TRY(call)                  \
  do {                             \
    CUresult rc_ = (call);         \
    if (rc_ != CUDA_SUCCESS) return rc_; \
  } while (0)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_ready;
static int g_count;
static device_t g_dev[STUB_MAX_DEVICES];
static alloc_t* g_table;
static size_t g_used, g_cap;
static uint64_t g_next_id = 1;
static event_t* g_events; /* live events */
static size_t g_events_used, g_events_cap;
static uint64_t g_next_event = 1;
static _Thread_local CUcontext t_current;
static _Atomic unsigned long long g_launched, g_busy_ns;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sleeps until CLOCK_MONOTONIC reads `t` (ns). */
static void sleep_until(uint64_t t) {
  struct timespec ts;
  ts.tv_sec = (time_t)(t / 1000000000ULL);
  ts.tv_nsec = (long)(t % 1000000000ULL);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) continue;
}

static int ready(void) { return atomic_load_explicit(&g_ready, memory_order_acquire); }
static int valid_device(CUdevice d) { return d >= 0 && d < g_count; }

/* The checks of a call taking output `out` and device ordinal `d`. */
static CUresult device_call(const void* out, CUdevice d) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (out == NULL) return CUDA_ERROR_INVALID_VALUE;
  return valid_device(d) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* "GPU-" and exactly 32 hex digits, dashes ignored; 0 on success. */
static int parse_uuid(const char* s, unsigned char out[16]) {
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

/* Maps <dir>/<uuid>.clock; NULL on failure. A new file reads as 0. */
static _Atomic uint64_t* map_clock(const char* dir, const char* uuid) {
  char path[4096];
  struct stat st;
  void* p;
  int fd;
  if (snprintf(path, sizeof(path), "%s/%s.clock", dir, uuid) >= (int)sizeof(path)) return NULL;
  fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return NULL;
  /* Growing to the same size twice is harmless; never shrink. */
  if (fstat(fd, &st) != 0 || (st.st_size < CLOCK_FILE_BYTES && ftruncate(fd, CLOCK_FILE_BYTES) != 0)) {
    close(fd);
    return NULL;
  }
  p = mmap(NULL, CLOCK_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? NULL : (_Atomic uint64_t*)p;
}

/* The current context's device; CUDA_ERROR_INVALID_CONTEXT without one. */
static CUresult current_device(int* device) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (t_current == NULL || !t_current->alive) return CUDA_ERROR_INVALID_CONTEXT;
  *device = t_current->device;
  return CUDA_SUCCESS;
}

/* Books `bytes` on `device` under a new key of `kind` (a device pointer for
 * KIND_PTR). CUDA_ERROR_OUT_OF_MEMORY if the device has less left. */
static CUresult reserve(int kind, int device, size_t bytes, size_t pitch, unsigned long long* key) {
  device_t* d = &g_dev[device];
  CUresult rc = CUDA_SUCCESS;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  if (bytes > d->memory - d->used) {
    rc = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (g_used == g_cap) {
    size_t cap = g_cap ? g_cap * 2 : 64;
    alloc_t* t = realloc(g_table, cap * sizeof(*t));
    if (t == NULL) rc = CUDA_ERROR_OUT_OF_MEMORY;
    else g_table = t, g_cap = cap;
  }
  if (rc == CUDA_SUCCESS) {
    if (kind == KIND_PTR) {
      *key = PTR_BASE + ((uint64_t)device << 40) + d->next_offset;
      d->next_offset += ((uint64_t)bytes + 255) & ~255ULL;
    } else if (kind == KIND_HANDLE) {
      *key = 0x1000 + g_next_id++;
    } else {
      *key = 0xa0000000ULL + 64 * g_next_id++;
    }
    d->used += bytes;
    g_table[g_used++] = (alloc_t){kind, device, *key, bytes, pitch};
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* Returns the bytes of `key`; CUDA_ERROR_INVALID_VALUE if not booked. */
static CUresult release(int kind, uint64_t key) {
  CUresult rc = CUDA_ERROR_INVALID_VALUE;
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_mu);
  for (size_t i = 0; i < g_used; ++i) {
    if (g_table[i].kind == kind && g_table[i].key == key) {
      g_dev[g_table[i].device].used -= g_table[i].bytes;
      g_table[i] = g_table[--g_used];
      rc = CUDA_SUCCESS;
      break;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* A device pointer of `bytes` on the current context's device. */
static CUresult alloc_current(CUdeviceptr* dptr, size_t bytes) {
  int device;
  TRY(current_device(&device));
  if (dptr == NULL) return CUDA_ERROR_INVALID_VALUE;
  return reserve(KIND_PTR, device, bytes, 0, dptr);
}

CUresult cuInit(unsigned int flags) {
  stub_record rec[STUB_MAX_DEVICES];
  const char* dir = getenv("VGPU_STUB_CUDA_CLOCK_DIR");
  CUresult rc = CUDA_SUCCESS;
  int n;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  if (ready()) goto out;
  n = stub_read_records("VGPU_STUB_CUDA_DEVICES", rec);
  if (n == 0) rc = CUDA_ERROR_NO_DEVICE;
  for (int i = 0; i < n && rc == CUDA_SUCCESS; ++i) {
    device_t* d = &g_dev[i];
    char* end;
    memset(d, 0, sizeof(*d));
    d->memory = (size_t)strtoull(rec[i].field[1], &end, 10);
    if (rec[i].count < 2 || parse_uuid(rec[i].field[0], d->uuid) != 0 || rec[i].field[1][0] == '\0' ||
        *end != '\0') {
      fprintf(stderr, "cuda_stub: bad VGPU_STUB_CUDA_DEVICES record %d\n", i);
      rc = CUDA_ERROR_INVALID_VALUE;
      break;
    }
    memcpy(d->uuid_text, rec[i].field[0], sizeof(d->uuid_text));
    d->primary = (struct CUctx_st){i, 1};
    d->busy_until = &d->local_busy;
    if (dir != NULL && dir[0] != '\0' && (d->busy_until = map_clock(dir, d->uuid_text)) == NULL) {
      fprintf(stderr, "cuda_stub: cannot map %s/%s.clock\n", dir, d->uuid_text);
      rc = CUDA_ERROR_NOT_PERMITTED;
    }
  }
  if (rc == CUDA_SUCCESS) {
    g_count = n;
    atomic_store_explicit(&g_ready, 1, memory_order_release);
  }
out:
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
  CUresult rc = device_call(device, ordinal);
  if (rc == CUDA_SUCCESS) *device = ordinal;
  return rc;
}

CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device) {
  CUresult rc = device_call(uuid, device);
  if (rc == CUDA_SUCCESS) memcpy(uuid->bytes, g_dev[device].uuid, 16);
  return rc;
}

CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) { return cuDeviceGetUuid(uuid, device); }

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  CUresult rc = device_call(bytes, device);
  if (rc == CUDA_SUCCESS) *bytes = g_dev[device].memory;
  return rc;
}

/* The device's one primary context; not made current. */
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  CUresult rc = device_call(ctx, device);
  if (rc == CUDA_SUCCESS) *ctx = &g_dev[device].primary;
  return rc;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) { return device_call("", device); }

/* A new context on `device`, made current on this thread. */
CUresult cuCtxCreate_v2(CUcontext* ctx, unsigned int flags, CUdevice device) {
  TRY(device_call(ctx, device));
  if ((*ctx = malloc(sizeof(**ctx))) == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
  **ctx = (struct CUctx_st){device, 1};
  t_current = *ctx;
  return CUDA_SUCCESS;
}

/* Primary contexts stay alive; others become invalid (unbound here). */
CUresult cuCtxDestroy_v2(CUcontext ctx) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (ctx != &g_dev[ctx->device].primary) ctx->alive = 0;
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

CUresult cuCtxGetDevice(CUdevice* device) {
  int d;
  TRY(current_device(&d));
  if (device == NULL) return CUDA_ERROR_INVALID_VALUE;
  *device = d;
  return CUDA_SUCCESS;
}

/* Sleeps until this process's last kernel on the current device ended. */
CUresult cuCtxSynchronize(void) {
  int d;
  TRY(current_device(&d));
  sleep_until(atomic_load(&g_dev[d].last_end));
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream) { return cuCtxSynchronize(); }

/* Needs a current context; the image is not read. */
CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  int d;
  TRY(current_device(&d));
  if (module == NULL || image == NULL) return CUDA_ERROR_INVALID_VALUE;
  *module = &g_module;
  return CUDA_SUCCESS;
}

/* "busy_<N>us" (decimal N, at most 2^40): a kernel of N microseconds. */
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  unsigned long long us = 0;
  const char* p;
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (function == NULL || name == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (module != &g_module) return CUDA_ERROR_INVALID_HANDLE;
  if (strncmp(name, "busy_", 5) != 0) return CUDA_ERROR_NOT_FOUND;
  for (p = name + 5; *p >= '0' && *p <= '9' && us <= MAX_US; ++p) us = us * 10 + (unsigned)(*p - '0');
  if (p == name + 5 || us > MAX_US || strcmp(p, "us") != 0) return CUDA_ERROR_NOT_FOUND;
  *function = (CUfunction)(uintptr_t)((TAG_FUNC << TAG_SHIFT) | us);
  return CUDA_SUCCESS;
}

/* Queues kernel or graph `handle` (which must carry `tag`) on the current
 * context's device: start = max(now, busy-until), busy-until = start + its
 * time, by compare-and-swap as other processes may share the clock. */
static CUresult launch_tagged(const void* handle, uint64_t tag) {
  uint64_t v = (uint64_t)(uintptr_t)handle, dur, now, old, start, end, prev;
  _Atomic uint64_t* clock;
  int d;
  TRY(current_device(&d));
  if ((v >> TAG_SHIFT) != tag) return CUDA_ERROR_INVALID_HANDLE;
  dur = (v & ((1ULL << TAG_SHIFT) - 1)) * 1000ULL;
  clock = g_dev[d].busy_until;
  now = now_ns();
  old = atomic_load(clock);
  do {
    start = old > now ? old : now;
    end = start + dur;
  } while (!atomic_compare_exchange_weak(clock, &old, end));
  prev = atomic_load(&g_dev[d].last_end);
  while (prev < end && !atomic_compare_exchange_weak(&g_dev[d].last_end, &prev, end)) continue;
  atomic_fetch_add(&g_launched, 1);
  atomic_fetch_add(&g_busy_ns, dur);
  return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  int d;
  TRY(current_device(&d));
  if (free_bytes == NULL || total_bytes == NULL) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  *free_bytes = g_dev[d].memory - g_dev[d].used;
  *total_bytes = g_dev[d].memory;
  pthread_mutex_unlock(&g_mu);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes) { return alloc_current(dptr, bytes); }
CUresult cuMemFree_v2(CUdeviceptr dptr) { return release(KIND_PTR, dptr); }

/* pitch = width_bytes rounded up to a multiple of 512; takes pitch * height. */
CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width_bytes, size_t height,
                            unsigned int element_bytes) {
  int d;
  size_t p, bytes;
  TRY(current_device(&d));
  if (dptr == NULL || pitch == NULL || width_bytes == 0 || height == 0 || width_bytes > SIZE_MAX - 511)
    return CUDA_ERROR_INVALID_VALUE;
  p = (width_bytes + 511) & ~(size_t)511;
  if (__builtin_mul_overflow(p, height, &bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  TRY(reserve(KIND_PTR, d, bytes, p, dptr));
  *pitch = p;
  return CUDA_SUCCESS;
}

CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytes, unsigned int flags) {
  return alloc_current(dptr, bytes);
}

/* On device prop->location.id (location type must be a device). */
CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t bytes, const CUmemAllocationProp* prop,
                     unsigned long long flags) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (handle == NULL || prop == NULL || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(prop->location.id)) return CUDA_ERROR_INVALID_DEVICE;
  return reserve(KIND_HANDLE, prop->location.id, bytes, 0, handle);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) { return release(KIND_HANDLE, handle); }

/* Stream-ordered allocation happens at once; pools are ignored. */
CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytes, CUstream s) { return alloc_current(dptr, bytes); }
CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytes, CUstream s) { return cuMemAllocAsync(dptr, bytes, s); }
CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream s) {
  return alloc_current(dptr, bytes);
}
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream s) {
  return cuMemAllocFromPoolAsync(dptr, bytes, pool, s);
}
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s) { return release(KIND_PTR, dptr); }
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s) { return cuMemFreeAsync(dptr, s); }

/* Width * max(Height,1) * max(Depth,1) * NumChannels * element bytes of
 * Format (1: INT8, 2: INT16/HALF, 4: INT32/FLOAT; else invalid), on the
 * current context's device. */
static CUresult array_create(CUarray* array, size_t w, size_t h, size_t depth, int format, unsigned ch) {
  int d;
  size_t elem, bytes;
  unsigned long long key;
  CUresult rc;
  TRY(current_device(&d));
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
  if ((rc = reserve(KIND_ARRAY, d, bytes, 0, &key)) == CUDA_SUCCESS) *array = (CUarray)(uintptr_t)key;
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

CUresult cuArrayDestroy(CUarray array) { return release(KIND_ARRAY, (uint64_t)(uintptr_t)array); }

/* Every launch variant: the kernel's time on the current context's device
 * (of config->hStream for cuLaunchKernelEx: streams are not modelled). */
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void** p, void** e) {
  return launch_tagged(f, TAG_FUNC);
}
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                             unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void** p, void** e) {
  return launch_tagged(f, TAG_FUNC);
}
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  if (config == NULL) return ready() ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
  return launch_tagged(f, TAG_FUNC);
}
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  return cuLaunchKernelEx(config, f, params, extra);
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shm,
                                   CUstream s, void** p) {
  return launch_tagged(f, TAG_FUNC);
}
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shm,
                                        CUstream s, void** p) {
  return launch_tagged(f, TAG_FUNC);
}
CUresult cuGraphLaunch(CUgraphExec graph, CUstream s) { return launch_tagged(graph, TAG_GRAPH); }
CUresult cuGraphLaunch_ptsz(CUgraphExec graph, CUstream s) { return launch_tagged(graph, TAG_GRAPH); }

CUgraphExec vgpu_stub_cuda_graph(unsigned int duration_us) {
  return (CUgraphExec)(uintptr_t)((TAG_GRAPH << TAG_SHIFT) | duration_us);
}

/* The live event `e`, or NULL; call with g_mu held (the pointer is good
 * until it is released: the table moves). */
static event_t* find_event(CUevent e) {
  uint64_t key = (uint64_t)(uintptr_t)e;
  for (size_t i = 0; i < g_events_used; ++i)
    if (g_events[i].key == key) return &g_events[i];
  return NULL;
}

/* A copy of live event `e` in *out. */
static CUresult get_event(CUevent e, event_t* out) {
  event_t* ev;
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_mu);
  if ((ev = find_event(e)) != NULL) *out = *ev;
  pthread_mutex_unlock(&g_mu);
  return ev != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* On the current context's device; flags beyond the driver's three:
 * CUDA_ERROR_INVALID_VALUE (the others only matter for timing). */
CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  int d;
  CUresult rc = CUDA_SUCCESS;
  TRY(current_device(&d));
  if (event == NULL || (flags & ~EVENT_FLAGS) != 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  if (g_events_used == g_events_cap) {
    size_t cap = g_events_cap ? g_events_cap * 2 : 16;
    event_t* t = realloc(g_events, cap * sizeof(*t));
    if (t == NULL) rc = CUDA_ERROR_OUT_OF_MEMORY;
    else g_events = t, g_events_cap = cap;
  }
  if (rc == CUDA_SUCCESS) {
    uint64_t key = (TAG_EVENT << TAG_SHIFT) | g_next_event++;
    g_events[g_events_used++] = (event_t){key, d, 0, flags, 0};
    *event = (CUevent)(uintptr_t)key;
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* A pending event may be destroyed, as with the real driver. */
CUresult cuEventDestroy_v2(CUevent event) {
  event_t* ev;
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_mu);
  if ((ev = find_event(event)) != NULL) *ev = g_events[--g_events_used];
  pthread_mutex_unlock(&g_mu);
  return ev != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* On the event's device, whatever the stream and the current context. */
CUresult cuEventRecord(CUevent event, CUstream stream) {
  event_t* ev;
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_mu);
  if ((ev = find_event(event)) != NULL) {
    uint64_t now = now_ns(), busy = atomic_load(g_dev[ev->device].busy_until);
    ev->t = busy > now ? busy : now;
    ev->recorded = 1;
  }
  pthread_mutex_unlock(&g_mu);
  return ev != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuEventRecord_ptsz(CUevent event, CUstream stream) { return cuEventRecord(event, stream); }

CUresult cuEventQuery(CUevent event) {
  event_t ev;
  TRY(get_event(event, &ev));
  return !ev.recorded || now_ns() >= ev.t ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(CUevent event) {
  event_t ev;
  TRY(get_event(event, &ev));
  if (ev.recorded) sleep_until(ev.t);
  return CUDA_SUCCESS;
}

/* Handle errors (unknown, never recorded, DISABLE_TIMING) come before
 * CUDA_ERROR_NOT_READY. */
CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  event_t a, b;
  uint64_t now;
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (milliseconds == NULL) return CUDA_ERROR_INVALID_VALUE;
  TRY(get_event(start, &a));
  TRY(get_event(end, &b));
  if (!a.recorded || !b.recorded || ((a.flags | b.flags) & CU_EVENT_DISABLE_TIMING) != 0)
    return CUDA_ERROR_INVALID_HANDLE;
  now = now_ns();
  if (now < a.t || now < b.t) return CUDA_ERROR_NOT_READY;
  *milliseconds = (float)((double)(int64_t)(b.t - a.t) / 1e6);
  return CUDA_SUCCESS;
}

unsigned long long vgpu_stub_cuda_kernels_launched(void) { return atomic_load(&g_launched); }
unsigned long long vgpu_stub_cuda_busy_ns(void) { return atomic_load(&g_busy_ns); }

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
    P("cuModuleLoadData", 0, cuModuleLoadData), P("cuModuleGetFunction", 0, cuModuleGetFunction),
    P("cuMemGetInfo", 3020, cuMemGetInfo_v2), P("cuMemAlloc", 3020, cuMemAlloc_v2),
    P("cuMemAllocPitch", 3020, cuMemAllocPitch_v2), P("cuMemAllocManaged", 0, cuMemAllocManaged),
    P("cuMemFree", 3020, cuMemFree_v2), P("cuMemCreate", 0, cuMemCreate), P("cuMemRelease", 0, cuMemRelease),
    PT("cuMemAllocAsync", cuMemAllocAsync), PT("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync),
    PT("cuMemFreeAsync", cuMemFreeAsync), P("cuArrayCreate", 3020, cuArrayCreate_v2),
    P("cuArray3DCreate", 3020, cuArray3DCreate_v2), P("cuArrayDestroy", 0, cuArrayDestroy),
    PT("cuLaunchKernel", cuLaunchKernel), PT("cuLaunchKernelEx", cuLaunchKernelEx),
    PT("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel), PT("cuGraphLaunch", cuGraphLaunch),
    P("cuEventCreate", 0, cuEventCreate), P("cuEventDestroy", 4000, cuEventDestroy_v2),
    PT("cuEventRecord", cuEventRecord), P("cuEventQuery", 0, cuEventQuery),
    P("cuEventSynchronize", 0, cuEventSynchronize), P("cuEventElapsedTime", 0, cuEventElapsedTime),
    P("cuGetProcAddress", 12000, cuGetProcAddress_v2), P("cuGetProcAddress", 0, cuGetProcAddress),
};

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
