#include "enforcer.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "jobs/job_place.h"
#include "util/read_file.h"
#include "util/text.h"

#ifndef VGPU_RUN_DIR
#define VGPU_RUN_DIR "/run/slurm-vgpu"
#endif

namespace vgpu {
namespace interposer {
namespace {

void Say(const std::string& text) {
  std::string line = "libvgpu: " + text + "\n";
  ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

Enforcer* g_enforcer = nullptr;

}  // namespace

std::string Enforcer::RunDir() { return VGPU_RUN_DIR; }

Enforcer& Enforcer::Get() {
  static Enforcer* const instance = [] {
    auto* e = new Enforcer();
    g_enforcer = e;
    pthread_atfork(nullptr, nullptr, [] {
      if (g_enforcer) g_enforcer->AfterForkInChild();
    });
    return e;
  }();
  return *instance;
}

Enforcer::Enforcer() {
  JobPlace place = LocateJob(ProcessFacts::OfThisProcess(), RunDir());
  job_id_ = place.job_id;
  switch (place.kind) {
    case JobPlace::Kind::kNoJob:
    case JobPlace::Kind::kJobWithoutVgpu:
      return;
    case JobPlace::Kind::kFailClosed:
      FailClosed(place.failure);
      return;
    case JobPlace::Kind::kVgpuJob:
      break;
  }
  const std::string limits_path = JobLimitsPath(RunDir(), job_id_);
  auto text = ReadTextFd(place.limits_fd.get(), limits_path);
  if (!text.ok()) {
    FailClosed(text.message());
    return;
  }
  auto limits = JobLimits::Parse(*text, limits_path);
  if (!limits.ok()) {
    FailClosed(limits.message());
    return;
  }
  if (limits->job_id != job_id_) {
    FailClosed(limits_path + " is for job " + std::to_string(limits->job_id) + ", not job " +
               std::to_string(job_id_));
    return;
  }
  std::optional<JobLimits> step;
  if (place.step_limits_fd.get() >= 0) {
    const std::string step_path =
        JobRunDir(RunDir(), job_id_) + "/" + StepDirName(static_cast<uint32_t>(place.step_id)) + "/limits";
    auto step_text = ReadTextFd(place.step_limits_fd.get(), step_path);
    auto parsed = step_text.ok() ? JobLimits::Parse(*step_text, step_path) : Result<JobLimits>(step_text.status());
    if (!parsed.ok()) {
      FailClosed(parsed.message());
      return;
    }
    if (parsed->job_id != job_id_ || parsed->devices.size() != limits->devices.size()) {
      FailClosed(step_path + " does not match the job's limits (job " + std::to_string(parsed->job_id) + ", " +
                 std::to_string(parsed->devices.size()) + " devices)");
      return;
    }
    step = std::move(parsed).value();
  }
  for (const auto& d : limits->devices) {
    auto region = UsageRegion::OpenAt(place.run_dir_fd.get(), UsageRegionName(d.index),
                                      UsageRegionPath(RunDir(), job_id_, d.index));
    if (!region.ok()) {
      FailClosed(region.message());
      return;
    }
    auto account = std::make_unique<DeviceAccount>();
    account->limit = d;
    account->region = std::move(region).value();
    if (step) {
      auto step_region = UsageRegion::OpenAt(place.step_dir_fd.get(), UsageRegionName(d.index),
                                             UsageRegionPath(RunDir(), job_id_, d.index) + " of step " +
                                                 std::to_string(place.step_id));
      if (!step_region.ok()) {
        FailClosed(step_region.message());
        return;
      }
      account->step_limit = step->devices[d.index];
      account->step_region = std::move(step_region).value();
    }
    devices_.push_back(std::move(account));
  }
  mode_ = Mode::kActive;
}

void Enforcer::FailClosed(const std::string& why) {
  mode_ = Mode::kFailClosed;
  failure_ = why;
  devices_.clear();
}

void Enforcer::ReportRefusal(const char* what) {
  std::lock_guard<std::mutex> hold(messages_lock_);
  if (refusal_said_) return;
  refusal_said_ = true;
  Say(std::string(what) + " refused (fail closed): " + failure_);
}

void Enforcer::WarnOnce(const std::string& message) {
  std::lock_guard<std::mutex> hold(messages_lock_);
  for (const auto& s : said_)
    if (s == message) return;
  said_.push_back(message);
  Say(message);
}

DeviceAccount* Enforcer::Find(const std::string& uuid) {
  // CUDA gives a device's UUID as 16 bytes, which we print "GPU-..."; NVML
  // and the limits file name a MIG device "MIG-..." with the same bytes.
  auto key_of = [](const std::string& id) {
    std::string k = Lower(id);
    return k.rfind("gpu-", 0) == 0 || k.rfind("mig-", 0) == 0 ? k.substr(4) : k;
  };
  const std::string key = key_of(uuid);
  for (auto& d : devices_)
    if (!d->limit.uuid.empty() && key_of(d->limit.uuid) == key) return d.get();
  if (devices_.size() == 1 && devices_[0]->limit.uuid.empty()) return devices_[0].get();
  return nullptr;
}

bool Enforcer::Reserve(DeviceAccount* device, uint64_t bytes) {
  // The step's part first, then the job's: the job's total never passes
  // its grant whatever its steps hold.
  auto fits = [&] {
    if (device->step_region &&
        device->step_region->Reserve(bytes, device->step_limit.memory_bytes) != UsageRegion::Reservation::kOk)
      return false;
    if (device->region->Reserve(bytes, device->limit.memory_bytes) == UsageRegion::Reservation::kOk) return true;
    if (device->step_region) device->step_region->Release(bytes);
    return false;
  };
  if (fits()) return true;
  if (!reclaimer_) return false;
  reclaimer_();
  return fits();
}

void Enforcer::Release(DeviceAccount* device, uint64_t bytes) {
  device->region->Release(bytes);
  if (device->step_region) device->step_region->Release(bytes);
}

uint64_t Enforcer::Used(const DeviceAccount* device) const {
  return device->step_region ? device->step_region->Used() : device->region->Used();
}

void Enforcer::Remember(Kind kind, uint64_t key, DeviceAccount* device, uint64_t bytes) {
  std::lock_guard<std::mutex> hold(allocations_lock_);
  allocations_[static_cast<int>(kind)].Put(key, AllocationTable::Value{device, bytes});
}

bool Enforcer::Forget(Kind kind, uint64_t key, DeviceAccount** device, uint64_t* bytes) {
  std::lock_guard<std::mutex> hold(allocations_lock_);
  AllocationTable::Value v;
  if (!allocations_[static_cast<int>(kind)].Take(key, &v)) return false;
  *device = v.device;
  *bytes = v.bytes;
  return true;
}

void Enforcer::AfterForkInChild() {
  // Device memory is not inherited: the child starts with nothing and its
  // own slot in each region. (Locks may be held by threads that do not
  // exist here: make them anew.)
  new (&allocations_lock_) std::mutex();
  new (&messages_lock_) std::mutex();
  for (auto& t : allocations_) t.Clear();
  for (auto& d : devices_) {
    d->region->ForgetSlotAfterFork();
    if (d->step_region) d->step_region->ForgetSlotAfterFork();
  }
}

}  // namespace interposer
}  // namespace vgpu
