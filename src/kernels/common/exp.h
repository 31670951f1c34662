/* SPDX-License-Identifier: Apache-2.0 */
/* exp(x) for x <= 0 with the same bits on every ISA (exp-avx2.h / exp-avx512.h repeat
 * it operation for operation), in two forms: llmk__exp_nonpos_fma for the top-k/top-p
 * softmax and the conv's SiLU, llmk__exp_nonpos for the min-p threshold and the sampler.
 */
#ifndef LLMK_KERNELS_EXP_H
#define LLMK_KERNELS_EXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) in f32 for x <= 0, the same bits on every ISA: the SIMD kernels do the very
 * same operations in the same order (no FMA contraction, C11 mode). 0 below -104. */
#define LLMK__EXP_LOG2E 1.44269504088896341f
#define LLMK__EXP_C1 0.693359375f
#define LLMK__EXP_C2 -2.12194440e-4f
#define LLMK__EXP_MAGIC 12582912.0f   /* 1.5 * 2^23: adding it rounds to an integer */
#define LLMK__EXP_P0 1.9875691500e-4f /* the polynomial, highest degree first */
#define LLMK__EXP_P1 1.3981999507e-3f
#define LLMK__EXP_P2 8.3334519073e-3f
#define LLMK__EXP_P3 4.1665795894e-2f
#define LLMK__EXP_P4 1.6666665459e-1f
#define LLMK__EXP_P5 5.0000001201e-1f

/* p * 2^n (n = ni in [-150, 0]) in two steps so that subnormal results round once, at
 * the end */
static inline float llmk__exp_scale(float p, int32_t ni) {
  int32_t n1 = ni < -100 ? -100 : ni, n2 = ni - n1;
  uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, 4);
  memcpy(&s2, &b2, 4);
  return (p * s1) * s2;
}

static inline float llmk__exp_nonpos(float x) {
  if (!(x >= -104.0f)) return 0.0f; /* -inf and anything that underflows */
  float t = x * LLMK__EXP_LOG2E;
  float n = (t + LLMK__EXP_MAGIC) - LLMK__EXP_MAGIC;
  float r = x - n * LLMK__EXP_C1;
  r = r - n * LLMK__EXP_C2;
  float p = LLMK__EXP_P0;
  p = p * r + LLMK__EXP_P1;
  p = p * r + LLMK__EXP_P2;
  p = p * r + LLMK__EXP_P3;
  p = p * r + LLMK__EXP_P4;
  p = p * r + LLMK__EXP_P5;
  float z = r * r;
  p = p * z + r;
  p = p + 1.0f;
  return llmk__exp_scale(p, (int32_t)n); /* n in [-150, 0] */
}

/* The same exp with its multiply-adds fused (one rounding each), as the top-k/top-p
 * softmax computes it on every ISA: the SIMD forms are shorter and faster with FMA, and
 * fmaf() gives the same bits where the CPU has none (glibc picks the CPU's FMA at run
 * time where there is one). Monotone too (tested). */
static inline float llmk__exp_nonpos_fma(float x) {
  if (!(x >= -104.0f)) return 0.0f;
  float t = x * LLMK__EXP_LOG2E;
  float n = (t + LLMK__EXP_MAGIC) - LLMK__EXP_MAGIC;
  float r = fmaf(-n, LLMK__EXP_C1, x);
  r = fmaf(-n, LLMK__EXP_C2, r);
  float p = fmaf(LLMK__EXP_P0, r, LLMK__EXP_P1);
  p = fmaf(p, r, LLMK__EXP_P2);
  p = fmaf(p, r, LLMK__EXP_P3);
  p = fmaf(p, r, LLMK__EXP_P4);
  p = fmaf(p, r, LLMK__EXP_P5);
  p = fmaf(p, r * r, r);
  return llmk__exp_scale(p + 1.0f, (int32_t)n);
}

/* SiLU y / (1 + exp(-y)) through exp of a non-positive argument:
 * t = exp(-|y|); y >= 0: y / (1 + t); y < 0: y * t / (1 + t); -inf -> -0. The fused exp:
 * a fifth fewer operations per element than the unfused one on AVX-512, and as exact
 * (both within 1 ulp of exp on the SiLU range). */
static inline float llmk__silu(float y) {
  float t = llmk__exp_nonpos_fma(-__builtin_fabsf(y));
  if (y == -__builtin_inff()) return -0.0f;
  return (y >= 0.0f ? y : y * t) / (1.0f + t);
}

#endif
