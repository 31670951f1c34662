/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Paged KV cache: scatter_pa_kv_cache writes each step's new K/V into the cache by
 * slot (vLLM reshape_and_cache(_flash), CANN aclnnScatterPaKvCache); gather_pa_kv_cache
 * reads sequences back by block table. Full description: docs/ops/scatter_pa_kv_cache.md
 * and docs/ops/gather_pa_kv_cache.md.
 *
 * A slot is block_id * block_size + offset; b = slot / block_size, o = slot % block_size.
 * Logical cache element (b, o, h, d) lives, per layout, at:
 *
 *   LLMK_KV_BLOCKS  cache [num_blocks, block_size, H, D], any strides:     [b, o, h, d]
 *                   (NHD; HND is the same view with strides [.., D, bs*D, 1]; K and V
 *                   caches sharing one buffer are two views of it)
 *   LLMK_KV_XSPLIT  key cache   [num_blocks, H, D/x, block_size, x]:       [b, h, d/x, o,
 * d%x] value cache [num_blocks, H, D, block_size]:            [b, h, d, o] x = 16 bytes /
 * cache element size (vLLM paged attention v1/v2, CPU) LLMK_KV_NZ      cache [num_blocks,
 * H*D/ld, block_size, ld]:   [b, (h*D+d)/ld, o, (h*D+d)%ld] ld = 32 bytes / cache element
 * size (CANN PA_NZ); (H*D) % ld == 0
 *
 * The x-split and NZ caches may have any non-negative strides too.
 *
 * Element types: when source and destination share a dtype, elements of any 1-, 2- or
 * 4-byte dtype (f32, f16, bf16, i8, u8, i32, fp8) are copied bit for bit. With an fp8
 * (e4m3fn or e5m2) cache and an f32, f16 or bf16 source, scatter stores
 *   fp8(f32(src) / scale)       (f32 division, then round to nearest even, saturating)
 * and gather of an fp8 cache into f32, f16 or bf16 stores
 *   out_dtype(f32(cache) * scale)   (f32 product, rounded once to the output dtype).
 * Scales are f32 tensors of shape [], [1] (per tensor) or [H] (per head), required
 * exactly when a conversion happens; each value must be finite and > 0 (phase 2).
 */
#ifndef LLMK_KV_CACHE_H
#define LLMK_KV_CACHE_H

#include "llmk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum llmk_kv_layout {
  LLMK_KV_BLOCKS = 0,
  LLMK_KV_XSPLIT = 1,
  LLMK_KV_NZ = 2,
} llmk_kv_layout;

/* "blocks", "xsplit", "nz"; "invalid" otherwise. */
LLMK_API const char *llmk_kv_layout_name(llmk_kv_layout layout);

/*
 * scatter_pa_kv_cache. Equal to:
 *
 *   for t in [0, T):                      (in order: a later token wins a duplicate slot)
 *     s = slot_mapping[t]; if s < 0: continue          (padding token)
 *     b = s / block_size; o = s % block_size
 *     for h, d: key_cache(b, o, h, d) = conv(key[t, h, d], k_scale[h])
 *               value_cache(b, o, h, d) = conv(value[t, h, d], v_scale[h])   (if value)
 *
 *   key [T, H, Dk], value [T, H, Dv]: any strides (views of a fused qkv tensor are fine).
 *   value and value_cache: both given, or both NULL (K-only caches, e.g. MLA). Each
 *   side follows the dtype rule above on its own: value may have a dtype other than
 *   key's (an i8 key beside an f16 value, as CANN's PA_NZ allows), and a bf16 value
 *   cache beside an fp8 key cache is fine.
 *   slot_mapping [T]: i32 or i64, any stride.
 *   k_scale / v_scale: see above; NULL when no conversion happens.
 *   num_blocks and block_size are read from key_cache; value_cache must agree.
 * Nothing else in the caches changes. Results are the same for any thread count.
 *
 * Phase 1 statuses: LLMK_ERROR_NULL_POINTER (key, key_cache, slot_mapping,
 * workspace_size or plan NULL; value without value_cache; a required scale missing; a
 * data pointer NULL with elements), LLMK_ERROR_INVALID_DTYPE (an element size other
 * than 1, 2, 4; cache dtype neither the source's nor fp8 from f32/f16/bf16; slot_mapping
 * not i32/i64; a scale not f32), LLMK_ERROR_INVALID_ATTRIBUTE (unknown layout;
 * value_cache without value; a scale given where no conversion happens),
 * LLMK_ERROR_INVALID_SHAPE (ranks, extents that disagree, D not a multiple of x for an
 * x-split key cache, H*D not a multiple of ld for NZ, scale not [], [1] or [H],
 * negative strides or overflowing spans).
 * Phase 2: LLMK_ERROR_INVALID_VALUE, before any write, for a slot >= num_blocks *
 * block_size (the message names the token and the slot) or a scale that is not finite
 * and > 0; plus the plan and workspace statuses of docs/api.md.
 */
LLMK_API llmk_status llmk_scatter_pa_kv_cache_get_workspace_size(
    const llmk_tensor *key, const llmk_tensor *value /* optional */,
    const llmk_tensor *key_cache, const llmk_tensor *value_cache /* optional */,
    const llmk_tensor *slot_mapping, const llmk_tensor *k_scale /* optional */,
    const llmk_tensor *v_scale /* optional */, llmk_kv_layout layout,
    size_t *workspace_size, llmk_plan **plan);

LLMK_API llmk_status llmk_scatter_pa_kv_cache(void *workspace, size_t workspace_size,
                                              llmk_plan *plan, llmk_context *ctx);

/*
 * scatter_pa_kv_cache_compressed: the compressed writes of CANN's aclnnScatterPaKvCache
 * (scatterMode "Alibi", "Rope", "Omni"), where each (sequence, head) pair writes its
 * own run of single-head rows; phase 2 is llmk_scatter_pa_kv_cache. Equal to:
 *
 *   start = 0
 *   for b in [0, B):                     L = seq_lens[b]
 *     for h in [0, H):                   i = b * H + h; s = slot_mapping[i]
 *       w = compress_lens[i]
 *       ALIBI: rows = tokens [L - w, L)                         (the last w tokens)
 *       ROPE, OMNI: o = compress_seq_offset[i]; if o == -1 or w == 0: o = L
 *         if o == L: rows = tokens [0, L)                        (nothing compressed)
 *         ROPE: rows = tokens [0, o), mean(tokens [o, o + w)), tokens [o + w, L)
 *         OMNI: rows = tokens [0, o), tokens [o + w, L)          (the window dropped)
 *       if s >= 0: row j of rows goes to slot s + j, for head h of the token:
 *         key_cache(b', o', 0, d) = key[start + token, h, d]   (b' o' of slot s + j)
 *         (value: the same rows of value into value_cache)
 *     start += L
 *
 *   key [N, H, Dk], value [N, H, Dv] (or both value and value_cache NULL), any strides;
 *   caches [num_blocks, block_size, 1, D] (LLMK_KV_BLOCKS with one head), any strides,
 *   of their source's dtype (bits copied); ROPE's mean is the f32 sum of the w rows in
 *   token order divided by w in f32, rounded to nearest even to the dtype (f32, f16 or
 *   bf16 only). seq_lens [B]; slot_mapping, compress_lens, compress_seq_offset [B * H]
 *   (offsets for ROPE and OMNI only); each i32 or i64, any stride.
 *   Pairs are written in order i = 0, 1, ..: a later pair wins a slot written twice.
 *
 * Phase 1 statuses as for scatter (dtypes: no conversion, no scales), plus
 * LLMK_ERROR_INVALID_ATTRIBUTE for an unknown mode, or offsets given to ALIBI;
 * LLMK_ERROR_NULL_POINTER for compress_lens, seq_lens or (ROPE, OMNI) offsets NULL;
 * LLMK_ERROR_INVALID_SHAPE for a cache dim 2 other than 1 or index tensors not of the
 * shapes above; LLMK_ERROR_OVERLAP where a cache overlaps another tensor.
 * Phase 2: LLMK_ERROR_INVALID_VALUE, before any write, for a negative seq_lens entry,
 * sum(seq_lens) != N, w < 0, w > L (ALIBI), an offset other than -1 outside [0, L] or
 * o + w > L where something is compressed (ROPE, OMNI), or a pair whose slot s or
 * last slot is >= num_blocks * block_size (negative slots skip their pair).
 */
typedef enum llmk_kv_compress {
  LLMK_KV_COMPRESS_ALIBI = 1,
  LLMK_KV_COMPRESS_ROPE = 2,
  LLMK_KV_COMPRESS_OMNI = 3,
} llmk_kv_compress;

LLMK_API llmk_status llmk_scatter_pa_kv_cache_compressed_get_workspace_size(
    const llmk_tensor *key, const llmk_tensor *value /* optional */,
    const llmk_tensor *key_cache, const llmk_tensor *value_cache /* optional */,
    const llmk_tensor *slot_mapping, const llmk_tensor *compress_lens,
    const llmk_tensor *compress_seq_offset /* ROPE and OMNI */,
    const llmk_tensor *seq_lens, llmk_kv_compress mode, size_t *workspace_size,
    llmk_plan **plan);

/*
 * gather_pa_kv_cache: the read path. Equal to:
 *
 *   t = 0
 *   for i in [0, B):
 *     for p in [0, seq_lens[i]):
 *       b = block_tables[i][p / block_size]; o = p % block_size
 *       for h, d: key_out[t, h, d] = conv(key_cache(b, o, h, d), k_scale[h])
 *                 value_out[t, h, d] = conv(value_cache(b, o, h, d), v_scale[h])
 *       t += 1
 *
 *   block_tables [B, max_blocks] and seq_lens [B]: i32 or i64, any strides.
 *   key_out [sum(seq_lens), H, Dk], value_out [sum(seq_lens), H, Dv]: any strides;
 *   value_cache and value_out: both given or both NULL; value_out has key_out's dtype
 *   (each cache follows its own dtype rule, as for scatter).
 * A cache with block_size 0 (or num_blocks 0) has no slots: only empty sequences can be
 * gathered from it, and scatter rejects every non-negative slot.
 * Scatter then gather returns the original K/V bit for bit (same dtypes).
 *
 * Phase 1 statuses as for scatter (plus LLMK_ERROR_INVALID_DTYPE for a value_out whose
 * dtype is not key_out's), with the roles swapped: the caches are the sources
 * (key_cache required; value_out without value_cache is LLMK_ERROR_INVALID_ATTRIBUTE)
 * and key_out/value_out the destinations (key_out required; value_cache without
 * value_out is LLMK_ERROR_NULL_POINTER); block_tables and seq_lens are required, and
 * their dtype rules are slot_mapping's.
 * Phase 2: LLMK_ERROR_INVALID_VALUE, before any write, for a negative seq_lens entry,
 * sum(seq_lens) != key_out.shape[0], a sequence needing more than max_blocks blocks,
 * a used block id outside [0, num_blocks), or a bad scale value.
 */
LLMK_API llmk_status llmk_gather_pa_kv_cache_get_workspace_size(
    const llmk_tensor *key_cache, const llmk_tensor *value_cache /* optional */,
    const llmk_tensor *block_tables, const llmk_tensor *seq_lens,
    const llmk_tensor *k_scale /* optional */, const llmk_tensor *v_scale /* optional */,
    const llmk_tensor *key_out, const llmk_tensor *value_out /* optional */,
    llmk_kv_layout layout, size_t *workspace_size, llmk_plan **plan);

LLMK_API llmk_status llmk_gather_pa_kv_cache(void *workspace, size_t workspace_size,
                                             llmk_plan *plan, llmk_context *ctx);

/*
 * gather_pa_kv_cache with CANN's two extra controls (aclnnGatherPaKvCache); phase 2 is
 * llmk_gather_pa_kv_cache. With seq_offset NULL and seq_lens_cumsum false it is the
 * call above. Equal to:
 *
 *   for i in [0, B):
 *     start = cumsum ? seq_lens[i] : sum(seq_lens[0..i))
 *     len   = cumsum ? seq_lens[i + 1] - seq_lens[i] : seq_lens[i]
 *     first = seq_offset ? seq_offset[i] / block_size : 0
 *     for p in [0, len):
 *       b = block_tables[i][first + p / block_size]; o = p % block_size
 *       key_out[start + p, h, d] = conv(key_cache(b, o, h, d), k_scale[h])  (value too)
 *
 *   seq_lens: [B], or [B + 1] cumulative (seq_lens_cumsum != 0): then key_out.shape[0]
 * must be seq_lens[B], and rows [0, seq_lens[0]) of the outputs are left unchanged.
 *   seq_offset: optional [B], i32 or i64, any stride; only the block-table column of a
 *   sequence's first block moves (o stays p % block_size).
 * Phase 1 adds to the gather's statuses: LLMK_ERROR_INVALID_SHAPE for seq_lens not
 * [B] ([B + 1] cumulative) or seq_offset not [B]; LLMK_ERROR_INVALID_DTYPE for a
 * seq_offset not i32/i64; LLMK_ERROR_OVERLAP where an output overlaps seq_offset.
 * Phase 2 adds LLMK_ERROR_INVALID_VALUE, before any write, for a negative seq_offset
 * entry, a cumulative seq_lens with a negative seq_lens[0] or a decrease, and a
 * sequence whose blocks run past max_blocks from its first column.
 */
LLMK_API llmk_status llmk_gather_pa_kv_cache_ex_get_workspace_size(
    const llmk_tensor *key_cache, const llmk_tensor *value_cache /* optional */,
    const llmk_tensor *block_tables, const llmk_tensor *seq_lens,
    const llmk_tensor *seq_offset /* optional */, int seq_lens_cumsum,
    const llmk_tensor *k_scale /* optional */, const llmk_tensor *v_scale /* optional */,
    const llmk_tensor *key_out, const llmk_tensor *value_out /* optional */,
    llmk_kv_layout layout, size_t *workspace_size, llmk_plan **plan);

#ifdef __cplusplus
}
#endif

#endif
