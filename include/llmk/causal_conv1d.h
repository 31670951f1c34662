/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fused_causal_conv1d: causal depthwise convolution with a conv-state cache, in place
 * (CANN aclnnInplaceFusedCausalConv1d / V2; vLLM causal_conv1d_fn and
 * causal_conv1d_update). Full description: docs/ops/fused_causal_conv1d.md.
 *
 * Each channel d of a token is convolved with its own K taps over the token and the K-1
 * before it; the tokens before a chunk come from a cache line of conv_states, which the
 * op also updates. Per sequence b of L tokens, with C = conv_states.shape[1]:
 *
 *   1. lines: APC: R = cache_indices[b][initial_state_idx[b]],
 *                  W = cache_indices[b][block_idx_last_scheduled_token[b]];
 *      otherwise R = W = cache_indices[b] (b when cache_indices is NULL).
 *      R == pad_slot_id: the sequence is skipped (x and every line unchanged).
 *   2. history (first matching case): num_computed_tokens[b] == 0: K-1 zero rows,
 *      offset 0; num_accepted_tokens given: offset = max(nacc[b] - 1, 0), rows
 *      [0, offset+K-1) of line R; otherwise offset = C-(K-1), all C rows of line R.
 *   3. padded = history ++ x_b (Len rows); xp = padded[offset:] (K-1+L rows).
 *   4. M = min(C, Len); conv_states[W][C-M+i] = padded[Len-M+i] for i < M.
 *   5. APC only, B = block_size, nct = num_computed_tokens[b], first/last the block
 *      indices: seo = (L - (B - nct mod B)) mod B (mod >= 0);
 *      last_full = L - seo - (seo == 0 ? B : 0); n = last - first; for c < n:
 *      bdy = last_full - (n-1-c)*B; conv_states[cache_indices[b][first+c]][C-(K-1)+j]
 *      = xp[bdy+j] for j < K-1.
 *   6. y[i] = w[0]*xp[i] + w[1]*xp[i+1] + ... + w[K-1]*xp[i+K-1] (f32, in this order,
 *      no fused multiply-add), then + bias[d] if bias is given, then
 *      y = y / (1 + exp(-y)) if activation is LLMK_ACTIVATION_SILU.
 *   7. conv_mode 1: y[0:r] = 0 with r = min(max(K-1-nct, 0), L).
 *   8. residual_connection 1: y = x_b + y (f32 add).
 *   9. x_b = y (out entry: y_b = y), rounded once to x's dtype.
 * Every read of x and of a cache line sees the values from before the call.
 *
 * Tensors (dtype "X" is x's dtype):
 *   x: f32, f16 or bf16; [T, dim] with query_start_loc, or [batch, S, dim] (S tokens
 *      per sequence, query_start_loc NULL). Last stride 1; other strides any.
 *   weight: [K, dim], X or f32, K in 2..4; last stride 1.
 *   conv_states: [num_lines, C, dim], X; C >= K-1; last stride 1; must not overlap x.
 *   query_start_loc: [batch+1], i32/i64: [0] == 0, strictly increasing, [batch] == T.
 *   cache_indices: [batch] (or [batch, max_blocks] with APC), i32/i64; optional.
 *   num_accepted_tokens, num_computed_tokens: [batch], i32/i64; optional.
 *   block_idx_first_scheduled_token, block_idx_last_scheduled_token, initial_state_idx:
 *      [batch], i32/i64; all three given = APC on (then cache_indices is 2-D and
 *      num_computed_tokens and block_size >= 2 are required).
 *   bias: [dim], X or f32; optional.
 * Attributes: pad_slot_id (any value; -1 in vLLM and CANN), max_query_len (-1 =
 * unknown, else >= 1 and every sequence must be at most that long), residual_connection
 * 0/1, block_size 0 or >= 2, conv_mode 0/1 (1 needs num_computed_tokens), activation.
 *
 * Phase 1 statuses: LLMK_ERROR_NULL_POINTER (x, weight, conv_states, workspace_size or
 * plan NULL; 2-D x without query_start_loc; a data pointer NULL with elements),
 * LLMK_ERROR_INVALID_DTYPE, LLMK_ERROR_INVALID_SHAPE (ranks, extents, strides;
 * 3-D x with query_start_loc), LLMK_ERROR_INVALID_ATTRIBUTE (attribute ranges, APC
 * tensors given in part or without block_size >= 2 or num_computed_tokens, conv_mode 1
 * without num_computed_tokens).
 * Phase 2: LLMK_ERROR_INVALID_VALUE, before anything is written, for: query_start_loc
 * not starting at 0, not strictly increasing or not ending at T; a sequence longer than
 * max_query_len; a cache line (R, W or an APC fill line) neither in [0, num_lines) nor
 * pad_slot_id; an APC block index outside [0, max_blocks), initial_state_idx > last or
 * first > last; an APC fill whose boundary lies before the chunk's history
 * (bdy < 0); num_computed_tokens < 0; num_accepted_tokens > C-K+2 (history past the
 * line); a line written twice (by one or two sequences) or written by one sequence and
 * read by another. W or a fill line equal to pad_slot_id is not written (the outputs
 * of the sequence still are). The message names the tensor, the batch entry and the
 * value. Rows of a line that no rule writes keep their bits.
 */
#ifndef LLMK_CAUSAL_CONV1D_H
#define LLMK_CAUSAL_CONV1D_H

#include "llmk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum llmk_activation {
  LLMK_ACTIVATION_NONE = 0,
  LLMK_ACTIVATION_SILU = 1,
} llmk_activation;

LLMK_API llmk_status llmk_fused_causal_conv1d_get_workspace_size(
    const llmk_tensor *x, const llmk_tensor *weight, const llmk_tensor *conv_states,
    const llmk_tensor *query_start_loc /* optional */,
    const llmk_tensor *cache_indices /* optional */,
    const llmk_tensor *num_accepted_tokens /* optional */,
    const llmk_tensor *num_computed_tokens /* optional */,
    const llmk_tensor *block_idx_first_scheduled_token /* optional */,
    const llmk_tensor *block_idx_last_scheduled_token /* optional */,
    const llmk_tensor *initial_state_idx /* optional */,
    const llmk_tensor *bias /* optional */, int64_t pad_slot_id, int64_t max_query_len,
    int64_t residual_connection, int64_t block_size, int64_t conv_mode,
    llmk_activation activation, size_t *workspace_size, llmk_plan **plan);

/* The same op with its output in y: step 9 writes y_b (x's dtype) instead of x_b, and x
 * is only read. y: x's dtype, rank and shape, last stride 1, other strides any; it must
 * not overlap any other tensor of the call (LLMK_ERROR_OVERLAP, phase 1, nothing
 * written), except that y may be x's own view (same data, shape and strides): then the
 * call is the in-place one. y NULL: in place. Results are the in-place call's bytes.
 * Phase 1 statuses as above, plus for y: LLMK_ERROR_INVALID_DTYPE (dtype not x's),
 * LLMK_ERROR_INVALID_SHAPE (rank, shape or last stride), LLMK_ERROR_NULL_POINTER (data
 * NULL with elements), LLMK_ERROR_OVERLAP. A skipped sequence (R == pad_slot_id)
 * writes nothing, its rows of y included. Run with llmk_fused_causal_conv1d. */
LLMK_API llmk_status llmk_fused_causal_conv1d_out_get_workspace_size(
    const llmk_tensor *x, const llmk_tensor *weight, const llmk_tensor *conv_states,
    const llmk_tensor *query_start_loc /* optional */,
    const llmk_tensor *cache_indices /* optional */,
    const llmk_tensor *num_accepted_tokens /* optional */,
    const llmk_tensor *num_computed_tokens /* optional */,
    const llmk_tensor *block_idx_first_scheduled_token /* optional */,
    const llmk_tensor *block_idx_last_scheduled_token /* optional */,
    const llmk_tensor *initial_state_idx /* optional */,
    const llmk_tensor *bias /* optional */, int64_t pad_slot_id, int64_t max_query_len,
    int64_t residual_connection, int64_t block_size, int64_t conv_mode,
    llmk_activation activation, const llmk_tensor *y /* optional: NULL = in place */,
    size_t *workspace_size, llmk_plan **plan);

/* Where a cache line keeps its tokens (the options' state_align). */
typedef enum llmk_conv_state_align {
  /* CANN (and the entries above): the last K-1 history rows are rows [C-(K-1), C) */
  LLMK_CONV_STATE_TAIL = 0,
  /* vLLM (causal_conv1d_fn / causal_conv1d_update): history from row 0 (row
   * nacc[b]-1 with speculative decoding), writes from row 0 */
  LLMK_CONV_STATE_HEAD = 1,
} llmk_conv_state_align;

/* Options of llmk_fused_causal_conv1d_v2_get_workspace_size. Zero everything, then set
 * struct_size = sizeof(llmk_causal_conv1d_options); a member past struct_size counts
 * as zero / NULL, so a caller built against this header keeps working when members are
 * appended. */
typedef struct llmk_causal_conv1d_options {
  size_t struct_size;
  llmk_conv_state_align state_align;
  /* [batch], u8, i8, i32 or i64 (a bool tensor viewed as u8): 0 = the sequence has no
   * history (K-1 zero rows, no line read), as num_computed_tokens[b] == 0; NULL: all
   * have one (unless num_computed_tokens says otherwise) */
  const llmk_tensor *has_initial_state;
  /* [batch], i32 or i64, values >= 0: each line is a ring (causal-conv1d's circular
   * buffer); NULL: no ring */
  const llmk_tensor *cache_seqlens;
  /* the output, as in the _out entry; NULL: in place */
  const llmk_tensor *y;
} llmk_causal_conv1d_options;

/* The op with the options above, and with any element strides (none need be 1, so
 * vLLM's (dim, K) weight, (lines, dim, C) state and (dim, T) x are passed as
 * transposed views, without copies). Run with llmk_fused_causal_conv1d. opts NULL, or
 * all options zero with every last stride 1, is the _out entry with y NULL: the same
 * plan and bytes. Results never depend on the strides: a strided call gives the bytes
 * of the same call on contiguous copies.
 *
 * Steps 1, 3, 5-9 as above (step 5 writes rows [0, K-1) of a fill line with HEAD);
 * has_initial_state[b] == 0 joins num_computed_tokens[b] == 0 in step 2 (zero history).
 * With state_align HEAD, steps 2 and 4 become, per sequence b (the vLLM layout):
 *   2h. nacc given and nacc[b] >= 1 (speculative): offset = nacc[b] - 1,
 *       n = K-2+L; otherwise offset = 0, n = K-1. Unless the history is zero, it is
 *       rows [offset, offset+K-1) of line R (xp[0:K-1]).
 *   4h. conv_states[W][i] = xp[K-1+L-n+i] for i < n (xp = history ++ x_b); rows
 *       [n, C) keep their bits.
 * With cache_seqlens (a ring; state_align has no effect), s = cache_seqlens[b] mod C:
 *   2r. history row j (j < K-1) is row (s - (K-1) + j) mod C of line R.
 *   4r. conv_states[W][(s + i) mod C] = x_b[i] for max(L-C, 0) <= i < L; the other rows
 *       keep their bits. cache_seqlens is only read (the caller advances it).
 *
 * Phase 1 statuses as above, and: LLMK_ERROR_INVALID_ATTRIBUTE (struct_size smaller
 * than the first version's, or a non-zero byte past the members this library knows;
 * state_align not TAIL or HEAD; cache_seqlens with num_accepted_tokens or with prefix
 * caching), LLMK_ERROR_INVALID_DTYPE / INVALID_SHAPE / NULL_POINTER for
 * has_initial_state and cache_seqlens (dtype, [batch]), LLMK_ERROR_OVERLAP when a
 * written tensor's elements share memory (strides) or it overlaps another tensor.
 * Phase 2, LLMK_ERROR_INVALID_VALUE before anything is written, also for: HEAD with
 * nacc[b] >= 1 and K-2+L > C (the rows written pass the line), cache_seqlens[b] < 0. */
LLMK_API llmk_status llmk_fused_causal_conv1d_v2_get_workspace_size(
    const llmk_tensor *x, const llmk_tensor *weight, const llmk_tensor *conv_states,
    const llmk_tensor *query_start_loc /* optional */,
    const llmk_tensor *cache_indices /* optional */,
    const llmk_tensor *num_accepted_tokens /* optional */,
    const llmk_tensor *num_computed_tokens /* optional */,
    const llmk_tensor *block_idx_first_scheduled_token /* optional */,
    const llmk_tensor *block_idx_last_scheduled_token /* optional */,
    const llmk_tensor *initial_state_idx /* optional */,
    const llmk_tensor *bias /* optional */, int64_t pad_slot_id, int64_t max_query_len,
    int64_t residual_connection, int64_t block_size, int64_t conv_mode,
    llmk_activation activation, const llmk_causal_conv1d_options *opts /* optional */,
    size_t *workspace_size, llmk_plan **plan);

LLMK_API llmk_status llmk_fused_causal_conv1d(void *workspace, size_t workspace_size,
                                              llmk_plan *plan, llmk_context *ctx);

#ifdef __cplusplus
}
#endif

#endif
