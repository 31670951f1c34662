/* SPDX-License-Identifier: Apache-2.0 */
/* The AVX2 scans over contiguous rows of the logits' dtype (max key, gather, select),
 * inline so that the mass pass (apply_top_k_top_p-avx2-mass.c) runs them as riders.
 * Included only by the AVX2 kernel files. */
#ifndef LLMK_KERNELS_TKP_AVX2_H
#define LLMK_KERNELS_TKP_AVX2_H

#include <immintrin.h>

#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/convert/convert-elem.h"

static inline __m256i keys8(__m256i u) {
  const __m256i sign = _mm256_set1_epi32((int)0x80000000u);
  __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
  __m256i nzero = _mm256_cmpeq_epi32(u, sign);
  __m256i neg = _mm256_andnot_si256(nzero, _mm256_cmpgt_epi32(_mm256_setzero_si256(), u));
  __m256i pos = _mm256_or_si256(_mm256_andnot_si256(nzero, u), sign);
  __m256i key = _mm256_blendv_epi8(pos, _mm256_xor_si256(u, _mm256_set1_epi32(-1)), neg);
  return _mm256_or_si256(key, nan);
}

/* ------------------------------------------------- kernels over rows of the logits'
 * dtype */

/* 8 entries from i of a contiguous row of dtype dt, widened exactly */
static inline __attribute__((always_inline)) __m256 load8(const void *src, size_t i,
                                                          const llmk_dtype dt) {
  if (dt == LLMK_F32) return _mm256_loadu_ps((const float *)src + i);
  __m128i h = _mm_loadu_si128((const void *)((const uint16_t *)src + i));
  if (dt == LLMK_F16) return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static inline const void *skip(const void *src, llmk_dtype dt, size_t i) {
  return (const char *)src + i * llmk_dtype_size(dt);
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

/* the largest key from the largest value and a NaN flag (-0 and +0 have one key) */
static inline uint32_t key_of_max8(__m256 m, __m256 nan) {
  float l[8], mx = -__builtin_inff();
  if (_mm256_movemask_ps(nan)) return LLMK__KEY_NAN;
  _mm256_storeu_ps(l, m);
  for (int j = 0; j < 8; j++) mx = l[j] > mx ? l[j] : mx;
  return llmk__key_of(mx);
}

/* the smallest of 8 lanes and of the scalar tail's smallest t */
static inline float min8(__m256 m, float t) {
  float l[8];
  _mm256_storeu_ps(l, m);
  for (int j = 0; j < 8; j++) t = l[j] < t ? l[j] : t;
  return t;
}

static inline __attribute__((always_inline)) uint32_t max_key_t(const void *src, size_t n,
                                                                float *min,
                                                                const llmk_dtype dt,
                                                                const bool MIN) {
  __m256 m0 = _mm256_set1_ps(-__builtin_inff()), m1 = m0, nan = _mm256_setzero_ps();
  __m256 i0 = _mm256_set1_ps(__builtin_inff()), i1 = i0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 a = load8(src, i, dt), b = load8(src, i + 8, dt);
    m0 = _mm256_max_ps(m0, a);
    m1 = _mm256_max_ps(m1, b);
    if (MIN) {
      i0 = _mm256_min_ps(i0, a);
      i1 = _mm256_min_ps(i1, b);
    }
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
  }
  uint32_t k = n >= 16 ? key_of_max8(_mm256_max_ps(m0, m1), nan) : 0;
  float tmin;
  uint32_t t = llmk__tkp_max_key_scalar(skip(src, dt, i), dt, n - i, MIN ? &tmin : NULL);
  if (MIN) *min = min8(_mm256_min_ps(i0, i1), tmin);
  return t > k ? t : k;
}

/* lanes with lo <= key <= hi (unsigned), as a bit mask */
static inline unsigned in8(__m256i k, __m256i vlo, __m256i vhi) {
  __m256i in = _mm256_and_si256(_mm256_cmpeq_epi32(_mm256_max_epu32(k, vlo), k),
                                _mm256_cmpeq_epi32(_mm256_min_epu32(k, vhi), k));
  return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(in));
}

/* For each 8-bit mask, the positions of its set bits in order, one per byte: the
 * permutation that packs those lanes to the front. */
static const uint64_t pack8[256] = {
    0x0000000000000000u, 0x0000000000000000u, 0x0000000000000001u, 0x0000000000000100u,
    0x0000000000000002u, 0x0000000000000200u, 0x0000000000000201u, 0x0000000000020100u,
    0x0000000000000003u, 0x0000000000000300u, 0x0000000000000301u, 0x0000000000030100u,
    0x0000000000000302u, 0x0000000000030200u, 0x0000000000030201u, 0x0000000003020100u,
    0x0000000000000004u, 0x0000000000000400u, 0x0000000000000401u, 0x0000000000040100u,
    0x0000000000000402u, 0x0000000000040200u, 0x0000000000040201u, 0x0000000004020100u,
    0x0000000000000403u, 0x0000000000040300u, 0x0000000000040301u, 0x0000000004030100u,
    0x0000000000040302u, 0x0000000004030200u, 0x0000000004030201u, 0x0000000403020100u,
    0x0000000000000005u, 0x0000000000000500u, 0x0000000000000501u, 0x0000000000050100u,
    0x0000000000000502u, 0x0000000000050200u, 0x0000000000050201u, 0x0000000005020100u,
    0x0000000000000503u, 0x0000000000050300u, 0x0000000000050301u, 0x0000000005030100u,
    0x0000000000050302u, 0x0000000005030200u, 0x0000000005030201u, 0x0000000503020100u,
    0x0000000000000504u, 0x0000000000050400u, 0x0000000000050401u, 0x0000000005040100u,
    0x0000000000050402u, 0x0000000005040200u, 0x0000000005040201u, 0x0000000504020100u,
    0x0000000000050403u, 0x0000000005040300u, 0x0000000005040301u, 0x0000000504030100u,
    0x0000000005040302u, 0x0000000504030200u, 0x0000000504030201u, 0x0000050403020100u,
    0x0000000000000006u, 0x0000000000000600u, 0x0000000000000601u, 0x0000000000060100u,
    0x0000000000000602u, 0x0000000000060200u, 0x0000000000060201u, 0x0000000006020100u,
    0x0000000000000603u, 0x0000000000060300u, 0x0000000000060301u, 0x0000000006030100u,
    0x0000000000060302u, 0x0000000006030200u, 0x0000000006030201u, 0x0000000603020100u,
    0x0000000000000604u, 0x0000000000060400u, 0x0000000000060401u, 0x0000000006040100u,
    0x0000000000060402u, 0x0000000006040200u, 0x0000000006040201u, 0x0000000604020100u,
    0x0000000000060403u, 0x0000000006040300u, 0x0000000006040301u, 0x0000000604030100u,
    0x0000000006040302u, 0x0000000604030200u, 0x0000000604030201u, 0x0000060403020100u,
    0x0000000000000605u, 0x0000000000060500u, 0x0000000000060501u, 0x0000000006050100u,
    0x0000000000060502u, 0x0000000006050200u, 0x0000000006050201u, 0x0000000605020100u,
    0x0000000000060503u, 0x0000000006050300u, 0x0000000006050301u, 0x0000000605030100u,
    0x0000000006050302u, 0x0000000605030200u, 0x0000000605030201u, 0x0000060503020100u,
    0x0000000000060504u, 0x0000000006050400u, 0x0000000006050401u, 0x0000000605040100u,
    0x0000000006050402u, 0x0000000605040200u, 0x0000000605040201u, 0x0000060504020100u,
    0x0000000006050403u, 0x0000000605040300u, 0x0000000605040301u, 0x0000060504030100u,
    0x0000000605040302u, 0x0000060504030200u, 0x0000060504030201u, 0x0006050403020100u,
    0x0000000000000007u, 0x0000000000000700u, 0x0000000000000701u, 0x0000000000070100u,
    0x0000000000000702u, 0x0000000000070200u, 0x0000000000070201u, 0x0000000007020100u,
    0x0000000000000703u, 0x0000000000070300u, 0x0000000000070301u, 0x0000000007030100u,
    0x0000000000070302u, 0x0000000007030200u, 0x0000000007030201u, 0x0000000703020100u,
    0x0000000000000704u, 0x0000000000070400u, 0x0000000000070401u, 0x0000000007040100u,
    0x0000000000070402u, 0x0000000007040200u, 0x0000000007040201u, 0x0000000704020100u,
    0x0000000000070403u, 0x0000000007040300u, 0x0000000007040301u, 0x0000000704030100u,
    0x0000000007040302u, 0x0000000704030200u, 0x0000000704030201u, 0x0000070403020100u,
    0x0000000000000705u, 0x0000000000070500u, 0x0000000000070501u, 0x0000000007050100u,
    0x0000000000070502u, 0x0000000007050200u, 0x0000000007050201u, 0x0000000705020100u,
    0x0000000000070503u, 0x0000000007050300u, 0x0000000007050301u, 0x0000000705030100u,
    0x0000000007050302u, 0x0000000705030200u, 0x0000000705030201u, 0x0000070503020100u,
    0x0000000000070504u, 0x0000000007050400u, 0x0000000007050401u, 0x0000000705040100u,
    0x0000000007050402u, 0x0000000705040200u, 0x0000000705040201u, 0x0000070504020100u,
    0x0000000007050403u, 0x0000000705040300u, 0x0000000705040301u, 0x0000070504030100u,
    0x0000000705040302u, 0x0000070504030200u, 0x0000070504030201u, 0x0007050403020100u,
    0x0000000000000706u, 0x0000000000070600u, 0x0000000000070601u, 0x0000000007060100u,
    0x0000000000070602u, 0x0000000007060200u, 0x0000000007060201u, 0x0000000706020100u,
    0x0000000000070603u, 0x0000000007060300u, 0x0000000007060301u, 0x0000000706030100u,
    0x0000000007060302u, 0x0000000706030200u, 0x0000000706030201u, 0x0000070603020100u,
    0x0000000000070604u, 0x0000000007060400u, 0x0000000007060401u, 0x0000000706040100u,
    0x0000000007060402u, 0x0000000706040200u, 0x0000000706040201u, 0x0000070604020100u,
    0x0000000007060403u, 0x0000000706040300u, 0x0000000706040301u, 0x0000070604030100u,
    0x0000000706040302u, 0x0000070604030200u, 0x0000070604030201u, 0x0007060403020100u,
    0x0000000000070605u, 0x0000000007060500u, 0x0000000007060501u, 0x0000000706050100u,
    0x0000000007060502u, 0x0000000706050200u, 0x0000000706050201u, 0x0000070605020100u,
    0x0000000007060503u, 0x0000000706050300u, 0x0000000706050301u, 0x0000070605030100u,
    0x0000000706050302u, 0x0000070605030200u, 0x0000070605030201u, 0x0007060503020100u,
    0x0000000007060504u, 0x0000000706050400u, 0x0000000706050401u, 0x0000070605040100u,
    0x0000000706050402u, 0x0000070605040200u, 0x0000070605040201u, 0x0007060504020100u,
    0x0000000706050403u, 0x0000070605040300u, 0x0000070605040301u, 0x0007060504030100u,
    0x0000070605040302u, 0x0007060504030200u, 0x0007060504030201u, 0x0706050403020100u,
};

/* the lanes of m (keys k, entries i.. of the row) into okey / oidx from *c (up to cap) */
static inline void put8(unsigned m, __m256i k, uint32_t i, uint32_t *okey, uint32_t *oidx,
                        size_t cap, size_t *c) {
  if (*c + 8 <= cap) { /* packed by a permutation; the lanes past the count are scratch */
    __m256i p = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const void *)&pack8[m]));
    _mm256_storeu_si256((void *)(okey + *c), _mm256_permutevar8x32_epi32(k, p));
    if (oidx)
      _mm256_storeu_si256((void *)(oidx + *c),
                          _mm256_add_epi32(_mm256_set1_epi32((int)i), p));
    *c += (size_t)__builtin_popcount(m);
    return;
  }
  uint32_t l[8];
  _mm256_storeu_si256((void *)l, k);
  for (; m; m &= m - 1, ++*c)
    if (*c < cap) {
      unsigned b = (unsigned)__builtin_ctz(m);
      okey[*c] = l[b];
      if (oidx) oidx[*c] = i + b;
    }
}

/* 16-bit keys of f16 / bf16 bits, in the order of the 32-bit keys of the widened values
 * (both formats are sign-magnitude): -0 as +0, every NaN on top. A 32-bit threshold
 * becomes the first 16-bit key whose widened key reaches it (llmk__tkp_key16_ge). */
static inline __m256i keys16x16(__m256i h, const llmk_dtype dt) {
  __m256i k = _mm256_xor_si256(
      h, _mm256_or_si256(_mm256_srai_epi16(h, 15), _mm256_set1_epi16((short)0x8000)));
  k = _mm256_blendv_epi8(k, _mm256_set1_epi16((short)0x8000),
                         _mm256_cmpeq_epi16(h, _mm256_set1_epi16((short)0x8000)));
  __m256i nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)),
                                   _mm256_set1_epi16(dt == LLMK_F16 ? 0x7c00 : 0x7f80));
  return _mm256_or_si256(k, nan);
}

/* the 16-bit lanes of m (one bit pair per lane, from movemask_epi8) of the 16 entries h
 * at i into okey (32-bit keys) / oidx, from *c (up to cap) */
static inline void put16(unsigned m, __m256i h, uint32_t i, llmk_dtype dt, uint32_t *okey,
                         uint32_t *oidx, size_t cap, size_t *c) {
  uint16_t l[16];
  _mm256_storeu_si256((void *)l, h);
  for (; m; m &= m - 1, m &= m - 1, ++*c)
    if (*c < cap) {
      unsigned b = (unsigned)__builtin_ctz(m) / 2;
      okey[*c] =
          llmk__key_of(dt == LLMK_F16 ? llmk__f16_to_f32(l[b]) : llmk__bf16_to_f32(l[b]));
      if (oidx) oidx[*c] = i + b;
    }
}

static inline __attribute__((always_inline)) size_t gather_t(
    const void *src, size_t n, uint32_t lo, uint32_t hi, uint32_t idx0, uint32_t *okey,
    uint32_t *oidx, size_t cap, const llmk_dtype dt) {
  const __m256i vlo = _mm256_set1_epi32((int)lo), vhi = _mm256_set1_epi32((int)hi);
  size_t c = 0, i = 0;
  if (dt != LLMK_F32) { /* on 16-bit keys */
    uint32_t l16 = llmk__tkp_key16_ge(lo, dt),
             h16 = hi == UINT32_MAX ? 0x10000 : llmk__tkp_key16_ge(hi + 1, dt);
    if (l16 >= h16) i = n; /* none */
    const __m256i vl = _mm256_set1_epi16((short)l16),
                  vh = _mm256_set1_epi16((short)(h16 - 1));
    for (; i + 16 <= n; i += 16) {
      __m256i h = _mm256_loadu_si256((const void *)((const uint16_t *)src + i)),
              k = keys16x16(h, dt);
      __m256i in = _mm256_and_si256(_mm256_cmpeq_epi16(_mm256_max_epu16(k, vl), k),
                                    _mm256_cmpeq_epi16(_mm256_min_epu16(k, vh), k));
      unsigned m = (unsigned)_mm256_movemask_epi8(in);
      if (m) put16(m, h, idx0 + (uint32_t)i, dt, okey, oidx, cap, &c); /* few hits */
    }
    if (l16 >= h16) return 0;
  }
  for (; i + 8 <= n; i += 8) {
    __m256i k = keys8(_mm256_castps_si256(load8(src, i, dt)));
    unsigned m = in8(k, vlo, vhi);
    if (m) put8(m, k, idx0 + (uint32_t)i, okey, oidx, cap, &c); /* few hits */
  }
  size_t r = c < cap ? cap - c : 0, o = c < cap ? c : cap;
  return c + llmk__tkp_gather_scalar(skip(src, dt, i), dt, n - i, lo, hi,
                                     idx0 + (uint32_t)i, okey + o, oidx ? oidx + o : NULL,
                                     r);
}

/* select(): the constants of a call, one block of 16 entries, and the gathering of the
 * window's entries. The hot loop only notes which blocks hold window entries; those are
 * gathered after each chunk of SEL_CHUNK entries, so that the loop's state stays in
 * registers (16-bit kept counters cannot overflow within a chunk). */
#define SEL_CHUNK 4096
enum { SEL_PLAIN, SEL_STREAM, SEL_IN_PLACE };

typedef struct sel_c {
  __m256i vt, vhi;   /* 32-bit keys */
  __m256 ft, fhi;    /* fl: t and hi as values */
  __m256i t16, hi16; /* f16 / bf16: the thresholds as 16-bit keys (see keys16x16) */
  bool win, none, fl, all, hi_all; /* all: LLMK__TKP_MASK_ALL; hi_all: every key <= hi */
  int st;                          /* SEL_PLAIN, SEL_STREAM or SEL_IN_PLACE */
} sel_c;

static inline sel_c sel_consts(uint32_t t, uint32_t hi, int mode, llmk_dtype dt) {
  llmk__tkp_sel_bounds b = llmk__tkp_sel_bounds_of(t, hi, dt);
  sel_c c = {.vt = _mm256_set1_epi32((int)t),
             .vhi = _mm256_set1_epi32((int)hi),
             .ft = _mm256_set1_ps(b.ft),
             .fhi = _mm256_set1_ps(b.fhi),
             .t16 = _mm256_set1_epi16((short)b.t16),
             .hi16 = _mm256_set1_epi16((short)b.hi16),
             .win = b.win,
             .none = b.none,
             .fl = b.fl,
             .all = mode & LLMK__TKP_MASK_ALL,
             .hi_all = b.hi_all,
             .st = mode & LLMK__TKP_IN_PLACE ? SEL_IN_PLACE
                   : mode & LLMK__TKP_STREAM ? SEL_STREAM
                                             : SEL_PLAIN};
  return c;
}

/* v (lanes keep kept, the others -inf) stored to d as c->st says */
static inline __attribute__((always_inline)) void sel_store(void *d, __m256i v,
                                                            __m256i keep, __m256i ninf,
                                                            const int st) {
  if (st == SEL_IN_PLACE) {
    if (!_mm256_testc_si256(keep, _mm256_set1_epi32(-1)))
      _mm256_storeu_si256(d, _mm256_blendv_epi8(ninf, v, keep));
  } else if (st == SEL_STREAM)
    _mm256_stream_si256(d, _mm256_blendv_epi8(ninf, v, keep));
  else
    _mm256_storeu_si256(d, _mm256_blendv_epi8(ninf, v, keep));
}

/* The 16 entries at i written; their kept lanes counted in *acc (32-bit lanes for f32,
 * 16-bit ones otherwise). Returns whether the block may hold window entries. */
static inline __attribute__((always_inline)) bool sel16(const void *src, void *dst,
                                                        size_t i, const sel_c *c,
                                                        __m256i *acc, const llmk_dtype dt,
                                                        const int st, const bool fl) {
  if (dt == LLMK_F32) {
    const float *s = src;
    float *d = dst;
    const __m256i ninf = _mm256_set1_epi32((int)0xff800000u);
    __m256i v0 = _mm256_loadu_si256((const void *)(s + i)),
            v1 = _mm256_loadu_si256((const void *)(s + i + 8)), g0, g1, q0, q1;
    if (fl) {
      g0 =
          _mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(v0), c->ft, _CMP_NLT_UQ));
      g1 =
          _mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(v1), c->ft, _CMP_NLT_UQ));
    } else {
      q0 = keys8(v0);
      q1 = keys8(v1);
      g0 = _mm256_cmpeq_epi32(_mm256_max_epu32(q0, c->vt), q0);
      g1 = _mm256_cmpeq_epi32(_mm256_max_epu32(q1, c->vt), q1);
    }
    __m256i k0 = c->all ? _mm256_setzero_si256() : g0,
            k1 = c->all ? _mm256_setzero_si256() : g1;
    *acc = _mm256_sub_epi32(*acc, _mm256_add_epi32(k0, k1));
    sel_store(d + i, v0, k0, ninf, st);
    sel_store(d + i + 8, v1, k1, ninf, st);
    if (!c->win) return false;
    if (c->hi_all)
      return !_mm256_testz_si256(_mm256_or_si256(g0, g1), _mm256_or_si256(g0, g1));
    if (fl) {
      __m256 w = _mm256_or_ps(
          _mm256_and_ps(_mm256_castsi256_ps(g0),
                        _mm256_cmp_ps(_mm256_castsi256_ps(v0), c->fhi, _CMP_LE_OQ)),
          _mm256_and_ps(_mm256_castsi256_ps(g1),
                        _mm256_cmp_ps(_mm256_castsi256_ps(v1), c->fhi, _CMP_LE_OQ)));
      return !_mm256_testz_ps(w, w);
    }
    __m256i w = _mm256_or_si256(
        _mm256_and_si256(g0, _mm256_cmpeq_epi32(_mm256_min_epu32(q0, c->vhi), q0)),
        _mm256_and_si256(g1, _mm256_cmpeq_epi32(_mm256_min_epu32(q1, c->vhi), q1)));
    return !_mm256_testz_si256(w, w);
  }
  const __m256i ninf = _mm256_set1_epi16((short)(dt == LLMK_BF16 ? 0xff80 : 0xfc00));
  const uint16_t *s = src;
  uint16_t *d = dst;
  __m256i h = _mm256_loadu_si256((const void *)(s + i)), k = keys16x16(h, dt);
  __m256i ge = _mm256_cmpeq_epi16(_mm256_max_epu16(k, c->t16), k);
  if (c->none) ge = _mm256_setzero_si256();
  __m256i keep = c->all ? _mm256_setzero_si256() : ge;
  *acc = _mm256_sub_epi16(*acc, keep);
  sel_store(d + i, h, keep, ninf, st);
  if (!c->win) return false;
  __m256i w = _mm256_and_si256(ge, _mm256_cmpeq_epi16(_mm256_min_epu16(k, c->hi16), k));
  return !_mm256_testz_si256(w, w);
}

/* the kept count of a chunk's counters */
static inline size_t sel_count(__m256i acc, const llmk_dtype dt) {
  if (dt != LLMK_F32) acc = _mm256_madd_epi16(acc, _mm256_set1_epi16(1));
  uint32_t l[8];
  _mm256_storeu_si256((void *)l, acc);
  return (size_t)l[0] + l[1] + l[2] + l[3] + l[4] + l[5] + l[6] + l[7];
}

/* the window entries of the noted blocks (at ev[0..ne) of src) into okey / oidx from
 * cnt (up to cap); returns the new count */
static inline __attribute__((always_inline)) size_t sel_gather(
    const void *src, const uint32_t *ev, size_t ne, const sel_c *c, uint32_t idx0,
    uint32_t *okey, uint32_t *oidx, size_t cap, size_t cnt, const llmk_dtype dt) {
  for (size_t e = 0; e < ne; e++) {
    uint32_t i = ev[e];
    if (dt == LLMK_F32)
      for (uint32_t h = i; h < i + 16; h += 8) {
        __m256i k = keys8(_mm256_loadu_si256((const void *)((const float *)src + h)));
        put8(in8(k, c->vt, c->vhi), k, idx0 + h, okey, oidx, cap, &cnt);
      }
    else {
      __m256i h = _mm256_loadu_si256((const void *)((const uint16_t *)src + i)),
              k = keys16x16(h, dt);
      __m256i in = _mm256_and_si256(_mm256_cmpeq_epi16(_mm256_max_epu16(k, c->t16), k),
                                    _mm256_cmpeq_epi16(_mm256_min_epu16(k, c->hi16), k));
      if (!c->none)
        put16((unsigned)_mm256_movemask_epi8(in), h, idx0 + i, dt, okey, oidx, cap, &cnt);
    }
  }
  return cnt;
}

/* sel16 over the blocks [c0, c1) of a chunk; the blocks that may hold window entries go
 * to ev; returns how many */
static inline __attribute__((always_inline)) size_t sel_loop(
    const void *src, void *dst, size_t c0, size_t c1, const sel_c *c, __m256i *acc,
    uint32_t *ev, const llmk_dtype dt, const int st, const bool fl) {
  size_t ne = 0;
  for (size_t i = c0; i < c1; i += 16) {
    ev[ne] = (uint32_t)i;
    ne += sel16(src, dst, i, c, acc, dt, st, fl);
  }
  return ne;
}

/* sel_loop with the store mode and the compares of c, chosen once per chunk */
static inline __attribute__((always_inline)) size_t sel_run(const void *src, void *dst,
                                                            size_t c0, size_t c1,
                                                            const sel_c *c, __m256i *acc,
                                                            uint32_t *ev,
                                                            const llmk_dtype dt) {
  bool fl = c->fl && dt == LLMK_F32;
  switch (c->st) {
    case SEL_IN_PLACE:
      return fl ? sel_loop(src, dst, c0, c1, c, acc, ev, dt, SEL_IN_PLACE, true)
                : sel_loop(src, dst, c0, c1, c, acc, ev, dt, SEL_IN_PLACE, false);
    case SEL_STREAM:
      return fl ? sel_loop(src, dst, c0, c1, c, acc, ev, dt, SEL_STREAM, true)
                : sel_loop(src, dst, c0, c1, c, acc, ev, dt, SEL_STREAM, false);
    default:
      return fl ? sel_loop(src, dst, c0, c1, c, acc, ev, dt, SEL_PLAIN, true)
                : sel_loop(src, dst, c0, c1, c, acc, ev, dt, SEL_PLAIN, false);
  }
}

/* select() over the blocks of n entries (n a multiple of 16); returns the number kept,
 * *cnt counts the gathered ones */
static inline __attribute__((always_inline)) size_t select_blocks(
    const void *src, void *dst, size_t n, const sel_c *c, uint32_t idx0, uint32_t *okey,
    uint32_t *oidx, size_t cap, size_t *cnt, const llmk_dtype dt) {
  uint32_t ev[SEL_CHUNK / 16];
  size_t kept = 0, g = *cnt;
  for (size_t c0 = 0; c0 < n; c0 += SEL_CHUNK) {
    size_t c1 = n - c0 < SEL_CHUNK ? n : c0 + SEL_CHUNK;
    __m256i acc = _mm256_setzero_si256();
    size_t ne = sel_run(src, dst, c0, c1, c, &acc, ev, dt);
    kept += sel_count(acc, dt);
    g = sel_gather(src, ev, ne, c, idx0, okey, oidx, cap, g, dt);
  }
  *cnt = g;
  return kept;
}

static inline __attribute__((always_inline)) size_t select_t(
    const void *src, size_t n, uint32_t t, uint32_t hi, void *dst, int mode,
    uint32_t idx0, uint32_t *okey, uint32_t *oidx, size_t cap, size_t *ng,
    const llmk_dtype dt) {
  size_t esz = dt == LLMK_F32 ? 4 : 2, i = 0;
  if ((uintptr_t)dst % esz || (mode & LLMK__TKP_IN_PLACE)) mode &= ~LLMK__TKP_STREAM;
  if (mode & LLMK__TKP_STREAM) { /* up to the first 32-byte boundary of dst: scalar */
    i = (32 - (uintptr_t)dst % 32) % 32 / esz;
    i = i < n ? i : n;
  }
  size_t cnt = 0, kept = llmk__tkp_select_scalar(src, dt, i, t, hi, dst, mode, idx0, okey,
                                                 oidx, cap, &cnt);
  size_t nb = (n - i) & ~(size_t)15;
  sel_c c = sel_consts(t, hi, mode, dt);
  kept += select_blocks(skip(src, dt, i), (char *)dst + i * esz, nb, &c,
                        idx0 + (uint32_t)i, okey, oidx, cap, &cnt, dt);
  i += nb;
  size_t part, o = cnt < cap ? cnt : cap;
  kept += llmk__tkp_select_scalar(skip(src, dt, i), dt, n - i, t, hi,
                                  (char *)dst + i * esz, mode, idx0 + (uint32_t)i,
                                  okey + o, oidx ? oidx + o : NULL, cap - o, &part);
  if (mode & LLMK__TKP_STREAM)
    _mm_sfence(); /* the streamed stores before any later one */
  *ng = cnt + part;
  return kept;
}

#endif
