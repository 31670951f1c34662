/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnInplaceFusedCausalConv1d: causal depthwise convolution (K = 3) with a conv-state
 * cache, in place, on the CPU over llmk_fused_causal_conv1d
 * (docs/ops/fused_causal_conv1d.md; layer: docs/aclnn.md; V2: ..._v2.h).
 *
 * Per sequence b: read line R (cacheIndices[b], or APC's initial block), history rows
 * (zeros if numComputedTokens[b] == 0; rows [0, nacc-1+K-1) with numAcceptedTokens;
 * else all C rows), y[i] = sum_k weight[k] * xp[i+k] in f32, conv_mode 1 zero reset,
 * optional residual, x_b = y; line W gets the last min(C, Len) padded rows; APC block
 * fills. cacheIndices[b] == padSlotId skips the sequence.
 * Arguments (CANN's):
 *   x [cuSeqLen, dim] with queryStartLoc [batch+1], or [batch, m+1, dim]; FLOAT16 or
 *     BFLOAT16; last stride 1. weight [3, dim], x's dtype, last stride 1.
 *   convStates [lines, C, dim], x's dtype, last stride 1; C >= 2 (3-D x: C >= m+2).
 *   Index tensors INT32: cacheIndices [batch] or [batch, maxNumBlocks] (APC),
 *   numAcceptedTokens, numComputedTokens, blockIdxFirstScheduledToken,
 *   blockIdxLastScheduledToken, initialStateIdx [batch] (the last three: APC, which is
 *   on exactly when blockIdxFirstScheduledToken is given; without it the other two are
 *   ignored, as in CANN).
 *   initialStateMode (INT32), bias (x's dtype), activationMode, runMode: accepted and
 *   ignored, as in CANN.
 *   dim in [64, 16384], a multiple of 16; batch in [1, 256]; maxNumBlocks in [1, 1024];
 *   3-D x: m in [0, 7]; 2-D x: maxQueryLen >= 1 (<= 8: cuSeqLen <= batch * maxQueryLen;
 *   else cuSeqLen <= 1048576).
 * Every tensor is an input (in-place "Ref" tensors); aclSetInputTensorAddr indices
 * 0..11 follow the prototype. The workspace is the native op's (non-zero).
 * Phase 1 statuses:
 *   ACLNN_ERR_PARAM_NULLPTR (161001): x, weight, convStates, workspaceSize or executor
 *     NULL; a tensor with elements and no data.
 *   ACLNN_ERR_INNER_TILING_ERROR (561002): every other rejected argument (dtypes,
 *     ranks, shapes, strides, formats, attributes, CANN's limits).
 *   ACLNN_ERR_PARAM_INVALID (161002): negative strides or offset, a view outside the
 *     aclrtMalloc block it starts in.
 * Phase 2: ACLNN_ERR_PARAM_NULLPTR for a NULL workspace; ACLNN_ERR_PARAM_INVALID for
 *   index values the native op rejects
 *   (queryStartLoc order, lines out of range, APC indices, duplicate written lines,
 *   a sequence longer than maxQueryLen), before anything is written; a workspace
 *   smaller than asked; an unknown stream. ACLNN_ERR_INNER_NULLPTR (561103): a NULL,
 *   consumed or destroyed executor.
 */
#ifndef LLMK_ACLNNOP_ACLNN_INPLACE_FUSED_CAUSAL_CONV1D_H
#define LLMK_ACLNNOP_ACLNN_INPLACE_FUSED_CAUSAL_CONV1D_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnInplaceFusedCausalConv1dGetWorkspaceSize(
    aclTensor *x, const aclTensor *weight, aclTensor *convStates,
    const aclTensor *queryStartLoc, const aclTensor *cacheIndices,
    const aclTensor *initialStateMode, const aclTensor *bias,
    const aclTensor *numAcceptedTokens, const aclTensor *numComputedTokens,
    const aclTensor *blockIdxFirstScheduledToken,
    const aclTensor *blockIdxLastScheduledToken, const aclTensor *initialStateIdx,
    int64_t activationMode, int64_t padSlotId, int64_t runMode, int64_t maxQueryLen,
    int64_t residualConnection, int64_t blockSize, int64_t convMode,
    uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnInplaceFusedCausalConv1d(void *workspace,
                                                    uint64_t workspaceSize,
                                                    aclOpExecutor *executor,
                                                    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
