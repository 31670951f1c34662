/* SPDX-License-Identifier: Apache-2.0 */
/* The aclnn layer from C: runtime misuse, tensors, executor lifecycle (single use,
 * repeatable, re-pointed addresses), aclnnApplyTopKTopP against the native op on random
 * inputs, and its error table with CANN's codes. */
#include <llmk/llmk.h>
#include <math.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn_tspec.h"
#include "aclnnop/aclnn_apply_top_k_top_p.h"

static void test_init(void) {
  EQ(aclFinalize(), ACL_ERROR_UNINITIALIZE);
  EQ(aclInit(NULL), ACL_SUCCESS);
  EQ(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
  TU_CHECK(strstr(aclGetRecentErrMsg(), "aclInit") != NULL, "message: %s",
           aclGetRecentErrMsg());
  EQ(aclFinalize(), ACL_SUCCESS);
  EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
  EQ(aclInit("ignored.json"), ACL_SUCCESS); /* init again after finalize: allowed here */
}

static void test_devices(void) {
  int32_t dev = -1;
  EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
  EQ(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
  EQ(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
  EQ(aclrtSetDevice(0), ACL_SUCCESS);
  EQ(aclrtGetDevice(&dev), ACL_SUCCESS);
  EQ(dev, 0);
  EQ(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM);
  uint32_t count = 0;
  EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
  EQ(count, 1);
  aclrtRunMode mode = ACL_DEVICE;
  EQ(aclrtGetRunMode(&mode), ACL_SUCCESS);
  EQ(mode, ACL_HOST);
  TU_CHECK(aclrtGetSocName() && *aclrtGetSocName(), "soc name");
  int32_t ma = -1, mi = -1, pa = -1;
  EQ(aclrtGetVersion(&ma, &mi, &pa), ACL_SUCCESS);
  EQ(ma, ACL_MAJOR_VERSION);
  EQ(aclrtGetVersion(NULL, &mi, &pa), ACL_ERROR_INVALID_PARAM);
  size_t fr = 0, tot = 0;
  EQ(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot), ACL_SUCCESS);
  TU_CHECK(tot > 0 && fr <= tot, "meminfo %zu %zu", fr, tot);
  EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);

  aclrtContext c = NULL, cur = NULL;
  EQ(aclrtCreateContext(&c, 1), ACL_ERROR_RT_INVALID_DEVICEID);
  EQ(aclrtCreateContext(&c, 0), ACL_SUCCESS);
  EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  TU_CHECK(cur == c, "current context");
  EQ(aclrtSetCurrentContext(c), ACL_SUCCESS);
  EQ(aclrtDestroyContext(c), ACL_SUCCESS);
  EQ(aclrtDestroyContext(c), ACL_ERROR_RT_INVALID_HANDLE);
  EQ(aclrtSetCurrentContext(c), ACL_ERROR_RT_INVALID_HANDLE);
  EQ(aclrtDestroyContext(NULL), ACL_ERROR_INVALID_PARAM);

  aclrtStream s = NULL;
  aclrtStreamStatus ss = ACL_STREAM_STATUS_NOT_READY;
  EQ(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
  EQ(aclrtCreateStreamWithConfig(&s, 0, 0), ACL_SUCCESS);
  EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  EQ(aclrtSynchronizeStreamWithTimeout(s, 100), ACL_SUCCESS);
  EQ(aclrtStreamQuery(s, &ss), ACL_SUCCESS);
  EQ(ss, ACL_STREAM_STATUS_COMPLETE);
  EQ(aclrtSynchronizeStream(NULL), ACL_SUCCESS); /* default stream */

  aclrtEvent e0 = NULL, e1 = NULL;
  float ms = -1;
  EQ(aclrtCreateEvent(&e0), ACL_SUCCESS);
  EQ(aclrtCreateEvent(&e1), ACL_SUCCESS);
  EQ(aclrtEventElapsedTime(&ms, e0, e1), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
  EQ(aclrtRecordEvent(e0, s), ACL_SUCCESS);
  EQ(aclrtRecordEvent(e1, s), ACL_SUCCESS);
  EQ(aclrtSynchronizeEvent(e1), ACL_SUCCESS);
  EQ(aclrtEventElapsedTime(&ms, e0, e1), ACL_SUCCESS);
  TU_CHECK(ms >= 0 && ms < 10000, "elapsed %f", ms);
  EQ(aclrtDestroyEvent(e0), ACL_SUCCESS);
  EQ(aclrtDestroyEvent(e1), ACL_SUCCESS);
  EQ(aclrtDestroyEvent(e1), ACL_ERROR_RT_INVALID_HANDLE);
  EQ(aclrtRecordEvent(e1, s), ACL_ERROR_RT_INVALID_HANDLE);

  EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  EQ(aclrtDestroyStream(s), ACL_ERROR_RT_INVALID_HANDLE);
  EQ(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
  EQ(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
}

static void test_memory(void) {
  void *d = (void *)1;
  EQ(aclrtMalloc(&d, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  TU_CHECK(d == NULL, "malloc(0) left a pointer");
  EQ(aclrtMalloc(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EQ(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
  EQ(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);

  EQ(aclrtMalloc(&d, 128, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  TU_CHECK(d && ((uintptr_t)d & 31) == 0, "alignment");
  static unsigned char host[64000];
  memset(host, 0x5a, sizeof host);
  /* the sample that copies 64000 bytes out of a 128-byte buffer */
  EQ(aclrtMemcpy(host, sizeof host, d, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST),
     ACL_ERROR_RT_PARAM_INVALID);
  TU_CHECK(strstr(aclGetRecentErrMsg(), "allocation") != NULL, "%s",
           aclGetRecentErrMsg());
  TU_CHECK(host[0] == 0x5a && host[63999] == 0x5a, "host written by a failed copy");
  EQ(aclrtMemcpy(d, 128, host, 129, ACL_MEMCPY_HOST_TO_DEVICE),
     ACL_ERROR_RT_PARAM_INVALID);
  TU_CHECK(strstr(aclGetRecentErrMsg(), "destMax") != NULL, "%s", aclGetRecentErrMsg());
  EQ(aclrtMemcpy((char *)d + 100, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE),
     ACL_ERROR_RT_PARAM_INVALID);
  EQ(aclrtMemcpy((char *)d + 64, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  EQ(aclrtMemcpy(NULL, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EQ(aclrtMemcpy(d, 64, NULL, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EQ(aclrtMemcpy(d, 64, host, 64, (aclrtMemcpyKind)99), ACL_ERROR_INVALID_PARAM);
  EQ(aclrtMemcpy(d, 0, host, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  EQ(aclrtMemcpyAsync(d, 128, host, 128, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_SUCCESS);

  EQ(aclrtMemset(d, 128, 7, 129), ACL_ERROR_RT_PARAM_INVALID);
  EQ(aclrtMemset((char *)d + 1, 256, 7, 128), ACL_ERROR_RT_PARAM_INVALID);
  EQ(aclrtMemset(NULL, 8, 7, 8), ACL_ERROR_INVALID_PARAM);
  EQ(aclrtMemsetAsync(d, 128, 7, 128, NULL), ACL_SUCCESS);
  EQ(aclrtMemcpy(host, sizeof host, d, 128, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  TU_CHECK(host[0] == 7 && host[127] == 7 && host[128] == 0x5a, "memset/memcpy contents");

  void *h = NULL;
  EQ(aclrtMallocHost(&h, 32), ACL_SUCCESS);
  EQ(aclrtFree(h),
     ACL_ERROR_RT_MEMORY_FREE); /* host memory is freed with aclrtFreeHost */
  EQ(aclrtMemcpy(h, 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
  EQ(aclrtFreeHost(h), ACL_SUCCESS);
  EQ(aclrtFreeHost(h), ACL_ERROR_RT_MEMORY_FREE);

  EQ(aclrtFree((char *)d + 8), ACL_ERROR_RT_MEMORY_FREE);
  EQ(aclrtFree(d), ACL_SUCCESS);
  EQ(aclrtFree(d), ACL_ERROR_RT_MEMORY_FREE);
  void *a = NULL, *b = NULL;
  EQ(aclrtMallocAlign32(&a, 10, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
  EQ(aclrtMallocCached(&b, 10, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
  EQ(aclrtMemcpy(a, 10, b, 10, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
  EQ(aclrtFree(a), ACL_SUCCESS);
  EQ(aclrtFree(b), ACL_SUCCESS);

  EQ(aclDataTypeSize(ACL_FLOAT), 4);
  EQ(aclDataTypeSize(ACL_FLOAT16), 2);
  EQ(aclDataTypeSize(ACL_BF16), 2);
  EQ(aclDataTypeSize(ACL_INT64), 8);
  EQ(aclDataTypeSize(ACL_BOOL), 1);
  EQ(aclDataTypeSize(ACL_COMPLEX128), 16);
  EQ(aclDataTypeSize(ACL_DT_UNDEFINED), 0);
  EQ(aclFloatToFloat16(1.0f), 0x3c00);
  EQ(aclFloatToFloat16(-2.0f), 0xc000);
  TU_CHECK(aclFloat16ToFloat(0x3c00) == 1.0f && aclFloat16ToFloat(0x7bff) == 65504.0f,
           "f16");
}

static void test_tensors(void) {
  int64_t dims[2] = {2, 3};
  float buf[8] = {0};
  TU_CHECK(
      aclCreateTensor(NULL, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, buf) == NULL,
      "NULL dims with a count");
  TU_CHECK(
      aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 2, buf) == NULL,
      "NULL storage dims with a count");
  aclTensor *scalar =
      aclCreateTensor(NULL, 0, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, NULL, 0, buf);
  TU_CHECK(scalar != NULL, "rank 0");
  aclTensor *t =
      aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 2, ACL_FORMAT_ND, dims, 2, NULL);
  TU_CHECK(t != NULL, "NULL data allowed");
  void *addr = buf;
  EQ(aclGetRawTensorAddr(t, &addr), 0);
  TU_CHECK(addr == NULL, "raw addr");
  EQ(aclSetRawTensorAddr(t, buf), 0);
  EQ(aclGetRawTensorAddr(t, &addr), 0);
  TU_CHECK(addr == buf, "raw addr set");
  int64_t off = -1;
  aclFormat f = ACL_FORMAT_UNDEFINED;
  aclDataType dt = ACL_DT_UNDEFINED;
  EQ(aclGetViewOffset(t, &off), 0);
  EQ(off, 2);
  EQ(aclGetFormat(t, &f), 0);
  EQ(f, ACL_FORMAT_ND);
  EQ(aclGetDataType(t, &dt), 0);
  EQ(dt, ACL_FLOAT);
  EQ(aclGetViewOffset(NULL, &off), ACLNN_ERR_PARAM_NULLPTR);
  EQ(aclInitTensor(t, dims, 1, ACL_INT32, NULL, 0, ACL_FORMAT_NCHW, dims, 1, buf), 0);
  EQ(aclGetDataType(t, &dt), 0);
  EQ(dt, ACL_INT32);
  EQ(aclInitTensor(NULL, dims, 1, ACL_INT32, NULL, 0, ACL_FORMAT_ND, dims, 1, buf),
     ACLNN_ERR_PARAM_NULLPTR);
  EQ(aclDestroyTensor(t), 0);
  EQ(aclDestroyTensor(scalar), 0);

  int64_t iv[3] = {1, 2, 3};
  float fv[2] = {0.5f, 1.5f};
  bool bv[2] = {true, false};
  int32_t sv = 42;
  uint64_t n = 0;
  aclIntArray *ia = aclCreateIntArray(iv, 3);
  aclFloatArray *fa = aclCreateFloatArray(fv, 2);
  aclBoolArray *ba = aclCreateBoolArray(bv, 2);
  aclScalar *sc = aclCreateScalar(&sv, ACL_INT32);
  TU_CHECK(ia && fa && ba && sc, "create arrays");
  TU_CHECK(aclCreateIntArray(NULL, 3) == NULL, "NULL int array values");
  TU_CHECK(aclCreateScalar(NULL, ACL_INT32) == NULL, "NULL scalar value");
  EQ(aclGetIntArraySize(ia, &n), 0);
  EQ(n, 3);
  EQ(aclGetFloatArraySize(fa, &n), 0);
  EQ(n, 2);
  EQ(aclGetBoolArraySize(ba, &n), 0);
  EQ(n, 2);
  EQ(aclGetIntArraySize(NULL, &n), ACLNN_ERR_PARAM_NULLPTR);
  const aclTensor *members[2] = {
      aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 2, buf),
      aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, buf)};
  aclTensorList *tl = aclCreateTensorList(members, 2);
  EQ(aclGetTensorListSize(tl, &n), 0);
  EQ(n, 2);
  const aclScalar *scs[1] = {aclCreateScalar(&sv, ACL_INT32)};
  aclScalarList *sl = aclCreateScalarList(scs, 1);
  EQ(aclGetScalarListSize(sl, &n), 0);
  EQ(n, 1);
  EQ(aclDestroyIntArray(ia), 0);
  EQ(aclDestroyFloatArray(fa), 0);
  EQ(aclDestroyBoolArray(ba), 0);
  EQ(aclDestroyScalar(sc), 0);
  EQ(aclDestroyTensorList(tl), 0); /* destroys its tensors too */
  EQ(aclDestroyScalarList(sl), 0);

  /* every destroy accepts NULL */
  EQ(aclDestroyTensor(NULL), 0);
  EQ(aclDestroyScalar(NULL), 0);
  EQ(aclDestroyIntArray(NULL), 0);
  EQ(aclDestroyFloatArray(NULL), 0);
  EQ(aclDestroyBoolArray(NULL), 0);
  EQ(aclDestroyTensorList(NULL), 0);
  EQ(aclDestroyScalarList(NULL), 0);
  EQ(aclSetAclOpExecutorRepeatable(NULL), ACLNN_ERR_INNER_NULLPTR);
  EQ(aclDestroyAclOpExecutor(NULL), ACLNN_ERR_INNER_NULLPTR);
  EQ(aclnnInit(NULL), 0);
  EQ(aclnnFinalize(), 0);
}

/* --------------------------------------------------------------- executors */

typedef struct tkp_case {
  void *logits, *p, *k, *out; /* aclrtMalloc blocks */
  aclTensor *tl, *tp, *tk, *to;
} tkp_case;

static aclTensor *mk(const int64_t *dims, uint64_t n, aclDataType dt, void *data) {
  return aclCreateTensor(dims, n, dt, NULL, 0, ACL_FORMAT_ND, dims, n, data);
}

/* The CANN sample: [3, 4] = 1..12 (+ shift), p = .2 .4 .6, k = 1 2 3. */
static void sample_case(tkp_case *c, float shift) {
  float lg[12], out[12];
  for (int i = 0; i < 12; i++) lg[i] = (float)(i + 1) + shift, out[i] = 777.0f;
  float p[3] = {0.2f, 0.4f, 0.6f};
  int32_t k[3] = {1, 2, 3};
  int64_t d2[2] = {3, 4}, d1[1] = {3};
  c->logits = dev_copy(lg, sizeof lg);
  c->p = dev_copy(p, sizeof p);
  c->k = dev_copy(k, sizeof k);
  c->out = dev_copy(out, sizeof out);
  c->tl = mk(d2, 2, ACL_FLOAT, c->logits);
  c->tp = mk(d1, 1, ACL_FLOAT, c->p);
  c->tk = mk(d1, 1, ACL_INT32, c->k);
  c->to = mk(d2, 2, ACL_FLOAT, c->out);
}

static void free_case(tkp_case *c) {
  aclDestroyTensor(c->tl);
  aclDestroyTensor(c->tp);
  aclDestroyTensor(c->tk);
  aclDestroyTensor(c->to);
  aclrtFree(c->logits);
  aclrtFree(c->p);
  aclrtFree(c->k);
  aclrtFree(c->out);
}

/* out of the sample: -inf except [3], [7], [11] = logits there. */
static int sample_ok(const void *out_dev, float shift) {
  float o[12];
  aclrtMemcpy(o, sizeof o, out_dev, sizeof o, ACL_MEMCPY_DEVICE_TO_HOST);
  for (int i = 0; i < 12; i++) {
    bool keep = i % 4 == 3;
    if (keep ? o[i] != (float)(i + 1) + shift : !(isinf(o[i]) && o[i] < 0)) return 0;
  }
  return 1;
}

static void *workspace_for(uint64_t ws) {
  void *w = NULL;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  return w;
}

static void test_executor(aclrtStream stream) {
  tkp_case c;
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;

  /* single use: the run consumes the executor; a second run fails cleanly */
  sample_case(&c, 0);
  EQ(aclnnApplyTopKTopPGetWorkspaceSize(c.tl, c.tp, c.tk, c.to, &ws, &ex), ACLNN_SUCCESS);
  void *w = workspace_for(ws);
  EQ(aclnnApplyTopKTopP(w, ws, ex, stream), ACLNN_SUCCESS);
  TU_CHECK(sample_ok(c.out, 0), "sample result");
  EQ(aclnnApplyTopKTopP(w, ws, ex, stream), ACLNN_ERR_INNER_NULLPTR);
  TU_CHECK(strstr(aclGetRecentErrMsg(), "not live") != NULL, "%s", aclGetRecentErrMsg());
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_ERR_INNER_NULLPTR);
  EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_ERR_INNER_NULLPTR);
  EQ(aclnnApplyTopKTopP(w, ws, NULL, stream), ACLNN_ERR_INNER_NULLPTR);
  aclrtFree(w);

  /* a destroyed executor cannot run */
  EQ(aclnnApplyTopKTopPGetWorkspaceSize(c.tl, c.tp, c.tk, c.to, &ws, &ex), ACLNN_SUCCESS);
  EQ(aclSetInputTensorAddr(ex, 0, c.tl, c.logits),
     ACLNN_ERR_PARAM_INVALID); /* not repeatable */
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  EQ(aclnnApplyTopKTopP(NULL, 0, ex, stream), ACLNN_ERR_INNER_NULLPTR);

  /* tensors may be destroyed between the phases: the executor keeps copies */
  aclTensor *tmp = mk((int64_t[]){3, 4}, 2, ACL_FLOAT, c.logits);
  EQ(aclnnApplyTopKTopPGetWorkspaceSize(tmp, c.tp, c.tk, c.to, &ws, &ex), ACLNN_SUCCESS);
  aclDestroyTensor(tmp);
  w = workspace_for(ws);
  EQ(aclnnApplyTopKTopP(w, ws, ex, stream), ACLNN_SUCCESS);
  TU_CHECK(sample_ok(c.out, 0), "result after the tensor was destroyed");
  aclrtFree(w);

  /* a freed block is detected at the run (the memory is not touched) */
  tkp_case f;
  sample_case(&f, 0);
  EQ(aclnnApplyTopKTopPGetWorkspaceSize(f.tl, f.tp, f.tk, f.to, &ws, &ex), ACLNN_SUCCESS);
  EQ(aclrtFree(f.out), ACL_SUCCESS);
  w = workspace_for(ws);
  EQ(aclnnApplyTopKTopP(w, ws, ex, stream), ACLNN_ERR_PARAM_INVALID);
  aclrtFree(w);
  f.out = NULL;
  free_case(&f);
  free_case(&c);

  /* repeatable: many runs, then re-pointed inputs and outputs */
  sample_case(&c, 0);
  tkp_case c2;
  sample_case(&c2, 100);
  EQ(aclnnApplyTopKTopPGetWorkspaceSize(c.tl, c.tp, c.tk, c.to, &ws, &ex), ACLNN_SUCCESS);
  EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  w = workspace_for(ws);
  for (int r = 0; r < 3; r++) {
    aclrtMemset(c.out, 48, 0, 48);
    EQ(aclnnApplyTopKTopP(w, ws, ex, stream), ACLNN_SUCCESS);
    TU_CHECK(sample_ok(c.out, 0), "repeatable run %d", r);
  }
  EQ(aclSetInputTensorAddr(ex, 0, c.tl, c2.logits), ACLNN_SUCCESS);
  EQ(aclSetOutputTensorAddr(ex, 0, c.to, c2.out), ACLNN_SUCCESS);
  aclrtMemset(c.out, 48, 0, 48);
  EQ(aclnnApplyTopKTopP(w, ws, ex, stream), ACLNN_SUCCESS);
  TU_CHECK(sample_ok(c2.out, 100),
           "re-pointed run writes the new output from the new input");
  float o[12];
  aclrtMemcpy(o, sizeof o, c.out, sizeof o, ACL_MEMCPY_DEVICE_TO_HOST);
  TU_CHECK(o[0] == 0 && o[3] == 0, "old output untouched");
  void *raw = NULL;
  aclGetRawTensorAddr(c.tl, &raw);
  TU_CHECK(raw == c2.logits, "the aclTensor follows the new address");
  /* back to the first buffers through aclSetTensorAddr (index over inputs then outputs)
   */
  EQ(aclSetTensorAddr(ex, 0, c.tl, c.logits), ACLNN_SUCCESS);
  EQ(aclSetTensorAddr(ex, 3, c.to, c.out), ACLNN_SUCCESS);
  EQ(aclnnApplyTopKTopP(w, ws, ex, stream), ACLNN_SUCCESS);
  TU_CHECK(sample_ok(c.out, 0), "re-pointed back");
  /* misuse */
  EQ(aclSetInputTensorAddr(ex, 3, c.tl, c.logits), ACLNN_ERR_PARAM_INVALID);
  EQ(aclSetOutputTensorAddr(ex, 1, c.to, c.out), ACLNN_ERR_PARAM_INVALID);
  EQ(aclSetTensorAddr(ex, 4, c.to, c.out), ACLNN_ERR_PARAM_INVALID);
  EQ(aclSetInputTensorAddr(ex, 0, NULL, c.logits), ACLNN_ERR_INNER_NULLPTR);
  EQ(aclSetInputTensorAddr(NULL, 0, c.tl, c.logits), ACLNN_ERR_INNER_NULLPTR);
  EQ(aclSetInputTensorAddr(ex, 0, c.tl, (char *)c.logits + 8), ACLNN_ERR_PARAM_INVALID);
  EQ(aclSetInputTensorAddr(ex, 0, c.tl, NULL), ACLNN_ERR_PARAM_NULLPTR);
  EQ(aclnnApplyTopKTopP(w, ws, ex, stream),
     ACLNN_SUCCESS); /* failed calls changed nothing */
  TU_CHECK(sample_ok(c.out, 0), "after failed re-points");
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_ERR_INNER_NULLPTR);

  /* a tensor absent at phase 1 cannot be re-pointed */
  EQ(aclnnApplyTopKTopPGetWorkspaceSize(c.tl, NULL, c.tk, c.to, &ws, &ex), ACLNN_SUCCESS);
  EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  EQ(aclSetInputTensorAddr(ex, 1, c.tp, c.p), ACLNN_ERR_PARAM_INVALID);
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  aclrtFree(w);
  free_case(&c);
  free_case(&c2);
}

/* ---------------------------------------------- against the native op */

static void fill_logits(void *buf, aclDataType dt, int64_t n, int ties) {
  for (int64_t i = 0; i < n; i++) {
    float x = ties ? (float)tu_rand_range(-3, 3) : (float)(tu_rand_unit() * 20 - 10);
    if (tu_rand_range(0, 40) == 0) x = -INFINITY;
    if (dt == ACL_FLOAT)
      ((float *)buf)[i] = x;
    else if (dt == ACL_FLOAT16)
      ((uint16_t *)buf)[i] = llmk_f32_to_f16(x);
    else
      ((uint16_t *)buf)[i] = llmk_f32_to_bf16(x);
  }
}

static void store_p(void *buf, aclDataType dt, int64_t i, float x) {
  if (dt == ACL_FLOAT)
    ((float *)buf)[i] = x;
  else if (dt == ACL_FLOAT16)
    ((uint16_t *)buf)[i] = llmk_f32_to_f16(x);
  else
    ((uint16_t *)buf)[i] = llmk_f32_to_bf16(x);
}

static llmk_dtype native(aclDataType dt) {
  return dt == ACL_FLOAT ? LLMK_F32 : dt == ACL_FLOAT16 ? LLMK_F16 : LLMK_BF16;
}

static void compare_one(aclrtStream stream, aclDataType dt, int64_t b, int64_t v,
                        int64_t pad, int use_p, int use_k, int in_place, int ties) {
  size_t es = aclDataTypeSize(dt);
  int64_t row = v + pad; /* padded rows: a strided view */
  size_t lbytes = (size_t)(b * row) * es, pbytes = (size_t)b * es, kbytes = (size_t)b * 4;
  unsigned char *lg = malloc(lbytes ? lbytes : 1), *pp = malloc(pbytes ? pbytes : 1);
  int32_t *kk = malloc(kbytes ? kbytes : 1);
  unsigned char *ref = malloc(lbytes ? lbytes : 1), *got = malloc(lbytes ? lbytes : 1);
  fill_logits(lg, dt, b * row, ties);
  for (int64_t i = 0; i < b; i++) {
    store_p(pp, dt, i, tu_rand_range(0, 5) == 0 ? 1.0f : (float)tu_rand_unit());
    kk[i] = (int32_t)tu_rand_range(-1, v + 1);
  }
  memcpy(ref, lg, lbytes);
  int64_t dims[2] = {b, v}, strides[2] = {row, 1}, d1[1] = {b};

  /* native */
  llmk_tensor nl, np, nk, no;
  llmk_tensor_init(&nl, native(dt), 2, dims, strides, lg);
  llmk_tensor_init(&np, native(dt), 1, d1, NULL, pp);
  llmk_tensor_init(&nk, LLMK_I32, 1, d1, NULL, kk);
  unsigned char *nout = in_place ? ref : malloc(lbytes ? lbytes : 1);
  if (!in_place) memset(nout, 0x11, lbytes);
  if (in_place) llmk_tensor_init(&nl, native(dt), 2, dims, strides, ref);
  llmk_tensor_init(&no, native(dt), 2, dims, strides, nout);
  size_t nws = 0;
  llmk_plan *plan = NULL;
  llmk_status nst = llmk_apply_top_k_top_p_get_workspace_size(
      &nl, use_p ? &np : NULL, use_k ? &nk : NULL, &no, &nws, &plan);
  void *nw = malloc(nws ? nws : 1);
  if (nst == LLMK_SUCCESS) nst = llmk_apply_top_k_top_p(nw, nws, plan, NULL);
  free(nw);

  /* aclnn */
  void *dl = dev_copy(lg, lbytes ? lbytes : 1), *dp = dev_copy(pp, pbytes ? pbytes : 1),
       *dk = dev_copy(kk, kbytes ? kbytes : 1);
  void *dout = dl;
  if (!in_place) {
    aclrtMalloc(&dout, lbytes ? lbytes : 1, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(dout, lbytes ? lbytes : 1, 0x11, lbytes);
  }
  aclTensor *tl = aclCreateTensor(dims, 2, dt, strides, 0, ACL_FORMAT_ND, dims, 2, dl);
  aclTensor *tp = mk(d1, 1, dt, dp), *tk = mk(d1, 1, ACL_INT32, dk);
  aclTensor *to = aclCreateTensor(dims, 2, dt, strides, 0, ACL_FORMAT_ND, dims, 2, dout);
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = aclnnApplyTopKTopPGetWorkspaceSize(tl, use_p ? tp : NULL,
                                                      use_k ? tk : NULL, to, &ws, &ex);
  void *w = workspace_for(ws);
  if (st == ACLNN_SUCCESS) st = aclnnApplyTopKTopP(w, ws, ex, stream);
  aclrtFree(w);
  TU_CHECK(st == ACLNN_SUCCESS && nst == LLMK_SUCCESS,
           "dt=%d b=%lld v=%lld: %d / %d (%s)", (int)dt, (long long)b, (long long)v, st,
           nst, aclGetRecentErrMsg());
  aclrtMemcpy(got, lbytes ? lbytes : 1, dout, lbytes ? lbytes : 1,
              ACL_MEMCPY_DEVICE_TO_HOST);
  unsigned char *want = nout;
  bool same = true;
  for (int64_t r = 0; r < b && same; r++) /* compare the views only (pads differ) */
    same = memcmp(got + (size_t)(r * row) * es, want + (size_t)(r * row) * es,
                  (size_t)v * es) == 0;
  TU_CHECK(same, "dt=%d b=%lld v=%lld pad=%lld p=%d k=%d in_place=%d: results differ",
           (int)dt, (long long)b, (long long)v, (long long)pad, use_p, use_k, in_place);
  aclDestroyTensor(tl);
  aclDestroyTensor(tp);
  aclDestroyTensor(tk);
  aclDestroyTensor(to);
  aclrtFree(dl);
  aclrtFree(dp);
  aclrtFree(dk);
  if (!in_place) aclrtFree(dout);
  if (!in_place) free(nout);
  free(lg);
  free(pp);
  free(kk);
  free(ref);
  free(got);
}

static void test_against_native(aclrtStream stream) {
  static const aclDataType dts[3] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
  static const int64_t vs[5] = {1, 5, 64, 1000, 4099};
  static const int64_t bs[3] = {1, 3, 8};
  for (int d = 0; d < 3; d++)
    for (int vi = 0; vi < 5; vi++)
      for (int bi = 0; bi < 3; bi++) {
        int mode = (int)tu_rand_range(0, 2); /* p+k, p only, k only */
        compare_one(stream, dts[d], bs[bi], vs[vi], tu_rand_range(0, 1) ? 3 : 0,
                    mode != 2, mode != 1, 0, (int)tu_rand_range(0, 1));
      }
  compare_one(stream, ACL_FLOAT, 4, 300, 0, 1, 1, 1, 0); /* in place */
  compare_one(stream, ACL_FLOAT16, 4, 300, 0, 1, 0, 1, 1);
  compare_one(stream, ACL_FLOAT, 0, 16, 0, 1, 1, 0, 0); /* empty */
}

/* -------------------------------------------------------------- error table */

typedef struct etc {
  const char *name;
  int which; /* tensor to alter: 0 logits, 1 p, 2 k, 3 out */
  int what;  /* 0 NULL, 1 dtype, 2 rank, 3 dim, 4 format, 5 stride, 6 offset, 7 data NULL,
                8 outside block, 9 workspaceSize NULL, 10 executor NULL, 11 p and k NULL */
  int64_t value;
  aclnnStatus want;
} etc;

static void test_errors(aclrtStream stream) {
  static const etc cases[] = {
      {"logits NULL", 0, 0, 0, ACLNN_ERR_PARAM_NULLPTR},
      {"out NULL", 3, 0, 0, ACLNN_ERR_PARAM_NULLPTR},
      {"p and k NULL", 0, 11, 0, ACLNN_ERR_PARAM_NULLPTR},
      {"workspaceSize NULL", 0, 9, 0, ACLNN_ERR_PARAM_NULLPTR},
      {"executor NULL", 0, 10, 0, ACLNN_ERR_PARAM_NULLPTR},
      {"logits data NULL", 0, 7, 0, ACLNN_ERR_PARAM_NULLPTR},
      {"logits INT32", 0, 1, ACL_INT32, ACLNN_ERR_PARAM_INVALID},
      {"logits DOUBLE", 0, 1, ACL_DOUBLE, ACLNN_ERR_PARAM_INVALID},
      {"out FLOAT16", 3, 1, ACL_FLOAT16, ACLNN_ERR_PARAM_INVALID},
      {"p FLOAT16", 1, 1, ACL_FLOAT16, ACLNN_ERR_PARAM_INVALID},
      {"k INT64", 2, 1, ACL_INT64, ACLNN_ERR_PARAM_INVALID},
      {"logits rank 3", 0, 2, 3, ACLNN_ERR_PARAM_INVALID},
      {"out rank 1", 3, 2, 1, ACLNN_ERR_PARAM_INVALID},
      {"p rank 2", 1, 2, 2, ACLNN_ERR_PARAM_INVALID},
      {"k rank 0", 2, 2, 0, ACLNN_ERR_PARAM_INVALID},
      {"out [3, 3]", 3, 3, 3, ACLNN_ERR_PARAM_INVALID},
      {"p [2]", 1, 3, 2, ACLNN_ERR_PARAM_INVALID},
      {"k [4]", 2, 3, 4, ACLNN_ERR_PARAM_INVALID},
      {"logits FRACTAL_NZ", 0, 4, ACL_FORMAT_FRACTAL_NZ, ACLNN_ERR_PARAM_INVALID},
      {"out NC1HWC0", 3, 4, ACL_FORMAT_NC1HWC0, ACLNN_ERR_PARAM_INVALID},
      /* CANN's op_api takes ND alone: the other ND-like tags are refused too */
      {"logits NCHW", 0, 4, ACL_FORMAT_NCHW, ACLNN_ERR_PARAM_INVALID},
      {"k NC", 2, 4, ACL_FORMAT_NC, ACLNN_ERR_PARAM_INVALID},
      {"logits negative stride", 0, 5, -1, ACLNN_ERR_PARAM_INVALID},
      {"logits negative offset", 0, 6, -1, ACLNN_ERR_PARAM_INVALID},
      {"out offset past its block", 3, 6, 1, ACLNN_ERR_PARAM_INVALID},
      {"logits in a block too small", 0, 8, 0, ACLNN_ERR_PARAM_INVALID},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const etc *c = &cases[i];
    tkp_case s;
    sample_case(&s, 0);
    aclTensor *t[4] = {s.tl, s.tp, s.tk, s.to};
    aclTensor *alt = NULL;
    void *small = NULL;
    int64_t d2[2] = {3, 4}, d3[3] = {3, 4, 1}, d1[1] = {3};
    aclDataType dt = c->which == 2 ? ACL_INT32 : ACL_FLOAT;
    void *data = c->which == 0   ? s.logits
                 : c->which == 1 ? s.p
                 : c->which == 2 ? s.k
                                 : s.out;
    int rank = c->which == 0 || c->which == 3 ? 2 : 1;
    const int64_t *dims = rank == 2 ? d2 : d1;
    switch (c->what) {
      case 0:
        t[c->which] = NULL;
        break;
      case 1:
        alt = mk(dims, (uint64_t)rank, (aclDataType)c->value, data);
        break;
      case 2:
        alt = mk(d3, (uint64_t)c->value, dt, data);
        break;
      case 3: {
        int64_t dd[2] = {3, c->value};
        if (rank == 1) dd[0] = c->value;
        alt = mk(dd, (uint64_t)rank, dt, data);
        break;
      }
      case 4:
        alt = aclCreateTensor(dims, (uint64_t)rank, dt, NULL, 0, (aclFormat)c->value,
                              dims, (uint64_t)rank, data);
        break;
      case 5: {
        int64_t st[2] = {4, c->value};
        alt = aclCreateTensor(dims, (uint64_t)rank, dt, st, 0, ACL_FORMAT_ND, dims,
                              (uint64_t)rank, data);
        break;
      }
      case 6:
        alt = aclCreateTensor(dims, (uint64_t)rank, dt, NULL, c->value, ACL_FORMAT_ND,
                              dims, (uint64_t)rank, data);
        break;
      case 7:
        alt = mk(dims, (uint64_t)rank, dt, NULL);
        break;
      case 8:
        aclrtMalloc(&small, 32, ACL_MEM_MALLOC_HUGE_FIRST);
        alt = mk(dims, (uint64_t)rank, dt, small);
        break;
      case 11:
        t[1] = t[2] = NULL;
        break;
      default:
        break;
    }
    if (alt) t[c->which] = alt;
    uint64_t ws = 12345;
    aclOpExecutor *ex = (aclOpExecutor *)&ws;
    aclnnStatus st = aclnnApplyTopKTopPGetWorkspaceSize(
        t[0], t[1], t[2], t[3], c->what == 9 ? NULL : &ws, c->what == 10 ? NULL : &ex);
    TU_CHECK(st == c->want, "%s: got %d, want %d (%s)", c->name, st, c->want,
             aclGetRecentErrMsg());
    TU_CHECK(*aclGetRecentErrMsg() != 0, "%s: no message", c->name);
    if (c->what != 9 && c->what != 10)
      TU_CHECK(ex == NULL && ws == 0, "%s: outputs not cleared", c->name);
    float o[12];
    aclrtMemcpy(o, sizeof o, s.out, sizeof o, ACL_MEMCPY_DEVICE_TO_HOST);
    TU_CHECK(o[0] == 777.0f && o[11] == 777.0f, "%s: out written", c->name);
    aclDestroyTensor(alt);
    aclrtFree(small);
    free_case(&s);
  }

  /* phase 2: p outside [0, 1], workspace too small, unknown stream; nothing written */
  for (int k = 0; k < 3; k++) {
    tkp_case s;
    sample_case(&s, 0);
    if (k == 0) {
      float bad = 1.5f;
      aclrtMemcpy((char *)s.p + 4, 4, &bad, 4, ACL_MEMCPY_HOST_TO_DEVICE);
    }
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EQ(aclnnApplyTopKTopPGetWorkspaceSize(s.tl, s.tp, s.tk, s.to, &ws, &ex),
       ACLNN_SUCCESS);
    void *w = workspace_for(ws);
    aclrtStream bogus = NULL;
    if (k == 2) {
      aclrtCreateStream(&bogus);
      aclrtDestroyStream(bogus);
    }
    if (k != 1 || ws > 0) {
      aclnnStatus st =
          aclnnApplyTopKTopP(w, k == 1 ? ws - 1 : ws, ex, k == 2 ? bogus : stream);
      TU_CHECK(st == ACLNN_ERR_PARAM_INVALID, "phase 2 case %d: %d (%s)", k, st,
               aclGetRecentErrMsg());
      if (k == 0)
        TU_CHECK(strstr(aclGetRecentErrMsg(), "1.5") != NULL, "message: %s",
                 aclGetRecentErrMsg());
      float o[12];
      aclrtMemcpy(o, sizeof o, s.out, sizeof o, ACL_MEMCPY_DEVICE_TO_HOST);
      bool untouched = true;
      for (int i = 0; i < 12; i++) untouched = untouched && o[i] == 777.0f;
      TU_CHECK(untouched, "phase 2 case %d: out written", k);
      EQ(aclnnApplyTopKTopP(w, ws, ex, stream), ACLNN_ERR_INNER_NULLPTR); /* consumed */
    } else {
      aclDestroyAclOpExecutor(ex);
    }
    aclrtFree(w);
    free_case(&s);
  }
}

int main(void) {
  tu_seed(20240611);
  test_init();
  test_devices();
  test_memory();
  test_tensors();
  aclrtStream stream = NULL;
  EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  test_executor(stream);
  test_executor(NULL); /* the default stream */
  test_against_native(stream);
  test_errors(stream);
  acl_test t = {stream, NULL};
  return acl_test_end(&t, "test_aclnn_runtime");
}
