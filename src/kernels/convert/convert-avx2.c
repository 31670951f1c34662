/* AVX2 + F16C conversion kernels; tails use the scalar definitions. */
#include <immintrin.h>

#include "dispatch/dispatch.h"
#include "kernels/convert/convert-scalar.h"

static inline __m256i narrow_to_u8x8(__m256i v) {
  /* low byte of each 32-bit lane -> 8 bytes in the low 64 bits */
  const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                        -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1,
                                        -1, -1, -1, -1);
  v = _mm256_shuffle_epi8(v, pick);
  return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1));
}

static void f16_f32_avx2(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
  for (; i < n; i++) dst[i] = llmk__f16_to_f32(s[i]);
}

static void f32_f16_avx2(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; i++) d[i] = llmk__f32_to_f16(src[i]);
}

static void bf16_f32_avx2(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
    _mm256_storeu_si256((__m256i *)(dst + i), _mm256_slli_epi32(v, 16));
  }
  for (; i < n; i++) dst[i] = llmk__bf16_to_f32(s[i]);
}

static void f32_bf16_avx2(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i u = _mm256_loadu_si256((const __m256i *)(src + i));
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, bias), lsb), 16);
    __m256i q = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    r = _mm256_blendv_epi8(r, q, nan);
    __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128((__m128i *)(d + i), _mm256_castsi256_si128(p));
  }
  for (; i < n; i++) d[i] = llmk__f32_to_bf16(src[i]);
}

static void e4m3_f32_avx2(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  const __m256i m7f = _mm256_set1_epi32(0x7f), m80 = _mm256_set1_epi32(0x80);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + i)));
    __m256i mag = _mm256_and_si256(v, m7f);
    __m256i sign = _mm256_slli_epi32(_mm256_and_si256(v, m80), 24);
    __m256i normal = _mm256_slli_epi32(_mm256_add_epi32(mag, _mm256_set1_epi32(120 << 3)), 20);
    __m256i sub = _mm256_castps_si256(
        _mm256_mul_ps(_mm256_cvtepi32_ps(mag), _mm256_set1_ps(0x1p-9f)));
    __m256i r = _mm256_blendv_epi8(normal, sub, _mm256_cmpgt_epi32(_mm256_set1_epi32(8), mag));
    r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc00000), _mm256_cmpeq_epi32(mag, m7f));
    _mm256_storeu_si256((__m256i *)(dst + i), _mm256_or_si256(r, sign));
  }
  for (; i < n; i++) dst[i] = llmk__e4m3_to_f32(s[i]);
}

static void e5m2_f32_avx2(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i v = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(s + i)));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_slli_epi16(v, 8)));
  }
  for (; i < n; i++) dst[i] = llmk__e5m2_to_f32(s[i]);
}

/* f32 -> fp8 with `mbits` mantissa bits: integer rounding for target normals, an exact
 * scaled round-to-even for target subnormals, then saturation and NaN. */
#define LLMK__F32_FP8_AVX2(name, scalar, MBITS, NORMAL_MIN, SAT_MIN, SAT_CODE, EXP_ADJ,  \
                           SUB_SCALE, NAN_EXPR)                                          \
  static void name(void *dst, const float *src, size_t n) {                              \
    uint8_t *d = dst;                                                                    \
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);                              \
    const int shift = 23 - (MBITS);                                                      \
    size_t i = 0;                                                                        \
    for (; i + 8 <= n; i += 8) {                                                         \
      __m256i x = _mm256_loadu_si256((const __m256i *)(src + i));                        \
      __m256i u = _mm256_and_si256(x, abs_mask);                                         \
      __m256i sign = _mm256_and_si256(_mm256_srli_epi32(x, 24), _mm256_set1_epi32(0x80)); \
      __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, shift), _mm256_set1_epi32(1)); \
      __m256i r = _mm256_add_epi32(u, _mm256_set1_epi32((1 << (shift - 1)) - 1));        \
      r = _mm256_srli_epi32(_mm256_add_epi32(r, lsb), shift);                            \
      r = _mm256_sub_epi32(r, _mm256_set1_epi32(EXP_ADJ));                               \
      __m256 y = _mm256_mul_ps(_mm256_castsi256_ps(u), _mm256_set1_ps(SUB_SCALE));       \
      y = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);             \
      __m256i sub = _mm256_cvttps_epi32(y);                                              \
      __m256i is_sub = _mm256_cmpgt_epi32(_mm256_set1_epi32(NORMAL_MIN), u);             \
      r = _mm256_blendv_epi8(r, sub, is_sub);                                            \
      __m256i sat = _mm256_cmpgt_epi32(u, _mm256_set1_epi32((SAT_MIN) - 1));             \
      r = _mm256_blendv_epi8(r, _mm256_set1_epi32(SAT_CODE), sat);                       \
      __m256i nan = _mm256_cmpgt_epi32(u, _mm256_set1_epi32(0x7f800000));                \
      r = _mm256_blendv_epi8(r, (NAN_EXPR), nan);                                        \
      r = _mm256_or_si256(r, sign);                                                      \
      _mm_storel_epi64((__m128i *)(d + i), _mm256_castsi256_si128(narrow_to_u8x8(r)));   \
    }                                                                                    \
    for (; i < n; i++) d[i] = scalar(src[i]);                                            \
  }

LLMK__F32_FP8_AVX2(f32_e4m3_avx2, llmk__f32_to_e4m3, 3, 0x3c800000, 0x43e00000, 0x7e,
                   120 << 3, 0x1p9f, _mm256_set1_epi32(0x7f))
LLMK__F32_FP8_AVX2(f32_e5m2_avx2, llmk__f32_to_e5m2, 2, 0x38800000, 0x47600000, 0x7b,
                   112 << 2, 0x1p16f,
                   _mm256_or_si256(_mm256_set1_epi32(0x7e),
                                   _mm256_and_si256(_mm256_srli_epi32(u, 21),
                                                    _mm256_set1_epi32(1))))

const llmk__convert_kernels llmk__convert_kernels_avx2 = {
    .isa = LLMK_ISA_AVX2,
    .f16_to_f32 = f16_f32_avx2,
    .bf16_to_f32 = bf16_f32_avx2,
    .e4m3_to_f32 = e4m3_f32_avx2,
    .e5m2_to_f32 = e5m2_f32_avx2,
    .f32_to_f16 = f32_f16_avx2,
    .f32_to_bf16 = f32_bf16_avx2,
    .f32_to_e4m3 = f32_e4m3_avx2,
    .f32_to_e5m2 = f32_e5m2_avx2,
};
