/* Shared by the stub CUDA driver (cuda_stub.c) and the stub HIP runtime
 * (hip_stub.c): the simulated accelerator behind their entry points. Each
 * stub keeps its API layer (names, signatures, error codes, environment
 * variable names, initialisation); this header holds the model:
 *
 * Devices: a device list (stub_devices.h) of "<id>,<memory_bytes>" records;
 *   the stub checks <id>, which also names the device's clock file.
 * Clock: with a clock directory, device <id>'s busy-until time (ns of
 *   CLOCK_MONOTONIC) lives in <dir>/<id>.clock (created if missing, mapped
 *   shared), so processes on one device queue their kernels after each other;
 *   without one, in the process.
 * Memory: each device has memory_bytes per process. Every allocation is
 *   booked in one table under a key never reused: device pointers PTR_BASE +
 *   (device << 40) + offset (offsets rise by the size rounded up to 256),
 *   handles 0x1000 + n, arrays 0xa0000000 + 64 n.
 * Kernels and graphs: tagged integers (tag above TAG_SHIFT, microseconds
 *   below), never dereferenced. A launch on a device runs from max(now,
 *   busy-until) for its time; synchronising sleeps until this process's last
 *   kernel on the device has ended.
 * Events: tagged integers too, checked against a table of live ones; a
 *   record is a zero-length kernel on the event's device (busy-until is not
 *   moved): the event completes at t = max(now, busy-until).
 *
 * The includer defines, before including, its API's result codes (ints) for
 * these outcomes: ACCEL_OK, ACCEL_INVALID_VALUE, ACCEL_INVALID_DEVICE,
 * ACCEL_INVALID_HANDLE, ACCEL_OUT_OF_MEMORY, ACCEL_NOT_READY, ACCEL_NOT_FOUND,
 * ACCEL_NO_DEVICE (an empty device list) and ACCEL_NO_CLOCK (a clock file
 * that cannot be mapped); and it defines the two functions declared below:
 *   api_ready()                  ACCEL_OK once the devices are loaded, else
 *                                the API's error;
 *   api_current_device(&device)  ACCEL_OK and the calling thread's device,
 *                                else the API's error.
 * Functions return ACCEL_OK or the code of the first check that fails, in
 * the order their comments give. g_mu guards the devices' memory, the
 * allocation table and the event table. Everything here is static: one
 * translation unit per stub. */
#ifndef VGPU_TESTS_STUB_ACCEL_H_
#define VGPU_TESTS_STUB_ACCEL_H_

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

#include "stub_devices.h"

#if !defined(ACCEL_OK) || !defined(ACCEL_INVALID_VALUE) || !defined(ACCEL_INVALID_DEVICE) ||   \
    !defined(ACCEL_INVALID_HANDLE) || !defined(ACCEL_OUT_OF_MEMORY) || !defined(ACCEL_NOT_READY) || \
    !defined(ACCEL_NOT_FOUND) || !defined(ACCEL_NO_DEVICE) || !defined(ACCEL_NO_CLOCK)
#error "define the ACCEL_* result codes before including stub_accel.h"
#endif

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_LONG_LOCK_FREE == 2, "shared clock: lock-free 64 bits");

#define PTR_BASE 0x7f0000000000ULL
#define TAG_SHIFT 60
#define TAG_FUNC 0xfULL
#define TAG_GRAPH 0xeULL
#define TAG_EVENT 0xdULL
#define MAX_US (1ULL << 40)
#define CLOCK_FILE_BYTES 64
#define TRY(call)                      \
  do {                                 \
    int rc_ = (call);                  \
    if (rc_ != ACCEL_OK) return rc_;   \
  } while (0)

static int api_ready(void);
static int api_current_device(int* device);

typedef struct {
  char id[STUB_FIELD_LEN]; /* as configured */
  size_t memory, used;
  uint64_t next_offset;
  _Atomic uint64_t* busy_until; /* the shared clock file, or local_busy */
  _Atomic uint64_t local_busy;
  _Atomic uint64_t last_end; /* end of this process's last kernel here */
} accel_device;

enum { KIND_PTR, KIND_HANDLE, KIND_ARRAY };
typedef struct {
  int kind, device;
  uint64_t key; /* device pointer, handle, or array address */
  size_t bytes;
} accel_alloc;

typedef struct {
  uint64_t key; /* the event handle's value */
  int device, recorded, untimed;
  uint64_t t; /* completion time of the last record */
} accel_event;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_count; /* devices loaded */
static accel_device g_dev[STUB_MAX_DEVICES];
static accel_alloc* g_table;
static size_t g_used, g_cap;
static uint64_t g_next_id = 1;
static accel_event* g_events; /* live events */
static size_t g_events_used, g_events_cap;
static uint64_t g_next_event = 1;
static _Atomic unsigned long long g_launched, g_busy_ns; /* this process's launches */

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sleeps until CLOCK_MONOTONIC reads `t` (ns). */
static inline void sleep_until(uint64_t t) {
  struct timespec ts;
  ts.tv_sec = (time_t)(t / 1000000000ULL);
  ts.tv_nsec = (long)(t % 1000000000ULL);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) continue;
}

/* Maps <dir>/<id>.clock; NULL on failure. A new file reads as 0. */
static inline _Atomic uint64_t* map_clock(const char* dir, const char* id) {
  char path[4096];
  struct stat st;
  void* p;
  int fd;
  if (snprintf(path, sizeof(path), "%s/%s.clock", dir, id) >= (int)sizeof(path)) return NULL;
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

/* Loads the device list of environment variable `devices_var` into g_dev,
 * with clocks in the directory of `clock_var` (unset or empty: per process),
 * and sets g_count. parse_id(id, i) checks record i's id (0: good) and may
 * keep what it parsed. ACCEL_NO_DEVICE: no record; ACCEL_INVALID_VALUE: a
 * record without a good id and a decimal size; ACCEL_NO_CLOCK: a clock file
 * that cannot be mapped. The last two write a line, prefixed `stub`, on
 * stderr; on failure g_count is left alone. */
static inline int accel_load(const char* stub, const char* devices_var, const char* clock_var,
                             int (*parse_id)(const char* id, int i)) {
  stub_record rec[STUB_MAX_DEVICES];
  const char* dir = getenv(clock_var);
  int rc = ACCEL_OK;
  int n = stub_read_records(devices_var, rec);
  if (n == 0) rc = ACCEL_NO_DEVICE;
  for (int i = 0; i < n && rc == ACCEL_OK; ++i) {
    accel_device* d = &g_dev[i];
    char* end;
    memset(d, 0, sizeof(*d));
    d->memory = (size_t)strtoull(rec[i].field[1], &end, 10);
    if (rec[i].count < 2 || parse_id(rec[i].field[0], i) != 0 || rec[i].field[1][0] == '\0' || *end != '\0') {
      fprintf(stderr, "%s: bad %s record %d\n", stub, devices_var, i);
      rc = ACCEL_INVALID_VALUE;
      break;
    }
    memcpy(d->id, rec[i].field[0], sizeof(d->id));
    d->busy_until = &d->local_busy;
    if (dir != NULL && dir[0] != '\0' && (d->busy_until = map_clock(dir, d->id)) == NULL) {
      fprintf(stderr, "%s: cannot map %s/%s.clock\n", stub, dir, d->id);
      rc = ACCEL_NO_CLOCK;
    }
  }
  if (rc == ACCEL_OK) g_count = n;
  return rc;
}

static inline int accel_valid_device(int d) { return d >= 0 && d < g_count; }

/* The checks of a call taking output `out` and device ordinal `d`: ready,
 * `out` not NULL (ACCEL_INVALID_VALUE), `d` a device (ACCEL_INVALID_DEVICE). */
static inline int accel_device_call(const void* out, int d) {
  TRY(api_ready());
  if (out == NULL) return ACCEL_INVALID_VALUE;
  return accel_valid_device(d) ? ACCEL_OK : ACCEL_INVALID_DEVICE;
}

/* The memory of device `d` in *bytes; checks as accel_device_call. */
static inline int accel_total_mem(size_t* bytes, int d) {
  int rc = accel_device_call(bytes, d);
  if (rc == ACCEL_OK) *bytes = g_dev[d].memory;
  return rc;
}

/* The current device in *device (not NULL: ACCEL_INVALID_VALUE). */
static inline int accel_get_device(int* device) {
  int d;
  TRY(api_current_device(&d));
  if (device == NULL) return ACCEL_INVALID_VALUE;
  *device = d;
  return ACCEL_OK;
}

/* The current device's free and total memory (neither NULL:
 * ACCEL_INVALID_VALUE). */
static inline int accel_mem_info(size_t* free_bytes, size_t* total_bytes) {
  int d;
  TRY(api_current_device(&d));
  if (free_bytes == NULL || total_bytes == NULL) return ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  *free_bytes = g_dev[d].memory - g_dev[d].used;
  *total_bytes = g_dev[d].memory;
  pthread_mutex_unlock(&g_mu);
  return ACCEL_OK;
}

/* Books `bytes` (> 0) on `device` under a new key of `kind` in *key (a
 * device pointer for KIND_PTR). ACCEL_OUT_OF_MEMORY if the device has less
 * left (or the table cannot grow). */
static inline int accel_reserve(int kind, int device, size_t bytes, uint64_t* key) {
  accel_device* d = &g_dev[device];
  int rc = ACCEL_OK;
  pthread_mutex_lock(&g_mu);
  if (bytes > d->memory - d->used) {
    rc = ACCEL_OUT_OF_MEMORY;
  } else if (g_used == g_cap) {
    size_t cap = g_cap ? g_cap * 2 : 64;
    accel_alloc* t = realloc(g_table, cap * sizeof(*t));
    if (t == NULL) rc = ACCEL_OUT_OF_MEMORY;
    else g_table = t, g_cap = cap;
  }
  if (rc == ACCEL_OK) {
    if (kind == KIND_PTR) {
      *key = PTR_BASE + ((uint64_t)device << 40) + d->next_offset;
      d->next_offset += ((uint64_t)bytes + 255) & ~255ULL;
    } else if (kind == KIND_HANDLE) {
      *key = 0x1000 + g_next_id++;
    } else {
      *key = 0xa0000000ULL + 64 * g_next_id++;
    }
    d->used += bytes;
    g_table[g_used++] = (accel_alloc){kind, device, *key, bytes};
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* Returns the bytes of `key` of `kind` to its device; ready, then
 * ACCEL_INVALID_VALUE if not booked. */
static inline int accel_release(int kind, uint64_t key) {
  int rc = ACCEL_INVALID_VALUE;
  TRY(api_ready());
  pthread_mutex_lock(&g_mu);
  for (size_t i = 0; i < g_used; ++i) {
    if (g_table[i].kind == kind && g_table[i].key == key) {
      g_dev[g_table[i].device].used -= g_table[i].bytes;
      g_table[i] = g_table[--g_used];
      rc = ACCEL_OK;
      break;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* "busy_<N>us" (decimal N, at most 2^40): a kernel of N microseconds in *f.
 * Ready, then the caller's own checks (`args_ok`: ACCEL_INVALID_VALUE,
 * `known_module`: ACCEL_INVALID_HANDLE), then the name (ACCEL_NOT_FOUND). */
static inline int accel_function(int args_ok, int known_module, const char* name, uint64_t* f) {
  unsigned long long us = 0;
  const char* p;
  TRY(api_ready());
  if (!args_ok) return ACCEL_INVALID_VALUE;
  if (!known_module) return ACCEL_INVALID_HANDLE;
  if (strncmp(name, "busy_", 5) != 0) return ACCEL_NOT_FOUND;
  for (p = name + 5; *p >= '0' && *p <= '9' && us <= MAX_US; ++p) us = us * 10 + (unsigned)(*p - '0');
  if (p == name + 5 || us > MAX_US || strcmp(p, "us") != 0) return ACCEL_NOT_FOUND;
  *f = (TAG_FUNC << TAG_SHIFT) | us;
  return ACCEL_OK;
}

/* A graph of `duration_us` microseconds. */
static inline uintptr_t accel_graph(unsigned int duration_us) {
  return (uintptr_t)((TAG_GRAPH << TAG_SHIFT) | duration_us);
}

/* Queues kernel or graph `handle` (which must carry `tag`, else `bad`) on
 * the current device: start = max(now, busy-until), busy-until = start +
 * its time, by compare-and-swap as other processes may share the clock. */
static inline int accel_launch(const void* handle, uint64_t tag, int bad) {
  uint64_t v = (uint64_t)(uintptr_t)handle, dur, now, old, start, end, prev;
  _Atomic uint64_t* clock;
  int d;
  TRY(api_current_device(&d));
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
  return ACCEL_OK;
}

/* Sleeps until this process's last kernel on the current device ended. */
static inline int accel_synchronize(void) {
  int d;
  TRY(api_current_device(&d));
  sleep_until(atomic_load(&g_dev[d].last_end));
  return ACCEL_OK;
}

/* The live event `key`, or NULL; call with g_mu held (the pointer is good
 * until it is released: the table moves). */
static inline accel_event* find_event(uint64_t key) {
  for (size_t i = 0; i < g_events_used; ++i)
    if (g_events[i].key == key) return &g_events[i];
  return NULL;
}

/* A copy of live event `key` in *out; ready, then ACCEL_INVALID_HANDLE. */
static inline int get_event(uint64_t key, accel_event* out) {
  accel_event* ev;
  TRY(api_ready());
  pthread_mutex_lock(&g_mu);
  if ((ev = find_event(key)) != NULL) *out = *ev;
  pthread_mutex_unlock(&g_mu);
  return ev != NULL ? ACCEL_OK : ACCEL_INVALID_HANDLE;
}

/* A new event on the current device in *key; then the caller's checks
 * (`args_ok`: ACCEL_INVALID_VALUE). `untimed`: accel_event_elapsed refuses
 * it. */
static inline int accel_event_create(int args_ok, int untimed, uint64_t* key) {
  int d, rc = ACCEL_OK;
  TRY(api_current_device(&d));
  if (!args_ok) return ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_mu);
  if (g_events_used == g_events_cap) {
    size_t cap = g_events_cap ? g_events_cap * 2 : 16;
    accel_event* t = realloc(g_events, cap * sizeof(*t));
    if (t == NULL) rc = ACCEL_OUT_OF_MEMORY;
    else g_events = t, g_events_cap = cap;
  }
  if (rc == ACCEL_OK) {
    *key = (TAG_EVENT << TAG_SHIFT) | g_next_event++;
    g_events[g_events_used++] = (accel_event){*key, d, 0, untimed, 0};
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}

/* A pending event may be destroyed, as with the real libraries. Ready, then
 * ACCEL_INVALID_HANDLE if not live (likewise for the calls below). */
static inline int accel_event_destroy(uint64_t key) {
  accel_event* ev;
  TRY(api_ready());
  pthread_mutex_lock(&g_mu);
  if ((ev = find_event(key)) != NULL) *ev = g_events[--g_events_used];
  pthread_mutex_unlock(&g_mu);
  return ev != NULL ? ACCEL_OK : ACCEL_INVALID_HANDLE;
}

/* On the event's device, whatever the stream and the current device; a new
 * record replaces the last. */
static inline int accel_event_record(uint64_t key) {
  accel_event* ev;
  TRY(api_ready());
  pthread_mutex_lock(&g_mu);
  if ((ev = find_event(key)) != NULL) {
    uint64_t now = now_ns(), busy = atomic_load(g_dev[ev->device].busy_until);
    ev->t = busy > now ? busy : now;
    ev->recorded = 1;
  }
  pthread_mutex_unlock(&g_mu);
  return ev != NULL ? ACCEL_OK : ACCEL_INVALID_HANDLE;
}

/* ACCEL_OK from t on (and if never recorded), else ACCEL_NOT_READY. */
static inline int accel_event_query(uint64_t key) {
  accel_event ev;
  TRY(get_event(key, &ev));
  return !ev.recorded || now_ns() >= ev.t ? ACCEL_OK : ACCEL_NOT_READY;
}

/* Sleeps until t (not at all if never recorded). */
static inline int accel_event_synchronize(uint64_t key) {
  accel_event ev;
  TRY(get_event(key, &ev));
  if (ev.recorded) sleep_until(ev.t);
  return ACCEL_OK;
}

/* (t_end - t_start) in ms, possibly negative. Ready, `milliseconds` not NULL
 * (ACCEL_INVALID_VALUE), both live, both recorded and neither untimed
 * (ACCEL_INVALID_HANDLE), both completed (ACCEL_NOT_READY). */
static inline int accel_event_elapsed(float* milliseconds, uint64_t start, uint64_t end) {
  accel_event a, b;
  uint64_t now;
  TRY(api_ready());
  if (milliseconds == NULL) return ACCEL_INVALID_VALUE;
  TRY(get_event(start, &a));
  TRY(get_event(end, &b));
  if (!a.recorded || !b.recorded || a.untimed || b.untimed) return ACCEL_INVALID_HANDLE;
  now = now_ns();
  if (now < a.t || now < b.t) return ACCEL_NOT_READY;
  *milliseconds = (float)((double)(int64_t)(b.t - a.t) / 1e6);
  return ACCEL_OK;
}

#endif /* VGPU_TESTS_STUB_ACCEL_H_ */
