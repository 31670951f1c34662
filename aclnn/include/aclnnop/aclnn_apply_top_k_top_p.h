/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnApplyTopKTopP: top-k / top-p filtering of logits, on the CPU over
 * llmk_apply_top_k_top_p (docs/ops/apply_top_k_top_p.md; layer: docs/aclnn.md).
 *
 * Per row b of logits [B, V], with the sort-based reference's semantics:
 *   s, idx = sort(logits[b], ascending, stable)
 *   if 1 <= k[b] <= V-1: s[s < s[V-k[b]]] = -inf            (ties with the k-th kept)
 *   if p: mask sorted j with cumsum(softmax(s))[j] <= 1 - p[b], except j = V-1
 *   out[b][idx[j]] = s[j]
 * Arguments:
 *   logits [B, V] FLOAT, FLOAT16 or BFLOAT16, any non-negative strides, ND format.
 *   p [B] logits' dtype, values in [0, 1]; optional (NULL).
 *   k [B] INT32; optional (NULL). k <= 0 or k >= V disables top-k for that row (CANN
 *     documents k in [1, 1024]; values are not checked).
 *   out [B, V] logits' dtype; may be the same memory as logits.
 *   At least one of p and k.
 * Phase 1 statuses:
 *   ACLNN_ERR_PARAM_NULLPTR (161001): logits, out, workspaceSize or executor NULL; p and
 *     k both NULL; a tensor with elements and no data.
 *   ACLNN_ERR_PARAM_INVALID (161002): a dtype outside the set or dtypes that disagree,
 *     a rank other than 2 (logits, out) or 1 (p, k), shapes that disagree, a format
 *     other than ACL_FORMAT_ND (as CANN's op_api: NCHW and the other ND-like tags
 *     too), negative strides or offset, a view outside the aclrtMalloc block it starts
 *     in.
 * Phase 2 statuses: ACLNN_ERR_INNER_NULLPTR (561103) for a NULL, consumed or destroyed
 *   executor; ACLNN_ERR_PARAM_INVALID for a p value outside [0, 1] or NaN (nothing is
 *   written), a workspace smaller than phase 1 asked for, an unknown stream.
 */
#ifndef LLMK_ACLNNOP_ACLNN_APPLY_TOP_K_TOP_P_H
#define LLMK_ACLNNOP_ACLNN_APPLY_TOP_K_TOP_P_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnApplyTopKTopPGetWorkspaceSize(
    const aclTensor *logits, const aclTensor *p, const aclTensor *k, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnApplyTopKTopP(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
