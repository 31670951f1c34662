/* SPDX-License-Identifier: Apache-2.0 */
/* NEON llmk__exp_nonpos_fma (4 lanes), operation for operation: vfmaq / vfmsq where the
 * scalar form calls fmaf (the negation of a product is exact, so a - b * c fused is
 * fmaf(-b, c, a)), plain multiplies and adds elsewhere (-ffp-contract=off keeps them
 * apart). Included by the NEON top-k/top-p kernels and the exp test. */
#ifndef LLMK_KERNELS_TKP_NEON_H
#define LLMK_KERNELS_TKP_NEON_H

#include <arm_neon.h>

#include "kernels/common/exp.h"

/* exp(x) / 2^n for n = x / ln 2 rounded: the reduction and the polynomial, fused */
static inline float32x4_t llmk__neon_exp_mantissa_fma(float32x4_t x, float32x4_t n) {
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(LLMK__EXP_C1));
  r = vfmsq_f32(r, n, vdupq_n_f32(LLMK__EXP_C2));
  float32x4_t p = vfmaq_f32(vdupq_n_f32(LLMK__EXP_P1), vdupq_n_f32(LLMK__EXP_P0), r);
  p = vfmaq_f32(vdupq_n_f32(LLMK__EXP_P2), p, r);
  p = vfmaq_f32(vdupq_n_f32(LLMK__EXP_P3), p, r);
  p = vfmaq_f32(vdupq_n_f32(LLMK__EXP_P4), p, r);
  p = vfmaq_f32(vdupq_n_f32(LLMK__EXP_P5), p, r);
  p = vfmaq_f32(r, p, vmulq_f32(r, r));
  return vaddq_f32(p, vdupq_n_f32(1.0f));
}

static inline float32x4_t llmk__neon_exp_nonpos_fma(float32x4_t x) {
  const float32x4_t magic = vdupq_n_f32(LLMK__EXP_MAGIC);
  float32x4_t t = vmulq_f32(x, vdupq_n_f32(LLMK__EXP_LOG2E));
  float32x4_t n = vsubq_f32(vaddq_f32(t, magic), magic);
  float32x4_t p = llmk__neon_exp_mantissa_fma(x, n);
  /* llmk__exp_scale of the lanes with x >= -104 (not NaN), 0 in the others */
  uint32x4_t valid = vcgeq_f32(x, vdupq_n_f32(-104.0f));
  int32x4_t ni =
      vcvtq_s32_f32(vreinterpretq_f32_u32(vandq_u32(valid, vreinterpretq_u32_f32(n))));
  int32x4_t n1 = vmaxq_s32(ni, vdupq_n_s32(-100)), n2 = vsubq_s32(ni, n1);
  float32x4_t s1 =
      vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, vdupq_n_s32(127)), 23));
  float32x4_t s2 =
      vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, vdupq_n_s32(127)), 23));
  float32x4_t e = vmulq_f32(vmulq_f32(p, s1), s2);
  return vreinterpretq_f32_u32(vandq_u32(valid, vreinterpretq_u32_f32(e)));
}

/* llmk__neon_exp_nonpos_fma for x >= -69 (callers check): the result is normal, so the
 * range mask and the second scaling step (by 2^0) change nothing, and rounding by the
 * magic constant is rounding to nearest even. */
static inline float32x4_t llmk__neon_exp_nonpos_fma_ge69(float32x4_t x) {
  float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(LLMK__EXP_LOG2E)));
  float32x4_t p = llmk__neon_exp_mantissa_fma(x, n);
  int32x4_t b = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  return vmulq_f32(p, vreinterpretq_f32_s32(b));
}

#endif
