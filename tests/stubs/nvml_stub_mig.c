/* Stub NVML, MIG part (linked into stubs/libnvidia-ml.so.1 with
 * nvml_stub.c).
 *
 * Environment, read on every call:
 *   VGPU_STUB_NVML_MIG_STATE    a file: when set, every device is MIG-capable
 *       (an 80 GB part: 7 compute slices) with MIG mode on, and its GPU and
 *       compute instances live in that file, so that one process (a prolog)
 *       creates what a later one (an epilog) destroys. One line per GPU
 *       instance, rewritten on each change:
 *         <parent uuid> gi=<GPU instance id> ci=<compute instance id|-> profile=<GI profile id> uuid=<MIG-...|-> start=<placement start>
 *       ci and uuid are "-" while the GPU instance has no compute instance.
 *       Unset: the MIG calls answer NVML_ERROR_NOT_SUPPORTED.
 *   VGPU_STUB_NVML_MIG_MODE     "0": MIG mode reads as disabled (current and
 *       pending) and instances cannot be made.
 *   VGPU_STUB_NVML_MIG_CALL_MS  how long a call that makes or destroys an
 *       instance takes (default 20). Like the driver, which answers "In use
 *       by another client" to a second client reconfiguring a GPU at the
 *       same moment, such a call made while another process is inside one
 *       for the same GPU answers NVML_ERROR_IN_USE (19).
 *
 * MIG model: GPU instance profile ids as NVML numbers them (1_SLICE=0,
 * 2_SLICE=1, 3_SLICE=2, 4_SLICE=3, 7_SLICE=4, 1_SLICE_REV1=7,
 * 1_SLICE_REV2=9; 8_SLICE=5, 6_SLICE=6 and 2_SLICE_REV1=8 are "not
 * supported", ids from 10 "invalid argument"), with an 80 GB part's sizes
 * (1g 9856 MiB, 1g.20gb 19968, 2g 19968, 3g and 4g 40192, 7g 80384) and
 * placements (memory slices, start:size: 1g and 1g+me 0..6:1, 1g.20gb
 * {0,2,4,6}:2, 2g {0,2,4}:2, 3g {0,4}:4, 4g 0:4, 7g 0:8), which
 * nvmlDeviceGetGpuInstancePossiblePlacements_v2 lists. A new GPU instance
 * takes the lowest free id from 1 and, without a placement, the lowest free
 * placement of its profile; with one (nvmlDeviceCreateGpuInstanceWithPlacement)
 * that placement, which must be one of the profile's (else
 * NVML_ERROR_INVALID_ARGUMENT). Instances may not share a memory slice, their
 * compute slices add up to 7 at most and a profile has its instance limit (7,
 * 3, 2, 1, 1, 1, 4): beyond, creation answers
 * NVML_ERROR_INSUFFICIENT_RESOURCES (23). A GPU instance holds at most one
 * compute instance (id 0, of a compute profile no wider than it; a second
 * one is INSUFFICIENT_RESOURCES); destroying a GPU instance that still has
 * it is NVML_ERROR_IN_USE (19). Each compute instance is one MIG device with
 * a fresh "MIG-..." UUID. Lookups of ids that do not exist answer
 * NVML_ERROR_NOT_FOUND (6).
 *
 * Failure injection as in nvml_stub.c (VGPU_STUB_NVML_FAIL / _UNSUPPORTED
 * name any MIG function too).
 *
 * Signatures and structures follow the NVML API reference (nvml.h). Handles
 * of MIG devices, GPU and compute instances encode kind, GPU index and ids.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "nvml_stub.h"

#define MIG_SLICES 7          /* compute slices of the simulated part */
#define MIG_MEMORY_SLICES 8   /* memory slices: placement positions */
#define MIG_GI_PROFILES 10    /* GPU instance profile ids 0..9 */
#define MIG_CI_PROFILES 8     /* compute instance profile ids 0..7 */
#define NO_CI 0xffffffffu

/* Handle kinds (bits 24..27); a GPU's handle is its index + 1. */
#define H_MIG 0x1000000
#define H_GI 0x2000000
#define H_CI 0x3000000

typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;

typedef struct {
  unsigned int id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount;
  unsigned int copyEngineCount, decoderCount, encoderCount, jpegCount, ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct {
  unsigned int id, sliceCount, instanceCount, multiprocessorCount;
  unsigned int sharedCopyEngineCount, sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct {
  unsigned int start, size;
} nvmlGpuInstancePlacement_t;

typedef struct {
  nvmlDevice_t device;
  unsigned int id, profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

/* GPU instance profiles by id: slices (0 = not supported), instance limit,
 * MiB, placement size (memory slices) and starts (bit k: start k). */
static const struct {
  unsigned slices, instances;
  unsigned long long mem_mb;
  unsigned size, starts;
} kGiProfiles[MIG_GI_PROFILES] = {
    {1, 7, 9856, 1, 0x7f}, {2, 3, 19968, 2, 0x15}, {3, 2, 40192, 4, 0x11}, {4, 1, 40192, 4, 0x01},
    {7, 1, 80384, 8, 0x01}, {0, 0, 0, 0, 0},      {0, 0, 0, 0, 0},         {1, 1, 9856, 1, 0x7f},
    {0, 0, 0, 0, 0},        {1, 4, 19968, 2, 0x55}};
/* Compute instance profiles by id: slices (1_SLICE..7_SLICE, 8_SLICE, 6_SLICE, 1_SLICE_REV1). */
static const unsigned kCiSlices[MIG_CI_PROFILES] = {1, 2, 3, 4, 7, 8, 6, 1};

typedef struct {
  char parent[STUB_FIELD_LEN];
  unsigned gi, ci, profile; /* ci: NO_CI while there is none */
  char uuid[STUB_FIELD_LEN];
  unsigned start; /* placement start (memory slice) */
} mig_instance;

typedef struct {
  mig_instance at[STUB_STATE_MAX];
  int count;
} mig_state;

static const char* mig_state_path(void) {
  const char* path = getenv("VGPU_STUB_NVML_MIG_STATE");
  return path != NULL && path[0] != '\0' ? path : NULL;
}

static int mig_mode_on(void) {
  const char* mode = getenv("VGPU_STUB_NVML_MIG_MODE");
  return mode == NULL || strcmp(mode, "0") != 0;
}

static void mig_load(mig_state* s) {
  static char lines[STUB_STATE_MAX][STUB_STATE_LINE];
  int n = stub_state_read(mig_state_path(), lines);
  char ci[16];
  s->count = 0;
  for (int i = 0; i < n; ++i) {
    mig_instance* m = &s->at[s->count];
    if (sscanf(lines[i], "%95s gi=%u ci=%15s profile=%u uuid=%95s start=%u", m->parent, &m->gi, ci, &m->profile,
               m->uuid, &m->start) != 6)
      continue;
    m->ci = strcmp(ci, "-") == 0 ? NO_CI : (unsigned)stub_u64(ci, 10);
    s->count++;
  }
}

static nvmlReturn_t mig_save(const mig_state* s) {
  static char text[STUB_STATE_MAX * STUB_STATE_LINE];
  size_t len = 0;
  text[0] = '\0';
  for (int i = 0; i < s->count; ++i) {
    const mig_instance* m = &s->at[i];
    char ci[16] = "-";
    if (m->ci != NO_CI) snprintf(ci, sizeof(ci), "%u", m->ci);
    len += (size_t)snprintf(text + len, sizeof(text) - len, "%s gi=%u ci=%s profile=%u uuid=%s start=%u\n", m->parent,
                            m->gi, ci, m->profile, m->ci != NO_CI ? m->uuid : "-", m->start);
  }
  return stub_state_write(mig_state_path(), text) == 0 ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

static void* mig_handle(int kind, int dev, unsigned gi, unsigned ci) {
  return (void*)(intptr_t)(kind | (dev << 16) | ((gi & 0xff) << 8) | (ci & 0xff));
}

/* A reconfiguration of one GPU under way: its lock (held for the call,
 * non-blocking: a second client gets NVML_ERROR_IN_USE) and the state
 * file's (blocking: the file is the node's, every GPU's instances in it). */
typedef struct {
  int gpu, state;
} mig_busy;

/* Enters a reconfiguration of GPU `dev`, taking the call's time first
 * (VGPU_STUB_NVML_MIG_CALL_MS); 0, or -1 when another process is inside
 * one for that GPU. */
static int mig_busy_enter(int dev, mig_busy* b) {
  char path[4200];
  const char* ms = getenv("VGPU_STUB_NVML_MIG_CALL_MS");
  b->gpu = b->state = -1;
  if (mig_state_path() == NULL) return 0; /* no MIG: nothing to guard */
  snprintf(path, sizeof(path), "%s.busy-%d", mig_state_path(), dev);
  if ((b->gpu = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) return 0;
  if (flock(b->gpu, LOCK_EX | LOCK_NB) != 0) {
    int busy = errno == EWOULDBLOCK;
    close(b->gpu);
    b->gpu = -1;
    if (busy) return -1;
  }
  usleep((useconds_t)(ms != NULL && ms[0] != '\0' ? stub_u64(ms, 10) : 20) * 1000);
  b->state = stub_state_lock(mig_state_path());
  return 0;
}

static nvmlReturn_t mig_busy_leave(const mig_busy* b, nvmlReturn_t rc) {
  stub_state_unlock(b->state);
  if (b->gpu >= 0) close(b->gpu);
  return rc;
}

/* The GPU index a GPU, GPU instance or compute instance handle names. */
static int mig_handle_gpu(void* handle) {
  intptr_t h = (intptr_t)handle;
  return (h & 0xf000000) != 0 ? (int)(h >> 16) & 0xff : (int)h - 1;
}

/* Memory slices of `parent` its GPU instances hold (bit k: slice k). */
static unsigned mig_used_slices(const mig_state* s, const char* parent) {
  unsigned used = 0;
  for (int r = 0; r < s->count; ++r) {
    unsigned size = kGiProfiles[s->at[r].profile % MIG_GI_PROFILES].size;
    if (strcmp(s->at[r].parent, parent) == 0) used |= ((1u << size) - 1) << s->at[r].start;
  }
  return used;
}

/* The row of GPU instance `gi` of `parent`, or -1. */
static int mig_find(const mig_state* s, const char* parent, unsigned gi) {
  for (int i = 0; i < s->count; ++i)
    if (s->at[i].gi == gi && strcmp(s->at[i].parent, parent) == 0) return i;
  return -1;
}

/* A GPU handle ready for MIG calls: its index and UUID; the state loaded. */
static nvmlReturn_t mig_gpu(nvmlDevice_t device, int* index, char parent[STUB_FIELD_LEN], mig_state* s) {
  stub_record all[STUB_MAX_DEVICES];
  char fallback[32];
  const stub_record* r = lookup(device, all, index);
  if (r == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (mig_state_path() == NULL || !mig_mode_on()) return NVML_ERROR_NOT_SUPPORTED;
  snprintf(parent, STUB_FIELD_LEN, "%s", device_uuid(r, *index, fallback));
  mig_load(s);
  return NVML_SUCCESS;
}

/* Decodes a MIG device, GPU or compute instance handle of `kind` into the
 * row it names (which for H_MIG and H_CI must have that compute instance). */
static nvmlReturn_t mig_decode(void* handle, int kind, mig_state* s, int* dev, int* row) {
  intptr_t h = (intptr_t)handle;
  unsigned gi = (unsigned)(h >> 8) & 0xff, ci = (unsigned)h & 0xff;
  char parent[STUB_FIELD_LEN];
  if ((h & 0xf000000) != kind) return NVML_ERROR_INVALID_ARGUMENT;
  *dev = (int)(h >> 16) & 0xff;
  if (mig_gpu((nvmlDevice_t)(intptr_t)(*dev + 1), dev, parent, s) != NVML_SUCCESS) return NVML_ERROR_INVALID_ARGUMENT;
  if ((*row = mig_find(s, parent, gi)) < 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (kind != H_GI && s->at[*row].ci != ci) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

nvmlReturn_t mig_device_uuid(nvmlDevice_t device, char* uuid, unsigned int length) {
  mig_state s;
  int dev, row;
  if (mig_decode(device, H_MIG, &s, &dev, &row) != NVML_SUCCESS) return NVML_ERROR_INVALID_ARGUMENT;
  return copy_string(s.at[row].uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  stub_record all[STUB_MAX_DEVICES];
  char fallback[32];
  mig_state s;
  int n;
  nvmlReturn_t rc = injected("nvmlDeviceGetHandleByUUID");
  if (rc != NVML_SUCCESS) return rc;
  if (vgpu_stub_nvml_init_depth() <= 0) return NVML_ERROR_UNINITIALIZED;
  if (uuid == NULL || device == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  n = stub_read_records("VGPU_STUB_NVML_DEVICES", all);
  for (int i = 0; i < n; ++i) {
    if (strcmp(device_uuid(&all[i], i, fallback), uuid) != 0) continue;
    *device = (nvmlDevice_t)(intptr_t)(i + 1);
    return NVML_SUCCESS;
  }
  if (mig_state_path() == NULL) return NVML_ERROR_NOT_FOUND;
  mig_load(&s);
  for (int r = 0; r < s.count; ++r) {
    if (s.at[r].ci == NO_CI || strcmp(s.at[r].uuid, uuid) != 0) continue;
    for (int i = 0; i < n; ++i) {
      if (strcmp(device_uuid(&all[i], i, fallback), s.at[r].parent) != 0) continue;
      *device = mig_handle(H_MIG, i, s.at[r].gi, s.at[r].ci);
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  stub_record all[STUB_MAX_DEVICES];
  int i;
  nvmlReturn_t rc = injected("nvmlDeviceGetIndex");
  if (rc != NVML_SUCCESS) return rc;
  if (lookup(device, all, &i) == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  *index = (unsigned int)i;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending) {
  stub_record all[STUB_MAX_DEVICES];
  int i;
  nvmlReturn_t rc = injected("nvmlDeviceGetMigMode");
  if (rc != NVML_SUCCESS) return rc;
  if (lookup(device, all, &i) == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (mig_state_path() == NULL) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = (unsigned int)mig_mode_on();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                 nvmlGpuInstanceProfileInfo_t* info) {
  char parent[STUB_FIELD_LEN];
  mig_state s;
  int i;
  nvmlReturn_t rc = injected("nvmlDeviceGetGpuInstanceProfileInfo");
  if (rc != NVML_SUCCESS || (rc = mig_gpu(device, &i, parent, &s)) != NVML_SUCCESS) return rc;
  if (profile >= MIG_GI_PROFILES || info == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (kGiProfiles[profile].slices == 0) return NVML_ERROR_NOT_SUPPORTED;
  memset(info, 0, sizeof(*info));
  info->id = profile;
  info->sliceCount = kGiProfiles[profile].slices;
  info->instanceCount = kGiProfiles[profile].instances;
  info->multiprocessorCount = 14 * info->sliceCount;
  info->copyEngineCount = info->sliceCount;
  info->memorySizeMB = kGiProfiles[profile].mem_mb;
  return NVML_SUCCESS;
}

/* Creates a GPU instance of `profile` at memory slice `start` (-1: the
 * lowest free placement). */
static nvmlReturn_t mig_create_gi(const char* fn, nvmlDevice_t device, unsigned int profile, int start,
                                  nvmlGpuInstance_t* gpu_instance) {
  char parent[STUB_FIELD_LEN];
  mig_state s;
  mig_instance* m;
  int i;
  mig_busy busy;
  unsigned used = 0, same = 0, id = 1, taken, mask;
  nvmlReturn_t rc = injected(fn);
  if (rc != NVML_SUCCESS) return rc;
  if (mig_busy_enter(mig_handle_gpu(device), &busy) != 0) return NVML_ERROR_IN_USE;
  if ((rc = mig_gpu(device, &i, parent, &s)) != NVML_SUCCESS) return mig_busy_leave(&busy, rc);
  if (profile >= MIG_GI_PROFILES || gpu_instance == NULL) return mig_busy_leave(&busy, NVML_ERROR_INVALID_ARGUMENT);
  if (kGiProfiles[profile].slices == 0) return mig_busy_leave(&busy, NVML_ERROR_NOT_SUPPORTED);
  if (start >= 0 && (start >= MIG_MEMORY_SLICES || !(kGiProfiles[profile].starts & (1u << start))))
    return mig_busy_leave(&busy, NVML_ERROR_INVALID_ARGUMENT);
  for (int r = 0; r < s.count; ++r) {
    if (strcmp(s.at[r].parent, parent) != 0) continue;
    used += kGiProfiles[s.at[r].profile % MIG_GI_PROFILES].slices;
    same += s.at[r].profile == profile;
  }
  taken = mig_used_slices(&s, parent);
  mask = (1u << kGiProfiles[profile].size) - 1;
  if (start < 0)
    for (int k = 0; k < MIG_MEMORY_SLICES && start < 0; ++k)
      if ((kGiProfiles[profile].starts & (1u << k)) && !(taken & (mask << k))) start = k;
  if (start < 0 || (taken & (mask << start)) || used + kGiProfiles[profile].slices > MIG_SLICES ||
      same >= kGiProfiles[profile].instances || s.count == STUB_STATE_MAX)
    return mig_busy_leave(&busy, NVML_ERROR_INSUFFICIENT_RESOURCES);
  while (mig_find(&s, parent, id) >= 0) id++;
  m = &s.at[s.count++];
  memset(m, 0, sizeof(*m));
  snprintf(m->parent, sizeof(m->parent), "%s", parent);
  m->gi = id;
  m->ci = NO_CI;
  m->profile = profile;
  m->start = (unsigned)start;
  if ((rc = mig_save(&s)) != NVML_SUCCESS) return mig_busy_leave(&busy, rc);
  *gpu_instance = mig_handle(H_GI, i, id, 0);
  return mig_busy_leave(&busy, NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t device, unsigned int profile, nvmlGpuInstance_t* gpu_instance) {
  return mig_create_gi("nvmlDeviceCreateGpuInstance", device, profile, -1, gpu_instance);
}

nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profile,
                                                      const nvmlGpuInstancePlacement_t* placement,
                                                      nvmlGpuInstance_t* gpu_instance) {
  if (placement == NULL || profile >= MIG_GI_PROFILES || placement->size != kGiProfiles[profile].size)
    return NVML_ERROR_INVALID_ARGUMENT;
  return mig_create_gi("nvmlDeviceCreateGpuInstanceWithPlacement", device, profile, (int)placement->start,
                       gpu_instance);
}

nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profile,
                                                           nvmlGpuInstancePlacement_t* placements,
                                                           unsigned int* count) {
  char parent[STUB_FIELD_LEN];
  mig_state s;
  int i;
  unsigned n = 0;
  nvmlReturn_t rc = injected("nvmlDeviceGetGpuInstancePossiblePlacements_v2");
  if (rc != NVML_SUCCESS || (rc = mig_gpu(device, &i, parent, &s)) != NVML_SUCCESS) return rc;
  if (profile >= MIG_GI_PROFILES || count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (kGiProfiles[profile].slices == 0) return NVML_ERROR_NOT_SUPPORTED;
  for (unsigned k = 0; k < MIG_MEMORY_SLICES; ++k) {
    if (!(kGiProfiles[profile].starts & (1u << k))) continue;
    if (placements != NULL && n < *count) {
      placements[n].start = k;
      placements[n].size = kGiProfiles[profile].size;
    }
    n++;
  }
  if (placements == NULL || n > *count) {
    *count = n;
    return placements == NULL ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = n;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpu_instance, nvmlGpuInstanceInfo_t* info) {
  mig_state s;
  int dev, row;
  nvmlReturn_t rc = injected("nvmlGpuInstanceGetInfo");
  if (rc != NVML_SUCCESS || (rc = mig_decode(gpu_instance, H_GI, &s, &dev, &row)) != NVML_SUCCESS) return rc;
  memset(info, 0, sizeof(*info));
  info->device = (nvmlDevice_t)(intptr_t)(dev + 1);
  info->id = s.at[row].gi;
  info->profileId = s.at[row].profile;
  info->placement.start = s.at[row].start;
  info->placement.size = kGiProfiles[s.at[row].profile % MIG_GI_PROFILES].size;
  return NVML_SUCCESS;
}

/* Whether compute profile `profile` fits the GPU instance of `row`. */
static nvmlReturn_t mig_ci_profile(const mig_state* s, int row, unsigned int profile, unsigned int engine) {
  if (profile >= MIG_CI_PROFILES || engine != 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (profile == 5 || profile == 7 || kCiSlices[profile] > kGiProfiles[s->at[row].profile % MIG_GI_PROFILES].slices)
    return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpu_instance, unsigned int profile,
                                                          unsigned int engine, nvmlComputeInstanceProfileInfo_t* info) {
  mig_state s;
  int dev, row;
  nvmlReturn_t rc = injected("nvmlGpuInstanceGetComputeInstanceProfileInfo");
  if (rc != NVML_SUCCESS || (rc = mig_decode(gpu_instance, H_GI, &s, &dev, &row)) != NVML_SUCCESS) return rc;
  if ((rc = mig_ci_profile(&s, row, profile, engine)) != NVML_SUCCESS) return rc;
  memset(info, 0, sizeof(*info));
  info->id = profile;
  info->sliceCount = kCiSlices[profile];
  info->instanceCount = kGiProfiles[s.at[row].profile % MIG_GI_PROFILES].slices / kCiSlices[profile];
  info->multiprocessorCount = 14 * kCiSlices[profile];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpu_instance, unsigned int profile,
                                                  nvmlComputeInstance_t* compute_instance) {
  static unsigned serial = 0;
  mig_state s;
  mig_instance* m;
  int dev, row;
  unsigned hash = 2166136261u;
  mig_busy busy;
  nvmlReturn_t rc = injected("nvmlGpuInstanceCreateComputeInstance");
  if (rc != NVML_SUCCESS) return rc;
  if (mig_busy_enter(mig_handle_gpu(gpu_instance), &busy) != 0) return NVML_ERROR_IN_USE;
  if ((rc = mig_decode(gpu_instance, H_GI, &s, &dev, &row)) != NVML_SUCCESS) return mig_busy_leave(&busy, rc);
  if ((rc = mig_ci_profile(&s, row, profile, 0)) != NVML_SUCCESS) return mig_busy_leave(&busy, rc);
  m = &s.at[row];
  if (m->ci != NO_CI) return mig_busy_leave(&busy, NVML_ERROR_INSUFFICIENT_RESOURCES);
  m->ci = 0;
  /* A fresh UUID each time (as the driver's): parent, ids, process, time. */
  for (const char* p = m->parent; *p != '\0'; ++p) hash = (hash ^ (unsigned char)*p) * 16777619u;
  snprintf(m->uuid, sizeof(m->uuid), "MIG-%08x-%04x-%04x-%04x-%06x%06x", hash, m->gi, m->ci, ++serial & 0xffff,
           (unsigned)getpid() & 0xffffff, (unsigned)time(NULL) & 0xffffff);
  if ((rc = mig_save(&s)) != NVML_SUCCESS) return mig_busy_leave(&busy, rc);
  *compute_instance = mig_handle(H_CI, dev, m->gi, m->ci);
  return mig_busy_leave(&busy, NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  char parent[STUB_FIELD_LEN];
  mig_state s;
  int i;
  nvmlReturn_t rc = injected("nvmlDeviceGetMaxMigDeviceCount");
  if (rc != NVML_SUCCESS || (rc = mig_gpu(device, &i, parent, &s)) != NVML_SUCCESS) return rc;
  *count = MIG_SLICES;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t* mig) {
  char parent[STUB_FIELD_LEN];
  mig_state s;
  int i;
  unsigned seen = 0;
  nvmlReturn_t rc = injected("nvmlDeviceGetMigDeviceHandleByIndex");
  if (rc != NVML_SUCCESS || (rc = mig_gpu(device, &i, parent, &s)) != NVML_SUCCESS) return rc;
  if (index >= MIG_SLICES) return NVML_ERROR_INVALID_ARGUMENT;
  for (int r = 0; r < s.count; ++r) {
    if (s.at[r].ci == NO_CI || strcmp(s.at[r].parent, parent) != 0 || seen++ != index) continue;
    *mig = mig_handle(H_MIG, i, s.at[r].gi, s.at[r].ci);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}

/* nvmlDeviceGetGpuInstanceId / ..ComputeInstanceId: `ci` picks which. */
static nvmlReturn_t mig_device_id(const char* fn, nvmlDevice_t device, unsigned int* id, int ci) {
  stub_record all[STUB_MAX_DEVICES];
  mig_state s;
  int dev, row;
  nvmlReturn_t rc = injected(fn);
  if (rc != NVML_SUCCESS) return rc;
  if (lookup(device, all, &dev) != NULL) return NVML_ERROR_NOT_SUPPORTED; /* a GPU, not a MIG device */
  if ((rc = mig_decode(device, H_MIG, &s, &dev, &row)) != NVML_SUCCESS) return rc;
  *id = ci ? s.at[row].ci : s.at[row].gi;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  return mig_device_id("nvmlDeviceGetGpuInstanceId", device, id, 0);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  return mig_device_id("nvmlDeviceGetComputeInstanceId", device, id, 1);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t* gpu_instance) {
  char parent[STUB_FIELD_LEN];
  mig_state s;
  int i;
  nvmlReturn_t rc = injected("nvmlDeviceGetGpuInstanceById");
  if (rc != NVML_SUCCESS || (rc = mig_gpu(device, &i, parent, &s)) != NVML_SUCCESS) return rc;
  if (mig_find(&s, parent, id) < 0) return NVML_ERROR_NOT_FOUND;
  *gpu_instance = mig_handle(H_GI, i, id, 0);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gpu_instance, unsigned int id,
                                                   nvmlComputeInstance_t* compute_instance) {
  mig_state s;
  int dev, row;
  nvmlReturn_t rc = injected("nvmlGpuInstanceGetComputeInstanceById");
  if (rc != NVML_SUCCESS || (rc = mig_decode(gpu_instance, H_GI, &s, &dev, &row)) != NVML_SUCCESS) return rc;
  if (s.at[row].ci == NO_CI || s.at[row].ci != id) return NVML_ERROR_NOT_FOUND;
  *compute_instance = mig_handle(H_CI, dev, s.at[row].gi, id);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t compute_instance) {
  mig_state s;
  int dev, row;
  mig_busy busy;
  nvmlReturn_t rc = injected("nvmlComputeInstanceDestroy");
  if (rc != NVML_SUCCESS) return rc;
  if (mig_busy_enter(mig_handle_gpu(compute_instance), &busy) != 0) return NVML_ERROR_IN_USE;
  if ((rc = mig_decode(compute_instance, H_CI, &s, &dev, &row)) != NVML_SUCCESS) return mig_busy_leave(&busy, rc);
  s.at[row].ci = NO_CI;
  return mig_busy_leave(&busy, mig_save(&s));
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpu_instance) {
  mig_state s;
  int dev, row;
  mig_busy busy;
  nvmlReturn_t rc = injected("nvmlGpuInstanceDestroy");
  if (rc != NVML_SUCCESS) return rc;
  if (mig_busy_enter(mig_handle_gpu(gpu_instance), &busy) != 0) return NVML_ERROR_IN_USE;
  if ((rc = mig_decode(gpu_instance, H_GI, &s, &dev, &row)) != NVML_SUCCESS) return mig_busy_leave(&busy, rc);
  if (s.at[row].ci != NO_CI) return mig_busy_leave(&busy, NVML_ERROR_IN_USE);
  memmove(&s.at[row], &s.at[row + 1], (size_t)(s.count - row - 1) * sizeof(s.at[0]));
  s.count--;
  return mig_busy_leave(&busy, mig_save(&s));
}

