/* SPDX-License-Identifier: Apache-2.0 */
/* Naive reference of gather_pa_kv_cache, written from the spec (kv_cache_scatter.md, the
 * read path) and the layout definitions of <llmk/kv_cache.h>, not from the library: one
 * element at a time, its offset computed from the layout formula; fp8 dequantization
 * through the format definitions of convert_ref.h. Tensors are plain llmk_tensor
 * descriptors (nothing of the library is called). */
#ifndef LLMK_GATHER_PA_KV_CACHE_REF_H
#define LLMK_GATHER_PA_KV_CACHE_REF_H

#include <stdint.h>

#include "llmk/types.h"

/* Called for every output element whose expected value is a NaN (an fp8 NaN code):
 * `dst` is the element in the output, `neg` its sign. Any NaN of that sign is right. */
typedef void (*gather_pa_kv_cache_ref_nan_fn)(void *user, const char *dst, int neg);

/* One cache (key or value) gathered into its output, [T, H, D] with any strides:
 * for sequence i and position p < seq_lens[i], row t (counted over the sequences in
 * order) of `out` receives cache element (block_tables[i * max_blocks + p / bs],
 * p % bs, h, d). Layouts (0 blocks, 1 x-split, 2 NZ, the values of llmk_kv_layout):
 * blocks [nb, bs, H, D]; x-split key [nb, H, D/x, bs, x] (x = 16 / element size),
 * x-split value [nb, H, D, bs] (is_value); NZ [nb, H*D/ld, bs, ld] (ld = 32 / element
 * size). Equal dtypes copy the element's bytes; an fp8 cache into an f32/f16/bf16
 * output gives out_dtype(f32(code) * scale), the product exact, rounded once
 * (nearest even), with scale = scales[h] when num_scales > 1, else scales[0].
 * seq_lens entries <= 0 contribute no rows. */
void gather_pa_kv_cache_ref_one(int layout, int is_value, const llmk_tensor *cache,
                                const int64_t *seq_lens, int64_t batch,
                                const int64_t *block_tables, int64_t max_blocks,
                                const float *scales, int64_t num_scales,
                                const llmk_tensor *out, gather_pa_kv_cache_ref_nan_fn nan,
                                void *user);

/* The same with CANN's controls (aclnnGatherPaKvCache): sequence i's rows start at
 * starts[i] (NULL: right after sequence i - 1's), and its p-th position reads block
 * block_tables[i * max_blocks + first_col[i] + p / bs] (first_col NULL: all 0). */
void gather_pa_kv_cache_ref_one_at(int layout, int is_value, const llmk_tensor *cache,
                                   const int64_t *starts, const int64_t *seq_lens,
                                   const int64_t *first_col, int64_t batch,
                                   const int64_t *block_tables, int64_t max_blocks,
                                   const float *scales, int64_t num_scales,
                                   const llmk_tensor *out,
                                   gather_pa_kv_cache_ref_nan_fn nan, void *user);

#endif
