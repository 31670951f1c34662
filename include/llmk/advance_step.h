/* SPDX-License-Identifier: Apache-2.0 */
/*
 * advance_step: prepare the inputs of the next decode step in place
 * (vLLM advance_step_flashattn; CANN aclnnAdvanceStep / aclnnAdvanceStepV2).
 * Full description: docs/ops/advance_step.md.
 *
 * Plain mode (spec_token == NULL and accepted_num == NULL). Equal to:
 *
 *   for q in [0, num_queries):
 *     pos = seq_lens[q]
 *     input_tokens[q]    = sampled_token_ids[q][0]
 *     input_positions[q] = pos
 *     seq_lens[q]        = pos + 1
 *     slot_mapping[q]    = block_tables[q][pos / block_size] * block_size
 *                          + pos % block_size
 *   for q in [num_queries, num_seqs):          (padding rows)
 *     input_tokens[q] = 0; input_positions[q] = 0; slot_mapping[q] = -1
 *
 *   input_tokens, input_positions, seq_lens, slot_mapping: [num_seqs]
 *   sampled_token_ids: [num_queries, 1] (or [num_queries])
 *   block_tables: [num_seqs, max_blocks]
 *
 * Speculative mode (spec_token and accepted_num both given), T = S + 1:
 *
 *   for i in [0, num_seqs), j in [0, T):
 *     pos = input_positions[i*T+j] + accepted_num[i] + 1
 *     input_positions[i*T+j] = pos
 *     seq_lens[i*T+j]        = pos + 1
 *     slot_mapping[i*T+j]    = block_tables[i][pos / block_size] * block_size
 *                              + pos % block_size
 *   f = index of the first -1 in sampled_token_ids[i] (T if none)
 *   input_tokens[i*T] = sampled_token_ids[i][f-1]
 *   input_tokens[i*T+1+s] = spec_token[i][s]            for s < S
 *
 *   input_tokens, input_positions, seq_lens, slot_mapping: [num_seqs*T]
 *   sampled_token_ids: [num_seqs, T]; spec_token: [num_seqs, S];
 *   accepted_num: [num_seqs]; block_tables: [num_seqs, max_blocks]
 *   num_queries must equal num_seqs.
 *
 * Flat lookup (llmk_advance_step_flat_get_workspace_size; CANN's aclnnAdvanceStep and
 * the plain mode of aclnnAdvanceStepV2): plain mode, except that the block is looked
 * up in block_tables read as one row-major array `flat` of numel elements (any rank,
 * shape[0] == num_seqs) and offset by row q's share of it:
 *
 *     slot_mapping[q] = (flat[pos / block_size] + q * (numel / num_seqs)) * block_size
 *                       + pos % block_size,          with pos / block_size < numel
 *
 * Every tensor is i32 or i64, each independently, with any non-negative strides.
 * Output tensors must not share elements with each other or with the inputs.
 *
 * Phase 1 statuses: LLMK_ERROR_NULL_POINTER (a required tensor, its data when it has
 * elements, workspace_size or plan), LLMK_ERROR_INVALID_DTYPE (not i32/i64),
 * LLMK_ERROR_INVALID_SHAPE (rank or extent disagreeing with the above, negative
 * stride), LLMK_ERROR_INVALID_ATTRIBUTE (num_seqs < 0, num_queries outside
 * [0, num_seqs], block_size <= 0, only one of spec_token / accepted_num, speculative
 * mode with num_queries != num_seqs).
 * Phase 2 statuses: the plan and workspace errors of docs/api.md, and
 * LLMK_ERROR_INVALID_VALUE, before anything is written, for: seq_lens[q] < 0 (plain),
 * input_positions < 0 or accepted_num < 0 (speculative), pos / block_size >=
 * max_blocks, a negative block id, a sampled row that starts with -1 (speculative),
 * or a result that overflows int64 or does not fit the dtype of its output tensor.
 * Flat lookup: the same statuses, with block_tables of any rank >= 1 and
 * pos / block_size < numel in place of max_blocks.
 * The run never starts threads; ctx may be NULL.
 */
#ifndef LLMK_ADVANCE_STEP_H
#define LLMK_ADVANCE_STEP_H

#include "llmk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

LLMK_API llmk_status llmk_advance_step_get_workspace_size(
    const llmk_tensor *input_tokens, const llmk_tensor *sampled_token_ids,
    const llmk_tensor *input_positions, const llmk_tensor *seq_lens,
    const llmk_tensor *slot_mapping, const llmk_tensor *block_tables,
    const llmk_tensor *spec_token /* optional */,
    const llmk_tensor *accepted_num /* optional */, int64_t num_seqs, int64_t num_queries,
    int64_t block_size, size_t *workspace_size, llmk_plan **plan);

/* Phase 1 of the flat lookup (above); phase 2 is llmk_advance_step. */
LLMK_API llmk_status llmk_advance_step_flat_get_workspace_size(
    const llmk_tensor *input_tokens, const llmk_tensor *sampled_token_ids,
    const llmk_tensor *input_positions, const llmk_tensor *seq_lens,
    const llmk_tensor *slot_mapping, const llmk_tensor *block_tables, int64_t num_seqs,
    int64_t num_queries, int64_t block_size, size_t *workspace_size, llmk_plan **plan);

LLMK_API llmk_status llmk_advance_step(void *workspace, size_t workspace_size,
                                       llmk_plan *plan, llmk_context *ctx);

#ifdef __cplusplus
}
#endif

#endif
