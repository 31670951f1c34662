/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnGatherPaKvCache over llmk_gather_pa_kv_cache_ex, with CANN's checks for an Atlas
 * A2 in its op_api's order: NULLs (161001); an empty call a no-op; ranks and dtypes
 * (161002); its shape inference (seqLens against the batch, the mode, the outputs' ranks:
 * the op_api answers a failure there with 561103); the sizes the tiling refuses
 * (561002); then the native op's shape, format and overlap checks (161002) and, in
 * phase 2, its index checks (161002, nothing written).
 *   cacheMode "Norm": LLMK_KV_BLOCKS over the tensors as given.
 *   cacheMode "PA_NZ": LLMK_KV_NZ; keyRef [T, H*Dk] is seen as [T, 1, H*Dk] (the NZ
 *     layout only reads H*D), valueRef alike.
 * isSeqLensCumsum and seqOffsetOptional are the native op's seq_lens_cumsum and
 * seq_offset. */
#include <string.h>

#include "acl_internal.h"

/* CANN's header declares these without ACLNN_API; the library is built with hidden
 * visibility, so export them here. */
#pragma GCC visibility push(default)
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#pragma GCC visibility pop

enum { KC, VC, BT, SL, KR, VR, SO, NT };

static const char OP[] = "aclnnGatherPaKvCache";
static const char *const NAMES[NT] = {"keyCache",         "valueCache", "blockTables",
                                      "seqLens",          "keyRef",     "valueRef",
                                      "seqOffsetOptional"};

typedef struct gather_attrs {
  llmk_kv_layout layout;
  int cumsum;
} gather_attrs;

static llmk_status gather_plan(const llmk_tensor *const *t, const void *attrs,
                               size_t *workspace_size, llmk_plan **plan) {
  const gather_attrs *a = attrs;
  return llmk_gather_pa_kv_cache_ex_get_workspace_size(
      t[KC], t[VC], t[BT], t[SL], t[SO], a->cumsum, NULL, NULL, t[KR], t[VR], a->layout,
      workspace_size, plan);
}

/* Every tensor is an input of CANN's op (keyRef and valueRef are "Ref" tensors). */
static const acl__op gather_op = {
    OP, NT, 0, gather_plan, llmk_gather_pa_kv_cache, acl__map_status};

/* CANN's op_api answers a call with an empty cache or output with success and nothing
 * to do, before its shape and dtype checks. */
static const acl__op empty_op = {
    OP, NT, 0, acl__noop_plan, acl__noop_run, acl__map_status};

/* 0 when a dim is 0; a product past INT64_MAX saturates (it is only compared with 0) */
static int64_t numel(const aclTensor *t) {
  int64_t n = 1;
  for (uint64_t d = 0; d < t->view_rank; d++)
    if (t->view_dims[d] == 0) return 0;
  for (uint64_t d = 0; d < t->view_rank; d++)
    if (__builtin_mul_overflow(n, t->view_dims[d], &n)) return INT64_MAX;
  return n;
}

static bool kv_dtype_ok(aclDataType dt) {
  return dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_INT8;
}

aclnnStatus aclnnGatherPaKvCacheGetWorkspaceSize(
    const aclTensor *keyCache, const aclTensor *valueCache, const aclTensor *blockTables,
    const aclTensor *seqLens, const aclTensor *keyRef, const aclTensor *valueRef,
    const aclTensor *seqOffsetOptional, char *cacheMode, const bool isSeqLensCumsum,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
  if (!workspaceSize || !executor)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "workspaceSize or executor is NULL");
  *workspaceSize = 0;
  *executor = NULL;
  const aclTensor *in[NT] = {keyCache, valueCache, blockTables,      seqLens,
                             keyRef,   valueRef,   seqOffsetOptional};
  /* 1. NULLs (161001): every tensor but seqOffsetOptional, and cacheMode */
  for (int i = 0; i < SO; i++)
    if (!in[i]) return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "%s is NULL", NAMES[i]);
  if (!cacheMode) return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "cacheMode is NULL");
  for (int i = 0; i < NT; i++)
    if (in[i] && !acl__tensor_live(in[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s is not a live aclTensor",
                       NAMES[i]);
  /* 2. empty: success and nothing to do, before any other check (CANN's op_api) */
  if (numel(keyCache) == 0 || numel(valueCache) == 0 || numel(keyRef) == 0 ||
      numel(valueRef) == 0) {
    const aclTensor *none[NT] = {0};
    return acl__executor_create(&empty_op, none, NULL, 0, workspaceSize, executor);
  }
  /* 3. ranks, as CANN's op_api checks them (161002): caches 4-D, blockTables 2-D,
   * seqLens 1-D, keyRef and valueRef 2-D or 3-D */
  bool pa_nz = strcmp(cacheMode, "PA_NZ") == 0, norm = strcmp(cacheMode, "Norm") == 0;
  const struct {
    int i;
    uint64_t rank, alt;
  } ranks[6] = {{KC, 4, 4}, {VC, 4, 4}, {BT, 2, 2}, {SL, 1, 1}, {KR, 2, 3}, {VR, 2, 3}};
  for (int k = 0; k < 6; k++) {
    uint64_t r = in[ranks[k].i]->view_rank;
    if (r != ranks[k].rank && r != ranks[k].alt)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s has %llu dims, must have %llu%s",
                       NAMES[ranks[k].i], (unsigned long long)r,
                       (unsigned long long)ranks[k].rank,
                       ranks[k].alt != ranks[k].rank ? " or 3" : "");
  }
  /* 4. dtypes (161002): the caches and the outputs FLOAT16, BFLOAT16 or INT8 (Atlas
   * A2), all of one dtype; the index tensors INT32 */
  const int kv[4] = {KC, VC, KR, VR};
  for (int k = 0; k < 4; k++)
    if (!kv_dtype_ok(in[kv[k]]->dtype))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                       "%s dtype %d is not FLOAT16, BFLOAT16 or INT8 (Atlas A2)",
                       NAMES[kv[k]], (int)in[kv[k]]->dtype);
  for (int k = 1; k < 4; k++)
    if (in[kv[k]]->dtype != keyCache->dtype)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                       "%s dtype %d differs from keyCache dtype %d", NAMES[kv[k]],
                       (int)in[kv[k]]->dtype, (int)keyCache->dtype);
  for (int i = BT; i < NT; i++) {
    if (i == KR || i == VR || !in[i]) continue;
    if (in[i]->dtype != ACL_INT32)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s dtype %d is not INT32 (Atlas A2)",
                       NAMES[i], (int)in[i]->dtype);
  }
  /* 5. CANN's shape inference, which its op_api runs before the tiling (a failure
   * there: 561103): seqLens [B] ([B + 1] cumulative); the mode; keyRef and valueRef
   * 3-D under "Norm", 2-D under "PA_NZ" */
  int64_t B = blockTables->view_dims[0], want_sl = B + (isSeqLensCumsum ? 1 : 0);
  if (seqLens->view_dims[0] != want_sl)
    return acl__fail(ACLNN_ERR_INNER_NULLPTR, OP,
                     "seqLens.shape[0]=%lld must be %lld (blockTables.shape[0]%s)",
                     (long long)seqLens->view_dims[0], (long long)want_sl,
                     isSeqLensCumsum ? " + 1, isSeqLensCumsum" : "");
  if (!pa_nz && !norm)
    return acl__fail(ACLNN_ERR_INNER_NULLPTR, OP,
                     "cacheMode \"%s\" is not \"Norm\" or \"PA_NZ\"", cacheMode);
  for (int i = KR; i <= VR; i++)
    if (in[i]->view_rank != (pa_nz ? 2u : 3u))
      return acl__fail(ACLNN_ERR_INNER_NULLPTR, OP,
                       "%s has %llu dims, must have %d under cacheMode \"%s\"", NAMES[i],
                       (unsigned long long)in[i]->view_rank, pa_nz ? 2 : 3, cacheMode);
  /* the native op's (161002): seqOffset 1-D */
  if (seqOffsetOptional && seqOffsetOptional->view_rank != 1)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "seqOffsetOptional has %llu dims, must have 1",
                     (unsigned long long)seqOffsetOptional->view_rank);
  /* 6. the tiling (561002): blockSize, the batch, the block-table width and the token
   * sizes must be positive (numBlocks too: no empty cache) */
  int64_t bs = keyCache->view_dims[pa_nz ? 2 : 1];
  int64_t tok[2];
  for (int k = 0; k < 2; k++) {
    const aclTensor *r = in[KR + k];
    tok[k] = r->view_dims[1];
    if (norm && __builtin_mul_overflow(tok[k], r->view_dims[2], &tok[k]))
      tok[k] = INT64_MAX;
  }
  const struct {
    const char *what;
    int64_t v;
  } sizes[6] = {{"blockSize", bs},
                {"numBlocks (keyCache.shape[0])", keyCache->view_dims[0]},
                {"the batch (blockTables.shape[0])", blockTables->view_dims[0]},
                {"blockTables.shape[1]", blockTables->view_dims[1]},
                {"keyRef's token size", tok[0]},
                {"valueRef's token size", tok[1]}};
  for (int k = 0; k < 6; k++)
    if (sizes[k].v <= 0)
      return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP, "%s is %lld, must be positive",
                       sizes[k].what, (long long)sizes[k].v);
  /* 7. formats (161002): ND everywhere but the caches of "PA_NZ" (FRACTAL_NZ or ND) */
  for (int i = 0; i < NT; i++) {
    const aclTensor *t = in[i];
    if (!t) continue;
    bool nz_ok = pa_nz && (i == KC || i == VC) && t->format == ACL_FORMAT_FRACTAL_NZ;
    if (!nz_ok && !acl__format_is_nd(t->format))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s: format %d is not %s", NAMES[i],
                       (int)t->format,
                       pa_nz && (i == KC || i == VC) ? "FRACTAL_NZ or ND" : "ND");
  }
  /* 8. the views the native op sees: under "PA_NZ" keyRef [T, H*D] as [T, 1, H*D] */
  gather_attrs a = {pa_nz ? LLMK_KV_NZ : LLMK_KV_BLOCKS, isSeqLensCumsum ? 1 : 0};
  aclTensor rv[2];
  const aclTensor *t[NT] = {keyCache, valueCache, blockTables,      seqLens,
                            keyRef,   valueRef,   seqOffsetOptional};
  if (pa_nz) {
    for (int k = 0; k < 2; k++) {
      rv[k] = *in[KR + k];
      rv[k].view_rank = 3;
      rv[k].view_dims[2] = rv[k].view_dims[1];
      rv[k].strides[2] = rv[k].strides[1];
      rv[k].view_dims[1] = 1;
      rv[k].strides[1] = 0;
      t[KR + k] = &rv[k];
    }
  }
  /* the executor keeps descriptors, not these local copies */
  return acl__executor_create(&gather_op, t, &a, sizeof a, workspaceSize, executor);
}

aclnnStatus aclnnGatherPaKvCache(void *workspace, uint64_t workspaceSize,
                                 aclOpExecutor *executor, aclrtStream stream) {
  return acl__executor_run(&gather_op, workspace, workspaceSize, executor, stream);
}
