/* AVX2 kernels, bit-identical to the scalar ones. */
#include <immintrin.h>

#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/common/exp-avx2.h"
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

static uint32_t keys_avx2(const float *x, size_t n, uint32_t *keys) {
  __m256i vmax = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i k = keys8(_mm256_loadu_si256((const void *)(x + i)));
    _mm256_storeu_si256((void *)(keys + i), k);
    vmax = _mm256_max_epu32(vmax, k);
  }
  uint32_t lanes[8], max = 0;
  _mm256_storeu_si256((void *)lanes, vmax);
  for (int l = 0; l < 8; l++) max = lanes[l] > max ? lanes[l] : max;
  for (; i < n; i++) {
    keys[i] = llmk__key_of(x[i]);
    max = keys[i] > max ? keys[i] : max;
  }
  return max;
}

static uint32_t widen_keys_avx2(const void *src, llmk_dtype dt, float *row,
                                uint32_t *keys, size_t n) {
  const uint16_t *h = src;
  __m256i vmax = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i v = _mm_loadu_si128((const void *)(h + i));
    __m256 f = dt == LLMK_F16
                   ? _mm256_cvtph_ps(v)
                   : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
    __m256i k = keys8(_mm256_castps_si256(f));
    _mm256_storeu_ps(row + i, f);
    _mm256_storeu_si256((void *)(keys + i), k);
    vmax = _mm256_max_epu32(vmax, k);
  }
  uint32_t lanes[8], max = 0;
  _mm256_storeu_si256((void *)lanes, vmax);
  for (int l = 0; l < 8; l++) max = lanes[l] > max ? lanes[l] : max;
  for (; i < n; i++) {
    row[i] = dt == LLMK_F16 ? llmk__f16_to_f32(h[i]) : llmk__bf16_to_f32(h[i]);
    keys[i] = llmk__key_of(row[i]);
    max = keys[i] > max ? keys[i] : max;
  }
  return max;
}

/* llmk__mass_of on 8 lanes, as low and high 32-bit halves: (uint64_t)(e * 2^63) for e
 * in [0, 1] from the f32 bits (AVX2 has no f32 -> u64 conversion): the 24-bit mantissa
 * shifted by exponent - 23, truncating. Variable shifts by 32 or more (negative counts
 * included, as unsigned) give 0, which makes each half two shifts and an or. */
static inline void mass8(__m256 e, __m256i *lo, __m256i *hi) {
  __m256i b = _mm256_castps_si256(_mm256_mul_ps(e, _mm256_set1_ps(0x1p63f)));
  __m256i m = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffff)),
                              _mm256_set1_epi32(0x800000));
  __m256i sh = _mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(127 + 23));
  __m256i c32 = _mm256_set1_epi32(32);
  *lo =
      _mm256_or_si256(_mm256_sllv_epi32(m, sh),
                      _mm256_srlv_epi32(m, _mm256_sub_epi32(_mm256_setzero_si256(), sh)));
  *hi = _mm256_or_si256(_mm256_sllv_epi32(m, _mm256_sub_epi32(sh, c32)),
                        _mm256_srlv_epi32(m, _mm256_sub_epi32(c32, sh)));
}

/* sums of the 32-bit lanes of v into 4 x 64-bit accumulators */
static inline __m256i add_halves(__m256i acc, __m256i v) {
  const __m256i low32 = _mm256_set1_epi64x(0xffffffff);
  return _mm256_add_epi64(
      acc, _mm256_add_epi64(_mm256_and_si256(v, low32), _mm256_srli_epi64(v, 32)));
}

static inline __m256i live8(__m256i k, uint32_t min_key) {
  __m256i vm = _mm256_set1_epi32((int)min_key);
  return _mm256_cmpeq_epi32(_mm256_max_epu32(k, vm), k);
}

static inline uint64_t hsum64(__m256i v) {
  uint64_t l[4];
  _mm256_storeu_si256((void *)l, v);
  return l[0] + l[1] + l[2] + l[3];
}

static void masses_avx2(const float *x, const uint32_t *keys, size_t n, float max,
                        uint32_t min_key, float lo, float scale, uint64_t *mass,
                        uint16_t *bins, uint64_t *total_lo, uint64_t *total_hi) {
  __m256i tl = _mm256_setzero_si256(), th = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    __m256i live = live8(_mm256_loadu_si256((const void *)(keys + i)), min_key);
    __m256 e = llmk__avx2_exp_nonpos_fma(_mm256_sub_ps(v, _mm256_set1_ps(max)));
    __m256i ml, mh;
    mass8(e, &ml, &mh);
    ml = _mm256_and_si256(ml, live);
    mh = _mm256_and_si256(mh, live);
    __m256i p0 = _mm256_unpacklo_epi32(ml, mh), p1 = _mm256_unpackhi_epi32(ml, mh);
    _mm256_storeu_si256((void *)(mass + i), _mm256_permute2x128_si256(p0, p1, 0x20));
    _mm256_storeu_si256((void *)(mass + i + 4), _mm256_permute2x128_si256(p0, p1, 0x31));
    tl = add_halves(tl, ml);
    th = add_halves(th, mh);
    if (bins) {
      __m256 b =
          _mm256_mul_ps(_mm256_sub_ps(v, _mm256_set1_ps(lo)), _mm256_set1_ps(scale));
      b = _mm256_min_ps(_mm256_max_ps(b, _mm256_setzero_ps()),
                        _mm256_set1_ps((float)(LLMK__TKP_BINS - 1)));
      __m256i d = _mm256_cvttps_epi32(b);
      d = _mm256_blendv_epi8(_mm256_set1_epi32(LLMK__TKP_BINS), d, live);
      __m128i p =
          _mm_packus_epi32(_mm256_castsi256_si128(d), _mm256_extracti128_si256(d, 1));
      _mm_storeu_si128((void *)(bins + i), p);
    }
  }
  *total_lo += hsum64(tl);
  *total_hi += hsum64(th);
  if (i < n)
    llmk__tkp_masses_scalar(x + i, keys + i, n - i, max, min_key, lo, scale, mass + i,
                            bins ? bins + i : NULL, total_lo, total_hi);
}

static size_t gather_bin_avx2(const uint16_t *bins, const float *x, const uint32_t *keys,
                              size_t n, uint16_t bin, float *ox, uint32_t *ok,
                              size_t cap) {
  const __m256i vb = _mm256_set1_epi16((short)bin);
  size_t c = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    unsigned m = (unsigned)_mm256_movemask_epi8(
        _mm256_cmpeq_epi16(_mm256_loadu_si256((const void *)(bins + i)), vb));
    for (; m; m &= m - 1, m &= m - 1) { /* two mask bits per 16-bit lane */
      size_t j = i + (unsigned)__builtin_ctz(m) / 2;
      if (c < cap) {
        ox[c] = x[j];
        ok[c] = keys[j];
      }
      c++;
    }
  }
  size_t r = llmk__tkp_gather_bin_scalar(bins + i, x + i, keys + i, n - i, bin,
                                         ox + (c < cap ? c : cap),
                                         ok + (c < cap ? c : cap), c < cap ? cap - c : 0);
  return c + r;
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

uint32_t llmk__tkp_max_key_avx2(const void *src, llmk_dtype dt, size_t n, float *min) {
  if (min) BY_DTYPE(dt, return max_key_t(src, n, min, D, true))
  BY_DTYPE(dt, return max_key_t(src, n, NULL, D, false))
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
 * becomes the first 16-bit key whose widened key reaches it (bisection over 2^16). */
static inline __m256i keys16x16(__m256i h, const llmk_dtype dt) {
  __m256i k = _mm256_xor_si256(
      h, _mm256_or_si256(_mm256_srai_epi16(h, 15), _mm256_set1_epi16((short)0x8000)));
  k = _mm256_blendv_epi8(k, _mm256_set1_epi16((short)0x8000),
                         _mm256_cmpeq_epi16(h, _mm256_set1_epi16((short)0x8000)));
  __m256i nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)),
                                   _mm256_set1_epi16(dt == LLMK_F16 ? 0x7c00 : 0x7f80));
  return _mm256_or_si256(k, nan);
}

static uint32_t key32_of_key16(uint32_t k16, llmk_dtype dt) {
  uint16_t h = (uint16_t)(k16 & 0x8000 ? k16 & 0x7fff : ~k16);
  uint32_t k = llmk__key_of(dt == LLMK_F16 ? llmk__f16_to_f32(h) : llmk__bf16_to_f32(h));
  return k == LLMK__KEY_NAN && !(k16 & 0x8000) ? 0
                                               : k; /* negative NaNs' places: unused */
}

/* the smallest 16-bit key whose 32-bit key is >= t (0x10000: none) */
static uint32_t key16_ge(uint32_t t, llmk_dtype dt) {
  uint32_t lo = 0, hi = 0x10000;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (key32_of_key16(mid, dt) >= t)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
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
    uint32_t l16 = key16_ge(lo, dt),
             h16 = hi == UINT32_MAX ? 0x10000 : key16_ge(hi + 1, dt);
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

size_t llmk__tkp_gather_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t lo,
                             uint32_t hi, uint32_t idx0, uint32_t *okey, uint32_t *oidx,
                             size_t cap) {
  BY_DTYPE(dt, return gather_t(src, n, lo, hi, idx0, okey, oidx, cap, D))
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
  sel_c c = {.vt = _mm256_set1_epi32((int)t),
             .vhi = _mm256_set1_epi32((int)hi),
             .win = hi >= t,
             .all = mode & LLMK__TKP_MASK_ALL,
             .st = mode & LLMK__TKP_IN_PLACE ? SEL_IN_PLACE
                   : mode & LLMK__TKP_STREAM ? SEL_STREAM
                                             : SEL_PLAIN};
  if (dt != LLMK_F32) {
    uint32_t t16 = key16_ge(t, dt),
             h16 = hi == UINT32_MAX ? 0x10000 : key16_ge(hi + 1, dt);
    c.none = t16 > 0xffff; /* nothing kept */
    c.win = c.win && h16 > t16;
    c.t16 = _mm256_set1_epi16((short)(c.none ? 0xffff : t16));
    c.hi16 = _mm256_set1_epi16((short)(h16 - 1));
  }
  /* key >= t is x >= value(t) or x NaN, for t from -inf to +inf (-0 == +0 as keys) */
  c.fl = t >= LLMK__KEY_NINF && t <= LLMK__KEY_PINF;
  c.hi_all = hi == UINT32_MAX;
  c.ft = _mm256_set1_ps(c.fl ? llmk__value_of_key(t) : 0.0f);
  /* key <= hi is x <= value(hi) (ordered: NaN is above every hi but the last); hi >= t */
  c.fhi = _mm256_set1_ps(!c.fl                  ? 0.0f
                         : hi <= LLMK__KEY_PINF ? llmk__value_of_key(hi)
                                                : __builtin_inff());
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

size_t llmk__tkp_select_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t t,
                             uint32_t hi, void *dst, int mode, uint32_t idx0,
                             uint32_t *okey, uint32_t *oidx, size_t cap, size_t *ng) {
  BY_DTYPE(dt, return select_t(src, n, t, hi, dst, mode, idx0, okey, oidx, cap, ng, D))
}

static inline __attribute__((always_inline)) size_t count_eq_t(const void *src, size_t n,
                                                               uint32_t key,
                                                               const llmk_dtype dt) {
  const __m256i vk = _mm256_set1_epi32((int)key);
  __m256i acc = _mm256_setzero_si256();
  size_t i = 0, c = 0;
  for (; i + 8 <= n; i += 8) /* lanes of -1 per match */
    acc = _mm256_sub_epi32(
        acc, _mm256_cmpeq_epi32(keys8(_mm256_castps_si256(load8(src, i, dt))), vk));
  uint32_t l[8];
  _mm256_storeu_si256((void *)l, acc);
  for (int j = 0; j < 8; j++) c += l[j];
  return c + llmk__tkp_count_eq_scalar(skip(src, dt, i), dt, n - i, key);
}

size_t llmk__tkp_count_eq_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t key) {
  BY_DTYPE(dt, return count_eq_t(src, n, key, D))
}

static inline __attribute__((always_inline)) size_t find_eq_t(const void *src, size_t n,
                                                              uint32_t key, size_t nth,
                                                              const llmk_dtype dt) {
  const __m256i vk = _mm256_set1_epi32((int)key);
  size_t i = 0, seen = 0;
  for (; i + 8 <= n; i += 8) {
    unsigned m = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
        _mm256_cmpeq_epi32(keys8(_mm256_castps_si256(load8(src, i, dt))), vk)));
    for (; m; m &= m - 1)
      if (++seen == nth) return i + (unsigned)__builtin_ctz(m);
  }
  return i + llmk__tkp_find_eq_scalar(skip(src, dt, i), dt, n - i, key, nth - seen);
}

size_t llmk__tkp_find_eq_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t key,
                              size_t nth) {
  BY_DTYPE(dt, return find_eq_t(src, n, key, nth, D))
}

/* exp_nonpos_fma of two vectors, out of the hot loop (rows rarely reach below -69) */
static __attribute__((noinline)) void exp_nonpos2(const __m256 *d0, const __m256 *d1,
                                                  __m256 *e0, __m256 *e1) {
  *e0 = llmk__avx2_exp_nonpos_fma(*d0);
  *e1 = llmk__avx2_exp_nonpos_fma(*d1);
}

/* The bins and values of 8 entries (exps e, lanes lt excluded) as 64-bit words:
 * value << 32 | byte offset of the bin in a table. */
static inline void mass_words8(__m256 e, __m256 lt, uint64_t *w) {
  __m256i u = _mm256_castps_si256(e);
  __m256i b = _mm256_max_epi32(
      _mm256_sub_epi32(_mm256_srli_epi32(u, 19), _mm256_set1_epi32(1024)),
      _mm256_setzero_si256());
  __m256i sh =
      _mm256_max_epi32(_mm256_sub_epi32(_mm256_set1_epi32(87), _mm256_srli_epi32(u, 23)),
                       _mm256_setzero_si256());
  __m256i m = _mm256_or_si256(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffff)),
                              _mm256_set1_epi32(0x800000));
  m = _mm256_andnot_si256(_mm256_castps_si256(lt), _mm256_srlv_epi32(m, sh));
  b = _mm256_slli_epi32(b, 3);
  _mm256_storeu_si256((void *)w, _mm256_unpacklo_epi32(b, m));
  _mm256_storeu_si256((void *)(w + 4), _mm256_unpackhi_epi32(b, m));
}

/* mass_words8 for e >= 2^-40 (bins above 0, no shift) and no lane excluded */
static inline void mass_words8_big(__m256 e, uint64_t *w) {
  __m256i u = _mm256_castps_si256(e);
  __m256i b =
      _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(~7)),
                       _mm256_set1_epi32(1024 * 8));
  __m256i m = _mm256_or_si256(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffff)),
                              _mm256_set1_epi32(0x800000));
  _mm256_storeu_si256((void *)w, _mm256_unpacklo_epi32(b, m));
  _mm256_storeu_si256((void *)(w + 4), _mm256_unpackhi_epi32(b, m));
}

/* The 16 words of mass_words8 added to their bins, word j to table j % 4 */
static inline void add_words16(uint64_t *tab, const uint64_t *w) {
  char *t = (char *)tab;
  for (int q = 0; q < 16; q++)
    *(uint64_t *)(void *)(t + (q % 4) * LLMK__TKP_MB_STRIDE * 8 + (uint32_t)w[q]) +=
        w[q] >> 32;
}

/* The mass loop over the blocks of 16 in [c0, c1) (see mass_bins_t); DENSE: every entry
 * has x - max >= LLMK__TKP_DENSE_D, known beforehand. Without the checks per block that
 * this leaves out, the op took 14% less time at B=64 p=0.9 (in-process A/B). */
static inline __attribute__((always_inline)) void mass_loop(
    const void *src, size_t c0, size_t c1, __m256 vmax, __m256 vmin, uint64_t *tab,
    uint64_t (*w)[16], int *curp, const void *ms, const void *ss, void *sd, size_t esz,
    int st, const llmk_dtype dt, const bool SEL, const bool MX, const bool XMIN,
    const bool DENSE) {
  int cur = *curp;
  for (size_t i = c0; i < c1; i += 16, cur ^= 1) {
    /* the rider's rows one chunk ahead: their loops, short and fast, would wait (into
     * L2: in L1 they would push out the tables) */
    if (MX) _mm_prefetch((const char *)ms + (i + SEL_CHUNK) * esz, _MM_HINT_T1);
    if (SEL) _mm_prefetch((const char *)ss + (i + SEL_CHUNK) * esz, _MM_HINT_T1);
    if (SEL && st == SEL_PLAIN) /* its output too (streamed stores need none) */
      __builtin_prefetch((char *)sd + (i + SEL_CHUNK) * esz, 1, 3);
    __m256 v0 = load8(src, i, dt), v1 = load8(src, i + 8, dt);
    __m256 d0 = _mm256_sub_ps(v0, vmax), d1 = _mm256_sub_ps(v1, vmax), e0, e1;
    __m256 mn = _mm256_min_ps(d0, d1);
    /* d >= -27: e >= 2^-40, the masses need no shift; d >= -69: e is normal */
    bool big = DENSE || _mm256_movemask_ps(_mm256_cmp_ps(
                            mn, _mm256_set1_ps(LLMK__TKP_DENSE_D), _CMP_GE_OQ)) == 0xff;
    if (big || _mm256_movemask_ps(
                   _mm256_cmp_ps(mn, _mm256_set1_ps(-69.0f), _CMP_GE_OQ)) == 0xff) {
      e0 = llmk__avx2_exp_nonpos_fma_ge69(d0);
      e1 = llmk__avx2_exp_nonpos_fma_ge69(d1);
    } else
      exp_nonpos2(&d0, &d1, &e0, &e1);
    add_words16(tab, w[cur ^ 1]);
    if (big && !XMIN) {
      mass_words8_big(e0, w[cur]);
      mass_words8_big(e1, w[cur] + 8);
    } else {
      mass_words8(e0, _mm256_cmp_ps(v0, vmin, _CMP_LT_OQ), w[cur]);
      mass_words8(e1, _mm256_cmp_ps(v1, vmin, _CMP_LT_OQ), w[cur] + 8);
    }
  }
  *curp = cur;
}

static inline __attribute__((always_inline)) void mass_bins_t(
    const void *src, size_t n, float max, float xmin, uint64_t *tab, llmk__tkp_rider *rd,
    const llmk_dtype dt, const bool SEL, const bool MX, const bool XMIN) {
  /* AVX2 has no scatter: the adds go one entry at a time, word j to table j % 4 (so that
   * neighbours in one bin do not wait for each other), and those of the previous 16
   * entries while the next 16 are computed */
  const __m256 vmax = _mm256_set1_ps(max), vmin = _mm256_set1_ps(xmin);
  uint64_t w[2][16] = {{0}}; /* to start with: value 0 to bin 0 */
  int cur = 0, mode = 0;
  sel_c sc = {0};
  uint32_t ev[SEL_CHUNK / 16];
  size_t kept = 0, cnt = 0, nb = n & ~(size_t)15, esz = dt == LLMK_F32 ? 4 : 2;
  if (SEL) { /* streamed only where the rows' blocks are 32-byte aligned */
    mode = rd->sel_mode;
    if ((uintptr_t)rd->sel_dst % 32 || (mode & LLMK__TKP_IN_PLACE))
      mode &= ~LLMK__TKP_STREAM;
    sc = sel_consts(rd->sel_t, rd->sel_hi, mode, dt);
  }
  /* the rider's rows in locals: stores through them cannot change them */
  const void *ss = SEL ? rd->sel_src : NULL, *ms = MX ? rd->max_src : NULL;
  void *sd = SEL ? rd->sel_dst : NULL;
  __m256 mk0 = _mm256_set1_ps(-__builtin_inff()), mk1 = mk0, mnan = _mm256_setzero_ps();
  __m256 mi0 = _mm256_set1_ps(__builtin_inff()), mi1 = mi0;
  const bool dense = !XMIN && rd && rd->src_dense;
  for (size_t c0 = 0; c0 < nb; c0 += SEL_CHUNK) {
    size_t c1 = nb - c0 < SEL_CHUNK ? nb : c0 + SEL_CHUNK, ne = 0;
    __m256i acc = _mm256_setzero_si256();
    if (dense)
      mass_loop(src, c0, c1, vmax, vmin, tab, w, &cur, ms, ss, sd, esz, sc.st, dt, SEL,
                MX, false, true);
    else
      mass_loop(src, c0, c1, vmax, vmin, tab, w, &cur, ms, ss, sd, esz, sc.st, dt, SEL,
                MX, XMIN, false);
    /* the rider's work on the same chunk, in loops of their own (in the mass loop, its
     * values would not fit in the registers) */
    if (SEL) ne = sel_run(ss, sd, c0, c1, &sc, &acc, ev, dt);
    if (MX)
      for (size_t i = c0; i < c1; i += 16) {
        __m256 a = load8(ms, i, dt), b = load8(ms, i + 8, dt);
        mk0 = _mm256_max_ps(mk0, a);
        mk1 = _mm256_max_ps(mk1, b);
        mi0 = _mm256_min_ps(mi0, a);
        mi1 = _mm256_min_ps(mi1, b);
        mnan = _mm256_or_ps(mnan, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
      }
    if (SEL) {
      kept += sel_count(acc, dt);
      cnt = sel_gather(rd->sel_src, ev, ne, &sc, rd->sel_idx0, rd->sel_okey, rd->sel_oidx,
                       rd->sel_cap, cnt, dt);
    }
  }
  add_words16(tab, w[cur ^ 1]);
  llmk__tkp_mass_bins_scalar(skip(src, dt, nb), dt, n - nb, max, xmin, tab, NULL);
  if (SEL) {
    size_t part, o = cnt < rd->sel_cap ? cnt : rd->sel_cap;
    rd->sel_kept =
        kept + llmk__tkp_select_scalar(
                   skip(rd->sel_src, dt, nb), dt, n - nb, rd->sel_t, rd->sel_hi,
                   (char *)rd->sel_dst + nb * llmk_dtype_size(dt), mode,
                   rd->sel_idx0 + (uint32_t)nb, rd->sel_okey + o,
                   rd->sel_oidx ? rd->sel_oidx + o : NULL, rd->sel_cap - o, &part);
    if (mode & LLMK__TKP_STREAM) _mm_sfence();
    rd->sel_ng = cnt + part;
  }
  if (MX) {
    uint32_t k = nb ? key_of_max8(_mm256_max_ps(mk0, mk1), mnan) : 0;
    float tmin;
    uint32_t t = llmk__tkp_max_key_scalar(skip(rd->max_src, dt, nb), dt, n - nb, &tmin);
    rd->max_key = t > k ? t : k;
    rd->max_min = min8(_mm256_min_ps(mi0, mi1), tmin);
  }
}

void llmk__tkp_mass_bins_avx2(const void *src, llmk_dtype dt, size_t n, float max,
                              float xmin, uint64_t *tab, llmk__tkp_rider *rd) {
  bool sel = rd && rd->sel_src, mx = rd && rd->max_src;
  if (xmin > -__builtin_inff()) /* under a top-k threshold: rare, one instance */
    BY_DTYPE(dt, mass_bins_t(src, n, max, xmin, tab, rd, D, sel, mx, true); return )
  BY_DTYPE(dt,
           if (sel && mx) mass_bins_t(src, n, max, xmin, tab, rd, D, true, true, false);
           else if (sel) mass_bins_t(src, n, max, xmin, tab, rd, D, true, false, false);
           else if (mx) mass_bins_t(src, n, max, xmin, tab, rd, D, false, true, false);
           else mass_bins_t(src, n, max, xmin, tab, rd, D, false, false, false); return )
}

const llmk__tkp_kernels llmk__tkp_kernels_avx2 = {.isa = LLMK_ISA_AVX2,
                                                  .keys = keys_avx2,
                                                  .widen_keys = widen_keys_avx2,
                                                  .gather_bin = gather_bin_avx2,
                                                  .masses = masses_avx2,
                                                  .max_key = llmk__tkp_max_key_avx2,
                                                  .gather = llmk__tkp_gather_avx2,
                                                  .select = llmk__tkp_select_avx2,
                                                  .count_eq = llmk__tkp_count_eq_avx2,
                                                  .find_eq = llmk__tkp_find_eq_avx2,
                                                  .mass_bins = llmk__tkp_mass_bins_avx2};
