// HIP graph memory hooks, as CUDA's (cuda_graph_hooks.cc): what a graph will
// allocate when it runs (hipGraphAddMemAllocNode, hipGraphAddNode,
// hipMallocAsync captured from a stream) follows the graph to its
// executable graphs, and a launch is admitted against the device's graph
// pool (graph_charges.h; the launch itself: hip_hooks.cc).
#include "enforcer.h"
#include "export.h"
#include "graph_charges.h"
#include "hip_api.h"
#include "hip_device.h"
#include "hooks.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

constexpr Vendor kHip = Vendor::kHip;

bool GraphAttribute(void* pool, hipGraphMemAttributeType attr, uint64_t* bytes) {
  VGPU_REAL(kHip, hipDeviceGetGraphMemAttribute);
  uint64_t v = 0;
  if (!real || real(GraphCharges::DeviceOf(pool), attr, &v) != hipSuccess) return false;
  *bytes = v;
  return true;
}

const PoolOps kHipGraphPools = {
    [](void* pool, uint64_t* bytes) { return GraphAttribute(pool, hipGraphMemAttrReservedMemCurrent, bytes); },
    [](void* pool, uint64_t* bytes) { return GraphAttribute(pool, hipGraphMemAttrUsedMemCurrent, bytes); },
    [](void* pool) {
      VGPU_REAL(kHip, hipDeviceGraphMemTrim);
      if (real) real(GraphCharges::DeviceOf(pool));
    },
};

void AllocNodeAdded(hipGraph_t graph, const hipMemAllocNodeParams& params) {
  if (params.poolProps.location.type == hipMemLocationTypeDevice)
    HipGraphCharges().NodeAdded(graph, params.poolProps.location.id, params.bytesize);
}

template <typename Call>
hipError_t EndCapture(hipStream_t stream, hipGraph_t* graph, bool per_thread, Call call) {
  const uint64_t capture = Enforcer::Get().active() ? HipCaptureOf(stream, per_thread) : 0;
  const hipError_t rc = call();
  if (capture) HipGraphCharges().CaptureEnded(capture, rc == hipSuccess && graph ? *graph : nullptr);
  return rc;
}

template <typename Call>
hipError_t Instantiate(hipGraphExec_t* exec, hipGraph_t graph, Call call) {
  const hipError_t rc = call();
  if (rc == hipSuccess && exec) HipGraphCharges().Instantiated(graph, *exec);
  return rc;
}

}  // namespace

GraphCharges& HipGraphCharges() {
  static GraphCharges& charges = GraphCharges::For(kHipGraphPools, &HipAccountOf);
  return charges;
}

uint64_t HipCaptureOf(hipStream_t stream, bool per_thread) {
  VGPU_REAL(kHip, hipStreamGetCaptureInfo);
  static const auto real_spt = RealAs<decltype(&hipStreamGetCaptureInfo_spt)>(kHip, "hipStreamGetCaptureInfo_spt");
  auto info = per_thread && real_spt ? real_spt : real;
  hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
  unsigned long long id = 0;
  if (!info || info(stream, &status, &id) != hipSuccess) return 0;
  return status == hipStreamCaptureStatusActive ? id : 0;
}

}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

VGPU_HOOK hipError_t hipGraphAddMemAllocNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                             size_t ndeps, hipMemAllocNodeParams* params) {
  VGPU_REAL(kHip, hipGraphAddMemAllocNode);
  if (!real) return hipErrorNotInitialized;
  const hipError_t rc = real(node, graph, deps, ndeps, params);
  if (rc == hipSuccess && params) AllocNodeAdded(graph, *params);
  return rc;
}

VGPU_HOOK hipError_t hipGraphAddNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                     size_t ndeps, hipGraphNodeParams* params) {
  VGPU_REAL(kHip, hipGraphAddNode);
  if (!real) return hipErrorNotInitialized;
  const hipError_t rc = real(node, graph, deps, ndeps, params);
  if (rc == hipSuccess && params && params->type == hipGraphNodeTypeMemAlloc) AllocNodeAdded(graph, params->alloc);
  return rc;
}

VGPU_HOOK hipError_t hipGraphDestroy(hipGraph_t graph) {
  VGPU_REAL(kHip, hipGraphDestroy);
  if (!real) return hipErrorNotInitialized;
  const hipError_t rc = real(graph);
  if (rc == hipSuccess) HipGraphCharges().GraphDestroyed(graph);
  return rc;
}

VGPU_HOOK hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* graph) {
  VGPU_REAL(kHip, hipStreamEndCapture);
  if (!real) return hipErrorNotInitialized;
  return EndCapture(stream, graph, false, [&] { return real(stream, graph); });
}

VGPU_HOOK hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t* graph) {
  VGPU_REAL(kHip, hipStreamEndCapture_spt);
  if (!real) return hipErrorNotInitialized;
  return EndCapture(stream, graph, true, [&] { return real(stream, graph); });
}

VGPU_HOOK hipError_t hipGraphInstantiate(hipGraphExec_t* exec, hipGraph_t graph, hipGraphNode_t* error_node,
                                         char* log, size_t size) {
  VGPU_REAL(kHip, hipGraphInstantiate);
  if (!real) return hipErrorNotInitialized;
  return Instantiate(exec, graph, [&] { return real(exec, graph, error_node, log, size); });
}

VGPU_HOOK hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph, unsigned long long flags) {
  VGPU_REAL(kHip, hipGraphInstantiateWithFlags);
  if (!real) return hipErrorNotInitialized;
  return Instantiate(exec, graph, [&] { return real(exec, graph, flags); });
}

// An upload backs the instance's allocations from the graph pool, as its
// launch would: admitted in the same way (nothing run, nothing paced).
template <typename Upload>
static hipError_t AdmittedUpload(hipGraphExec_t exec, Upload upload) {
  hipError_t rc = hipErrorOutOfMemory;
  HipGraphCharges().Launch(exec, [&] { return (rc = upload()) == hipSuccess; });
  return rc;
}

VGPU_HOOK hipError_t hipGraphUpload(hipGraphExec_t exec, hipStream_t stream) {
  VGPU_REAL(kHip, hipGraphUpload);
  if (!real) return hipErrorNotInitialized;
  return AdmittedUpload(exec, [&] { return real(exec, stream); });
}

// With hipGraphInstantiateFlagUpload the runtime would upload inside the
// call, out of our sight: the instance is made without it and uploaded
// through AdmittedUpload. A refused upload leaves no instance.
VGPU_HOOK hipError_t hipGraphInstantiateWithParams(hipGraphExec_t* exec, hipGraph_t graph,
                                                   hipGraphInstantiateParams* params) {
  VGPU_REAL(kHip, hipGraphInstantiateWithParams);
  if (!real) return hipErrorNotInitialized;
  if (!params || !(params->flags & hipGraphInstantiateFlagUpload) || !Enforcer::Get().active())
    return Instantiate(exec, graph, [&] { return real(exec, graph, params); });
  hipGraphInstantiateParams without = *params;
  without.flags &= ~static_cast<unsigned long long>(hipGraphInstantiateFlagUpload);
  hipError_t rc = Instantiate(exec, graph, [&] { return real(exec, graph, &without); });
  params->errNode_out = without.errNode_out;
  params->result_out = without.result_out;
  static const auto upload = RealAs<decltype(&hipGraphUpload)>(kHip, "hipGraphUpload");
  if (rc != hipSuccess || !upload) return rc;
  const hipGraphExec_t made = *exec;
  rc = AdmittedUpload(made, [&] { return upload(made, without.uploadStream); });
  if (rc == hipSuccess) return rc;
  hipGraphExecDestroy(made);  // our hook: the instance's charges go too
  *exec = nullptr;
  params->result_out = hipGraphInstantiateError;
  return rc;
}

VGPU_HOOK hipError_t hipGraphExecDestroy(hipGraphExec_t exec) {
  VGPU_REAL(kHip, hipGraphExecDestroy);
  if (!real) return hipErrorNotInitialized;
  const hipError_t rc = real(exec);
  if (rc == hipSuccess) HipGraphCharges().ExecDestroyed(exec);
  return rc;
}

VGPU_HOOK hipError_t hipDeviceGraphMemTrim(int device) {
  VGPU_REAL(kHip, hipDeviceGraphMemTrim);
  if (!real) return hipErrorNotInitialized;
  const hipError_t rc = real(device);
  if (rc == hipSuccess) HipGraphCharges().Trimmed(device);
  return rc;
}

namespace vgpu {
namespace interposer {

#define VGPU_HIP_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kHipGraphHooks[] = {
    VGPU_HIP_ENTRY(hipGraphAddMemAllocNode),   VGPU_HIP_ENTRY(hipGraphAddNode),
    VGPU_HIP_ENTRY(hipGraphDestroy),           VGPU_HIP_ENTRY(hipStreamEndCapture),
    VGPU_HIP_ENTRY(hipStreamEndCapture_spt),   VGPU_HIP_ENTRY(hipGraphInstantiate),
    VGPU_HIP_ENTRY(hipGraphInstantiateWithFlags), VGPU_HIP_ENTRY(hipGraphInstantiateWithParams),
    VGPU_HIP_ENTRY(hipGraphExecDestroy),       VGPU_HIP_ENTRY(hipDeviceGraphMemTrim),
    VGPU_HIP_ENTRY(hipGraphUpload),
};
const size_t kHipGraphHookCount = sizeof(kHipGraphHooks) / sizeof(kHipGraphHooks[0]);

}  // namespace interposer
}  // namespace vgpu
