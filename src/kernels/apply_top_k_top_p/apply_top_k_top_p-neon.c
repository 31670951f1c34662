/* SPDX-License-Identifier: Apache-2.0 */
/* NEON kernels (aarch64), bit-identical to the scalar ones, after the AVX2 ones: 4 lanes
 * of 32-bit keys, 8 of 16-bit keys on f16 / bf16 rows. Rows are only element-aligned, so
 * vectors are loaded and stored as bytes. A64 has no movemask: a block's matches are
 * found by a horizontal max (they are rare), then packed 4 lanes at a time by a byte
 * shuffle. */
#include "kernels/apply_top_k_top_p/apply_top_k_top_p-neon.h"

#include <arm_neon.h>

#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/convert/convert-elem.h"
#include "kernels/convert/convert-neon.h"

#define EACH4 _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)

static inline uint32x4_t ld32(const void *p) {
  return vreinterpretq_u32_u8(vld1q_u8((const uint8_t *)p));
}

static inline uint16x8_t ld16(const void *p) {
  return vreinterpretq_u16_u8(vld1q_u8((const uint8_t *)p));
}

static inline void st32(void *p, uint32x4_t v) {
  vst1q_u8((uint8_t *)p, vreinterpretq_u8_u32(v));
}

static inline void st16(void *p, uint16x8_t v) {
  vst1q_u8((uint8_t *)p, vreinterpretq_u8_u16(v));
}

static inline const void *skip(const void *src, llmk_dtype dt, size_t i) {
  return (const char *)src + i * llmk_dtype_size(dt);
}

/* 4 entries from i of a contiguous row of dtype dt, widened exactly */
static inline __attribute__((always_inline)) float32x4_t load4(const void *src, size_t i,
                                                               const llmk_dtype dt) {
  return llmk__neon_load_f32((const char *)src + i * (dt == LLMK_F32 ? 4 : 2), dt);
}

/* llmk__key_of_bits on 4 lanes */
static inline uint32x4_t keys4(uint32x4_t u) {
  const uint32x4_t sign = vdupq_n_u32(0x80000000u);
  uint32x4_t nan =
      vcgtq_u32(vandq_u32(u, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
  u = vbicq_u32(u, vceqq_u32(u, sign)); /* -0 as +0 */
  uint32x4_t flip =
      vorrq_u32(vreinterpretq_u32_s32(vshrq_n_s32(vreinterpretq_s32_u32(u), 31)), sign);
  return vorrq_u32(veorq_u32(u, flip), nan);
}

/* 16-bit keys of f16 / bf16 bits (see llmk__tkp_key16_ge), 8 lanes */
static inline uint16x8_t keys16x8(uint16x8_t h, const llmk_dtype dt) {
  const uint16x8_t sign = vdupq_n_u16(0x8000);
  uint16x8_t nan = vcgtq_u16(vandq_u16(h, vdupq_n_u16(0x7fff)),
                             vdupq_n_u16(dt == LLMK_F16 ? 0x7c00 : 0x7f80));
  h = vbicq_u16(h, vceqq_u16(h, sign));
  uint16x8_t flip =
      vorrq_u16(vreinterpretq_u16_s16(vshrq_n_s16(vreinterpretq_s16_u16(h), 15)), sign);
  return vorrq_u16(veorq_u16(h, flip), nan);
}

/* Each kernel body is compiled once per dtype (dt is a constant in each instance). */
#define BY_DTYPE(dt, call)            \
  switch (dt) {                       \
    case LLMK_F16: {                  \
      const llmk_dtype D = LLMK_F16;  \
      call;                           \
    }                                 \
    case LLMK_BF16: {                 \
      const llmk_dtype D = LLMK_BF16; \
      call;                           \
    }                                 \
    default: {                        \
      const llmk_dtype D = LLMK_F32;  \
      call;                           \
    }                                 \
  }

static uint32_t keys_neon(const float *x, size_t n, uint32_t *keys) {
  uint32x4_t m0 = vdupq_n_u32(0), m1 = m0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint32x4_t k0 = keys4(ld32(x + i)), k1 = keys4(ld32(x + i + 4));
    st32(keys + i, k0);
    st32(keys + i + 4, k1);
    m0 = vmaxq_u32(m0, k0);
    m1 = vmaxq_u32(m1, k1);
  }
  uint32_t max = vmaxvq_u32(vmaxq_u32(m0, m1));
  for (; i < n; i++) {
    keys[i] = llmk__key_of(x[i]);
    max = keys[i] > max ? keys[i] : max;
  }
  return max;
}

static inline __attribute__((always_inline)) uint32_t widen_keys_t(
    const uint16_t *h, float *row, uint32_t *keys, size_t n, const llmk_dtype dt) {
  uint32x4_t mx = vdupq_n_u32(0);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint16x8_t v = ld16(h + i);
    float32x4_t f0 = dt == LLMK_F16 ? llmk__neon_f16_to_f32(vget_low_u16(v))
                                    : llmk__neon_bf16_to_f32(vget_low_u16(v));
    float32x4_t f1 = dt == LLMK_F16 ? llmk__neon_f16_to_f32(vget_high_u16(v))
                                    : llmk__neon_bf16_to_f32(vget_high_u16(v));
    uint32x4_t k0 = keys4(vreinterpretq_u32_f32(f0)),
               k1 = keys4(vreinterpretq_u32_f32(f1));
    st32(row + i, vreinterpretq_u32_f32(f0));
    st32(row + i + 4, vreinterpretq_u32_f32(f1));
    st32(keys + i, k0);
    st32(keys + i + 4, k1);
    mx = vmaxq_u32(mx, vmaxq_u32(k0, k1));
  }
  uint32_t max = vmaxvq_u32(mx);
  for (; i < n; i++) {
    row[i] = dt == LLMK_F16 ? llmk__f16_to_f32(h[i]) : llmk__bf16_to_f32(h[i]);
    keys[i] = llmk__key_of(row[i]);
    max = keys[i] > max ? keys[i] : max;
  }
  return max;
}

static uint32_t widen_keys_neon(const void *src, llmk_dtype dt, float *row,
                                uint32_t *keys, size_t n) {
  return dt == LLMK_F16 ? widen_keys_t(src, row, keys, n, LLMK_F16)
                        : widen_keys_t(src, row, keys, n, LLMK_BF16);
}

/* FMAX / FMIN and their reductions propagate NaN: a row with a NaN ends with the NaN key
 * on top, as the scalar scan does (its min is not meaningful then). */
static inline __attribute__((always_inline)) uint32_t max_key_t(const void *src, size_t n,
                                                                float *min,
                                                                const llmk_dtype dt,
                                                                const bool MIN) {
  float32x4_t m0 = vdupq_n_f32(-__builtin_inff()), m1 = m0;
  float32x4_t i0 = vdupq_n_f32(__builtin_inff()), i1 = i0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float32x4_t a = load4(src, i, dt), b = load4(src, i + 4, dt);
    float32x4_t c = load4(src, i + 8, dt), d = load4(src, i + 12, dt);
    m0 = vmaxq_f32(m0, vmaxq_f32(a, b));
    m1 = vmaxq_f32(m1, vmaxq_f32(c, d));
    if (MIN) {
      i0 = vminq_f32(i0, vminq_f32(a, b));
      i1 = vminq_f32(i1, vminq_f32(c, d));
    }
  }
  uint32_t k = i ? llmk__key_of(vmaxvq_f32(vmaxq_f32(m0, m1))) : 0;
  float tmin;
  uint32_t t = llmk__tkp_max_key_scalar(skip(src, dt, i), dt, n - i, MIN ? &tmin : NULL);
  if (MIN) {
    float v = vminvq_f32(vminq_f32(i0, i1));
    *min = tmin < v ? tmin : v;
  }
  return t > k ? t : k;
}

static uint32_t max_key_neon(const void *src, llmk_dtype dt, size_t n, float *min) {
  if (min) BY_DTYPE(dt, return max_key_t(src, n, min, D, true))
  BY_DTYPE(dt, return max_key_t(src, n, NULL, D, false))
}

/* ------------------------------------------------------------------- gathering */

static const uint32_t lane_bit[4] = {1, 2, 4, 8}, lane_ix[4] = {0, 1, 2, 3};

/* For each 4-bit mask, the byte shuffle that packs its lanes to the front (the lanes past
 * its count: lane 0, scratch). */
#define LANE(p) 4 * (p), 4 * (p) + 1, 4 * (p) + 2, 4 * (p) + 3
static const uint8_t pack4[16][16] = {{0},
                                      {LANE(0)},
                                      {LANE(1)},
                                      {LANE(0), LANE(1)},
                                      {LANE(2)},
                                      {LANE(0), LANE(2)},
                                      {LANE(1), LANE(2)},
                                      {LANE(0), LANE(1), LANE(2)},
                                      {LANE(3)},
                                      {LANE(0), LANE(3)},
                                      {LANE(1), LANE(3)},
                                      {LANE(0), LANE(1), LANE(3)},
                                      {LANE(2), LANE(3)},
                                      {LANE(0), LANE(2), LANE(3)},
                                      {LANE(1), LANE(2), LANE(3)},
                                      {LANE(0), LANE(1), LANE(2), LANE(3)}};
#undef LANE

static inline unsigned bits4(uint32x4_t m) {
  return vaddvq_u32(vandq_u32(m, vld1q_u32(lane_bit)));
}

static inline uint32x4_t in4(uint32x4_t k, uint32x4_t vlo, uint32x4_t vhi) {
  return vandq_u32(vcgeq_u32(k, vlo), vcleq_u32(k, vhi));
}

/* the lanes of mask in (keys k, entries i.. of the row) into okey / oidx from *c (up to
 * cap) */
static inline void put4(uint32x4_t in, uint32x4_t k, uint32_t i, uint32_t *okey,
                        uint32_t *oidx, size_t cap, size_t *c) {
  unsigned m = bits4(in);
  if (*c + 4 <= cap) { /* the lanes past the count are scratch */
    uint8x16_t p = vld1q_u8(pack4[m]);
    st32(okey + *c, vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(k), p)));
    if (oidx) {
      uint32x4_t ix = vaddq_u32(vdupq_n_u32(i), vld1q_u32(lane_ix));
      st32(oidx + *c, vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(ix), p)));
    }
    *c += (size_t)__builtin_popcount(m);
    return;
  }
  uint32_t l[4];
  st32(l, k);
  for (; m; m &= m - 1, ++*c)
    if (*c < cap) {
      unsigned b = (unsigned)__builtin_ctz(m);
      okey[*c] = l[b];
      if (oidx) oidx[*c] = i + b;
    }
}

/* the entries i..i+3 of src with lo <= key <= hi, gathered as by gather() */
static inline __attribute__((always_inline)) void gather4(
    const void *src, size_t i, uint32x4_t vlo, uint32x4_t vhi, uint32_t idx0,
    uint32_t *okey, uint32_t *oidx, size_t cap, size_t *c, const llmk_dtype dt) {
  uint32x4_t k = keys4(vreinterpretq_u32_f32(load4(src, i, dt)));
  put4(in4(k, vlo, vhi), k, idx0 + (uint32_t)i, okey, oidx, cap, c);
}

static inline __attribute__((always_inline)) size_t gather_t(
    const void *src, size_t n, uint32_t lo, uint32_t hi, uint32_t idx0, uint32_t *okey,
    uint32_t *oidx, size_t cap, const llmk_dtype dt) {
  const uint32x4_t vlo = vdupq_n_u32(lo), vhi = vdupq_n_u32(hi);
  size_t c = 0, i = 0;
  if (dt != LLMK_F32) { /* on 16-bit keys; the blocks with matches again on 32-bit ones */
    uint32_t l16 = llmk__tkp_key16_ge(lo, dt),
             h16 = hi == UINT32_MAX ? 0x10000 : llmk__tkp_key16_ge(hi + 1, dt);
    if (l16 >= h16) return 0;
    const uint16x8_t vl = vdupq_n_u16((uint16_t)l16),
                     vh = vdupq_n_u16((uint16_t)(h16 - 1));
    for (; i + 16 <= n; i += 16) {
      uint16x8_t k0 = keys16x8(ld16((const uint16_t *)src + i), dt),
                 k1 = keys16x8(ld16((const uint16_t *)src + i + 8), dt);
      uint16x8_t in = vorrq_u16(vandq_u16(vcgeq_u16(k0, vl), vcleq_u16(k0, vh)),
                                vandq_u16(vcgeq_u16(k1, vl), vcleq_u16(k1, vh)));
      if (vmaxvq_u16(in))
        for (size_t j = i; j < i + 16; j += 4)
          gather4(src, j, vlo, vhi, idx0, okey, oidx, cap, &c, dt);
    }
  }
  for (; i + 8 <= n; i += 8) {
    uint32x4_t k0 = keys4(vreinterpretq_u32_f32(load4(src, i, dt))),
               k1 = keys4(vreinterpretq_u32_f32(load4(src, i + 4, dt)));
    uint32x4_t in0 = in4(k0, vlo, vhi), in1 = in4(k1, vlo, vhi);
    if (vmaxvq_u32(vorrq_u32(in0, in1))) {
      put4(in0, k0, idx0 + (uint32_t)i, okey, oidx, cap, &c);
      put4(in1, k1, idx0 + (uint32_t)(i + 4), okey, oidx, cap, &c);
    }
  }
  size_t r = c < cap ? cap - c : 0, o = c < cap ? c : cap;
  return c + llmk__tkp_gather_scalar(skip(src, dt, i), dt, n - i, lo, hi,
                                     idx0 + (uint32_t)i, okey + o, oidx ? oidx + o : NULL,
                                     r);
}

static size_t gather_neon(const void *src, llmk_dtype dt, size_t n, uint32_t lo,
                          uint32_t hi, uint32_t idx0, uint32_t *okey, uint32_t *oidx,
                          size_t cap) {
  BY_DTYPE(dt, return gather_t(src, n, lo, hi, idx0, okey, oidx, cap, D))
}

static size_t gather_bin_neon(const uint16_t *bins, const float *x, const uint32_t *keys,
                              size_t n, uint16_t bin, float *ox, uint32_t *ok,
                              size_t cap) {
  const uint16x8_t vb = vdupq_n_u16(bin);
  size_t c = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    uint16x8_t eq =
        vorrq_u16(vceqq_u16(ld16(bins + i), vb), vceqq_u16(ld16(bins + i + 8), vb));
    if (vmaxvq_u16(eq)) /* few hits: the chosen bin is small */
      c += llmk__tkp_gather_bin_scalar(bins + i, x + i, keys + i, 16, bin,
                                       ox + (c < cap ? c : cap), ok + (c < cap ? c : cap),
                                       c < cap ? cap - c : 0);
  }
  return c + llmk__tkp_gather_bin_scalar(bins + i, x + i, keys + i, n - i, bin,
                                         ox + (c < cap ? c : cap),
                                         ok + (c < cap ? c : cap), c < cap ? cap - c : 0);
}

/* --------------------------------------------------------------------- select */

/* The hot loop only notes which blocks of 16 may hold window entries; those are gathered
 * after each chunk of SEL_CHUNK entries (16-bit kept counters cannot overflow within
 * one). A64 has no store that bypasses the caches the way x86's streaming stores do:
 * LLMK__TKP_STREAM is ignored. */
#define SEL_CHUNK 4096

typedef struct sel_c {
  uint32x4_t vt, vhi;   /* 32-bit keys */
  float32x4_t ft, fhi;  /* fl: t and hi as values */
  uint16x8_t t16, hi16; /* f16 / bf16: the thresholds as 16-bit keys */
  bool win, none, fl, all, hi_all, in_place; /* all: LLMK__TKP_MASK_ALL */
} sel_c;

static inline sel_c sel_consts(uint32_t t, uint32_t hi, int mode, llmk_dtype dt) {
  llmk__tkp_sel_bounds b = llmk__tkp_sel_bounds_of(t, hi, dt);
  sel_c c = {.vt = vdupq_n_u32(t),
             .vhi = vdupq_n_u32(hi),
             .ft = vdupq_n_f32(b.ft),
             .fhi = vdupq_n_f32(b.fhi),
             .t16 = vdupq_n_u16(b.t16),
             .hi16 = vdupq_n_u16(b.hi16),
             .win = b.win,
             .none = b.none,
             .fl = b.fl,
             .all = mode & LLMK__TKP_MASK_ALL,
             .hi_all = b.hi_all,
             .in_place = mode & LLMK__TKP_IN_PLACE};
  return c;
}

/* The 16 entries at i written; their kept lanes counted in *acc (32-bit lanes for f32,
 * 16-bit ones otherwise). Returns whether the block may hold window entries. */
static inline __attribute__((always_inline)) bool sel16(
    const void *src, void *dst, size_t i, const sel_c *c, uint32x4_t *acc,
    const llmk_dtype dt, const bool in_place, const bool fl) {
  if (dt == LLMK_F32) {
    const char *s = (const char *)src + i * 4;
    char *d = (char *)dst + i * 4;
    const uint32x4_t ninf = vdupq_n_u32(0xff800000u), zero = vdupq_n_u32(0);
    uint32x4_t v[4], q[4], ge[4], keep[4], kept_all = vdupq_n_u32(~0u), w = zero;
    EACH4 {
      v[j] = ld32(s + 16 * j);
      if (fl) {
        ge[j] = vmvnq_u32(vcltq_f32(vreinterpretq_f32_u32(v[j]), c->ft));
      } else {
        q[j] = keys4(v[j]);
        ge[j] = vcgeq_u32(q[j], c->vt);
      }
      keep[j] = c->all ? zero : ge[j];
      *acc = vsubq_u32(*acc, keep[j]);
      kept_all = vandq_u32(kept_all, keep[j]);
    }
    if (!in_place || !vminvq_u32(kept_all))
      EACH4 st32(d + 16 * j, vbslq_u32(keep[j], v[j], ninf));
    if (!c->win) return false;
    EACH4 {
      uint32x4_t le = c->hi_all ? ge[j]
                      : fl      ? vcleq_f32(vreinterpretq_f32_u32(v[j]), c->fhi)
                                : vcleq_u32(q[j], c->vhi);
      w = vorrq_u32(w, vandq_u32(ge[j], le));
    }
    return vmaxvq_u32(w) != 0;
  }
  const uint16x8_t ninf = vdupq_n_u16(dt == LLMK_BF16 ? 0xff80 : 0xfc00),
                   zero = vdupq_n_u16(0);
  const uint16_t *s = (const uint16_t *)src + i;
  uint16_t *d = (uint16_t *)dst + i;
  uint16x8_t h0 = ld16(s), h1 = ld16(s + 8), k0 = keys16x8(h0, dt), k1 = keys16x8(h1, dt);
  uint16x8_t ge0 = c->none ? zero : vcgeq_u16(k0, c->t16),
             ge1 = c->none ? zero : vcgeq_u16(k1, c->t16);
  uint16x8_t keep0 = c->all ? zero : ge0, keep1 = c->all ? zero : ge1;
  *acc = vreinterpretq_u32_u16(
      vsubq_u16(vsubq_u16(vreinterpretq_u16_u32(*acc), keep0), keep1));
  if (!in_place || !vminvq_u16(vandq_u16(keep0, keep1))) {
    st16(d, vbslq_u16(keep0, h0, ninf));
    st16(d + 8, vbslq_u16(keep1, h1, ninf));
  }
  if (!c->win) return false;
  uint16x8_t w = vorrq_u16(vandq_u16(ge0, vcleq_u16(k0, c->hi16)),
                           vandq_u16(ge1, vcleq_u16(k1, c->hi16)));
  return vmaxvq_u16(w) != 0;
}

static inline __attribute__((always_inline)) size_t sel_loop(
    const void *src, void *dst, size_t c0, size_t c1, const sel_c *c, uint32x4_t *acc,
    uint32_t *ev, const llmk_dtype dt, const bool in_place, const bool fl) {
  size_t ne = 0;
  for (size_t i = c0; i < c1; i += 16) {
    ev[ne] = (uint32_t)i;
    ne += sel16(src, dst, i, c, acc, dt, in_place, fl);
  }
  return ne;
}

/* select() on the blocks of 16 in [c0, c1) (at most SEL_CHUNK entries): writes them,
 * gathers the window's entries into okey / oidx from *cnt; returns the number kept */
static inline __attribute__((always_inline)) size_t sel_chunk(
    const void *src, void *dst, size_t c0, size_t c1, const sel_c *c, uint32_t idx0,
    uint32_t *okey, uint32_t *oidx, size_t cap, size_t *cnt, const llmk_dtype dt) {
  uint32_t ev[SEL_CHUNK / 16];
  uint32x4_t acc = vdupq_n_u32(0);
  bool fl = c->fl && dt == LLMK_F32;
  size_t ne;
  if (c->in_place)
    ne = fl ? sel_loop(src, dst, c0, c1, c, &acc, ev, dt, true, true)
            : sel_loop(src, dst, c0, c1, c, &acc, ev, dt, true, false);
  else
    ne = fl ? sel_loop(src, dst, c0, c1, c, &acc, ev, dt, false, true)
            : sel_loop(src, dst, c0, c1, c, &acc, ev, dt, false, false);
  for (size_t e = 0; e < ne; e++)
    for (size_t j = ev[e]; j < ev[e] + 16; j += 4)
      gather4(src, j, c->vt, c->vhi, idx0, okey, oidx, cap, cnt, dt);
  return dt == LLMK_F32 ? vaddvq_u32(acc) : vaddlvq_u16(vreinterpretq_u16_u32(acc));
}

static inline __attribute__((always_inline)) size_t select_t(
    const void *src, size_t n, uint32_t t, uint32_t hi, void *dst, int mode,
    uint32_t idx0, uint32_t *okey, uint32_t *oidx, size_t cap, size_t *ng,
    const llmk_dtype dt) {
  size_t esz = dt == LLMK_F32 ? 4 : 2, nb = n & ~(size_t)15, kept = 0, cnt = 0;
  sel_c c = sel_consts(t, hi, mode, dt);
  for (size_t c0 = 0; c0 < nb; c0 += SEL_CHUNK)
    kept += sel_chunk(src, dst, c0, nb - c0 < SEL_CHUNK ? nb : c0 + SEL_CHUNK, &c, idx0,
                      okey, oidx, cap, &cnt, dt);
  size_t part, o = cnt < cap ? cnt : cap;
  kept += llmk__tkp_select_scalar(skip(src, dt, nb), dt, n - nb, t, hi,
                                  (char *)dst + nb * esz, mode, idx0 + (uint32_t)nb,
                                  okey + o, oidx ? oidx + o : NULL, cap - o, &part);
  *ng = cnt + part;
  return kept;
}

static size_t select_neon(const void *src, llmk_dtype dt, size_t n, uint32_t t,
                          uint32_t hi, void *dst, int mode, uint32_t idx0, uint32_t *okey,
                          uint32_t *oidx, size_t cap, size_t *ng) {
  BY_DTYPE(dt, return select_t(src, n, t, hi, dst, mode, idx0, okey, oidx, cap, ng, D))
}

/* ------------------------------------------------------------ count, find */

static inline __attribute__((always_inline)) size_t count_eq_t(const void *src, size_t n,
                                                               uint32_t key,
                                                               const llmk_dtype dt) {
  const uint32x4_t vk = vdupq_n_u32(key);
  uint32x4_t a0 = vdupq_n_u32(0), a1 = a0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) { /* lanes of -1 per match */
    a0 = vsubq_u32(a0, vceqq_u32(keys4(vreinterpretq_u32_f32(load4(src, i, dt))), vk));
    a1 =
        vsubq_u32(a1, vceqq_u32(keys4(vreinterpretq_u32_f32(load4(src, i + 4, dt))), vk));
  }
  size_t c = vaddvq_u64(vaddq_u64(vpaddlq_u32(a0), vpaddlq_u32(a1)));
  return c + llmk__tkp_count_eq_scalar(skip(src, dt, i), dt, n - i, key);
}

static size_t count_eq_neon(const void *src, llmk_dtype dt, size_t n, uint32_t key) {
  BY_DTYPE(dt, return count_eq_t(src, n, key, D))
}

static inline __attribute__((always_inline)) size_t find_eq_t(const void *src, size_t n,
                                                              uint32_t key, size_t nth,
                                                              const llmk_dtype dt) {
  const uint32x4_t vk = vdupq_n_u32(key);
  size_t i = 0, seen = 0;
  for (; i + 8 <= n; i += 8) {
    uint32x4_t e0 = vceqq_u32(keys4(vreinterpretq_u32_f32(load4(src, i, dt))), vk),
               e1 = vceqq_u32(keys4(vreinterpretq_u32_f32(load4(src, i + 4, dt))), vk);
    if (!vmaxvq_u32(vorrq_u32(e0, e1))) continue;
    for (unsigned m = bits4(e0) | bits4(e1) << 4; m; m &= m - 1)
      if (++seen == nth) return i + (unsigned)__builtin_ctz(m);
  }
  return i + llmk__tkp_find_eq_scalar(skip(src, dt, i), dt, n - i, key, nth - seen);
}

static size_t find_eq_neon(const void *src, llmk_dtype dt, size_t n, uint32_t key,
                           size_t nth) {
  BY_DTYPE(dt, return find_eq_t(src, n, key, nth, D))
}

/* ---------------------------------------------------------------- masses */

static void masses_neon(const float *x, const uint32_t *keys, size_t n, float max,
                        uint32_t min_key, float lo, float scale, uint64_t *mass,
                        uint16_t *bins, uint64_t *total_lo, uint64_t *total_hi) {
  const uint32x4_t vmk = vdupq_n_u32(min_key);
  const uint64x2_t low32 = vdupq_n_u64(0xffffffffu);
  uint64x2_t tl = vdupq_n_u64(0), th = tl;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    float32x4_t v = vreinterpretq_f32_u32(ld32(x + i));
    uint32x4_t live = vcgeq_u32(ld32(keys + i), vmk);
    float32x4_t e = llmk__neon_exp_nonpos_fma(vsubq_f32(v, vdupq_n_f32(max)));
    /* llmk__mass_of: e * 2^63 and its widening to f64 are exact, and the f64 -> u64
     * conversion truncates as the f32 one does */
    float32x4_t s = vreinterpretq_f32_u32(
        vandq_u32(live, vreinterpretq_u32_f32(vmulq_f32(e, vdupq_n_f32(0x1p63f)))));
    uint64x2_t m0 = vcvtq_u64_f64(vcvt_f64_f32(vget_low_f32(s))),
               m1 = vcvtq_u64_f64(vcvt_high_f64_f32(s));
    vst1q_u8((uint8_t *)(mass + i), vreinterpretq_u8_u64(m0));
    vst1q_u8((uint8_t *)(mass + i + 2), vreinterpretq_u8_u64(m1));
    tl = vaddq_u64(tl, vaddq_u64(vandq_u64(m0, low32), vandq_u64(m1, low32)));
    th = vaddq_u64(th, vaddq_u64(vshrq_n_u64(m0, 32), vshrq_n_u64(m1, 32)));
    if (bins) {
      /* FCVTZU saturates (negative and NaN to 0) where the scalar code tests v >= 0 */
      float32x4_t b = vmulq_f32(vsubq_f32(v, vdupq_n_f32(lo)), vdupq_n_f32(scale));
      uint32x4_t d = vminq_u32(vcvtq_u32_f32(b), vdupq_n_u32(LLMK__TKP_BINS - 1));
      d = vbslq_u32(live, d, vdupq_n_u32(LLMK__TKP_BINS));
      llmk__neon_store_u16x4(bins + i, vmovn_u32(d));
    }
  }
  *total_lo += vaddvq_u64(tl);
  *total_hi += vaddvq_u64(th);
  if (i < n)
    llmk__tkp_masses_scalar(x + i, keys + i, n - i, max, min_key, lo, scale, mass + i,
                            bins ? bins + i : NULL, total_lo, total_hi);
}

/* The table offsets (lane j to table j) and the values of 4 exps e, lanes lt valued 0 */
static inline void mass_words4(float32x4_t e, uint32x4_t lt, uint32_t *off,
                               uint32_t *val) {
  static const uint32_t tab_of_lane[4] = {0, LLMK__TKP_MB_STRIDE, 2 * LLMK__TKP_MB_STRIDE,
                                          3 * LLMK__TKP_MB_STRIDE};
  uint32x4_t u = vreinterpretq_u32_f32(e);
  int32x4_t b =
      vmaxq_s32(vsubq_s32(vreinterpretq_s32_u32(vshrq_n_u32(u, 19)), vdupq_n_s32(1024)),
                vdupq_n_s32(0));
  int32x4_t s =
      vmaxq_s32(vsubq_s32(vdupq_n_s32(87), vreinterpretq_s32_u32(vshrq_n_u32(u, 23))),
                vdupq_n_s32(0));
  uint32x4_t m = vorrq_u32(vandq_u32(u, vdupq_n_u32(0x7fffff)), vdupq_n_u32(0x800000));
  m = vshlq_u32(m, vnegq_s32(s)); /* a right shift by s: 0 from 32 on */
  st32(off, vaddq_u32(vreinterpretq_u32_s32(b), vld1q_u32(tab_of_lane)));
  st32(val, vbicq_u32(m, lt));
}

/* The mass loop over the blocks of 16 in [c0, c1). NEON has no scatter: the adds go one
 * entry at a time, lane j to table j (neighbours in one bin do not wait for each other).
 */
static inline __attribute__((always_inline)) void mass_loop(
    const void *src, size_t c0, size_t c1, float32x4_t vmax, float32x4_t vmin,
    uint64_t *tab, const void *ms, const void *ss, void *sd, size_t esz,
    const llmk_dtype dt, const bool SEL, const bool MX) {
  for (size_t i = c0; i < c1; i += 16) {
    /* the rider's rows one chunk ahead, into L2: their loops are short, fast, would wait
     */
    if (MX) __builtin_prefetch((const char *)ms + (i + SEL_CHUNK) * esz, 0, 2);
    if (SEL) {
      __builtin_prefetch((const char *)ss + (i + SEL_CHUNK) * esz, 0, 2);
      __builtin_prefetch((char *)sd + (i + SEL_CHUNK) * esz, 1, 2);
    }
    float32x4_t v[4], d[4], e[4];
    EACH4 {
      v[j] = load4(src, i + 4 * (size_t)j, dt);
      d[j] = vsubq_f32(v[j], vmax);
    }
    /* d >= -69: e is normal, the short form of the exp serves (rows rarely go lower) */
    if (vminvq_f32(vminq_f32(vminq_f32(d[0], d[1]), vminq_f32(d[2], d[3]))) >= -69.0f)
      EACH4 e[j] = llmk__neon_exp_nonpos_fma_ge69(d[j]);
    else
      EACH4 e[j] = llmk__neon_exp_nonpos_fma(d[j]);
    uint32_t off[16], val[16];
    EACH4 mass_words4(e[j], vcltq_f32(v[j], vmin), off + 4 * j, val + 4 * j);
    for (int q = 0; q < 16; q++) tab[off[q]] += val[q];
  }
}

/* mass_bins with its riders' work done chunk by chunk, between the mass loop's chunks */
static inline __attribute__((always_inline)) void mass_bins_t(
    const void *src, size_t n, float max, float xmin, uint64_t *tab, llmk__tkp_rider *rd,
    const llmk_dtype dt, const bool SEL, const bool MX) {
  const float32x4_t vmax = vdupq_n_f32(max), vmin = vdupq_n_f32(xmin);
  size_t nb = n & ~(size_t)15, esz = dt == LLMK_F32 ? 4 : 2, kept = 0, cnt = 0;
  sel_c sc = {0};
  if (SEL) sc = sel_consts(rd->sel_t, rd->sel_hi, rd->sel_mode, dt);
  /* the rider's rows in locals: stores through them cannot change them */
  const void *ss = SEL ? rd->sel_src : NULL, *ms = MX ? rd->max_src : NULL;
  void *sd = SEL ? rd->sel_dst : NULL;
  uint32_t *okey = SEL ? rd->sel_okey : NULL, *oidx = SEL ? rd->sel_oidx : NULL;
  uint32_t idx0 = SEL ? rd->sel_idx0 : 0;
  size_t cap = SEL ? rd->sel_cap : 0;
  float32x4_t mk0 = vdupq_n_f32(-__builtin_inff()), mk1 = mk0;
  float32x4_t mi0 = vdupq_n_f32(__builtin_inff()), mi1 = mi0;
  for (size_t c0 = 0; c0 < nb; c0 += SEL_CHUNK) {
    size_t c1 = nb - c0 < SEL_CHUNK ? nb : c0 + SEL_CHUNK;
    mass_loop(src, c0, c1, vmax, vmin, tab, ms, ss, sd, esz, dt, SEL, MX);
    if (SEL) kept += sel_chunk(ss, sd, c0, c1, &sc, idx0, okey, oidx, cap, &cnt, dt);
    if (MX)
      for (size_t i = c0; i < c1; i += 16) {
        float32x4_t a = load4(ms, i, dt), b = load4(ms, i + 4, dt);
        float32x4_t c = load4(ms, i + 8, dt), d = load4(ms, i + 12, dt);
        mk0 = vmaxq_f32(mk0, vmaxq_f32(a, b));
        mk1 = vmaxq_f32(mk1, vmaxq_f32(c, d));
        mi0 = vminq_f32(mi0, vminq_f32(a, b));
        mi1 = vminq_f32(mi1, vminq_f32(c, d));
      }
  }
  llmk__tkp_mass_bins_scalar(skip(src, dt, nb), dt, n - nb, max, xmin, tab, NULL);
  if (SEL) {
    size_t part, o = cnt < cap ? cnt : cap;
    rd->sel_kept = kept + llmk__tkp_select_scalar(
                              skip(ss, dt, nb), dt, n - nb, rd->sel_t, rd->sel_hi,
                              (char *)sd + nb * esz, rd->sel_mode, idx0 + (uint32_t)nb,
                              okey + o, oidx ? oidx + o : NULL, cap - o, &part);
    rd->sel_ng = cnt + part;
  }
  if (MX) {
    uint32_t k = nb ? llmk__key_of(vmaxvq_f32(vmaxq_f32(mk0, mk1))) : 0;
    float tmin, vm = vminvq_f32(vminq_f32(mi0, mi1));
    uint32_t t = llmk__tkp_max_key_scalar(skip(ms, dt, nb), dt, n - nb, &tmin);
    rd->max_key = t > k ? t : k;
    rd->max_min = tmin < vm ? tmin : vm;
  }
}

static void mass_bins_neon(const void *src, llmk_dtype dt, size_t n, float max,
                           float xmin, uint64_t *tab, llmk__tkp_rider *rd) {
  bool sel = rd && rd->sel_src, mx = rd && rd->max_src;
  BY_DTYPE(dt, if (sel && mx) mass_bins_t(src, n, max, xmin, tab, rd, D, true, true);
           else if (sel) mass_bins_t(src, n, max, xmin, tab, rd, D, true, false);
           else if (mx) mass_bins_t(src, n, max, xmin, tab, rd, D, false, true);
           else mass_bins_t(src, n, max, xmin, tab, rd, D, false, false); return )
}

const llmk__tkp_kernels llmk__tkp_kernels_neon = {.isa = LLMK_ISA_NEON,
                                                  .keys = keys_neon,
                                                  .widen_keys = widen_keys_neon,
                                                  .gather_bin = gather_bin_neon,
                                                  .masses = masses_neon,
                                                  .max_key = max_key_neon,
                                                  .gather = gather_neon,
                                                  .select = select_neon,
                                                  .count_eq = count_eq_neon,
                                                  .find_eq = find_eq_neon,
                                                  .mass_bins = mass_bins_neon};
