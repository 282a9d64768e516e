// aclnn (opapi) operators, as torch_npu runs them: an operator library
// (libopapi.so, custom ones too) exports two functions per operator,
// aclnnXxxGetWorkspaceSize(...), whose parameters are the operator's own
// (it plans the work), and
//
//   aclnnStatus aclnnXxx(void* workspace, uint64_t workspace_size,
//                        aclOpExecutor* executor, aclrtStream stream);
//
// which queues the planned work on the stream: before CANN 8.5 through the
// runtime's internal calls, which no hook sees; from 8.5 on (libnnopbase)
// through the public aclrtLaunchKernelWithHostArgs, which is hooked. There
// are thousands of them, but the second has this one signature for every
// operator, so dlsym (how torch_npu finds them) hands out a paced stand-in:
// one thunk per operator, taken from a fixed table when the operator is
// first asked for. The thunk paces and measures the whole operator, so the
// launch hooks its kernels go through on 8.5 do not pace them again
// (AclInsideOperator). A program linked against the operator library, not
// using dlsym, has its operators paced only where their kernels go through
// the hooked launch calls (8.5 on).
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "acl_api.h"
#include "acl_device.h"
#include "hooks.h"
#include "real_symbols.h"

namespace vgpu {
namespace interposer {
namespace {

using OperatorRun = aclError (*)(void* workspace, uint64_t workspace_size, void* executor, aclrtStream stream);

// More than every operator of a CANN release together (about 1,500 in 8.x).
constexpr size_t kMaxOperators = 4096;

std::array<std::atomic<OperatorRun>, kMaxOperators> g_real;

// How many paced operators the thread is inside (an operator may run
// another).
thread_local int t_operators = 0;

template <size_t I>
aclError Thunk(void* workspace, uint64_t workspace_size, void* executor, aclrtStream stream) {
  const OperatorRun real = g_real[I].load(std::memory_order_acquire);
  const uint64_t ticket = t_operators ? 0 : AclPaceBefore(stream);
  ++t_operators;
  const aclError rc = real(workspace, workspace_size, executor, stream);
  --t_operators;
  AclPaceAfter(ticket, rc, stream);
  return rc;
}

template <size_t... I>
constexpr std::array<OperatorRun, sizeof...(I)> MakeThunks(std::index_sequence<I...>) {
  return {&Thunk<I>...};
}
constexpr std::array<OperatorRun, kMaxOperators> kThunks = MakeThunks(std::make_index_sequence<kMaxOperators>());

// Which thunk stands in for which real function (the same one whichever
// library handle or name it is asked by).
struct Thunks {
  std::mutex lock;
  std::unordered_map<OperatorRun, size_t> slot_of;
  bool warned = false;
};
Thunks& TheThunks() {
  static Thunks* thunks = new Thunks();  // never freed: dlsym may run at exit
  return *thunks;
}

bool EndsWith(const char* s, const char* suffix) {
  const size_t n = std::strlen(s), m = std::strlen(suffix);
  return n >= m && std::strcmp(s + n - m, suffix) == 0;
}

}  // namespace

bool AclInsideOperator() { return t_operators > 0; }

void* AclnnOperatorHook(void* handle, const char* name, void* real) {
  if (!real || std::strncmp(name, "aclnn", 5) != 0 || EndsWith(name, "GetWorkspaceSize")) return real;
  // aclnnInit, aclnnFinalize and other helpers have no planning twin.
  if (!RealDlsym()(handle, (std::string(name) + "GetWorkspaceSize").c_str())) return real;
  Thunks& t = TheThunks();
  std::lock_guard<std::mutex> hold(t.lock);
  const auto run = reinterpret_cast<OperatorRun>(real);
  auto it = t.slot_of.find(run);
  if (it != t.slot_of.end()) return reinterpret_cast<void*>(kThunks[it->second]);
  const size_t slot = t.slot_of.size();
  if (slot == kMaxOperators) {
    if (!t.warned)
      std::fprintf(stderr, "libvgpu: more than %zu aclnn operators; %s and later ones are not paced\n",
                   kMaxOperators, name);
    t.warned = true;
    return real;
  }
  g_real[slot].store(run, std::memory_order_release);
  t.slot_of.emplace(run, slot);
  return reinterpret_cast<void*>(kThunks[slot]);
}

}  // namespace interposer
}  // namespace vgpu
