/* SPDX-License-Identifier: Apache-2.0 */
/* What the apply_top_k_top_p kernels need and the op calls them with: order-preserving
 * keys, fixed-point masses, value and mass bins, the rider of a mass pass, and the kernel
 * table. The op's own declarations are in ops/apply_top_k_top_p/internal.h. */
#ifndef LLMK_KERNELS_TKP_H
#define LLMK_KERNELS_TKP_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dispatch/dispatch.h"
#include "kernels/common/exp.h"
#include "kernels/convert/convert-scalar.h"
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

/* The SIMD kernels compare f16 / bf16 rows on 16-bit keys, in the order of the 32-bit
 * keys of the widened values (both formats are sign-magnitude: -0 as +0, every NaN on
 * top). The 32-bit key of a 16-bit key (0 in the places of negative NaNs, unused): */
static inline uint32_t llmk__tkp_key32_of_key16(uint32_t k16, llmk_dtype dt) {
  uint16_t h = (uint16_t)(k16 & 0x8000 ? k16 & 0x7fff : ~k16);
  uint32_t k = llmk__key_of(dt == LLMK_F16 ? llmk__f16_to_f32(h) : llmk__bf16_to_f32(h));
  return k == LLMK__KEY_NAN && !(k16 & 0x8000) ? 0 : k;
}

/* the smallest 16-bit key whose 32-bit key is >= t (0x10000: none), by bisection */
static inline uint32_t llmk__tkp_key16_ge(uint32_t t, llmk_dtype dt) {
  uint32_t lo = 0, hi = 0x10000;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (llmk__tkp_key32_of_key16(mid, dt) >= t)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* What a select() scan compares with, from its t and hi (see select in the table),
 * for every ISA to broadcast: win, whether there is a window to gather (hi >= t); for
 * f16 / bf16, t16 and hi16, the 16-bit keys of the bounds (none: nothing is kept);
 * fl, whether key >= t is x >= ft or x NaN (t from -inf to +inf, -0 == +0 as keys), and
 * then key <= hi is x <= fhi (ordered: NaN is above every hi but the last); hi_all,
 * every key is <= hi. */
typedef struct llmk__tkp_sel_bounds {
  bool win, none, fl, hi_all;
  uint16_t t16, hi16;
  float ft, fhi;
} llmk__tkp_sel_bounds;

static inline llmk__tkp_sel_bounds llmk__tkp_sel_bounds_of(uint32_t t, uint32_t hi,
                                                           llmk_dtype dt) {
  llmk__tkp_sel_bounds b = {.win = hi >= t};
  if (dt != LLMK_F32) {
    uint32_t t16 = llmk__tkp_key16_ge(t, dt),
             h16 = hi == UINT32_MAX ? 0x10000 : llmk__tkp_key16_ge(hi + 1, dt);
    b.none = t16 > 0xffff;
    b.win = b.win && h16 > t16;
    b.t16 = (uint16_t)(b.none ? 0xffff : t16);
    b.hi16 = (uint16_t)(h16 - 1);
  }
  b.fl = t >= LLMK__KEY_NINF && t <= LLMK__KEY_PINF;
  b.hi_all = hi == UINT32_MAX;
  b.ft = b.fl ? llmk__value_of_key(t) : 0.0f;
  b.fhi = !b.fl ? 0.0f : hi <= LLMK__KEY_PINF ? llmk__value_of_key(hi) : __builtin_inff();
  return b;
}

/* Probability mass in 1/2^63 units: e in [0, 1] -> [0, 2^63]; sums in 128 bits are
 * exact, so every order of summation gives the same total. */
static inline uint64_t llmk__mass_of(float e) {
  return (uint64_t)(e * 0x1p63f);
}

#define LLMK__TKP_BINS 2048

/* The value bin of x (see masses()). */
static inline uint16_t llmk__tkp_bin(float x, float lo, float scale) {
  float v = (x - lo) * scale;
  uint32_t d = v >= 0.0f ? (uint32_t)v : 0;
  return (uint16_t)(d < LLMK__TKP_BINS ? d : LLMK__TKP_BINS - 1);
}

/* Exact top-p masses by bins of e = exp(x - max) in (0, 1]: 16 bins per binade, from the
 * float bits of e, so that a bin is a run of consecutive values of e, hence (exp being
 * monotone, tested) of x. An entry adds llmk__tkp_eval(e) to its bin: the 24-bit
 * significand of e, shifted right where e < 2^-40 so that it is llmk__mass_of(e) there;
 * a bin's mass is its sum shifted left by llmk__tkp_ebin_shift(bin). Entries with
 * e < 2^-63 (mass 0) fall in bin 0; e == 1 in bin LLMK__TKP_MB_TOP. */
#define LLMK__TKP_MBINS 1024
#define LLMK__TKP_MB_STRIDE 1048 /* between the tables: not a multiple of 4 KiB apart */
#define LLMK__TKP_MB_TOP 1008
#define LLMK__TKP_MB_MAX_N \
  ((size_t)UINT32_MAX) /* 32-bit indices; u64 sums cannot overflow */

static inline uint32_t llmk__tkp_bits(float e) {
  uint32_t u;
  memcpy(&u, &e, 4);
  return u;
}

static inline int llmk__tkp_ebin(uint32_t ebits) {
  int b = (int)(ebits >> 19) - 1024;
  return b > 0 ? b : 0;
}

static inline uint32_t llmk__tkp_eval(uint32_t ebits) {
  int s = 87 - (int)(ebits >> 23);
  s = s > 0 ? s : 0;
  return s > 31 ? 0 : ((ebits & 0x7fffffu) | 0x800000u) >> s;
}

static inline int llmk__tkp_ebin_shift(int bin) {
  int s = bin / 16 + 64 - 87;
  return s > 0 ? s : 0;
}

/* select modes: in place; streaming stores; every entry written as -inf, none kept (the
 * entries >= t are still gathered as in the window; not with LLMK__TKP_IN_PLACE) */
enum { LLMK__TKP_IN_PLACE = 1, LLMK__TKP_STREAM = 2, LLMK__TKP_MASK_ALL = 4 };

/* Entries with x - max >= this have e >= 2^-40: their masses need no shift. */
#define LLMK__TKP_DENSE_D (-27.0f)

/* Work that rides along a mass_bins pass (whose exp leaves the memory idle): a select()
 * of another row (when sel_src is not NULL; results in sel_kept and sel_ng), and the
 * largest key and the smallest value of a third one (when max_src is not NULL; results in
 * max_key and max_min, the latter not meaningful for rows with a NaN). src_dense (read by
 * mass_bins): every entry of the pass's own row has x - max >= LLMK__TKP_DENSE_D, so that
 * the pass may leave out its checks per block (the same results). */
typedef struct llmk__tkp_rider {
  const void *sel_src;
  void *sel_dst;
  uint32_t sel_t, sel_hi, sel_idx0;
  int sel_mode;
  uint32_t *sel_okey, *sel_oidx;
  size_t sel_cap, sel_kept, sel_ng;
  const void *max_src;
  uint32_t max_key;
  float max_min;
  bool src_dense;
} llmk__tkp_rider;

/* The kernels read rows either as f32 arrays (x, keys) or as contiguous rows of the
 * logits' own dtype (src, dt: f32, f16 or bf16, widened exactly); keys are those of the
 * widened values. */
typedef struct llmk__tkp_kernels {
  llmk_isa isa;
  /* keys[i] = llmk__key_of(x[i]); returns the largest key */
  uint32_t (*keys)(const float *x, size_t n, uint32_t *keys);
  /* row[i] = f32(src[i]) for f16 or bf16 src, keys[i] = llmk__key_of(row[i]) in one
   * pass; returns the largest key. NULL: the op widens, then calls keys. */
  uint32_t (*widen_keys)(const void *src, llmk_dtype dt, float *row, uint32_t *keys,
                         size_t n);
  /* the entries with bins[i] == bin, in order, into (ox, ok) up to cap; returns how many
   */
  size_t (*gather_bin)(const uint16_t *bins, const float *x, const uint32_t *keys,
                       size_t n, uint16_t bin, float *ox, uint32_t *ok, size_t cap);
  /* For n contiguous f32 values x: e = exp(x - max) for entries with key >= min_key,
   * their masses added to *total_lo / *total_hi (low and high 32 bits of each mass,
   * summed apart so that 64-bit lanes cannot overflow), masses written to mass[i]
   * (0 for entries below min_key). With bins != NULL, also the value bin of each entry,
   * min(max(floor((x - lo) * scale), 0), LLMK__TKP_BINS - 1), or LLMK__TKP_BINS for an
   * entry below min_key. */
  void (*masses)(const float *x, const uint32_t *keys, size_t n, float max,
                 uint32_t min_key, float lo, float scale, uint64_t *mass, uint16_t *bins,
                 uint64_t *total_lo, uint64_t *total_hi);
  /* the largest key of src[0..n) (0 for n == 0); with min, *min = the smallest value
   * (+inf for n == 0; not meaningful when src holds a NaN) */
  uint32_t (*max_key)(const void *src, llmk_dtype dt, size_t n, float *min);
  /* The number of entries of src with lo <= key <= hi; the first ones (up to cap) are
   * gathered in order: their keys to okey, their indices plus idx0 to oidx (if not NULL).
   * okey[0..cap) and oidx[0..cap) may be written past the entries gathered (scratch).
   */
  size_t (*gather)(const void *src, llmk_dtype dt, size_t n, uint32_t lo, uint32_t hi,
                   uint32_t idx0, uint32_t *okey, uint32_t *oidx, size_t cap);
  /* dst[i] = key(src[i]) >= t ? src[i] : -inf (elements of dt); with LLMK__TKP_IN_PLACE
   * in mode (dst == src) only the masked elements need be written; with LLMK__TKP_STREAM,
   * stores may bypass the caches. Returns the number kept. The entries with t <= key <=
   * hi (none if hi < t) are also gathered as by gather, *ng = their number. With
   * LLMK__TKP_MASK_ALL, every entry is written as -inf and 0 is returned; the gathering
   * is the same. */
  size_t (*select)(const void *src, llmk_dtype dt, size_t n, uint32_t t, uint32_t hi,
                   void *dst, int mode, uint32_t idx0, uint32_t *okey, uint32_t *oidx,
                   size_t cap, size_t *ng);
  /* number of entries of src whose key is key */
  size_t (*count_eq)(const void *src, llmk_dtype dt, size_t n, uint32_t key);
  /* index of the nth (1-based) entry whose key is key, or n if there are fewer */
  size_t (*find_eq)(const void *src, llmk_dtype dt, size_t n, uint32_t key, size_t nth);
  /* For n values (no NaN, none above max): each entry with x >= xmin adds
   * llmk__tkp_eval(e) to its bin llmk__tkp_ebin(e), e = exp(x - max), in one of 4 tables
   * of LLMK__TKP_MBINS sums (tab[t * LLMK__TKP_MB_STRIDE + bin], any t: the sums are
   * exact). n is at most LLMK__TKP_MB_MAX_N. With rd, the pass also does rd's work on
   * other rows of n entries of the same dtype (the same results as apart). */
  void (*mass_bins)(const void *src, llmk_dtype dt, size_t n, float max, float xmin,
                    uint64_t *tab, struct llmk__tkp_rider *rd);
} llmk__tkp_kernels;

#define LLMK__TKP_VARIANTS(X) \
  LLMK__IF_NEON(X(tkp, neon)) \
  LLMK__IF_AVX512(X(tkp, avx512)) LLMK__IF_AVX2(X(tkp, avx2)) X(tkp, scalar)
LLMK__KERNEL_LIST(tkp, LLMK__TKP_VARIANTS)
/* scalar kernels that SIMD kernels call for their tails */
void llmk__tkp_masses_scalar(const float *x, const uint32_t *keys, size_t n, float max,
                             uint32_t min_key, float lo, float scale, uint64_t *mass,
                             uint16_t *bins, uint64_t *total_lo, uint64_t *total_hi);
size_t llmk__tkp_gather_bin_scalar(const uint16_t *bins, const float *x,
                                   const uint32_t *keys, size_t n, uint16_t bin,
                                   float *ox, uint32_t *ok, size_t cap);
uint32_t llmk__tkp_max_key_scalar(const void *src, llmk_dtype dt, size_t n, float *min);
size_t llmk__tkp_gather_scalar(const void *src, llmk_dtype dt, size_t n, uint32_t lo,
                               uint32_t hi, uint32_t idx0, uint32_t *okey, uint32_t *oidx,
                               size_t cap);
size_t llmk__tkp_select_scalar(const void *src, llmk_dtype dt, size_t n, uint32_t t,
                               uint32_t hi, void *dst, int mode, uint32_t idx0,
                               uint32_t *okey, uint32_t *oidx, size_t cap, size_t *ng);
size_t llmk__tkp_count_eq_scalar(const void *src, llmk_dtype dt, size_t n, uint32_t key);
size_t llmk__tkp_find_eq_scalar(const void *src, llmk_dtype dt, size_t n, uint32_t key,
                                size_t nth);
void llmk__tkp_mass_bins_scalar(const void *src, llmk_dtype dt, size_t n, float max,
                                float xmin, uint64_t *tab, llmk__tkp_rider *rd);
#if defined(LLMK_HAVE_AVX2) /* the AVX2 kernels that the AVX-512 table uses too */
uint32_t llmk__tkp_max_key_avx2(const void *src, llmk_dtype dt, size_t n, float *min);
size_t llmk__tkp_gather_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t lo,
                             uint32_t hi, uint32_t idx0, uint32_t *okey, uint32_t *oidx,
                             size_t cap);
size_t llmk__tkp_select_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t t,
                             uint32_t hi, void *dst, int mode, uint32_t idx0,
                             uint32_t *okey, uint32_t *oidx, size_t cap, size_t *ng);
size_t llmk__tkp_count_eq_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t key);
size_t llmk__tkp_find_eq_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t key,
                              size_t nth);
void llmk__tkp_mass_bins_avx2(const void *src, llmk_dtype dt, size_t n, float max,
                              float xmin, uint64_t *tab, llmk__tkp_rider *rd);
#endif

#endif
