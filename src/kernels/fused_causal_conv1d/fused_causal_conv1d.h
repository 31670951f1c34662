/* SPDX-License-Identifier: Apache-2.0 */
/* fused_causal_conv1d kernels: the conv of one sequence over a block of channels, with
 * the window of the last K-1 inputs kept as f32 while the tokens stream by. */
#ifndef LLMK_KERNELS_CONV1D_H
#define LLMK_KERNELS_CONV1D_H

#include <stddef.h>

#include "dispatch/dispatch.h"
#include "kernels/common/exp.h"
#include "kernels/convert/convert-elem.h"
#include "llmk/types.h"

#define LLMK__CONV_SILU 1u
#define LLMK__CONV_RESID 2u /* y = x + y */

typedef struct llmk__conv1d_seq {
  const char *x;     /* token 0, channel 0 of the block: the inputs */
  ptrdiff_t xstride; /* bytes from one token to the next */
  char *y; /* the outputs: x itself (in place: a row is read, then overwritten) or rows
            * that overlap no x row */
  ptrdiff_t ystride; /* bytes from one output token to the next */
  int64_t L;         /* tokens */
  const char *hist;  /* the K-1 rows before the chunk (xp[0..K-2]), x's dtype */
  ptrdiff_t hstride; /* bytes between history rows */
  const float *w;    /* tap k of channel c at w[k * wstride + c] */
  size_t wstride;
  const float *bias; /* or NULL */
  llmk_dtype dt;     /* of x and hist */
  int K;
  unsigned flags;
  int64_t reset; /* conv_mode 1: y = 0 (before the residual) for tokens < reset */
  size_t n;      /* channels */
  float *wbuf;   /* [K-1][n] f32: the window carried from one tile to the next */
} llmk__conv1d_seq;

/* Every NaN result is stored as this quiet NaN: where two NaNs meet, x86 keeps the first
 * operand's, and compilers order the operands of commutative operations as they like, so
 * a NaN's sign and payload would otherwise depend on the ISA and the compiler. */
#define LLMK__CONV_NAN (__builtin_nanf(""))

/* Tokens per tile: a tile walks its rows once per group of channels, so that a row is
 * read in order and the tile's rows stay in L1. */
#define LLMK__CONV_TILE 16

/* The reference order of operations, which every ISA repeats: y = w[0]*xp[i]; then
 * y = y + w[k]*xp[i+k] for k = 1..K-1; + bias; SiLU; reset; residual; one rounding.
 * Channels [c0, c1) of tokens [i0, i1); the window comes from hist (i0 == 0) or wbuf,
 * and goes back to wbuf when tokens follow. */
static inline void llmk__conv1d_cols(const llmk__conv1d_seq *a, size_t c0, size_t c1,
                                     int64_t i0, int64_t i1) {
  const llmk_dtype dt = a->dt;
  const size_t esz = llmk_dtype_size(dt), ws = a->wstride;
  const int K = a->K;
  for (size_t g = c0; g < c1; g += 16) {
    size_t m = c1 - g < 16 ? c1 - g : 16;
    float h[3][16];
    for (int r = 0; r < K - 1; r++)
      for (size_t j = 0; j < m; j++)
        h[r][j] = i0 == 0 ? llmk__load_f32(a->hist + r * a->hstride + (g + j) * esz, dt)
                          : a->wbuf[(size_t)r * a->n + g + j];
    for (int64_t i = i0; i < i1; i++) {
      const char *row = a->x + i * a->xstride;
      char *out = a->y + i * a->ystride;
      for (size_t j = 0; j < m; j++) {
        size_t c = g + j;
        float xi = llmk__load_f32(row + c * esz, dt);
        float acc = a->w[c] * h[0][j];
        for (int k = 1; k < K - 1; k++) acc = acc + a->w[(size_t)k * ws + c] * h[k][j];
        acc = acc + a->w[(size_t)(K - 1) * ws + c] * xi;
        if (a->bias) acc = acc + a->bias[c];
        if (a->flags & LLMK__CONV_SILU) acc = llmk__silu(acc);
        if (i < a->reset) acc = 0.0f;
        if (a->flags & LLMK__CONV_RESID) acc = xi + acc;
        if (acc != acc) acc = LLMK__CONV_NAN; /* one NaN, whatever the operand order */
        llmk__store_f32(out + c * esz, dt, acc);
        for (int k = 0; k + 2 < K; k++) h[k][j] = h[k + 1][j];
        h[K - 2][j] = xi;
      }
    }
    if (i1 < a->L)
      for (int r = 0; r < K - 1; r++)
        for (size_t j = 0; j < m; j++) a->wbuf[(size_t)r * a->n + g + j] = h[r][j];
  }
}

/* A SIMD kernel's `seq`, llmk__conv1d_seq_<isa>, from its always-inline
 * seq_k_dt(a, K, dt): one copy per K (2..4) and dtype, so that the loops over the taps
 * and the dtype's loads and stores are settled at compile time. */
#define LLMK__CONV1D_SEQ_K(isa, K)                         \
  static void seq_##isa##_##K(const llmk__conv1d_seq *a) { \
    if (a->dt == LLMK_BF16)                                \
      seq_k_dt(a, K, LLMK_BF16);                           \
    else if (a->dt == LLMK_F16)                            \
      seq_k_dt(a, K, LLMK_F16);                            \
    else                                                   \
      seq_k_dt(a, K, LLMK_F32);                            \
  }
#define LLMK__CONV1D_SEQ_OF(isa)                                  \
  LLMK__CONV1D_SEQ_K(isa, 2)                                      \
  LLMK__CONV1D_SEQ_K(isa, 3)                                      \
  LLMK__CONV1D_SEQ_K(isa, 4)                                      \
  static void llmk__conv1d_seq_##isa(const llmk__conv1d_seq *a) { \
    if (a->K == 2)                                                \
      seq_##isa##_2(a);                                           \
    else if (a->K == 3)                                           \
      seq_##isa##_3(a);                                           \
    else                                                          \
      seq_##isa##_4(a);                                           \
  }

typedef struct llmk__conv1d_kernels {
  llmk_isa isa;
  /* steps 6-9 of the op for one sequence and block of channels */
  void (*seq)(const llmk__conv1d_seq *a);
} llmk__conv1d_kernels;

#define LLMK__CONV1D_VARIANTS(X) \
  LLMK__IF_NEON(X(conv1d, neon)) \
  LLMK__IF_AVX512(X(conv1d, avx512)) LLMK__IF_AVX2(X(conv1d, avx2)) X(conv1d, scalar)
LLMK__KERNEL_LIST(conv1d, LLMK__CONV1D_VARIANTS)

#endif
