/* SPDX-License-Identifier: Apache-2.0 */
/* AVX2 llmk__exp_nonpos, llmk__exp_nonpos_fma and llmk__silu (8 lanes), operation for
 * operation. Include only from TUs built with the AVX2 flags. */
#ifndef LLMK_KERNELS_EXP_AVX2_H
#define LLMK_KERNELS_EXP_AVX2_H

#include <immintrin.h>

#include "kernels/common/exp.h"

/* exp(x) / 2^n for n = x / ln 2 rounded: the reduction and the polynomial */
static inline __m256 llmk__avx2_exp_mantissa(__m256 x, __m256 n) {
  __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(LLMK__EXP_C1)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(LLMK__EXP_C2)));
  __m256 p = _mm256_set1_ps(LLMK__EXP_P0);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(LLMK__EXP_P1));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(LLMK__EXP_P2));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(LLMK__EXP_P3));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(LLMK__EXP_P4));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(LLMK__EXP_P5));
  __m256 z = _mm256_mul_ps(r, r);
  p = _mm256_add_ps(_mm256_mul_ps(p, z), r);
  return _mm256_add_ps(p, _mm256_set1_ps(1.0f));
}

/* the same, fused as llmk__exp_nonpos_fma */
static inline __m256 llmk__avx2_exp_mantissa_fma(__m256 x, __m256 n) {
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LLMK__EXP_C1), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LLMK__EXP_C2), r);
  __m256 p =
      _mm256_fmadd_ps(_mm256_set1_ps(LLMK__EXP_P0), r, _mm256_set1_ps(LLMK__EXP_P1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(LLMK__EXP_P2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(LLMK__EXP_P3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(LLMK__EXP_P4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(LLMK__EXP_P5));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
  return _mm256_add_ps(p, _mm256_set1_ps(1.0f));
}

/* x * LLMK__EXP_LOG2E rounded to an integer, as the scalar exp does it */
static inline __m256 llmk__avx2_exp_n(__m256 x) {
  __m256 t = _mm256_mul_ps(x, _mm256_set1_ps(LLMK__EXP_LOG2E));
  return _mm256_sub_ps(_mm256_add_ps(t, _mm256_set1_ps(LLMK__EXP_MAGIC)),
                       _mm256_set1_ps(LLMK__EXP_MAGIC));
}

/* llmk__exp_scale(p, n) of the lanes with x >= -104, 0 in the others */
static inline __m256 llmk__avx2_exp_scale(__m256 p, __m256 n, __m256 x) {
  __m256 valid = _mm256_cmp_ps(x, _mm256_set1_ps(-104.0f), _CMP_GE_OQ);
  __m256i ni = _mm256_cvttps_epi32(_mm256_and_ps(valid, n));
  __m256i n1 = _mm256_max_epi32(ni, _mm256_set1_epi32(-100));
  __m256i n2 = _mm256_sub_epi32(ni, n1);
  __m256 s1 = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
  __m256 s2 = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
  return _mm256_and_ps(valid, _mm256_mul_ps(_mm256_mul_ps(p, s1), s2));
}

static inline __m256 llmk__avx2_exp_nonpos(__m256 x) {
  __m256 n = llmk__avx2_exp_n(x);
  return llmk__avx2_exp_scale(llmk__avx2_exp_mantissa(x, n), n, x);
}

static inline __m256 llmk__avx2_exp_nonpos_fma(__m256 x) {
  __m256 n = llmk__avx2_exp_n(x);
  return llmk__avx2_exp_scale(llmk__avx2_exp_mantissa_fma(x, n), n, x);
}

/* llmk__avx2_exp_nonpos_fma for x >= -69 (callers check): there the result is normal, so
 * the range mask and the second scaling step (by 2^0) change nothing and are left out,
 * and rounding to an integer by the magic constant is the same as rounding to nearest
 * even. */
static inline __m256 llmk__avx2_exp_nonpos_fma_ge69(__m256 x) {
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(LLMK__EXP_LOG2E)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 p = llmk__avx2_exp_mantissa_fma(x, n);
  __m256i b = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(b));
}

static inline __m256 llmk__avx2_silu(__m256 y) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 t = llmk__avx2_exp_nonpos_fma(_mm256_or_ps(_mm256_andnot_ps(sign, y), sign));
  __m256 neg = _mm256_cmp_ps(y, _mm256_setzero_ps(), _CMP_NGE_UQ);
  __m256 num = _mm256_blendv_ps(y, _mm256_mul_ps(y, t), neg);
  __m256 r = _mm256_div_ps(num, _mm256_add_ps(_mm256_set1_ps(1.0f), t));
  __m256 ninf = _mm256_cmp_ps(y, _mm256_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
  return _mm256_blendv_ps(r, sign, ninf);
}

/* llmk__avx2_silu (the fused exp) on G vectors at once, step by step across them, so that
 * the out-of-order window sees G independent chains (the exp is one long dependent chain
 * per vector). */
#define LLMK__EACH _Pragma("GCC unroll 8") for (int g = 0; g < G; g++)
static inline __attribute__((always_inline)) void llmk__avx2_silu_n(__m256 *y,
                                                                    const int G) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 x[8], valid[8], n[8], r[8], p[8], z[8];
  LLMK__EACH x[g] = _mm256_or_ps(_mm256_andnot_ps(sign, y[g]), sign);
  LLMK__EACH valid[g] = _mm256_cmp_ps(x[g], _mm256_set1_ps(-104.0f), _CMP_GE_OQ);
  LLMK__EACH n[g] = _mm256_mul_ps(x[g], _mm256_set1_ps(LLMK__EXP_LOG2E));
  LLMK__EACH n[g] = _mm256_sub_ps(_mm256_add_ps(n[g], _mm256_set1_ps(LLMK__EXP_MAGIC)),
                                  _mm256_set1_ps(LLMK__EXP_MAGIC));
  LLMK__EACH r[g] = _mm256_fnmadd_ps(n[g], _mm256_set1_ps(LLMK__EXP_C1), x[g]);
  LLMK__EACH r[g] = _mm256_fnmadd_ps(n[g], _mm256_set1_ps(LLMK__EXP_C2), r[g]);
  LLMK__EACH p[g] =
      _mm256_fmadd_ps(_mm256_set1_ps(LLMK__EXP_P0), r[g], _mm256_set1_ps(LLMK__EXP_P1));
  LLMK__EACH p[g] = _mm256_fmadd_ps(p[g], r[g], _mm256_set1_ps(LLMK__EXP_P2));
  LLMK__EACH p[g] = _mm256_fmadd_ps(p[g], r[g], _mm256_set1_ps(LLMK__EXP_P3));
  LLMK__EACH p[g] = _mm256_fmadd_ps(p[g], r[g], _mm256_set1_ps(LLMK__EXP_P4));
  LLMK__EACH p[g] = _mm256_fmadd_ps(p[g], r[g], _mm256_set1_ps(LLMK__EXP_P5));
  LLMK__EACH z[g] = _mm256_mul_ps(r[g], r[g]);
  LLMK__EACH p[g] = _mm256_fmadd_ps(p[g], z[g], r[g]);
  LLMK__EACH p[g] = _mm256_add_ps(p[g], _mm256_set1_ps(1.0f));
  LLMK__EACH {
    __m256i ni = _mm256_cvttps_epi32(_mm256_and_ps(valid[g], n[g]));
    __m256i n1 = _mm256_max_epi32(ni, _mm256_set1_epi32(-100));
    __m256i n2 = _mm256_sub_epi32(ni, n1);
    __m256 s1 = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
    __m256 s2 = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
    z[g] = _mm256_and_ps(valid[g], _mm256_mul_ps(_mm256_mul_ps(p[g], s1), s2)); /* t */
  }
  LLMK__EACH {
    __m256 neg = _mm256_cmp_ps(y[g], _mm256_setzero_ps(), _CMP_NGE_UQ);
    __m256 num = _mm256_blendv_ps(y[g], _mm256_mul_ps(y[g], z[g]), neg);
    r[g] = _mm256_div_ps(num, _mm256_add_ps(_mm256_set1_ps(1.0f), z[g]));
  }
  LLMK__EACH {
    __m256 ninf = _mm256_cmp_ps(y[g], _mm256_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
    y[g] = _mm256_blendv_ps(r[g], sign, ninf);
  }
}
#undef LLMK__EACH

#endif
