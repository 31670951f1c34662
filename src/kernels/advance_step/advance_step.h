/* What an advance_step plan holds; shared by the op and its kernels. */
#ifndef LLMK_KERNELS_ADVANCE_STEP_H
#define LLMK_KERNELS_ADVANCE_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/dispatch.h"
#include "llmk/types.h"

/* An i32 or i64 view of up to two dims; strides in elements. */
typedef struct llmk__iview {
  char *data;
  bool is64;
  int64_t s0, s1;
} llmk__iview;

/* Division of non-negative int64 values by a fixed positive divisor without a divide
 * instruction: a shift for powers of two, else q = (n * m) >> (63 + l) with
 * m = ceil(2^(63+l) / d), l = ceil(log2 d), exact for every n < 2^63. */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 llmk__u128;
#endif

typedef struct llmk__divider {
  uint64_t d, m;
  int shift; /* log2(d) for a power of two, else 63 + l */
  bool pow2;
} llmk__divider;

static inline llmk__divider llmk__divider_make(int64_t d) {
  llmk__divider v = {(uint64_t)d, 0, 0, (d & (d - 1)) == 0};
  int l = 0;
  while (((uint64_t)1 << l) < v.d) l++;
  if (v.pow2) {
    v.shift = l;
  } else {
#if defined(__SIZEOF_INT128__)
    llmk__u128 num = (llmk__u128)1 << (63 + l);
    v.m = (uint64_t)((num + v.d - 1) / v.d);
#endif
    v.shift = 63 + l;
  }
  return v;
}

static inline int64_t llmk__div(const llmk__divider *v, int64_t n) {
  if (v->pow2) return (int64_t)((uint64_t)n >> v->shift);
#if defined(__SIZEOF_INT128__)
  return (int64_t)(((llmk__u128)(uint64_t)n * v->m) >> v->shift);
#else
  return (int64_t)((uint64_t)n / v->d);
#endif
}

typedef struct llmk__advance_step_args {
  llmk__iview input_tokens, input_positions, seq_lens, slot_mapping; /* [num_seqs*T] */
  llmk__iview sampled;      /* [num_queries, 1] plain, [num_seqs, T] speculative */
  llmk__iview block_tables; /* [num_seqs, max_blocks] */
  llmk__iview spec_token;   /* [num_seqs, S] */
  llmk__iview accepted_num; /* [num_seqs] */
  int64_t num_seqs, num_queries, block_size, max_blocks, spec_len /* S */;
  bool speculative;
  llmk__divider div; /* by block_size */
} llmk__advance_step_args;

static inline int64_t llmk__iv_get(const llmk__iview *v, int64_t i, int64_t j) {
  int64_t off = i * v->s0 + j * v->s1;
  return v->is64 ? ((const int64_t *)(const void *)v->data)[off]
                 : ((const int32_t *)(const void *)v->data)[off];
}

static inline void llmk__iv_set(const llmk__iview *v, int64_t i, int64_t value) {
  int64_t off = i * v->s0;
  if (v->is64)
    ((int64_t *)(void *)v->data)[off] = value;
  else
    ((int32_t *)(void *)v->data)[off] = (int32_t)value;
}

static inline bool llmk__iv_fits(const llmk__iview *v, int64_t value) {
  return v->is64 || (value >= INT32_MIN && value <= INT32_MAX);
}

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

/* No AVX2 variant: without masked 64-bit stores and conversions the gather-based
 * version did not beat the scalar one enough to be worth one. */
#define LLMK__ADVANCE_STEP_VARIANTS(X) \
  LLMK__IF_AVX512(X(advance_step, avx512)) X(advance_step, scalar)
LLMK__KERNEL_LIST(advance_step, LLMK__ADVANCE_STEP_VARIANTS)

#endif
