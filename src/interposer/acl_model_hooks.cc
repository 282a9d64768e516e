// AscendCL offline models: a load allocates the model's work and weight
// memory inside the runtime unless the program hands it in (the WithMem
// loads, or a config handle with ACL_MDL_WORKSPACE_ADDR_PTR /
// ACL_MDL_WEIGHT_ADDR_PTR), so the part the runtime allocates is charged
// before the load, as much as aclmdlQuerySize(FromMem) says it takes, and
// given back at aclmdlUnload. A model whose size the runtime cannot tell
// cannot be loaded inside a job (the load would fail on it anyway).
#include <mutex>
#include <unordered_map>

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

// Where a model comes from and which memory the program hands in.
struct ModelSource {
  const char* path = nullptr;  // a file, or
  const void* mem = nullptr;   // a model in memory of mem_size bytes
  size_t mem_size = 0;
  bool own_work = false, own_weight = false;
};

// How much memory the runtime will allocate for `source`; false if it cannot
// say.
bool RuntimeBytes(const ModelSource& source, uint64_t* bytes) {
  VGPU_REAL(kAcl, aclmdlQuerySize);
  static const auto from_mem = RealAs<decltype(&aclmdlQuerySizeFromMem)>(kAcl, "aclmdlQuerySizeFromMem");
  size_t work = 0, weight = 0;
  aclError rc = ACL_ERROR_INVALID_PARAM;
  if (source.path && real) rc = real(source.path, &work, &weight);
  else if (source.mem && from_mem) rc = from_mem(source.mem, source.mem_size, &work, &weight);
  if (rc != ACL_SUCCESS) return false;
  *bytes = (source.own_work ? 0 : uint64_t{work}) + (source.own_weight ? 0 : uint64_t{weight});
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
  source.path = path, source.own_work = work != nullptr, source.own_weight = weight != nullptr;
  return LoadModel(source, model_id, [&] { return real(path, model_id, work, work_size, weight, weight_size); });
}

VGPU_HOOK aclError aclmdlLoadFromMemWithMem(const void* model, size_t model_size, uint32_t* model_id, void* work,
                                            size_t work_size, void* weight, size_t weight_size) {
  VGPU_REAL(kAcl, aclmdlLoadFromMemWithMem);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  ModelSource source;
  source.mem = model, source.mem_size = model_size;
  source.own_work = work != nullptr, source.own_weight = weight != nullptr;
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
    case ACL_MDL_WEIGHT_ADDR_PTR: source.own_weight = *static_cast<void* const*>(value) != nullptr; break;
    case ACL_MDL_WORKSPACE_ADDR_PTR: source.own_work = *static_cast<void* const*>(value) != nullptr; break;
    default: break;
  }
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

namespace vgpu {
namespace interposer {

#define VGPU_ACL_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kAclModelHooks[] = {
    VGPU_ACL_ENTRY(aclmdlLoadFromFile),        VGPU_ACL_ENTRY(aclmdlLoadFromMem),
    VGPU_ACL_ENTRY(aclmdlLoadFromFileWithMem), VGPU_ACL_ENTRY(aclmdlLoadFromMemWithMem),
    VGPU_ACL_ENTRY(aclmdlLoadFromFileWithQ),   VGPU_ACL_ENTRY(aclmdlLoadFromMemWithQ),
    VGPU_ACL_ENTRY(aclmdlSetConfigOpt),        VGPU_ACL_ENTRY(aclmdlDestroyConfigHandle),
    VGPU_ACL_ENTRY(aclmdlLoadWithConfig),      VGPU_ACL_ENTRY(aclmdlUnload),
};
const size_t kAclModelHookCount = sizeof(kAclModelHooks) / sizeof(kAclModelHooks[0]);

}  // namespace interposer
}  // namespace vgpu
