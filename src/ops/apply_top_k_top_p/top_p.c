/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p: the top-p boundary algorithms: key radix levels over masses
 * (top_p_boundary), a sorted pass over few entries (top_p_sorted), value bins then key
 * radix (top_p_search), and exact mass bins of e = exp(x - max) over the whole row
 * (top_p_bins, which leaves a window of keys to resolve). */

#include <math.h>
#include <string.h>

#include "ops/apply_top_k_top_p/internal.h"

/* Masses of the entries of (x, keys)[0..n) with key >= min_key and the given prefix,
 * binned by the digit of level l; *total (if not NULL) gets the mass of all entries
 * with key >= min_key. */
static void mass_pass(const tkp_plan *pl, const scratch *s, const float *x,
                      const uint32_t *keys, int64_t n, float max, uint32_t min_key, int l,
                      uint32_t prefix, u128 *total) {
  uint32_t pm = llmk__tkp_prefix_mask(l), sh = (uint32_t)llmk__tkp_level_shift[l],
           dm = llmk__tkp_level_mask[l];
  memset(s->mlo, 0, HBINS * 8);
  memset(s->mhi, 0, HBINS * 8);
  memset(s->count, 0, HBINS * 4);
  uint64_t tlo = 0, thi = 0;
  for (int64_t j0 = 0; j0 < n; j0 += CHUNK) {
    size_t c = (size_t)(n - j0 < CHUNK ? n - j0 : CHUNK);
    pl->kern->masses(x + j0, keys + j0, c, max, min_key, 0, 0, s->mass, NULL, &tlo, &thi);
    for (size_t i = 0; i < c; i++) {
      uint32_t key = keys[j0 + (int64_t)i];
      if (key < min_key || (key & pm) != prefix) continue;
      uint32_t d = (key >> sh) & dm;
      s->count[d]++;
      s->mlo[d] += s->mass[i] & 0xffffffffu;
      s->mhi[d] += s->mass[i] >> 32;
    }
  }
  if (total) *total = ((u128)thi << 32) + tlo;
}

/* The top-p boundary over (x, keys)[0..n) (entries with key >= min_key take part),
 * `below` being the mass of the entries smaller than all of them: the key v and count c
 * such that the entries below v and the c lowest-index entries equal to v are exactly
 * those with cumulative mass <= target, smallest first. After the first level, the
 * candidates of the chosen bin are gathered when they fit, so the later levels look at
 * them only. */
boundary llmk__tkp_top_p_boundary(const tkp_plan *pl, const scratch *s, const float *x,
                                  const uint32_t *keys, int64_t n, float max,
                                  uint32_t min_key, uint32_t max_key, int64_t n_max,
                                  u128 target, u128 below) {
  uint32_t prefix = 0;
  boundary b = {max_key, n_max - 1};
  for (int l = 0; l < 3; l++) {
    u128 total;
    mass_pass(pl, s, x, keys, n, max, min_key, l, prefix, l == 0 ? &total : NULL);
    if (l == 0 && below + total <= target)
      return b; /* p == 0: only the last maximum stays */
    uint32_t sh = (uint32_t)llmk__tkp_level_shift[l], dm = llmk__tkp_level_mask[l];
    uint32_t d = 0;
    for (;; d++) {
      u128 m = ((u128)s->mhi[d] << 32) + s->mlo[d];
      if (s->count[d] && below + m > target) break;
      below += m;
      if (d == dm) return b; /* not reached for consistent sums */
    }
    prefix |= d << sh;
    if (l == 2) {
      /* one value: count[d] entries of equal mass */
      u128 m = ((u128)s->mhi[d] << 32) + s->mlo[d], each = m / s->count[d];
      int64_t c = each == 0 ? s->count[d] : (int64_t)((target - below) / each);
      if (c > (int64_t)s->count[d]) c = s->count[d];
      b.key = prefix;
      b.masked_in_group = prefix == max_key && c > n_max - 1 ? n_max - 1 : c;
      return b;
    }
    if (l == 0 && s->count[d] < CAND_CAP && x != s->bx) {
      int64_t c = 0;
      for (int64_t j = 0; j < n; j++) {
        s->bx[c] = x[j];
        s->bk[c] = keys[j];
        c += keys[j] >= min_key && (keys[j] >> 21) == d;
      }
      x = s->bx;
      keys = s->bk;
      n = c;
    }
  }
  return b;
}

/* floor(thr * Z) for thr = 1 - p in f32, exactly. */
u128 llmk__tkp_scaled_target(float thr, u128 Z) {
  if (thr <= 0.0f) return 0;
  int e;
  float m = frexpf(thr, &e);             /* thr = m * 2^e, m in [0.5, 1) */
  uint64_t mi = (uint64_t)(m * 0x1p24f); /* exact: 24 bits */
  int shift = 24 - e;                    /* thr = mi * 2^-shift, shift >= 24 */
  u128 prod = (u128)mi * Z;              /* < 2^24 * 2^96 */
  return shift >= 128 ? 0 : prod >> shift;
}

/* pa[0..n) (positions into keys) sorted by key: by insertion for a few, else by an LSD
 * radix sort ping-ponging with pb; returns the sorted array (pa or pb) */
static uint32_t *sort_positions(const scratch *s, const uint32_t *keys, int64_t n,
                                uint32_t kmin, uint32_t kmax, uint32_t *pa,
                                uint32_t *pb) {
  if (n <= 64) { /* not 2048-bin passes for a few (top-k's survivors) */
    for (int64_t i = 1; i < n; i++) {
      uint32_t v = pa[i], kv = keys[v];
      int64_t j = i;
      for (; j > 0 && keys[pa[j - 1]] > kv; j--) pa[j] = pa[j - 1];
      pa[j] = v;
    }
    return pa;
  }
  for (uint32_t sh = 0; sh < 32 && (uint64_t)(kmax - kmin) >> sh; sh += 11) {
    memset(s->count, 0, (HBINS + 1) * 4);
    for (int64_t i = 0; i < n; i++)
      s->count[((keys[pa[i]] - kmin) >> sh & (HBINS - 1)) + 1]++;
    for (int d = 1; d <= HBINS; d++) s->count[d] += s->count[d - 1];
    for (int64_t i = 0; i < n; i++)
      pb[s->count[(keys[pa[i]] - kmin) >> sh & (HBINS - 1)]++] = pa[i];
    uint32_t *t = pa;
    pa = pb;
    pb = t;
  }
  return pa;
}

/* The top-p boundary among n <= CAND_CAP entries given by their keys (none NaN, none
 * above max_key), `below` being the mass of all smaller survivors: their masses summed
 * in key order until the sum passes target (or, with thr > 0, floor(thr * the total mass
 * of below and these)). Many entries are first binned by the top 8 bits of their keys'
 * range, with each bin's exact mass, and only the bin where the sum passes target is
 * sorted. Values go to s->bx, masses to s->cmass. */
boundary llmk__tkp_top_p_sorted(const tkp_plan *pl, const scratch *s,
                                const uint32_t *keys, int64_t n, float max,
                                uint32_t max_key, u128 target, u128 below, float thr,
                                uint32_t *pa, uint32_t *pb) {
  int64_t n_max = 0;
  uint32_t kmin = UINT32_MAX, kmax = 0;
  for (int64_t i = 0; i < n; i++) {
    s->bx[i] = llmk__value_of_key(keys[i]);
    n_max += keys[i] == max_key;
    kmin = keys[i] < kmin ? keys[i] : kmin;
    kmax = keys[i] > kmax ? keys[i] : kmax;
  }
  boundary b = {max_key, n_max - 1}; /* nothing crosses: only the last maximum stays */
  uint64_t tl = 0, th = 0;
  pl->kern->masses(s->bx, keys, (size_t)n, max, 0, 0, 0, s->cmass, NULL, &tl, &th);
  if (thr > 0.0f) target = llmk__tkp_scaled_target(thr, below + ((u128)th << 32) + tl);
  u128 cum = below;
  int64_t m = 0;
  if (n <= 64) {
    for (int64_t i = 0; i < n; i++) pa[i] = (uint32_t)i;
    m = n;
  } else {
    enum { D = 256 };
    int sh = 0;
    while (((uint64_t)(kmax - kmin) >> sh) >= D) sh++;
    u128 dm[D];
    memset(dm, 0, sizeof dm);
    for (int64_t i = 0; i < n; i++) dm[(keys[i] - kmin) >> sh] += s->cmass[i];
    uint32_t d = 0; /* cum <= target here, so an empty bin cannot be the crossing */
    for (; d < D; d++) {
      if (cum + dm[d] > target) break;
      cum += dm[d];
    }
    if (d == D) return b;
    uint64_t lo = (uint64_t)kmin + ((uint64_t)d << sh), hi = lo + ((uint64_t)1 << sh) - 1;
    /* the bin's entries, in order: their positions to pa (keys to pb, unused) */
    m = (int64_t)pl->kern->gather(s->bx, LLMK_F32, (size_t)n, (uint32_t)lo,
                                  hi > UINT32_MAX ? UINT32_MAX : (uint32_t)hi, 0, pb, pa,
                                  CAND_CAP);
  }
  const uint32_t *o = sort_positions(s, keys, m, kmin, kmax, pa, pb);
  for (int64_t i = 0; i < m;) { /* one group of equal keys at a time */
    uint32_t k = keys[o[i]];
    uint64_t w = s->cmass[o[i]];
    int64_t j = i;
    while (j < m && keys[o[j]] == k) j++;
    if (cum + (u128)w * (uint64_t)(j - i) > target) {
      int64_t c = (int64_t)((target - cum) / w); /* w > 0 here: the first c are masked */
      b.key = k;
      b.masked_in_group = k == max_key && c > n_max - 1 ? n_max - 1 : c;
      return b;
    }
    cum += (u128)w * (uint64_t)(j - i);
    i = j;
  }
  return b;
}

/* The top-p boundary for threshold thr = 1 - p. A first level bins entries linearly by
 * value over [max - 104, max] (below that exp is 0): unlike key digits, which crowd most
 * logits into a few bins, this spreads them, so the chosen bin is small enough to gather;
 * the exact boundary inside it comes from key radix levels over those candidates only. */
typedef struct mass_job {
  const tkp_plan *pl;
  const scratch *ps;
  const float *x;
  const uint32_t *keys;
  float max, lo, scale;
  uint32_t min_key, bin;
  uint16_t *bins; /* [n]: value bins, written by mass_hist_part */
  float *dx;      /* no team: gather straight into these (the caller's bx/bk) */
  uint32_t *dk;
  uint64_t tlo[MAX_PARTS], thi[MAX_PARTS];
  int64_t count[MAX_PARTS];
} mass_job;

/* The value-bin histogram of masses over [a, b), into the part's own 128-bit sums (laid
 * over mlo/mhi); the bins of the entries go to j->bins. */
static void mass_hist_part(void *arg, int part, int64_t a, int64_t b) {
  mass_job *j = arg;
  const scratch *s = &j->ps[part];
  /* two interleaved histograms (the second over cmass, free here): neighbours often share
   * a bin, and one array would make each add wait for the previous store */
  u128 *acc = (u128 *)(void *)s->mlo, *acc2 = (u128 *)(void *)s->cmass;
  memset(acc, 0, (HBINS + 1) * sizeof *acc);
  memset(acc2, 0, (HBINS + 1) * sizeof *acc2);
  uint64_t tlo = 0, thi = 0;
  for (int64_t j0 = a; j0 < b; j0 += CHUNK) {
    size_t c = (size_t)(b - j0 < CHUNK ? b - j0 : CHUNK), i = 0;
    uint16_t *bins = j->bins + j0;
    const uint64_t *mass = s->mass; /* locals: the stores to acc could alias the fields */
    j->pl->kern->masses(j->x + j0, j->keys + j0, c, j->max, j->min_key, j->lo, j->scale,
                        s->mass, bins, &tlo, &thi);
    for (; i + 2 <= c; i += 2) { /* bin HBINS: below min_key */
      acc[bins[i]] += mass[i];
      acc2[bins[i + 1]] += mass[i + 1];
    }
    for (; i < c; i++) acc[bins[i]] += mass[i];
  }
  for (int d = 0; d <= HBINS; d++) acc[d] += acc2[d];
  j->tlo[part] = tlo;
  j->thi[part] = thi;
}

/* The entries of [a, b) in value bin j->bin, in order, into the part's sx/sk. */
static void bin_gather_part(void *arg, int part, int64_t a, int64_t b) {
  mass_job *j = arg;
  const scratch *s = &j->ps[part];
  float *ox = j->dx ? j->dx : s->sx;
  uint32_t *ok = j->dk ? j->dk : s->sk;
  int64_t c = (int64_t)j->pl->kern->gather_bin(j->bins + a, j->x + a, j->keys + a,
                                               (size_t)(b - a), (uint16_t)j->bin, ox, ok,
                                               CAND_CAP);
  j->count[part] = c;
}

boundary llmk__tkp_top_p_search(const tkp_plan *pl, const team *tm, const scratch *s,
                                const float *x, const uint32_t *keys, int64_t n,
                                float max, uint32_t min_key, uint32_t max_key,
                                int64_t n_max, float thr) {
  const float lo = max - 104.0f, scale = (float)(HBINS - 1) / 104.0f;
  /* split over the team only for the whole row (ps[p].sx/sk are then free) */
  const team *t2 = x == s->row ? tm : NULL;
  mass_job mj = {.pl = pl,
                 .ps = t2 ? t2->ps : s,
                 .x = x,
                 .keys = keys,
                 .max = max,
                 .lo = lo,
                 .scale = scale,
                 .min_key = min_key,
                 .bins = s->rowbins};
  llmk__tkp_team_run(t2, n, mass_hist_part, &mj);
  u128 *acc = (u128 *)(void *)s->mlo;
  uint64_t tlo = mj.tlo[0], thi = mj.thi[0];
  for (int p = 1; p < llmk__tkp_team_parts(t2); p++) {
    const u128 *q = (const u128 *)(const void *)t2->ps[p].mlo;
    for (int d = 0; d <= HBINS; d++) acc[d] += q[d];
    tlo += mj.tlo[p];
    thi += mj.thi[p];
  }
  u128 Z = ((u128)thi << 32) + tlo, target = llmk__tkp_scaled_target(thr, Z), below = 0;
  boundary b = {max_key, n_max - 1};
  if (Z <= target) return b; /* p == 0: only the last maximum stays */
  uint32_t d = 0;
  for (;; d++) { /* a bin of mass 0 cannot be where the sum crosses the target */
    if (acc[d] && below + acc[d] > target) break;
    below += acc[d];
    if (d == HBINS - 1) return b; /* not reached for consistent sums */
  }
  /* gather the bin's entries (in index order) and finish with key radix levels */
  mj.bin = d;
  if (!t2) {
    mj.dx = s->bx;
    mj.dk = s->bk;
  }
  llmk__tkp_team_run(t2, n, bin_gather_part, &mj);
  int64_t c = mj.count[0];
  if (t2) {
    c = 0;
    for (int p = 0; p < t2->parts; p++) c += mj.count[p];
    if (c < CAND_CAP) {
      c = 0;
      for (int p = 0; p < t2->parts; p++) {
        memcpy(s->bx + c, t2->ps[p].sx, (size_t)mj.count[p] * 4);
        memcpy(s->bk + c, t2->ps[p].sk, (size_t)mj.count[p] * 4);
        c += mj.count[p];
      }
    }
  }
  if (c >= CAND_CAP) /* a crowded bin: key radix over the whole set */
    return llmk__tkp_top_p_boundary(pl, s, x, keys, n, max, min_key, max_key, n_max,
                                    target, 0);
  /* the mass of the bins below is known: key radix levels over the bin's entries */
  return llmk__tkp_top_p_boundary(pl, s, s->bx, s->bk, c, max, min_key, max_key, n_max,
                                  target, below);
}

/* Top-p over a whole row by exact mass bins: one pass adds every entry's mass to its
 * bin of e = exp(x - max) (mass_bins; the sums are exact), which gives the exact total,
 * the target, and the bin where the cumulative mass crosses it with the exact mass below
 * that bin. The bin is a range of keys, found by bisection (e is monotone in x); the
 * boundary among its entries is left to llmk__tkp_resolve_window, which gathers them,
 * possibly while writing the row. Entries below min_key (top-k) have no mass. Returns
 * false, having decided nothing, for rows too long for 32-bit indices. */
enum { MB = LLMK__TKP_MBINS };
_Static_assert(MB_TABLE_BYTES <= MLO_BYTES, "the mass-bin tables fit in mlo + mhi");

typedef struct mbin_job {
  const tkp_plan *pl;
  const scratch *ps;
  const rowctx *rc;
  float max, xmin;
  bool dense; /* every entry within LLMK__TKP_DENSE_D of max (see llmk__tkp_rider) */
} mbin_job;

static void mass_bins_part(void *arg, int part, int64_t a, int64_t b) {
  mbin_job *j = arg;
  uint64_t *tab = j->ps[part].mlo; /* 4 tables over mlo and mhi */
  memset(tab, 0, MB_TABLE_BYTES);
  llmk__tkp_rider rd = {.src_dense = j->dense};
  j->pl->kern->mass_bins(llmk__tkp_src_at(j->rc, a), j->rc->dt, (size_t)(b - a), j->max,
                         j->xmin, tab, &rd);
}

/* the bits of the smallest e in bin (1 <= bin <= LLMK__TKP_MB_TOP): the inverse of the
 * kernels' llmk__tkp_ebin, which only the op needs */
static inline uint32_t ebin_lo_bits(int bin) {
  return (uint32_t)(bin + 1024) << 19;
}

/* The mass bin of an entry of key k (not NaN) when the largest is max */
static int mass_bin_of_key(uint32_t k, float max) {
  return llmk__tkp_ebin(
      llmk__tkp_bits(llmk__exp_nonpos_fma(llmk__value_of_key(k) - max)));
}

/* The smallest key in [LLMK__KEY_NINF, max_key] whose mass bin is at least bin (that of
 * max_key is). A bisection, over a bracket found by steps that double from the key of
 * max + ln(the bin's smallest e): a few exps rather than 31 (each a chain of library fmaf
 * calls here). */
static uint32_t first_key_of_bin(int bin, float max, uint32_t max_key) {
  uint32_t lo = LLMK__KEY_NINF, hi = max_key;
  uint32_t ebits = ebin_lo_bits(bin < 1 ? 1 : bin);
  float elo;
  memcpy(&elo, &ebits, 4);
  float xe = max + logf(elo);
  uint32_t kc = xe == xe ? llmk__key_of(xe) : lo;
  kc = kc < lo ? lo : kc > hi ? hi : kc;
  if (mass_bin_of_key(kc, max) >= bin) { /* downwards, for a key below the bin */
    hi = kc;
    for (uint32_t step = 1; kc - lo > step; step *= 2) {
      uint32_t a = kc - step;
      if (mass_bin_of_key(a, max) < bin) {
        lo = a + 1;
        break;
      }
      hi = kc = a;
    }
  } else { /* upwards, for a key in it */
    lo = kc + 1;
    for (uint32_t step = 1; hi - kc > step; step *= 2) {
      uint32_t c = kc + step;
      if (mass_bin_of_key(c, max) >= bin) {
        hi = c;
        break;
      }
      lo = (kc = c) + 1;
    }
  }
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (mass_bin_of_key(mid, max) >= bin)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* From the mass-bin tables of the team's parts (ps[p].mlo): the boundary when p == 0,
 * else the pending window of r (see llmk__tkp_top_p_bins). */
void llmk__tkp_bins_to_window(const tkp_plan *pl, const team *tm, const scratch *s,
                              const rowctx *rc, float max, uint32_t min_key,
                              uint32_t max_key, float thr, row_result *r) {
  const scratch *ps = tm ? tm->ps : s;
  /* the 16 bins of a binade share its shift: their u64 sums (< 2^56 each) add up first */
  enum { G = 16, NG = MB / G };
  _Static_assert(MB % G == 0 && LLMK__TKP_MB_TOP % G == 0, "binades of 16 bins");
  uint64_t m[MB];
  u128 gm[NG], Z = 0;
  memset(m, 0, sizeof m);
  for (int p = 0; p < llmk__tkp_team_parts(tm); p++)
    for (int t = 0; t < 4; t++) {
      const uint64_t *tab = ps[p].mlo + t * LLMK__TKP_MB_STRIDE;
      for (int d = 0; d < MB; d++) m[d] += tab[d];
    }
  for (int g = 0; g < NG; g++) {
    uint64_t sum = 0;
    for (int d = g * G; d < (g + 1) * G; d++) sum += m[d];
    gm[g] = (u128)sum << llmk__tkp_ebin_shift(g * G);
    Z += gm[g];
  }
  u128 target = llmk__tkp_scaled_target(thr, Z), below = 0;
  if (Z <= target) { /* p == 0: only the last maximum stays */
    r->pb = (boundary){max_key, llmk__tkp_team_count_eq(pl, tm, s, rc, max_key) - 1};
    return;
  }
  /* the first bin below the top one whose mass takes the sum past target */
  int g = 0, d = LLMK__TKP_MB_TOP;
  for (; g < LLMK__TKP_MB_TOP / G; g++) {
    if (gm[g] && below + gm[g] > target) break;
    below += gm[g];
  }
  if (g < LLMK__TKP_MB_TOP / G)
    for (d = g * G;; d++) {
      u128 b = (u128)m[d] << llmk__tkp_ebin_shift(d);
      if (m[d] && below + b > target) break;
      below += b;
    }
  uint32_t lo = first_key_of_bin(d, max, max_key);
  r->pending = true;
  r->win_lo = lo > min_key ? lo : min_key;
  r->win_hi = d == LLMK__TKP_MB_TOP ? max_key : first_key_of_bin(d + 1, max, max_key) - 1;
  r->below = below;
  r->target = target;
}

bool llmk__tkp_top_p_bins(const tkp_plan *pl, const team *tm, const scratch *s,
                          const rowctx *rc, int64_t V, float max, uint32_t min_key,
                          uint32_t max_key, float thr, row_result *r) {
  if ((uint64_t)V > LLMK__TKP_MB_MAX_N) return false;
  mbin_job j = {.pl = pl,
                .ps = tm ? tm->ps : s,
                .rc = rc,
                .max = max,
                .xmin = min_key ? llmk__value_of_key(min_key) : -INFINITY,
                .dense = rc->have_min && rc->min - max >= LLMK__TKP_DENSE_D};
  llmk__tkp_team_run(tm, V, mass_bins_part, &j);
  llmk__tkp_bins_to_window(pl, tm, s, rc, max, min_key, max_key, thr, r);
  return true;
}
