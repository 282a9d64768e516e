// HIP runtime hooks (Hygon DCU, AMD GPUs): the same limits as for CUDA.
// Device memory is counted on every allocation path and refused past the
// job's limit with hipErrorOutOfMemory; hipMemGetInfo and
// hipDeviceTotalMem report the limit; kernel, module and graph launches
// are paced to the job's share. A device is matched to the limits file by
// its PCI bus id (the id HIP gives for it).
#include <string>

#include "accounting.h"
#include "enforcer.h"
#include "export.h"
#include "graph_charges.h"
#include "hip_api.h"
#include "hip_device.h"
#include "hooks.h"
#include "launch_pacer.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

using Kind = Enforcer::Kind;
constexpr Vendor kHip = Vendor::kHip;


}  // namespace

int HipCurrentDevice() {
  static const auto get = RealAs<decltype(&hipGetDevice)>(kHip, "hipGetDevice");
  int dev = -1;
  return get && get(&dev) == hipSuccess ? dev : -1;
}

int HipStreamDevice(hipStream_t stream) {
  static const auto device_of = RealAs<decltype(&hipStreamGetDevice)>(kHip, "hipStreamGetDevice");
  hipDevice_t dev = -1;
  return stream && device_of && device_of(stream, &dev) == hipSuccess ? dev : HipCurrentDevice();
}

DeviceAccount* HipAccountOf(int dev) {
  static DeviceAccounts& accounts = *new DeviceAccounts("HIP");
  return accounts.Get(dev, [](int d, std::string* id) {
    static const auto bus_id = RealAs<decltype(&hipDeviceGetPCIBusId)>(kHip, "hipDeviceGetPCIBusId");
    char text[64] = {0};
    if (d < 0 || !bus_id || bus_id(text, sizeof(text), d) != hipSuccess) return false;
    *id = text;
    return true;
  });
}

hipError_t HipAdmitOn(int dev, uint64_t bytes, Gate* g) {
  *g = Admit(bytes, [dev] { return HipAccountOf(dev); });
  return g->refused ? hipErrorOutOfMemory : hipSuccess;
}

namespace {

uint64_t Key(void* ptr) { return reinterpret_cast<uint64_t>(ptr); }

const EventOps kHipEvents = {
    [](void) -> void* {
      const int dev = HipCurrentDevice();
      return dev >= 0 ? reinterpret_cast<void*>(static_cast<uintptr_t>(dev) + 1) : nullptr;
    },
    [](void** event) {
      static const auto create = RealAs<decltype(&hipEventCreate)>(kHip, "hipEventCreate");
      return create && create(reinterpret_cast<hipEvent_t*>(event)) == hipSuccess;
    },
    [](void* event, void* stream, bool) {
      static const auto record = RealAs<decltype(&hipEventRecord)>(kHip, "hipEventRecord");
      return record && record(static_cast<hipEvent_t>(event), static_cast<hipStream_t>(stream)) == hipSuccess;
    },
    [](void* event) {
      static const auto query = RealAs<decltype(&hipEventQuery)>(kHip, "hipEventQuery");
      if (!query) return -1;
      const hipError_t rc = query(static_cast<hipEvent_t>(event));
      return rc == hipSuccess ? 1 : rc == hipErrorNotReady ? 0 : -1;
    },
    [](void* event) {
      static const auto wait = RealAs<decltype(&hipEventSynchronize)>(kHip, "hipEventSynchronize");
      return wait && wait(static_cast<hipEvent_t>(event)) == hipSuccess;
    },
    [](float* ms, void* start, void* end) {
      static const auto elapsed = RealAs<decltype(&hipEventElapsedTime)>(kHip, "hipEventElapsedTime");
      return elapsed && elapsed(ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(end)) == hipSuccess;
    },
    [](void* stream, bool per_thread) { return HipCaptureOf(static_cast<hipStream_t>(stream), per_thread) != 0; },
};

}  // namespace

// The process's pacer for HIP's events, looked up once.
LaunchPacer& HipPacer() {
  static LaunchPacer& pacer = LaunchPacer::For(kHipEvents);
  return pacer;
}

namespace {

LaunchPacer& PacerHipEvents() { return HipPacer(); }

// Runs `call` with device `dev` current (set, then set back); the runtime
// wants an event and the stream it is recorded on on one device.
template <typename Call>
void OnDevice(int dev, int current, Call call) {
  static const auto set = RealAs<decltype(&hipSetDevice)>(kHip, "hipSetDevice");
  if (dev == current || !set || set(dev) != hipSuccess) return call();
  call();
  set(current);
}

}  // namespace

// Work on `stream` runs on the stream's device, whichever is current: a
// stream made while another device was current keeps that device. It is
// paced by the job's share of that device, with the device current while
// the pacer records (the null stream is the current device's).
HipPaced HipPaceBefore(hipStream_t stream) {
  Enforcer& e = Enforcer::Get();
  if (!e.active()) return HipPaced{0, -1};
  const int current = HipCurrentDevice();
  const int dev = stream ? HipStreamDevice(stream) : current;
  DeviceAccount* account = HipAccountOf(dev);
  if (!account) return HipPaced{0, -1};
  HipPaced paced{0, dev == current ? -1 : dev};
  OnDevice(dev, current, [&] { paced.ticket = PacerHipEvents().Before(account, stream, false); });
  return paced;
}

void HipPaceAfter(const HipPaced& paced, hipError_t rc, hipStream_t stream) {
  if (!paced.ticket) return;
  auto after = [&] { PacerHipEvents().After(paced.ticket, rc == hipSuccess, stream, false); };
  if (paced.device < 0) return after();
  OnDevice(paced.device, HipCurrentDevice(), after);
}

}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

VGPU_HOOK hipError_t hipGetDeviceCount(int* count) {
  Enforcer& e = Enforcer::Get();
  if (e.failed_closed()) {
    e.ReportRefusal("hipGetDeviceCount");
    return hipErrorNoDevice;
  }
  VGPU_REAL(kHip, hipGetDeviceCount);
  return real ? real(count) : hipErrorNotInitialized;
}

// hipMalloc-like calls: (void** ptr, size_t size, EXTRA...).
#define VGPU_HIP_ALLOC(name, params, args)                            \
  VGPU_HOOK hipError_t name params {                                  \
    VGPU_REAL(kHip, name);                                            \
    if (!real) return hipErrorNotInitialized;                         \
    if (size == 0) return real args; /* HIP: nothing is allocated */  \
    Gate g;                                                           \
    if (hipError_t refused = HipAdmitHere(size, &g)) return refused;  \
    hipError_t rc = real args;                                        \
    Settle(g, rc == hipSuccess, Kind::kPointer, ptr ? Key(*ptr) : 0); \
    return rc;                                                        \
  }
VGPU_HIP_ALLOC(hipMalloc, (void** ptr, size_t size), (ptr, size))
VGPU_HIP_ALLOC(hipExtMallocWithFlags, (void** ptr, size_t size, unsigned int flags), (ptr, size, flags))
VGPU_HIP_ALLOC(hipMallocManaged, (void** ptr, size_t size, unsigned int flags), (ptr, size, flags))

VGPU_HOOK hipError_t hipFree(void* ptr) {
  VGPU_REAL(kHip, hipFree);
  if (!real) return hipErrorNotInitialized;
  hipError_t rc = real(ptr);
  if (rc == hipSuccess && ptr) Freed(Kind::kPointer, Key(ptr));
  return rc;
}


VGPU_HOOK hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  VGPU_REAL(kHip, hipMemGetInfo);
  if (!real) return hipErrorNotInitialized;
  hipError_t rc = real(free_bytes, total_bytes);
  if (rc != hipSuccess || !Enforcer::Get().active()) return rc;
  uint64_t free64 = free_bytes ? *free_bytes : UINT64_MAX, total64 = 0;
  JobMemory(HipAccountOf(HipCurrentDevice()), &free64, &total64);
  if (free_bytes) *free_bytes = static_cast<size_t>(free64);
  if (total_bytes) *total_bytes = static_cast<size_t>(total64);
  return rc;
}

VGPU_HOOK hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t dev) {
  VGPU_REAL(kHip, hipDeviceTotalMem);
  if (!real) return hipErrorNotInitialized;
  hipError_t rc = real(bytes, dev);
  uint64_t total64 = 0;
  if (rc == hipSuccess && bytes && JobMemory(HipAccountOf(dev), nullptr, &total64))
    *bytes = static_cast<size_t>(total64);
  return rc;
}

// Work on one stream: paced to the job's share of the stream's device.
#define VGPU_HIP_LAUNCH(name, params, args, stream) \
  VGPU_HOOK hipError_t name params {                \
    VGPU_REAL(kHip, name);                          \
    if (!real) return hipErrorNotInitialized;       \
    const HipPaced paced = HipPaceBefore(stream);   \
    const hipError_t rc = real args;                \
    HipPaceAfter(paced, rc, stream);                \
    return rc;                                      \
  }
#define VGPU_HIP_KERNEL_PARAMS(shared_type) \
  (const void* function, dim3 grid, dim3 block, void** args, shared_type shared_bytes, hipStream_t stream)
VGPU_HIP_LAUNCH(hipLaunchKernel, VGPU_HIP_KERNEL_PARAMS(size_t), (function, grid, block, args, shared_bytes, stream),
                stream)
VGPU_HIP_LAUNCH(hipLaunchKernel_spt, VGPU_HIP_KERNEL_PARAMS(size_t),
                (function, grid, block, args, shared_bytes, stream), stream)
VGPU_HIP_LAUNCH(hipLaunchCooperativeKernel, VGPU_HIP_KERNEL_PARAMS(unsigned int),
                (function, grid, block, args, shared_bytes, stream), stream)
VGPU_HIP_LAUNCH(hipLaunchCooperativeKernel_spt, VGPU_HIP_KERNEL_PARAMS(uint32_t),
                (function, grid, block, args, shared_bytes, stream), stream)
VGPU_HIP_LAUNCH(hipExtLaunchKernel,
                (const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes, hipStream_t stream,
                 hipEvent_t start, hipEvent_t stop, int flags),
                (function, grid, block, args, shared_bytes, stream, start, stop, flags), stream)
VGPU_HIP_LAUNCH(hipModuleLaunchKernel,
                (hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                 unsigned int bz, unsigned int shared_bytes, hipStream_t stream, void** params, void** extra),
                (f, gx, gy, gz, bx, by, bz, shared_bytes, stream, params, extra), stream)
VGPU_HIP_LAUNCH(hipModuleLaunchCooperativeKernel,
                (hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                 unsigned int bz, unsigned int shared_bytes, hipStream_t stream, void** params),
                (f, gx, gy, gz, bx, by, bz, shared_bytes, stream, params), stream)
// MIOpen launches its kernels this way.
VGPU_HIP_LAUNCH(hipExtModuleLaunchKernel,
                (hipFunction_t f, uint32_t global_x, uint32_t global_y, uint32_t global_z, uint32_t local_x,
                 uint32_t local_y, uint32_t local_z, size_t shared_bytes, hipStream_t stream, void** params,
                 void** extra, hipEvent_t start, hipEvent_t stop, uint32_t flags),
                (f, global_x, global_y, global_z, local_x, local_y, local_z, shared_bytes, stream, params, extra,
                 start, stop, flags),
                stream)
VGPU_HIP_LAUNCH(hipHccModuleLaunchKernel,
                (hipFunction_t f, uint32_t global_x, uint32_t global_y, uint32_t global_z, uint32_t local_x,
                 uint32_t local_y, uint32_t local_z, size_t shared_bytes, hipStream_t stream, void** params,
                 void** extra, hipEvent_t start, hipEvent_t stop),
                (f, global_x, global_y, global_z, local_x, local_y, local_z, shared_bytes, stream, params, extra,
                 start, stop),
                stream)
VGPU_HIP_LAUNCH(hipLaunchKernelExC, (const hipLaunchConfig_t* config, const void* function, void** args),
                (config, function, args), config ? config->stream : nullptr)
VGPU_HIP_LAUNCH(hipDrvLaunchKernelEx, (const HIP_LAUNCH_CONFIG* config, hipFunction_t f, void** params, void** extra),
                (config, f, params, extra), config ? config->hStream : nullptr)
// The launch API before hip-clang's <<<>>>: hipConfigureCall pushes a
// launch's configuration, hipLaunchByPtr pops it and launches through the
// runtime's internal calls, which no hook sees. The streams configured are
// kept per thread (as the runtime keeps the configurations) so that the
// launch is paced on its own; past kConfigDepth nested configurations the
// oldest are forgotten and such launches paced on the null stream.
namespace {
constexpr int kConfigDepth = 16;
thread_local hipStream_t t_configured[kConfigDepth];
thread_local int t_configured_depth = 0;
}  // namespace

VGPU_HOOK hipError_t hipConfigureCall(dim3 grid, dim3 block, size_t shared_bytes, hipStream_t stream) {
  VGPU_REAL(kHip, hipConfigureCall);
  if (!real) return hipErrorNotInitialized;
  const hipError_t rc = real(grid, block, shared_bytes, stream);
  if (rc != hipSuccess) return rc;
  if (t_configured_depth == kConfigDepth) {
    for (int i = 1; i < kConfigDepth; ++i) t_configured[i - 1] = t_configured[i];
    --t_configured_depth;
  }
  t_configured[t_configured_depth++] = stream;
  return rc;
}

VGPU_HOOK hipError_t hipLaunchByPtr(const void* function) {
  VGPU_REAL(kHip, hipLaunchByPtr);
  if (!real) return hipErrorNotInitialized;
  hipStream_t stream = t_configured_depth > 0 ? t_configured[--t_configured_depth] : nullptr;
  const HipPaced paced = HipPaceBefore(stream);
  const hipError_t rc = real(function);
  HipPaceAfter(paced, rc, stream);
  return rc;
}

// A graph that allocates memory when it runs is admitted against its
// devices' graph pools first (graph_charges.h).
#define VGPU_HIP_GRAPH_LAUNCH(name)                                                            \
  VGPU_HOOK hipError_t name(hipGraphExec_t graph, hipStream_t stream) {                        \
    VGPU_REAL(kHip, name);                                                                     \
    if (!real) return hipErrorNotInitialized;                                                  \
    const HipPaced paced = HipPaceBefore(stream);                                              \
    hipError_t rc = hipErrorOutOfMemory;                                                       \
    HipGraphCharges().Launch(graph, [&] { return (rc = real(graph, stream)) == hipSuccess; }); \
    HipPaceAfter(paced, rc, stream);                                                           \
    return rc;                                                                                 \
  }
VGPU_HIP_GRAPH_LAUNCH(hipGraphLaunch)
VGPU_HIP_GRAPH_LAUNCH(hipGraphLaunch_spt)

// Multi-device launches: every entry is paced on its own stream's device.
#define VGPU_HIP_MULTI_LAUNCH(name, Entry, Count, stream_field)                         \
  VGPU_HOOK hipError_t name(Entry* list, Count count, unsigned int flags) {             \
    VGPU_REAL(kHip, name);                                                              \
    if (!real) return hipErrorNotInitialized;                                           \
    if (!list || count <= 0 || count > 64) return real(list, count, flags);             \
    HipPaced paced[64];                                                                 \
    for (Count i = 0; i < count; ++i) paced[i] = HipPaceBefore(list[i].stream_field);   \
    const hipError_t rc = real(list, count, flags);                                     \
    for (Count i = 0; i < count; ++i) HipPaceAfter(paced[i], rc, list[i].stream_field); \
    return rc;                                                                          \
  }
VGPU_HIP_MULTI_LAUNCH(hipLaunchCooperativeKernelMultiDevice, hipLaunchParams, int, stream)
VGPU_HIP_MULTI_LAUNCH(hipExtLaunchMultiKernelMultiDevice, hipLaunchParams, int, stream)
VGPU_HIP_MULTI_LAUNCH(hipModuleLaunchCooperativeKernelMultiDevice, hipFunctionLaunchParams, unsigned int, hStream)

// hipGetProcAddress (ROCm 6.2+) hands out our hooks, as dlsym does, so that
// a framework that finds the runtime's entry points this way cannot go
// around them; with the per-thread-stream flag, the _spt hook where there
// is one.
VGPU_HOOK hipError_t hipGetProcAddress(const char* symbol, void** pfn, int version, uint64_t flags,
                                       hipDriverProcAddressQueryResult* status) {
  VGPU_REAL(kHip, hipGetProcAddress);
  if (!real) return hipErrorNotInitialized;
  hipError_t rc = real(symbol, pfn, version, flags, status);
  if (rc != hipSuccess || !symbol || !pfn || !*pfn) return rc;
  void* ours = nullptr;
  if (flags & HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
    ours = HookByName((std::string(symbol) + "_spt").c_str());
  if (!ours) ours = HookByName(symbol);
  if (ours) *pfn = ours;
  return rc;
}

namespace vgpu {
namespace interposer {

#define VGPU_HIP_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kHipHooks[] = {
    VGPU_HIP_ENTRY(hipGetDeviceCount),   VGPU_HIP_ENTRY(hipMalloc),
    VGPU_HIP_ENTRY(hipExtMallocWithFlags), VGPU_HIP_ENTRY(hipMallocManaged),
    VGPU_HIP_ENTRY(hipFree),             VGPU_HIP_ENTRY(hipMemGetInfo),
    VGPU_HIP_ENTRY(hipDeviceTotalMem),   VGPU_HIP_ENTRY(hipLaunchKernel),
    VGPU_HIP_ENTRY(hipModuleLaunchKernel), VGPU_HIP_ENTRY(hipGraphLaunch),
    VGPU_HIP_ENTRY(hipLaunchKernel_spt), VGPU_HIP_ENTRY(hipLaunchCooperativeKernel),
    VGPU_HIP_ENTRY(hipLaunchCooperativeKernel_spt), VGPU_HIP_ENTRY(hipExtLaunchKernel),
    VGPU_HIP_ENTRY(hipModuleLaunchCooperativeKernel), VGPU_HIP_ENTRY(hipExtModuleLaunchKernel),
    VGPU_HIP_ENTRY(hipHccModuleLaunchKernel), VGPU_HIP_ENTRY(hipGraphLaunch_spt),
    VGPU_HIP_ENTRY(hipLaunchCooperativeKernelMultiDevice), VGPU_HIP_ENTRY(hipExtLaunchMultiKernelMultiDevice),
    VGPU_HIP_ENTRY(hipModuleLaunchCooperativeKernelMultiDevice), VGPU_HIP_ENTRY(hipGetProcAddress),
    VGPU_HIP_ENTRY(hipLaunchKernelExC), VGPU_HIP_ENTRY(hipDrvLaunchKernelEx),
    VGPU_HIP_ENTRY(hipConfigureCall),    VGPU_HIP_ENTRY(hipLaunchByPtr),
};
const size_t kHipHookCount = sizeof(kHipHooks) / sizeof(kHipHooks[0]);

}  // namespace interposer
}  // namespace vgpu
