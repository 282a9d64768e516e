/* Part of cuda_stub.c's translation unit (included after its contexts):
 * streams and the context stack.
 *
 * A stream made by cuStreamCreate belongs to the context current then;
 * work on it (launches, cuStreamSynchronize) goes to that context's device,
 * whatever context is current, as a CUkernel launched into another
 * context's stream does. cuEventRecord on such a stream fails with
 * CUDA_ERROR_INVALID_HANDLE unless the event is of the stream's device (the
 * driver wants event and stream in one context). Any other stream value
 * (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, values never made here)
 * means the current context. cuCtxPushCurrent/cuCtxPopCurrent keep a stack
 * of STACK_MAX contexts per thread. */
#ifndef VGPU_TESTS_CUDA_STUB_STREAMS_H_
#define VGPU_TESTS_CUDA_STUB_STREAMS_H_

#define STREAM_MAX 64
#define STACK_MAX 8

struct CUstream_st {
  CUcontext ctx; /* null: the slot is free */
};
static struct CUstream_st g_streams[STREAM_MAX];
static pthread_mutex_t g_streams_mu = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local CUcontext t_stack[STACK_MAX];
static _Thread_local int t_depth;

/* The context stream `s` belongs to, or NULL (the current one). */
static CUcontext stream_context(CUstream s) {
  CUcontext ctx = NULL;
  if (s < &g_streams[0] || s >= &g_streams[STREAM_MAX]) return NULL;
  pthread_mutex_lock(&g_streams_mu);
  ctx = s->ctx;
  pthread_mutex_unlock(&g_streams_mu);
  return ctx;
}

/* Runs `call` (an expression) with stream `s`'s context current. */
#define ON_STREAM(s, call)                             \
  ({                                                   \
    CUcontext saved_ = t_current, on_ = stream_context(s); \
    if (on_ != NULL) t_current = on_;                  \
    CUresult rc_ = (call);                             \
    t_current = saved_;                                \
    rc_;                                               \
  })

CUresult cuStreamCreate(CUstream* s, unsigned int flags) {
  int d;
  CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
  TRY(api_current_device(&d));
  if (s == NULL) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g_streams_mu);
  for (int i = 0; i < STREAM_MAX && rc != CUDA_SUCCESS; ++i)
    if (g_streams[i].ctx == NULL) g_streams[i].ctx = t_current, *s = &g_streams[i], rc = CUDA_SUCCESS;
  pthread_mutex_unlock(&g_streams_mu);
  return rc;
}

CUresult cuStreamDestroy_v2(CUstream s) {
  if (stream_context(s) == NULL) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&g_streams_mu);
  s->ctx = NULL;
  pthread_mutex_unlock(&g_streams_mu);
  return CUDA_SUCCESS;
}

/* Another stream value: the current context's. */
CUresult cuStreamGetCtx(CUstream s, CUcontext* ctx) {
  CUcontext c = stream_context(s);
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL) return CUDA_ERROR_INVALID_VALUE;
  if (c == NULL && t_current == NULL) return CUDA_ERROR_INVALID_CONTEXT;
  *ctx = c != NULL ? c : t_current;
  return CUDA_SUCCESS;
}
CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext* ctx) { return cuStreamGetCtx(s, ctx); }

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx == NULL || !ctx->alive) return CUDA_ERROR_INVALID_CONTEXT;
  if (t_depth == STACK_MAX) return CUDA_ERROR_OUT_OF_MEMORY;
  t_stack[t_depth++] = t_current;
  t_current = ctx;
  return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext* ctx) {
  if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
  if (t_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx != NULL) *ctx = t_current;
  t_current = t_stack[--t_depth];
  return CUDA_SUCCESS;
}

#endif /* VGPU_TESTS_CUDA_STUB_STREAMS_H_ */
