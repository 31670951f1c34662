/* SPDX-License-Identifier: Apache-2.0 */
/* The AVX2 mass pass of top-p (bit-identical to the scalar one), with its riders. */
#include <immintrin.h>

#include "kernels/apply_top_k_top_p/apply_top_k_top_p-avx2.h"
#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/common/exp-avx2.h"

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
