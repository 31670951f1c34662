/* SPDX-License-Identifier: Apache-2.0 */
/* What an advance_step plan holds; shared by the op and its kernels. */
#ifndef LLMK_KERNELS_ADVANCE_STEP_H
#define LLMK_KERNELS_ADVANCE_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/view.h"
#include "dispatch/dispatch.h"
#include "llmk/types.h"

/* CANN's plain-mode lookup (llmk_advance_step_flat_get_workspace_size): the six tensors
 * (input_tokens, sampled, input_positions, seq_lens, slot_mapping, block_tables) read as
 * flat row-major arrays; the block of row q offset by q * row_len; block_tables has n
 * elements. */
typedef struct llmk__advance_step_flat {
  llmk_tensor t[6];
  int64_t n, row_len;
} llmk__advance_step_flat;

typedef struct llmk__advance_step_args {
  llmk__view input_tokens, input_positions, seq_lens, slot_mapping; /* [num_seqs*T] */
  llmk__view sampled;      /* [num_queries, 1] plain, [num_seqs, T] speculative */
  llmk__view block_tables; /* [num_seqs, max_blocks] */
  llmk__view spec_token;   /* [num_seqs, S] */
  llmk__view accepted_num; /* [num_seqs] */
  int64_t num_seqs, num_queries, block_size, max_blocks, spec_len /* S */;
  bool speculative;
  llmk__divider div;                   /* by block_size */
  const llmk__advance_step_flat *flat; /* the flat lookup, or NULL */
} llmk__advance_step_args;

/* Scalar building blocks of plain mode, reused by the SIMD kernels for the rows or
 * layouts they do not take: check rows [q0, q1), write rows [q0, q1), write the
 * padding rows. */
llmk_status llmk__advance_step_check_rows(const llmk__advance_step_args *a, int64_t q0,
                                          int64_t q1);
void llmk__advance_step_run_rows(const llmk__advance_step_args *a, int64_t q0,
                                 int64_t q1);
void llmk__advance_step_pad(const llmk__advance_step_args *a);

typedef struct llmk__advance_step_kernels {
  llmk_isa isa;
  /* Checks every value rule, then, only if all hold, writes the outputs. Returns
   * LLMK_SUCCESS or the error (message set, nothing written). */
  llmk_status (*execute)(const llmk__advance_step_args *a);
} llmk__advance_step_kernels;

/* NEON on aarch64 (block ids loaded lane by lane, no gather), AVX-512 on x86-64. No
 * AVX2 variant: without masked 64-bit stores and conversions the gather-based version
 * did not beat the scalar one enough to be worth one. */
#define LLMK__ADVANCE_STEP_VARIANTS(X) \
  LLMK__IF_NEON(X(advance_step, neon)) \
  LLMK__IF_AVX512(X(advance_step, avx512)) X(advance_step, scalar)
LLMK__KERNEL_LIST(advance_step, LLMK__ADVANCE_STEP_VARIANTS)

#endif
