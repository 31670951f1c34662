/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnInplaceFusedCausalConv1d (+ V2) over llmk_fused_causal_conv1d: CANN's limits
 * (shared/spec/causal_conv1d.md, "What CANN rejects": 561002), then the native op.
 * initialStateMode, bias, activationMode and runMode are accepted and ignored, as in
 * CANN; a 3-D x runs without queryStartLoc (each sequence is one row of x). Prefix
 * caching (APC) is on exactly when blockIdxFirstScheduledToken is given (CANN's tiling,
 * both templates); without it blockIdxLastScheduledToken and initialStateIdx are
 * ignored: no shape check, not passed on (their dtype and format are checked, as for
 * every tensor given).
 * aclnnFusedCausalConv1d: CANN's op with a separate output y and fewer inputs, over the
 * native op's out entry; its checks (check_out) follow the tiling of its two templates,
 * picked by runMode (0: prefill, 1: decode), and share the dtype/format loop. */
#include "acl_internal.h"
#include "aclnnop/aclnn_fused_causal_conv1d.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d_v2.h"

enum { X, W, CS, QSL, CI, ISM, BIAS, NACC, NCT, FIRST, LAST, ISI, NT };

typedef struct conv_attrs {
  int64_t pad_slot_id, max_query_len, residual, block_size, conv_mode;
  bool x3d;
  bool apc; /* blockIdxFirstScheduledToken given: the three block-index tensors used */
} conv_attrs;

static llmk_status conv_plan(const llmk_tensor *const *t, const void *attrs,
                             size_t *workspace_size, llmk_plan **plan) {
  const conv_attrs *a = attrs;
  return llmk_fused_causal_conv1d_get_workspace_size(
      t[X], t[W], t[CS], a->x3d ? NULL : t[QSL], t[CI], t[NACC], t[NCT], t[FIRST],
      a->apc ? t[LAST] : NULL, a->apc ? t[ISI] : NULL,
      NULL /* bias: ignored, as in CANN */, a->pad_slot_id,
      a->x3d ? -1 : a->max_query_len, a->residual, a->block_size, a->conv_mode,
      LLMK_ACTIVATION_NONE, workspace_size, plan);
}

/* CANN reports argument errors from its tiling stage (561002); index values the
 * native op finds at phase 2 are invalid parameters (161002). */
static aclnnStatus conv_map(llmk_status st) {
  switch (st) {
    case LLMK_ERROR_INVALID_DTYPE:
    case LLMK_ERROR_INVALID_SHAPE:
    case LLMK_ERROR_INVALID_ATTRIBUTE:
      return ACLNN_ERR_INNER_TILING_ERROR;
    default:
      return acl__map_status(st);
  }
}

/* All twelve tensors are inputs of CANN's op (x and convStates are "Ref" tensors). */
static const acl__op conv_op = {"aclnnInplaceFusedCausalConv1d", NT,      0, conv_plan,
                                llmk_fused_causal_conv1d,        conv_map};
static const acl__op conv_op_v2 = {
    "aclnnInplaceFusedCausalConv1dV2", NT,      0, conv_plan,
    llmk_fused_causal_conv1d,          conv_map};

static const char *const NAMES[NT] = {"x",
                                      "weight",
                                      "convStates",
                                      "queryStartLoc",
                                      "cacheIndices",
                                      "initialStateMode",
                                      "bias",
                                      "numAcceptedTokens",
                                      "numComputedTokens",
                                      "blockIdxFirstScheduledToken",
                                      "blockIdxLastScheduledToken",
                                      "initialStateIdx"};

#define TILING ACLNN_ERR_INNER_TILING_ERROR

static aclnnStatus check(const char *op, const aclTensor *const *t, const conv_attrs *a,
                         int64_t activation_mode, int64_t run_mode, int64_t max_draft) {
  /* dtypes and formats */
  aclDataType dt = t[X]->dtype;
  if (dt != ACL_FLOAT16 && dt != ACL_BF16)
    return acl__fail(TILING, op, "x dtype %d is not FLOAT16 or BFLOAT16", (int)dt);
  for (int i = 0; i < NT; i++) {
    if (!t[i]) continue;
    aclDataType want = (i == X || i == W || i == CS || i == BIAS) ? dt : ACL_INT32;
    if (t[i]->dtype != want)
      return acl__fail(TILING, op, "%s dtype %d must be %d (%s)", NAMES[i],
                       (int)t[i]->dtype, (int)want,
                       want == ACL_INT32 ? "INT32" : "x's dtype");
    if (!acl__format_is_nd(t[i]->format))
      return acl__fail(TILING, op, "%s: format %d is not ND", NAMES[i],
                       (int)t[i]->format);
  }
  /* attributes */
  if (activation_mode < 0 || activation_mode > 2)
    return acl__fail(TILING, op, "activationMode=%lld must be 0, 1 or 2",
                     (long long)activation_mode);
  if (run_mode != 0 && run_mode != 1)
    return acl__fail(TILING, op, "runMode=%lld must be 0 or 1", (long long)run_mode);
  if (a->residual != 0 && a->residual != 1)
    return acl__fail(TILING, op, "residualConnection=%lld must be 0 or 1",
                     (long long)a->residual);
  if (a->block_size != 0 && a->block_size < 2)
    return acl__fail(TILING, op, "blockSize=%lld must be 0 or >= 2",
                     (long long)a->block_size);
  if (a->conv_mode != 0 && a->conv_mode != 1)
    return acl__fail(TILING, op, "convMode=%lld must be 0 or 1", (long long)a->conv_mode);
  if (max_draft < 0)
    return acl__fail(TILING, op, "maxDraftTokens=%lld is negative", (long long)max_draft);
  /* x, weight, convStates */
  const aclTensor *x = t[X], *w = t[W], *cs = t[CS];
  if (x->view_rank != 2 && x->view_rank != 3)
    return acl__fail(TILING, op, "x has %llu dims, must have 2 or 3",
                     (unsigned long long)x->view_rank);
  for (uint64_t d = 0; d < x->view_rank; d++)
    if (x->view_dims[d] <= 0)
      return acl__fail(TILING, op, "x.shape[%llu]=%lld: empty tensors are not supported",
                       (unsigned long long)d, (long long)x->view_dims[d]);
  int64_t dim = x->view_dims[x->view_rank - 1];
  if (dim < 64 || dim > 16384 || dim % 16)
    return acl__fail(TILING, op, "dim=%lld must be in [64, 16384] and a multiple of 16",
                     (long long)dim);
  if (x->strides[x->view_rank - 1] != 1)
    return acl__fail(TILING, op, "x's last stride %lld must be 1",
                     (long long)x->strides[x->view_rank - 1]);
  if (x->strides[x->view_rank - 2] < 1)
    return acl__fail(TILING, op, "x's token stride %lld must be >= 1",
                     (long long)x->strides[x->view_rank - 2]);
  if (w->view_rank != 2 || w->view_dims[0] != 3 || w->view_dims[1] != dim)
    return acl__fail(TILING, op, "weight must be [3, dim=%lld] (K = 3)", (long long)dim);
  if (cs->view_rank != 3 || cs->view_dims[2] != dim)
    return acl__fail(TILING, op, "convStates must be [lines, C, dim=%lld]",
                     (long long)dim);
  if (cs->strides[2] != 1)
    return acl__fail(TILING, op, "convStates' dim-2 stride %lld must be 1",
                     (long long)cs->strides[2]);
  int64_t C = cs->view_dims[1];
  if (C < 2)
    return acl__fail(TILING, op, "convStates.shape[1]=C=%lld must be >= K-1=2",
                     (long long)C);
  /* batch, sequences */
  int64_t batch;
  if (x->view_rank == 3) {
    batch = x->view_dims[0];
    int64_t S = x->view_dims[1];
    if (S - 1 > max_draft)
      return acl__fail(TILING, op, "x [batch, m+1, dim]: m=%lld must be in [0, %lld]",
                       (long long)(S - 1), (long long)max_draft);
    if (C < S + 1)
      return acl__fail(TILING, op,
                       "convStates.shape[1]=C=%lld must be >= K+S-2=%lld for %lld "
                       "tokens per sequence",
                       (long long)C, (long long)(S + 1), (long long)S);
    if (a->max_query_len <= 0 && a->max_query_len != -1)
      return acl__fail(TILING, op, "maxQueryLen=%lld must be -1 or >= 1",
                       (long long)a->max_query_len);
  } else {
    const aclTensor *q = t[QSL];
    if (!q) return acl__fail(TILING, op, "a 2-D x needs queryStartLoc");
    if (q->view_rank != 1 || q->view_dims[0] < 2)
      return acl__fail(TILING, op, "queryStartLoc must be 1-D with at least 2 entries");
    batch = q->view_dims[0] - 1;
    int64_t T = x->view_dims[0], mql = a->max_query_len;
    if (mql <= 0)
      return acl__fail(TILING, op, "maxQueryLen=%lld must be >= 1 for a 2-D x",
                       (long long)mql);
    if (mql <= 8 && T > batch * mql)
      return acl__fail(TILING, op,
                       "decode path (maxQueryLen=%lld <= 8): cuSeqLen=%lld exceeds "
                       "batch*maxQueryLen=%lld",
                       (long long)mql, (long long)T, (long long)(batch * mql));
    if (mql > 8 && T > 1048576)
      return acl__fail(TILING, op, "cuSeqLen=%lld exceeds 1048576", (long long)T);
  }
  if (batch < 1 || batch > 256)
    return acl__fail(TILING, op, "batch=%lld must be in [1, 256]", (long long)batch);
  /* APC and the index tensors: APC is on exactly when blockIdxFirstScheduledToken is
   * given; without it the other two block-index tensors are ignored */
  bool apc = a->apc;
  const aclTensor *ci = t[CI];
  if (apc) {
    if (!t[LAST] || !t[ISI])
      return acl__fail(TILING, op, "APC (blockIdxFirstScheduledToken given) needs %s",
                       !t[LAST] ? "blockIdxLastScheduledToken" : "initialStateIdx");
    if (!ci || ci->view_rank != 2 || ci->view_dims[0] != batch)
      return acl__fail(TILING, op,
                       "APC needs a 2-D cacheIndices [batch=%lld, maxNumBlocks]",
                       (long long)batch);
    if (ci->view_dims[1] < 1 || ci->view_dims[1] > 1024)
      return acl__fail(TILING, op, "maxNumBlocks=%lld must be in [1, 1024]",
                       (long long)ci->view_dims[1]);
    if (a->block_size == 0) return acl__fail(TILING, op, "APC needs blockSize >= 2");
    if (!t[NCT]) return acl__fail(TILING, op, "APC needs numComputedTokens");
  } else if (ci && (ci->view_rank != 1 || ci->view_dims[0] != batch)) {
    return acl__fail(TILING, op, "cacheIndices must be [batch=%lld] without APC",
                     (long long)batch);
  }
  if (a->conv_mode == 1 && !t[NCT])
    return acl__fail(TILING, op, "convMode 1 needs numComputedTokens");
  const int per_batch[] = {NACC, NCT, FIRST, LAST, ISI};
  for (int k = 0; k < (apc ? 5 : 3); k++) {
    const aclTensor *v = t[per_batch[k]];
    if (v && (v->view_rank != 1 || v->view_dims[0] != batch))
      return acl__fail(TILING, op, "%s must be [batch=%lld]", NAMES[per_batch[k]],
                       (long long)batch);
  }
  return ACLNN_SUCCESS;
}

static aclnnStatus phase1(const acl__op *op, aclTensor *x, const aclTensor *weight,
                          aclTensor *convStates, const aclTensor *queryStartLoc,
                          const aclTensor *cacheIndices,
                          const aclTensor *initialStateMode, const aclTensor *bias,
                          const aclTensor *numAcceptedTokens,
                          const aclTensor *numComputedTokens, const aclTensor *first,
                          const aclTensor *last, const aclTensor *initialStateIdx,
                          int64_t activationMode, int64_t padSlotId, int64_t runMode,
                          int64_t maxQueryLen, int64_t residualConnection,
                          int64_t blockSize, int64_t convMode, int64_t maxDraftTokens,
                          uint64_t *workspaceSize, aclOpExecutor **executor) {
  if (!workspaceSize || !executor)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, op->name,
                     "workspaceSize or executor is NULL");
  *workspaceSize = 0;
  *executor = NULL;
  if (!x || !weight || !convStates)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, op->name, "%s is NULL",
                     !x        ? "x"
                     : !weight ? "weight"
                               : "convStates");
  const aclTensor *t[NT] = {x,
                            weight,
                            convStates,
                            queryStartLoc,
                            cacheIndices,
                            initialStateMode,
                            bias,
                            numAcceptedTokens,
                            numComputedTokens,
                            first,
                            last,
                            initialStateIdx};
  for (int i = 0; i < NT; i++)
    if (t[i] && !acl__tensor_live(t[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op->name, "%s is not a live aclTensor",
                       NAMES[i]);
  conv_attrs a = {padSlotId, maxQueryLen,       residualConnection, blockSize,
                  convMode,  x->view_rank == 3, first != NULL};
  aclnnStatus st = check(op->name, t, &a, activationMode, runMode, maxDraftTokens);
  if (st) return st;
  return acl__executor_create(op, t, &a, sizeof a, workspaceSize, executor);
}

aclnnStatus aclnnInplaceFusedCausalConv1dGetWorkspaceSize(
    aclTensor *x, const aclTensor *weight, aclTensor *convStates,
    const aclTensor *queryStartLoc, const aclTensor *cacheIndices,
    const aclTensor *initialStateMode, const aclTensor *bias,
    const aclTensor *numAcceptedTokens, const aclTensor *numComputedTokens,
    const aclTensor *blockIdxFirstScheduledToken,
    const aclTensor *blockIdxLastScheduledToken, const aclTensor *initialStateIdx,
    int64_t activationMode, int64_t padSlotId, int64_t runMode, int64_t maxQueryLen,
    int64_t residualConnection, int64_t blockSize, int64_t convMode,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
  return phase1(&conv_op, x, weight, convStates, queryStartLoc, cacheIndices,
                initialStateMode, bias, numAcceptedTokens, numComputedTokens,
                blockIdxFirstScheduledToken, blockIdxLastScheduledToken, initialStateIdx,
                activationMode, padSlotId, runMode, maxQueryLen, residualConnection,
                blockSize, convMode, 7, workspaceSize, executor);
}

aclnnStatus aclnnInplaceFusedCausalConv1d(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream) {
  return acl__executor_run(&conv_op, workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceFusedCausalConv1dV2GetWorkspaceSize(
    aclTensor *x, const aclTensor *weight, aclTensor *convStates,
    const aclTensor *queryStartLoc, const aclTensor *cacheIndices,
    const aclTensor *initialStateMode, const aclTensor *bias,
    const aclTensor *numAcceptedTokens, const aclTensor *numComputedTokens,
    const aclTensor *blockIdxFirstScheduledToken,
    const aclTensor *blockIdxLastScheduledToken, const aclTensor *initialStateIdx,
    int64_t activationMode, int64_t padSlotId, int64_t runMode, int64_t maxQueryLen,
    int64_t residualConnection, int64_t blockSize, int64_t convMode,
    int64_t maxDraftTokens, uint64_t *workspaceSize, aclOpExecutor **executor) {
  return phase1(&conv_op_v2, x, weight, convStates, queryStartLoc, cacheIndices,
                initialStateMode, bias, numAcceptedTokens, numComputedTokens,
                blockIdxFirstScheduledToken, blockIdxLastScheduledToken, initialStateIdx,
                activationMode, padSlotId, runMode, maxQueryLen, residualConnection,
                blockSize, convMode, maxDraftTokens, workspaceSize, executor);
}

aclnnStatus aclnnInplaceFusedCausalConv1dV2(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream) {
  return acl__executor_run(&conv_op_v2, workspace, workspaceSize, executor, stream);
}

/* ------------------------------------------------ aclnnFusedCausalConv1d (with y) */

enum { OX, OW, OCS, OQSL, OCI, OISM, OBIAS, ONACC, OY, ONT };

typedef struct out_attrs {
  int64_t pad_slot_id, residual, max_query_len, run_mode;
  bool x3d;
} out_attrs;

static llmk_status out_plan(const llmk_tensor *const *t, const void *attrs,
                            size_t *workspace_size, llmk_plan **plan) {
  const out_attrs *a = attrs;
  /* runMode 0 has no speculative tokens (CANN: numAcceptedTokens has no effect) */
  return llmk_fused_causal_conv1d_out_get_workspace_size(
      t[OX], t[OW], t[OCS], a->x3d ? NULL : t[OQSL], t[OCI],
      a->run_mode == 1 ? t[ONACC] : NULL, NULL, NULL, NULL, NULL,
      NULL /* bias: ignored, as in CANN */, a->pad_slot_id, a->max_query_len, a->residual,
      0, 0, LLMK_ACTIVATION_NONE, t[OY], workspace_size, plan);
}

/* Inputs x .. numAcceptedTokens (0..7), output y (0). */
static const acl__op out_op = {"aclnnFusedCausalConv1d", ONT - 1, 1, out_plan,
                               llmk_fused_causal_conv1d, conv_map};

static const char *const ONAMES[ONT] = {"x",
                                        "weight",
                                        "convStates",
                                        "queryStartLoc",
                                        "cacheIndices",
                                        "initialStateMode",
                                        "bias",
                                        "numAcceptedTokens",
                                        "y"};

/* The tokens per sequence the decode template (runMode 1) holds: m + 1 <= 6. */
#define DECODE_MAX_TOKENS 6

static aclnnStatus check_out(const char *op, const aclTensor *const *t, out_attrs *a,
                             int64_t activation_mode) {
  aclDataType dt = t[OX]->dtype;
  if (dt != ACL_FLOAT16 && dt != ACL_BF16)
    return acl__fail(TILING, op, "x dtype %d is not FLOAT16 or BFLOAT16", (int)dt);
  for (int i = 0; i < ONT; i++) {
    if (!t[i]) continue;
    bool fl = i == OX || i == OW || i == OCS || i == OBIAS || i == OY;
    aclDataType want = fl ? dt : ACL_INT32;
    if (t[i]->dtype != want)
      return acl__fail(TILING, op, "%s dtype %d must be %d (%s)", ONAMES[i],
                       (int)t[i]->dtype, (int)want, fl ? "x's dtype" : "INT32");
    if (!acl__format_is_nd(t[i]->format))
      return acl__fail(TILING, op, "%s: format %d is not ND", ONAMES[i],
                       (int)t[i]->format);
  }
  if (activation_mode < 0 || activation_mode > 2)
    return acl__fail(TILING, op, "activationMode=%lld must be 0, 1 or 2",
                     (long long)activation_mode);
  if (a->run_mode != 0 && a->run_mode != 1)
    return acl__fail(TILING, op, "runMode=%lld must be 0 or 1", (long long)a->run_mode);
  if (a->residual != 0 && a->residual != 1)
    return acl__fail(TILING, op, "residualConnection=%lld must be 0 or 1",
                     (long long)a->residual);
  const aclTensor *x = t[OX], *w = t[OW], *cs = t[OCS], *y = t[OY];
  bool prefill = a->run_mode == 0;
  if (x->view_rank != 2 && (prefill || x->view_rank != 3))
    return acl__fail(TILING, op, "x has %llu dims, must have %s",
                     (unsigned long long)x->view_rank,
                     prefill ? "2 with runMode 0" : "2 or 3");
  for (uint64_t d = 0; d < x->view_rank; d++)
    if (x->view_dims[d] <= 0)
      return acl__fail(TILING, op, "x.shape[%llu]=%lld: empty tensors are not supported",
                       (unsigned long long)d, (long long)x->view_dims[d]);
  int64_t dim = x->view_dims[x->view_rank - 1];
  if (dim < 128 || dim > 16384 || dim % 128)
    return acl__fail(TILING, op, "dim=%lld must be in [128, 16384] and a multiple of 128",
                     (long long)dim);
  if (x->strides[x->view_rank - 1] != 1)
    return acl__fail(TILING, op, "x's last stride %lld must be 1",
                     (long long)x->strides[x->view_rank - 1]);
  if (x->strides[x->view_rank - 2] < 1)
    return acl__fail(TILING, op, "x's token stride %lld must be >= 1",
                     (long long)x->strides[x->view_rank - 2]);
  if (w->view_rank != 2 || w->view_dims[0] != 3 || w->view_dims[1] != dim)
    return acl__fail(TILING, op, "weight must be [3, dim=%lld] (K = 3)", (long long)dim);
  if (cs->view_rank != 3 || cs->view_dims[2] != dim)
    return acl__fail(TILING, op, "convStates must be [lines, C, dim=%lld]",
                     (long long)dim);
  if (cs->strides[2] != 1)
    return acl__fail(TILING, op, "convStates' dim-2 stride %lld must be 1",
                     (long long)cs->strides[2]);
  int64_t C = cs->view_dims[1];
  if (prefill ? C != 2 : C < 2)
    return acl__fail(TILING, op, "convStates.shape[1]=C=%lld must be %s K-1=2",
                     (long long)C, prefill ? "(runMode 0)" : ">=");
  bool same = y->view_rank == x->view_rank;
  for (uint64_t d = 0; same && d < x->view_rank; d++)
    same = y->view_dims[d] == x->view_dims[d];
  if (!same) return acl__fail(TILING, op, "y's shape must be x's");
  int64_t batch;
  a->x3d = x->view_rank == 3;
  a->max_query_len = -1;
  if (a->x3d) {
    batch = x->view_dims[0];
    int64_t S = x->view_dims[1];
    if (S > DECODE_MAX_TOKENS)
      return acl__fail(TILING, op, "x [batch, m+1, dim]: m=%lld must be in [0, %d]",
                       (long long)(S - 1), DECODE_MAX_TOKENS - 1);
    if (C < S + 1)
      return acl__fail(TILING, op,
                       "convStates.shape[1]=C=%lld must be >= K+S-2=%lld for %lld "
                       "tokens per sequence",
                       (long long)C, (long long)(S + 1), (long long)S);
  } else {
    const aclTensor *q = t[OQSL];
    if (!q) return acl__fail(TILING, op, "a 2-D x needs queryStartLoc");
    if (q->view_rank != 1 || q->view_dims[0] < 2)
      return acl__fail(TILING, op, "queryStartLoc must be 1-D with at least 2 entries");
    batch = q->view_dims[0] - 1;
    int64_t T = x->view_dims[0];
    if (prefill && T > 65536)
      return acl__fail(TILING, op, "cuSeqLen=%lld must be in [1, 65536] (runMode 0)",
                       (long long)T);
    if (!prefill) {
      if (T > batch * DECODE_MAX_TOKENS)
        return acl__fail(TILING, op,
                         "cuSeqLen=%lld exceeds batch*%d=%lld (runMode 1: at most %d "
                         "tokens per sequence)",
                         (long long)T, DECODE_MAX_TOKENS,
                         (long long)(batch * DECODE_MAX_TOKENS), DECODE_MAX_TOKENS);
      a->max_query_len = DECODE_MAX_TOKENS;
    }
  }
  if (batch < 1 || batch > 256)
    return acl__fail(TILING, op, "batch=%lld must be in [1, 256]", (long long)batch);
  const aclTensor *ci = t[OCI];
  if (prefill && !ci) return acl__fail(TILING, op, "runMode 0 needs cacheIndices");
  if (ci && (ci->view_rank != 1 || ci->view_dims[0] != batch))
    return acl__fail(TILING, op, "cacheIndices must be [batch=%lld]", (long long)batch);
  const aclTensor *na = t[ONACC];
  if (!prefill && na && (na->view_rank != 1 || na->view_dims[0] != batch))
    return acl__fail(TILING, op, "numAcceptedTokens must be [batch=%lld]",
                     (long long)batch);
  return ACLNN_SUCCESS;
}

aclnnStatus aclnnFusedCausalConv1dGetWorkspaceSize(
    const aclTensor *x, const aclTensor *weight, aclTensor *convStates,
    const aclTensor *queryStartLoc, const aclTensor *cacheIndices,
    const aclTensor *initialStateMode, const aclTensor *bias,
    const aclTensor *numAcceptedTokens, int64_t activationMode, int64_t padSlotId,
    int64_t runMode, int64_t residualConnection, aclTensor *y, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  const char *op = out_op.name;
  if (!workspaceSize || !executor)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, op, "workspaceSize or executor is NULL");
  *workspaceSize = 0;
  *executor = NULL;
  if (!x || !weight || !convStates || !y)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, op, "%s is NULL",
                     !x        ? "x"
                     : !weight ? "weight"
                     : !y      ? "y"
                               : "convStates");
  const aclTensor *t[ONT] = {x,
                             weight,
                             convStates,
                             queryStartLoc,
                             cacheIndices,
                             initialStateMode,
                             bias,
                             numAcceptedTokens,
                             y};
  for (int i = 0; i < ONT; i++)
    if (t[i] && !acl__tensor_live(t[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s is not a live aclTensor",
                       ONAMES[i]);
  out_attrs a = {padSlotId, residualConnection, -1, runMode, false};
  aclnnStatus st = check_out(op, t, &a, activationMode);
  if (st) return st;
  return acl__executor_create(&out_op, t, &a, sizeof a, workspaceSize, executor);
}

aclnnStatus aclnnFusedCausalConv1d(void *workspace, uint64_t workspaceSize,
                                   aclOpExecutor *executor, aclrtStream stream) {
  return acl__executor_run(&out_op, workspace, workspaceSize, executor, stream);
}
