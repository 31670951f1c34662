/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnFusedCausalConv1d: causal depthwise convolution (K = 3) with a conv-state cache,
 * writing its output to y (x is only read), on the CPU over
 * llmk_fused_causal_conv1d_out_get_workspace_size (docs/ops/fused_causal_conv1d.md;
 * layer: docs/aclnn.md). The in-place op with more inputs is
 * aclnnInplaceFusedCausalConv1d (aclnn_inplace_fused_causal_conv1d.h).
 *
 * Per sequence b: history = the C rows of line cacheIndices[b] (numAcceptedTokens in
 * runMode 1: rows [nacc-1, nacc+1)), y[i] = sum_k weight[k] * xp[i+k] in f32, optional
 * residual (y += x), y_b = y rounded to x's dtype; the line gets the last min(C, Len)
 * padded rows. cacheIndices[b] == padSlotId skips the sequence (its y rows are not
 * written).
 * Arguments (CANN's):
 *   runMode 0 (prefill): x [cuSeqLen, dim], cuSeqLen in [1, 65536]; queryStartLoc
 *     [batch+1] and cacheIndices [batch] required; convStates [lines, 2, dim];
 *     numAcceptedTokens ignored.
 *   runMode 1 (decode): x [cuSeqLen, dim] with queryStartLoc [batch+1] (sequences of at
 *     most 6 tokens), or [batch, m+1, dim] with m in [0, 5] and C >= m+2 (queryStartLoc
 *     ignored); cacheIndices [batch] optional (NULL: line b); numAcceptedTokens [batch]
 *     optional.
 *   x FLOAT16 or BFLOAT16, last stride 1; weight [3, dim], convStates [lines, C, dim]
 *   (last stride 1) and y (x's shape) of x's dtype; index tensors INT32;
 *   dim in [128, 16384], a multiple of 128; batch in [1, 256].
 *   initialStateMode (INT32), bias (x's dtype) and activationMode (0..2): accepted and
 *   ignored, as by the in-place entry.
 * Tensor indices: aclSetInputTensorAddr 0..7 (x .. numAcceptedTokens),
 * aclSetOutputTensorAddr 0 (y). The workspace is the native op's (non-zero).
 * Phase 1 statuses:
 *   ACLNN_ERR_PARAM_NULLPTR (161001): x, weight, convStates, y, workspaceSize or
 *     executor NULL; a tensor with elements and no data.
 *   ACLNN_ERR_INNER_TILING_ERROR (561002): every other rejected argument (dtypes,
 *     ranks, shapes, strides, formats, attributes, CANN's limits).
 *   ACLNN_ERR_PARAM_INVALID (161002): y sharing memory with another tensor (unless it
 *     is x's own view: then in place); negative strides or offset; a view outside the
 *     aclrtMalloc block it starts in.
 * Phase 2: ACLNN_ERR_PARAM_NULLPTR for a NULL workspace; ACLNN_ERR_PARAM_INVALID for
 *   index values the native op rejects (queryStartLoc order, a sequence longer than 6
 *   tokens in runMode 1, lines out of range, a line written twice), before anything is
 *   written; a workspace smaller than asked; an unknown stream.
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
    const aclTensor *numAcceptedTokens, int64_t activationMode, int64_t padSlotId,
    int64_t runMode, int64_t residualConnection, aclTensor *y, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnFusedCausalConv1d(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
