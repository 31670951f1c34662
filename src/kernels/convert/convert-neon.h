/* SPDX-License-Identifier: Apache-2.0 */
/* NEON (aarch64 Advanced SIMD) conversion cores (4 lanes), shared by the conversion
 * kernels and the ops that widen or narrow on the fly. Bit-identical to convert-scalar.h
 * (whose NaN rules are those of F16C, which the A64 conversions with FPCR.DN = 0 follow
 * too); callers do tails with the scalar code. Loads and stores go through bytes, so
 * that no pointer needs more than the element alignment the tensor checks give. */
#ifndef LLMK_CONVERT_NEON_H
#define LLMK_CONVERT_NEON_H

#include <arm_neon.h>
#include <stdbool.h>
#include <stdint.h>

#include "llmk/types.h"

/* bf16 of 4 f32 values, round to nearest even, quiet NaNs kept NaN, in the low 16 bits
 * of 32-bit lanes */
static inline uint32x4_t llmk__neon_bf16_bits(float32x4_t x) {
  uint32x4_t u = vreinterpretq_u32_f32(x);
  uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
  uint32x4_t r = vshrq_n_u32(vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7fff)), lsb), 16);
  uint32x4_t nan =
      vcgtq_u32(vandq_u32(u, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
  uint32x4_t q = vorrq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(0x40));
  return vbslq_u32(nan, q, r);
}

static inline uint16x4_t llmk__neon_f32_to_bf16(float32x4_t x) {
  return vmovn_u32(llmk__neon_bf16_bits(x));
}

static inline float32x4_t llmk__neon_bf16_to_f32(uint16x4_t h) {
  return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}

static inline float32x4_t llmk__neon_f16_to_f32(uint16x4_t h) {
  return vcvt_f32_f16(vreinterpret_f16_u16(h));
}

static inline uint16x4_t llmk__neon_f32_to_f16(float32x4_t x) {
  return vreinterpret_u16_f16(vcvt_f16_f32(x));
}

/* e4m3 bytes, one in the low byte of each 32-bit lane (the rest zero) */
static inline float32x4_t llmk__neon_e4m3_to_f32(uint32x4_t v) {
  uint32x4_t mag = vandq_u32(v, vdupq_n_u32(0x7f));
  uint32x4_t sign = vshlq_n_u32(vandq_u32(v, vdupq_n_u32(0x80)), 24);
  uint32x4_t normal = vshlq_n_u32(vaddq_u32(mag, vdupq_n_u32(120u << 3)), 20);
  uint32x4_t sub =
      vreinterpretq_u32_f32(vmulq_f32(vcvtq_f32_u32(mag), vdupq_n_f32(0x1p-9f)));
  uint32x4_t r = vbslq_u32(vcltq_u32(mag, vdupq_n_u32(8)), sub, normal);
  r = vbslq_u32(vceqq_u32(mag, vdupq_n_u32(0x7f)), vdupq_n_u32(0x7fc00000), r);
  return vreinterpretq_f32_u32(vorrq_u32(r, sign));
}

/* e5m2 is the high byte of an f16 */
static inline float32x4_t llmk__neon_e5m2_to_f32(uint32x4_t v) {
  return llmk__neon_f16_to_f32(vshl_n_u16(vmovn_u32(v), 8));
}

/* fp8 codes of 4 f32 values (round to nearest even, saturating, NaN kept NaN), one in
 * the low byte of each 32-bit lane */
static inline uint32x4_t llmk__neon_f32_to_fp8(float32x4_t xf, bool e5m2) {
  const int shift = e5m2 ? 21 : 20;
  const uint32_t normal_min = e5m2 ? 0x38800000u : 0x3c800000u,
                 sat_min = e5m2 ? 0x47600000u : 0x43e00000u;
  const uint32_t sat_code = e5m2 ? 0x7bu : 0x7eu, exp_adj = e5m2 ? 112u << 2 : 120u << 3;
  const float sub_scale = e5m2 ? 0x1p16f : 0x1p9f;
  const int32x4_t down = vdupq_n_s32(-shift);
  uint32x4_t x = vreinterpretq_u32_f32(xf);
  uint32x4_t u = vandq_u32(x, vdupq_n_u32(0x7fffffff));
  uint32x4_t sign = vandq_u32(vshrq_n_u32(x, 24), vdupq_n_u32(0x80));
  uint32x4_t lsb = vandq_u32(vshlq_u32(u, down), vdupq_n_u32(1));
  uint32x4_t r = vaddq_u32(u, vdupq_n_u32((1u << (shift - 1)) - 1));
  r = vsubq_u32(vshlq_u32(vaddq_u32(r, lsb), down), vdupq_n_u32(exp_adj));
  /* below the smallest normal: the subnormal code is |x| / unit, rounded to even */
  float32x4_t y = vmulq_f32(vreinterpretq_f32_u32(u), vdupq_n_f32(sub_scale));
  r = vbslq_u32(vcltq_u32(u, vdupq_n_u32(normal_min)),
                vreinterpretq_u32_s32(vcvtnq_s32_f32(y)), r);
  r = vbslq_u32(vcgeq_u32(u, vdupq_n_u32(sat_min)), vdupq_n_u32(sat_code), r);
  uint32x4_t nan_code =
      e5m2 ? vorrq_u32(vdupq_n_u32(0x7e), vandq_u32(vshrq_n_u32(u, 21), vdupq_n_u32(1)))
           : vdupq_n_u32(0x7f);
  r = vbslq_u32(vcgtq_u32(u, vdupq_n_u32(0x7f800000)), nan_code, r);
  return vorrq_u32(r, sign);
}

/* the low bytes of two vectors of 32-bit lanes, as 8 bytes */
static inline uint8x8_t llmk__neon_narrow_u8x8(uint32x4_t lo, uint32x4_t hi) {
  return vmovn_u16(vcombine_u16(vmovn_u32(lo), vmovn_u32(hi)));
}

/* 4 bytes widened to the low byte of 32-bit lanes */
static inline uint32x4_t llmk__neon_widen_u8x4(const uint8_t *p) {
  uint32_t w;
  __builtin_memcpy(&w, p, 4);
  return vmovl_u16(vget_low_u16(vmovl_u8(vcreate_u8(w))));
}

static inline uint16x4_t llmk__neon_load_u16x4(const void *p) {
  return vreinterpret_u16_u8(vld1_u8((const uint8_t *)p));
}

static inline void llmk__neon_store_u16x4(void *p, uint16x4_t v) {
  vst1_u8((uint8_t *)p, vreinterpret_u8_u16(v));
}

/* 4 elements of f32, f16 or bf16 widened to f32. */
static inline float32x4_t llmk__neon_load_f32(const void *src, llmk_dtype dt) {
  if (dt == LLMK_F32) return vreinterpretq_f32_u8(vld1q_u8((const uint8_t *)src));
  uint16x4_t h = llmk__neon_load_u16x4(src);
  return dt == LLMK_F16 ? llmk__neon_f16_to_f32(h) : llmk__neon_bf16_to_f32(h);
}

/* 4 f32 values rounded to f32, f16 or bf16. */
static inline void llmk__neon_store_f32(void *dst, llmk_dtype dt, float32x4_t x) {
  if (dt == LLMK_F32)
    vst1q_u8((uint8_t *)dst, vreinterpretq_u8_f32(x));
  else
    llmk__neon_store_u16x4(
        dst, dt == LLMK_F16 ? llmk__neon_f32_to_f16(x) : llmk__neon_f32_to_bf16(x));
}

#endif
