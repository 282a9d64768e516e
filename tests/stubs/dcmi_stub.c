/* Stub Huawei DCMI (built as stubs/libdcmi.so) for the discovery and
 * hardware slice tests.
 *
 * Environment, read on every call:
 *   VGPU_STUB_DCMI_DEVICES
 *     "<chip_type>,<chip_name>,<card>,<device>,<logic_id>,<phy_id>,<hbm_mb>,<ddr_mb>,<pci_bus_id>;..."
 *     e.g. "Ascend,910B3,1,0,0,0,65536,0,0000:c1:00.0"
 *     Cards are listed in order of first appearance; a card holds the
 *     records that name it. hbm_mb 0 makes dcmi_get_device_hbm_info answer
 *     "not supported" (-8255), as on a 310P, whose memory is DDR (ddr_mb,
 *     from dcmi_get_device_memory_info_v3).
 *   VGPU_STUB_DCMI_FAIL         functions that return -8005 (stub failure)
 *   VGPU_STUB_DCMI_UNSUPPORTED  functions that return -8255 (not supported)
 *   VGPU_STUB_DCMI_VNPU_STATE   a file: when set, dcmi_create_vdevice and
 *     dcmi_set_destroy_vdevice work, and the vNPUs live in that file, so that
 *     one process (a prolog) creates what a later one (an epilog) destroys.
 *     One line per vNPU, rewritten on each change:
 *       <phy id> vdev=<vdev id> template=<template name>
 *     Unset: both calls answer -8255 (not supported).
 *
 * vNPU model: a template "vir<N>..." takes N AI cores (vir03_1c_8g: 3); an
 * NPU has the AI cores dcmi_get_device_chip_info reports, by chip name (a
 * 910B3 or 910B4 20, a 310P 8, any other 910B 24), and holds at most 7
 * vNPUs on a 310P (16 elsewhere). A vNPU that does not fit in what its
 * NPU's vNPUs leave, or one too many, answers -8020 (resource occupied); a
 * name that is no such template, -8001 (invalid parameter).
 * vdev ids are node-wide, the lowest free from 100 when the request's
 * vdev_id is 0xFFFFFFFF (else that id, -8020 if taken). Destroying a vdev id
 * the NPU does not have answers -8008 (device does not exist).
 *
 * Signatures follow the DCMI API reference (dcmi_interface_api.h): int
 * return, 0 on success.
 */
#include <string.h>

#include "stub_devices.h"

#define DCMI_OK 0
#define DCMI_ERR_INVALID_PARAMETER (-8001)
#define DCMI_ERR_STUB_FAILURE (-8005)
#define DCMI_ERR_DEVICE_NOT_EXIST (-8008)
#define DCMI_ERR_RESOURCE_OCCUPIED (-8020)
#define DCMI_ERR_NOT_SUPPORT (-8255)
/* AI cores and the most vNPUs of a simulated NPU, by its chip name. */
static unsigned chip_aicores(const char* name) {
  if (strncmp(name, "310P", 4) == 0) return 8;
  return strcmp(name, "910B3") == 0 || strcmp(name, "910B4") == 0 ? 20 : 24;
}
static unsigned chip_max_vnpus(const char* name) { return strncmp(name, "310P", 4) == 0 ? 7 : 16; }

struct dcmi_chip_info {
  unsigned char chip_type[32];
  unsigned char chip_name[32];
  unsigned char chip_ver[32];
  unsigned int aicore_cnt;
};

struct dcmi_hbm_info {
  unsigned long long memory_size;
  unsigned int freq;
  unsigned long long memory_usage;
  int temp;
  unsigned int bandwith_util_rate;
};

struct dcmi_get_memory_info_stru {
  unsigned long long memory_size;
  unsigned long long memory_available;
  unsigned int freq;
  unsigned long hugepagesize;
  unsigned long hugepages_total;
  unsigned long hugepages_free;
  unsigned int utiliza;
  unsigned char reserve[60];
};

struct dcmi_pcie_info_all {
  unsigned int venderid, subvenderid, deviceid, subdeviceid;
  int domain;
  unsigned int bdf_busid, bdf_deviceid, bdf_funcid;
  unsigned char reserve[32];
};

enum { F_TYPE, F_NAME, F_CARD, F_DEVICE, F_LOGIC, F_PHY, F_HBM, F_DDR, F_PCI };

static int injected(const char* fn) {
  if (stub_listed("VGPU_STUB_DCMI_FAIL", fn)) return DCMI_ERR_STUB_FAILURE;
  if (stub_listed("VGPU_STUB_DCMI_UNSUPPORTED", fn)) return DCMI_ERR_NOT_SUPPORT;
  return DCMI_OK;
}

static int num(const stub_record* r, int field) { return (int)stub_u64(r->field[field], 10); }

/* The record for (card, device), or NULL. */
static const stub_record* find(stub_record* all, int card, int device) {
  int n = stub_read_records("VGPU_STUB_DCMI_DEVICES", all);
  for (int i = 0; i < n; ++i) {
    if (num(&all[i], F_CARD) == card && num(&all[i], F_DEVICE) == device) return &all[i];
  }
  return NULL;
}

/* Copies `s` into a zeroed fixed-size array, truncating, NUL-terminated. */
static void copy_chars(unsigned char* dst, size_t size, const char* s) {
  size_t len = strlen(s);
  if (len > size - 1) len = size - 1;
  memcpy(dst, s, len);
  dst[len] = '\0';
}

int dcmi_init(void) { return injected("dcmi_init"); }

int dcmi_get_card_num_list(int* card_num, int* card_list, int list_len) {
  stub_record all[STUB_MAX_DEVICES];
  int rc = injected("dcmi_get_card_num_list");
  int n, count = 0;
  if (rc != DCMI_OK) return rc;
  n = stub_read_records("VGPU_STUB_DCMI_DEVICES", all);
  for (int i = 0; i < n; ++i) {
    int card = num(&all[i], F_CARD), seen = 0;
    for (int j = 0; j < count; ++j) seen |= card_list[j] == card;
    if (!seen) {
      if (count == list_len) return DCMI_ERR_INVALID_PARAMETER;
      card_list[count++] = card;
    }
  }
  *card_num = count;
  return DCMI_OK;
}

int dcmi_get_device_num_in_card(int card_id, int* device_num) {
  stub_record all[STUB_MAX_DEVICES];
  int rc = injected("dcmi_get_device_num_in_card");
  int n, count = 0;
  if (rc != DCMI_OK) return rc;
  n = stub_read_records("VGPU_STUB_DCMI_DEVICES", all);
  for (int i = 0; i < n; ++i) count += num(&all[i], F_CARD) == card_id;
  if (count == 0) return DCMI_ERR_INVALID_PARAMETER;
  *device_num = count;
  return DCMI_OK;
}

int dcmi_get_device_logic_id(int* device_logic_id, int card_id, int device_id) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  int rc = injected("dcmi_get_device_logic_id");
  if (rc != DCMI_OK) return rc;
  if ((r = find(all, card_id, device_id)) == NULL) return DCMI_ERR_INVALID_PARAMETER;
  *device_logic_id = num(r, F_LOGIC);
  return DCMI_OK;
}

int dcmi_get_device_phyid_from_logicid(unsigned int logicid, unsigned int* phyid) {
  stub_record all[STUB_MAX_DEVICES];
  int rc = injected("dcmi_get_device_phyid_from_logicid");
  int n;
  if (rc != DCMI_OK) return rc;
  n = stub_read_records("VGPU_STUB_DCMI_DEVICES", all);
  for (int i = 0; i < n; ++i) {
    if ((unsigned int)num(&all[i], F_LOGIC) == logicid) {
      *phyid = (unsigned int)num(&all[i], F_PHY);
      return DCMI_OK;
    }
  }
  return DCMI_ERR_INVALID_PARAMETER;
}

int dcmi_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info* chip_info) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  int rc = injected("dcmi_get_device_chip_info");
  if (rc != DCMI_OK) return rc;
  if ((r = find(all, card_id, device_id)) == NULL) return DCMI_ERR_INVALID_PARAMETER;
  memset(chip_info, 0, sizeof(*chip_info));
  copy_chars(chip_info->chip_type, sizeof(chip_info->chip_type), r->field[F_TYPE]);
  copy_chars(chip_info->chip_name, sizeof(chip_info->chip_name), r->field[F_NAME]);
  copy_chars(chip_info->chip_ver, sizeof(chip_info->chip_ver), "V1");
  chip_info->aicore_cnt = chip_aicores(r->field[F_NAME]);
  return DCMI_OK;
}

int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info* hbm_info) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  int rc = injected("dcmi_get_device_hbm_info");
  if (rc != DCMI_OK) return rc;
  if ((r = find(all, card_id, device_id)) == NULL) return DCMI_ERR_INVALID_PARAMETER;
  if (stub_u64(r->field[F_HBM], 10) == 0) return DCMI_ERR_NOT_SUPPORT;
  memset(hbm_info, 0, sizeof(*hbm_info));
  hbm_info->memory_size = stub_u64(r->field[F_HBM], 10);
  hbm_info->freq = 1600;
  return DCMI_OK;
}

int dcmi_get_device_memory_info_v3(int card_id, int device_id, struct dcmi_get_memory_info_stru* memory_info) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  int rc = injected("dcmi_get_device_memory_info_v3");
  if (rc != DCMI_OK) return rc;
  if ((r = find(all, card_id, device_id)) == NULL) return DCMI_ERR_INVALID_PARAMETER;
  memset(memory_info, 0, sizeof(*memory_info));
  memory_info->memory_size = stub_u64(r->field[F_DDR], 10);
  memory_info->memory_available = memory_info->memory_size;
  return DCMI_OK;
}

int dcmi_get_device_pcie_info_v2(int card_id, int device_id, struct dcmi_pcie_info_all* pcie_info) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  unsigned domain, bus, dev, fn;
  int rc = injected("dcmi_get_device_pcie_info_v2");
  if (rc != DCMI_OK) return rc;
  if ((r = find(all, card_id, device_id)) == NULL) return DCMI_ERR_INVALID_PARAMETER;
  if (stub_parse_bdf(r->field[F_PCI], &domain, &bus, &dev, &fn) != 0) return DCMI_ERR_STUB_FAILURE;
  memset(pcie_info, 0, sizeof(*pcie_info));
  pcie_info->venderid = 0x19e5;
  pcie_info->deviceid = 0xd802;
  pcie_info->domain = (int)domain;
  pcie_info->bdf_busid = bus;
  pcie_info->bdf_deviceid = dev;
  pcie_info->bdf_funcid = fn;
  return DCMI_OK;
}

/* --- vNPU ---------------------------------------------------------------- */

struct dcmi_create_vdev_res_stru {
  unsigned int vdev_id;
  unsigned int vfg_id;
  char template_name[32];
  unsigned char reserved[64];
};

struct dcmi_create_vdev_out {
  unsigned int vdev_id;
  unsigned int pcie_bus, pcie_device, pcie_func;
  unsigned int vfg_id;
  unsigned char reserved[32];
};

#define VDEV_FIRST 100
#define VDEV_AUTO 0xFFFFFFFFu

typedef struct {
  unsigned phy, vdev;
  char template_name[STUB_FIELD_LEN];
} vnpu;

typedef struct {
  vnpu at[STUB_STATE_MAX];
  int count;
} vnpu_state;

static const char* vnpu_state_path(void) {
  const char* path = getenv("VGPU_STUB_DCMI_VNPU_STATE");
  return path != NULL && path[0] != '\0' ? path : NULL;
}

static void vnpu_load(vnpu_state* s) {
  static char lines[STUB_STATE_MAX][STUB_STATE_LINE];
  int n = stub_state_read(vnpu_state_path(), lines);
  s->count = 0;
  for (int i = 0; i < n; ++i) {
    vnpu* v = &s->at[s->count];
    if (sscanf(lines[i], "%u vdev=%u template=%95s", &v->phy, &v->vdev, v->template_name) == 3) s->count++;
  }
}

static int vnpu_save(const vnpu_state* s) {
  static char text[STUB_STATE_MAX * STUB_STATE_LINE];
  size_t len = 0;
  text[0] = '\0';
  for (int i = 0; i < s->count; ++i)
    len += (size_t)snprintf(text + len, sizeof(text) - len, "%u vdev=%u template=%s\n", s->at[i].phy, s->at[i].vdev,
                            s->at[i].template_name);
  return stub_state_write(vnpu_state_path(), text) == 0 ? DCMI_OK : DCMI_ERR_STUB_FAILURE;
}

/* The AI cores of template `name` ("vir03_1c_8g": 3), or 0 when it is none. */
static unsigned template_cores(const char* name) {
  if (strncmp(name, "vir", 3) != 0 || name[3] < '0' || name[3] > '9') return 0;
  return (unsigned)stub_u64(name + 3, 10);
}

/* The vNPU row with `vdev` (on `phy` unless phy is -1), or -1. */
static int vnpu_find(const vnpu_state* s, long phy, unsigned vdev) {
  for (int i = 0; i < s->count; ++i)
    if (s->at[i].vdev == vdev && (phy < 0 || s->at[i].phy == (unsigned)phy)) return i;
  return -1;
}

static int create_vdevice(int card_id, int device_id, struct dcmi_create_vdev_res_stru* vdev,
                          struct dcmi_create_vdev_out* out) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  vnpu_state s;
  unsigned phy, cores, used = 0, count = 0, id;
  char name[sizeof(vdev->template_name) + 1];
  int rc = injected("dcmi_create_vdevice");
  if (rc != DCMI_OK) return rc;
  if ((r = find(all, card_id, device_id)) == NULL || vdev == NULL || out == NULL) return DCMI_ERR_INVALID_PARAMETER;
  if (vnpu_state_path() == NULL) return DCMI_ERR_NOT_SUPPORT;
  memcpy(name, vdev->template_name, sizeof(vdev->template_name));
  name[sizeof(vdev->template_name)] = '\0';
  if ((cores = template_cores(name)) == 0 || strchr(name, ' ') != NULL) return DCMI_ERR_INVALID_PARAMETER;
  phy = (unsigned)num(r, F_PHY);
  vnpu_load(&s);
  for (int i = 0; i < s.count; ++i)
    if (s.at[i].phy == phy) {
      used += template_cores(s.at[i].template_name);
      count++;
    }
  if (used + cores > chip_aicores(r->field[F_NAME]) || count >= chip_max_vnpus(r->field[F_NAME]) ||
      s.count == STUB_STATE_MAX)
    return DCMI_ERR_RESOURCE_OCCUPIED;
  id = vdev->vdev_id;
  if (id == VDEV_AUTO) {
    for (id = VDEV_FIRST; vnpu_find(&s, -1, id) >= 0; ++id) {
    }
  } else if (vnpu_find(&s, -1, id) >= 0) {
    return DCMI_ERR_RESOURCE_OCCUPIED;
  }
  s.at[s.count].phy = phy;
  s.at[s.count].vdev = id;
  snprintf(s.at[s.count].template_name, sizeof(s.at[s.count].template_name), "%s", name);
  s.count++;
  if ((rc = vnpu_save(&s)) != DCMI_OK) return rc;
  memset(out, 0, sizeof(*out));
  out->vdev_id = id;
  out->vfg_id = vdev->vfg_id == VDEV_AUTO ? 0 : vdev->vfg_id;
  return DCMI_OK;
}

static int destroy_vdevice(int card_id, int device_id, unsigned int vdevid) {
  stub_record all[STUB_MAX_DEVICES];
  const stub_record* r;
  vnpu_state s;
  int row, rc = injected("dcmi_set_destroy_vdevice");
  if (rc != DCMI_OK) return rc;
  if ((r = find(all, card_id, device_id)) == NULL) return DCMI_ERR_INVALID_PARAMETER;
  if (vnpu_state_path() == NULL) return DCMI_ERR_NOT_SUPPORT;
  vnpu_load(&s);
  if ((row = vnpu_find(&s, num(r, F_PHY), vdevid)) < 0) return DCMI_ERR_DEVICE_NOT_EXIST;
  memmove(&s.at[row], &s.at[row + 1], (size_t)(s.count - row - 1) * sizeof(s.at[0]));
  s.count--;
  return vnpu_save(&s);
}

/* The vNPU calls, each holding the state file (stub_state_lock): NPUs of a
 * node are sliced at once by several prologs. */
int dcmi_create_vdevice(int card_id, int device_id, struct dcmi_create_vdev_res_stru* vdev,
                        struct dcmi_create_vdev_out* out) {
  const int lock = vnpu_state_path() != NULL ? stub_state_lock(vnpu_state_path()) : -1;
  const int rc = create_vdevice(card_id, device_id, vdev, out);
  stub_state_unlock(lock);
  return rc;
}

int dcmi_set_destroy_vdevice(int card_id, int device_id, unsigned int vdevid) {
  const int lock = vnpu_state_path() != NULL ? stub_state_lock(vnpu_state_path()) : -1;
  const int rc = destroy_vdevice(card_id, device_id, vdevid);
  stub_state_unlock(lock);
  return rc;
}
