/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnScatterPaKvCache: writes each token's key (and value) into a paged KV cache at
 * slotMapping[t], on the CPU over llmk_scatter_pa_kv_cache
 * (docs/ops/scatter_pa_kv_cache.md; layer: docs/aclnn.md). As in CANN's header the
 * mode strings are `char *` and the functions carry no ACLNN_API.
 *
 * For each token t with s = slotMapping[t] >= 0 (negative: padding, skipped):
 * b = s / blockSize, o = s % blockSize; cache(b, o, h, d) = key[t, h, d] (value too).
 *   key [T, H, Dk] FLOAT16, BFLOAT16 or INT8 (Atlas A2); value [T, H, Dv] key's dtype
 *     (any of the three under "PA_NZ", an INT8 value only with an INT8 key);
 *     valueCacheRef NULL or 0-D: K only ("Norm" with scatterMode "None" or "Nct"; a
 *     value given beside a 0-D valueCacheRef is not read); each cache has its source's
 *     dtype.
 *   slotMapping [T] INT32 or INT64, values < numBlocks * blockSize; numBlocks *
 *     blockSize >= T in every mode.
 *   cacheModeOptional NULL, "" or "Norm": caches [numBlocks, blockSize, H, D] (ND);
 *     "PA_NZ": caches [numBlocks, H*D/ld, blockSize, ld], ld = 32 bytes / element size
 *     (FRACTAL_NZ or ND format), blockSize <= 65535; scatterModeOptional is not read.
 *   scatterModeOptional (cacheMode "Norm") NULL, "" or "None": key/value as their
 *     tensors give them;
 *     "Nct": key and value rows are read with token stride stridesOptional[0] / [1] and
 *     start offsetsOptional[0] / [1] elements after the tensor's view (both arrays of
 *     length 2, strides > 0, offsets >= 0); ignored in the other modes;
 *     "NHSD": caches [numBlocks, H, blockSize, D] (ND); head sizes multiples of 32
 *     bytes, H <= 4095, H * (Dk + Dv) * element size <= 195584;
 *     "Alibi", "Rope", "Omni" (compressed caches [numBlocks, blockSize, 1, D],
 *     slotMapping and compressLensOptional [B * H], seqLensOptional [B],
 *     compressSeqOffsetOptional [B * H] for "Rope" / "Omni"; docs/aclnn.md).
 * Every tensor is an input (keyCacheRef and valueCacheRef are "Ref" tensors):
 * aclSetInputTensorAddr indices 0..7 follow the prototype.
 * Phase 1 statuses, in CANN's op_api then tiling order:
 *   ACLNN_ERR_INNER_NULLPTR (561103): key, keyCacheRef, slotMapping, workspaceSize or
 *     executor NULL; value without valueCacheRef (CANN's op_api code).
 *   ACLNN_SUCCESS with workspace 0 and nothing to do: key or keyCacheRef with no
 *     elements, value NULL or empty too (before the checks below).
 *   ACLNN_ERR_PARAM_NULLPTR (161001): a tensor with elements and no data.
 *   ACLNN_ERR_PARAM_INVALID (161002): key neither 3-D nor 4-D, value neither 0-D, 3-D
 *     nor 4-D; dtypes; 5-D PA_NZ caches, formats, Nct arrays, negative strides, a view
 *     outside its block.
 *   ACLNN_ERR_INNER_TILING_ERROR (561002): a cacheMode or scatterMode not listed above;
 *     K only outside "Norm" None / Nct; valueCacheRef with dims but no value; an INT8
 *     value beside another key dtype; the tiling's ranks and shapes per mode (cache
 *     extents, key / value agreement, numBlocks * blockSize < T, the PA_NZ layout);
 *     NHSD's limits; the compressed modes' shape rules.
 *   ACLNN_ERR_INNER (561000): compress tensors outside "Alibi", "Rope", "Omni".
 * Phase 2: ACLNN_ERR_PARAM_INVALID for a slot >= numBlocks * blockSize (nothing is
 *   written), a small workspace or an unknown stream; ACLNN_ERR_INNER_NULLPTR for a
 *   NULL, consumed or destroyed executor.
 */
#ifndef LLMK_ACLNNOP_ACLNN_SCATTER_PA_KV_CACHE_H
#define LLMK_ACLNNOP_ACLNN_SCATTER_PA_KV_CACHE_H

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnScatterPaKvCacheGetWorkspaceSize(
    const aclTensor *key, aclTensor *keyCacheRef, const aclTensor *slotMapping,
    const aclTensor *value, aclTensor *valueCacheRef,
    const aclTensor *compressLensOptional, const aclTensor *compressSeqOffsetOptional,
    const aclTensor *seqLensOptional, char *cacheModeOptional, char *scatterModeOptional,
    const aclIntArray *stridesOptional, const aclIntArray *offsetsOptional,
    uint64_t *workspaceSize, aclOpExecutor **executor);

aclnnStatus aclnnScatterPaKvCache(void *workspace, uint64_t workspaceSize,
                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
