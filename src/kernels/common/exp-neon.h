/* SPDX-License-Identifier: Apache-2.0 */
/* NEON (aarch64) llmk__exp_nonpos and llmk__silu (4 lanes), operation for operation:
 * llmk__exp_nonpos with separate multiplies and adds (never vmlaq, which rounds the
 * product), SiLU's llmk__exp_nonpos_fma with vfmaq / vfmsq (one rounding, as fmaf). A64
 * vector arithmetic is IEEE with the FPCR's rounding and denormals, as scalar code is. */
#ifndef LLMK_KERNELS_EXP_NEON_H
#define LLMK_KERNELS_EXP_NEON_H

#include <arm_neon.h>

#include "kernels/common/exp.h"

/* Each step across the G vectors before the next, so that the core sees G independent
 * chains (the exp is one long dependent chain per vector). */
#define LLMK__EACH _Pragma("GCC unroll 8") for (int g = 0; g < G; g++)

/* llmk__exp_nonpos (fused: llmk__exp_nonpos_fma) of G vectors in place (G <= 8) */
static inline __attribute__((always_inline)) void llmk__neon_exp_n(float32x4_t *x,
                                                                   const int G,
                                                                   const int fused) {
  uint32x4_t valid[8];
  float32x4_t n[8], r[8], p[8], z[8];
  LLMK__EACH valid[g] = vcgeq_f32(x[g], vdupq_n_f32(-104.0f));
  LLMK__EACH n[g] = vmulq_f32(x[g], vdupq_n_f32(LLMK__EXP_LOG2E));
  LLMK__EACH n[g] = vsubq_f32(vaddq_f32(n[g], vdupq_n_f32(LLMK__EXP_MAGIC)),
                              vdupq_n_f32(LLMK__EXP_MAGIC));
  if (fused) {
    LLMK__EACH r[g] = vfmsq_f32(x[g], n[g], vdupq_n_f32(LLMK__EXP_C1));
    LLMK__EACH r[g] = vfmsq_f32(r[g], n[g], vdupq_n_f32(LLMK__EXP_C2));
    LLMK__EACH p[g] =
        vfmaq_f32(vdupq_n_f32(LLMK__EXP_P1), vdupq_n_f32(LLMK__EXP_P0), r[g]);
    LLMK__EACH p[g] = vfmaq_f32(vdupq_n_f32(LLMK__EXP_P2), p[g], r[g]);
    LLMK__EACH p[g] = vfmaq_f32(vdupq_n_f32(LLMK__EXP_P3), p[g], r[g]);
    LLMK__EACH p[g] = vfmaq_f32(vdupq_n_f32(LLMK__EXP_P4), p[g], r[g]);
    LLMK__EACH p[g] = vfmaq_f32(vdupq_n_f32(LLMK__EXP_P5), p[g], r[g]);
    LLMK__EACH z[g] = vmulq_f32(r[g], r[g]);
    LLMK__EACH p[g] = vfmaq_f32(r[g], p[g], z[g]);
  } else {
    LLMK__EACH r[g] = vsubq_f32(x[g], vmulq_f32(n[g], vdupq_n_f32(LLMK__EXP_C1)));
    LLMK__EACH r[g] = vsubq_f32(r[g], vmulq_f32(n[g], vdupq_n_f32(LLMK__EXP_C2)));
    LLMK__EACH p[g] = vdupq_n_f32(LLMK__EXP_P0);
    LLMK__EACH p[g] = vaddq_f32(vmulq_f32(p[g], r[g]), vdupq_n_f32(LLMK__EXP_P1));
    LLMK__EACH p[g] = vaddq_f32(vmulq_f32(p[g], r[g]), vdupq_n_f32(LLMK__EXP_P2));
    LLMK__EACH p[g] = vaddq_f32(vmulq_f32(p[g], r[g]), vdupq_n_f32(LLMK__EXP_P3));
    LLMK__EACH p[g] = vaddq_f32(vmulq_f32(p[g], r[g]), vdupq_n_f32(LLMK__EXP_P4));
    LLMK__EACH p[g] = vaddq_f32(vmulq_f32(p[g], r[g]), vdupq_n_f32(LLMK__EXP_P5));
    LLMK__EACH z[g] = vmulq_f32(r[g], r[g]);
    LLMK__EACH p[g] = vaddq_f32(vmulq_f32(p[g], z[g]), r[g]);
  }
  LLMK__EACH p[g] = vaddq_f32(p[g], vdupq_n_f32(1.0f));
  /* llmk__exp_scale: p * 2^n1 * 2^n2, n1 = max(n, -100), so that a subnormal result
   * rounds once; the lanes below -104 (and NaN) give 0 */
  LLMK__EACH {
    int32x4_t ni = vcvtq_s32_f32(
        vreinterpretq_f32_u32(vandq_u32(valid[g], vreinterpretq_u32_f32(n[g]))));
    int32x4_t n1 = vmaxq_s32(ni, vdupq_n_s32(-100));
    int32x4_t n2 = vsubq_s32(ni, n1);
    float32x4_t s1 =
        vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, vdupq_n_s32(127)), 23));
    float32x4_t s2 =
        vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, vdupq_n_s32(127)), 23));
    x[g] = vreinterpretq_f32_u32(
        vandq_u32(valid[g], vreinterpretq_u32_f32(vmulq_f32(vmulq_f32(p[g], s1), s2))));
  }
}

static inline float32x4_t llmk__neon_exp_nonpos(float32x4_t x) {
  llmk__neon_exp_n(&x, 1, 0);
  return x;
}

/* llmk__silu of G vectors in place (G <= 8): t = exp(-|y|) (fused); y >= 0: y / (1 + t);
 * otherwise (NaN too) y * t / (1 + t); -inf -> -0 */
static inline __attribute__((always_inline)) void llmk__neon_silu_n(float32x4_t *y,
                                                                    const int G) {
  float32x4_t t[8];
  LLMK__EACH t[g] = vnegq_f32(vabsq_f32(y[g]));
  llmk__neon_exp_n(t, G, 1);
  LLMK__EACH {
    uint32x4_t nonneg = vcgeq_f32(y[g], vdupq_n_f32(0.0f));
    float32x4_t num = vbslq_f32(nonneg, y[g], vmulq_f32(y[g], t[g]));
    float32x4_t r = vdivq_f32(num, vaddq_f32(vdupq_n_f32(1.0f), t[g]));
    uint32x4_t ninf = vceqq_f32(y[g], vdupq_n_f32(-__builtin_inff()));
    y[g] = vbslq_f32(ninf, vdupq_n_f32(-0.0f), r);
  }
}
#undef LLMK__EACH

static inline float32x4_t llmk__neon_silu(float32x4_t y) {
  llmk__neon_silu_n(&y, 1);
  return y;
}

#endif
