/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnGatherPaKvCache: copies each sequence's tokens out of a paged KV cache, by its
 * block table, into contiguous keyRef / valueRef, on the CPU over
 * llmk_gather_pa_kv_cache_ex (docs/ops/gather_pa_kv_cache.md; layer: docs/aclnn.md).
 * As in CANN's header the mode string is `char *` and the functions carry no
 * ACLNN_API.
 *
 * For sequence i (B = blockTables.shape[0]):
 *   start = isSeqLensCumsum ? seqLens[i] : seqLens[0] + ... + seqLens[i - 1]
 *   len   = isSeqLensCumsum ? seqLens[i + 1] - seqLens[i] : seqLens[i]
 *   first = seqOffsetOptional ? seqOffsetOptional[i] / blockSize : 0
 *   for p in [0, len): b = blockTables[i][first + p / blockSize], o = p % blockSize,
 *     keyRef[start + p] = token (b, o) of keyCache (valueRef from valueCache alike).
 *   keyCache, valueCache, keyRef, valueRef: one dtype, FLOAT16, BFLOAT16 or INT8
 *     (Atlas A2).
 *   cacheMode "Norm": keyCache [numBlocks, blockSize, H, Dk], valueCache [numBlocks,
 *     blockSize, H, Dv] (ND); keyRef [T, H, Dk], valueRef [T, H, Dv].
 *   cacheMode "PA_NZ": caches [numBlocks, H*D/ld, blockSize, ld], ld = 32 bytes /
 *     element size (FRACTAL_NZ or ND format); keyRef [T, H*Dk], valueRef [T, H*Dv].
 *   blockTables [B, maxBlocks] INT32; seqLens INT32, [B] or [B + 1] (isSeqLensCumsum:
 *     then T = seqLens[B], and rows below seqLens[0] are not written);
 *     seqOffsetOptional INT32 [B] or NULL.
 * Every tensor is an input (keyRef and valueRef are "Ref" tensors):
 * aclSetInputTensorAddr indices 0..6 follow the prototype.
 * Phase 1 statuses, in CANN's op_api order:
 *   ACLNN_ERR_PARAM_NULLPTR (161001): a required tensor, cacheMode, workspaceSize or
 *     executor NULL; a tensor with elements and no data.
 *   ACLNN_SUCCESS with workspace 0 and nothing to do: keyCache, valueCache, keyRef or
 *     valueRef with no elements (before the checks below).
 *   ACLNN_ERR_PARAM_INVALID (161002): ranks, then dtypes (unsupported, or not one
 *     dtype), shapes that disagree, formats, negative strides, a view outside its
 *     block, keyRef / valueRef overlapping another tensor.
 *   ACLNN_ERR_INNER_NULLPTR (561103): CANN's shape inference: seqLens not [B] ([B + 1]
 *     cumulative), cacheMode neither "Norm" nor "PA_NZ", keyRef / valueRef not 3-D
 *     ("Norm") or 2-D ("PA_NZ").
 *   ACLNN_ERR_INNER_TILING_ERROR (561002): a batch or maxBlocks of 0.
 * Phase 2: ACLNN_ERR_PARAM_INVALID, before anything is written, for seqLens / seqOffset
 *   values that are negative, decrease (cumulative), do not add up to T, or need
 *   block-table columns past maxBlocks, and for a used block id outside [0,
 *   numBlocks); a small workspace or an unknown stream; ACLNN_ERR_INNER_NULLPTR for a
 *   NULL, consumed or destroyed executor.
 */
#ifndef LLMK_ACLNNOP_ACLNN_GATHER_PA_KV_CACHE_H
#define LLMK_ACLNNOP_ACLNN_GATHER_PA_KV_CACHE_H

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnGatherPaKvCacheGetWorkspaceSize(
    const aclTensor *keyCache, const aclTensor *valueCache, const aclTensor *blockTables,
    const aclTensor *seqLens, const aclTensor *keyRef, const aclTensor *valueRef,
    const aclTensor *seqOffsetOptional, char *cacheMode, const bool isSeqLensCumsum,
    uint64_t *workspaceSize, aclOpExecutor **executor);

aclnnStatus aclnnGatherPaKvCache(void *workspace, uint64_t workspaceSize,
                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
