/* SPDX-License-Identifier: Apache-2.0 */
/* Naive reference of fused_causal_conv1d, written from the spec's nine steps
 * (docs/spec causal_conv1d.md) and the rules of <llmk/causal_conv1d.h>, not from the
 * library.
 *
 * x and conv_states are raw element arrays of their dtype (f32 bits, or f16 / bf16
 * codes) addressed with element strides, so the reference can run directly on a copy
 * of a test's buffers; it reads everything from a snapshot taken before it writes.
 * Cache-line writes (steps 4-5) copy raw element bits; the convolution widens to f32
 * (exactly), accumulates acc = w[0]*xp[i]; acc = acc + w[k]*xp[i+k] (k = 1..K-1), each
 * operation rounded to f32, then + bias, silu (y / (1 + expf(-y))), conv_mode zeroing,
 * residual (x + y in f32), and one rounding to x's dtype (nearest, ties to even).
 *
 * fcc_ref_run() first checks every phase-2 value rule of the header and returns a
 * non-zero FCC_REF_E_* code, without writing anything, if one is violated; 0 otherwise.
 * Attribute and shape rules (phase 1) must already hold. */
#ifndef LLMK_FUSED_CAUSAL_CONV1D_REF_H
#define LLMK_FUSED_CAUSAL_CONV1D_REF_H

#include <stdint.h>

typedef enum fcc_ref_dtype {
  FCC_REF_F32 = 0,
  FCC_REF_F16 = 1,
  FCC_REF_BF16 = 2
} fcc_ref_dtype;

typedef enum fcc_ref_error {
  FCC_REF_OK = 0,
  FCC_REF_E_QSL_START,     /* query_start_loc[0] != 0 */
  FCC_REF_E_QSL_ORDER,     /* not strictly increasing */
  FCC_REF_E_QSL_END,       /* query_start_loc[batch] != T */
  FCC_REF_E_MAX_QUERY_LEN, /* a sequence longer than max_query_len */
  FCC_REF_E_NCT,           /* num_computed_tokens < 0 */
  FCC_REF_E_BLOCK_IDX,     /* APC block index outside [0, max_blocks) */
  FCC_REF_E_INIT_GT_LAST,  /* initial_state_idx > last */
  FCC_REF_E_FIRST_GT_LAST, /* first > last */
  FCC_REF_E_LINE,          /* R, W or a fill line neither in [0, num_lines) nor pad */
  FCC_REF_E_BDY,           /* an APC fill boundary before the chunk's history */
  FCC_REF_E_NACC,          /* num_accepted_tokens > C-K+2 */
  FCC_REF_E_DUP_WRITE,     /* a line written twice */
  FCC_REF_E_READ_WRITTEN   /* a line written by one sequence and read by another */
} fcc_ref_error;

typedef struct fcc_ref_args {
  fcc_ref_dtype x_dtype;      /* x and conv_states */
  fcc_ref_dtype weight_dtype; /* f32 or x's */
  fcc_ref_dtype bias_dtype;   /* f32 or x's */
  int64_t batch, dim, K;

  /* x: seq_len_3d == 0: 2-D, num_tokens tokens, token t at t*x_stride_t elements,
   * sequences from query_start_loc[batch+1]. seq_len_3d = S > 0: 3-D [batch, S, dim],
   * token (b, s) at b*x_stride_b + s*x_stride_t. Channel stride 1. */
  void *x;
  int64_t num_tokens;
  int64_t seq_len_3d;
  int64_t x_stride_b, x_stride_t;
  const int64_t *query_start_loc;

  const void *weight; /* [K][dim], row k at k*weight_stride elements */
  int64_t weight_stride;
  const void *bias; /* [dim] contiguous, or NULL */

  void *conv_states; /* [num_lines][C][dim] */
  int64_t num_lines, C, cs_stride_line, cs_stride_row;

  /* Index tensors as contiguous int64 arrays. cache_indices: NULL (line = b),
   * [batch] (max_blocks == 0) or [batch][max_blocks] (APC). APC is on when
   * block_idx_first is given (then block_idx_last, initial_state_idx,
   * num_computed_tokens, a 2-D cache_indices and block_size >= 2 must be too). */
  const int64_t *cache_indices;
  int64_t max_blocks;
  const int64_t *num_accepted_tokens, *num_computed_tokens;
  const int64_t *block_idx_first, *block_idx_last, *initial_state_idx;

  int64_t pad_slot_id, max_query_len, residual_connection, block_size, conv_mode;
  int silu;

  /* Optional outputs, [total tokens][dim] in logical token order (2-D: t; 3-D:
   * b*S + s); entries of skipped sequences are left alone. */
  float *y_act;           /* after step 7 (silu, conv_mode), before the residual */
  float *y_final;         /* the f32 value rounded in step 9 */
  unsigned char *skipped; /* [batch]: 1 = R == pad_slot_id */
  int64_t *bad_batch;     /* the batch entry of a violated rule (-1 if none) */
} fcc_ref_args;

int fcc_ref_run(const fcc_ref_args *a);

/* Helpers for tests: element size; raw bits <-> f32 (f16 / bf16 via convert_ref). */
int fcc_ref_dtype_size(fcc_ref_dtype dt);
float fcc_ref_widen(fcc_ref_dtype dt, uint32_t bits);
uint32_t fcc_ref_narrow(fcc_ref_dtype dt, float f);
uint32_t fcc_ref_load(const void *base, int64_t elem, fcc_ref_dtype dt);
void fcc_ref_store(void *base, int64_t elem, fcc_ref_dtype dt, uint32_t bits);

#endif
