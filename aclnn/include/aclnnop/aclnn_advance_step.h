/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnAdvanceStep: prepare the next decode step in place (vLLM advance_step), on the CPU
 * (layer: docs/aclnn.md; op: docs/ops/advance_step.md, CANN section).
 *
 * CANN's semantics, which differ from llmk_advance_step in the block lookup. With
 * flat = blockTables in row-major order and rowStride = its element count / numSeqs:
 *   for q < numQueries:
 *     pos = seqLens[q]
 *     inputTokens[q] = sampledTokenIds[q]; inputPositions[q] = pos; seqLens[q] = pos + 1
 *     slotMapping[q] = (flat[pos / blockSize] + rowStride * q) * blockSize + pos %
 * blockSize for numQueries <= q < numSeqs (every padding row; CANN's kernel pads only
 * some): inputTokens[q] = 0; inputPositions[q] = 0; slotMapping[q] = -1   (seqLens
 * unchanged) Element q of a tensor is element q of its view in row-major order. Arguments
 * (all INT64, ND, any non-negative strides; CANN checks dim 0 only): inputTokens,
 * inputPositions, seqLens, slotMapping, blockTables: dim 0 == numSeqs
 *     ([numSeqs] and [numSeqs, 1] alike);
 *   sampledTokenIds: [numQueries, 1, ...];
 *   numSeqs > numQueries >= 1, numSeqs < 200000000, blockSize >= 1.
 * Every tensor is an input of the op (aclSetInputTensorAddr indices 0..5 in this order).
 * Phase 1 statuses:
 *   ACLNN_ERR_PARAM_NULLPTR (161001): a tensor, workspaceSize or executor NULL; a tensor
 *     with elements and no data.
 *   ACLNN_ERR_PARAM_INVALID (161002): a dtype other than INT64, a private format,
 * negative strides or offset, a view outside the aclrtMalloc block it starts in.
 *   ACLNN_ERR_INNER_TILING_ERROR (561002): numSeqs, numQueries or blockSize < 1,
 *     numSeqs <= numQueries, numSeqs >= 200000000, a dim 0 other than the above,
 *     sampledTokenIds' dim 1 not 1, a tensor with fewer elements than its rows.
 * Phase 2 statuses: ACLNN_ERR_INNER_NULLPTR (561103) for a NULL, consumed or destroyed
 *   executor; ACLNN_ERR_PARAM_INVALID, with nothing written, for a negative seqLens
 * value, pos / blockSize outside flat, a negative block id, a slot that overflows int64;
 * a workspace smaller than asked, an unknown stream.
 */
#ifndef LLMK_ACLNNOP_ACLNN_ADVANCE_STEP_H
#define LLMK_ACLNNOP_ACLNN_ADVANCE_STEP_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAdvanceStepGetWorkspaceSize(
    const aclTensor *inputTokens, const aclTensor *sampledTokenIds,
    const aclTensor *inputPositions, const aclTensor *seqLens,
    const aclTensor *slotMapping, const aclTensor *blockTables, int64_t numSeqs,
    int64_t numQueries, int64_t blockSize, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnAdvanceStep(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
