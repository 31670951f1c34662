/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnFusedCausalConv1d: causal depthwise convolution (K = 3) with a conv-state cache,
 * writing its output to y (x is only read), on the CPU over
 * llmk_fused_causal_conv1d_out_get_workspace_size (docs/ops/fused_causal_conv1d.md;
 * layer: docs/aclnn.md). The same inputs, attributes and rules as
 * aclnnInplaceFusedCausalConv1d (aclnn_inplace_fused_causal_conv1d.h), plus y.
 *
 * Per sequence b of L tokens (C = convStates.shape[1]): read line R, write line W
 * (APC: cacheIndices[b][initialStateIdx[b]] and cacheIndices[b][blockIdxLast[b]];
 * otherwise cacheIndices[b], or b without cacheIndices); history: K-1 zero rows when
 * numComputedTokens[b] == 0, rows [0, nacc-1+K-1) of R with numAcceptedTokens, else all
 * C rows of R; W gets the last min(C, history+L) rows; with APC, the lines
 * cacheIndices[b][first..last-1] get the K-1 rows ending at each block boundary
 * (blockSize tokens a block) crossed in the chunk; y[i] = sum_k weight[k] * xp[i+k] in
 * f32; convMode 1 (Pangu V2) zeroes the first min(max(K-1-numComputedTokens[b], 0), L)
 * rows; residualConnection 1 adds x; y_b = the result rounded to x's dtype.
 * R == padSlotId skips the sequence (nothing written, its y rows included).
 * Arguments (CANN's):
 *   x [cuSeqLen, dim] with queryStartLoc [batch+1], or [batch, m+1, dim] (m in [0, 7];
 *     queryStartLoc ignored); FLOAT16 or BFLOAT16, last stride 1. weight [3, dim],
 *     convStates [lines, C, dim] (C >= 2, C >= m+2 for a 3-D x, last stride 1) and y
 *     (x's shape, last stride 1) of x's dtype; index tensors INT32; dim in [64, 16384],
 *     a multiple of 16; batch in [1, 256].
 *   maxQueryLen: the longest sequence; 2-D x: in [1, 8] (short-sequence template) or
 *     > 8 (long-sequence template, cuSeqLen <= 1048576); 3-D x: -1 or >= 1.
 *   APC (prefix caching) is on when blockIdxLastScheduledToken is given (3-D x or
 *     maxQueryLen <= 8) or cacheIndices is 2-D (maxQueryLen > 8), CANN's tiling rule
 *     for each template; it then needs blockIdxFirstScheduledToken,
 *     blockIdxLastScheduledToken, initialStateIdx, numComputedTokens (all [batch]), a
 *     cacheIndices [batch, 1..1024] and blockSize >= 2. Without APC cacheIndices is
 *     [batch] and the three block-index tensors are ignored.
 *   convMode 0 (Qwen3-Next) or 1 (Pangu V2, needs numComputedTokens); residualConnection
 *     0/1; blockSize 0 or >= 2; numAcceptedTokens, numComputedTokens [batch].
 *   initialStateMode (INT32), bias (x's dtype), activationMode (0..2) and runMode (0/1):
 *     checked and ignored, as by CANN.
 * Tensor indices: aclSetInputTensorAddr 0..11 (x .. initialStateIdx),
 * aclSetOutputTensorAddr 0 (y). The workspace is the native op's (non-zero).
 * Phase 1 statuses:
 *   ACLNN_ERR_PARAM_NULLPTR (161001): x, weight, convStates, y, workspaceSize or
 *     executor NULL; a tensor with elements and no data.
 *   ACLNN_ERR_INNER_TILING_ERROR (561002): every other rejected argument (dtypes,
 *     ranks, shapes, strides, formats, attributes, CANN's limits, APC needs).
 *   ACLNN_ERR_PARAM_INVALID (161002): y sharing memory with another tensor (unless it
 *     is x's own view: then in place); negative strides or offset; a view outside the
 *     aclrtMalloc block it starts in.
 * Phase 2: ACLNN_ERR_PARAM_NULLPTR for a NULL workspace; ACLNN_ERR_PARAM_INVALID for
 *   index values the native op rejects (queryStartLoc order, a sequence longer than
 *   maxQueryLen, lines out of range, a line written twice, APC block indices,
 *   numAcceptedTokens past the line), before anything is written; a workspace smaller
 *   than asked; an unknown stream.
 *   ACLNN_ERR_INNER_NULLPTR (561103): a NULL, consumed or destroyed executor.
 */
#ifndef LLMK_ACLNNOP_ACLNN_FUSED_CAUSAL_CONV1D_H
#define LLMK_ACLNNOP_ACLNN_FUSED_CAUSAL_CONV1D_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnFusedCausalConv1dGetWorkspaceSize(
    const aclTensor *x, const aclTensor *weight, aclTensor *convStates,
    const aclTensor *queryStartLoc, const aclTensor *cacheIndices,
    const aclTensor *initialStateMode, const aclTensor *bias,
    const aclTensor *numAcceptedTokens, const aclTensor *numComputedTokens,
    const aclTensor *blockIdxFirstScheduledToken,
    const aclTensor *blockIdxLastScheduledToken, const aclTensor *initialStateIdx,
    int64_t activationMode, int64_t padSlotId, int64_t runMode, int64_t maxQueryLen,
    int64_t residualConnection, int64_t blockSize, int64_t convMode, aclTensor *y,
    uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnFusedCausalConv1d(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
