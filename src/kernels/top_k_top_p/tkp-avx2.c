/* AVX2 kernels, bit-identical to the scalar ones. */
#include <immintrin.h>

#include "kernels/common/exp-avx2.h"
#include "kernels/convert/convert-elem.h"
#include "kernels/top_k_top_p/tkp.h"

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

static uint32_t widen_keys_avx2(const void *src, llmk_dtype dt, float *row, uint32_t *keys,
                                size_t n) {
  const uint16_t *h = src;
  __m256i vmax = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i v = _mm_loadu_si128((const void *)(h + i));
    __m256 f = dt == LLMK_F16 ? _mm256_cvtph_ps(v)
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

/* lanes with key >= t (unsigned), as a bit mask */
static inline unsigned ge8(__m256i k, __m256i vt) {
  return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_max_epu32(k, vt), k)));
}


/* llmk__mass_of on 8 lanes, as low and high 32-bit halves: (uint64_t)(e * 2^63) for e
 * in [0, 1] from the f32 bits (AVX2 has no f32 -> u64 conversion): the 24-bit mantissa
 * shifted by exponent - 23, truncating. Variable shifts by 32 or more (negative counts
 * included, as unsigned) give 0, which makes each half two shifts and an or. */
static inline void mass8(__m256 e, __m256i *lo, __m256i *hi) {
  __m256i b = _mm256_castps_si256(_mm256_mul_ps(e, _mm256_set1_ps(0x1p63f)));
  __m256i m = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffff)), _mm256_set1_epi32(0x800000));
  __m256i sh = _mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(127 + 23));
  __m256i c32 = _mm256_set1_epi32(32);
  *lo = _mm256_or_si256(_mm256_sllv_epi32(m, sh), _mm256_srlv_epi32(m, _mm256_sub_epi32(_mm256_setzero_si256(), sh)));
  *hi = _mm256_or_si256(_mm256_sllv_epi32(m, _mm256_sub_epi32(sh, c32)), _mm256_srlv_epi32(m, _mm256_sub_epi32(c32, sh)));
}

/* sums of the 32-bit lanes of v into 4 x 64-bit accumulators */
static inline __m256i add_halves(__m256i acc, __m256i v) {
  const __m256i low32 = _mm256_set1_epi64x(0xffffffff);
  return _mm256_add_epi64(acc, _mm256_add_epi64(_mm256_and_si256(v, low32), _mm256_srli_epi64(v, 32)));
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
                        uint32_t min_key, float lo, float scale, uint64_t *mass, uint16_t *bins,
                        uint64_t *total_lo, uint64_t *total_hi) {
  __m256i tl = _mm256_setzero_si256(), th = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    __m256i live = live8(_mm256_loadu_si256((const void *)(keys + i)), min_key);
    __m256 e = llmk__avx2_exp_nonpos(_mm256_sub_ps(v, _mm256_set1_ps(max)));
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
      __m256 b = _mm256_mul_ps(_mm256_sub_ps(v, _mm256_set1_ps(lo)), _mm256_set1_ps(scale));
      b = _mm256_min_ps(_mm256_max_ps(b, _mm256_setzero_ps()), _mm256_set1_ps((float)(LLMK__TKP_BINS - 1)));
      __m256i d = _mm256_cvttps_epi32(b);
      d = _mm256_blendv_epi8(_mm256_set1_epi32(LLMK__TKP_BINS), d, live);
      __m128i p = _mm_packus_epi32(_mm256_castsi256_si128(d), _mm256_extracti128_si256(d, 1));
      _mm_storeu_si128((void *)(bins + i), p);
    }
  }
  *total_lo += hsum64(tl);
  *total_hi += hsum64(th);
  if (i < n)
    llmk__tkp_masses_scalar(x + i, keys + i, n - i, max, min_key, lo, scale, mass + i,
                            bins ? bins + i : NULL, total_lo, total_hi);
}


static size_t gather_bin_avx2(const uint16_t *bins, const float *x, const uint32_t *keys, size_t n,
                              uint16_t bin, float *ox, uint32_t *ok, size_t cap) {
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
                                         ox + (c < cap ? c : cap), ok + (c < cap ? c : cap),
                                         c < cap ? cap - c : 0);
  return c + r;
}

/* For each 8-bit mask, the lanes it selects in order, 3 bits each (compress_idx). */
static const uint32_t compress_lut[256] = {
    0x000000, 0x000000, 0x000001, 0x000008, 0x000002, 0x000010, 0x000011, 0x000088,
    0x000003, 0x000018, 0x000019, 0x0000c8, 0x00001a, 0x0000d0, 0x0000d1, 0x000688,
    0x000004, 0x000020, 0x000021, 0x000108, 0x000022, 0x000110, 0x000111, 0x000888,
    0x000023, 0x000118, 0x000119, 0x0008c8, 0x00011a, 0x0008d0, 0x0008d1, 0x004688,
    0x000005, 0x000028, 0x000029, 0x000148, 0x00002a, 0x000150, 0x000151, 0x000a88,
    0x00002b, 0x000158, 0x000159, 0x000ac8, 0x00015a, 0x000ad0, 0x000ad1, 0x005688,
    0x00002c, 0x000160, 0x000161, 0x000b08, 0x000162, 0x000b10, 0x000b11, 0x005888,
    0x000163, 0x000b18, 0x000b19, 0x0058c8, 0x000b1a, 0x0058d0, 0x0058d1, 0x02c688,
    0x000006, 0x000030, 0x000031, 0x000188, 0x000032, 0x000190, 0x000191, 0x000c88,
    0x000033, 0x000198, 0x000199, 0x000cc8, 0x00019a, 0x000cd0, 0x000cd1, 0x006688,
    0x000034, 0x0001a0, 0x0001a1, 0x000d08, 0x0001a2, 0x000d10, 0x000d11, 0x006888,
    0x0001a3, 0x000d18, 0x000d19, 0x0068c8, 0x000d1a, 0x0068d0, 0x0068d1, 0x034688,
    0x000035, 0x0001a8, 0x0001a9, 0x000d48, 0x0001aa, 0x000d50, 0x000d51, 0x006a88,
    0x0001ab, 0x000d58, 0x000d59, 0x006ac8, 0x000d5a, 0x006ad0, 0x006ad1, 0x035688,
    0x0001ac, 0x000d60, 0x000d61, 0x006b08, 0x000d62, 0x006b10, 0x006b11, 0x035888,
    0x000d63, 0x006b18, 0x006b19, 0x0358c8, 0x006b1a, 0x0358d0, 0x0358d1, 0x1ac688,
    0x000007, 0x000038, 0x000039, 0x0001c8, 0x00003a, 0x0001d0, 0x0001d1, 0x000e88,
    0x00003b, 0x0001d8, 0x0001d9, 0x000ec8, 0x0001da, 0x000ed0, 0x000ed1, 0x007688,
    0x00003c, 0x0001e0, 0x0001e1, 0x000f08, 0x0001e2, 0x000f10, 0x000f11, 0x007888,
    0x0001e3, 0x000f18, 0x000f19, 0x0078c8, 0x000f1a, 0x0078d0, 0x0078d1, 0x03c688,
    0x00003d, 0x0001e8, 0x0001e9, 0x000f48, 0x0001ea, 0x000f50, 0x000f51, 0x007a88,
    0x0001eb, 0x000f58, 0x000f59, 0x007ac8, 0x000f5a, 0x007ad0, 0x007ad1, 0x03d688,
    0x0001ec, 0x000f60, 0x000f61, 0x007b08, 0x000f62, 0x007b10, 0x007b11, 0x03d888,
    0x000f63, 0x007b18, 0x007b19, 0x03d8c8, 0x007b1a, 0x03d8d0, 0x03d8d1, 0x1ec688,
    0x00003e, 0x0001f0, 0x0001f1, 0x000f88, 0x0001f2, 0x000f90, 0x000f91, 0x007c88,
    0x0001f3, 0x000f98, 0x000f99, 0x007cc8, 0x000f9a, 0x007cd0, 0x007cd1, 0x03e688,
    0x0001f4, 0x000fa0, 0x000fa1, 0x007d08, 0x000fa2, 0x007d10, 0x007d11, 0x03e888,
    0x000fa3, 0x007d18, 0x007d19, 0x03e8c8, 0x007d1a, 0x03e8d0, 0x03e8d1, 0x1f4688,
    0x0001f5, 0x000fa8, 0x000fa9, 0x007d48, 0x000faa, 0x007d50, 0x007d51, 0x03ea88,
    0x000fab, 0x007d58, 0x007d59, 0x03eac8, 0x007d5a, 0x03ead0, 0x03ead1, 0x1f5688,
    0x000fac, 0x007d60, 0x007d61, 0x03eb08, 0x007d62, 0x03eb10, 0x03eb11, 0x1f5888,
    0x007d63, 0x03eb18, 0x03eb19, 0x1f58c8, 0x03eb1a, 0x1f58d0, 0x1f58d1, 0xfac688,
};

/* The permutation that moves the lanes selected by m (8 bits) to the front, in order. */
static inline __m256i compress_idx(unsigned m) {
  __m256i v = _mm256_set1_epi32((int)compress_lut[m]);
  v = _mm256_srlv_epi32(v, _mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21));
  return _mm256_and_si256(v, _mm256_set1_epi32(7));
}


/* ------------------------------------------------- kernels over rows of the logits' dtype */

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
#define BY_DTYPE(dt, call)                          \
  switch (dt) {                                     \
    case LLMK_F16: { const llmk_dtype D = LLMK_F16; call; } \
    case LLMK_BF16: { const llmk_dtype D = LLMK_BF16; call; } \
    default: { const llmk_dtype D = LLMK_F32; call; } \
  }

static inline __attribute__((always_inline)) uint32_t max_key_t(const void *src, size_t n,
                                                                const llmk_dtype dt) {
  __m256i m0 = _mm256_setzero_si256(), m1 = m0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_epu32(m0, keys8(_mm256_castps_si256(load8(src, i, dt))));
    m1 = _mm256_max_epu32(m1, keys8(_mm256_castps_si256(load8(src, i + 8, dt))));
  }
  uint32_t l[8], max = llmk__tkp_max_key_scalar(skip(src, dt, i), dt, n - i);
  _mm256_storeu_si256((void *)l, _mm256_max_epu32(m0, m1));
  for (int j = 0; j < 8; j++) max = l[j] > max ? l[j] : max;
  return max;
}

uint32_t llmk__tkp_max_key_avx2(const void *src, llmk_dtype dt, size_t n) {
  BY_DTYPE(dt, return max_key_t(src, n, D))
}

static inline __attribute__((always_inline)) size_t gather_ge_t(const void *src, size_t n,
                                                               uint32_t t, uint32_t *out,
                                                               size_t cap, const llmk_dtype dt) {
  const __m256i vt = _mm256_set1_epi32((int)t);
  size_t c = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i k = keys8(_mm256_castps_si256(load8(src, i, dt)));
    unsigned m = ge8(k, vt);
    if (!m) continue; /* few hits: t is near the top */
    uint32_t l[8];
    _mm256_storeu_si256((void *)l, k);
    for (; m; m &= m - 1) {
      if (c < cap) out[c] = l[__builtin_ctz(m)];
      c++;
    }
  }
  return c + llmk__tkp_gather_ge_scalar(skip(src, dt, i), dt, n - i, t, out + (c < cap ? c : cap),
                                        c < cap ? cap - c : 0);
}

size_t llmk__tkp_gather_ge_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t t,
                                uint32_t *out, size_t cap) {
  BY_DTYPE(dt, return gather_ge_t(src, n, t, out, cap, D))
}

size_t llmk__tkp_select_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t t, void *dst,
                             bool in_place) {
  const __m256i vt = _mm256_set1_epi32((int)t);
  size_t kept = 0, i = 0;
  if (dt == LLMK_F32) {
    const __m256i ninf = _mm256_set1_epi32((int)0xff800000u);
    const float *s = src;
    float *d = dst;
    for (; i + 8 <= n; i += 8) {
      __m256i v = _mm256_loadu_si256((const void *)(s + i)), k = keys8(v);
      __m256i keep = _mm256_cmpeq_epi32(_mm256_max_epu32(k, vt), k);
      unsigned m = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(keep));
      kept += (size_t)__builtin_popcount(m);
      if (!in_place) _mm256_storeu_si256((void *)(d + i), _mm256_blendv_epi8(ninf, v, keep));
      else if (m != 0xff)
        _mm256_maskstore_epi32((int *)(d + i), _mm256_xor_si256(keep, _mm256_set1_epi32(-1)), ninf);
    }
  } else {
    const __m256i ninf = _mm256_set1_epi16((short)(dt == LLMK_BF16 ? 0xff80 : 0xfc00));
    const uint16_t *s = src;
    uint16_t *d = dst;
    for (; i + 16 <= n; i += 16) {
      __m256i k0, k1;
      if (dt == LLMK_F16) {
        k0 = keys8(_mm256_castps_si256(load8(src, i, LLMK_F16)));
        k1 = keys8(_mm256_castps_si256(load8(src, i + 8, LLMK_F16)));
      } else {
        k0 = keys8(_mm256_castps_si256(load8(src, i, LLMK_BF16)));
        k1 = keys8(_mm256_castps_si256(load8(src, i + 8, LLMK_BF16)));
      }
      __m256i m0 = _mm256_cmpeq_epi32(_mm256_max_epu32(k0, vt), k0);
      __m256i m1 = _mm256_cmpeq_epi32(_mm256_max_epu32(k1, vt), k1);
      /* 32-bit masks to 16-bit lanes in order */
      __m256i keep = _mm256_permute4x64_epi64(_mm256_packs_epi32(m0, m1), 0xd8);
      unsigned m = (unsigned)_mm256_movemask_epi8(keep);
      kept += (size_t)__builtin_popcount(m) / 2;
      if (in_place && m == 0xffffffffu) continue;
      __m256i v = _mm256_loadu_si256((const void *)(s + i));
      _mm256_storeu_si256((void *)(d + i), _mm256_blendv_epi8(ninf, v, keep));
    }
  }
  size_t esz = llmk_dtype_size(dt);
  return kept + llmk__tkp_select_scalar(skip(src, dt, i), dt, n - i, t, (char *)dst + i * esz,
                                        in_place);
}

static inline __attribute__((always_inline)) size_t count_eq_t(const void *src, size_t n,
                                                              uint32_t key, const llmk_dtype dt) {
  const __m256i vk = _mm256_set1_epi32((int)key);
  __m256i acc = _mm256_setzero_si256();
  size_t i = 0, c = 0;
  for (; i + 8 <= n; i += 8) /* lanes of -1 per match */
    acc = _mm256_sub_epi32(acc, _mm256_cmpeq_epi32(keys8(_mm256_castps_si256(load8(src, i, dt))), vk));
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

static inline __m256i mbin8(__m256 d) {
  __m256 v = _mm256_max_ps(_mm256_mul_ps(d, _mm256_set1_ps(16.0f)),
                           _mm256_set1_ps(-(float)LLMK__TKP_MB_TOP));
  return _mm256_add_epi32(_mm256_cvttps_epi32(_mm256_floor_ps(v)), _mm256_set1_epi32(LLMK__TKP_MB_TOP));
}

static inline __attribute__((always_inline)) void mass_bins_t(const void *src, size_t n, float max,
                                                             float xmin, double *tab,
                                                             const llmk_dtype dt) {
  enum { NB = LLMK__TKP_MBINS, BLK = 256 };
  const __m256 vmax = _mm256_set1_ps(max), vmin = _mm256_set1_ps(xmin);
  /* bins and masses of a block in vectors, then the adds one entry at a time (AVX2 has no
   * scatter); entry j goes to table j % 4, so that neighbours in one bin do not wait for
   * each other */
  int32_t b[BLK];
  double m[BLK];
  size_t i = 0;
  while (n - i >= 16) {
    size_t nb = n - i < BLK ? (n - i) / 16 * 16 : BLK;
    for (size_t j = 0; j < nb; j += 16) {
      __m256 v0 = load8(src, i + j, dt), v1 = load8(src, i + j + 8, dt);
      __m256 d0 = _mm256_sub_ps(v0, vmax), d1 = _mm256_sub_ps(v1, vmax), e0, e1;
      if (_mm256_movemask_ps(_mm256_cmp_ps(_mm256_min_ps(d0, d1), _mm256_set1_ps(-69.0f), _CMP_GE_OQ)) == 0xff) {
        e0 = llmk__avx2_exp_nonpos_ge69(d0);
        e1 = llmk__avx2_exp_nonpos_ge69(d1);
      } else {
        e0 = llmk__avx2_exp_nonpos(d0);
        e1 = llmk__avx2_exp_nonpos(d1);
      }
      __m256 m0 = _mm256_floor_ps(_mm256_mul_ps(e0, _mm256_set1_ps(0x1p63f)));
      __m256 m1 = _mm256_floor_ps(_mm256_mul_ps(e1, _mm256_set1_ps(0x1p63f)));
      m0 = _mm256_andnot_ps(_mm256_cmp_ps(v0, vmin, _CMP_LT_OQ), m0);
      m1 = _mm256_andnot_ps(_mm256_cmp_ps(v1, vmin, _CMP_LT_OQ), m1);
      _mm256_storeu_si256((void *)(b + j), mbin8(d0));
      _mm256_storeu_si256((void *)(b + j + 8), mbin8(d1));
      _mm256_storeu_pd(m + j, _mm256_cvtps_pd(_mm256_castps256_ps128(m0)));
      _mm256_storeu_pd(m + j + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(m0, 1)));
      _mm256_storeu_pd(m + j + 8, _mm256_cvtps_pd(_mm256_castps256_ps128(m1)));
      _mm256_storeu_pd(m + j + 12, _mm256_cvtps_pd(_mm256_extractf128_ps(m1, 1)));
    }
    for (size_t j = 0; j < nb; j += 4) {
      tab[b[j]] += m[j];
      tab[NB + b[j + 1]] += m[j + 1];
      tab[2 * NB + b[j + 2]] += m[j + 2];
      tab[3 * NB + b[j + 3]] += m[j + 3];
    }
    i += nb;
  }
  llmk__tkp_mass_bins_scalar(skip(src, dt, i), dt, n - i, max, xmin, tab);
}

void llmk__tkp_mass_bins_avx2(const void *src, llmk_dtype dt, size_t n, float max, float xmin,
                              double *tab) {
  BY_DTYPE(dt, mass_bins_t(src, n, max, xmin, tab, D); return)
}

static inline __attribute__((always_inline)) size_t gather_mbin_t(const void *src, size_t n,
                                                                 float max, float xmin, int bin,
                                                                 float *ox, uint32_t *ok,
                                                                 size_t cap, const llmk_dtype dt) {
  /* bin >= 1: 16 (x - max) in [bin - TOP, bin - TOP + 1) (exact products and bounds) */
  const __m256 vmax = _mm256_set1_ps(max), vmin = _mm256_set1_ps(xmin);
  const __m256 lo = _mm256_set1_ps((float)(bin - LLMK__TKP_MB_TOP));
  const __m256 hi = _mm256_set1_ps((float)(bin - LLMK__TKP_MB_TOP + 1));
  size_t c = 0, i = 0;
  for (; i + 8 <= n && c + 8 <= cap; i += 8) { /* branch-free: each store writes 8 lanes */
    __m256 v = load8(src, i, dt);
    __m256 s = _mm256_mul_ps(_mm256_sub_ps(v, vmax), _mm256_set1_ps(16.0f));
    __m256 in = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(s, lo, _CMP_GE_OQ), _mm256_cmp_ps(s, hi, _CMP_LT_OQ)),
                              _mm256_cmp_ps(v, vmin, _CMP_GE_OQ));
    unsigned m = (unsigned)_mm256_movemask_ps(in);
    _mm256_storeu_ps(ox + c, _mm256_permutevar8x32_ps(v, compress_idx(m)));
    c += (unsigned)__builtin_popcount(m);
  }
  for (size_t j = 0; j < c; j++) ok[j] = llmk__key_of(ox[j]);
  return c + llmk__tkp_gather_mbin_scalar(skip(src, dt, i), dt, n - i, max, xmin, bin, ox + c,
                                          ok + c, cap - c);
}

size_t llmk__tkp_gather_mbin_avx2(const void *src, llmk_dtype dt, size_t n, float max,
                                  float xmin, int bin, float *ox, uint32_t *ok, size_t cap) {
  BY_DTYPE(dt, return gather_mbin_t(src, n, max, xmin, bin, ox, ok, cap, D))
}

const llmk__tkp_kernels llmk__tkp_kernels_avx2 = {.isa = LLMK_ISA_AVX2,
                                                  .keys = keys_avx2,
                                                  .widen_keys = widen_keys_avx2,
                                                  .gather_bin = gather_bin_avx2,
                                                  .masses = masses_avx2,
                                                  .max_key = llmk__tkp_max_key_avx2,
                                                  .gather_ge = llmk__tkp_gather_ge_avx2,
                                                  .select = llmk__tkp_select_avx2,
                                                  .count_eq = llmk__tkp_count_eq_avx2,
                                                  .find_eq = llmk__tkp_find_eq_avx2,
                                                  .mass_bins = llmk__tkp_mass_bins_avx2,
                                                  .gather_mbin = llmk__tkp_gather_mbin_avx2};
