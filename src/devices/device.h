// The device model: one physical accelerator as discovery reports it, after
// its model has been looked up in the chip catalog.
#ifndef VGPU_DEVICES_DEVICE_H_
#define VGPU_DEVICES_DEVICE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace vgpu {

struct Device {
  std::string source;      // backend that reported it: "nvml", "dcmi", "rocm-smi", "inventory"
  std::string model_id;    // ChipModel::id, e.g. "nvidia-h100"; empty if the catalog lacks it
  std::string name;        // model name as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"
  std::string gres_type;   // Slurm GRES type the catalog assigns: "nvidia", "ascend", "dcu"
  // Ordinal the vendor runtime gives this device when nothing is hidden: the
  // value to put in the visibility variable (CUDA_VISIBLE_DEVICES=...).
  int vendor_index = -1;
  std::string uuid;        // empty if unknown
  std::string pci_bus_id;  // "0000:c1:00.0", empty if unknown
  // Device files of this device alone; files[0] is the one gres.conf names.
  // Files every device of the vendor shares (/dev/nvidiactl, /dev/kfd) are
  // not listed: they are the ChipModel's shared_files.
  std::vector<std::string> files;
  uint64_t memory_bytes = 0;   // from the driver, else the catalog
  uint32_t compute_units = 0;  // SMs, AI cores or CUs; from the catalog
  std::string visible_devices_env;  // e.g. "CUDA_VISIBLE_DEVICES"; from the catalog
  std::string cpus;        // machine CPU ids local to the device ("0-15,32-47"), empty if unknown
};

}  // namespace vgpu

#endif  // VGPU_DEVICES_DEVICE_H_
