/* Stub aclnn operator library (built as stubs/libopapi.so) for the
 * interposer tests: one operator, aclnnBusy, in the two functions every
 * aclnn operator has. Its work of N microseconds goes to the stub runtime
 * (libascendcl.so) through the runtime's internal launch, as real operator
 * libraries do, so no public AscendCL entry point sees it.
 *
 *   aclnnBusyGetWorkspaceSize(N, &workspace_size, &executor)  plans it
 *   aclnnBusy(workspace, workspace_size, executor, stream)    queues it
 *
 * The executor is N itself (a tagged value, never dereferenced). */
#include <stdint.h>

typedef int aclnnStatus;
typedef struct aclOpExecutor aclOpExecutor;
typedef void* aclrtStream;

int vgpu_stub_acl_internal_launch(unsigned int duration_us);

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

/* A helper without a planning twin: handed out as it is. */
aclnnStatus aclnnInit(const char* config) { (void)config; return 0; }
