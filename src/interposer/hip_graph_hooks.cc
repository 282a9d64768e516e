// HIP graph memory hooks, as CUDA's (cuda_graph_hooks.cc): what a graph will
// allocate when it runs (hipGraphAddMemAllocNode, hipGraphAddNode,
// hipMallocAsync captured from a stream, child graphs and clones) follows
// the graph to its executable graphs, and a launch is admitted against the
// device's graph pool (graph_charges.h; the launch itself: hip_hooks.cc).
// Stream captures' beginnings and ends are told to the pacer.
#include <cstdlib>
#include <string>

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
  HipPacer().CaptureEnded(stream, per_thread);  // over, whatever rc says
  return rc;
}

// The pacer keeps off events while a capture is underway (launch_pacer.h).
template <typename Call>
hipError_t BeginCapture(hipStream_t stream, bool per_thread, Call call) {
  const bool began = HipPacer().CaptureBegan(stream, per_thread);
  const hipError_t rc = call();
  if (rc != hipSuccess && began) HipPacer().CaptureEnded(stream, per_thread);
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

bool HipGraphMemoryAtLaunch() {
  static const bool at_launch = [] {
    const char* v = getenv("HIP_MEM_POOL_USE_VM");
    if (!v) return true;
    const std::string s = v;
    return !(s == "0" || s == "false" || s == "FALSE" || s == "False" || s == "no" || s == "off");
  }();
  if (at_launch || !Enforcer::Get().active()) return true;
  Enforcer::Get().WarnOnce(
      "HIP_MEM_POOL_USE_VM=0 makes the HIP runtime allocate graph memory when an allocation node is made, "
      "where libvgpu cannot charge it: graph allocation nodes are refused in this vgpu job (unset the variable)");
  return false;
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
  if (!HipGraphMemoryAtLaunch()) return hipErrorNotSupported;
  const hipError_t rc = real(node, graph, deps, ndeps, params);
  if (rc == hipSuccess && params) AllocNodeAdded(graph, *params);
  return rc;
}

// HIP's runtime, unlike CUDA's driver, clones child graphs and graphs
// that allocate: the copy carries the original's allocations.
VGPU_HOOK hipError_t hipGraphAddChildGraphNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                               size_t ndeps, hipGraph_t child) {
  VGPU_REAL(kHip, hipGraphAddChildGraphNode);
  if (!real) return hipErrorNotInitialized;
  const hipError_t rc = real(node, graph, deps, ndeps, child);
  if (rc == hipSuccess) HipGraphCharges().Included(child, graph);
  return rc;
}

VGPU_HOOK hipError_t hipGraphClone(hipGraph_t* clone, hipGraph_t original) {
  VGPU_REAL(kHip, hipGraphClone);
  if (!real) return hipErrorNotInitialized;
  const hipError_t rc = real(clone, original);
  if (rc == hipSuccess && clone) HipGraphCharges().Included(original, *clone);
  return rc;
}

VGPU_HOOK hipError_t hipGraphAddNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                     size_t ndeps, hipGraphNodeParams* params) {
  VGPU_REAL(kHip, hipGraphAddNode);
  if (!real) return hipErrorNotInitialized;
  if (params && params->type == hipGraphNodeTypeMemAlloc && !HipGraphMemoryAtLaunch()) return hipErrorNotSupported;
  const hipError_t rc = real(node, graph, deps, ndeps, params);
  if (rc == hipSuccess && params && params->type == hipGraphNodeTypeMemAlloc) AllocNodeAdded(graph, params->alloc);
  if (rc == hipSuccess && params && params->type == hipGraphNodeTypeGraph)
    HipGraphCharges().Included(params->graph.graph, graph);
  return rc;
}

VGPU_HOOK hipError_t hipGraphDestroy(hipGraph_t graph) {
  VGPU_REAL(kHip, hipGraphDestroy);
  if (!real) return hipErrorNotInitialized;
  const hipError_t rc = real(graph);
  if (rc == hipSuccess) HipGraphCharges().GraphDestroyed(graph);
  return rc;
}

VGPU_HOOK hipError_t hipStreamBeginCapture(hipStream_t stream, int mode) {
  VGPU_REAL(kHip, hipStreamBeginCapture);
  if (!real) return hipErrorNotInitialized;
  return BeginCapture(stream, false, [&] { return real(stream, mode); });
}

VGPU_HOOK hipError_t hipStreamBeginCapture_spt(hipStream_t stream, int mode) {
  VGPU_REAL(kHip, hipStreamBeginCapture_spt);
  if (!real) return hipErrorNotInitialized;
  return BeginCapture(stream, true, [&] { return real(stream, mode); });
}

VGPU_HOOK hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph, const hipGraphNode_t* deps,
                                                  const void* edges, size_t ndeps, int mode) {
  VGPU_REAL(kHip, hipStreamBeginCaptureToGraph);
  if (!real) return hipErrorNotInitialized;
  return BeginCapture(stream, false, [&] { return real(stream, graph, deps, edges, ndeps, mode); });
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
    VGPU_HIP_ENTRY(hipGraphUpload),            VGPU_HIP_ENTRY(hipStreamBeginCapture),
    VGPU_HIP_ENTRY(hipStreamBeginCapture_spt), VGPU_HIP_ENTRY(hipStreamBeginCaptureToGraph),
    VGPU_HIP_ENTRY(hipGraphAddChildGraphNode), VGPU_HIP_ENTRY(hipGraphClone),
};
const size_t kHipGraphHookCount = sizeof(kHipGraphHooks) / sizeof(kHipGraphHooks[0]);

}  // namespace interposer
}  // namespace vgpu
