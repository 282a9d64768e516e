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
  int refs, maps; /* maps: mappings and multicast bindings */
  int device;
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
  if (rc == ACCEL_OK) g_phys[g_nphys++] = (vmm_phys){*handle, 1, 0, device};
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

/* Multicast objects (CUDA's cuMulticast*): a handle of its own (from
 * VMM_MC_BASE, no memory); memory bound to one is held, as a mapping holds
 * it, until unbound for its device or the object is released. */
#define VMM_MC_MAX 64
#define VMM_MC_BASE 0x7c0000ULL
typedef struct {
  uint64_t mc, offset, size, handle;
} vmm_binding;
static uint64_t g_mc[VMM_MC_MAX]; /* live objects' handles, 0: free */
static uint64_t g_next_mc = VMM_MC_BASE;
static vmm_binding g_bindings[VMM_MAX];
static size_t g_nbindings;

static int vmm_is_multicast(uint64_t mc) {
  for (int i = 0; i < VMM_MC_MAX; ++i)
    if (g_mc[i] && g_mc[i] == mc) return 1;
  return 0;
}

static int vmm_multicast_create(uint64_t* mc) {
  int rc = ACCEL_OUT_OF_MEMORY;
  if (mc == NULL) return ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  for (int i = 0; i < VMM_MC_MAX && rc != ACCEL_OK; ++i)
    if (!g_mc[i]) g_mc[i] = *mc = g_next_mc++, rc = ACCEL_OK;
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

/* Drops binding i; g_vmm_mu held. */
static void vmm_drop_binding(size_t i) {
  vmm_phys* p = vmm_find(g_bindings[i].handle);
  g_bindings[i] = g_bindings[--g_nbindings];
  if (p != NULL) {
    p->maps--;
    vmm_end_if_unused(p);
  }
}

/* Binds `handle` (holding a reference) to `mc` at `offset`. */
static int vmm_bind(uint64_t mc, uint64_t offset, uint64_t handle, uint64_t size) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  vmm_phys* p = vmm_find(handle);
  if (vmm_is_multicast(mc) && p != NULL && p->refs > 0 && size > 0 && g_nbindings < VMM_MAX) {
    g_bindings[g_nbindings++] = (vmm_binding){mc, offset, size, handle};
    p->maps++;
    rc = ACCEL_OK;
  }
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

/* Binds the allocation mapped at `va`. */
static int vmm_bind_addr(uint64_t mc, uint64_t offset, uint64_t va, uint64_t size) {
  uint64_t handle = 0;
  pthread_mutex_lock(&g_vmm_mu);
  for (size_t i = 0; i < g_nmaps && !handle; ++i)
    if (va - g_maps[i].va < g_maps[i].size) handle = g_maps[i].handle;
  pthread_mutex_unlock(&g_vmm_mu);
  return handle ? vmm_bind(mc, offset, handle, size) : ACCEL_INVALID_VALUE;
}

/* Unbinds the memory of `device` bound to `mc` in [offset, offset + size). */
static int vmm_unbind(uint64_t mc, int device, uint64_t offset, uint64_t size) {
  int rc = ACCEL_INVALID_VALUE;
  pthread_mutex_lock(&g_vmm_mu);
  if (vmm_is_multicast(mc)) {
    rc = ACCEL_OK;
    for (size_t i = 0; i < g_nbindings;) {
      vmm_phys* p = vmm_find(g_bindings[i].handle);
      if (g_bindings[i].mc == mc && g_bindings[i].offset - offset < size && p != NULL && p->device == device)
        vmm_drop_binding(i);
      else
        ++i;
    }
  }
  pthread_mutex_unlock(&g_vmm_mu);
  return rc;
}

/* 1 if `mc` was a multicast object (now released, its bindings gone). */
static int vmm_multicast_release(uint64_t mc) {
  int found = 0;
  pthread_mutex_lock(&g_vmm_mu);
  for (int i = 0; i < VMM_MC_MAX; ++i)
    if (g_mc[i] && g_mc[i] == mc) g_mc[i] = 0, found = 1;
  for (size_t i = 0; found && i < g_nbindings;) {
    if (g_bindings[i].mc == mc)
      vmm_drop_binding(i);
    else
      ++i;
  }
  pthread_mutex_unlock(&g_vmm_mu);
  return found;
}

#endif /* VGPU_TESTS_STUB_VMM_H_ */
