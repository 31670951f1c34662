/* AVX-512 (F, BW, VL, DQ) conversion kernels; tails use masked loads and stores. */
#include <immintrin.h>

#include "dispatch/dispatch.h"
#include "kernels/convert/convert-scalar.h"

static inline __mmask16 tail_mask(size_t left) {
  return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

static void f16_f32_avx512(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = tail_mask(n - i);
    __m256i h = _mm256_maskz_loadu_epi16(m, s + i);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_cvtph_ps(h));
  }
}

static void f32_f16_avx512(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = tail_mask(n - i);
    __m512 v = _mm512_maskz_loadu_ps(m, src + i);
    __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_mask_storeu_epi16(d + i, m, h);
  }
}

static void bf16_f32_avx512(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = tail_mask(n - i);
    __m512i v = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, s + i));
    _mm512_mask_storeu_epi32(dst + i, m, _mm512_slli_epi32(v, 16));
  }
}

static void f32_bf16_avx512(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = tail_mask(n - i);
    __m512i u = _mm512_maskz_loadu_epi32(m, src + i);
    __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, abs_mask), inf);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb);
    r = _mm512_srli_epi32(r, 16);
    r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
    _mm256_mask_storeu_epi16(d + i, m, _mm512_cvtepi32_epi16(r));
  }
}

static void e4m3_f32_avx512(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  const __m512i m7f = _mm512_set1_epi32(0x7f);
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = tail_mask(n - i);
    __m512i v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, s + i));
    __m512i mag = _mm512_and_si512(v, m7f);
    __m512i sign = _mm512_slli_epi32(_mm512_and_si512(v, _mm512_set1_epi32(0x80)), 24);
    __m512i r = _mm512_slli_epi32(_mm512_add_epi32(mag, _mm512_set1_epi32(120 << 3)), 20);
    __m512i sub = _mm512_castps_si512(
        _mm512_mul_ps(_mm512_cvtepi32_ps(mag), _mm512_set1_ps(0x1p-9f)));
    r = _mm512_mask_mov_epi32(r, _mm512_cmplt_epi32_mask(mag, _mm512_set1_epi32(8)), sub);
    r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(mag, m7f),
                              _mm512_set1_epi32(0x7fc00000));
    _mm512_mask_storeu_epi32(dst + i, m, _mm512_or_si512(r, sign));
  }
}

static void e5m2_f32_avx512(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = tail_mask(n - i);
    __m256i h = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_maskz_loadu_epi8(m, s + i)), 8);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_cvtph_ps(h));
  }
}

#define LLMK__F32_FP8_AVX512(name, MBITS, NORMAL_MIN, SAT_MIN, SAT_CODE, EXP_ADJ,      \
                             SUB_SCALE, NAN_EXPR)                                      \
  static void name(void *dst, const float *src, size_t n) {                            \
    uint8_t *d = dst;                                                                  \
    const int shift = 23 - (MBITS);                                                    \
    for (size_t i = 0; i < n; i += 16) {                                               \
      __mmask16 m = tail_mask(n - i);                                                  \
      __m512i x = _mm512_maskz_loadu_epi32(m, src + i);                                \
      __m512i u = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));                  \
      __m512i sign =                                                                   \
          _mm512_and_si512(_mm512_srli_epi32(x, 24), _mm512_set1_epi32(0x80));         \
      __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, shift), _mm512_set1_epi32(1)); \
      __m512i r = _mm512_add_epi32(u, _mm512_set1_epi32((1 << (shift - 1)) - 1));      \
      r = _mm512_srli_epi32(_mm512_add_epi32(r, lsb), shift);                          \
      r = _mm512_sub_epi32(r, _mm512_set1_epi32(EXP_ADJ));                             \
      __m512 y = _mm512_mul_ps(_mm512_castsi512_ps(u), _mm512_set1_ps(SUB_SCALE));     \
      y = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);      \
      r = _mm512_mask_mov_epi32(r,                                                     \
                                _mm512_cmplt_epi32_mask(u, _mm512_set1_epi32(NORMAL_MIN)), \
                                _mm512_cvttps_epi32(y));                               \
      r = _mm512_mask_mov_epi32(r, _mm512_cmpge_epi32_mask(u, _mm512_set1_epi32(SAT_MIN)), \
                                _mm512_set1_epi32(SAT_CODE));                          \
      r = _mm512_mask_mov_epi32(                                                       \
          r, _mm512_cmpgt_epi32_mask(u, _mm512_set1_epi32(0x7f800000)), (NAN_EXPR));   \
      r = _mm512_or_si512(r, sign);                                                    \
      _mm_mask_storeu_epi8(d + i, m, _mm512_cvtepi32_epi8(r));                         \
    }                                                                                  \
  }

LLMK__F32_FP8_AVX512(f32_e4m3_avx512, 3, 0x3c800000, 0x43e00000, 0x7e, 120 << 3, 0x1p9f,
                     _mm512_set1_epi32(0x7f))
LLMK__F32_FP8_AVX512(f32_e5m2_avx512, 2, 0x38800000, 0x47600000, 0x7b, 112 << 2, 0x1p16f,
                     _mm512_or_si512(_mm512_set1_epi32(0x7e),
                                     _mm512_and_si512(_mm512_srli_epi32(u, 21),
                                                      _mm512_set1_epi32(1))))

const llmk__convert_kernels llmk__convert_kernels_avx512 = {
    .isa = LLMK_ISA_AVX512,
    .f16_to_f32 = f16_f32_avx512,
    .bf16_to_f32 = bf16_f32_avx512,
    .e4m3_to_f32 = e4m3_f32_avx512,
    .e5m2_to_f32 = e5m2_f32_avx512,
    .f32_to_f16 = f32_f16_avx512,
    .f32_to_bf16 = f32_bf16_avx512,
    .f32_to_e4m3 = f32_e4m3_avx512,
    .f32_to_e5m2 = f32_e5m2_avx512,
};
