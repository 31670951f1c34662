/* SPDX-License-Identifier: Apache-2.0 */
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"

static void seq_scalar(const llmk__conv1d_seq *a) {
  for (int64_t i0 = 0; i0 < a->L; i0 += LLMK__CONV_TILE)
    llmk__conv1d_cols(a, 0, a->n, i0,
                      a->L - i0 < LLMK__CONV_TILE ? a->L : i0 + LLMK__CONV_TILE);
}

const llmk__conv1d_kernels llmk__conv1d_kernels_scalar = {.isa = LLMK_ISA_SCALAR,
                                                          .seq = seq_scalar};
