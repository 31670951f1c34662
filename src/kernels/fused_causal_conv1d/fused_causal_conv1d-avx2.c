/* SPDX-License-Identifier: Apache-2.0 */
/* AVX2: llmk__conv1d_cols on groups of G x 8 channels, operation for operation; the
 * window and the taps stay in registers while the tokens stream by. */
#include "kernels/common/exp-avx2.h"
#include "kernels/convert/convert-avx2.h"
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"

#define INLINE static inline __attribute__((always_inline))

/* llmk__avx2_f32_to_bf16 of two vectors with one pack: 16 bf16 values */
/* NaN lanes as LLMK__CONV_NAN (fused_causal_conv1d.h) */
INLINE __m256 canon_nan(__m256 y) {
  return _mm256_blendv_ps(y, _mm256_set1_ps(LLMK__CONV_NAN),
                          _mm256_cmp_ps(y, y, _CMP_UNORD_Q));
}

INLINE void store_bf16x2(void *dst, __m256 a, __m256 b) {
  __m256i p;
  if (__builtin_expect(!_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_UNORD_Q)), 1))
    p = _mm256_packus_epi32(llmk__avx2_bf16_bits_no_nan(a),
                            llmk__avx2_bf16_bits_no_nan(b));
  else
    p = _mm256_packus_epi32(llmk__avx2_bf16_bits(canon_nan(a)),
                            llmk__avx2_bf16_bits(canon_nan(b)));
  _mm256_storeu_si256(dst, _mm256_permute4x64_epi64(p, 0xd8));
}

/* llmk__avx2_store_f32 with NaN lanes canonical; the test costs one compare when no lane
 * is NaN */
INLINE void store_y(char *dst, llmk_dtype dt, __m256 y) {
  if (__builtin_expect(_mm256_movemask_ps(_mm256_cmp_ps(y, y, _CMP_UNORD_Q)) != 0, 0))
    y = canon_nan(y);
  llmk__avx2_store_f32(dst, dt, y);
}

INLINE void group(const llmk__conv1d_seq *a, size_t c, int64_t i0, int64_t i1,
                  const int K, const int G, const llmk_dtype dt, const bool plain) {
  const size_t esz = dt == LLMK_F32 ? 4 : 2;
  const bool silu = !plain && (a->flags & LLMK__CONV_SILU);
  const bool resid = !plain && (a->flags & LLMK__CONV_RESID);
  const float *bias = plain ? NULL : a->bias;
  __m256 w[4][4], b[4], h[3][4];
  _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
    _Pragma("GCC unroll 4") for (int k = 0; k < K; k++) w[k][g] =
        _mm256_loadu_ps(a->w + (size_t)k * a->wstride + c + 8 * g);
    b[g] = bias ? _mm256_loadu_ps(bias + c + 8 * g) : _mm256_setzero_ps();
    _Pragma("GCC unroll 4") for (int r = 0; r < K - 1; r++) h[r][g] =
        i0 == 0 ? llmk__avx2_load_f32(a->hist + r * a->hstride + (c + 8 * g) * esz, dt)
                : _mm256_loadu_ps(a->wbuf + (size_t)r * a->n + c + 8 * g);
  }
  const char *const x0 = a->x + c * esz;
  char *const y0 = a->y + c * esz;
  const ptrdiff_t xs = a->xstride, ys = a->ystride;
  const int64_t reset = a->reset;
  for (int64_t i = i0; i < i1; i++) {
    const char *row = x0 + i * xs;
    char *out = y0 + i * ys;
    __m256 y[4], xv[4];
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
      __m256 xi = llmk__avx2_load_f32(row + 8 * g * esz, dt);
      __m256 acc = _mm256_mul_ps(w[0][g], h[0][g]);
      _Pragma("GCC unroll 4") for (int k = 1; k < K - 1; k++) acc =
          _mm256_add_ps(acc, _mm256_mul_ps(w[k][g], h[k][g]));
      acc = _mm256_add_ps(acc, _mm256_mul_ps(w[K - 1][g], xi));
      if (bias) acc = _mm256_add_ps(acc, b[g]);
      y[g] = acc;
      xv[g] = xi;
      _Pragma("GCC unroll 4") for (int k = 0; k + 2 < K; k++) h[k][g] = h[k + 1][g];
      h[K - 2][g] = xi;
    }
    if (silu) llmk__avx2_silu_n(y, G);
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
      if (!plain && i < reset) y[g] = _mm256_setzero_ps();
      if (resid) y[g] = _mm256_add_ps(xv[g], y[g]);
    }
    if (dt == LLMK_BF16 && G % 2 == 0) {
      _Pragma("GCC unroll 4") for (int g = 0; g < G; g += 2)
          store_bf16x2(out + 8 * g * esz, y[g], y[g + 1]);
    } else {
      _Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
          store_y(out + 8 * g * esz, dt, y[g]);
    }
  }
  if (i1 < a->L)
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
        _Pragma("GCC unroll 4") for (int r = 0; r < K - 1; r++)
            _mm256_storeu_ps(a->wbuf + (size_t)r * a->n + c + 8 * g, h[r][g]);
}

INLINE void seq_k_dt(const llmk__conv1d_seq *a, const int K, const llmk_dtype dt) {
  for (int64_t i0 = 0; i0 < a->L; i0 += LLMK__CONV_TILE) {
    int64_t i1 = a->L - i0 < LLMK__CONV_TILE ? a->L : i0 + LLMK__CONV_TILE;
    size_t c = 0;
    if (!a->bias && !a->flags && a->reset <= i0) {
      for (; c + 32 <= a->n; c += 32) group(a, c, i0, i1, K, 4, dt, true);
      for (; c + 16 <= a->n; c += 16) group(a, c, i0, i1, K, 2, dt, true);
    } else {
      for (; c + 32 <= a->n; c += 32) group(a, c, i0, i1, K, 4, dt, false);
      for (; c + 16 <= a->n; c += 16) group(a, c, i0, i1, K, 2, dt, false);
    }
    for (; c + 8 <= a->n; c += 8) group(a, c, i0, i1, K, 1, dt, false);
    if (c < a->n) llmk__conv1d_cols(a, c, a->n, i0, i1);
  }
}

LLMK__CONV1D_SEQ_OF(avx2)

const llmk__conv1d_kernels llmk__conv1d_kernels_avx2 = {.isa = LLMK_ISA_AVX2,
                                                        .seq = llmk__conv1d_seq_avx2};
