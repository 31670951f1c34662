/* SPDX-License-Identifier: Apache-2.0 */
/* Naive reference of vLLM's causal_conv1d_fn and causal_conv1d_update (the Triton
 * kernels of vllm/model_executor/layers/mamba/ops/causal_conv1d.py) and of the
 * circular-buffer update (cache_seqlens) of causal-conv1d's CUDA causal_conv1d_update,
 * written from their semantics in their own tensor layouts: x (dim, T) or
 * (batch, dim, seqlen) as strided views, weight (dim, K), conv_state
 * (lines, dim, state_len), all with explicit element strides. Not from the library.
 *
 * Arithmetic in llmk's order (not vLLM's, which starts the sum at the bias):
 * acc = w[0]*xp[i]; acc = acc + w[k]*xp[i+k]; + bias; silu y / (1 + expf(-y)); one
 * rounding to x's dtype. State rows are raw element copies. Every sequence reads its
 * history before it writes; tests give sequences distinct lines. */
#ifndef LLMK_CAUSAL_CONV1D_VLLM_REF_H
#define LLMK_CAUSAL_CONV1D_VLLM_REF_H

#include <stdint.h>

#include "fused_causal_conv1d_ref.h"

typedef struct vllm_ref_args {
  fcc_ref_dtype dt;  /* x, out and conv_state */
  fcc_ref_dtype wdt; /* weight */
  fcc_ref_dtype bdt; /* bias */
  int64_t dim, K, batch;
  /* token t (of the whole batch: query_start_loc's numbering, or t of sequence b of a
   * 3-D x), channel d: x[b*x_sb + t*x_st + d*x_sd]; out likewise */
  const void *x;
  int64_t x_sb, x_st, x_sd;
  void *out;
  int64_t o_sb, o_st, o_sd;
  const void *weight; /* (dim, K) */
  int64_t w_sd, w_sk;
  const void *bias; /* [dim] contiguous, or NULL */
  void *conv_state; /* (lines, dim, state_len) */
  int64_t num_lines, state_len, s_sl, s_sd, s_st;
  const int64_t *query_start_loc;         /* [batch+1]; NULL: 3-D, seqlen tokens each */
  int64_t seqlen;                         /* 3-D x */
  const int64_t *cache_indices;           /* NULL: line b */
  const unsigned char *has_initial_state; /* fn only; NULL: all 1 */
  const int64_t *num_accepted_tokens;     /* update only */
  const int64_t *cache_seqlens;           /* ring update only */
  int64_t max_query_len;                  /* update with query_start_loc */
  int64_t pad_slot_id;
  int silu;
} vllm_ref_args;

void vllm_ref_fn(const vllm_ref_args *a);
void vllm_ref_update(const vllm_ref_args *a);
/* causal-conv1d's circular update: x (batch, dim, seqlen), cache_seqlens given */
void vllm_ref_update_ring(const vllm_ref_args *a);

#endif
