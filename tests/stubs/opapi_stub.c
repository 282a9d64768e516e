/* Stub aclnn operator library (built as stubs/libopapi.so) for the
 * interposer tests: two operators, in the two functions every aclnn
 * operator has. aclnnBusy's work of N microseconds goes to the stub runtime
 * (libascendcl.so) through the runtime's internal launch, as operator
 * libraries before CANN 8.5 do, so no public AscendCL entry point sees it;
 * aclnnBusyHost's goes through the public aclrtLaunchKernelWithHostArgs, as
 * CANN 8.5's libnnopbase launches every kernel.
 *
 *   aclnnBusyGetWorkspaceSize(N, &workspace_size, &executor)  plans it
 *   aclnnBusy(workspace, workspace_size, executor, stream)    queues it
 *   (aclnnBusyHostGetWorkspaceSize, aclnnBusyHost alike)
 *
 * The executor is N itself (a tagged value, never dereferenced). */
#include <stddef.h>
#include <stdint.h>

typedef int aclnnStatus;
typedef struct aclOpExecutor aclOpExecutor;
typedef void* aclrtStream;

int vgpu_stub_acl_internal_launch(unsigned int duration_us);
/* The stub runtime's (acl_api.h; not included: this library, as a real one,
 * sees only the runtime's exports). */
void* vgpu_stub_acl_kernel(unsigned int duration_us);
int aclrtLaunchKernelWithHostArgs(void* function, uint32_t blocks, aclrtStream stream, void* cfg, void* host_args,
                                  size_t args_size, void* placeholders, size_t placeholder_count);

#define EXECUTOR_TAG 0xae00000000000000ULL

aclnnStatus aclnnBusyGetWorkspaceSize(uint64_t duration_us, uint64_t* workspace_size, aclOpExecutor** executor) {
  if (workspace_size == 0 || executor == 0 || duration_us >= (1ULL << 32)) return 161001; /* ACLNN_ERR_PARAM_NULLPTR */
  *workspace_size = 0;
  *executor = (aclOpExecutor*)(uintptr_t)(EXECUTOR_TAG | duration_us);
  return 0;
}

aclnnStatus aclnnBusy(void* workspace, uint64_t workspace_size, aclOpExecutor* executor, aclrtStream stream) {
  uint64_t v = (uint64_t)(uintptr_t)executor;
  (void)workspace, (void)workspace_size, (void)stream;
  if ((v & 0xff00000000000000ULL) != EXECUTOR_TAG) return 161002; /* ACLNN_ERR_PARAM_INVALID */
  return vgpu_stub_acl_internal_launch((unsigned int)(v & 0xffffffffULL));
}

aclnnStatus aclnnBusyHostGetWorkspaceSize(uint64_t duration_us, uint64_t* workspace_size, aclOpExecutor** executor) {
  return aclnnBusyGetWorkspaceSize(duration_us, workspace_size, executor);
}

aclnnStatus aclnnBusyHost(void* workspace, uint64_t workspace_size, aclOpExecutor* executor, aclrtStream stream) {
  uint64_t v = (uint64_t)(uintptr_t)executor;
  (void)workspace, (void)workspace_size;
  if ((v & 0xff00000000000000ULL) != EXECUTOR_TAG) return 161002; /* ACLNN_ERR_PARAM_INVALID */
  return aclrtLaunchKernelWithHostArgs(vgpu_stub_acl_kernel((unsigned int)(v & 0xffffffffULL)), 1, stream, NULL,
                                       NULL, 0, NULL, 0);
}

/* A helper without a planning twin: handed out as it is. */
aclnnStatus aclnnInit(const char* config) { (void)config; return 0; }
