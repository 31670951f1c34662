/* SPDX-License-Identifier: Apache-2.0 */
/* Naive reference of advance_step, written from docs/spec (advance_step.md), not from
 * the library. Plain contiguous int64_t arrays; block_tables is [num_seqs][max_blocks].
 *
 * Both functions return 0 on success, or -1 without writing anything when a value
 * rule of <llmk/advance_step.h> is violated: seq_lens < 0 (plain), input_positions < 0
 * or accepted_num < 0 (speculative), pos / block_size >= max_blocks, a negative block
 * id at the looked-up entry, a sampled row starting with -1 (speculative), or a result
 * that overflows int64. Whether each result fits an i32 output is a separate question:
 * advance_step_ref_all_fit_i32(). Attributes must already be valid (block_size > 0,
 * 0 <= num_queries <= num_seqs, max_blocks >= 0). */
#ifndef LLMK_ADVANCE_STEP_REF_H
#define LLMK_ADVANCE_STEP_REF_H

#include <stdint.h>

/* Plain mode. input_tokens, input_positions, seq_lens (in/out), slot_mapping:
 * [num_seqs]; sampled: [num_queries] (column 0 of [num_queries, 1]). */
int advance_step_ref_plain(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                           int64_t max_blocks, const int64_t *sampled,
                           const int64_t *block_tables, int64_t *input_tokens,
                           int64_t *input_positions, int64_t *seq_lens,
                           int64_t *slot_mapping);

/* Speculative mode, T = S + 1. input_tokens, input_positions (in/out), seq_lens,
 * slot_mapping: [num_seqs * T]; sampled: [num_seqs][T]; spec_token: [num_seqs][S];
 * accepted_num: [num_seqs]. */
int advance_step_ref_spec(int64_t num_seqs, int64_t S, int64_t block_size,
                          int64_t max_blocks, const int64_t *sampled,
                          const int64_t *spec_token, const int64_t *accepted_num,
                          const int64_t *block_tables, int64_t *input_tokens,
                          int64_t *input_positions, int64_t *seq_lens,
                          int64_t *slot_mapping);

/* Flat lookup (llmk_advance_step_flat_get_workspace_size, docs/ops/advance_step.md
 * "Flat lookup"): plain mode, but block_tables is read as one row-major array `flat`
 * of `numel` elements and row q's block is offset by its share, row_len = numel /
 * num_seqs:
 *   slot_mapping[q] = (flat[pos / block_size] + q * row_len) * block_size
 *                     + pos % block_size,    pos / block_size < numel.
 * Every other array holds its tensor's elements in row-major order (element q of the
 * view); only the first num_seqs (sampled: num_queries) are read or written. -1, with
 * nothing written, for seq_lens < 0 (or INT64_MAX), pos / block_size >= numel, a
 * negative block id, or a slot that overflows int64. */
int advance_step_ref_flat(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                          int64_t numel, const int64_t *sampled, const int64_t *flat,
                          int64_t *input_tokens, int64_t *input_positions,
                          int64_t *seq_lens, int64_t *slot_mapping);

/* 1 if v fits int32_t. */
int advance_step_ref_fits_i32(int64_t v);
/* 1 if every v[0..n) fits int32_t, i.e. an i32 output tensor can hold the result. */
int advance_step_ref_all_fit_i32(const int64_t *v, int64_t n);

#endif
