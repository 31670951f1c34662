/* SPDX-License-Identifier: Apache-2.0 */
/* NEON conversion kernels (aarch64); tails use the scalar definitions. */
#include "kernels/convert/convert-neon.h"

#include "dispatch/dispatch.h"
#include "kernels/convert/convert-scalar.h"
#include "kernels/convert/convert.h"

static void f16_f32_neon(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    llmk__neon_store_f32(dst + i, LLMK_F32, llmk__neon_load_f32(s + i, LLMK_F16));
  for (; i < n; i++) dst[i] = llmk__f16_to_f32(s[i]);
}

static void bf16_f32_neon(float *dst, const void *src, size_t n) {
  const uint16_t *s = src;
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    llmk__neon_store_f32(dst + i, LLMK_F32, llmk__neon_load_f32(s + i, LLMK_BF16));
  for (; i < n; i++) dst[i] = llmk__bf16_to_f32(s[i]);
}

static void f32_f16_neon(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    llmk__neon_store_f32(d + i, LLMK_F16, llmk__neon_load_f32(src + i, LLMK_F32));
  for (; i < n; i++) d[i] = llmk__f32_to_f16(src[i]);
}

static void f32_bf16_neon(void *dst, const float *src, size_t n) {
  uint16_t *d = dst;
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    llmk__neon_store_f32(d + i, LLMK_BF16, llmk__neon_load_f32(src + i, LLMK_F32));
  for (; i < n; i++) d[i] = llmk__f32_to_bf16(src[i]);
}

static void e4m3_f32_neon(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    llmk__neon_store_f32(dst + i, LLMK_F32,
                         llmk__neon_e4m3_to_f32(llmk__neon_widen_u8x4(s + i)));
  for (; i < n; i++) dst[i] = llmk__e4m3_to_f32(s[i]);
}

static void e5m2_f32_neon(float *dst, const void *src, size_t n) {
  const uint8_t *s = src;
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    llmk__neon_store_f32(dst + i, LLMK_F32,
                         llmk__neon_e5m2_to_f32(llmk__neon_widen_u8x4(s + i)));
  for (; i < n; i++) dst[i] = llmk__e5m2_to_f32(s[i]);
}

static void f32_fp8_neon(uint8_t *d, const float *src, size_t n, bool e5m2) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    vst1_u8(d + i,
            llmk__neon_narrow_u8x8(
                llmk__neon_f32_to_fp8(llmk__neon_load_f32(src + i, LLMK_F32), e5m2),
                llmk__neon_f32_to_fp8(llmk__neon_load_f32(src + i + 4, LLMK_F32), e5m2)));
  for (; i < n; i++) d[i] = e5m2 ? llmk__f32_to_e5m2(src[i]) : llmk__f32_to_e4m3(src[i]);
}

static void f32_e4m3_neon(void *dst, const float *src, size_t n) {
  f32_fp8_neon(dst, src, n, false);
}

static void f32_e5m2_neon(void *dst, const float *src, size_t n) {
  f32_fp8_neon(dst, src, n, true);
}

const llmk__convert_kernels llmk__convert_kernels_neon = {
    .isa = LLMK_ISA_NEON,
    .f16_to_f32 = f16_f32_neon,
    .bf16_to_f32 = bf16_f32_neon,
    .e4m3_to_f32 = e4m3_f32_neon,
    .e5m2_to_f32 = e5m2_f32_neon,
    .f32_to_f16 = f32_f16_neon,
    .f32_to_bf16 = f32_bf16_neon,
    .f32_to_e4m3 = f32_e4m3_neon,
    .f32_to_e5m2 = f32_e5m2_neon,
};
