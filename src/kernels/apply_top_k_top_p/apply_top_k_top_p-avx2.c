/* SPDX-License-Identifier: Apache-2.0 */
/* AVX2 kernels, bit-identical to the scalar ones. */
#include "kernels/apply_top_k_top_p/apply_top_k_top_p-avx2.h"

#include <immintrin.h>

#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/common/exp-avx2.h"
#include "kernels/convert/convert-elem.h"

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

uint32_t llmk__tkp_max_key_avx2(const void *src, llmk_dtype dt, size_t n, float *min) {
  if (min) BY_DTYPE(dt, return max_key_t(src, n, min, D, true))
  BY_DTYPE(dt, return max_key_t(src, n, NULL, D, false))
}

size_t llmk__tkp_gather_avx2(const void *src, llmk_dtype dt, size_t n, uint32_t lo,
                             uint32_t hi, uint32_t idx0, uint32_t *okey, uint32_t *oidx,
                             size_t cap){
    BY_DTYPE(dt, return gather_t(src, n, lo, hi, idx0, okey, oidx, cap, D))}

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
