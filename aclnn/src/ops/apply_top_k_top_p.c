/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnApplyTopKTopP over llmk_apply_top_k_top_p: CANN's limits, then the native op. */
#include "acl_internal.h"
#include "aclnnop/aclnn_apply_top_k_top_p.h"

static const char OP[] = "aclnnApplyTopKTopP";

static llmk_status tkp_plan(const llmk_tensor *const *t, const void *attrs,
                            size_t *workspace_size, llmk_plan **plan) {
  (void)attrs;
  return llmk_apply_top_k_top_p_get_workspace_size(t[0], t[1], t[2], t[3], workspace_size,
                                                   plan);
}

/* Tensor arguments in prototype order: inputs logits, p, k; output out. */
static const acl__op tkp_op = {
    OP, 3, 1, tkp_plan, llmk_apply_top_k_top_p, acl__map_status};

static aclnnStatus check_rank(const char *name, const aclTensor *t, uint64_t rank) {
  if (t->view_rank != rank)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s has %llu dims, must have %llu",
                     name, (unsigned long long)t->view_rank, (unsigned long long)rank);
  return ACLNN_SUCCESS;
}

/* CANN's op_api takes ND alone (not the other ND-like layout tags). */
static aclnnStatus check_format(const char *name, const aclTensor *t) {
  if (t->format != ACL_FORMAT_ND)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s: format %d is not ND", name,
                     (int)t->format);
  return ACLNN_SUCCESS;
}

aclnnStatus aclnnApplyTopKTopPGetWorkspaceSize(const aclTensor *logits,
                                               const aclTensor *p, const aclTensor *k,
                                               aclTensor *out, uint64_t *workspaceSize,
                                               aclOpExecutor **executor) {
  if (!workspaceSize || !executor)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "workspaceSize or executor is NULL");
  *workspaceSize = 0;
  *executor = NULL;
  /* 1. NULLs */
  if (!logits || !out)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "%s is NULL",
                     !logits ? "logits" : "out");
  if (!p && !k) return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "p and k are both NULL");
  const aclTensor *given[4] = {logits, p, k, out};
  static const char *const names[4] = {"logits", "p", "k", "out"};
  for (int i = 0; i < 4; i++)
    if (given[i] && !acl__tensor_live(given[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s is not a live aclTensor",
                       names[i]);
  /* 2. dtypes: logits FLOAT/FLOAT16/BF16; out and p the same; k INT32 */
  aclDataType dt = logits->dtype;
  if (dt != ACL_FLOAT && dt != ACL_FLOAT16 && dt != ACL_BF16)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "logits dtype %d is not FLOAT, FLOAT16 or BFLOAT16", (int)dt);
  if (out->dtype != dt)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "out dtype %d differs from logits dtype %d", (int)out->dtype,
                     (int)dt);
  if (p && p->dtype != dt)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "p dtype %d differs from logits dtype %d", (int)p->dtype, (int)dt);
  if (k && k->dtype != ACL_INT32)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "k dtype %d is not INT32",
                     (int)k->dtype);
  /* 3. ranks and shapes, then formats, in CANN's op_api order */
  aclnnStatus st = check_rank("logits", logits, 2);
  if (st) return st;
  int64_t b = logits->view_dims[0], v = logits->view_dims[1];
  if (out->view_rank != 2 || out->view_dims[0] != b || out->view_dims[1] != v)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "out shape (%llu dims, [%lld, %lld]) differs from logits "
                     "shape [%lld, %lld]",
                     (unsigned long long)out->view_rank,
                     (long long)(out->view_rank > 0 ? out->view_dims[0] : -1),
                     (long long)(out->view_rank > 1 ? out->view_dims[1] : -1),
                     (long long)b, (long long)v);
  if (p && (st = check_rank("p", p, 1))) return st;
  if (k && (st = check_rank("k", k, 1))) return st;
  if (p && p->view_dims[0] != b)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "p shape [%lld] must be [%lld]",
                     (long long)p->view_dims[0], (long long)b);
  if (k && k->view_dims[0] != b)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "k shape [%lld] must be [%lld]",
                     (long long)k->view_dims[0], (long long)b);
  const aclTensor *tensors[4] = {logits, p, k, out};
  for (int i = 0; i < 4; i++)
    if (tensors[i] && (st = check_format(names[i], tensors[i]))) return st;
  /* 4. strides, offsets, data and allocation bounds; then the native phase 1 */
  return acl__executor_create(&tkp_op, tensors, NULL, 0, workspaceSize, executor);
}

aclnnStatus aclnnApplyTopKTopP(void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *executor, aclrtStream stream) {
  return acl__executor_run(&tkp_op, workspace, workspaceSize, executor, stream);
}
