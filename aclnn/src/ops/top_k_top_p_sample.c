/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnTopKTopPSample over llmk_sample_top_k_top_p_ex, with CANN's checks in its order:
 * NULLs (161001); dtypes and formats, as its generated op_api takes them from the op
 * definition (161002); the shapes its tiling refuses (561002); then the native op's
 * stride, bounds and overlap checks (161002). */
#include <math.h>

#include "acl_internal.h"
#include "aclnnop/aclnn_top_k_top_p_sample.h"

enum { LG, TK, TP, Q, IDX, SEL, NT };

static const char OP[] = "aclnnTopKTopPSample";
static const char *const NAMES[NT] = {
    "logits", "topK", "topP", "q", "logitsSelectIdx", "logitsTopKPSelect"};

/* CANN's kernel: top-k for 1 <= k <= min(V, 1024) */
enum { TKPS_K_MAX = 1024, TKPS_V_MAX = 1 << 20 };

typedef struct tkps_attrs {
  double eps;
  int need_logits;
} tkps_attrs;

static llmk_status tkps_plan(const llmk_tensor *const *t, const void *attrs,
                             size_t *workspace_size, llmk_plan **plan) {
  const tkps_attrs *a = attrs;
  llmk_sample_ex_options o = {.eps = a->eps,
                              .k_max = TKPS_K_MAX,
                              .q_by_rank = 1,
                              .resoftmax_top_p = 1,
                              .fill = -INFINITY};
  return llmk_sample_top_k_top_p_ex_get_workspace_size(
      t[LG], t[TP], t[TK], t[Q], &o, t[IDX], a->need_logits ? t[SEL] : NULL,
      workspace_size, plan);
}

static const acl__op tkps_op = {
    OP, 4, 2, tkps_plan, llmk_apply_top_k_top_p, acl__map_status};

static aclnnStatus same_shape(const aclTensor *t, const aclTensor *ref, int i, int r) {
  bool same = t->view_rank == ref->view_rank;
  for (uint64_t d = 0; same && d < t->view_rank; d++)
    same = t->view_dims[d] == ref->view_dims[d];
  if (same) return ACLNN_SUCCESS;
  return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                   "%s shape (%llu dims, dim 0 %lld) differs from %s's (%llu dims, "
                   "dim 0 %lld)",
                   NAMES[i], (unsigned long long)t->view_rank,
                   (long long)(t->view_rank ? t->view_dims[0] : 0), NAMES[r],
                   (unsigned long long)ref->view_rank,
                   (long long)(ref->view_rank ? ref->view_dims[0] : 0));
}

aclnnStatus aclnnTopKTopPSampleGetWorkspaceSize(
    const aclTensor *logits, const aclTensor *topK, const aclTensor *topP,
    const aclTensor *q, double eps, bool isNeedLogits, int64_t topKGuess,
    const aclTensor *logitsSelectIdx, const aclTensor *logitsTopKPSelect,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
  (void)topKGuess; /* a search bound of CANN's kernel: results do not depend on it */
  if (!workspaceSize || !executor)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "workspaceSize or executor is NULL");
  *workspaceSize = 0;
  *executor = NULL;
  const aclTensor *t[NT] = {logits, topK, topP, q, logitsSelectIdx, logitsTopKPSelect};
  /* 1. NULLs (161001): all but q */
  for (int i = 0; i < NT; i++)
    if (!t[i] && i != Q)
      return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "%s is NULL", NAMES[i]);
  for (int i = 0; i < NT; i++)
    if (t[i] && !acl__tensor_live(t[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s is not a live aclTensor",
                       NAMES[i]);
  /* 2. dtypes (161002): the op definition's pairs (FLOAT16 or BFLOAT16 logits with topP
   * of the same dtype), INT32 topK, FLOAT q, INT64 and FLOAT outputs */
  aclDataType dt = logits->dtype;
  if (dt != ACL_FLOAT16 && dt != ACL_BF16)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "logits dtype %d is not FLOAT16 or BFLOAT16", (int)dt);
  if (topP->dtype != dt)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "topP dtype %d differs from logits dtype %d", (int)topP->dtype,
                     (int)dt);
  const struct {
    int i;
    aclDataType dt;
    const char *name;
  } fixed[4] = {{TK, ACL_INT32, "INT32"},
                {Q, ACL_FLOAT, "FLOAT"},
                {IDX, ACL_INT64, "INT64"},
                {SEL, ACL_FLOAT, "FLOAT"}};
  for (int k = 0; k < 4; k++) {
    const aclTensor *x = t[fixed[k].i];
    if (x && x->dtype != fixed[k].dt)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s dtype %d is not %s",
                       NAMES[fixed[k].i], (int)x->dtype, fixed[k].name);
  }
  for (int i = 0; i < NT; i++)
    if (t[i] && !acl__format_is_nd(t[i]->format))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s: format %d is not ND", NAMES[i],
                       (int)t[i]->format);
  /* 3. the tiling (561002): shapes and sizes */
  if (logits->view_rank != 2)
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "logits has %llu dims, must have 2",
                     (unsigned long long)logits->view_rank);
  int64_t B = logits->view_dims[0], V = logits->view_dims[1];
  if (B <= 0 || V <= 0 || V > TKPS_V_MAX)
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "logits shape [%lld, %lld]: B must be positive and V in [1, %d]",
                     (long long)B, (long long)V, TKPS_V_MAX);
  for (int i = TK; i <= TP; i++)
    if (t[i]->view_rank != 1 || t[i]->view_dims[0] != B)
      return acl__fail(
          ACLNN_ERR_INNER_TILING_ERROR, OP, "%s (%llu dims, dim 0 %lld) must be [%lld]",
          NAMES[i], (unsigned long long)t[i]->view_rank,
          (long long)(t[i]->view_rank ? t[i]->view_dims[0] : 0), (long long)B);
  aclnnStatus st = q ? same_shape(q, logits, Q, LG) : ACLNN_SUCCESS;
  if (!st) st = same_shape(logitsTopKPSelect, logits, SEL, LG);
  if (!st) st = same_shape(logitsSelectIdx, topK, IDX, TK);
  if (st) return st;
  if (logitsTopKPSelect->view_dims[1] != V)
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "logitsTopKPSelect dim 1 %lld differs from logits' %lld",
                     (long long)logitsTopKPSelect->view_dims[1], (long long)V);
  if (q && q->view_dims[1] != V)
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "q dim 1 %lld differs from logits' %lld", (long long)q->view_dims[1],
                     (long long)V);
  /* 4. strides, offsets, bounds, overlaps; the native phase 1 */
  tkps_attrs a = {eps, isNeedLogits ? 1 : 0};
  return acl__executor_create(&tkps_op, t, &a, sizeof a, workspaceSize, executor);
}

aclnnStatus aclnnTopKTopPSample(void *workspace, uint64_t workspaceSize,
                                aclOpExecutor *executor, aclrtStream stream) {
  return acl__executor_run(&tkps_op, workspace, workspaceSize, executor, stream);
}
