// CUDA graph memory hooks: what a graph will allocate when it runs
// (cuGraphAddMemAllocNode, cuGraphAddNode, cuMemAllocAsync captured from a
// stream) follows the graph to its executable graphs, and a launch is
// admitted against the device's graph pool (graph_charges.h; the launch
// itself: launch_hooks.cc). Stream captures' beginnings and ends are told
// to the pacer, which keeps off events meanwhile (launch_pacer.h).
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

bool GraphAttribute(void* pool, CUgraphMem_attribute attr, uint64_t* bytes) {
  VGPU_REAL(kCuda, cuDeviceGetGraphMemAttribute);
  cuuint64_t v = 0;
  if (!real || real(GraphCharges::DeviceOf(pool), attr, &v) != CUDA_SUCCESS) return false;
  *bytes = v;
  return true;
}

const PoolOps kCudaGraphPools = {
    [](void* pool, uint64_t* bytes) { return GraphAttribute(pool, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, bytes); },
    [](void* pool, uint64_t* bytes) { return GraphAttribute(pool, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, bytes); },
    [](void* pool) {
      VGPU_REAL(kCuda, cuDeviceGraphMemTrim);
      if (real) real(GraphCharges::DeviceOf(pool));
    },
};

DeviceAccount* AccountOfDevice(int dev) { return AccountOf(Enforcer::Get(), dev); }

// The allocation node `params` was added to `graph`.
void AllocNodeAdded(CUgraph graph, const CUDA_MEM_ALLOC_NODE_PARAMS& params) {
  if (params.poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE)
    CudaGraphCharges().NodeAdded(graph, params.poolProps.location.id, params.bytesize);
}

template <typename Call>
CUresult EndCapture(CUstream stream, CUgraph* graph, bool per_thread, Call call) {
  const uint64_t capture = Enforcer::Get().active() ? CudaCaptureOf(stream, per_thread) : 0;
  const CUresult rc = call();
  if (capture) CudaGraphCharges().CaptureEnded(capture, rc == CUDA_SUCCESS && graph ? *graph : nullptr);
  CudaPacer().CaptureEnded(stream, per_thread);  // over, whatever rc says
  return rc;
}

// The pacer keeps off events while a capture is underway (launch_pacer.h).
template <typename Call>
CUresult BeginCapture(CUstream stream, bool per_thread, Call call) {
  const bool began = CudaPacer().CaptureBegan(stream, per_thread);
  const CUresult rc = call();
  if (rc != CUDA_SUCCESS && began) CudaPacer().CaptureEnded(stream, per_thread);
  return rc;
}

template <typename Call>
CUresult Instantiate(CUgraphExec* exec, CUgraph graph, Call call) {
  const CUresult rc = call();
  if (rc == CUDA_SUCCESS && exec) CudaGraphCharges().Instantiated(graph, *exec);
  return rc;
}

}  // namespace

GraphCharges& CudaGraphCharges() {
  static GraphCharges& charges = GraphCharges::For(kCudaGraphPools, &AccountOfDevice);
  return charges;
}

uint64_t CudaCaptureOf(CUstream stream, bool per_thread) {
  VGPU_REAL(kCuda, cuStreamGetCaptureInfo);
  static const auto real_ptsz =
      RealAs<decltype(&cuStreamGetCaptureInfo_ptsz)>(kCuda, "cuStreamGetCaptureInfo_ptsz");
  auto info = per_thread && real_ptsz ? real_ptsz : real;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  if (!info || info(stream, &status, &id) != CUDA_SUCCESS) return 0;
  return status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? id : 0;
}

}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

VGPU_HOOK CUresult cuGraphAddMemAllocNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t ndeps,
                                          CUDA_MEM_ALLOC_NODE_PARAMS* params) {
  VGPU_REAL(kCuda, cuGraphAddMemAllocNode);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(node, graph, deps, ndeps, params);
  if (rc == CUDA_SUCCESS && params) AllocNodeAdded(graph, *params);
  return rc;
}

// Any node type: allocation nodes, and child graphs moved into the parent
// with their allocation nodes, matter here.
static void NodeAdded(CUgraph graph, const CUgraphNodeParams* params) {
  if (params->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) AllocNodeAdded(graph, params->alloc);
  if (params->type == CU_GRAPH_NODE_TYPE_GRAPH) CudaGraphCharges().Included(params->graph.graph, graph);
}

VGPU_HOOK CUresult cuGraphAddNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, size_t ndeps,
                                  CUgraphNodeParams* params) {
  VGPU_REAL(kCuda, cuGraphAddNode);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(node, graph, deps, ndeps, params);
  if (rc == CUDA_SUCCESS && params) NodeAdded(graph, params);
  return rc;
}

VGPU_HOOK CUresult cuGraphAddNode_v2(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                                     const CUgraphEdgeData* edges, size_t ndeps, CUgraphNodeParams* params) {
  VGPU_REAL(kCuda, cuGraphAddNode_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(node, graph, deps, edges, ndeps, params);
  if (rc == CUDA_SUCCESS && params) NodeAdded(graph, params);
  return rc;
}

VGPU_HOOK CUresult cuGraphDestroy(CUgraph graph) {
  VGPU_REAL(kCuda, cuGraphDestroy);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(graph);
  if (rc == CUDA_SUCCESS) CudaGraphCharges().GraphDestroyed(graph);
  return rc;
}

VGPU_HOOK CUresult cuStreamBeginCapture(CUstream stream) {
  VGPU_REAL(kCuda, cuStreamBeginCapture);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return BeginCapture(stream, false, [&] { return real(stream); });
}

VGPU_HOOK CUresult cuStreamBeginCapture_v2(CUstream stream, int mode) {
  VGPU_REAL(kCuda, cuStreamBeginCapture_v2);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return BeginCapture(stream, false, [&] { return real(stream, mode); });
}

VGPU_HOOK CUresult cuStreamBeginCapture_ptsz(CUstream stream, int mode) {
  VGPU_REAL(kCuda, cuStreamBeginCapture_ptsz);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return BeginCapture(stream, true, [&] { return real(stream, mode); });
}

VGPU_HOOK CUresult cuStreamBeginCaptureToGraph(CUstream stream, CUgraph graph, const CUgraphNode* deps,
                                               const CUgraphEdgeData* edges, size_t ndeps, int mode) {
  VGPU_REAL(kCuda, cuStreamBeginCaptureToGraph);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return BeginCapture(stream, false, [&] { return real(stream, graph, deps, edges, ndeps, mode); });
}

VGPU_HOOK CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream stream, CUgraph graph, const CUgraphNode* deps,
                                                    const CUgraphEdgeData* edges, size_t ndeps, int mode) {
  VGPU_REAL(kCuda, cuStreamBeginCaptureToGraph_ptsz);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return BeginCapture(stream, true, [&] { return real(stream, graph, deps, edges, ndeps, mode); });
}

VGPU_HOOK CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph) {
  VGPU_REAL(kCuda, cuStreamEndCapture);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return EndCapture(stream, graph, false, [&] { return real(stream, graph); });
}

VGPU_HOOK CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph) {
  VGPU_REAL(kCuda, cuStreamEndCapture_ptsz);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return EndCapture(stream, graph, true, [&] { return real(stream, graph); });
}

#define VGPU_INSTANTIATE_OLD(name)                                                                       \
  VGPU_HOOK CUresult name(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log, size_t size) { \
    VGPU_REAL(kCuda, name);                                                                              \
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;                                                        \
    return Instantiate(exec, graph, [&] { return real(exec, graph, error_node, log, size); });          \
  }
VGPU_INSTANTIATE_OLD(cuGraphInstantiate)
VGPU_INSTANTIATE_OLD(cuGraphInstantiate_v2)

VGPU_HOOK CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  VGPU_REAL(kCuda, cuGraphInstantiateWithFlags);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return Instantiate(exec, graph, [&] { return real(exec, graph, flags); });
}

namespace {

// An upload backs the instance's allocations from the graph pool, as its
// launch would: admitted in the same way (nothing is run, nothing paced).
template <typename Upload>
CUresult AdmittedUpload(CUgraphExec exec, Upload upload) {
  CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
  CudaGraphCharges().Launch(exec, [&] { return (rc = upload()) == CUDA_SUCCESS; });
  return rc;
}

// With CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD the driver would upload inside
// the call, out of our sight: the instance is made without it and
// uploaded through AdmittedUpload. A refused upload leaves no instance.
template <typename Real>
CUresult InstantiateWithParams(Real instantiate, bool per_thread, CUgraphExec* exec, CUgraph graph,
                               CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  if (!params || !(params->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) || !Enforcer::Get().active())
    return Instantiate(exec, graph, [&] { return instantiate(exec, graph, params); });
  CUDA_GRAPH_INSTANTIATE_PARAMS without = *params;
  without.flags &= ~static_cast<cuuint64_t>(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
  CUresult rc = Instantiate(exec, graph, [&] { return instantiate(exec, graph, &without); });
  params->hErrNode_out = without.hErrNode_out;
  params->result_out = without.result_out;
  if (rc != CUDA_SUCCESS) return rc;
  VGPU_REAL(kCuda, cuGraphUpload);
  static const auto real_ptsz = RealAs<decltype(&cuGraphUpload_ptsz)>(kCuda, "cuGraphUpload_ptsz");
  auto upload = per_thread && real_ptsz ? real_ptsz : real;
  if (!upload) return rc;  // a driver without uploads cannot have been asked for one
  const CUgraphExec made = *exec;
  rc = AdmittedUpload(made, [&] { return upload(made, without.hUploadStream); });
  if (rc == CUDA_SUCCESS) return rc;
  cuGraphExecDestroy(made);  // our hook: the instance's charges go too
  *exec = nullptr;
  params->result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  return rc;
}

}  // namespace

VGPU_HOOK CUresult cuGraphInstantiateWithParams(CUgraphExec* exec, CUgraph graph,
                                                CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  VGPU_REAL(kCuda, cuGraphInstantiateWithParams);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return InstantiateWithParams(real, false, exec, graph, params);
}

VGPU_HOOK CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec* exec, CUgraph graph,
                                                     CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  VGPU_REAL(kCuda, cuGraphInstantiateWithParams_ptsz);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return InstantiateWithParams(real, true, exec, graph, params);
}

VGPU_HOOK CUresult cuGraphUpload(CUgraphExec exec, CUstream stream) {
  VGPU_REAL(kCuda, cuGraphUpload);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return AdmittedUpload(exec, [&] { return real(exec, stream); });
}

VGPU_HOOK CUresult cuGraphUpload_ptsz(CUgraphExec exec, CUstream stream) {
  VGPU_REAL(kCuda, cuGraphUpload_ptsz);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  return AdmittedUpload(exec, [&] { return real(exec, stream); });
}

VGPU_HOOK CUresult cuGraphExecDestroy(CUgraphExec exec) {
  VGPU_REAL(kCuda, cuGraphExecDestroy);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(exec);
  if (rc == CUDA_SUCCESS) CudaGraphCharges().ExecDestroyed(exec);
  return rc;
}

VGPU_HOOK CUresult cuDeviceGraphMemTrim(CUdevice device) {
  VGPU_REAL(kCuda, cuDeviceGraphMemTrim);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(device);
  if (rc == CUDA_SUCCESS) CudaGraphCharges().Trimmed(device);
  return rc;
}

namespace vgpu {
namespace interposer {

#define VGPU_HOOK_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kCudaGraphHooks[] = {
    VGPU_HOOK_ENTRY(cuGraphAddMemAllocNode),      VGPU_HOOK_ENTRY(cuGraphAddNode),
    VGPU_HOOK_ENTRY(cuGraphAddNode_v2),           VGPU_HOOK_ENTRY(cuGraphDestroy),
    VGPU_HOOK_ENTRY(cuStreamEndCapture),          VGPU_HOOK_ENTRY(cuStreamEndCapture_ptsz),
    VGPU_HOOK_ENTRY(cuGraphInstantiate),          VGPU_HOOK_ENTRY(cuGraphInstantiate_v2),
    VGPU_HOOK_ENTRY(cuGraphInstantiateWithFlags), VGPU_HOOK_ENTRY(cuGraphInstantiateWithParams),
    VGPU_HOOK_ENTRY(cuGraphInstantiateWithParams_ptsz), VGPU_HOOK_ENTRY(cuGraphExecDestroy),
    VGPU_HOOK_ENTRY(cuDeviceGraphMemTrim),        VGPU_HOOK_ENTRY(cuGraphUpload),
    VGPU_HOOK_ENTRY(cuGraphUpload_ptsz),          VGPU_HOOK_ENTRY(cuStreamBeginCapture),
    VGPU_HOOK_ENTRY(cuStreamBeginCapture_v2),     VGPU_HOOK_ENTRY(cuStreamBeginCapture_ptsz),
    VGPU_HOOK_ENTRY(cuStreamBeginCaptureToGraph), VGPU_HOOK_ENTRY(cuStreamBeginCaptureToGraph_ptsz),
};
const size_t kCudaGraphHookCount = sizeof(kCudaGraphHooks) / sizeof(kCudaGraphHooks[0]);

}  // namespace interposer
}  // namespace vgpu
