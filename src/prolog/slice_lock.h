// One prolog or epilog at a time makes or destroys slices on a device.
// NVIDIA's driver fails GPU instances created at the same moment on one GPU
// ("In use by another client", "Unknown Error"), and Ascend's vNPU calls
// are no safer. The lock is a file per parent device in the run directory,
// held (flock) only around the vendor call, so a slow call on one device
// does not hold up the prologs of the others.
#ifndef VGPU_PROLOG_SLICE_LOCK_H_
#define VGPU_PROLOG_SLICE_LOCK_H_

#include <string>

#include "util/status.h"

namespace vgpu {

class SliceLock {
 public:
  // Waits for the lock of device `parent` (a GPU UUID, a PCI bus id, an NPU
  // id) under `run_dir`; ok() says whether it is held.
  SliceLock(const std::string& run_dir, const std::string& parent);
  ~SliceLock();
  SliceLock(const SliceLock&) = delete;
  SliceLock& operator=(const SliceLock&) = delete;

  bool ok() const { return fd_ >= 0; }
  const Status& status() const { return status_; }

  // The lock file of device `parent`: its id with every character but
  // letters, digits, '-', '.' and ':' made '_'.
  static std::string PathFor(const std::string& run_dir, const std::string& parent);

 private:
  int fd_ = -1;
  Status status_;
};

}  // namespace vgpu

#endif  // VGPU_PROLOG_SLICE_LOCK_H_
