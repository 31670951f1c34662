/* SPDX-License-Identifier: Apache-2.0 */
/* AVX2 + F16C conversion cores (8 lanes), shared by the conversion kernels and the
 * ops that widen or narrow on the fly. Include only from TUs built with the AVX2
 * flags. Bit-identical to convert-scalar.h; callers do tails with the scalar code. */
#ifndef LLMK_CONVERT_AVX2_H
#define LLMK_CONVERT_AVX2_H

#include <immintrin.h>
#include <stdbool.h>

#include "llmk/types.h"

/* low byte of each 32-bit lane -> 8 bytes in the low 64 bits */
static inline __m128i llmk__avx2_narrow_u8x8(__m256i v) {
  const __m256i pick =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4,
                       8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  v = _mm256_shuffle_epi8(v, pick);
  v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1));
  return _mm256_castsi256_si128(v);
}

/* bf16 of 8 f32 values, round to nearest even, in the low 16 bits of 32-bit lanes
 * (quiet NaNs kept NaN); without NaNs, llmk__avx2_bf16_bits_no_nan is the same. */
static inline __m256i llmk__avx2_bf16_bits_no_nan(__m256 x) {
  __m256i u = _mm256_castps_si256(x);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  return _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
}

static inline __m256i llmk__avx2_bf16_bits(__m256 x) {
  __m256i u = _mm256_castps_si256(x);
  __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                   _mm256_set1_epi32(0x7f800000));
  __m256i q = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(llmk__avx2_bf16_bits_no_nan(x), q, nan);
}

static inline __m128i llmk__avx2_f32_to_bf16(__m256 x) {
  __m256i r = llmk__avx2_bf16_bits(x);
  return _mm256_castsi256_si128(
      _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08));
}

static inline __m256 llmk__avx2_bf16_to_f32(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static inline __m256 llmk__avx2_e4m3_to_f32(__m128i bytes) {
  const __m256i m7f = _mm256_set1_epi32(0x7f);
  __m256i v = _mm256_cvtepu8_epi32(bytes);
  __m256i mag = _mm256_and_si256(v, m7f);
  __m256i sign = _mm256_slli_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x80)), 24);
  __m256i normal =
      _mm256_slli_epi32(_mm256_add_epi32(mag, _mm256_set1_epi32(120 << 3)), 20);
  __m256i sub = _mm256_castps_si256(
      _mm256_mul_ps(_mm256_cvtepi32_ps(mag), _mm256_set1_ps(0x1p-9f)));
  __m256i r =
      _mm256_blendv_epi8(normal, sub, _mm256_cmpgt_epi32(_mm256_set1_epi32(8), mag));
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc00000), _mm256_cmpeq_epi32(mag, m7f));
  return _mm256_castsi256_ps(_mm256_or_si256(r, sign));
}

static inline __m256 llmk__avx2_e5m2_to_f32(__m128i bytes) {
  return _mm256_cvtph_ps(_mm_slli_epi16(_mm_cvtepu8_epi16(bytes), 8));
}

static inline __m128i llmk__avx2_f32_to_fp8(__m256 xf, bool e5m2) {
  const int shift = e5m2 ? 21 : 20;
  const int normal_min = e5m2 ? 0x38800000 : 0x3c800000,
            sat_min = e5m2 ? 0x47600000 : 0x43e00000;
  const int sat_code = e5m2 ? 0x7b : 0x7e, exp_adj = e5m2 ? 112 << 2 : 120 << 3;
  const float sub_scale = e5m2 ? 0x1p16f : 0x1p9f;
  __m256i x = _mm256_castps_si256(xf);
  __m256i u = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
  __m256i sign = _mm256_and_si256(_mm256_srli_epi32(x, 24), _mm256_set1_epi32(0x80));
  __m256i lsb = _mm256_and_si256(_mm256_srlv_epi32(u, _mm256_set1_epi32(shift)),
                                 _mm256_set1_epi32(1));
  __m256i r = _mm256_add_epi32(u, _mm256_set1_epi32((1 << (shift - 1)) - 1));
  r = _mm256_srlv_epi32(_mm256_add_epi32(r, lsb), _mm256_set1_epi32(shift));
  r = _mm256_sub_epi32(r, _mm256_set1_epi32(exp_adj));
  __m256 y = _mm256_mul_ps(_mm256_castsi256_ps(u), _mm256_set1_ps(sub_scale));
  y = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm256_blendv_epi8(r, _mm256_cvttps_epi32(y),
                         _mm256_cmpgt_epi32(_mm256_set1_epi32(normal_min), u));
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(sat_code),
                         _mm256_cmpgt_epi32(u, _mm256_set1_epi32(sat_min - 1)));
  __m256i nan_code = e5m2 ? _mm256_or_si256(_mm256_set1_epi32(0x7e),
                                            _mm256_and_si256(_mm256_srli_epi32(u, 21),
                                                             _mm256_set1_epi32(1)))
                          : _mm256_set1_epi32(0x7f);
  r = _mm256_blendv_epi8(r, nan_code,
                         _mm256_cmpgt_epi32(u, _mm256_set1_epi32(0x7f800000)));
  return llmk__avx2_narrow_u8x8(_mm256_or_si256(r, sign));
}

/* 8 elements of f32, f16 or bf16 widened to f32. */
static inline __m256 llmk__avx2_load_f32(const void *src, llmk_dtype dt) {
  if (dt == LLMK_F32) return _mm256_loadu_ps(src);
  __m128i h = _mm_loadu_si128(src);
  return dt == LLMK_F16 ? _mm256_cvtph_ps(h) : llmk__avx2_bf16_to_f32(h);
}

/* 8 f32 values rounded to f32, f16 or bf16. */
static inline void llmk__avx2_store_f32(void *dst, llmk_dtype dt, __m256 x) {
  if (dt == LLMK_F32)
    _mm256_storeu_ps(dst, x);
  else if (dt == LLMK_F16)
    _mm_storeu_si128(dst,
                     _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  else
    _mm_storeu_si128(dst, llmk__avx2_f32_to_bf16(x));
}

#endif
