/* apply_top_k_top_p building blocks shared by the op and its kernels. */
#ifndef LLMK_KERNELS_TKP_H
#define LLMK_KERNELS_TKP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/common/exp.h"
#include "llmk/types.h"

/* Order-preserving key of an f32 value: unsigned order of keys = order of values, with
 * -0.0 mapped to +0.0 and every NaN to the top key (NaN sorts above +inf). */
#define LLMK__KEY_NAN 0xffffffffu
#define LLMK__KEY_PINF 0xff800000u
#define LLMK__KEY_NINF 0x007fffffu

static inline uint32_t llmk__key_of_bits(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return LLMK__KEY_NAN;
  if (u == 0x80000000u) u = 0;
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

static inline uint32_t llmk__key_of(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return llmk__key_of_bits(u);
}

static inline float llmk__value_of_key(uint32_t key) {
  uint32_t u = (key & 0x80000000u) ? key & 0x7fffffffu : ~key;
  float x;
  memcpy(&x, &u, 4);
  return x;
}

/* Probability mass in 1/2^63 units: e in [0, 1] -> [0, 2^63]; sums in 128 bits are
 * exact, so every order of summation gives the same total. */
static inline uint64_t llmk__mass_of(float e) { return (uint64_t)(e * 0x1p63f); }

#define LLMK__TKP_BINS 2048

/* The value bin of x (see masses()). */
static inline uint16_t llmk__tkp_bin(float x, float lo, float scale) {
  float v = (x - lo) * scale;
  uint32_t d = v >= 0.0f ? (uint32_t)v : 0;
  return (uint16_t)(d < LLMK__TKP_BINS ? d : LLMK__TKP_BINS - 1);
}

typedef struct llmk__tkp_kernels {
  llmk_isa isa;
  /* keys[i] = llmk__key_of(x[i]); returns the largest key */
  uint32_t (*keys)(const float *x, size_t n, uint32_t *keys);
  /* number of keys >= t; the first ones (up to cap) are copied to out, in order */
  size_t (*gather_ge)(const uint32_t *keys, size_t n, uint32_t t, uint32_t *out, size_t cap);
  /* For entries with key >= min_key: their total mass, and the mass and number of those
   * with key >= tau (sums as in masses(): low and high 32-bit halves; out[0..5] =
   * total lo, total hi, above lo, above hi, above count, unused) added to out. */
  void (*mass_above)(const float *x, const uint32_t *keys, size_t n, float max, uint32_t min_key,
                     uint32_t tau, uint64_t *out);
  /* the entries with bins[i] == bin, in order, into (ox, ok) up to cap; returns how many */
  size_t (*gather_bin)(const uint16_t *bins, const float *x, const uint32_t *keys, size_t n,
                       uint16_t bin, float *ox, uint32_t *ok, size_t cap);
  /* dst[i] = keys[i] >= t ? src[i] : neg_inf, for elements of esz (2 or 4) bytes;
   * with in_place (dst == src) only the masked elements are written. Returns the number
   * kept. */
  size_t (*select)(const uint32_t *keys, size_t n, uint32_t t, const void *src, void *dst,
                   size_t esz, uint32_t neg_inf, bool in_place);
  /* For n contiguous f32 values x: e = exp(x - max) for entries with key >= min_key,
   * their masses added to *total_lo / *total_hi (low and high 32 bits of each mass,
   * summed apart so that 64-bit lanes cannot overflow), masses written to mass[i]
   * (0 for entries below min_key). With bins != NULL, also the value bin of each entry,
   * min(max(floor((x - lo) * scale), 0), LLMK__TKP_BINS - 1), or LLMK__TKP_BINS for an
   * entry below min_key. */
  void (*masses)(const float *x, const uint32_t *keys, size_t n, float max, uint32_t min_key,
                 float lo, float scale, uint64_t *mass, uint16_t *bins, uint64_t *total_lo,
                 uint64_t *total_hi);
  /* row[i] = f32(src[i]) for f16 or bf16 src, keys[i] = llmk__key_of(row[i]) in one
   * pass; returns the largest key. NULL: the op widens, then calls keys. */
  uint32_t (*widen_keys)(const void *src, llmk_dtype dt, float *row, uint32_t *keys, size_t n);
  /* number of keys equal to key */
  size_t (*count_eq)(const uint32_t *keys, size_t n, uint32_t key);
  /* index of the nth (1-based) key equal to key, or n if there are fewer */
  size_t (*find_eq)(const uint32_t *keys, size_t n, uint32_t key, size_t nth);
} llmk__tkp_kernels;

extern const llmk__tkp_kernels llmk__tkp_kernels_scalar;
#if defined(LLMK_HAVE_AVX2)
extern const llmk__tkp_kernels llmk__tkp_kernels_avx2;
#endif
/* the scalar mass kernels, shared with the AVX2 table */
void llmk__tkp_masses_scalar(const float *x, const uint32_t *keys, size_t n, float max,
                             uint32_t min_key, float lo, float scale, uint64_t *mass,
                             uint16_t *bins, uint64_t *total_lo, uint64_t *total_hi);
void llmk__tkp_mass_above_scalar(const float *x, const uint32_t *keys, size_t n, float max,
                                 uint32_t min_key, uint32_t tau, uint64_t *out);
size_t llmk__tkp_count_eq_scalar(const uint32_t *keys, size_t n, uint32_t key);
size_t llmk__tkp_find_eq_scalar(const uint32_t *keys, size_t n, uint32_t key, size_t nth);
size_t llmk__tkp_gather_bin_scalar(const uint16_t *bins, const float *x, const uint32_t *keys,
                                   size_t n, uint16_t bin, float *ox, uint32_t *ok, size_t cap);
#if defined(LLMK_HAVE_AVX512)
extern const llmk__tkp_kernels llmk__tkp_kernels_avx512;
#endif
const llmk__tkp_kernels *llmk__tkp_kernels_for(llmk_isa isa);

#endif
