// AscendCL work of CANN 8.x beyond acl_hooks.cc's launch forms, paced the
// same way (VGPU_ACL_WORK): model runtime instances (a task graph captured
// with aclmdlRICaptureBegin/End or built with aclmdlRIBuild*, which
// torch_npu's NPUGraph::replay runs), model executions with a config
// handle, and the cast operator. Captures' beginnings and ends are told to
// the pacer, which keeps off events meanwhile (launch_pacer.h): a capture
// in global mode forbids event queries, as CUDA's does.
#include "acl_api.h"
#include "acl_device.h"
#include "export.h"
#include "hooks.h"
#include "launch_pacer.h"
#include "real_symbols.h"

using namespace vgpu::interposer;

VGPU_HOOK aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode) {
  VGPU_REAL(Vendor::kAcl, aclmdlRICaptureBegin);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  const bool began = AclPacer().CaptureBegan(stream, false);
  const aclError rc = real(stream, mode);
  if (rc != ACL_SUCCESS && began) AclPacer().CaptureEnded(stream, false);
  return rc;
}

VGPU_HOOK aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI* model_ri) {
  VGPU_REAL(Vendor::kAcl, aclmdlRICaptureEnd);
  if (!real) return ACL_ERROR_UNINITIALIZE;
  const aclError rc = real(stream, model_ri);
  AclPacer().CaptureEnded(stream, false);  // over, whatever rc says
  return rc;
}

VGPU_ACL_WORK(aclmdlRIExecuteAsync, (aclmdlRI model_ri, aclrtStream stream), (model_ri, stream), stream)
// Synchronous: the runtime runs the instance on the context's default
// stream and waits (Model::ExecuteSync).
VGPU_ACL_WORK(aclmdlRIExecute, (aclmdlRI model_ri, int32_t timeout), (model_ri, timeout), nullptr)
// Both run on `stream` (the default one if null); V2 then waits for it.
VGPU_ACL_WORK(aclmdlExecuteV2,
              (uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output, aclrtStream stream,
               const aclmdlExecConfigHandle* handle),
              (model_id, input, output, stream, handle), stream)
VGPU_ACL_WORK(aclmdlExecuteAsyncV2,
              (uint32_t model_id, const aclmdlDataset* input, aclmdlDataset* output, aclrtStream stream,
               const aclmdlExecConfigHandle* handle),
              (model_id, input, output, stream, handle), stream)
VGPU_ACL_WORK(aclopCast,
              (const aclTensorDesc* src_desc, const aclDataBuffer* src_buffer, const aclTensorDesc* dst_desc,
               aclDataBuffer* dst_buffer, uint8_t truncate, aclrtStream stream),
              (src_desc, src_buffer, dst_desc, dst_buffer, truncate, stream), stream)

namespace vgpu {
namespace interposer {

#define VGPU_ACL_ENTRY(name) {#name, reinterpret_cast<void*>(&::name)}
const Hook kAclWorkHooks[] = {
    VGPU_ACL_ENTRY(aclmdlRIExecuteAsync), VGPU_ACL_ENTRY(aclmdlRIExecute), VGPU_ACL_ENTRY(aclmdlExecuteV2),
    VGPU_ACL_ENTRY(aclmdlExecuteAsyncV2), VGPU_ACL_ENTRY(aclopCast),
    VGPU_ACL_ENTRY(aclmdlRICaptureBegin), VGPU_ACL_ENTRY(aclmdlRICaptureEnd),
};
const size_t kAclWorkHookCount = sizeof(kAclWorkHooks) / sizeof(kAclWorkHooks[0]);

}  // namespace interposer
}  // namespace vgpu
