/* Stream-ordered memory pools of the simulated accelerator, for stubs that
 * include stub_accel.h (cuMemAllocAsync, cuMemPool* in cuda_stub.c). As the
 * drivers document: a pool reserves device memory (booked on the device in
 * chunks) and hands allocations out of it; a free returns the allocation to
 * the pool, not to the device; at a synchronisation the pool gives back
 * what it reserves above max(in use, release threshold), and
 * cuMemPoolTrimTo gives back down to max(in use, the size asked). Pool n <
 * STUB_MAX_DEVICES is device n's default pool; the handle of pool n is
 * POOL_HANDLE_BASE + n. Static, like stub_accel.h: part of its includer's
 * translation unit. Functions return ACCEL_OK or the first failing check. */
#ifndef VGPU_TESTS_STUB_POOL_H_
#define VGPU_TESTS_STUB_POOL_H_

#include "stub_accel.h"

#define POOL_MAX 64
#define POOL_CHUNKS 256
#define POOL_ALLOCS 4096
#define POOL_HANDLE_BASE 0x9000
#define POOL_PTR_BASE 0x600000000000ULL

typedef struct {
  int device, alive;
  uint64_t threshold, reserved, used;
  uint64_t chunk_key[POOL_CHUNKS], chunk_bytes[POOL_CHUNKS];
  int nchunks;
} stub_pool;
typedef struct {
  uint64_t ptr, bytes;
  int pool;
} stub_pool_alloc;

static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static stub_pool g_pools[POOL_MAX];
static int g_npools = STUB_MAX_DEVICES; /* the default pools' slots */
static stub_pool_alloc g_pool_allocs[POOL_ALLOCS];
static size_t g_npool_allocs;
static uint64_t g_next_pool_ptr = POOL_PTR_BASE;

/* Pool index of `handle`, or -1 (not a live pool). g_pool_mu held. */
static int pool_index(uint64_t handle) {
  uint64_t n = handle - POOL_HANDLE_BASE;
  if (n >= POOL_MAX) return -1;
  if (n < STUB_MAX_DEVICES && accel_valid_device((int)n) && !g_pools[n].alive)
    g_pools[n] = (stub_pool){.device = (int)n, .alive = 1};
  return g_pools[n].alive ? (int)n : -1;
}

/* Gives back chunks, newest first, while the pool keeps at least `keep`
 * and what is in use. g_pool_mu held. */
static void pool_shrink(stub_pool* p, uint64_t keep) {
  if (keep < p->used) keep = p->used;
  while (p->nchunks > 0 && p->reserved - p->chunk_bytes[p->nchunks - 1] >= keep) {
    p->nchunks--;
    accel_release(KIND_HANDLE, p->chunk_key[p->nchunks]);
    p->reserved -= p->chunk_bytes[p->nchunks];
  }
}

/* Device `device`'s default pool (also its current one: the stub has no
 * cuDeviceSetMemPool). */
static int pool_of_device(int device, uint64_t* handle) {
  if (!accel_valid_device(device)) return ACCEL_INVALID_DEVICE;
  *handle = POOL_HANDLE_BASE + (uint64_t)device;
  return ACCEL_OK;
}

/* The device pool `handle` is on. */
static int pool_device(uint64_t handle, int* device) {
  pthread_mutex_lock(&g_pool_mu);
  int n = pool_index(handle);
  if (n >= 0) *device = g_pools[n].device;
  pthread_mutex_unlock(&g_pool_mu);
  return n >= 0 ? ACCEL_OK : ACCEL_INVALID_VALUE;
}

static int pool_create(int device, uint64_t* handle) {
  int rc = ACCEL_OUT_OF_MEMORY;
  if (!accel_valid_device(device)) return ACCEL_INVALID_DEVICE;
  pthread_mutex_lock(&g_pool_mu);
  if (g_npools < POOL_MAX) {
    g_pools[g_npools] = (stub_pool){.device = device, .alive = 1};
    *handle = POOL_HANDLE_BASE + (uint64_t)g_npools++;
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_pool_mu);
  return rc;
}

/* Everything the pool reserves goes back; a default pool cannot go. */
static int pool_destroy(uint64_t handle) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_pool_mu);
  int n = pool_index(handle);
  if (n >= STUB_MAX_DEVICES) {
    g_pools[n].used = 0;
    pool_shrink(&g_pools[n], 0);
    g_pools[n].alive = 0;
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_pool_mu);
  return rc;
}

/* `bytes` from the pool, which grows by what it lacks (ACCEL_OUT_OF_MEMORY
 * if the device has less). */
static int pool_alloc(uint64_t handle, size_t bytes, uint64_t* ptr) {
  int rc = ACCEL_INVALID_VALUE;
  uint64_t key;
  if (bytes == 0 || ptr == NULL) return ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_pool_mu);
  int n = pool_index(handle);
  stub_pool* p = n >= 0 ? &g_pools[n] : NULL;
  if (p != NULL && (g_npool_allocs == POOL_ALLOCS || p->nchunks == POOL_CHUNKS)) {
    rc = ACCEL_OUT_OF_MEMORY;
  } else if (p != NULL) {
    rc = ACCEL_OK;
    if (p->used + bytes > p->reserved) {
      uint64_t grow = p->used + bytes - p->reserved;
      rc = accel_reserve(KIND_HANDLE, p->device, grow, &key);
      if (rc == ACCEL_OK) {
        p->chunk_key[p->nchunks] = key;
        p->chunk_bytes[p->nchunks++] = grow;
        p->reserved += grow;
      }
    }
    if (rc == ACCEL_OK) {
      p->used += bytes;
      *ptr = g_next_pool_ptr;
      g_next_pool_ptr += (bytes + 255) & ~255ULL;
      g_pool_allocs[g_npool_allocs++] = (stub_pool_alloc){*ptr, bytes, n};
    }
  }
  pthread_mutex_unlock(&g_pool_mu);
  return rc;
}

/* Returns `ptr` to its pool; 0 if it is not a pool allocation. */
static int pool_free(uint64_t ptr) {
  int found = 0;
  pthread_mutex_lock(&g_pool_mu);
  for (size_t i = 0; i < g_npool_allocs; ++i) {
    if (g_pool_allocs[i].ptr != ptr) continue;
    g_pools[g_pool_allocs[i].pool].used -= g_pool_allocs[i].bytes;
    g_pool_allocs[i] = g_pool_allocs[--g_npool_allocs];
    found = 1;
    break;
  }
  pthread_mutex_unlock(&g_pool_mu);
  return found;
}

/* At a synchronisation: every pool down to max(in use, its threshold). */
static void pool_synchronized(void) {
  pthread_mutex_lock(&g_pool_mu);
  for (int n = 0; n < g_npools; ++n)
    if (g_pools[n].alive) pool_shrink(&g_pools[n], g_pools[n].threshold);
  pthread_mutex_unlock(&g_pool_mu);
}

static int pool_trim(uint64_t handle, size_t keep) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_pool_mu);
  int n = pool_index(handle);
  if (n >= 0) pool_shrink(&g_pools[n], keep), rc = ACCEL_OK;
  pthread_mutex_unlock(&g_pool_mu);
  return rc;
}

/* Attributes by CUDA's numbers: 4 release threshold (settable), 5 reserved,
 * 7 in use; the value is a uint64_t. */
static int pool_attribute(uint64_t handle, int attr, uint64_t* value, int set) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_pool_mu);
  int n = pool_index(handle);
  if (n >= 0 && value != NULL) {
    stub_pool* p = &g_pools[n];
    rc = ACCEL_OK;
    if (attr == 4 && set) p->threshold = *value;
    else if (attr == 4) *value = p->threshold;
    else if (attr == 5 && !set) *value = p->reserved;
    else if (attr == 7 && !set) *value = p->used;
    else rc = ACCEL_INVALID_VALUE;
  }
  pthread_mutex_unlock(&g_pool_mu);
  return rc;
}

#endif /* VGPU_TESTS_STUB_POOL_H_ */
