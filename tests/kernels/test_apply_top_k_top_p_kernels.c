/* SPDX-License-Identifier: Apache-2.0 */
/* The top-k/top-p kernel tables of llmk__tkp_kernel_list that this CPU runs give the
 * scalar table's results bit for bit, on random rows with special values and every tail
 * length, in f32, f16 and bf16; the kernels over rows are also checked against their
 * definitions (so the scalar table is checked too). */
#include <math.h>

#include "dispatch/dispatch.h"
#include "kernel_list.h"
#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "llmk/llmk.h"
#include "test_util.h"

/* NaN, infinities, -0 and subnormals (1 in 16 each), ties, moderate values. */
static float rand_value(void) {
  int64_t c = tu_rand_range(0, 15);
  if (c < 5) return tu_special_f32((int)c);
  if (c == 5) return (float)tu_rand_range(-3, 3); /* ties */
  return (float)((tu_rand_unit() - 0.5) * 40.0);
}

__extension__ typedef unsigned __int128 u128;

static const llmk_dtype dtypes[3] = {LLMK_F32, LLMK_F16, LLMK_BF16};

/* The kernels over rows of the logits' dtype, against the scalar table and against their
 * definitions, for a row whose widened values are w (keys kw). */
static void check_src(const llmk__tkp_kernels *k, const char *name, const void *src,
                      llmk_dtype dt, const float *w, const uint32_t *kw, size_t n,
                      bool finite) {
  const llmk__tkp_kernels *s = &llmk__tkp_kernels_scalar;
  enum { N = 9000 };
  static uint32_t oa[N + 8], ob[N + 8], ia[N + 8], ib[N + 8];
  static uint8_t da[4 * N + 64], db[4 * N + 64];
  const char *dn = llmk_dtype_name(dt);
  uint32_t want = 0;
  for (size_t i = 0; i < n; i++) want = kw[i] > want ? kw[i] : want;
  float wmin0 = INFINITY, mina = 0, minb = 0;
  bool nan_in = false;
  for (size_t i = 0; i < n; i++) {
    wmin0 = w[i] < wmin0 ? w[i] : wmin0;
    nan_in = nan_in || w[i] != w[i];
  }
  TU_CHECK(s->max_key(src, dt, n, NULL) == want && k->max_key(src, dt, n, NULL) == want &&
               s->max_key(src, dt, n, &mina) == want &&
               k->max_key(src, dt, n, &minb) == want &&
               (nan_in || (mina == wmin0 && minb == wmin0)),
           "%s max_key %s n=%zu", name, dn, n);
  /* thresholds at the ends of the key ranges (-inf, +inf, +0, NaN and their neighbours),
   * where select compares values instead of keys or stops doing so */
  static const uint32_t edges[] = {0,
                                   LLMK__KEY_NINF - 1,
                                   LLMK__KEY_NINF,
                                   LLMK__KEY_NINF + 1,
                                   0x7fffffffu,
                                   0x80000000u,
                                   0x80000001u,
                                   LLMK__KEY_PINF - 1,
                                   LLMK__KEY_PINF,
                                   LLMK__KEY_PINF + 1,
                                   LLMK__KEY_NAN - 1,
                                   LLMK__KEY_NAN};
  const int64_t nedges = (int64_t)(sizeof edges / sizeof edges[0]);
  uint32_t t = n ? kw[tu_rand_range(0, (int64_t)n - 1)] : 0x80000000u;
  if (tu_rand_range(0, 3) == 0) t = (uint32_t)tu_rand_u64();
  if (tu_rand_range(0, 3) == 0) t = edges[tu_rand_range(0, nedges - 1)];
  /* a window [t, hi] (empty when hi < t) */
  uint32_t hi = n ? kw[tu_rand_range(0, (int64_t)n - 1)] : t;
  if (tu_rand_range(0, 3) == 0) hi = UINT32_MAX;
  if (tu_rand_range(0, 3) == 0) hi = edges[tu_rand_range(0, nedges - 1)];
  uint32_t idx0 = (uint32_t)tu_rand_range(0, 1000);
  size_t cap = (size_t)tu_rand_range(0, (int64_t)n + 1), ge = 0, inw = 0;
  for (size_t i = 0; i < n; i++) {
    ge += kw[i] >= t;
    inw += kw[i] >= t && kw[i] <= hi;
  }
  bool with_idx = tu_rand_range(0, 1);
  size_t ca = s->gather(src, dt, n, t, hi, idx0, oa, with_idx ? ia : NULL, cap);
  size_t cb = k->gather(src, dt, n, t, hi, idx0, ob, with_idx ? ib : NULL, cap);
  bool order = true;
  for (size_t i = 0, c = 0; i < n && c < cap; i++)
    if (kw[i] >= t && kw[i] <= hi) {
      order = order && oa[c] == kw[i] && (!with_idx || ia[c] == idx0 + i);
      c++;
    }
  size_t cm = ca < cap ? ca : cap;
  TU_CHECK(ca == inw && cb == inw && order && !memcmp(oa, ob, cm * 4) &&
               (!with_idx || !memcmp(ia, ib, cm * 4)),
           "%s gather %s n=%zu", name, dn, n);
  size_t esz = llmk_dtype_size(dt);
  for (int inp = 0; inp < 2; inp++) {
    memset(da, 0x5a, sizeof da);
    memset(db, 0x5a, sizeof db);
    size_t nga = 0, ngb = 0;
    memset(oa, 0, (n + 8) * 4);
    memset(ob, 0, (n + 8) * 4);
    int mode = inp ? LLMK__TKP_IN_PLACE : (int)tu_rand_range(0, 1) * LLMK__TKP_STREAM;
    bool all = !inp && tu_rand_range(0, 3) == 0; /* not in place (see tkp.h) */
    if (all) mode |= LLMK__TKP_MASK_ALL;
    size_t off =
        mode & LLMK__TKP_STREAM ? (size_t)tu_rand_range(0, 7) : 0; /* misaligned */
    uint8_t *pa = da + off * esz, *pb = db + off * esz;
    if (inp) {
      memcpy(pa, src, n * esz);
      memcpy(pb, src, n * esz);
    }
    size_t kpa = s->select(inp ? (const void *)pa : src, dt, n, t, hi, pa, mode, idx0, oa,
                           ia, cap, &nga);
    size_t kpb = k->select(inp ? (const void *)pb : src, dt, n, t, hi, pb, mode, idx0, ob,
                           ib, cap, &ngb);
    size_t want_kept = all ? 0 : ge;
    bool ok = kpa == want_kept && kpb == want_kept && nga == inw && ngb == inw;
    for (size_t i = 0, c = 0; i < n; i++) { /* kept: the same bits; masked: -inf */
      float got;
      llmk_convert(&got, LLMK_F32, pa + i * esz, dt, 1);
      ok = ok &&
           (kw[i] >= t && !all ? !memcmp(pa + i * esz, (const char *)src + i * esz, esz)
                               : isinf(got) && got < 0);
      if (kw[i] >= t && kw[i] <= hi) {
        if (c < cap) ok = ok && oa[c] == kw[i] && ia[c] == idx0 + i;
        c++;
      }
    }
    cm = inw < cap ? inw : cap;
    TU_CHECK(ok && !memcmp(pa, pb, n * esz) && !memcmp(oa, ob, cm * 4) &&
                 !memcmp(ia, ib, cm * 4),
             "%s select %s mode=%d n=%zu", name, dn, mode, n);
  }
  size_t nth = (size_t)tu_rand_range(1, 4), eq = 0, at = n;
  for (size_t i = 0; i < n; i++)
    if (kw[i] == t && ++eq == nth) at = i;
  TU_CHECK(s->count_eq(src, dt, n, t) == eq && k->count_eq(src, dt, n, t) == eq &&
               s->find_eq(src, dt, n, t, nth) == at &&
               k->find_eq(src, dt, n, t, nth) == at,
           "%s count_eq / find_eq %s n=%zu", name, dn, n);
  if (!finite) return;
  float max = -INFINITY;
  for (size_t i = 0; i < n; i++) max = w[i] > max ? w[i] : max;
  if (!(max > -INFINITY)) return;
  /* mass bins: the four tables summed per bin (exact, so any split among them is fine),
   * against the definitions: bin and value from the bits of e, and the bin's mass equal
   * to the sum of llmk__mass_of over its entries; xmin excludes entries below it */
  float xmin = tu_rand_range(0, 1) ? -INFINITY : w[tu_rand_range(0, (int64_t)n - 1)];
  static uint64_t tba[4 * LLMK__TKP_MB_STRIDE], tbb[4 * LLMK__TKP_MB_STRIDE];
  memset(tba, 0, sizeof tba);
  memset(tbb, 0, sizeof tbb);
  /* with riders: a select of the row reversed, the largest key of the row shifted by one
   */
  static uint8_t rsrc[4 * N], rdst_a[4 * N + 64], rdst_b[4 * N + 64], msrc[4 * N];
  size_t esz2 = llmk_dtype_size(dt);
  for (size_t i = 0; i < n; i++) {
    memcpy(rsrc + i * esz2, (const char *)src + (n - 1 - i) * esz2, esz2);
    memcpy(msrc + i * esz2, (const char *)src + (i + 1) % n * esz2, esz2);
  }
  int rmode = (int)tu_rand_range(0, 1) * LLMK__TKP_STREAM;
  size_t roff = (size_t)tu_rand_range(0, 1) * 32; /* aligned or not */
  static uint32_t rka[N + 8], rkb[N + 8], ria[N + 8], rib[N + 8];
  llmk__tkp_rider ra = {.sel_src = rsrc,
                        .sel_dst = rdst_a + roff,
                        .sel_t = t,
                        .sel_hi = hi,
                        .sel_idx0 = idx0,
                        .sel_mode = rmode,
                        .sel_okey = rka,
                        .sel_oidx = ria,
                        .sel_cap = cap,
                        .max_src = msrc};
  /* src_dense, when true of the row (it is of some: see check_isa), lets the SIMD pass
   * leave out its checks per block: the tables must not change */
  bool dense = true;
  float wmin = INFINITY;
  for (size_t i = 0; i < n; i++) {
    dense = dense && w[i] - max >= LLMK__TKP_DENSE_D;
    wmin = w[i] < wmin ? w[i] : wmin;
  }
  ra.src_dense = dense && tu_rand_range(0, 3) > 0;
  llmk__tkp_rider rb = ra;
  rb.sel_dst = rdst_b + (roff ? 4 : 0);
  rb.sel_okey = rkb;
  rb.sel_oidx = rib;
  bool rider = tu_rand_range(0, 1);
  s->mass_bins(src, dt, n, max, xmin, tba, rider ? &ra : NULL);
  k->mass_bins(src, dt, n, max, xmin, tbb, rider ? &rb : NULL);
  if (rider) {
    size_t ng = 0, rc = ra.sel_ng < cap ? ra.sel_ng : cap;
    static uint8_t rdst[4 * N];
    static uint32_t rk[N + 8], ri[N + 8];
    size_t kp = s->select(rsrc, dt, n, t, hi, rdst, 0, idx0, rk, ri, cap, &ng);
    TU_CHECK(ra.sel_kept == kp && rb.sel_kept == kp && ra.sel_ng == ng &&
                 rb.sel_ng == ng && !memcmp(rdst_a + roff, rdst, n * esz2) &&
                 !memcmp(rdst_b + (roff ? 4 : 0), rdst, n * esz2) &&
                 !memcmp(rka, rk, rc * 4) && !memcmp(rkb, rk, rc * 4) &&
                 !memcmp(ria, ri, rc * 4) && !memcmp(rib, ri, rc * 4),
             "%s mass_bins' select rider %s n=%zu", name, dn, n);
    uint32_t mk = s->max_key(msrc, dt, n, NULL);
    TU_CHECK(
        ra.max_key == mk && rb.max_key == mk && ra.max_min == wmin && rb.max_min == wmin,
        "%s mass_bins' max rider %s n=%zu", name, dn, n);
  }
  static uint64_t ref[LLMK__TKP_MBINS];
  static u128 mref[LLMK__TKP_MBINS];
  memset(ref, 0, sizeof ref);
  memset(mref, 0, sizeof mref);
  bool bins_ok = true;
  for (size_t i = 0; i < n; i++) {
    if (w[i] < xmin) continue;
    float e = llmk__exp_nonpos_fma(w[i] - max);
    uint32_t u;
    memcpy(&u, &e, 4);
    int bin = llmk__tkp_ebin(u);
    ref[bin] += llmk__tkp_eval(u);
    mref[bin] += llmk__mass_of(e);
    bins_ok = bins_ok && bin >= 0 && bin <= LLMK__TKP_MB_TOP &&
              (bin == LLMK__TKP_MB_TOP) == (e == 1.0f);
  }
  TU_CHECK(bins_ok, "%s mass bins of %s n=%zu: out of range, or e == 1 not on top", name,
           dn, n);
  bool same = true;
  for (int d = 0; d < LLMK__TKP_MBINS; d++) {
    uint64_t a = 0, b = 0;
    for (int q = 0; q < 4; q++) {
      a += tba[q * LLMK__TKP_MB_STRIDE + d];
      b += tbb[q * LLMK__TKP_MB_STRIDE + d];
    }
    same =
        same && a == b && a == ref[d] && ((u128)a << llmk__tkp_ebin_shift(d)) == mref[d];
  }
  TU_CHECK(same, "%s mass_bins %s n=%zu%s", name, dn, n,
           rider && ra.src_dense ? " (dense)" : "");
}

static void check_isa(const llmk__tkp_kernels *k, const char *name) {
  const llmk__tkp_kernels *s = &llmk__tkp_kernels_scalar;
  enum { N = 9000 };
  static float x[N], w[N];
  static uint32_t ka[N], kb[N], kw[N], oa[N], ob[N];
  static uint16_t ba[N], bb[N], h[N];
  static uint64_t ma[N], mb[N];
  for (int rep = 0; rep < 300; rep++) {
    /* every short length; a few rows longer than two of the SIMD passes' chunks of 4096
     * entries */
    size_t n = rep < 100   ? (size_t)rep
               : rep < 288 ? (size_t)tu_rand_range(0, 1100)
                           : (size_t)tu_rand_range(2 * 4096 + 1, N);
    bool finite = rep % 3 == 0; /* masses need rows without NaN / +inf */
    for (size_t i = 0; i < n; i++) {
      x[i] = rand_value();
      if (finite && !(x[i] < INFINITY)) x[i] = -INFINITY;
      if (rep % 6 == 3) /* within 27 of the largest (dense), with ties */
        x[i] = tu_rand_range(0, 7) ? (float)((tu_rand_unit() - 0.5) * 26.9)
                                   : (float)tu_rand_range(-3, 3);
    }
    uint32_t maxa = s->keys(x, n, ka), maxb = k->keys(x, n, kb);
    TU_CHECK(maxa == maxb && !memcmp(ka, kb, n * 4), "%s keys n=%zu", name, n);
    if (k->widen_keys)
      for (int dt = 0; dt < 2; dt++) {
        llmk_dtype d = dt ? LLMK_BF16 : LLMK_F16;
        static float ra[N], rb[N];
        for (size_t i = 0; i < n; i++) h[i] = (uint16_t)tu_rand_u64();
        llmk_convert(ra, LLMK_F32, h, d, n);
        uint32_t mk = s->keys(ra, n, oa);
        uint32_t mw = k->widen_keys(h, d, rb, ob, n);
        TU_CHECK(mk == mw && !memcmp(ra, rb, n * 4) && !memcmp(oa, ob, n * 4),
                 "%s widen_keys %s n=%zu", name, dt ? "bf16" : "f16", n);
      }
    for (int di = 0; di < 3;
         di++) { /* the row in each dtype, and 16-bit rows of any bits */
      llmk_dtype dt = dtypes[di];
      const void *src = x;
      if (dt != LLMK_F32) {
        if (finite)
          llmk_convert(h, dt, x, LLMK_F32, n);
        else
          for (size_t i = 0; i < n; i++) h[i] = (uint16_t)tu_rand_u64();
        src = h;
      }
      llmk_convert(w, LLMK_F32, src, dt, n);
      for (size_t i = 0; i < n; i++) kw[i] = llmk__key_of(w[i]);
      check_src(k, name, src, dt, w, kw, n, finite);
    }
    if (!finite) continue;
    float max = -INFINITY;
    for (size_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
    if (!(max > -INFINITY)) continue;
    uint32_t min_key = n ? ka[tu_rand_range(0, (int64_t)n - 1)] : 0;
    if (rep % 2) min_key = 0;
    float lo = max - 30.0f, scale = 2048.0f / 30.0f;
    for (int with_bins = 0; with_bins < 2; with_bins++) {
      uint64_t tla = 5, tha = 7, tlb = 5, thb = 7;
      s->masses(x, ka, n, max, min_key, lo, scale, ma, with_bins ? ba : NULL, &tla, &tha);
      k->masses(x, ka, n, max, min_key, lo, scale, mb, with_bins ? bb : NULL, &tlb, &thb);
      TU_CHECK(tla == tlb && tha == thb && !memcmp(ma, mb, n * 8) &&
                   (!with_bins || !memcmp(ba, bb, n * 2)),
               "%s masses bins=%d n=%zu", name, with_bins, n);
    }
    if (n) {
      uint16_t bin = ba[tu_rand_range(0, (int64_t)n - 1)];
      static float gxa[N], gxb[N];
      size_t gcap = (size_t)tu_rand_range(0, (int64_t)n);
      size_t ga = s->gather_bin(ba, x, ka, n, bin, gxa, oa, gcap);
      size_t gb = k->gather_bin(ba, x, ka, n, bin, gxb, ob, gcap);
      size_t gm = ga < gcap ? ga : gcap;
      TU_CHECK(ga == gb && !memcmp(gxa, gxb, gm * 4) && !memcmp(oa, ob, gm * 4),
               "%s gather_bin n=%zu", name, n);
    }
  }
}

static void check_table(const void *table) {
  const llmk__tkp_kernels *k = table;
  check_isa(k, llmk_isa_name(k->isa));
}

int main(void) {
  tu_seed(77);
  kl_each(&llmk__tkp_kernel_list, check_table);
  return tu_finish("test_apply_top_k_top_p_kernels");
}
