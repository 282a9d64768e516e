// CUDA launch hooks: kernels, cooperative kernels, kernels with launch
// attributes and graphs go through LaunchPacer, so that a job's processes
// keep the device busy about their share of the time. Outside a vgpu job,
// or for a job holding whole devices, they only forward.
#include "cuda_api.h"
#include "cuda_device.h"
#include "enforcer.h"
#include "export.h"
#include "graph_charges.h"
#include "hooks.h"
#include "launch_pacer.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

constexpr Vendor kCuda = Vendor::kCuda;


// CUDA's events for the pacer: contexts are the keys.
const EventOps kCudaEvents = {
    [](void) -> void* {
      static const auto current = RealAs<decltype(&cuCtxGetCurrent)>(kCuda, "cuCtxGetCurrent");
      CUcontext c = nullptr;
      return current && current(&c) == CUDA_SUCCESS ? static_cast<void*>(c) : nullptr;
    },
    [](void** event) {
      static const auto create = RealAs<decltype(&cuEventCreate)>(kCuda, "cuEventCreate");
      return create && create(reinterpret_cast<CUevent*>(event), CU_EVENT_DEFAULT) == CUDA_SUCCESS;
    },
    [](void* event, void* stream, bool per_thread) {
      static const auto record = RealAs<decltype(&cuEventRecord)>(kCuda, "cuEventRecord");
      static const auto record_ptsz = RealAs<decltype(&cuEventRecord_ptsz)>(kCuda, "cuEventRecord_ptsz");
      auto fn = per_thread && record_ptsz ? record_ptsz : record;
      return fn && fn(static_cast<CUevent>(event), static_cast<CUstream>(stream)) == CUDA_SUCCESS;
    },
    [](void* event) {
      static const auto query = RealAs<decltype(&cuEventQuery)>(kCuda, "cuEventQuery");
      if (!query) return -1;
      const CUresult rc = query(static_cast<CUevent>(event));
      return rc == CUDA_SUCCESS ? 1 : rc == CUDA_ERROR_NOT_READY ? 0 : -1;
    },
    [](void* event) {
      static const auto wait = RealAs<decltype(&cuEventSynchronize)>(kCuda, "cuEventSynchronize");
      return wait && wait(static_cast<CUevent>(event)) == CUDA_SUCCESS;
    },
    [](float* ms, void* start, void* end) {
      static const auto elapsed = RealAs<decltype(&cuEventElapsedTime)>(kCuda, "cuEventElapsedTime");
      return elapsed && elapsed(ms, static_cast<CUevent>(start), static_cast<CUevent>(end)) == CUDA_SUCCESS;
    },
    [](void* stream, bool per_thread) { return CudaCaptureOf(static_cast<CUstream>(stream), per_thread) != 0; },
};

LaunchPacer& PacerCudaEvents() { return CudaPacer(); }

uint64_t PaceOnCurrent(CUstream stream, bool per_thread, bool* foreign) {
  Enforcer& e = Enforcer::Get();
  if (!e.active()) return 0;
  CUdevice dev = 0;
  if (CurrentDevice(&dev) != CUDA_SUCCESS) return 0;
  DeviceAccount* account = AccountOf(e, dev);
  return account ? PacerCudaEvents().Before(account, stream, per_thread, foreign) : 0;
}

// Runs `call` with `ctx` made current (pushed and popped); false if the
// driver would not push it.
template <typename Call>
bool InContext(CUcontext ctx, Call call) {
  static const auto push = RealAs<decltype(&cuCtxPushCurrent_v2)>(kCuda, "cuCtxPushCurrent_v2");
  static const auto pop = RealAs<decltype(&cuCtxPopCurrent_v2)>(kCuda, "cuCtxPopCurrent_v2");
  if (!ctx || !push || !pop || push(ctx) != CUDA_SUCCESS) return false;
  call();
  CUcontext popped = nullptr;
  pop(&popped);
  return true;
}

// A launch's pacing: the ticket, and the context it was taken in when that
// is not the current one.
struct Paced {
  uint64_t ticket;
  CUcontext context;
};

// Paces a launch onto `stream`. A stream of another context than the
// current one (a CUkernel is not bound to a context and may be launched
// into any) is paced on that context's device, with that context current
// while the pacer records: the launch itself is left as the program made it.
Paced PaceBefore(CUstream stream, bool per_thread) {
  bool foreign = false;
  Paced paced{PaceOnCurrent(stream, per_thread, &foreign), nullptr};
  if (!foreign) return paced;
  static const auto stream_ctx = RealAs<decltype(&cuStreamGetCtx)>(kCuda, "cuStreamGetCtx");
  static const auto stream_ctx_ptsz = RealAs<decltype(&cuStreamGetCtx_ptsz)>(kCuda, "cuStreamGetCtx_ptsz");
  auto get = per_thread && stream_ctx_ptsz ? stream_ctx_ptsz : stream_ctx;
  CUcontext ctx = nullptr;
  if (!get || get(stream, &ctx) != CUDA_SUCCESS) return paced;
  if (InContext(ctx, [&] { paced.ticket = PaceOnCurrent(stream, per_thread, nullptr); })) paced.context = ctx;
  return paced;
}

void PaceAfter(const Paced& paced, CUresult rc, CUstream stream, bool per_thread) {
  if (!paced.ticket) return;
  auto after = [&] { PacerCudaEvents().After(paced.ticket, rc == CUDA_SUCCESS, stream, per_thread); };
  if (!paced.context || !InContext(paced.context, after)) after();
}

}  // namespace

// The process's pacer for CUDA's events, looked up once.
LaunchPacer& CudaPacer() {
  static LaunchPacer& pacer = LaunchPacer::For(kCudaEvents);
  return pacer;
}

}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

// One hook: `args` as declared, `call` the arguments forwarded, `stream`
// the stream the work goes on.
#define VGPU_LAUNCH(name, per_thread, params, args, stream)        \
  VGPU_HOOK CUresult name params {                                 \
    VGPU_REAL(kCuda, name);                                        \
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;                  \
    const Paced paced = PaceBefore(stream, per_thread);            \
    const CUresult rc = real args;                                 \
    PaceAfter(paced, rc, stream, per_thread);                      \
    return rc;                                                     \
  }

#define VGPU_KERNEL_PARAMS                                                                       \
  (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, \
   unsigned int bz, unsigned int shared_bytes, CUstream stream, void** params, void** extra)
#define VGPU_KERNEL_ARGS (f, gx, gy, gz, bx, by, bz, shared_bytes, stream, params, extra)
VGPU_LAUNCH(cuLaunchKernel, false, VGPU_KERNEL_PARAMS, VGPU_KERNEL_ARGS, stream)
VGPU_LAUNCH(cuLaunchKernel_ptsz, true, VGPU_KERNEL_PARAMS, VGPU_KERNEL_ARGS, stream)

#define VGPU_COOP_PARAMS                                                                         \
  (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, \
   unsigned int bz, unsigned int shared_bytes, CUstream stream, void** params)
#define VGPU_COOP_ARGS (f, gx, gy, gz, bx, by, bz, shared_bytes, stream, params)
VGPU_LAUNCH(cuLaunchCooperativeKernel, false, VGPU_COOP_PARAMS, VGPU_COOP_ARGS, stream)
VGPU_LAUNCH(cuLaunchCooperativeKernel_ptsz, true, VGPU_COOP_PARAMS, VGPU_COOP_ARGS, stream)

#define VGPU_EX_PARAMS (const CUlaunchConfig* config, CUfunction f, void** params, void** extra)
#define VGPU_EX_ARGS (config, f, params, extra)
VGPU_LAUNCH(cuLaunchKernelEx, false, VGPU_EX_PARAMS, VGPU_EX_ARGS, config ? config->hStream : nullptr)
VGPU_LAUNCH(cuLaunchKernelEx_ptsz, true, VGPU_EX_PARAMS, VGPU_EX_ARGS, config ? config->hStream : nullptr)

// A graph that allocates memory when it runs is admitted against its
// devices' graph pools first (graph_charges.h).
#define VGPU_GRAPH_LAUNCH(name, per_thread)                                                  \
  VGPU_HOOK CUresult name(CUgraphExec graph, CUstream stream) {                              \
    VGPU_REAL(kCuda, name);                                                                  \
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;                                            \
    const Paced paced = PaceBefore(stream, per_thread);                                      \
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;                                                  \
    CudaGraphCharges().Launch(graph, [&] { return (rc = real(graph, stream)) == CUDA_SUCCESS; }); \
    PaceAfter(paced, rc, stream, per_thread);                                                \
    return rc;                                                                               \
  }
VGPU_GRAPH_LAUNCH(cuGraphLaunch, false)
VGPU_GRAPH_LAUNCH(cuGraphLaunch_ptsz, true)

// Before cuLaunchKernel (CUDA 4.0): the grid on the legacy default stream,
// or on a stream.
VGPU_LAUNCH(cuLaunch, false, (CUfunction f), (f), nullptr)
VGPU_LAUNCH(cuLaunchGrid, false, (CUfunction f, int w, int h), (f, w, h), nullptr)
VGPU_LAUNCH(cuLaunchGridAsync, false, (CUfunction f, int w, int h, CUstream stream), (f, w, h, stream), stream)

// One kernel per device, each on its own stream: each entry is paced on
// its stream's device.
VGPU_HOOK CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS* list, unsigned int count,
                                                        unsigned int flags) {
  VGPU_REAL(kCuda, cuLaunchCooperativeKernelMultiDevice);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  if (!list || count == 0 || count > 64) return real(list, count, flags);
  Paced paced[64];
  for (unsigned int i = 0; i < count; ++i) paced[i] = PaceBefore(list[i].hStream, false);
  const CUresult rc = real(list, count, flags);
  for (unsigned int i = 0; i < count; ++i) PaceAfter(paced[i], rc, list[i].hStream, false);
  return rc;
}

namespace vgpu {
namespace interposer {

#define VGPU_LAUNCH_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kCudaLaunchHooks[] = {
    VGPU_LAUNCH_ENTRY(cuLaunchKernel),           VGPU_LAUNCH_ENTRY(cuLaunchKernel_ptsz),
    VGPU_LAUNCH_ENTRY(cuLaunchCooperativeKernel), VGPU_LAUNCH_ENTRY(cuLaunchCooperativeKernel_ptsz),
    VGPU_LAUNCH_ENTRY(cuLaunchKernelEx),         VGPU_LAUNCH_ENTRY(cuLaunchKernelEx_ptsz),
    VGPU_LAUNCH_ENTRY(cuGraphLaunch),            VGPU_LAUNCH_ENTRY(cuGraphLaunch_ptsz),
    VGPU_LAUNCH_ENTRY(cuLaunch),                 VGPU_LAUNCH_ENTRY(cuLaunchGrid),
    VGPU_LAUNCH_ENTRY(cuLaunchGridAsync),        VGPU_LAUNCH_ENTRY(cuLaunchCooperativeKernelMultiDevice),
};
const size_t kCudaLaunchHookCount = sizeof(kCudaLaunchHooks) / sizeof(kCudaLaunchHooks[0]);

}  // namespace interposer
}  // namespace vgpu
