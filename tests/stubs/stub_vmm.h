/* Virtual memory management of the simulated accelerator, for stubs that
 * include stub_accel.h (cuMemCreate / cuMemMap / cuMemUnmap / cuMemRelease
 * and cuMemRetainAllocationHandle in cuda_stub.c). As the drivers document:
 * a physical allocation (a KIND_HANDLE booking) holds device memory until
 * every reference to its handle is released AND no mapping of it is left;
 * cuMemAddressReserve hands out address ranges that hold no memory. Static,
 * like stub_accel.h: part of its includer's translation unit. Functions
 * return ACCEL_OK or ACCEL_INVALID_VALUE (unknown handle or address). */
#ifndef VGPU_TESTS_STUB_VMM_H_
#define VGPU_TESTS_STUB_VMM_H_

#include "stub_accel.h"

#define VMM_MAX 4096
#define VMM_VA_BASE 0x500000000000ULL
#define VMM_GRANULE (2ULL << 20)

typedef struct {
  uint64_t handle;
  int refs, maps;
} vmm_phys;
typedef struct {
  uint64_t va, size, handle;
} vmm_map;

static pthread_mutex_t g_vmm_mu = PTHREAD_MUTEX_INITIALIZER;
static vmm_phys g_phys[VMM_MAX];
static size_t g_nphys;
static vmm_map g_maps[VMM_MAX];
static size_t g_nmaps;
static uint64_t g_next_va = VMM_VA_BASE;

static vmm_phys* vmm_find(uint64_t handle) {
  for (size_t i = 0; i < g_nphys; ++i)
    if (g_phys[i].handle == handle) return &g_phys[i];
  return NULL;
}

/* Frees the physical allocation of *p if nothing holds it; g_vmm_mu held. */
static void vmm_end_if_unused(vmm_phys* p) {
  if (p->refs > 0 || p->maps > 0) return;
  accel_release(KIND_HANDLE, p->handle);
  *p = g_phys[--g_nphys];
}

/* A physical allocation of `bytes` on `device` (ACCEL_OUT_OF_MEMORY as
 * accel_reserve), one reference. */
static int vmm_create(int device, size_t bytes, uint64_t* handle) {
  int rc;
  if (bytes == 0 || handle == NULL) return ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  rc = g_nphys == VMM_MAX ? ACCEL_OUT_OF_MEMORY : accel_reserve(KIND_HANDLE, device, bytes, handle);
  if (rc == ACCEL_OK) g_phys[g_nphys++] = (vmm_phys){*handle, 1, 0};
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

static int vmm_release(uint64_t handle) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  vmm_phys* p = vmm_find(handle);
  if (p != NULL && p->refs > 0) {
    p->refs--;
    vmm_end_if_unused(p);
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

/* An address range of `size` bytes (rounded up to 2 MiB), no memory. */
static int vmm_reserve_va(size_t size, uint64_t* va) {
  if (size == 0 || va == NULL) return ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  *va = g_next_va;
  g_next_va += (size + VMM_GRANULE - 1) / VMM_GRANULE * VMM_GRANULE;
  pthread_mutex_unlock(&g_vmm_mu);
  return ACCEL_OK;
}

/* Maps `handle` (which must hold a reference) at [va, va + size). */
static int vmm_map_handle(uint64_t va, size_t size, uint64_t handle) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  vmm_phys* p = vmm_find(handle);
  if (p != NULL && p->refs > 0 && size > 0 && g_nmaps < VMM_MAX) {
    g_maps[g_nmaps++] = (vmm_map){va, size, handle};
    p->maps++;
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

/* Unmaps every mapping that starts inside [va, va + size); none: invalid. */
static int vmm_unmap(uint64_t va, size_t size) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  for (size_t i = 0; i < g_nmaps;) {
    if (g_maps[i].va - va >= size) {
      ++i;
      continue;
    }
    vmm_phys* p = vmm_find(g_maps[i].handle);
    g_maps[i] = g_maps[--g_nmaps];
    if (p != NULL) {
      p->maps--;
      vmm_end_if_unused(p);
    }
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

/* Another reference to the allocation mapped at `addr`. */
static int vmm_retain(uint64_t addr, uint64_t* handle) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  for (size_t i = 0; i < g_nmaps; ++i) {
    if (addr - g_maps[i].va >= g_maps[i].size) continue;
    vmm_phys* p = vmm_find(g_maps[i].handle);
    if (p == NULL) break;
    p->refs++;
    *handle = p->handle;
    rc = ACCEL_OK;
    break;
  }
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

#endif /* VGPU_TESTS_STUB_VMM_H_ */
