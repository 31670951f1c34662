/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnInplaceFusedCausalConv1d (+ V2) over llmk_fused_causal_conv1d: CANN's limits
 * (shared/spec/causal_conv1d.md, "What CANN rejects": 561002), then the native op.
 * initialStateMode, bias, activationMode and runMode are accepted and ignored, as in
 * CANN; a 3-D x runs without queryStartLoc (each sequence is one row of x). Prefix
 * caching (APC) is on exactly when blockIdxFirstScheduledToken is given (CANN's tiling,
 * both templates); without it blockIdxLastScheduledToken and initialStateIdx are
 * ignored: no shape check, not passed on (their dtype and format are checked, as for
 * every tensor given).
 * aclnnFusedCausalConv1d: the same inputs and checks with a separate output y, over the
 * native op's out entry; its APC switch is the one of CANN's tiling template the call
 * lands in (blockIdxLastScheduledToken given for 3-D x or maxQueryLen <= 8, else a 2-D
 * cacheIndices). */
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

/* apc_rule: what switched APC on (a->apc), for the messages. */
static aclnnStatus check(const char *op, const aclTensor *const *t, const conv_attrs *a,
                         int64_t activation_mode, int64_t run_mode, int64_t max_draft,
                         const char *apc_rule) {
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
  /* APC and the index tensors; without APC the block-index tensors are ignored */
  bool apc = a->apc;
  const aclTensor *ci = t[CI];
  if (apc) {
    for (int k = FIRST; k <= ISI; k++)
      if (!t[k]) return acl__fail(TILING, op, "APC (%s) needs %s", apc_rule, NAMES[k]);
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
  aclnnStatus st = check(op->name, t, &a, activationMode, runMode, maxDraftTokens,
                         "blockIdxFirstScheduledToken given");
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

enum { OY = NT, ONT };

static llmk_status out_plan(const llmk_tensor *const *t, const void *attrs,
                            size_t *workspace_size, llmk_plan **plan) {
  const conv_attrs *a = attrs;
  return llmk_fused_causal_conv1d_out_get_workspace_size(
      t[X], t[W], t[CS], a->x3d ? NULL : t[QSL], t[CI], t[NACC], t[NCT],
      a->apc ? t[FIRST] : NULL, a->apc ? t[LAST] : NULL, a->apc ? t[ISI] : NULL,
      NULL /* bias: ignored, as in CANN */, a->pad_slot_id,
      a->x3d ? -1 : a->max_query_len, a->residual, a->block_size, a->conv_mode,
      LLMK_ACTIVATION_NONE, t[OY], workspace_size, plan);
}

/* The twelve inputs of the in-place entry (0..11), output y (0). */
static const acl__op out_op = {"aclnnFusedCausalConv1d", NT,      1, out_plan,
                               llmk_fused_causal_conv1d, conv_map};

aclnnStatus aclnnFusedCausalConv1dGetWorkspaceSize(
    const aclTensor *x, const aclTensor *weight, aclTensor *convStates,
    const aclTensor *queryStartLoc, const aclTensor *cacheIndices,
    const aclTensor *initialStateMode, const aclTensor *bias,
    const aclTensor *numAcceptedTokens, const aclTensor *numComputedTokens,
    const aclTensor *blockIdxFirstScheduledToken,
    const aclTensor *blockIdxLastScheduledToken, const aclTensor *initialStateIdx,
    int64_t activationMode, int64_t padSlotId, int64_t runMode, int64_t maxQueryLen,
    int64_t residualConnection, int64_t blockSize, int64_t convMode, aclTensor *y,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
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
                             numComputedTokens,
                             blockIdxFirstScheduledToken,
                             blockIdxLastScheduledToken,
                             initialStateIdx,
                             y};
  for (int i = 0; i < ONT; i++)
    if (t[i] && !acl__tensor_live(t[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s is not a live aclTensor",
                       i == OY ? "y" : NAMES[i]);
  /* CANN's tiling picks its template from x's rank and maxQueryLen, and each template
   * has its own APC switch: blockIdxLastScheduledToken given (3-D x or maxQueryLen <=
   * 8), a 2-D cacheIndices (the long-sequence template). */
  bool x3d = x->view_rank == 3, bh = x3d || maxQueryLen <= 8;
  bool apc = bh ? blockIdxLastScheduledToken != NULL
                : cacheIndices && cacheIndices->view_rank == 2;
  conv_attrs a = {padSlotId, maxQueryLen, residualConnection, blockSize, convMode,
                  x3d,       apc};
  aclnnStatus st = check(op, t, &a, activationMode, runMode, 7,
                         bh ? "blockIdxLastScheduledToken given" : "cacheIndices 2-D");
  if (st) return st;
  if (y->dtype != x->dtype)
    return acl__fail(TILING, op, "y dtype %d must be x's dtype %d", (int)y->dtype,
                     (int)x->dtype);
  if (!acl__format_is_nd(y->format))
    return acl__fail(TILING, op, "y: format %d is not ND", (int)y->format);
  bool same = y->view_rank == x->view_rank;
  for (uint64_t d = 0; same && d < x->view_rank; d++)
    same = y->view_dims[d] == x->view_dims[d];
  if (!same) return acl__fail(TILING, op, "y's shape must be x's");
  if (y->strides[y->view_rank - 1] != 1)
    return acl__fail(TILING, op, "y's last stride %lld must be 1",
                     (long long)y->strides[y->view_rank - 1]);
  return acl__executor_create(&out_op, t, &a, sizeof a, workspaceSize, executor);
}

aclnnStatus aclnnFusedCausalConv1d(void *workspace, uint64_t workspaceSize,
                                   aclOpExecutor *executor, aclrtStream stream) {
  return acl__executor_run(&out_op, workspace, workspaceSize, executor, stream);
}
