/* SPDX-License-Identifier: Apache-2.0 */
/* AVX-512 masses: the scalar exp_nonpos_fma and mass_of, operation for operation. */
#include <immintrin.h>

#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/common/exp-avx512.h"

static inline __m512i keys16(__m512 x) __attribute__((unused));
static inline __m512i keys16(__m512 x) {
  __m512i u = _mm512_castps_si512(x);
  __m512i mag = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
  __mmask16 nan = _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32(0x7f800000));
  __mmask16 neg = _mm512_cmpgt_epu32_mask(u, _mm512_set1_epi32(0x7fffffff)) &
                  _mm512_cmpneq_epu32_mask(u, _mm512_set1_epi32((int)0x80000000u));
  __mmask16 nzero = _mm512_cmpeq_epu32_mask(u, _mm512_set1_epi32((int)0x80000000u));
  __m512i pos = _mm512_or_si512(_mm512_mask_mov_epi32(u, nzero, _mm512_setzero_si512()),
                                _mm512_set1_epi32((int)0x80000000u));
  __m512i key =
      _mm512_mask_mov_epi32(pos, neg, _mm512_xor_si512(u, _mm512_set1_epi32(-1)));
  return _mm512_mask_mov_epi32(key, nan, _mm512_set1_epi32(-1));
}

static void masses_avx512(const float *x, const uint32_t *keys, size_t n, float max,
                          uint32_t min_key, float lo, float scale, uint64_t *mass,
                          uint16_t *bins, uint64_t *total_lo, uint64_t *total_hi) {
  __m512i lo_acc = _mm512_setzero_si512(), hi_acc = _mm512_setzero_si512();
  const __m512i low32 = _mm512_set1_epi64(0xffffffff);
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    __mmask16 live = m & _mm512_cmpge_epu32_mask(_mm512_maskz_loadu_epi32(m, keys + i),
                                                 _mm512_set1_epi32((int)min_key));
    __m512 e = llmk__avx512_exp_nonpos_fma(_mm512_sub_ps(v, _mm512_set1_ps(max)));
    e = _mm512_maskz_mov_ps(live, _mm512_mul_ps(e, _mm512_set1_ps(0x1p63f)));
    __m512i m0 = _mm512_cvttps_epu64(_mm512_castps512_ps256(e));
    __m512i m1 = _mm512_cvttps_epu64(
        _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1)));
    _mm512_mask_storeu_epi64(mass + i, (__mmask8)m, m0);
    _mm512_mask_storeu_epi64(mass + i + 8, (__mmask8)(m >> 8), m1);
    lo_acc = _mm512_add_epi64(lo_acc, _mm512_add_epi64(_mm512_and_si512(m0, low32),
                                                       _mm512_and_si512(m1, low32)));
    hi_acc = _mm512_add_epi64(
        hi_acc, _mm512_add_epi64(_mm512_srli_epi64(m0, 32), _mm512_srli_epi64(m1, 32)));
    if (bins) {
      __m512 b =
          _mm512_mul_ps(_mm512_sub_ps(v, _mm512_set1_ps(lo)), _mm512_set1_ps(scale));
      __mmask16 pos = _mm512_cmp_ps_mask(b, _mm512_setzero_ps(), _CMP_GE_OQ);
      __m512i d =
          _mm512_maskz_mov_epi32(pos, _mm512_cvttps_epu32(_mm512_maskz_mov_ps(pos, b)));
      d = _mm512_min_epu32(d, _mm512_set1_epi32(LLMK__TKP_BINS - 1));
      d = _mm512_mask_mov_epi32(_mm512_set1_epi32(LLMK__TKP_BINS), live, d);
      _mm256_mask_storeu_epi16(bins + i, m, _mm512_cvtepi32_epi16(d));
    }
  }
  *total_lo += (uint64_t)_mm512_reduce_add_epi64(lo_acc);
  *total_hi += (uint64_t)_mm512_reduce_add_epi64(hi_acc);
}

static uint32_t keys_avx512(const float *x, size_t n, uint32_t *keys) {
  __m512i mx = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
    __m512i k = keys16(_mm512_maskz_loadu_ps(m, x + i));
    _mm512_mask_storeu_epi32(keys + i, m, k);
    mx = _mm512_mask_max_epu32(mx, m, mx, k);
  }
  return _mm512_reduce_max_epu32(mx);
}

static size_t gather_bin_avx512(const uint16_t *bins, const float *x,
                                const uint32_t *keys, size_t n, uint16_t bin, float *ox,
                                uint32_t *ok, size_t cap) {
  size_t c = 0, i = 0;
  const __m512i vb = _mm512_set1_epi16((short)bin);
  for (; i + 32 <= n; i += 32) {
    uint32_t m = _mm512_cmpeq_epi16_mask(_mm512_loadu_si512(bins + i), vb);
    while (m) { /* few hits: the chosen bin is small */
      unsigned b = (unsigned)__builtin_ctz(m);
      if (c < cap) {
        ox[c] = x[i + b];
        ok[c] = keys[i + b];
      }
      c++;
      m &= m - 1;
    }
  }
  for (; i < n; i++)
    if (bins[i] == bin) {
      if (c < cap) {
        ox[c] = x[i];
        ok[c] = keys[i];
      }
      c++;
    }
  return c;
}

/* The kernels over rows of the logits' dtype were written on an AVX2-only machine: the
 * AVX2 ones serve here until AVX-512 ones can be measured. */
const llmk__tkp_kernels llmk__tkp_kernels_avx512 = {
    .isa = LLMK_ISA_AVX512,
    .keys = keys_avx512,
    .gather_bin = gather_bin_avx512,
    .masses = masses_avx512,
    .max_key = llmk__tkp_max_key_avx2,
    .gather = llmk__tkp_gather_avx2,
    .select = llmk__tkp_select_avx2,
    .count_eq = llmk__tkp_count_eq_avx2,
    .find_eq = llmk__tkp_find_eq_avx2,
    .mass_bins = llmk__tkp_mass_bins_avx2};
