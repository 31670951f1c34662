/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnInplaceFusedCausalConv1dV2: aclnnInplaceFusedCausalConv1d
 * (aclnn_inplace_fused_causal_conv1d.h) with maxDraftTokens: for a 3-D x
 * [batch, m+1, dim], m may be 0..maxDraftTokens instead of 0..7. maxDraftTokens < 0
 * gives ACLNN_ERR_INNER_TILING_ERROR (561002). Everything else, statuses included, is
 * as in V1; the executor runs with aclnnInplaceFusedCausalConv1dV2.
 */
#ifndef LLMK_ACLNNOP_ACLNN_INPLACE_FUSED_CAUSAL_CONV1D_V2_H
#define LLMK_ACLNNOP_ACLNN_INPLACE_FUSED_CAUSAL_CONV1D_V2_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnInplaceFusedCausalConv1dV2GetWorkspaceSize(
    aclTensor *x, const aclTensor *weight, aclTensor *convStates,
    const aclTensor *queryStartLoc, const aclTensor *cacheIndices,
    const aclTensor *initialStateMode, const aclTensor *bias,
    const aclTensor *numAcceptedTokens, const aclTensor *numComputedTokens,
    const aclTensor *blockIdxFirstScheduledToken,
    const aclTensor *blockIdxLastScheduledToken, const aclTensor *initialStateIdx,
    int64_t activationMode, int64_t padSlotId, int64_t runMode, int64_t maxQueryLen,
    int64_t residualConnection, int64_t blockSize, int64_t convMode,
    int64_t maxDraftTokens, uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnInplaceFusedCausalConv1dV2(void *workspace,
                                                      uint64_t workspaceSize,
                                                      aclOpExecutor *executor,
                                                      aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
