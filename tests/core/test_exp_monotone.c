/* SPDX-License-Identifier: Apache-2.0 */
/* Both forms of the exp (llmk__exp_nonpos, llmk__exp_nonpos_fma) are monotone: e(d) <=
 * e(d') for every pair of floats d < d' in [-104, 0] (beyond that it is 0). Top-p relies
 * on it: its mass bins are ranges of e, and it finds the keys of a bin by bisection, so a
 * bin must be a range of x. Every float is checked where the CPU runs the AVX2 exp (the
 * same bits as the scalar one: checked here on a sample, and everywhere by the kernel
 * tests' random rows); otherwise every float near the seams of the range reduction, where
 * n changes, and every 7th elsewhere (on aarch64, the fused form with the NEON exp of
 * the top-k/top-p kernels, compared with the scalar one on a sample). */
#include <stdint.h>
#include <string.h>

#include "kernels/common/exp.h"
#include "test_util.h"

typedef float (*exp_fn)(float);
static float exp_plain(float x) {
  return llmk__exp_nonpos(x);
}
static float exp_fused(float x) {
  return llmk__exp_nonpos_fma(x);
}
static const exp_fn scalar_exp[2] = {exp_plain, exp_fused};
static const char *const form[2] = {"llmk__exp_nonpos", "llmk__exp_nonpos_fma"};

static float f_of(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__) /* GCC target pragmas */
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "kernels/common/exp-avx2.h"

/* bits from b0 down to b1 (d from -0 down to -104): the number of increases of e as d
 * decreases, and of AVX2 / scalar disagreements on every 4099th vector */
static void check_avx2(int fused, uint32_t b0, uint32_t b1, uint64_t *incr,
                       uint64_t *diff) {
  float prev = 2.0f;
  uint64_t n = 0;
  for (uint32_t b = b0; b <= b1; b += 8, n++) {
    uint32_t bb[8];
    float e[8];
    for (int i = 0; i < 8; i++) bb[i] = b + (uint32_t)i <= b1 ? b + (uint32_t)i : b1;
    __m256 x = _mm256_loadu_ps((const float *)(const void *)bb);
    _mm256_storeu_ps(e, fused ? llmk__avx2_exp_nonpos_fma(x) : llmk__avx2_exp_nonpos(x));
    for (int i = 0; i < 8; i++) {
      *incr += e[i] > prev;
      prev = e[i];
    }
    if (n % 4099 == 0)
      for (int i = 0; i < 8; i++)
        *diff += memcmp(&e[i], &(float){scalar_exp[fused](f_of(bb[i]))}, 4) != 0;
  }
}
#pragma GCC pop_options
#define HAVE_AVX2_CHECK 1
#endif

#if defined(__aarch64__)
#include "kernels/apply_top_k_top_p/apply_top_k_top_p-neon.h"

/* the NEON fused exp on the bits lo, lo + step, .. up to hi (d from -0 down): the number
 * of increases of e as d decreases, and of NEON / scalar disagreements (its form for
 * d >= -69 included) on every 8th vector */
static void check_neon(uint32_t lo, uint32_t hi, uint32_t step, uint64_t *incr,
                       uint64_t *diff) {
  const uint32_t ge69 = 0xC28A0000u; /* -69 */
  float prev = 2.0f;
  uint64_t n = 0;
  for (uint64_t b = lo; b <= hi; b += 4 * (uint64_t)step, n++) {
    uint32_t bb[4];
    float e[4], g[4];
    for (int i = 0; i < 4; i++)
      bb[i] = b + (uint64_t)i * step <= hi ? (uint32_t)(b + (uint64_t)i * step) : hi;
    float32x4_t x = vreinterpretq_f32_u32(vld1q_u32(bb));
    vst1q_f32(e, llmk__neon_exp_nonpos_fma(x));
    for (int i = 0; i < 4; i++) {
      *incr += e[i] > prev;
      prev = e[i];
    }
    if (n % 8) continue;
    vst1q_f32(g, llmk__neon_exp_nonpos_fma_ge69(x));
    for (int i = 0; i < 4; i++) {
      float want = llmk__exp_nonpos_fma(f_of(bb[i]));
      *diff += memcmp(&e[i], &want, 4) != 0 || (bb[i] <= ge69 && memcmp(&g[i], &want, 4));
    }
  }
}
#define HAVE_NEON_CHECK 1
#endif

int main(void) {
  const uint32_t b0 = 0x80000000u, b1 = 0xC2D00000u; /* -0 .. -104 */
  for (int f = 0; f < 2; f++) {
    uint64_t incr = 0;
#ifdef HAVE_AVX2_CHECK
    uint64_t diff = 0;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      check_avx2(f, b0, b1, &incr, &diff);
      printf("%s: every float in [-104, 0] with the AVX2 exp\n", form[f]);
      TU_CHECK(diff == 0, "%s: AVX2 and scalar exp differ on %llu sampled values",
               form[f], (unsigned long long)diff);
      TU_CHECK(incr == 0, "%s increases %llu times as d decreases", form[f],
               (unsigned long long)incr);
      continue;
    }
#endif
#ifdef HAVE_NEON_CHECK
    if (f == 1) {
      uint64_t diff = 0;
      for (int k = 0; k <= 150; k++) { /* the seams, as below */
        float s = -((float)k + 0.5f) * 0.693147182f;
        uint32_t c;
        memcpy(&c, &s, 4);
        check_neon(c - 65536 > b0 ? c - 65536 : b0, c + 65536 < b1 ? c + 65536 : b1, 1,
                   &incr, &diff);
      }
      check_neon(b0, b1, 7, &incr, &diff);
      printf("%s: the NEON exp near its seams and on every 7th float in [-104, 0]\n",
             form[f]);
      TU_CHECK(diff == 0, "%s: NEON and scalar exp differ on %llu values", form[f],
               (unsigned long long)diff);
      TU_CHECK(incr == 0, "%s increases %llu times as d decreases", form[f],
               (unsigned long long)incr);
      continue;
    }
#endif
    /* seams: d = -(k + 1/2) ln 2, k = 0..150, and 2^16 floats on either side of each */
    for (int k = 0; k <= 150; k++) {
      float s = -((float)k + 0.5f) * 0.693147182f;
      uint32_t c;
      memcpy(&c, &s, 4);
      uint32_t lo = c - 65536 > b0 ? c - 65536 : b0, hi = c + 65536 < b1 ? c + 65536 : b1;
      float prev = scalar_exp[f](f_of(lo));
      for (uint32_t b = lo + 1; b <= hi; b++) {
        float e = scalar_exp[f](f_of(b));
        incr += e > prev;
        prev = e;
      }
    }
    for (uint32_t b = b0; b + 7 <= b1; b += 7)
      incr += scalar_exp[f](f_of(b + 7)) > scalar_exp[f](f_of(b));
    printf("%s: the scalar exp near its seams and on every 7th float in [-104, 0]\n",
           form[f]);
    TU_CHECK(incr == 0, "%s increases %llu times as d decreases", form[f],
             (unsigned long long)incr);
  }
  return tu_finish("test_exp_monotone");
}
