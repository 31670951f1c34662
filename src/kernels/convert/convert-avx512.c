/* SPDX-License-Identifier: Apache-2.0 */
/* AVX-512 (F, BW, VL, DQ) conversion kernels; tails use masked loads and stores. */
#include "kernels/convert/convert-avx512.h"

#include "dispatch/dispatch.h"
#include "kernels/convert/convert.h"

static void f16_f32_avx512(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  for (size_t i = 0; i < n; i += 16)
    _mm512_mask_storeu_ps(dst + i, llmk__mask16(n - i),
                          llmk__avx512_load_f32(s + i, LLMK_F16, llmk__mask16(n - i)));
}

static void bf16_f32_avx512(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  for (size_t i = 0; i < n; i += 16)
    _mm512_mask_storeu_ps(dst + i, llmk__mask16(n - i),
                          llmk__avx512_load_f32(s + i, LLMK_BF16, llmk__mask16(n - i)));
}

static void f32_f16_avx512(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = llmk__mask16(n - i);
    llmk__avx512_store_f32(d + i, LLMK_F16, m, _mm512_maskz_loadu_ps(m, src + i));
  }
}

static void f32_bf16_avx512(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = llmk__mask16(n - i);
    llmk__avx512_store_f32(d + i, LLMK_BF16, m, _mm512_maskz_loadu_ps(m, src + i));
  }
}

static void e4m3_f32_avx512(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = llmk__mask16(n - i);
    _mm512_mask_storeu_ps(dst + i, m,
                          llmk__avx512_e4m3_to_f32(_mm_maskz_loadu_epi8(m, s + i)));
  }
}

static void e5m2_f32_avx512(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = llmk__mask16(n - i);
    _mm512_mask_storeu_ps(dst + i, m,
                          llmk__avx512_e5m2_to_f32(_mm_maskz_loadu_epi8(m, s + i)));
  }
}

static void f32_e4m3_avx512(void *dst, const float *src, size_t n) {
  uint8_t *d = dst;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = llmk__mask16(n - i);
    _mm_mask_storeu_epi8(
        d + i, m, llmk__avx512_f32_to_fp8(_mm512_maskz_loadu_ps(m, src + i), false));
  }
}

static void f32_e5m2_avx512(void *dst, const float *src, size_t n) {
  uint8_t *d = dst;
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = llmk__mask16(n - i);
    _mm_mask_storeu_epi8(
        d + i, m, llmk__avx512_f32_to_fp8(_mm512_maskz_loadu_ps(m, src + i), true));
  }
}

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
