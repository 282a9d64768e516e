/* Shared by cuda_probe.c and hip_probe.c, the test programs that run the
 * commands of their arguments in order and print one line per command:
 * argument helpers, the list of allocations held (for `free`), and the
 * commands both have, run by probe_shared:
 *
 *   launch US MODE          one US-microsecond kernel (MODE as for work),
 *                           not waited for                         -> "launch RC"
 *   work SECONDS US MODE    launches US-microsecond kernels of the stub
 *                           back to back for SECONDS, synchronising after
 *                           each                                    -> "work N BUSY_MS WALL_MS"
 *                           N: launches (0 if a call failed); BUSY_MS: the
 *                           device time the stub booked meanwhile
 *   hold                    prints "hold", sleeps until killed
 */
#ifndef VGPU_TESTS_PROBE_COMMON_H_
#define VGPU_TESTS_PROBE_COMMON_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What `work` needs of the API. The calls return the API's result, 0 for
 * success (CUDA_SUCCESS, hipSuccess). */
typedef struct {
  int (*load)(const char* name); /* loads kernel `name` ("busy_<US>us") */
  /* Launches the kernel, or a graph of `us` microseconds, as MODE says. */
  int (*launch)(const char* mode, unsigned int us);
  int (*sync)(void);                   /* waits until the launches have ended */
  unsigned long long (*busy_ns)(void); /* device time the stub booked for this process */
} probe_api;

typedef struct {
  int kind; /* the includer's: which call frees it */
  unsigned long long key;
} held_t;

static held_t held[4096];
static int nheld = 0;

static inline unsigned long long num(const char* s) { return strtoull(s, NULL, 0); }

/* argv[i], or "0" past the end. */
static inline const char* arg(int argc, char** argv, int i) { return i < argc ? argv[i] : "0"; }

/* The optional argument after argv[*i] (an ordinal, if it starts with a
 * digit: consumed); else 0. */
static inline int ordinal_arg(int argc, char** argv, int* i) {
  return (*i + 1 < argc && argv[*i + 1][0] >= '0' && argv[*i + 1][0] <= '9') ? (int)num(argv[++*i]) : 0;
}

/* Holds an allocation for `free` (up to 4096; later ones are not freed). */
static inline void keep(int kind, unsigned long long key) {
  if (nheld < 4096) held[nheld++] = (held_t){kind, key};
}

/* The newest allocation still held, taken off the list into *h; none:
 * prints "free none" and returns 0. */
static inline int take(held_t* h) {
  if (nheld == 0) {
    printf("free none\n");
    return 0;
  }
  *h = held[--nheld];
  return 1;
}

static inline double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* After an allocation command: holds `key` (of `kind`) if `rc` is 0, and
 * prints "<command> RC". */
static inline void allocated(const char* command, int rc, int kind, unsigned long long key) {
  if (rc == 0) keep(kind, key);
  printf("%s %d\n", command, rc);
}

/* The `work` command (see the top), and "burst SECONDS US N": kernels of
 * US microseconds launched N at a time back to back, then waited for, for
 * SECONDS; prints "burst KERNELS BUSY_MS WALL_MS" as work does. Back-to-back
 * tiny kernels are what libvgpu.so samples rather than times one by one.
 * `work` is a burst of 1 in `mode`. */
static inline void probe_launches(const probe_api* api, const char* label, const char* seconds, const char* us,
                                  const char* mode, unsigned int batch) {
  char name[64];
  unsigned int n_us = (unsigned)num(us);
  int rc;
  snprintf(name, sizeof(name), "busy_%sus", us);
  rc = api->load(name);
  double t0 = now_ms(), end = t0 + atof(seconds) * 1e3;
  unsigned long long busy0 = api->busy_ns(), n = 0;
  while (rc == 0 && now_ms() < end) {
    for (unsigned int k = 0; rc == 0 && k < (batch ? batch : 1); ++k, ++n) rc = api->launch(mode, n_us);
    if (rc == 0) rc = api->sync();
  }
  printf("%s %llu %.1f %.1f\n", label, rc == 0 ? n : 0ULL, (api->busy_ns() - busy0) / 1e6, now_ms() - t0);
}

/* Virtual memory commands (vmap, vrelease, vretain, vunmap, vfree; see
 * cuda_probe.c), over a runtime's calls: each returns the runtime's code,
 * 0 on success. Handles are carried as integers. */
typedef struct {
  int (*reserve)(uintptr_t* va, size_t bytes);                  /* an address range */
  int (*create)(uint64_t* handle, size_t bytes);                /* physical memory on the device */
  int (*map)(uintptr_t va, size_t bytes, uint64_t handle);      /* map (and allow access) */
  int (*unmap)(uintptr_t va, size_t bytes);
  int (*release)(uint64_t handle);
  int (*retain)(uint64_t* handle, uintptr_t va);                /* may be NULL */
} vmm_api;

typedef struct {
  uintptr_t va;
  size_t size;
  uint64_t handle;
  int released;
} vmm_mapping;
static vmm_mapping vmm_maps[256];
static int vmm_nmaps = 0;
static uintptr_t vmm_va_base = 0;
static size_t vmm_va_used = 0;

/* Creates `bytes` and maps them at the end of one reserved range (64 GiB). */
static inline int vmm_map_more(const vmm_api* v, size_t bytes) {
  uint64_t h = 0;
  int rc = 0;
  if (vmm_nmaps == 256) return -1;
  if (!vmm_va_base) rc = v->reserve(&vmm_va_base, 64ULL << 30);
  if (rc == 0) rc = v->create(&h, bytes);
  if (rc != 0) return rc;
  rc = v->map(vmm_va_base + vmm_va_used, bytes, h);
  if (rc != 0) {
    v->release(h);
    return rc;
  }
  vmm_maps[vmm_nmaps++] = (vmm_mapping){vmm_va_base + vmm_va_used, bytes, h, 0};
  vmm_va_used += bytes;
  return 0;
}

/* Unmaps the newest mapping (popped), then releases its handle if
 * `release` and not released yet. */
static inline int vmm_unmap_newest(const vmm_api* v, int release) {
  vmm_mapping m;
  int rc;
  if (vmm_nmaps == 0) return -1;
  m = vmm_maps[--vmm_nmaps];
  vmm_va_used -= m.size;
  rc = v->unmap(m.va, m.size);
  if (rc == 0 && release && !m.released) rc = v->release(m.handle);
  return rc;
}

/* Runs vmap BYTES / vrelease / vretain / vunmap / vfree if argv[*i] is one
 * (printing "<cmd> RC"); returns whether it was. */
static inline int vmm_command(const vmm_api* v, int argc, char** argv, int* i) {
  const char* c = argv[*i];
  int rc;
  if (!strcmp(c, "vmap")) {
    printf("vmap %d\n", vmm_map_more(v, num(arg(argc, argv, ++*i))));
  } else if (!strcmp(c, "vrelease")) {
    rc = vmm_nmaps ? v->release(vmm_maps[vmm_nmaps - 1].handle) : -1;
    if (rc == 0) vmm_maps[vmm_nmaps - 1].released = 1;
    printf("vrelease %d\n", rc);
  } else if (!strcmp(c, "vretain") && v->retain) {
    uint64_t h = 0;
    rc = vmm_nmaps ? v->retain(&h, vmm_maps[vmm_nmaps - 1].va) : -1;
    if (rc == 0 && h != vmm_maps[vmm_nmaps - 1].handle) rc = -2;
    printf("vretain %d\n", rc);
  } else if (!strcmp(c, "vunmap") || !strcmp(c, "vfree")) {
    printf("%s %d\n", c, vmm_unmap_newest(v, !strcmp(c, "vfree")));
  } else {
    return 0;
  }
  return 1;
}

/* The commands after a probe's own: work and hold (see the top), taking
 * their arguments after argv[*i]. Else a line on stderr for an unknown
 * command. Returns -1 to go on, or the exit status (2: unknown). */
static inline int probe_shared(const probe_api* api, const char* probe, int argc, char** argv, int* i) {
  const char* c = argv[*i];
  if (!strcmp(c, "work")) {
    probe_launches(api, "work", arg(argc, argv, *i + 1), arg(argc, argv, *i + 2), arg(argc, argv, *i + 3), 1);
    *i += 3;
    return -1;
  }
  if (!strcmp(c, "burst")) {
    probe_launches(api, "burst", arg(argc, argv, *i + 1), arg(argc, argv, *i + 2), "kernel",
                   (unsigned)num(arg(argc, argv, *i + 3)));
    *i += 3;
    return -1;
  }
  if (!strcmp(c, "launch")) {
    /* One kernel of US microseconds, MODE as for work; not waited for. */
    char name[64];
    int rc;
    snprintf(name, sizeof(name), "busy_%sus", arg(argc, argv, *i + 1));
    rc = api->load(name);
    if (rc == 0) rc = api->launch(arg(argc, argv, *i + 2), (unsigned)num(arg(argc, argv, *i + 1)));
    printf("launch %d\n", rc);
    *i += 2;
    return -1;
  }
  if (!strcmp(c, "hold")) {
    printf("hold\n");
    for (;;) pause();
  }
  fprintf(stderr, "%s: unknown command %s\n", probe, c);
  return 2;
}

#endif /* VGPU_TESTS_PROBE_COMMON_H_ */
