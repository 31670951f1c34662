/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnAdvanceStepV2: aclnnAdvanceStep with CANN's speculative mode, on the CPU
 * (layer: docs/aclnn.md; op: docs/ops/advance_step.md).
 *
 * An optional tensor counts as given when it is non-NULL with elements (CANN's tiling):
 * NULL or empty (an empty specToken [numSeqs, 0]: no draft tokens) is absent. Unless both
 * are given: exactly aclnnAdvanceStep (CANN's legacy path: its formula, limits and
 * statuses; see aclnn_advance_step.h), after the shape check of the one given, if any.
 * Both given: speculative mode over llmk_advance_step, S = specToken's dim 1, T = S + 1:
 *   for i < numSeqs, j < T, k = i*T + j:
 *     pos = inputPositions[k] + acceptedNum[i] + 1
 *     inputPositions[k] = pos; seqLens[k] = pos + 1
 *     slotMapping[k] = blockTables[i][pos / blockSize] * blockSize + pos % blockSize
 *   inputTokens[i*T] = sampledTokenIds[i][f-1] (f: the first -1 of the row, T if none);
 *   inputTokens[i*T+1+s] = specToken[i][s]
 * Arguments (all INT64, ND, any non-negative strides): inputTokens, inputPositions,
 * seqLens, slotMapping [numSeqs*T]; sampledTokenIds [numSeqs, T]; blockTables [numSeqs,
 * maxBlocks]; specToken [numSeqs, S]; acceptedNum [numSeqs]; numQueries == numSeqs >= 1,
 *   blockSize >= 1. Every tensor is an input (aclSetInputTensorAddr indices 0..7).
 * Phase 1 statuses: as aclnnAdvanceStep; ACLNN_ERR_PARAM_INVALID (161002) for a
 * specToken / acceptedNum (even empty) not INT64 ND; ACLNN_ERR_INNER_TILING_ERROR
 * (561002) for a given specToken not [numSeqs, *] or acceptedNum not [numSeqs] (plain
 * mode too), in speculative mode a rank or extent other than above, numQueries !=
 * numSeqs. Phase 2 statuses: as
 * aclnnAdvanceStep; ACLNN_ERR_PARAM_INVALID, with nothing written, for negative positions
 * or acceptedNum, a row of sampledTokenIds starting with -1, pos / blockSize >=
 * maxBlocks, a negative block id, an overflow.
 */
#ifndef LLMK_ACLNNOP_ACLNN_ADVANCE_STEP_V2_H
#define LLMK_ACLNNOP_ACLNN_ADVANCE_STEP_V2_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAdvanceStepV2GetWorkspaceSize(
    const aclTensor *inputTokens, const aclTensor *sampledTokenIds,
    const aclTensor *inputPositions, const aclTensor *seqLens,
    const aclTensor *slotMapping, const aclTensor *blockTables,
    const aclTensor *specTokenOptional, const aclTensor *acceptedNumOptional,
    int64_t numSeqs, int64_t numQueries, int64_t blockSize, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnAdvanceStepV2(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
