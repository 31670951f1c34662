/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnTopKTopPSampleV2 over llmk_sample_top_k_top_p_ex2, with CANN's checks in its
 * order: NULLs (161001); dtypes and formats, as its generated op_api takes them from the
 * op definition (161002); the shapes and the q / isNeedSampleResult rule of its tiling
 * (561002), each output's shape only when the attributes say it is written; then the
 * native op's stride, bounds and overlap checks (161002). */
#include <math.h>

#include "acl_internal.h"
#include "aclnnop/aclnn_top_k_top_p_sample_v2.h"

enum { LG, TK, TP, Q, MP, IDX, SEL, LIDX, LSM, NT };

static const char OP[] = "aclnnTopKTopPSampleV2";
static const char *const NAMES[NT] = {"logits",
                                      "topK",
                                      "topP",
                                      "q",
                                      "minPs",
                                      "logitsSelectIdx",
                                      "logitsTopKPSelect",
                                      "logitsIdx",
                                      "logitsSortMasked"};

enum { TKPS2_K_MAX = 1024, TKPS2_V_MAX = 1 << 20 };

typedef struct tkps2_attrs {
  double eps;
  int64_t k_max;
  int need_logits, input_is_logits, sample_result;
} tkps2_attrs;

static llmk_status tkps2_plan(const llmk_tensor *const *t, const void *attrs,
                              size_t *workspace_size, llmk_plan **plan) {
  const tkps2_attrs *a = attrs;
  llmk_sample_ex2_options o = LLMK_SAMPLE_EX2_OPTIONS_INIT;
  o.eps = a->eps;
  o.k_max = a->k_max;
  o.input_is_logits = a->input_is_logits;
  o.fill = a->input_is_logits ? -INFINITY : 0.0f;
  bool sr = a->sample_result != 0;
  return llmk_sample_top_k_top_p_ex2_get_workspace_size(
      t[LG], t[TP], t[TK], t[MP], t[Q], &o, sr ? NULL : t[IDX],
      a->need_logits ? t[SEL] : NULL, sr ? t[LSM] : NULL, sr ? t[LIDX] : NULL,
      workspace_size, plan);
}

static const acl__op tkps2_op = {
    OP, 5, 4, tkps2_plan, llmk_apply_top_k_top_p, acl__map_status};

static aclnnStatus same_shape(const aclTensor *t, const aclTensor *ref, int i, int r) {
  bool same = t->view_rank == ref->view_rank;
  for (uint64_t d = 0; same && d < t->view_rank; d++)
    same = t->view_dims[d] == ref->view_dims[d];
  if (same) return ACLNN_SUCCESS;
  return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                   "%s shape (%llu dims, last %lld) differs from %s's (%llu dims, last "
                   "%lld)",
                   NAMES[i], (unsigned long long)t->view_rank,
                   (long long)(t->view_rank ? t->view_dims[t->view_rank - 1] : 0),
                   NAMES[r], (unsigned long long)ref->view_rank,
                   (long long)(ref->view_rank ? ref->view_dims[ref->view_rank - 1] : 0));
}

/* CANN's tiling rounds ksMax up to a multiple of 8 and caps it at 1024. */
static int64_t k_cap(int64_t ks_max) {
  if (ks_max <= 0) return 0;
  if (ks_max >= TKPS2_K_MAX) return TKPS2_K_MAX;
  return (ks_max + 7) / 8 * 8;
}

aclnnStatus aclnnTopKTopPSampleV2GetWorkspaceSize(
    const aclTensor *logits, const aclTensor *topK, const aclTensor *topP,
    const aclTensor *q, const aclTensor *minPs, double eps, bool isNeedLogits,
    int64_t topKGuess, int64_t ksMax, bool inputIsLogits, bool isNeedSampleResult,
    const aclTensor *logitsSelectIdx, const aclTensor *logitsTopKPSelect,
    const aclTensor *logitsIdx, const aclTensor *logitsSortMasked,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
  (void)topKGuess; /* a search bound of CANN's kernel: results do not depend on it */
  if (!workspaceSize || !executor)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "workspaceSize or executor is NULL");
  *workspaceSize = 0;
  *executor = NULL;
  const aclTensor *t[NT] = {logits,
                            topK,
                            topP,
                            q,
                            minPs,
                            logitsSelectIdx,
                            logitsTopKPSelect,
                            logitsIdx,
                            logitsSortMasked};
  /* 1. NULLs (161001): all but q and minPs */
  for (int i = 0; i < NT; i++)
    if (!t[i] && i != Q && i != MP)
      return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "%s is NULL", NAMES[i]);
  for (int i = 0; i < NT; i++)
    if (t[i] && !acl__tensor_live(t[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s is not a live aclTensor",
                       NAMES[i]);
  /* 2. dtypes (161002): the op definition's triples (FLOAT16, BFLOAT16 or FLOAT logits
   * with topP and minPs of the same dtype), INT32 topK, FLOAT q, INT64 / FLOAT outputs */
  aclDataType dt = logits->dtype;
  if (dt != ACL_FLOAT16 && dt != ACL_BF16 && dt != ACL_FLOAT)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "logits dtype %d is not FLOAT16, BFLOAT16 or FLOAT", (int)dt);
  for (int i = TP; i <= MP; i += MP - TP)
    if (t[i] && t[i]->dtype != dt)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                       "%s dtype %d differs from logits dtype %d", NAMES[i],
                       (int)t[i]->dtype, (int)dt);
  const struct {
    int i;
    aclDataType dt;
    const char *name;
  } fixed[6] = {{TK, ACL_INT32, "INT32"},   {Q, ACL_FLOAT, "FLOAT"},
                {IDX, ACL_INT64, "INT64"},  {SEL, ACL_FLOAT, "FLOAT"},
                {LIDX, ACL_INT64, "INT64"}, {LSM, ACL_FLOAT, "FLOAT"}};
  for (int k = 0; k < 6; k++) {
    const aclTensor *x = t[fixed[k].i];
    if (x && x->dtype != fixed[k].dt)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s dtype %d is not %s",
                       NAMES[fixed[k].i], (int)x->dtype, fixed[k].name);
  }
  for (int i = 0; i < NT; i++)
    if (t[i] && !acl__format_is_nd(t[i]->format))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s: format %d is not ND", NAMES[i],
                       (int)t[i]->format);
  /* 3. the tiling (561002): input shapes, q against isNeedSampleResult, then the shapes
   * of the outputs the attributes say are written */
  if (logits->view_rank != 2)
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "logits has %llu dims, must have 2",
                     (unsigned long long)logits->view_rank);
  int64_t B = logits->view_dims[0], V = logits->view_dims[1];
  if (B <= 0 || V <= 0 || V > TKPS2_V_MAX)
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "logits shape [%lld, %lld]: B must be positive and V in [1, %d]",
                     (long long)B, (long long)V, TKPS2_V_MAX);
  for (int i = TK; i <= MP; i++) {
    if (!t[i] || i == Q) continue;
    if (t[i]->view_rank != 1 || t[i]->view_dims[0] != B)
      return acl__fail(
          ACLNN_ERR_INNER_TILING_ERROR, OP, "%s (%llu dims, dim 0 %lld) must be [%lld]",
          NAMES[i], (unsigned long long)t[i]->view_rank,
          (long long)(t[i]->view_rank ? t[i]->view_dims[0] : 0), (long long)B);
  }
  if (q && isNeedSampleResult)
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "q must be NULL when isNeedSampleResult is true");
  aclnnStatus st = q ? same_shape(q, logits, Q, LG) : ACLNN_SUCCESS;
  if (!st && isNeedLogits) st = same_shape(logitsTopKPSelect, logits, SEL, LG);
  if (!st && !isNeedSampleResult) st = same_shape(logitsSelectIdx, topK, IDX, TK);
  if (!st && isNeedSampleResult) st = same_shape(logitsIdx, logits, LIDX, LG);
  if (!st && isNeedSampleResult) st = same_shape(logitsSortMasked, logits, LSM, LG);
  if (st) return st;
  /* 4. strides, offsets, bounds, overlaps; the native phase 1 */
  tkps2_attrs a = {eps, k_cap(ksMax), isNeedLogits ? 1 : 0, inputIsLogits ? 1 : 0,
                   isNeedSampleResult ? 1 : 0};
  return acl__executor_create(&tkps2_op, t, &a, sizeof a, workspaceSize, executor);
}

aclnnStatus aclnnTopKTopPSampleV2(void *workspace, uint64_t workspaceSize,
                                  aclOpExecutor *executor, aclrtStream stream) {
  return acl__executor_run(&tkps2_op, workspace, workspaceSize, executor, stream);
}
