/* SPDX-License-Identifier: Apache-2.0 */
/* AVX-512 conversion cores (16 lanes), shared by the conversion kernels and every op
 * that widens or narrows on the fly. Include only from TUs built with the AVX-512
 * flags. Bit-identical to convert-scalar.h. */
#ifndef LLMK_CONVERT_AVX512_H
#define LLMK_CONVERT_AVX512_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>

#include "llmk/types.h"

static inline __mmask16 llmk__mask16(size_t left) {
  return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

static inline __m512 llmk__avx512_bf16_to_f32(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline __m256i llmk__avx512_f32_to_bf16(__m512 x) {
  __m512i u = _mm512_castps_si512(x);
  __mmask16 nan = _mm512_cmpgt_epi32_mask(
      _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb);
  r = _mm512_srli_epi32(r, 16);
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(r);
}

static inline __m512 llmk__avx512_e4m3_to_f32(__m128i bytes) {
  __m512i v = _mm512_cvtepu8_epi32(bytes);
  const __m512i m7f = _mm512_set1_epi32(0x7f);
  __m512i mag = _mm512_and_si512(v, m7f);
  __m512i sign = _mm512_slli_epi32(_mm512_and_si512(v, _mm512_set1_epi32(0x80)), 24);
  __m512i r = _mm512_slli_epi32(_mm512_add_epi32(mag, _mm512_set1_epi32(120 << 3)), 20);
  __m512i sub = _mm512_castps_si512(
      _mm512_mul_ps(_mm512_cvtepi32_ps(mag), _mm512_set1_ps(0x1p-9f)));
  r = _mm512_mask_mov_epi32(r, _mm512_cmplt_epi32_mask(mag, _mm512_set1_epi32(8)), sub);
  r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(mag, m7f),
                            _mm512_set1_epi32(0x7fc00000));
  return _mm512_castsi512_ps(_mm512_or_si512(r, sign));
}

static inline __m512 llmk__avx512_e5m2_to_f32(__m128i bytes) {
  return _mm512_cvtph_ps(_mm256_slli_epi16(_mm256_cvtepu8_epi16(bytes), 8));
}

/* f32 -> fp8 with MBITS mantissa bits: integer rounding for target normals (the
 * exponent's rebias folded into the rounding constant), saturation by a min (rounding is
 * monotonic, and the rounded code of anything >= the largest finite value is >= its
 * code), target subnormals rounded to nearest even by adding 2^(MIN_SUB_EXP + 23) in
 * f32 (the sum's ulp is the target's subnormal step), then NaN and the sign. */
static inline __m128i llmk__avx512_f32_to_fp8(__m512 xf, bool e5m2) {
  const int shift = e5m2 ? 21 : 20;
  const int normal_min = e5m2 ? 0x38800000 : 0x3c800000;
  const int sat_code = e5m2 ? 0x7b : 0x7e;
  const unsigned rebias = e5m2 ? (112u << 2) << 21 : (120u << 3) << 20;
  const float magic = e5m2 ? 0x1p7f : 0x1p14f;
  __m512i x = _mm512_castps_si512(xf);
  __m512i u = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, shift), _mm512_set1_epi32(1));
  __m512i r =
      _mm512_add_epi32(_mm512_add_epi32(u, lsb),
                       _mm512_set1_epi32((int)((1u << (shift - 1)) - 1u - rebias)));
  r = _mm512_min_epu32(_mm512_srli_epi32(r, shift), _mm512_set1_epi32(sat_code));
  __m512i y =
      _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(u), _mm512_set1_ps(magic)));
  r = _mm512_mask_sub_epi32(r, _mm512_cmplt_epi32_mask(u, _mm512_set1_epi32(normal_min)),
                            y, _mm512_castps_si512(_mm512_set1_ps(magic)));
  __m512i nan_code = e5m2 ? _mm512_or_si512(_mm512_set1_epi32(0x7e),
                                            _mm512_and_si512(_mm512_srli_epi32(u, 21),
                                                             _mm512_set1_epi32(1)))
                          : _mm512_set1_epi32(0x7f);
  r = _mm512_mask_mov_epi32(r, _mm512_cmpgt_epi32_mask(u, _mm512_set1_epi32(0x7f800000)),
                            nan_code);
  /* r | (x >> 24 & 0x80) */
  r = _mm512_ternarylogic_epi32(r, _mm512_srli_epi32(x, 24), _mm512_set1_epi32(0x80),
                                0xf8);
  return _mm512_cvtepi32_epi8(r);
}

/* Up to 16 elements of f32, f16 or bf16 (masked) widened to f32. */
static inline __m512 llmk__avx512_load_f32(const void *src, llmk_dtype dt, __mmask16 m) {
  if (dt == LLMK_F32) return _mm512_maskz_loadu_ps(m, src);
  __m256i h = _mm256_maskz_loadu_epi16(m, src);
  return dt == LLMK_F16 ? _mm512_cvtph_ps(h) : llmk__avx512_bf16_to_f32(h);
}

/* Up to 16 f32 values rounded to f32, f16 or bf16 (masked store). */
static inline void llmk__avx512_store_f32(void *dst, llmk_dtype dt, __mmask16 m,
                                          __m512 x) {
  if (dt == LLMK_F32)
    _mm512_mask_storeu_ps(dst, m, x);
  else if (dt == LLMK_F16)
    _mm256_mask_storeu_epi16(
        dst, m, _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  else
    _mm256_mask_storeu_epi16(dst, m, llmk__avx512_f32_to_bf16(x));
}

#endif
