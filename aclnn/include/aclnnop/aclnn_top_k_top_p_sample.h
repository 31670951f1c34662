/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnTopKTopPSample: CANN's fused top-k / top-p filter and exponential sample, on the
 * CPU over llmk_sample_top_k_top_p_ex (include/llmk/top_k_top_p.h; layer: docs/aclnn.md).
 *
 * Per row b of logits [B, V] (x as f32; "sorted": value descending, equal values by
 * ascending index):
 *   top-k when 1 <= topK[b] <= min(V, 1024): C = the topK[b] largest, sorted;
 *     probs = softmax over C; if 0 < topP[b] < 1, keep C[0..n) with n the first j + 1
 *     where the running f32 sum of probs exceeds topP[b]; w = softmax over the kept.
 *   no top-k, topP[b] in (0, 1) (or NaN): probs = softmax over the row; C = the row
 *     sorted; n as above; w = softmax of the kept probabilities (CANN's kernel).
 *   neither: C = the row in index order, w = softmax over the row.
 *   logitsSelectIdx[b] = C[j*], j* the first j maximizing w_j / (|q[b][j]| + eps) (q's
 *     column is the rank j in a filtered row, the token in an unfiltered one); without q
 *     the first maximum of w.
 *   isNeedLogits: logitsTopKPSelect[b][i] = x[i] for kept i, -inf elsewhere; otherwise
 *     logitsTopKPSelect is not written. topKGuess does not change results (CANN uses it
 *     to guess how far its top-p search goes).
 * Arguments:
 *   logits [B, V] FLOAT16 or BFLOAT16, 0 < V <= 2^20; topK [B] INT32; topP [B] logits'
 *   dtype; q [B, V] FLOAT, optional (NULL); logitsSelectIdx [B] INT64;
 *   logitsTopKPSelect [B, V] FLOAT. Any non-negative strides, ND format.
 * Phase 1 statuses:
 *   ACLNN_ERR_PARAM_NULLPTR (161001): logits, topK, topP, logitsSelectIdx,
 *     logitsTopKPSelect, workspaceSize or executor NULL; a tensor with elements and no
 *     data.
 *   ACLNN_ERR_PARAM_INVALID (161002): a dtype outside the lists; a private format;
 *     negative strides or offset; a view outside its block; an output overlapping
 *     another tensor.
 *   ACLNN_ERR_INNER_TILING_ERROR (561002, CANN's tiling): logits not 2-D, B or V of 0,
 *     V > 2^20; topK or topP not [B]; q or logitsTopKPSelect not logits' shape;
 *     logitsSelectIdx not topK's shape.
 * Phase 2 statuses: ACLNN_ERR_INNER_NULLPTR (561103) for a NULL, consumed or destroyed
 *   executor; ACLNN_ERR_PARAM_INVALID for a workspace smaller than phase 1 asked for or
 *   an unknown stream. No value is refused.
 */
#ifndef LLMK_ACLNNOP_ACLNN_TOP_K_TOP_P_SAMPLE_H
#define LLMK_ACLNNOP_ACLNN_TOP_K_TOP_P_SAMPLE_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnTopKTopPSampleGetWorkspaceSize(
    const aclTensor *logits, const aclTensor *topK, const aclTensor *topP,
    const aclTensor *q, double eps, bool isNeedLogits, int64_t topKGuess,
    const aclTensor *logitsSelectIdx, const aclTensor *logitsTopKPSelect,
    uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnTopKTopPSample(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
