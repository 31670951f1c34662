/* AVX-512 llmk__exp_nonpos and llmk__silu (16 lanes), operation for operation. Include
 * only from TUs built with the AVX-512 flags. */
#ifndef LLMK_KERNELS_EXP_AVX512_H
#define LLMK_KERNELS_EXP_AVX512_H

#include <immintrin.h>

#include "kernels/common/exp.h"

static inline __m512 llmk__avx512_exp_nonpos(__m512 x) {
  __mmask16 valid = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_GE_OQ);
  __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(LLMK__EXP_LOG2E));
  __m512 n = _mm512_sub_ps(_mm512_add_ps(t, _mm512_set1_ps(LLMK__EXP_MAGIC)),
                           _mm512_set1_ps(LLMK__EXP_MAGIC));
  __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(LLMK__EXP_C1)));
  r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(LLMK__EXP_C2)));
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(5.0000001201e-1f));
  __m512 z = _mm512_mul_ps(r, r);
  p = _mm512_add_ps(_mm512_mul_ps(p, z), r);
  p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
  __m512i ni = _mm512_cvttps_epi32(_mm512_maskz_mov_ps(valid, n));
  __m512i n1 = _mm512_max_epi32(ni, _mm512_set1_epi32(-100));
  __m512i n2 = _mm512_sub_epi32(ni, n1);
  __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, _mm512_set1_epi32(127)), 23));
  __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, _mm512_set1_epi32(127)), 23));
  return _mm512_maskz_mov_ps(valid, _mm512_mul_ps(_mm512_mul_ps(p, s1), s2));
}

static inline __m512 llmk__avx512_silu(__m512 y) {
  __m512 t = llmk__avx512_exp_nonpos(_mm512_or_ps(_mm512_abs_ps(y), _mm512_set1_ps(-0.0f)));
  __mmask16 neg = _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_NGE_UQ);
  __m512 num = _mm512_mask_mul_ps(y, neg, y, t);
  __m512 r = _mm512_div_ps(num, _mm512_add_ps(_mm512_set1_ps(1.0f), t));
  __mmask16 ninf = _mm512_cmp_ps_mask(y, _mm512_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
  return _mm512_mask_mov_ps(r, ninf, _mm512_set1_ps(-0.0f));
}

#endif
