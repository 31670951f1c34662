/* SPDX-License-Identifier: Apache-2.0 */
/* AVX-512 llmk__exp_nonpos, llmk__exp_nonpos_fma and llmk__silu (16 lanes), operation for
 * operation. Include only from TUs built with the AVX-512 flags. */
#ifndef LLMK_KERNELS_EXP_AVX512_H
#define LLMK_KERNELS_EXP_AVX512_H

#include <immintrin.h>

#include "kernels/common/exp.h"

/* exp(x) / 2^n, as llmk__avx2_exp_mantissa / llmk__avx2_exp_mantissa_fma */
static inline __m512 llmk__avx512_exp_mantissa(__m512 x, __m512 n, const int fused) {
  __m512 r, p;
  if (fused) {
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LLMK__EXP_C1), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LLMK__EXP_C2), r);
    p = _mm512_fmadd_ps(_mm512_set1_ps(LLMK__EXP_P0), r, _mm512_set1_ps(LLMK__EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(LLMK__EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(LLMK__EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(LLMK__EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(LLMK__EXP_P5));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
  } else {
    r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(LLMK__EXP_C1)));
    r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(LLMK__EXP_C2)));
    p = _mm512_set1_ps(LLMK__EXP_P0);
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(LLMK__EXP_P1));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(LLMK__EXP_P2));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(LLMK__EXP_P3));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(LLMK__EXP_P4));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(LLMK__EXP_P5));
    __m512 z = _mm512_mul_ps(r, r);
    p = _mm512_add_ps(_mm512_mul_ps(p, z), r);
  }
  return _mm512_add_ps(p, _mm512_set1_ps(1.0f));
}

static inline __attribute__((always_inline)) __m512 llmk__avx512_exp(__m512 x,
                                                                     const int fused) {
  __mmask16 valid = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_GE_OQ);
  __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(LLMK__EXP_LOG2E));
  __m512 n = _mm512_sub_ps(_mm512_add_ps(t, _mm512_set1_ps(LLMK__EXP_MAGIC)),
                           _mm512_set1_ps(LLMK__EXP_MAGIC));
  __m512 p = llmk__avx512_exp_mantissa(x, n, fused);
  __m512i ni = _mm512_cvttps_epi32(_mm512_maskz_mov_ps(valid, n));
  __m512i n1 = _mm512_max_epi32(ni, _mm512_set1_epi32(-100));
  __m512i n2 = _mm512_sub_epi32(ni, n1);
  __m512 s1 = _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_add_epi32(n1, _mm512_set1_epi32(127)), 23));
  __m512 s2 = _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_add_epi32(n2, _mm512_set1_epi32(127)), 23));
  return _mm512_maskz_mov_ps(valid, _mm512_mul_ps(_mm512_mul_ps(p, s1), s2));
}

static inline __m512 llmk__avx512_exp_nonpos(__m512 x) {
  return llmk__avx512_exp(x, 0);
}
static inline __m512 llmk__avx512_exp_nonpos_fma(__m512 x) {
  return llmk__avx512_exp(x, 1);
}

/* llmk__avx512_exp_nonpos_fma where every lane is >= -69: the result is normal, so the
 * range mask and the second scaling step (by 2^0, exact) change nothing, rounding by
 * the magic constant is rounding to nearest even, and p * 2^n is exact, as scalef
 * computes it: the same bits in fewer operations. */
static inline __m512 llmk__avx512_exp_nonpos_fma_ge69(__m512 x) {
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(LLMK__EXP_LOG2E)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_scalef_ps(llmk__avx512_exp_mantissa(x, n, 1), n);
}

/* Where every lane is >= -69 (NaN not), the fast exp takes max(-|y|, -69): a lane
 * above 69 then gets exp(-69) for exp(-y), and 1 + t is 1 either way (t < 2^-99), so
 * y / (1 + t) is y, the same bits; no lane is -inf there. */
static inline __m512 llmk__avx512_silu(__m512 y) {
  __m512 x = _mm512_or_ps(y, _mm512_set1_ps(-0.0f)); /* -|y| */
  __mmask16 neg = _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_NGE_UQ);
  if (__builtin_expect(
          _mm512_cmp_ps_mask(y, _mm512_set1_ps(-69.0f), _CMP_GE_OQ) == 0xffff, 1)) {
    __m512 t = llmk__avx512_exp_nonpos_fma_ge69(_mm512_max_ps(x, _mm512_set1_ps(-69.0f)));
    return _mm512_div_ps(_mm512_mask_mul_ps(y, neg, y, t),
                         _mm512_add_ps(_mm512_set1_ps(1.0f), t));
  }
  __m512 t = llmk__avx512_exp_nonpos_fma(x);
  __m512 r = _mm512_div_ps(_mm512_mask_mul_ps(y, neg, y, t),
                           _mm512_add_ps(_mm512_set1_ps(1.0f), t));
  __mmask16 ninf = _mm512_cmp_ps_mask(y, _mm512_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
  return _mm512_mask_mov_ps(r, ninf, _mm512_set1_ps(-0.0f));
}

#endif
