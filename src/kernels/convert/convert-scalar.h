/* SPDX-License-Identifier: Apache-2.0 */
/* Element conversions, bit-exact definitions shared by the public functions, the
 * scalar kernels and the SIMD kernels' tails. NaN handling matches F16C
 * (vcvtph2ps / vcvtps2ph), so that every ISA gives the same bits. */
#ifndef LLMK_CONVERT_SCALAR_H
#define LLMK_CONVERT_SCALAR_H

#include <stdint.h>
#include <string.h>

static inline uint32_t llmk__f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static inline float llmk__bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline float llmk__f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) /* inf, or NaN made quiet */
    return llmk__bits_f32(sign | 0x7f800000u | (mant ? 0x400000u | (mant << 13) : 0));
  if (exp == 0) {
    /* zero or subnormal: mant * 2^-24, exact in f32 */
    float v = (float)mant * 0x1p-24f;
    return llmk__bits_f32(sign | llmk__f32_bits(v));
  }
  return llmk__bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

/* Round the f32 magnitude bits `u` (finite, not NaN) to a float format with `mbits`
 * mantissa bits and exponent bias `bias`, ties to even. Returns the target's
 * magnitude code; a result beyond the largest exponent is returned as is (the
 * caller saturates or makes it infinity). */
static inline uint32_t llmk__round_magnitude(uint32_t u, int mbits, int bias) {
  int exp = (int)(u >> 23); /* biased f32 exponent, 0..254 */
  int e = exp - 127;        /* unbiased */
  if (e >= 1 - bias) {      /* normal in the target */
    int shift = 23 - mbits;
    uint32_t r = u + ((1u << (shift - 1)) - 1) + ((u >> shift) & 1);
    return (r >> shift) - ((uint32_t)(127 - bias) << mbits);
  }
  /* subnormal in the target: units of 2^(1 - bias - mbits) */
  if (exp == 0) return 0; /* f32 subnormals are far below every target's half step */
  uint32_t m = (u & 0x7fffff) | 0x800000;
  int sh = 150 - exp + 1 - bias - mbits; /* value / unit = m >> sh */
  if (sh >= 25) return 0;
  uint32_t q = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  return q;
}

static inline uint16_t llmk__f32_to_f16(float f) {
  uint32_t u = llmk__f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  u &= 0x7fffffff;
  if (u > 0x7f800000u) return (uint16_t)(sign | 0x7e00 | ((u >> 13) & 0x3ff));
  if (u >= 0x47800000u) return (uint16_t)(sign | 0x7c00); /* >= 65536, inf */
  uint32_t code = llmk__round_magnitude(u, 10, 15);
  if (code > 0x7c00) code = 0x7c00;
  return (uint16_t)(sign | code);
}

static inline float llmk__bf16_to_f32(uint16_t b) {
  return llmk__bits_f32((uint32_t)b << 16);
}

static inline uint16_t llmk__f32_to_bf16(float f) {
  uint32_t u = llmk__f32_bits(f);
  if ((u & 0x7fffffff) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static inline float llmk__e4m3_to_f32(uint8_t v) {
  uint32_t sign = (uint32_t)(v & 0x80) << 24, mag = v & 0x7f;
  if (mag == 0x7f) return llmk__bits_f32(sign | 0x7fc00000u);
  /* integer arithmetic only, so that a caller's DAZ/FTZ mode cannot change results */
  if (mag < 8) return llmk__bits_f32(sign | llmk__f32_bits((float)mag * 0x1p-9f));
  return llmk__bits_f32(sign | ((mag + (120u << 3)) << 20));
}

static inline uint8_t llmk__f32_to_e4m3(float f) {
  uint32_t u = llmk__f32_bits(f);
  uint8_t sign = (uint8_t)((u >> 24) & 0x80);
  u &= 0x7fffffff;
  if (u > 0x7f800000u) return (uint8_t)(sign | 0x7f);
  if (u >= 0x43e00000u) return (uint8_t)(sign | 0x7e); /* >= 448, inf included */
  uint32_t code = llmk__round_magnitude(u, 3, 7);
  return (uint8_t)(sign | (code > 0x7e ? 0x7e : code));
}

static inline float llmk__e5m2_to_f32(uint8_t v) {
  return llmk__f16_to_f32((uint16_t)(v << 8));
}

static inline uint8_t llmk__f32_to_e5m2(float f) {
  uint32_t u = llmk__f32_bits(f);
  uint8_t sign = (uint8_t)((u >> 24) & 0x80);
  u &= 0x7fffffff;
  if (u > 0x7f800000u) return (uint8_t)(sign | 0x7e | ((u >> 21) & 1));
  if (u >= 0x47600000u) return (uint8_t)(sign | 0x7b); /* >= 57344, inf included */
  uint32_t code = llmk__round_magnitude(u, 2, 15);
  return (uint8_t)(sign | (code > 0x7b ? 0x7b : code));
}

#endif
