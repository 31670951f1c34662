/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnTopKTopPSampleV2: CANN's fused top-k / top-p / min-p filter and sample, on the
 * CPU over llmk_sample_top_k_top_p_ex2 (include/llmk/top_k_top_p.h; layer:
 * docs/aclnn.md).
 *
 * Per row b of logits [B, V] (x as f32; "sorted": value descending, equal values by
 * ascending index; v(.) = softmax when inputIsLogits, else the values themselves):
 *   topP[b] <= 0: L = the largest entry, vals = v of it.
 *   top-k for 1 <= topK[b] <= min(V, K), K = ksMax rounded up to a multiple of 8, at
 *     most 1024 (ksMax <= 0: no top-k): L = the topK[b] largest, sorted, vals = v over
 *     them; if 0 < topP[b] < 1, L ends at the first entry where the running f32 sum of
 *     vals reaches topP[b].
 *   no top-k, 0 < topP[b] < 1: L = the row sorted, vals = v over the row, the same cut.
 *   otherwise (topP[b] >= 1 or NaN): L = the row in index order, vals = v over the row.
 *   minPs (optional), when minPs[b] > 0: minPs[b] >= 1 keeps only the first maximum of
 *     vals; else the entries of L with vals >= minPs[b] * max(vals) stay, in L's order.
 *   isNeedSampleResult false: logitsSelectIdx[b] = L[j*], j* the first j maximizing
 *     vals_j / (|q[b][j]| + eps) (q's column: the position in L), or without q the first
 *     maximum of vals; logitsIdx and logitsSortMasked are not written.
 *   isNeedSampleResult true (q must be NULL): logitsSortMasked[b][j] = vals_j for j <
 * |L|, 0 after; logitsIdx[b][j] = L[j] for j < |L| (the rest not written);
 *     logitsSelectIdx is not written.
 *   isNeedLogits: logitsTopKPSelect[b][i] = x[i] for i in L, -inf elsewhere (0 when
 *     inputIsLogits is false); otherwise logitsTopKPSelect is not written.
 *   topKGuess does not change results (CANN's kernel uses it to guess how far its top-p
 *   search goes).
 * Arguments:
 *   logits [B, V] FLOAT16, BFLOAT16 or FLOAT, 0 < V <= 2^20; topK [B] INT32; topP [B]
 *   and minPs [B] logits' dtype (minPs optional); q [B, V] FLOAT, optional;
 *   logitsSelectIdx [B] INT64; logitsTopKPSelect [B, V] FLOAT; logitsIdx [B, V] INT64;
 *   logitsSortMasked [B, V] FLOAT. Any non-negative strides, ND format. Shapes of the
 *   outputs a call does not write are not checked.
 * Phase 1 statuses:
 *   ACLNN_ERR_PARAM_NULLPTR (161001): logits, topK, topP, an output, workspaceSize or
 *     executor NULL; a tensor with elements and no data.
 *   ACLNN_ERR_PARAM_INVALID (161002): a dtype outside the lists; a private format;
 *     negative strides or offset; a view outside its block; an output overlapping
 *     another tensor.
 *   ACLNN_ERR_INNER_TILING_ERROR (561002, CANN's tiling): logits not 2-D, B or V of 0,
 *     V > 2^20; topK, topP or minPs not [B]; q given with isNeedSampleResult; q not
 *     logits' shape; logitsTopKPSelect not [B, V] with isNeedLogits; logitsSelectIdx not
 *     topK's shape without isNeedSampleResult; logitsIdx or logitsSortMasked not [B, V]
 *     with isNeedSampleResult.
 * Phase 2 statuses: ACLNN_ERR_INNER_NULLPTR (561103) for a NULL, consumed or destroyed
 *   executor; ACLNN_ERR_PARAM_INVALID for a workspace smaller than phase 1 asked for or
 *   an unknown stream. No value is refused.
 */
#ifndef LLMK_ACLNNOP_ACLNN_TOP_K_TOP_P_SAMPLE_V2_H
#define LLMK_ACLNNOP_ACLNN_TOP_K_TOP_P_SAMPLE_V2_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnTopKTopPSampleV2GetWorkspaceSize(
    const aclTensor *logits, const aclTensor *topK, const aclTensor *topP,
    const aclTensor *q, const aclTensor *minPs, double eps, bool isNeedLogits,
    int64_t topKGuess, int64_t ksMax, bool inputIsLogits, bool isNeedSampleResult,
    const aclTensor *logitsSelectIdx, const aclTensor *logitsTopKPSelect,
    const aclTensor *logitsIdx, const aclTensor *logitsSortMasked,
    uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnTopKTopPSampleV2(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
