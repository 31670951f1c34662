/* SPDX-License-Identifier: Apache-2.0 */
/* AVX2 + F16C conversion kernels; tails use the scalar definitions. */
#include "kernels/convert/convert-avx2.h"

#include "dispatch/dispatch.h"
#include "kernels/convert/convert-scalar.h"
#include "kernels/convert/convert.h"

static void f16_f32_avx2(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, llmk__avx2_load_f32(s + i, LLMK_F16));
  for (; i < n; i++) dst[i] = llmk__f16_to_f32(s[i]);
}

static void bf16_f32_avx2(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, llmk__avx2_load_f32(s + i, LLMK_BF16));
  for (; i < n; i++) dst[i] = llmk__bf16_to_f32(s[i]);
}

static void f32_f16_avx2(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    llmk__avx2_store_f32(d + i, LLMK_F16, _mm256_loadu_ps(src + i));
  for (; i < n; i++) d[i] = llmk__f32_to_f16(src[i]);
}

static void f32_bf16_avx2(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    llmk__avx2_store_f32(d + i, LLMK_BF16, _mm256_loadu_ps(src + i));
  for (; i < n; i++) d[i] = llmk__f32_to_bf16(src[i]);
}

static void e4m3_f32_avx2(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i,
                     llmk__avx2_e4m3_to_f32(_mm_loadl_epi64((const void *)(s + i))));
  for (; i < n; i++) dst[i] = llmk__e4m3_to_f32(s[i]);
}

static void e5m2_f32_avx2(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i,
                     llmk__avx2_e5m2_to_f32(_mm_loadl_epi64((const void *)(s + i))));
  for (; i < n; i++) dst[i] = llmk__e5m2_to_f32(s[i]);
}

static void f32_e4m3_avx2(void *dst, const float *src, size_t n) {
  uint8_t *d = dst;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storel_epi64((void *)(d + i),
                     llmk__avx2_f32_to_fp8(_mm256_loadu_ps(src + i), false));
  for (; i < n; i++) d[i] = llmk__f32_to_e4m3(src[i]);
}

static void f32_e5m2_avx2(void *dst, const float *src, size_t n) {
  uint8_t *d = dst;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storel_epi64((void *)(d + i),
                     llmk__avx2_f32_to_fp8(_mm256_loadu_ps(src + i), true));
  for (; i < n; i++) d[i] = llmk__f32_to_e5m2(src[i]);
}

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
