/* SPDX-License-Identifier: Apache-2.0 */
/* AVX-512: llmk__conv1d_cols on groups of G x 16 channels, operation for operation (the
 * AVX2 kernel's scheme with twice the lanes, so that the SiLU's exp and division, the
 * bulk of the work with bias + SiLU, take half the instructions). */
#include "kernels/common/exp-avx512.h"
#include "kernels/convert/convert-avx512.h"
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"

#define INLINE static inline __attribute__((always_inline))

/* NaN lanes as LLMK__CONV_NAN (fused_causal_conv1d.h) */
INLINE void store_y(char *dst, llmk_dtype dt, __m512 y) {
  __mmask16 nan = _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q);
  if (__builtin_expect(nan != 0, 0))
    y = _mm512_mask_mov_ps(y, nan, _mm512_set1_ps(LLMK__CONV_NAN));
  if (dt == LLMK_F32)
    _mm512_storeu_ps(dst, y);
  else if (dt == LLMK_F16)
    _mm256_storeu_si256(
        (__m256i *)(void *)dst,
        _mm512_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  else
    _mm256_storeu_si256((__m256i *)(void *)dst, llmk__avx512_f32_to_bf16(y));
}

INLINE __m512 load_x(const char *src, llmk_dtype dt) {
  if (dt == LLMK_F32) return _mm512_loadu_ps(src);
  __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)src);
  return dt == LLMK_F16 ? _mm512_cvtph_ps(h) : llmk__avx512_bf16_to_f32(h);
}

INLINE void group(const llmk__conv1d_seq *a, size_t c, int64_t i0, int64_t i1,
                  const int K, const int G, const llmk_dtype dt, const bool plain) {
  const size_t esz = dt == LLMK_F32 ? 4 : 2;
  const bool silu = !plain && (a->flags & LLMK__CONV_SILU);
  const bool resid = !plain && (a->flags & LLMK__CONV_RESID);
  const float *bias = plain ? NULL : a->bias;
  __m512 w[4][4], b[4], h[3][4];
  _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
    _Pragma("GCC unroll 4") for (int k = 0; k < K; k++) w[k][g] =
        _mm512_loadu_ps(a->w + (size_t)k * a->wstride + c + 16 * g);
    b[g] = bias ? _mm512_loadu_ps(bias + c + 16 * g) : _mm512_setzero_ps();
    _Pragma("GCC unroll 4") for (int r = 0; r < K - 1; r++) h[r][g] =
        i0 == 0 ? load_x(a->hist + r * a->hstride + (c + 16 * g) * esz, dt)
                : _mm512_loadu_ps(a->wbuf + (size_t)r * a->n + c + 16 * g);
  }
  const char *const x0 = a->x + c * esz;
  char *const y0 = a->y + c * esz;
  const ptrdiff_t xs = a->xstride, ys = a->ystride;
  const int64_t reset = a->reset;
  for (int64_t i = i0; i < i1; i++) {
    const char *row = x0 + i * xs;
    char *out = y0 + i * ys;
    __m512 y[4], xv[4];
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
      __m512 xi = load_x(row + 16 * g * esz, dt);
      __m512 acc = _mm512_mul_ps(w[0][g], h[0][g]);
      _Pragma("GCC unroll 4") for (int k = 1; k < K - 1; k++) acc =
          _mm512_add_ps(acc, _mm512_mul_ps(w[k][g], h[k][g]));
      acc = _mm512_add_ps(acc, _mm512_mul_ps(w[K - 1][g], xi));
      if (bias) acc = _mm512_add_ps(acc, b[g]);
      y[g] = acc;
      xv[g] = xi;
      _Pragma("GCC unroll 4") for (int k = 0; k + 2 < K; k++) h[k][g] = h[k + 1][g];
      h[K - 2][g] = xi;
    }
    if (silu)
      _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) y[g] = llmk__avx512_silu(y[g]);
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
      if (!plain && i < reset) y[g] = _mm512_setzero_ps();
      if (resid) y[g] = _mm512_add_ps(xv[g], y[g]);
      store_y(out + 16 * g * esz, dt, y[g]);
    }
  }
  if (i1 < a->L)
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
        _Pragma("GCC unroll 4") for (int r = 0; r < K - 1; r++)
            _mm512_storeu_ps(a->wbuf + (size_t)r * a->n + c + 16 * g, h[r][g]);
}

INLINE void seq_k_dt(const llmk__conv1d_seq *a, const int K, const llmk_dtype dt) {
  for (int64_t i0 = 0; i0 < a->L; i0 += LLMK__CONV_TILE) {
    int64_t i1 = a->L - i0 < LLMK__CONV_TILE ? a->L : i0 + LLMK__CONV_TILE;
    size_t c = 0;
    if (!a->bias && !a->flags && a->reset <= i0) {
      for (; c + 64 <= a->n; c += 64) group(a, c, i0, i1, K, 4, dt, true);
      for (; c + 32 <= a->n; c += 32) group(a, c, i0, i1, K, 2, dt, true);
    } else {
      for (; c + 64 <= a->n; c += 64) group(a, c, i0, i1, K, 4, dt, false);
      for (; c + 32 <= a->n; c += 32) group(a, c, i0, i1, K, 2, dt, false);
    }
    for (; c + 16 <= a->n; c += 16) group(a, c, i0, i1, K, 1, dt, false);
    if (c < a->n) llmk__conv1d_cols(a, c, a->n, i0, i1);
  }
}

LLMK__CONV1D_SEQ_OF(avx512)

const llmk__conv1d_kernels llmk__conv1d_kernels_avx512 = {.isa = LLMK_ISA_AVX512,
                                                          .seq = llmk__conv1d_seq_avx512};
