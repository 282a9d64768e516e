/* Stub HIP runtime (built as stubs/libamdhip64.so) for the interposer tests.
 * Devices and memory are simulated; kernels only occupy a simulated device
 * clock. Entry points: src/interposer/vendor/hip_api.h. The twin of
 * cuda_stub.c: same memory, clock and event model.
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
 * returns at once; on the current device it runs from max(now, busy-until)
 * for its time. hipDeviceSynchronize/hipStreamSynchronize (any stream) sleep
 * until this process's last kernel on the current device has ended. Stream
 * arguments are otherwise ignored. Test exports: vgpu_stub_hip_graph(),
 * vgpu_stub_hip_kernels_launched(), vgpu_stub_hip_busy_ns() (sum of the
 * durations this process launched).
 *
 * Events (tagged integers too, checked against a table of live ones;
 * unknown or destroyed: hipErrorInvalidHandle) belong to the current device
 * when created. hipEventRecord is a zero-length kernel there: the event
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

#include "hip_api.h"
#include "stub_devices.h"

/* Arguments the simulation does not model (streams, grid sizes, flags,
 * pools) are ignored. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_LONG_LOCK_FREE == 2, "shared clock: lock-free 64 bits");

hipGraphExec_t vgpu_stub_hip_graph(unsigned int duration_us);
unsigned long long vgpu_stub_hip_kernels_launched(void);
unsigned long long vgpu_stub_hip_busy_ns(void);

static struct ihipModule_t {
  int unused;
} g_module; /* the one module */

typedef struct {
  char bus_id[STUB_FIELD_LEN];
  size_t memory, used;
  uint64_t next_offset;
  _Atomic uint64_t* busy_until; /* the shared clock file, or local_busy */
  _Atomic uint64_t local_busy;
  _Atomic uint64_t last_end; /* end of this process's last kernel here */
} device_t;

typedef struct {
  uint64_t key; /* the hipEvent_t's value */
  int device, recorded;
  uint64_t t; /* completion time of the last record */
} event_t;

typedef struct {
  int device;
  uint64_t key; /* device pointer */
  size_t bytes;
} alloc_t;

#define PTR_BASE 0x7f0000000000ULL
#define TAG_SHIFT 60
#define TAG_FUNC 0xfULL
#define TAG_GRAPH 0xeULL
#define TAG_EVENT 0xdULL
#define MAX_US (1ULL << 40)
#define CLOCK_FILE_BYTES 64
#define TRY(call)                          \
  do {                                     \
    hipError_t rc_ = (call);               \
    if (rc_ != hipSuccess) return rc_;     \
  } while (0)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static hipError_t g_init_rc; /* written once, under g_once */
static int g_count;
static device_t g_dev[STUB_MAX_DEVICES];
static alloc_t* g_table;
static size_t g_used, g_cap;
static event_t* g_events; /* live events */
static size_t g_events_used, g_events_cap;
static uint64_t g_next_event = 1;
static _Thread_local int t_current; /* the current device */
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

/* Maps <dir>/<bus_id>.clock; NULL on failure. A new file reads as 0. */
static _Atomic uint64_t* map_clock(const char* dir, const char* bus_id) {
  char path[4096];
  struct stat st;
  void* p;
  int fd;
  if (snprintf(path, sizeof(path), "%s/%s.clock", dir, bus_id) >= (int)sizeof(path)) return NULL;
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

/* The one initialisation: reads VGPU_STUB_HIP_DEVICES and maps the clocks. */
static void init_once(void) {
  stub_record rec[STUB_MAX_DEVICES];
  const char* dir = getenv("VGPU_STUB_HIP_CLOCK_DIR");
  hipError_t rc = hipSuccess;
  int n = stub_read_records("VGPU_STUB_HIP_DEVICES", rec);
  if (n == 0) rc = hipErrorNoDevice;
  for (int i = 0; i < n && rc == hipSuccess; ++i) {
    device_t* d = &g_dev[i];
    unsigned domain, bus, dev, fn;
    char* end;
    memset(d, 0, sizeof(*d));
    d->memory = (size_t)strtoull(rec[i].field[1], &end, 10);
    if (rec[i].count < 2 || stub_parse_bdf(rec[i].field[0], &domain, &bus, &dev, &fn) != 0 ||
        rec[i].field[1][0] == '\0' || *end != '\0') {
      fprintf(stderr, "hip_stub: bad VGPU_STUB_HIP_DEVICES record %d\n", i);
      rc = hipErrorInvalidValue;
      break;
    }
    memcpy(d->bus_id, rec[i].field[0], sizeof(d->bus_id));
    d->busy_until = &d->local_busy;
    if (dir != NULL && dir[0] != '\0' && (d->busy_until = map_clock(dir, d->bus_id)) == NULL) {
      fprintf(stderr, "hip_stub: cannot map %s/%s.clock\n", dir, d->bus_id);
      rc = hipErrorNotInitialized;
    }
  }
  if (rc == hipSuccess) g_count = n;
  g_init_rc = rc;
}

/* Initialises on first use; the first outcome, every time. */
static hipError_t init(void) {
  pthread_once(&g_once, init_once);
  return g_init_rc;
}

/* The checks of a call taking output `out` and device ordinal `d`. */
static hipError_t device_call(const void* out, int d) {
  TRY(init());
  if (out == NULL) return hipErrorInvalidValue;
  return d >= 0 && d < g_count ? hipSuccess : hipErrorInvalidDevice;
}

/* The calling thread's current device (always a valid ordinal once
 * initialised: hipSetDevice checks it, the default 0 exists). */
static hipError_t current_device(int* device) {
  TRY(init());
  *device = t_current;
  return hipSuccess;
}

/* Books `bytes` on `device` under a new device pointer. 0 bytes: *ptr =
 * NULL, nothing booked. hipErrorOutOfMemory if the device has less left. */
static hipError_t reserve(int device, size_t bytes, void** ptr) {
  device_t* d = &g_dev[device];
  hipError_t rc = hipSuccess;
  if (bytes == 0) {
    *ptr = NULL;
    return hipSuccess;
  }
  pthread_mutex_lock(&g_mu);
  if (bytes > d->memory - d->used) {
    rc = hipErrorOutOfMemory;
  } else if (g_used == g_cap) {
    size_t cap = g_cap ? g_cap * 2 : 64;
    alloc_t* t = realloc(g_table, cap * sizeof(*t));
    if (t == NULL) rc = hipErrorOutOfMemory;
    else g_table = t, g_cap = cap;
  }
  if (rc == hipSuccess) {
    uint64_t key = PTR_BASE + ((uint64_t)device << 40) + d->next_offset;
    d->next_offset += ((uint64_t)bytes + 255) & ~255ULL;
    d->used += bytes;
    g_table[g_used++] = (alloc_t){device, key, bytes};
    *ptr = (void*)(uintptr_t)key;
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* Returns the bytes of `ptr`; hipErrorInvalidValue if not booked. */
static hipError_t release(const void* ptr) {
  uint64_t key = (uint64_t)(uintptr_t)ptr;
  hipError_t rc = hipErrorInvalidValue;
  TRY(init());
  pthread_mutex_lock(&g_mu);
  for (size_t i = 0; i < g_used; ++i) {
    if (g_table[i].key == key) {
      g_dev[g_table[i].device].used -= g_table[i].bytes;
      g_table[i] = g_table[--g_used];
      rc = hipSuccess;
      break;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* A device pointer of `bytes` on the current device. */
static hipError_t alloc_current(void** ptr, size_t bytes) {
  int device;
  TRY(current_device(&device));
  if (ptr == NULL) return hipErrorInvalidValue;
  return reserve(device, bytes, ptr);
}

/* No devices: *count = 0 and hipErrorNoDevice, as the real runtime. */
hipError_t hipGetDeviceCount(int* count) {
  hipError_t rc;
  if (count == NULL) return hipErrorInvalidValue;
  rc = init();
  *count = rc == hipSuccess ? g_count : 0;
  return rc;
}

hipError_t hipGetDevice(int* device) {
  int d;
  TRY(current_device(&d));
  if (device == NULL) return hipErrorInvalidValue;
  *device = d;
  return hipSuccess;
}

/* For the calling thread only. */
hipError_t hipSetDevice(int device) {
  TRY(device_call("", device));
  t_current = device;
  return hipSuccess;
}

/* The configured bus id; hipErrorInvalidValue if it and its NUL do not fit
 * in `length` bytes. */
hipError_t hipDeviceGetPCIBusId(char* bus_id, int length, int device) {
  size_t n;
  TRY(device_call(bus_id, device));
  n = strlen(g_dev[device].bus_id);
  if (length <= 0 || (size_t)length <= n) return hipErrorInvalidValue;
  memcpy(bus_id, g_dev[device].bus_id, n + 1);
  return hipSuccess;
}

hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
  hipError_t rc = device_call(bytes, device);
  if (rc == hipSuccess) *bytes = g_dev[device].memory;
  return rc;
}

hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  int d;
  TRY(current_device(&d));
  if (free_bytes == NULL || total_bytes == NULL) return hipErrorInvalidValue;
  pthread_mutex_lock(&g_mu);
  *free_bytes = g_dev[d].memory - g_dev[d].used;
  *total_bytes = g_dev[d].memory;
  pthread_mutex_unlock(&g_mu);
  return hipSuccess;
}

hipError_t hipMalloc(void** ptr, size_t size) { return alloc_current(ptr, size); }
hipError_t hipExtMallocWithFlags(void** ptr, size_t size, unsigned int flags) { return alloc_current(ptr, size); }
hipError_t hipMallocManaged(void** ptr, size_t size, unsigned int flags) { return alloc_current(ptr, size); }

/* pitch = width rounded up to a multiple of 512; takes pitch * height.
 * Width or height 0: *ptr = NULL, *pitch = 0, hipSuccess. */
hipError_t hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  int d;
  size_t p, bytes;
  TRY(current_device(&d));
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

/* Stream-ordered allocation happens at once; pools are ignored. */
hipError_t hipMallocAsync(void** ptr, size_t size, hipStream_t stream) { return alloc_current(ptr, size); }
hipError_t hipMallocFromPoolAsync(void** ptr, size_t size, hipMemPool_t pool, hipStream_t stream) {
  return alloc_current(ptr, size);
}

hipError_t hipFree(void* ptr) {
  TRY(init());
  return ptr == NULL ? hipSuccess : release(ptr);
}

hipError_t hipFreeAsync(void* ptr, hipStream_t stream) { return release(ptr); }

/* Needs a device; the image is not read. */
hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  TRY(init());
  if (module == NULL || image == NULL) return hipErrorInvalidValue;
  *module = &g_module;
  return hipSuccess;
}

/* "busy_<N>us" (decimal N, at most 2^40): a kernel of N microseconds. */
hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name) {
  unsigned long long us = 0;
  const char* p;
  TRY(init());
  if (function == NULL || name == NULL) return hipErrorInvalidValue;
  if (module != &g_module) return hipErrorInvalidHandle;
  if (strncmp(name, "busy_", 5) != 0) return hipErrorNotFound;
  for (p = name + 5; *p >= '0' && *p <= '9' && us <= MAX_US; ++p) us = us * 10 + (unsigned)(*p - '0');
  if (p == name + 5 || us > MAX_US || strcmp(p, "us") != 0) return hipErrorNotFound;
  *function = (hipFunction_t)(uintptr_t)((TAG_FUNC << TAG_SHIFT) | us);
  return hipSuccess;
}

/* Queues kernel or graph `handle` (which must carry `tag`, else `bad`) on
 * the current device: start = max(now, busy-until), busy-until = start +
 * its time, by compare-and-swap as other processes may share the clock. */
static hipError_t launch_tagged(const void* handle, uint64_t tag, hipError_t bad) {
  uint64_t v = (uint64_t)(uintptr_t)handle, dur, now, old, start, end, prev;
  _Atomic uint64_t* clock;
  int d;
  TRY(current_device(&d));
  if ((v >> TAG_SHIFT) != tag) return bad;
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
  return hipSuccess;
}

/* `function`: a hipFunction_t of hipModuleGetFunction (see the top). */
hipError_t hipLaunchKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                           hipStream_t stream) {
  return launch_tagged(function, TAG_FUNC, hipErrorInvalidDeviceFunction);
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared_bytes,
                                 hipStream_t stream, void** params, void** extra) {
  return launch_tagged(f, TAG_FUNC, hipErrorInvalidHandle);
}

hipError_t hipGraphLaunch(hipGraphExec_t graph, hipStream_t stream) {
  return launch_tagged(graph, TAG_GRAPH, hipErrorInvalidHandle);
}

hipGraphExec_t vgpu_stub_hip_graph(unsigned int duration_us) {
  return (hipGraphExec_t)(uintptr_t)((TAG_GRAPH << TAG_SHIFT) | duration_us);
}

/* Sleeps until this process's last kernel on the current device ended. */
hipError_t hipDeviceSynchronize(void) {
  int d;
  TRY(current_device(&d));
  sleep_until(atomic_load(&g_dev[d].last_end));
  return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t stream) { return hipDeviceSynchronize(); }

/* The live event `e`, or NULL; call with g_mu held (the pointer is good
 * until it is released: the table moves). */
static event_t* find_event(hipEvent_t e) {
  uint64_t key = (uint64_t)(uintptr_t)e;
  for (size_t i = 0; i < g_events_used; ++i)
    if (g_events[i].key == key) return &g_events[i];
  return NULL;
}

/* A copy of live event `e` in *out. */
static hipError_t get_event(hipEvent_t e, event_t* out) {
  event_t* ev;
  TRY(init());
  pthread_mutex_lock(&g_mu);
  if ((ev = find_event(e)) != NULL) *out = *ev;
  pthread_mutex_unlock(&g_mu);
  return ev != NULL ? hipSuccess : hipErrorInvalidHandle;
}

/* On the current device. */
hipError_t hipEventCreate(hipEvent_t* event) {
  int d;
  hipError_t rc = hipSuccess;
  TRY(current_device(&d));
  if (event == NULL) return hipErrorInvalidValue;
  pthread_mutex_lock(&g_mu);
  if (g_events_used == g_events_cap) {
    size_t cap = g_events_cap ? g_events_cap * 2 : 16;
    event_t* t = realloc(g_events, cap * sizeof(*t));
    if (t == NULL) rc = hipErrorOutOfMemory;
    else g_events = t, g_events_cap = cap;
  }
  if (rc == hipSuccess) {
    uint64_t key = (TAG_EVENT << TAG_SHIFT) | g_next_event++;
    g_events[g_events_used++] = (event_t){key, d, 0, 0};
    *event = (hipEvent_t)(uintptr_t)key;
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* A pending event may be destroyed, as with the real runtime. */
hipError_t hipEventDestroy(hipEvent_t event) {
  event_t* ev;
  TRY(init());
  pthread_mutex_lock(&g_mu);
  if ((ev = find_event(event)) != NULL) *ev = g_events[--g_events_used];
  pthread_mutex_unlock(&g_mu);
  return ev != NULL ? hipSuccess : hipErrorInvalidHandle;
}

/* On the event's device, whatever the stream and the current device. */
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  event_t* ev;
  TRY(init());
  pthread_mutex_lock(&g_mu);
  if ((ev = find_event(event)) != NULL) {
    uint64_t now = now_ns(), busy = atomic_load(g_dev[ev->device].busy_until);
    ev->t = busy > now ? busy : now;
    ev->recorded = 1;
  }
  pthread_mutex_unlock(&g_mu);
  return ev != NULL ? hipSuccess : hipErrorInvalidHandle;
}

hipError_t hipEventQuery(hipEvent_t event) {
  event_t ev;
  TRY(get_event(event, &ev));
  return !ev.recorded || now_ns() >= ev.t ? hipSuccess : hipErrorNotReady;
}

hipError_t hipEventSynchronize(hipEvent_t event) {
  event_t ev;
  TRY(get_event(event, &ev));
  if (ev.recorded) sleep_until(ev.t);
  return hipSuccess;
}

/* Handle errors (unknown, never recorded) come before hipErrorNotReady. */
hipError_t hipEventElapsedTime(float* milliseconds, hipEvent_t start, hipEvent_t stop) {
  event_t a, b;
  uint64_t now;
  TRY(init());
  if (milliseconds == NULL) return hipErrorInvalidValue;
  TRY(get_event(start, &a));
  TRY(get_event(stop, &b));
  if (!a.recorded || !b.recorded) return hipErrorInvalidHandle;
  now = now_ns();
  if (now < a.t || now < b.t) return hipErrorNotReady;
  *milliseconds = (float)((double)(int64_t)(b.t - a.t) / 1e6);
  return hipSuccess;
}

unsigned long long vgpu_stub_hip_kernels_launched(void) { return atomic_load(&g_launched); }
unsigned long long vgpu_stub_hip_busy_ns(void) { return atomic_load(&g_busy_ns); }
