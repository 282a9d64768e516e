/* Stub Huawei DCMI (built as stubs/libdcmi.so) for the discovery tests.
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
 *
 * Signatures follow the DCMI API reference (dcmi_interface_api.h): int
 * return, 0 on success.
 */
#include <string.h>

#include "stub_devices.h"

#define DCMI_OK 0
#define DCMI_ERR_INVALID_PARAMETER (-8001)
#define DCMI_ERR_STUB_FAILURE (-8005)
#define DCMI_ERR_NOT_SUPPORT (-8255)

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
  chip_info->aicore_cnt = 20;
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
