// AscendCL offline models: a load allocates the model's memory inside the
// runtime unless the program hands it in (the WithMem loads, or a config
// handle with ACL_MDL_WORKSPACE_ADDR_PTR, ACL_MDL_WEIGHT_ADDR_PTR or the
// pointer of another partition), so the part the runtime allocates is
// charged before the load and given back at aclmdlUnload. How much: every
// partition aclmdlQueryExeOMDesc reports for a model file (work, weight,
// model description, kernels, kernel arguments, task descriptions, FIFO),
// where the runtime has the call and answers it; else the work and weight
// memory aclmdlQuerySize(FromMem) reports. A model whose size the runtime
// cannot tell cannot be loaded inside a job (the load would fail on it
// anyway); nor can a bundle (aclmdlBundleLoad*), which no call sizes.
#include <mutex>
#include <unordered_map>
#include <utility>

#include "accounting.h"
#include "acl_api.h"
#include "acl_device.h"
#include "enforcer.h"
#include "export.h"
#include "hooks.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

constexpr Vendor kAcl = Vendor::kAcl;
using Kind = Enforcer::Kind;

// A model's partitions, in aclmdlExeOMDesc's order.
enum Partition { kWork, kWeight, kModelDesc, kKernel, kKernelArgs, kStaticTask, kDynamicTask, kFifo, kPartitions };

// Where a model comes from and which memory the program hands in.
struct ModelSource {
  const char* path = nullptr;  // a file, or
  const void* mem = nullptr;   // a model in memory of mem_size bytes
  size_t mem_size = 0;
  bool own[kPartitions] = {};  // handed in by the program
};

// How much memory the runtime will allocate for `source`; false if it cannot
// say.
bool RuntimeBytes(const ModelSource& source, uint64_t* bytes) {
  VGPU_REAL(kAcl, aclmdlQuerySize);
  static const auto from_mem = RealAs<decltype(&aclmdlQuerySizeFromMem)>(kAcl, "aclmdlQuerySizeFromMem");
  static const auto partitions = RealAs<decltype(&aclmdlQueryExeOMDesc)>(kAcl, "aclmdlQueryExeOMDesc");
  aclmdlExeOMDesc desc{};
  if (source.path && partitions && partitions(source.path, &desc) == ACL_SUCCESS) {
    const size_t sizes[kPartitions] = {desc.workSize,       desc.weightSize,     desc.modelDescSize,
                                       desc.kernelSize,     desc.kernelArgsSize, desc.staticTaskSize,
                                       desc.dynamicTaskSize, desc.fifoTaskSize};
    *bytes = 0;
    for (int p = 0; p < kPartitions; ++p) *bytes += source.own[p] ? 0 : uint64_t{sizes[p]};
    return true;
  }
  size_t work = 0, weight = 0;
  aclError rc = ACL_ERROR_INVALID_PARAM;
  if (source.path && real) rc = real(source.path, &work, &weight);
  else if (source.mem && from_mem) rc = from_mem(source.mem, source.mem_size, &work, &weight);
  if (rc != ACL_SUCCESS) return false;
  *bytes = (source.own[kWork] ? 0 : uint64_t{work}) + (source.own[kWeight] ? 0 : uint64_t{weight});
  return true;
}

template <typename Load>
aclError LoadModel(const ModelSource& source, uint32_t* model_id, Load load) {
  Enforcer& e = Enforcer::Get();
  if (!e.active() && !e.failed_closed()) return load();
  uint64_t bytes = 0;
  if (e.active() && !RuntimeBytes(source, &bytes)) {
    e.WarnOnce("a model load is refused in a vgpu job: aclmdlQuerySize cannot tell how much device memory the "
               "runtime would allocate for it (load it with aclmdlLoadFromFileWithMem and memory from aclrtMalloc)");
    return ACL_ERROR_RT_MEMORY_ALLOCATION;
  }
  Gate g;
  if (aclError refused = AclAdmitHere(bytes, &g)) return refused;
  const aclError rc = load();
  Settle(g, rc == ACL_SUCCESS && model_id, Kind::kModel, model_id ? *model_id : 0);
  return rc;
}

// Bundles: GE loads a bundle's models through its internal load, which no
// hook sees, and no call says beforehand how much memory they take, so a
// job cannot load one. aclmdlBundleUnload is not hooked: nothing is charged.
template <typename Load>
aclError LoadBundle(Load load) {
  Enforcer& e = Enforcer::Get();
  if (e.active()) {
    e.WarnOnce("a model bundle load is refused in a vgpu job: no call tells how much device memory the runtime "
               "would allocate for it (load the models it holds as separate model files)");
    return ACL_ERROR_RT_MEMORY_ALLOCATION;
  }
  Gate g;
  if (aclError refused = AclAdmitHere(0, &g)) return refused;  // failed closed
  return load();
}

// What aclmdlSetConfigOpt put in each config handle.
struct Configs {
  std::mutex lock;
  std::unordered_map<const aclmdlConfigHandle*, std::pair<size_t, ModelSource>> by_handle;  // load type, source
};
Configs& TheConfigs() {
  static Configs* configs = new Configs();  // never freed: hooks may run at exit
  return *configs;
}

}  // namespace
}  // namespace interposer
}  // namespace vgpu

using namespace vgpu::interposer;

VGPU_HOOK aclError aclmdlLoadFromFile(const char* path, uint32_t* model_id) {
  VGPU_REAL(kAcl, aclmdlLoadFromFile);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  ModelSource source;
  source.path = path;
  return LoadModel(source, model_id, [&] { return real(path, model_id); });
}

VGPU_HOOK aclError aclmdlLoadFromMem(const void* model, size_t model_size, uint32_t* model_id) {
  VGPU_REAL(kAcl, aclmdlLoadFromMem);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  ModelSource source;
  source.mem = model, source.mem_size = model_size;
  return LoadModel(source, model_id, [&] { return real(model, model_size, model_id); });
}

VGPU_HOOK aclError aclmdlLoadFromFileWithMem(const char* path, uint32_t* model_id, void* work, size_t work_size,
                                             void* weight, size_t weight_size) {
  VGPU_REAL(kAcl, aclmdlLoadFromFileWithMem);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  ModelSource source;
  source.path = path, source.own[kWork] = work != nullptr, source.own[kWeight] = weight != nullptr;
  return LoadModel(source, model_id, [&] { return real(path, model_id, work, work_size, weight, weight_size); });
}

VGPU_HOOK aclError aclmdlLoadFromMemWithMem(const void* model, size_t model_size, uint32_t* model_id, void* work,
                                            size_t work_size, void* weight, size_t weight_size) {
  VGPU_REAL(kAcl, aclmdlLoadFromMemWithMem);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  ModelSource source;
  source.mem = model, source.mem_size = model_size;
  source.own[kWork] = work != nullptr, source.own[kWeight] = weight != nullptr;
  return LoadModel(source, model_id,
                   [&] { return real(model, model_size, model_id, work, work_size, weight, weight_size); });
}

VGPU_HOOK aclError aclmdlLoadFromFileWithQ(const char* path, uint32_t* model_id, const uint32_t* input_q,
                                           size_t input_q_count, const uint32_t* output_q, size_t output_q_count) {
  VGPU_REAL(kAcl, aclmdlLoadFromFileWithQ);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  ModelSource source;
  source.path = path;
  return LoadModel(source, model_id,
                   [&] { return real(path, model_id, input_q, input_q_count, output_q, output_q_count); });
}

VGPU_HOOK aclError aclmdlLoadFromMemWithQ(const void* model, size_t model_size, uint32_t* model_id,
                                          const uint32_t* input_q, size_t input_q_count, const uint32_t* output_q,
                                          size_t output_q_count) {
  VGPU_REAL(kAcl, aclmdlLoadFromMemWithQ);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  ModelSource source;
  source.mem = model, source.mem_size = model_size;
  return LoadModel(source, model_id, [&] {
    return real(model, model_size, model_id, input_q, input_q_count, output_q, output_q_count);
  });
}

// The config's options are kept as the runtime takes them (a pointer or a
// size_t, by address), so that aclmdlLoadWithConfig knows the model and
// which memory the program hands in.
VGPU_HOOK aclError aclmdlSetConfigOpt(aclmdlConfigHandle* handle, aclmdlConfigAttr attr, const void* value,
                                      size_t value_size) {
  VGPU_REAL(kAcl, aclmdlSetConfigOpt);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  const aclError rc = real(handle, attr, value, value_size);
  if (rc != ACL_SUCCESS || !value || value_size != sizeof(void*)) return rc;
  Configs& c = TheConfigs();
  std::lock_guard<std::mutex> hold(c.lock);
  auto& config = c.by_handle[handle];
  ModelSource& source = config.second;
  switch (attr) {
    case ACL_MDL_LOAD_TYPE_SIZET: config.first = *static_cast<const size_t*>(value); break;
    case ACL_MDL_PATH_PTR: source.path = *static_cast<const char* const*>(value); break;
    case ACL_MDL_MEM_ADDR_PTR: source.mem = *static_cast<const void* const*>(value); break;
    case ACL_MDL_MEM_SIZET: source.mem_size = *static_cast<const size_t*>(value); break;
    default: break;
  }
  // The partitions the program hands in.
  static const std::pair<aclmdlConfigAttr, Partition> kPointers[] = {
      {ACL_MDL_WORKSPACE_ADDR_PTR, kWork}, {ACL_MDL_WEIGHT_ADDR_PTR, kWeight},
      {ACL_MDL_MODEL_DESC_PTR, kModelDesc}, {ACL_MDL_KERNEL_PTR, kKernel},
      {ACL_MDL_KERNEL_ARGS_PTR, kKernelArgs}, {ACL_MDL_STATIC_TASK_PTR, kStaticTask},
      {ACL_MDL_DYNAMIC_TASK_PTR, kDynamicTask}, {ACL_MDL_FIFO_PTR, kFifo}};
  for (const auto& pointer : kPointers)
    if (attr == pointer.first) source.own[pointer.second] = *static_cast<void* const*>(value) != nullptr;
  return rc;
}

VGPU_HOOK aclError aclmdlDestroyConfigHandle(aclmdlConfigHandle* handle) {
  VGPU_REAL(kAcl, aclmdlDestroyConfigHandle);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  {
    Configs& c = TheConfigs();
    std::lock_guard<std::mutex> hold(c.lock);
    c.by_handle.erase(handle);
  }
  return real(handle);
}

VGPU_HOOK aclError aclmdlLoadWithConfig(const aclmdlConfigHandle* handle, uint32_t* model_id) {
  VGPU_REAL(kAcl, aclmdlLoadWithConfig);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  ModelSource source;  // unknown handle: no source, refused in a job
  {
    Configs& c = TheConfigs();
    std::lock_guard<std::mutex> hold(c.lock);
    auto it = c.by_handle.find(handle);
    if (it != c.by_handle.end()) {
      const size_t type = it->second.first;
      source = it->second.second;
      // The load type says which of path and memory the runtime reads.
      if (type == ACL_MDL_LOAD_FROM_MEM || type == ACL_MDL_LOAD_FROM_MEM_WITH_MEM) source.path = nullptr;
      else source.mem = nullptr;
    }
  }
  return LoadModel(source, model_id, [&] { return real(handle, model_id); });
}

VGPU_HOOK aclError aclmdlUnload(uint32_t model_id) {
  VGPU_REAL(kAcl, aclmdlUnload);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  const aclError rc = real(model_id);
  if (rc == ACL_SUCCESS) Freed(Kind::kModel, model_id);
  return rc;
}

VGPU_HOOK aclError aclmdlBundleLoadFromFile(const char* path, uint32_t* bundle_id) {
  VGPU_REAL(kAcl, aclmdlBundleLoadFromFile);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  return LoadBundle([&] { return real(path, bundle_id); });
}

VGPU_HOOK aclError aclmdlBundleLoadFromMem(const void* model, size_t model_size, uint32_t* bundle_id) {
  VGPU_REAL(kAcl, aclmdlBundleLoadFromMem);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  return LoadBundle([&] { return real(model, model_size, bundle_id); });
}

namespace vgpu {
namespace interposer {

#define VGPU_ACL_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kAclModelHooks[] = {
    VGPU_ACL_ENTRY(aclmdlLoadFromFile),        VGPU_ACL_ENTRY(aclmdlLoadFromMem),
    VGPU_ACL_ENTRY(aclmdlLoadFromFileWithMem), VGPU_ACL_ENTRY(aclmdlLoadFromMemWithMem),
    VGPU_ACL_ENTRY(aclmdlLoadFromFileWithQ),   VGPU_ACL_ENTRY(aclmdlLoadFromMemWithQ),
    VGPU_ACL_ENTRY(aclmdlSetConfigOpt),        VGPU_ACL_ENTRY(aclmdlDestroyConfigHandle),
    VGPU_ACL_ENTRY(aclmdlLoadWithConfig),      VGPU_ACL_ENTRY(aclmdlUnload),
    VGPU_ACL_ENTRY(aclmdlBundleLoadFromFile),  VGPU_ACL_ENTRY(aclmdlBundleLoadFromMem),
};
const size_t kAclModelHookCount = sizeof(kAclModelHooks) / sizeof(kAclModelHooks[0]);

}  // namespace interposer
}  // namespace vgpu
