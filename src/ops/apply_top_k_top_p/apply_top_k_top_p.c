/* apply_top_k_top_p (+ min-p, kept counts), the with-sorted variant, and sampling.
 *
 * Per row, without sorting: the row is widened once into an f32 buffer; the k-th
 * largest value is found by radix selection (11, 11 and 10 bits of order-preserving
 * keys); the top-p boundary by the same selection over probability mass instead of
 * counts, masses being exp(x - max) in exact 64-bit fixed point. The boundary is a value
 * v and a count c: entries below v are masked, and so are the c lowest-index entries
 * equal to v, which is what the stable ascending sort of the reference does. */
#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "core/op.h"
#include "core/view.h"
#include "dispatch/dispatch.h"
#include "kernels/convert/convert-elem.h"
#include "kernels/convert/convert.h"
#include "llmk/top_k_top_p.h"

enum { MODE_FILTER, MODE_SORTED, MODE_SAMPLE };

typedef struct tkp_plan {
  const char *op;
  int mode;
  int64_t B, V;
  llmk__view logits, out, p, k, min_p, kept, temperature, seed, offset, ids, sv, si;
  int workers;
  size_t worker_bytes;
  bool stream; /* outputs larger than the caches: written around them */
  const llmk__tkp_kernels *kern;
  const llmk__convert_kernels *cvt; /* widening of f16 / bf16 rows */
} tkp_plan;

/* ---------------------------------------------------------------- scratch */

enum { HBITS = 11, HBINS = 1 << HBITS, CHUNK = 1024, CAND_CAP = 8192 };
/* mlo and mhi, one after the other; also the 4 tables of mass_bins */
#define MB_TABLE_BYTES (4 * LLMK__TKP_MB_STRIDE * 8)
#define MLO_BYTES \
  (MB_TABLE_BYTES > 2 * (HBINS + 1) * 8 ? MB_TABLE_BYTES : 2 * (HBINS + 1) * 8)
_Static_assert(HBINS == LLMK__TKP_BINS, "one bin count");
_Static_assert((HBINS + 1) * 16 <= CAND_CAP * 8, "a u128 histogram fits in cmass");

typedef struct scratch {
  float *row;          /* [V] */
  uint32_t *keys;      /* [V]: llmk__key_of(row[j]) */
  uint16_t *rowbins;   /* [V]: value bins of the top-p search */
  uint64_t *mass;      /* [CHUNK] */
  uint16_t *bins;      /* [CHUNK] */
  uint32_t *count;     /* [HBINS] */
  uint64_t *mlo, *mhi; /* [HBINS] each */
  uint32_t *ckey;      /* [CAND_CAP] */
  uint32_t *cidx;      /* [CAND_CAP]: indices of gathered entries */
  uint64_t *cmass;     /* [CAND_CAP]: also the second histogram of mass_hist_part */
  float *sx, *bx;      /* [CAND_CAP]: survivors of top-k; top-p boundary candidates */
  uint32_t *sk, *bk;   /* [CAND_CAP]: their keys */
  uint8_t *seen;       /* [V] (with_sorted: index check) */
} scratch;

static size_t worker_bytes(int64_t V) {
  size_t b = (size_t)V * 10 + CHUNK * (8 + 2) + (HBINS + 1) * 4 + MLO_BYTES +
             CAND_CAP * (4 + 4 + 8 + 16) + (size_t)V + 64;
  return (b + 63) / 64 * 64;
}

static scratch scratch_at(void *base) {
  scratch s;
  char *p = base;
  s.mass = (uint64_t *)(void *)p;
  p += CHUNK * 8;
  s.mlo = (uint64_t *)(void *)p;
  p += (HBINS + 1) * 8;
  s.mhi = (uint64_t *)(void *)p;
  p += MLO_BYTES - (HBINS + 1) * 8;
  s.cmass = (uint64_t *)(void *)p;
  p += CAND_CAP * 8;
  s.count = (uint32_t *)(void *)p;
  p += (HBINS + 1) * 4;
  s.bins = (uint16_t *)(void *)p;
  p += CHUNK * 2;
  s.ckey = (uint32_t *)(void *)p;
  p += CAND_CAP * 4;
  s.cidx = (uint32_t *)(void *)p;
  p += CAND_CAP * 4;
  s.sx = (float *)(void *)p;
  p += CAND_CAP * 4;
  s.bx = (float *)(void *)p;
  p += CAND_CAP * 4;
  s.sk = (uint32_t *)(void *)p;
  p += CAND_CAP * 4;
  s.bk = (uint32_t *)(void *)p;
  p += CAND_CAP * 4;
  s.row = (float *)(void *)p;
  s.keys = NULL; /* set by scratch_for(): they follow the row */
  s.seen = NULL;
  return s;
}

/* ------------------------------------------------------------------ teams */

/* One row split over threads: `parts` contiguous ranges, each with its own scratch for
 * partial histograms and gathers; ps[0] also holds the row. Partial results are integers
 * (counts, fixed-point masses) or ordered gathers, merged in part order, so a row gives
 * the same result split or not. */
typedef struct team {
  llmk_context *ctx;
  int parts;
  const scratch *ps;
} team;

typedef void (*part_fn)(void *arg, int part, int64_t a, int64_t b);

typedef struct part_job {
  int64_t n;
  part_fn fn;
  void *arg;
} part_job;

static void part_task(void *job_arg, int ith, int nth) {
  const part_job *j = job_arg;
  int64_t a, b;
  llmk__split(j->n, nth, ith, &a, &b);
  j->fn(j->arg, ith, a, b);
}

static inline int team_parts(const team *tm) {
  return tm ? tm->parts : 1;
}

/* fn over [0, n) split into the team's parts (one part, [0, n), without a team) */
static void team_run(const team *tm, int64_t n, part_fn fn, void *arg) {
  if (team_parts(tm) <= 1) {
    fn(arg, 0, 0, n);
    return;
  }
  part_job j = {n, fn, arg};
  llmk__parallel_run(tm->ctx, tm->parts, part_task, &j);
}

enum { MAX_PARTS = LLMK__MAX_TASKS };
/* rows at least this long are split over threads when there are fewer rows than threads
 */
#define SPLIT_MIN_V 16384

typedef struct step_job {
  const tkp_plan *pl;
  const scratch *ps; /* per-part scratch: ps[part] (ps[0] when there is no team) */
  const llmk__view *v;
  int64_t r;
  float *row;
  uint32_t *keys;
  uint32_t key;
  float t; /* temperature */
  const struct rowctx *rc;
  uint32_t u32[MAX_PARTS];
  int64_t i64[MAX_PARTS];
  float f32[MAX_PARTS];
} step_job;

static const scratch *part_scratch(const step_job *j, int part) {
  return &j->ps[part];
}

/* Widens row r of v into row[a, b) and computes its keys; u32[part] = largest key. */
static void load_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  const char *base = llmk__view_at(j->v, j->r, 0);
  size_t esz = llmk_dtype_size(j->v->dtype), step = (size_t)j->v->s1 * esz;
  if (j->v->dtype == LLMK_F32 && j->v->s1 == 1) {
    if ((const char *)j->row != base)
      memcpy(j->row + a, base + (size_t)a * 4, (size_t)(b - a) * 4);
  } else if (j->v->s1 == 1 && j->pl->kern->widen_keys) {
    j->u32[part] = b > a
                       ? j->pl->kern->widen_keys(base + (size_t)a * 2, j->v->dtype,
                                                 j->row + a, j->keys + a, (size_t)(b - a))
                       : 0;
    return;
  } else if (j->v->s1 == 1) /* f16 / bf16: the SIMD widening of llmk_convert */
    (j->v->dtype == LLMK_F16 ? j->pl->cvt->f16_to_f32 : j->pl->cvt->bf16_to_f32)(
        j->row + a, base + (size_t)a * 2, (size_t)(b - a));
  else
    for (int64_t i = a; i < b; i++)
      j->row[i] = llmk__load_f32(base + (size_t)i * step, j->v->dtype);
  j->u32[part] = b > a ? j->pl->kern->keys(j->row + a, (size_t)(b - a), j->keys + a) : 0;
}

/* A row as the whole-row kernels read it: contiguous values of dtype dt (the logits'
 * row where it is, or its f32 copy in s->row). The f32 row and keys in s->row / s->keys
 * are made only for the steps that need them (need_keys); the largest key is found when
 * first needed (row_max_key), or comes from the top-k candidates. */
typedef struct rowctx {
  const void *src;
  llmk_dtype dt;
  size_t esz;
  const llmk__view *v; /* the row r of v, for need_keys */
  int64_t r;
  bool have_keys, have_max, have_min;
  uint32_t max_key;
  float min; /* the smallest value (have_min) */
} rowctx;

static inline const void *src_at(const rowctx *rc, int64_t i) {
  return (const char *)rc->src + (size_t)i * rc->esz;
}

static void count_eq_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  j->i64[part] = (int64_t)j->pl->kern->count_eq(src_at(j->rc, a), j->rc->dt,
                                                (size_t)(b - a), j->key);
}

static void gather_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  const scratch *ps = part_scratch(j, part);
  j->i64[part] =
      (int64_t)j->pl->kern->gather(src_at(j->rc, a), j->rc->dt, (size_t)(b - a), j->key,
                                   UINT32_MAX, (uint32_t)a, ps->sk, ps->cidx, CAND_CAP);
}

static void max_key_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  j->u32[part] =
      j->pl->kern->max_key(src_at(j->rc, a), j->rc->dt, (size_t)(b - a), &j->f32[part]);
}

/* Row r of v into s->row / s->keys; returns the largest key. */
static uint32_t team_load(const tkp_plan *pl, const team *tm, const scratch *s,
                          const llmk__view *v, int64_t r) {
  step_job j = {
      .pl = pl, .ps = tm ? tm->ps : s, .v = v, .r = r, .row = s->row, .keys = s->keys};
  team_run(tm, pl->V, load_part, &j);
  uint32_t m = 0;
  for (int p = 0; p < team_parts(tm); p++) m = j.u32[p] > m ? j.u32[p] : m;
  return m;
}

static void need_keys(const tkp_plan *pl, const team *tm, const scratch *s, rowctx *rc) {
  if (rc->have_keys) return;
  rc->max_key = team_load(pl, tm, s, rc->v, rc->r);
  rc->have_keys = rc->have_max = true;
}

static uint32_t row_max_key(const tkp_plan *pl, const team *tm, const scratch *s,
                            rowctx *rc) {
  if (!rc->have_max) {
    step_job j = {.pl = pl, .ps = tm ? tm->ps : s, .rc = rc};
    team_run(tm, pl->V, max_key_part, &j);
    rc->max_key = 0;
    rc->min = INFINITY;
    for (int p = 0; p < team_parts(tm); p++) {
      rc->max_key = j.u32[p] > rc->max_key ? j.u32[p] : rc->max_key;
      rc->min = j.f32[p] < rc->min ? j.f32[p] : rc->min;
    }
    rc->have_max = rc->have_min = true;
  }
  return rc->max_key;
}

static int64_t team_count_eq(const tkp_plan *pl, const team *tm, const scratch *s,
                             const rowctx *rc, uint32_t key) {
  step_job j = {.pl = pl, .ps = tm ? tm->ps : s, .rc = rc, .key = key};
  team_run(tm, pl->V, count_eq_part, &j);
  int64_t c = 0;
  for (int p = 0; p < team_parts(tm); p++) c += j.i64[p];
  return c;
}

/* The per-part gathers of a team (keys in ps[p].sk, indices in ps[p].cidx) one after the
 * other into okey / oidx, given their counts; returns their total (nothing is copied when
 * it is over cap). oidx may be ps[0].cidx. */
static int64_t join_parts(const team *tm, const int64_t *ng, uint32_t *okey,
                          uint32_t *oidx, int64_t cap) {
  int64_t total = 0;
  for (int p = 0; p < team_parts(tm); p++) total += ng[p];
  if (!tm || total > cap) return total;
  int64_t off = 0;
  for (int p = 0; p < tm->parts; p++) {
    memmove(oidx + off, tm->ps[p].cidx, (size_t)ng[p] * 4);
    memcpy(okey + off, tm->ps[p].sk, (size_t)ng[p] * 4);
    off += ng[p];
  }
  return total;
}

/* The keys >= t of the row, in order, into okey and their indices into oidx (up to cap);
 * returns how many there are. okey is not s->sk (the parts' temporaries). */
static int64_t team_gather_ge(const tkp_plan *pl, const team *tm, const rowctx *rc,
                              uint32_t t, uint32_t *okey, uint32_t *oidx, int64_t cap) {
  if (team_parts(tm) <= 1)
    return (int64_t)pl->kern->gather(rc->src, rc->dt, (size_t)pl->V, t, UINT32_MAX, 0,
                                     okey, oidx, (size_t)cap);
  step_job j = {.pl = pl, .ps = tm->ps, .rc = rc, .key = t};
  team_run(tm, pl->V, gather_part, &j);
  return join_parts(tm, j.i64, okey, oidx, cap);
}

/* ------------------------------------------------------------ selection */

__extension__ typedef unsigned __int128 u128;

/* Level l of the radix: the digit of a key, and the shift/mask that picks it. */
static const int level_shift[3] = {21, 10, 0};
static const uint32_t level_mask[3] = {0x7ff, 0x7ff, 0x3ff};
static inline uint32_t prefix_mask(int l) {
  return l == 0 ? 0 : ~((1u << (level_shift[l - 1])) - 1);
}

/* The k-th largest key of keys[0..V) (1 <= k <= V); hist0 is the histogram of the top
 * digit. Levels after the first look only at the candidates of the chosen bin, kept in
 * the scratch when they fit. */
static uint32_t kth_largest(const scratch *s, int64_t V, int64_t k,
                            const uint32_t *hist0) {
  uint32_t prefix = 0;
  int64_t need = k;
  const uint32_t *keys = s->keys;
  int64_t n = V;
  for (int l = 0; l < 3; l++) {
    uint32_t pm = prefix_mask(l), sh = (uint32_t)level_shift[l], dm = level_mask[l];
    const uint32_t *count = hist0;
    if (l > 0) {
      memset(s->count, 0, HBINS * 4);
      for (int64_t j = 0; j < n; j++)
        if ((keys[j] & pm) == prefix) s->count[(keys[j] >> sh) & dm]++;
      count = s->count;
    }
    uint32_t d = dm;
    for (;; d--) {
      if (count[d] >= need) break;
      need -= count[d];
    }
    prefix |= d << sh;
    if (l == 0 &&
        count[d] <
            CAND_CAP) { /* gather the candidates once (branch-free: one spare slot) */
      int64_t c = 0;
      uint32_t top = prefix;
      for (int64_t j = 0; j < V; j++) {
        s->ckey[c] = keys[j];
        c += (keys[j] >> 21) == (top >> 21);
      }
      keys = s->ckey;
      n = c;
    }
  }
  return prefix;
}

/* The top-p boundary: the key v and count c such that the entries below v and the c
 * lowest-index entries equal to v are exactly those with cumulative mass <= target, in
 * ascending order over the survivors (key >= min_key). Mass of an entry: mass_of(e). */
typedef struct boundary {
  uint32_t key;
  int64_t masked_in_group;
} boundary;

/* The k-th largest of keys[0..n) (1 <= k <= n): a min-heap of the k largest so far, in
 * heap[0..k) (n is at most CAND_CAP, k mostly small). */
static uint32_t select_kth(const uint32_t *keys, int64_t n, int64_t k, uint32_t *heap) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t v = keys[i];
    int64_t j;
    if (i < k) { /* sift up */
      for (j = i; j > 0 && heap[(j - 1) / 2] > v; j = (j - 1) / 2)
        heap[j] = heap[(j - 1) / 2];
    } else if (v > heap[0]) { /* replace the smallest, sift down */
      for (j = 0;;) {
        int64_t c = 2 * j + 1;
        if (c >= k) break;
        if (c + 1 < k && heap[c + 1] < heap[c]) c++;
        if (heap[c] >= v) break;
        heap[j] = heap[c];
        j = c;
      }
    } else {
      continue;
    }
    heap[j] = v;
  }
  return heap[0];
}

/* Top-k for small k: a threshold tau from a sample of the row (runs of consecutive
 * entries spread over it), its rank chosen so that about 2k + 8 V / ns entries of the row
 * lie above it (ns: the sample's size; fewer than k lie above it with a chance of about
 * 1e-7 or less for a row in random order); the caller gathers the entries >= tau (the
 * candidates, in s->ckey / s->cidx), possibly while writing the row, and when there are
 * at least k and at most CAND_CAP of them, the k-th largest is selected among them
 * (filter_row). pivot_tau returns false for rows where the sample would not do. Up to
 * 64 runs rather than 32 halve the candidates for the same odds (B = 1, k = 50: 20-24%
 * less time, in-process A/B). */
enum { RUN = 32, RUNS = 64 };

/* about 1/32 of the row, at most RUNS runs */
static int64_t sample_runs(int64_t V) {
  return V / (32 * RUN) < RUNS ? V / (32 * RUN) : RUNS;
}

static inline int64_t sample_run_at(int64_t V, int64_t runs, int64_t r) {
  return (V - RUN) * r / (runs - 1);
}

/* Asks for the cache lines of the pivot's sample of row r of v (contiguous), which the
 * next row's pivot would otherwise wait for, one miss after another. */
static void prefetch_sample(const llmk__view *v, int64_t r, int64_t V) {
  int64_t runs = sample_runs(V);
  size_t esz = llmk_dtype_size(v->dtype);
  if (runs < 8 || v->s1 != 1) return;
  const char *base = llmk__view_at(v, r, 0);
  for (int64_t q = 0; q < runs; q++)
    for (int64_t j = 0; j < RUN; j += 64 / (int64_t)esz)
      __builtin_prefetch(base + (size_t)(sample_run_at(V, runs, q) + j) * esz);
}

static bool pivot_tau(const tkp_plan *pl, const scratch *s, const rowctx *rc, int64_t V,
                      int64_t k, uint32_t *tau) {
  int64_t runs = sample_runs(V), ns = 0;
  if (k > (CAND_CAP - 1) / 4 || runs < 8 || V > UINT32_MAX) return false;
  for (int64_t r = 0; r < runs; r++, ns += RUN) {
    int64_t at = sample_run_at(V, runs, r);
    if (rc->dt == LLMK_F32)
      pl->kern->keys((const float *)src_at(rc, at), RUN, s->bk + ns);
    else
      for (int64_t j = 0; j < RUN; j++)
        s->bk[ns + j] = llmk__key_of(llmk__load_f32(src_at(rc, at + j), rc->dt));
  }
  int64_t rank = 2 * k * ns / V + 8; /* about 2k + 8 V / ns entries of the row above it */
  *tau = select_kth(s->bk, ns, rank, s->sk);
  return true;
}

/* Masses of the entries of (x, keys)[0..n) with key >= min_key and the given prefix,
 * binned by the digit of level l; *total (if not NULL) gets the mass of all entries
 * with key >= min_key. */
static void mass_pass(const tkp_plan *pl, const scratch *s, const float *x,
                      const uint32_t *keys, int64_t n, float max, uint32_t min_key, int l,
                      uint32_t prefix, u128 *total) {
  uint32_t pm = prefix_mask(l), sh = (uint32_t)level_shift[l], dm = level_mask[l];
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
static boundary top_p_boundary(const tkp_plan *pl, const scratch *s, const float *x,
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
    uint32_t sh = (uint32_t)level_shift[l], dm = level_mask[l];
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
static u128 scaled_target(float thr, u128 Z) {
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
static boundary top_p_sorted(const tkp_plan *pl, const scratch *s, const uint32_t *keys,
                             int64_t n, float max, uint32_t max_key, u128 target,
                             u128 below, float thr, uint32_t *pa, uint32_t *pb) {
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
  if (thr > 0.0f) target = scaled_target(thr, below + ((u128)th << 32) + tl);
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

static boundary top_p_search(const tkp_plan *pl, const team *tm, const scratch *s,
                             const float *x, const uint32_t *keys, int64_t n, float max,
                             uint32_t min_key, uint32_t max_key, int64_t n_max,
                             float thr) {
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
  team_run(t2, n, mass_hist_part, &mj);
  u128 *acc = (u128 *)(void *)s->mlo;
  uint64_t tlo = mj.tlo[0], thi = mj.thi[0];
  for (int p = 1; p < team_parts(t2); p++) {
    const u128 *q = (const u128 *)(const void *)t2->ps[p].mlo;
    for (int d = 0; d <= HBINS; d++) acc[d] += q[d];
    tlo += mj.tlo[p];
    thi += mj.thi[p];
  }
  u128 Z = ((u128)thi << 32) + tlo, target = scaled_target(thr, Z), below = 0;
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
  team_run(t2, n, bin_gather_part, &mj);
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
    return top_p_boundary(pl, s, x, keys, n, max, min_key, max_key, n_max, target, 0);
  /* the mass of the bins below is known: key radix levels over the bin's entries */
  return top_p_boundary(pl, s, s->bx, s->bk, c, max, min_key, max_key, n_max, target,
                        below);
}

/* ---------------------------------------------------------------- one row */

typedef struct row_result {
  uint32_t t_key; /* top-k threshold key (0: none) */
  bool have_p;
  boundary pb; /* top-p boundary */
  float min_e; /* min-p: keep e >= min_e (0: none) */
  float max;
  int64_t tie_cut; /* entries equal to pb.key with an index below this are masked */
  /* whole-row top-p still to be resolved among the entries with win_lo <= key <= win_hi
   * (resolve_window), below being the mass of the smaller survivors */
  bool pending;
  uint32_t win_lo, win_hi;
  u128 below, target;
  /* >= 0: s->ckey / s->cidx hold the ncand entries that top-k may keep, in index order */
  int64_t ncand;
} row_result;

/* Top-p over a whole row by exact mass bins: one pass adds every entry's mass to its
 * bin of e = exp(x - max) (mass_bins; the sums are exact), which gives the exact total,
 * the target, and the bin where the cumulative mass crosses it with the exact mass below
 * that bin. The bin is a range of keys, found by bisection (e is monotone in x); the
 * boundary among its entries is left to resolve_window, which gathers them, possibly
 * while writing the row. Entries below min_key (top-k) have no mass. Returns false,
 * having decided nothing, for rows too long for 32-bit indices. */
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
  j->pl->kern->mass_bins(src_at(j->rc, a), j->rc->dt, (size_t)(b - a), j->max, j->xmin,
                         tab, &rd);
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
  uint32_t ebits = llmk__tkp_ebin_lo_bits(bin < 1 ? 1 : bin);
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
 * else the pending window of r (see top_p_bins). */
static void bins_to_window(const tkp_plan *pl, const team *tm, const scratch *s,
                           const rowctx *rc, float max, uint32_t min_key,
                           uint32_t max_key, float thr, row_result *r) {
  const scratch *ps = tm ? tm->ps : s;
  /* the 16 bins of a binade share its shift: their u64 sums (< 2^56 each) add up first */
  enum { G = 16, NG = MB / G };
  _Static_assert(MB % G == 0 && LLMK__TKP_MB_TOP % G == 0, "binades of 16 bins");
  uint64_t m[MB];
  u128 gm[NG], Z = 0;
  memset(m, 0, sizeof m);
  for (int p = 0; p < team_parts(tm); p++)
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
  u128 target = scaled_target(thr, Z), below = 0;
  if (Z <= target) { /* p == 0: only the last maximum stays */
    r->pb = (boundary){max_key, team_count_eq(pl, tm, s, rc, max_key) - 1};
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

static bool top_p_bins(const tkp_plan *pl, const team *tm, const scratch *s,
                       const rowctx *rc, int64_t V, float max, uint32_t min_key,
                       uint32_t max_key, float thr, row_result *r) {
  if ((uint64_t)V > LLMK__TKP_MB_MAX_N) return false;
  mbin_job j = {.pl = pl,
                .ps = tm ? tm->ps : s,
                .rc = rc,
                .max = max,
                .xmin = min_key ? llmk__value_of_key(min_key) : -INFINITY,
                .dense = rc->have_min && rc->min - max >= LLMK__TKP_DENSE_D};
  team_run(tm, V, mass_bins_part, &j);
  bins_to_window(pl, tm, s, rc, max, min_key, max_key, thr, r);
  return true;
}

/* The index after the last masked member of the top-p tie group (its first c members). */
static void find_tie_cut(const tkp_plan *pl, const rowctx *rc, int64_t V, row_result *r) {
  r->tie_cut = 0;
  if (!r->have_p || r->pb.masked_in_group <= 0) return;
  size_t j = pl->kern->find_eq(rc->src, rc->dt, (size_t)V, r->pb.key,
                               (size_t)r->pb.masked_in_group);
  if (j < (size_t)V) r->tie_cut = (int64_t)j + 1;
}

/* Filters row rc; the decisions go to r. */
/* The index after the c-th (1-based) entry of key `key` among n gathered ones (keys,
 * indices, in index order), or 0 when there are fewer. */
static int64_t cut_after(const uint32_t *keys, const uint32_t *idx, int64_t n,
                         uint32_t key, int64_t c) {
  for (int64_t i = 0, seen = 0; i < n && c > 0; i++)
    if (keys[i] == key && ++seen == c) return (int64_t)idx[i] + 1;
  return 0;
}

/* Filters row rc; the decisions go to r. With top-k, ncand >= 0 is the number of
 * candidates of the pivot (keys >= its threshold, in s->ckey / s->cidx), -1 when there
 * are none; on return r->ncand >= 0 when s->ckey / s->cidx hold every entry that top-k
 * keeps (the pivot's candidates, or those gathered here). */
static void filter_row(const tkp_plan *pl, const team *tm, const scratch *s, rowctx *rc,
                       int64_t V, bool has_k, int64_t k, bool has_p, float p,
                       bool has_minp, float min_p, int64_t ncand, row_result *r) {
  bool topk = has_k && k >= 1 && k <= V - 1;
  memset(r, 0, sizeof *r);
  r->ncand = -1;
  uint32_t t = 0;
  if (topk && ncand >= k && ncand <= CAND_CAP) {
    t = select_kth(s->ckey, ncand, k, s->sk);
    rc->max_key = 0; /* the largest is among them */
    for (int64_t i = 0; i < ncand; i++)
      rc->max_key = s->ckey[i] > rc->max_key ? s->ckey[i] : rc->max_key;
    rc->have_max = true;
    r->ncand = ncand;
  } else if (topk) {
    need_keys(pl, tm, s, rc);
    /* four interleaved histograms: logits crowd into a few bins, and one counter would
     * make every increment wait for the previous one */
    uint32_t hist0[HBINS],
        *h4 = (uint32_t *)(void *)s->mlo; /* 4 x HBINS fit in mlo+mhi */
    memset(h4, 0, 4 * HBINS * 4);
    int64_t j = 0;
    for (; j + 4 <= V; j += 4) {
      h4[s->keys[j] >> 21]++;
      h4[HBINS + (s->keys[j + 1] >> 21)]++;
      h4[2 * HBINS + (s->keys[j + 2] >> 21)]++;
      h4[3 * HBINS + (s->keys[j + 3] >> 21)]++;
    }
    for (; j < V; j++) h4[s->keys[j] >> 21]++;
    for (int d = 0; d < HBINS; d++)
      hist0[d] = h4[d] + h4[HBINS + d] + h4[2 * HBINS + d] + h4[3 * HBINS + d];
    t = kth_largest(s, V, k, hist0);
  }
  if (topk) {
    if (t != LLMK__KEY_NAN) r->t_key = t; /* a NaN threshold masks nothing (s < NaN) */
  }
  if (!(has_p || (has_minp && min_p > 0.0f))) { /* the largest matters only if known */
    if (rc->have_max) r->max = llmk__value_of_key(rc->max_key);
    return;
  }
  uint32_t max_key = row_max_key(pl, tm, s, rc);
  r->max = llmk__value_of_key(max_key);
  /* top-p and min-p need a distribution: a finite largest survivor */
  bool finite = max_key < LLMK__KEY_PINF && max_key > LLMK__KEY_NINF;
  if (has_p && finite) {
    float thr = 1.0f - p;
    r->have_p = true;
    if (thr <= 0.0f) {
      /* p == 1: only entries of probability exactly 0 go (exp underflows to 0) */
      r->have_p = false;
      r->min_e = 0x1p-149f;
    } else {
      uint32_t min_key = r->t_key;
      if (min_key > 0 && r->ncand < 0) { /* top-k's survivors, when few */
        int64_t c = team_gather_ge(pl, tm, rc, min_key, s->ckey, s->cidx, CAND_CAP);
        r->ncand = c <= CAND_CAP ? c : -1;
      }
      if (min_key > 0 && r->ncand >= 0) { /* top-k left few entries: work on them alone */
        int64_t n = 0;
        for (int64_t i = 0; i < r->ncand; i++)
          if (s->ckey[i] >= min_key) s->sk[n++] = s->ckey[i];
        r->pb = top_p_sorted(pl, s, s->sk, n, r->max, max_key, 0, 0, thr,
                             (uint32_t *)(void *)s->sx, s->bk);
        r->tie_cut =
            cut_after(s->ckey, s->cidx, r->ncand, r->pb.key, r->pb.masked_in_group);
        if (has_minp && finite && min_p > 0.0f && min_p > r->min_e) r->min_e = min_p;
        return;
      }
      if (!top_p_bins(pl, tm, s, rc, V, r->max, min_key, max_key, thr, r)) {
        need_keys(pl, tm, s, rc);
        int64_t n_max = team_count_eq(pl, tm, s, rc, max_key);
        r->pb = top_p_search(pl, tm, s, s->row, s->keys, V, r->max, min_key, max_key,
                             n_max, thr);
      }
    }
  }
  if (has_minp && finite && min_p > 0.0f && min_p > r->min_e) r->min_e = min_p;
  if (!r->pending) find_tie_cut(pl, rc, V, r);
}

/* Whether entry i (value x, key) is kept. */
static inline bool keep_entry(const row_result *r, float x, uint32_t key, int64_t i) {
  if (key < r->t_key) return false;
  if (r->have_p) {
    if (key < r->pb.key) return false;
    if (key == r->pb.key && i < r->tie_cut) return false;
  }
  if (r->min_e > 0.0f && llmk__exp_nonpos(x - r->max) < r->min_e) return false;
  return true;
}

/* Widens row r of v into row[0..V). */
static void load_row(const llmk__view *v, int64_t r, int64_t V, float *row) {
  const char *base = llmk__view_at(v, r, 0);
  size_t esz = llmk_dtype_size(v->dtype), step = (size_t)v->s1 * esz;
  if (v->dtype == LLMK_F32 && v->s1 == 1)
    memcpy(row, base, (size_t)V * 4);
  else
    for (int64_t j = 0; j < V; j++)
      row[j] = llmk__load_f32(base + (size_t)j * step, v->dtype);
}

static const uint16_t neg_inf16[2] = {0xfc00, 0xff80}; /* f16, bf16 */

static void store_neg_inf(char *e, llmk_dtype dt) {
  if (dt == LLMK_F32) {
    float f = -INFINITY;
    memcpy(e, &f, 4);
  } else {
    memcpy(e, &neg_inf16[dt == LLMK_BF16], 2);
  }
}

/* -inf stored (at dst + index * dstep, elements of dt) to the gathered entries (keys and
 * indices, n) that are masked: key >= tw, and key < thr or a tie (key == tie_key with an
 * index below tie_cut); returns how many, *ties of them ties. Without branches: which
 * side of a top-p boundary an entry of its window falls on is a coin toss, and
 * mispredictions cost more than the stores of the kept entries, which go to a local
 * instead. */
static int64_t mask_listed(const uint32_t *keys, const uint32_t *idx, int64_t n,
                           uint32_t tw, uint32_t thr, uint32_t tie_key, int64_t tie_cut,
                           char *dst, size_t dstep, llmk_dtype dt, int64_t *ties) {
  uint32_t sink = 0;
  const uintptr_t other = (uintptr_t)&sink;
  const uint64_t tc = tie_cut > 0 ? (uint64_t)tie_cut : 0;
  const uint32_t f32 = 0xff800000u;
  const uint16_t h16 = neg_inf16[dt == LLMK_BF16];
  int64_t c = 0, t = 0;
  for (int64_t i = 0; i < n; i++) {
    uint32_t k = keys[i];
    uintptr_t tie = (uintptr_t)((k == tie_key) & (idx[i] < tc));
    uintptr_t mask = (uintptr_t)(k >= tw) & ((uintptr_t)(k < thr) | tie);
    uintptr_t at = (uintptr_t)(dst + (size_t)idx[i] * dstep), sel = (uintptr_t)0 - mask;
    void *e = (void *)((at & sel) | (other & ~sel));
    if (dt == LLMK_F32)
      memcpy(e, &f32, 4);
    else
      memcpy(e, &h16, 2);
    c += (int64_t)mask;
    t += (int64_t)(mask & tie);
  }
  *ties = t;
  return c;
}

typedef struct write_job {
  const tkp_plan *pl;
  const scratch *s;  /* the row's: s->row and s->keys */
  const scratch *ps; /* per part, for gathers */
  const rowctx *rc;
  const row_result *rr;
  const char *src;
  char *dst;
  bool in_place;
  int mode;       /* of select */
  uint32_t t, hi; /* select: keep keys >= t; gather those <= hi too */
  int64_t kept[MAX_PARTS], ng[MAX_PARTS];
  uint32_t *wkey, *widx; /* no team: gathers go straight here */
} write_job;

/* out[a, b) of the row: kept entries copied, the others -inf. Entries equal to the top-p
 * boundary are all kept here; the caller masks the first ones of that group. With the
 * contiguous select, the kept entries with key <= hi are gathered too. */
static void write_part(void *arg, int part, int64_t a, int64_t b) {
  write_job *j = arg;
  const tkp_plan *pl = j->pl;
  const row_result *rr = j->rr;
  size_t esz = llmk_dtype_size(pl->logits.dtype);
  size_t sstep = (size_t)pl->logits.s1 * esz, dstep = (size_t)pl->out.s1 * esz;
  int64_t kept = 0;
  if (pl->logits.s1 == 1 && pl->out.s1 == 1 && rr->min_e == 0.0f) {
    const scratch *ps = &j->ps[part];
    size_t ng = 0;
    kept = (int64_t)pl->kern->select(
        j->src + (size_t)a * esz, pl->logits.dtype, (size_t)(b - a), j->t, j->hi,
        j->dst + (size_t)a * esz, j->mode, (uint32_t)a, j->wkey ? j->wkey : ps->sk,
        j->widx ? j->widx : ps->cidx, CAND_CAP, &ng);
    j->ng[part] = (int64_t)ng;
  } else { /* the caller made the f32 row and its keys */
    for (int64_t i = a; i < b; i++) {
      bool keep =
          j->s->keys[i] >= j->t &&
          !(rr->min_e > 0.0f && llmk__exp_nonpos(j->s->row[i] - rr->max) < rr->min_e);
      if (keep) {
        kept++;
        if (!j->in_place)
          memcpy(j->dst + (size_t)i * dstep, j->src + (size_t)i * sstep, esz);
      } else {
        store_neg_inf(j->dst + (size_t)i * dstep, pl->logits.dtype);
      }
    }
    j->ng[part] = 0;
  }
  j->kept[part] = kept;
}

typedef struct window_job {
  const tkp_plan *pl;
  const scratch *ps;
  const rowctx *rc;
  uint32_t lo, hi;
  uint32_t *wkey, *widx; /* no team: gathers go straight here */
  int64_t ng[MAX_PARTS];
} window_job;

static void window_part(void *arg, int part, int64_t a, int64_t b) {
  window_job *j = arg;
  const scratch *ps = &j->ps[part];
  j->ng[part] = (int64_t)j->pl->kern->gather(
      src_at(j->rc, a), j->rc->dt, (size_t)(b - a), j->lo, j->hi, (uint32_t)a,
      j->wkey ? j->wkey : ps->sk, j->widx ? j->widx : ps->cidx, CAND_CAP);
}

/* The entries of the pending window of r, keys into s->bk and indices into widx; returns
 * how many there are (gathered only up to CAND_CAP). */
static int64_t gather_window(const tkp_plan *pl, const team *tm, const scratch *s,
                             const rowctx *rc, const row_result *r, uint32_t *widx) {
  window_job gj = {
      .pl = pl, .ps = tm ? tm->ps : s, .rc = rc, .lo = r->win_lo, .hi = r->win_hi};
  if (!tm) {
    gj.wkey = s->bk;
    gj.widx = widx;
  }
  team_run(tm, pl->V, window_part, &gj);
  return join_parts(tm, gj.ng, s->bk, widx, CAND_CAP);
}

/* The pending top-p boundary of r among the n entries of its window (keys in s->bk,
 * indices in widx, in index order), or, when they were too many to gather (n over
 * CAND_CAP), among the whole row's entries in the window. Sets r->pb and r->tie_cut. */
static void resolve_window(const tkp_plan *pl, const team *tm, const scratch *s,
                           rowctx *rc, row_result *r, const uint32_t *widx, int64_t n) {
  uint32_t max_key = rc->max_key;
  r->pending = false;
  if (n <= CAND_CAP) {
    r->pb = top_p_sorted(pl, s, s->bk, n, r->max, max_key, r->target, r->below, 0.0f,
                         s->sk, (uint32_t *)(void *)s->sx);
    r->tie_cut = 0;
    for (int64_t i = 0, c = 0; i < n && c < r->pb.masked_in_group; i++)
      if (s->bk[i] == r->pb.key && ++c == r->pb.masked_in_group)
        r->tie_cut = (int64_t)widx[i] + 1;
  } else {
    need_keys(pl, tm, s, rc);
    int64_t n_max = team_count_eq(pl, tm, s, rc, max_key);
    r->pb = top_p_boundary(pl, s, s->row, s->keys, pl->V, r->max, r->win_lo, max_key,
                           n_max, r->target, r->below);
    find_tie_cut(pl, rc, pl->V, r);
  }
}

/* The row written with select() keeping keys >= t, those <= hi also gathered in order
 * into okey / oidx (not the parts' temporaries); returns how many there are. */
static int64_t write_gathering(const team *tm, write_job *wj, int64_t V, uint32_t t,
                               uint32_t hi, uint32_t *okey, uint32_t *oidx) {
  wj->t = t;
  wj->hi = hi;
  wj->wkey = tm ? NULL : okey;
  wj->widx = tm ? NULL : oidx;
  team_run(tm, V, write_part, wj);
  return join_parts(tm, wj->ng, okey, oidx, CAND_CAP);
}

/* The members of r's top-p tie group before r->tie_cut (found by find_eq from the start
 * of the row) written as -inf in dst (elements dstep bytes apart); returns how many. */
static int64_t mask_tie_group(const tkp_plan *pl, const rowctx *rc, const row_result *r,
                              char *dst, size_t dstep, llmk_dtype dt) {
  int64_t n = 0;
  for (int64_t j = 0; j < r->tie_cut; j++, n++) {
    j += (int64_t)pl->kern->find_eq(src_at(rc, j), rc->dt, (size_t)(r->tie_cut - j),
                                    r->pb.key, 1);
    if (j >= r->tie_cut) break;
    store_neg_inf(dst + (size_t)j * dstep, dt);
  }
  return n;
}

/* One row: decide, write, then mask what the write kept too much. A write keeps the
 * entries >= tw; when tw is below the final threshold (a top-p window's lowest key), the
 * entries between them must be in the gathered list (keys lk, indices li, n of them),
 * which is also how the first members of the top-p tie group are found (else by find_eq
 * from the start of the row). The top-k pivot's write masks every entry instead, and the
 * survivors among its candidates are copied afterwards. */
static void filter_one(const tkp_plan *pl, const team *tm, const scratch *s0, int64_t r) {
  int64_t V = pl->V;
  scratch local = *s0, *s = &local;
  rowctx rc = {.v = &pl->logits, .r = r};
  if (pl->logits.s1 == 1) { /* read the row where it is */
    rc.src = llmk__view_at(&pl->logits, r, 0);
    rc.dt = pl->logits.dtype;
    rc.esz = llmk_dtype_size(rc.dt);
    if (rc.dt == LLMK_F32) local.row = (float *)(void *)llmk__view_at(&pl->logits, r, 0);
  } else {
    need_keys(pl, tm, s, &rc);
    rc.src = s->row;
    rc.dt = LLMK_F32;
    rc.esz = 4;
  }
  bool has_k = pl->k.data != NULL, has_p = pl->p.data != NULL,
       has_m = pl->min_p.data != NULL;
  int64_t k = has_k ? llmk__view_get(&pl->k, r, 0) : 0;
  float min_p = has_m ? llmk__view_get_f(&pl->min_p, r, 0) : 0;
  write_job wj = {.pl = pl,
                  .s = s,
                  .ps = tm ? tm->ps : s,
                  .rc = &rc,
                  .src = llmk__view_at(&pl->logits, r, 0),
                  .dst = (char *)llmk__view_at(&pl->out, r, 0)};
  wj.in_place = pl->out.data == pl->logits.data && pl->out.s0 == pl->logits.s0 &&
                pl->out.s1 == pl->logits.s1;
  wj.mode = wj.in_place ? LLMK__TKP_IN_PLACE : pl->stream ? LLMK__TKP_STREAM : 0;
  bool contiguous = pl->logits.s1 == 1 && pl->out.s1 == 1;
  row_result rr;
  memset(&rr, 0, sizeof rr); /* write_part reads min_e */
  wj.rr = &rr;
  /* top-k by pivot: gather its candidates, or, writing to another buffer (the logits
   * stay), write the row masking every entry and gather them at the same time */
  int64_t ncand = -1;
  uint32_t tw = 0, tau;
  bool written = false, all = false; /* all: the write masked every entry */
  if (has_k && k >= 1 && k <= V - 1 && pivot_tau(pl, s, &rc, V, k, &tau)) {
    if (contiguous && !wj.in_place && !(has_m && min_p > 0.0f)) {
      /* every entry masked; the few that stay are written once they are known */
      wj.mode |= LLMK__TKP_MASK_ALL;
      ncand = write_gathering(tm, &wj, V, tw = tau, UINT32_MAX, s->ckey, s->cidx);
      wj.mode &= ~LLMK__TKP_MASK_ALL;
      written = all = true;
    } else {
      ncand = team_gather_ge(pl, tm, &rc, tau, s->ckey, s->cidx, CAND_CAP);
    }
  }
  filter_row(pl, tm, s, &rc, V, has_k, k, has_p,
             has_p ? llmk__view_get_f(&pl->p, r, 0) : 0, has_m, min_p, ncand, &rr);
  const uint32_t *lk = NULL, *li = NULL;
  int64_t n = 0;
  if (written && ncand >= k && ncand <= CAND_CAP) { /* the candidates, all >= tau */
    lk = s->ckey;
    li = s->cidx;
    n = ncand;
  } else {
    written = all = false; /* the pivot missed (tau is above the k-th): write again */
  }
  bool select = contiguous && rr.min_e == 0.0f;
  if (!select) need_keys(pl, tm, s, &rc);
  if (rr.pending) { /* the top-p boundary lies in a window of keys: gather it */
    int64_t nwin;
    if (select) { /* while writing the row, keeping it whole */
      nwin = write_gathering(tm, &wj, V, tw = rr.win_lo, rr.win_hi, s->bk, s->cidx);
      written = true;
      all = false;
    } else {
      nwin = gather_window(pl, tm, s, &rc, &rr, s->cidx);
    }
    resolve_window(pl, tm, s, &rc, &rr, s->cidx, nwin);
    if (nwin <= CAND_CAP) {
      lk = s->bk;
      li = s->cidx;
      n = nwin;
    } else {
      lk = NULL;
      written = false; /* the window was not gathered: write again */
    }
  }
  uint32_t thr = rr.t_key;
  if (rr.have_p && rr.pb.key > thr) thr = rr.pb.key;
  if (!written) {
    wj.t = tw = thr;
    wj.hi = 0;
    wj.wkey = wj.widx = NULL;
    team_run(tm, V, write_part, &wj);
    if (!lk && rr.ncand >= 0) { /* top-k's survivors, with the tie group */
      lk = s->ckey;
      li = s->cidx;
      n = rr.ncand;
    }
  }
  int64_t kept = 0;
  for (int p = 0; p < team_parts(tm); p++) kept += wj.kept[p];
  /* the masked members of the top-p tie group (the write kept the whole group), and the
   * entries below the final threshold that the write kept; min-p keeps or drops the
   * group as one, its members being equal */
  bool group_kept = !(rr.min_e > 0.0f && llmk__exp_nonpos(llmk__value_of_key(rr.pb.key) -
                                                          rr.max) < rr.min_e);
  size_t esz = llmk_dtype_size(pl->out.dtype), dstep = (size_t)pl->out.s1 * esz;
  if (lk && all) { /* the survivors written (contiguous rows; min_e from p == 1 only) */
    for (int64_t i = 0; i < n; i++) {
      bool tie = rr.have_p && lk[i] == rr.pb.key && (int64_t)li[i] < rr.tie_cut;
      bool keep = lk[i] >= thr && !tie;
      if (keep && rr.min_e > 0.0f)
        keep = llmk__exp_nonpos(llmk__value_of_key(lk[i]) - rr.max) >= rr.min_e;
      if (keep) {
        memcpy(wj.dst + (size_t)li[i] * esz, wj.src + (size_t)li[i] * esz, esz);
        kept++;
      }
    }
  } else if (lk) {
    int64_t ties,
        c = mask_listed(lk, li, n, tw, thr, rr.pb.key, rr.have_p ? rr.tie_cut : 0, wj.dst,
                        dstep, pl->out.dtype, &ties);
    kept -= c - ties + (group_kept ? ties : 0);
  } else {
    kept -= group_kept * mask_tie_group(pl, &rc, &rr, wj.dst, dstep, pl->out.dtype);
  }
  if (pl->kept.data) llmk__view_set(&pl->kept, r, kept);
}

/* ----------------------------------------------------------------- sampling */

static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in (0, 1] from (seed, offset, j): a counter-based hash. */
static inline double uniform01(uint64_t seed, uint64_t offset, uint64_t j) {
  uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ull);
  h = mix64(h ^ (offset * 0xd1b54a32d192ed03ull));
  h = mix64(h ^ (j + 0x632be59bd9b4e019ull));
  return ((double)(h >> 11) + 1.0) * 0x1p-53;
}

typedef struct race_job {
  const tkp_plan *pl;
  const scratch *s;
  const row_result *rr;
  uint64_t seed, offset;
  double score[MAX_PARTS];
  int64_t best[MAX_PARTS];
} race_job;

/* Divides row[a, b) by the temperature and recomputes its keys; u32 max per part. */
static void scale_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  for (int64_t i = a; i < b; i++) j->row[i] = j->row[i] / j->t;
  j->u32[part] = b > a ? j->pl->kern->keys(j->row + a, (size_t)(b - a), j->keys + a) : 0;
}

/* The exponential race over the kept entries of [a, b): the best score and its index. */
static void race_part(void *arg, int part, int64_t a, int64_t b) {
  race_job *j = arg;
  const row_result *rr = j->rr;
  double best_score = -1.0;
  int64_t best = -1;
  for (int64_t i = a; i < b; i++) {
    float y = j->s->row[i];
    if (!keep_entry(rr, y, j->s->keys[i], i)) continue;
    double q = (double)llmk__exp_nonpos(y - rr->max);
    if (q <= 0.0) continue;
    double u = uniform01(j->seed, j->offset, (uint64_t)i);
    /* -log(u) >= 1 - u: skip the log when even that bound cannot win (with a margin, so
     * that rounding can never skip an entry that would win) */
    if (best_score >= 0.0 && q <= best_score * (1.0 - u) * (1.0 - 0x1p-40)) continue;
    double score = q / -log(u);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  j->score[part] = best_score;
  j->best[part] = best;
}

static void sample_one(const tkp_plan *pl, const team *tm, const scratch *s, int64_t r) {
  int64_t V = pl->V;
  float t = pl->temperature.data ? llmk__view_get_f(&pl->temperature, r, 0) : 1.0f;
  uint32_t max_key = team_load(pl, tm, s, &pl->logits, r);
  int64_t best = 0; /* greedy: the lowest index of the largest key */
  while (s->keys[best] != max_key) best++;
  bool finite = max_key < LLMK__KEY_PINF && max_key > LLMK__KEY_NINF;
  if (t > 0.0f && finite) {
    step_job sj = {
        .pl = pl, .ps = tm ? tm->ps : s, .row = s->row, .keys = s->keys, .t = t};
    team_run(tm, V, scale_part, &sj);
    uint32_t ymax = 0;
    for (int p = 0; p < team_parts(tm); p++) ymax = sj.u32[p] > ymax ? sj.u32[p] : ymax;
    bool has_k = pl->k.data != NULL, has_p = pl->p.data != NULL,
         has_m = pl->min_p.data != NULL;
    row_result rr;
    rowctx rc = {.src = s->row,
                 .dt = LLMK_F32,
                 .esz = 4,
                 .have_keys = true,
                 .have_max = true,
                 .max_key = ymax};
    int64_t k = has_k ? llmk__view_get(&pl->k, r, 0) : 0, ncand = -1;
    uint32_t tau;
    if (has_k && k >= 1 && k <= V - 1 && pivot_tau(pl, s, &rc, V, k, &tau))
      ncand = team_gather_ge(pl, tm, &rc, tau, s->ckey, s->cidx, CAND_CAP);
    filter_row(pl, tm, s, &rc, V, has_k, k, has_p,
               has_p ? llmk__view_get_f(&pl->p, r, 0) : 0, has_m,
               has_m ? llmk__view_get_f(&pl->min_p, r, 0) : 0, ncand, &rr);
    if (rr.pending)
      resolve_window(pl, tm, s, &rc, &rr, s->cidx,
                     gather_window(pl, tm, s, &rc, &rr, s->cidx));
    race_job rj = {
        .pl = pl,
        .s = s,
        .rr = &rr,
        .seed = (uint64_t)llmk__view_get(&pl->seed, r, 0),
        .offset = pl->offset.data ? (uint64_t)llmk__view_get(&pl->offset, r, 0) : 0};
    team_run(tm, V, race_part, &rj);
    double best_score = -1.0;
    for (int p = 0; p < team_parts(tm);
         p++) /* parts in index order: ties keep the lower */
      if (rj.best[p] >= 0 && rj.score[p] > best_score) {
        best_score = rj.score[p];
        best = rj.best[p];
      }
  }
  llmk__view_set(&pl->ids, r, best);
}

/* --------------------------------------------------------------- with sorted */

static void sorted_one(const tkp_plan *pl, const scratch *s, int64_t r) {
  int64_t V = pl->V;
  load_row(&pl->sv, r, V, s->row);
  bool has_k = pl->k.data != NULL, has_p = pl->p.data != NULL;
  int64_t k = has_k ? llmk__view_get(&pl->k, r, 0) : 0,
          first = 0; /* sorted positions < first: masked */
  if (has_k && k >= 1 && k <= V - 1) {
    uint32_t t = llmk__key_of(s->row[V - k]);
    if (t != LLMK__KEY_NAN)
      while (first < V && llmk__key_of(s->row[first]) < t) first++;
  }
  float max = s->row[V - 1];
  uint32_t max_key = llmk__key_of(max);
  bool finite = max_key < LLMK__KEY_PINF && max_key > LLMK__KEY_NINF;
  int64_t pfirst = first;
  if (has_p && finite) {
    float thr = 1.0f - llmk__view_get_f(&pl->p, r, 0);
    if (thr <= 0.0f) { /* p == 1: only entries of probability exactly 0 go */
      while (pfirst < V - 1 && llmk__exp_nonpos_fma(s->row[pfirst] - max) == 0.0f)
        pfirst++;
    } else { /* the masses by the kernels, a chunk at a time (keys >= 0: all taken) */
      pl->kern->keys(s->row + first, (size_t)(V - first), s->keys + first);
      uint64_t tlo = 0, thi = 0;
      for (int64_t j0 = first; j0 < V; j0 += CHUNK) {
        size_t c = (size_t)(V - j0 < CHUNK ? V - j0 : CHUNK);
        pl->kern->masses(s->row + j0, s->keys + j0, c, max, 0, 0, 0, s->mass, NULL, &tlo,
                         &thi);
      }
      u128 target = scaled_target(thr, ((u128)thi << 32) + tlo), cum = 0;
      for (int64_t j0 = first; pfirst < V - 1; j0 += CHUNK) { /* the masses again */
        size_t c = (size_t)(V - j0 < CHUNK ? V - j0 : CHUNK);
        uint64_t unused_lo = 0, unused_hi = 0;
        pl->kern->masses(s->row + j0, s->keys + j0, c, max, 0, 0, 0, s->mass, NULL,
                         &unused_lo, &unused_hi);
        size_t i = 0;
        for (; i < c && pfirst < V - 1; i++, pfirst++) {
          cum += s->mass[i];
          if (cum > target) break;
        }
        if (i < c) break;
      }
    }
  }
  size_t esz = llmk_dtype_size(pl->out.dtype);
  bool values = pl->logits.data != NULL;
  for (int64_t j = 0; j < V; j++) {
    int64_t idx = llmk__view_get(&pl->si, r, j);
    char *dst = (char *)llmk__view_at(&pl->out, r, idx);
    if (j < pfirst)
      store_neg_inf(dst, pl->out.dtype);
    else
      memcpy(dst,
             values ? llmk__view_at(&pl->logits, r, idx) : llmk__view_at(&pl->sv, r, j),
             esz);
  }
}

/* ------------------------------------------------------------------ phase 1 */

typedef struct arg {
  const llmk_tensor *t;
  const char *name;
} arg;

static llmk_status check_vec(const char *op, arg a, int64_t B, uint32_t dtypes) {
  LLMK__TRY(llmk__check_dtype(op, a.name, a.t, dtypes));
  LLMK__TRY(llmk__check_rank(op, a.name, a.t, 1));
  return llmk__check_dim(op, a.name, a.t, 0, B, "B");
}

static llmk_status check_mat(const char *op, arg a, int64_t B, int64_t V,
                             uint32_t dtypes) {
  LLMK__TRY(llmk__check_dtype(op, a.name, a.t, dtypes));
  LLMK__TRY(llmk__check_rank(op, a.name, a.t, 2));
  LLMK__TRY(llmk__check_dim(op, a.name, a.t, 0, B, "B"));
  return llmk__check_dim(op, a.name, a.t, 1, V, "V");
}

/* All four entry points: `values` is logits (or sorted_value); the others as named. */
static llmk_status plan_tkp(const char *op, int mode, arg values, arg p, arg k, arg min_p,
                            arg out, arg kept, arg logits2, arg si, arg temperature,
                            arg seed, arg offset, arg ids, size_t *workspace_size,
                            llmk_plan **plan) {
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  if (!values.t)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "%s is NULL", values.name);
  if (mode == MODE_SORTED && !si.t)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "sorted_indices is NULL");
  if (mode == MODE_SAMPLE) {
    if (!seed.t) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "seed is NULL");
    if (!ids.t) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "token_ids is NULL");
  } else {
    if (!out.t) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "out is NULL");
    if (!p.t && !k.t && !min_p.t)
      return llmk__error(LLMK_ERROR_NULL_POINTER, op,
                         "p and k are both NULL: nothing to apply");
  }
  /* dtypes */
  LLMK__TRY(llmk__check_dtype(op, values.name, values.t, LLMK__FLOATS));
  llmk_dtype dt = values.t->dtype;
  uint32_t pdt = LLMK__DT(dt) | LLMK__DT(LLMK_F32);
  if (p.t) LLMK__TRY(llmk__check_dtype(op, p.name, p.t, pdt));
  if (min_p.t) LLMK__TRY(llmk__check_dtype(op, min_p.name, min_p.t, pdt));
  if (k.t) LLMK__TRY(llmk__check_dtype(op, k.name, k.t, LLMK__INTS));
  if (out.t) LLMK__TRY(llmk__check_dtype(op, out.name, out.t, LLMK__DT(dt)));
  if (kept.t) LLMK__TRY(llmk__check_dtype(op, kept.name, kept.t, LLMK__INTS));
  if (logits2.t) LLMK__TRY(llmk__check_dtype(op, logits2.name, logits2.t, LLMK__DT(dt)));
  if (si.t) LLMK__TRY(llmk__check_dtype(op, si.name, si.t, LLMK__DT(LLMK_I32)));
  if (temperature.t)
    LLMK__TRY(llmk__check_dtype(op, temperature.name, temperature.t, LLMK__DT(LLMK_F32)));
  if (seed.t) LLMK__TRY(llmk__check_dtype(op, seed.name, seed.t, LLMK__DT(LLMK_I64)));
  if (offset.t)
    LLMK__TRY(llmk__check_dtype(op, offset.name, offset.t, LLMK__DT(LLMK_I64)));
  if (ids.t) LLMK__TRY(llmk__check_dtype(op, ids.name, ids.t, LLMK__INTS));
  /* shapes */
  LLMK__TRY(llmk__check_rank(op, values.name, values.t, 2));
  int64_t B = values.t->shape[0], V = values.t->shape[1];
  const arg vecs[] = {p, k, min_p, kept, temperature, seed, offset, ids};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
    if (vecs[i].t) LLMK__TRY(check_vec(op, vecs[i], B, 1u << vecs[i].t->dtype));
  const arg mats[] = {out, logits2, si};
  for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
    if (mats[i].t) LLMK__TRY(check_mat(op, mats[i], B, V, 1u << mats[i].t->dtype));
  /* strides, spans, data */
  const arg all[] = {values,  p,  k,           min_p, out,    kept,
                     logits2, si, temperature, seed,  offset, ids};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i].t) LLMK__TRY(llmk__check_tensor(op, all[i].name, all[i].t));

  tkp_plan pl;
  memset(&pl, 0, sizeof pl);
  pl.op = op;
  pl.mode = mode;
  pl.B = B;
  pl.V = V;
  pl.logits = llmk__view_of(mode == MODE_SORTED ? logits2.t : values.t);
  pl.sv = mode == MODE_SORTED ? llmk__view_of(values.t) : (llmk__view){0};
  pl.si = llmk__view_of(si.t);
  pl.p = llmk__view_of(p.t);
  pl.k = llmk__view_of(k.t);
  pl.min_p = llmk__view_of(min_p.t);
  pl.out = llmk__view_of(out.t);
  pl.kept = llmk__view_of(kept.t);
  pl.temperature = llmk__view_of(temperature.t);
  pl.seed = llmk__view_of(seed.t);
  pl.offset = llmk__view_of(offset.t);
  pl.ids = llmk__view_of(ids.t);
  int cpus = llmk__plan_tasks();
  int64_t w = B < cpus ? B : cpus;
  if (B < cpus && V >= SPLIT_MIN_V && mode != MODE_SORTED)
    w = cpus; /* room to split rows */
  pl.workers = (int)(w < 1 ? 1 : w);
  pl.worker_bytes = worker_bytes(V);
  pl.stream = (double)B * (double)V * (double)llmk_dtype_size(dt) >=
              (double)llmk__last_cache_bytes() / 2;
  pl.kern = llmk__tkp_kernels_for(llmk_get_isa());
  pl.cvt = llmk__convert_kernels_for(llmk_get_isa());
  size_t ws = B * V == 0 ? 0 : 64 + (size_t)pl.workers * pl.worker_bytes;
  llmk_plan *out_plan;
  LLMK__TRY(llmk__plan_create(op, LLMK__OP_TOP_K_TOP_P, sizeof pl, ws, &out_plan));
  *(tkp_plan *)llmk__plan_payload(out_plan) = pl;
  *workspace_size = ws;
  *plan = out_plan;
  return LLMK_SUCCESS;
}

static const arg none = {NULL, NULL};

llmk_status llmk_apply_top_k_top_p_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p, const llmk_tensor *k,
    const llmk_tensor *out, size_t *workspace_size, llmk_plan **plan) {
  return plan_tkp("apply_top_k_top_p", MODE_FILTER, (arg){logits, "logits"},
                  (arg){p, "p"}, (arg){k, "k"}, none, (arg){out, "out"}, none, none, none,
                  none, none, none, none, workspace_size, plan);
}

llmk_status llmk_apply_top_k_top_p_min_p_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p, const llmk_tensor *k,
    const llmk_tensor *min_p, const llmk_tensor *out, const llmk_tensor *kept,
    size_t *workspace_size, llmk_plan **plan) {
  return plan_tkp("apply_top_k_top_p", MODE_FILTER, (arg){logits, "logits"},
                  (arg){p, "p"}, (arg){k, "k"}, (arg){min_p, "min_p"}, (arg){out, "out"},
                  (arg){kept, "kept"}, none, none, none, none, none, none, workspace_size,
                  plan);
}

llmk_status llmk_apply_top_k_top_p_with_sorted_get_workspace_size(
    const llmk_tensor *sorted_value, const llmk_tensor *sorted_indices,
    const llmk_tensor *p, const llmk_tensor *k, const llmk_tensor *logits,
    const llmk_tensor *out, size_t *workspace_size, llmk_plan **plan) {
  return plan_tkp("apply_top_k_top_p_with_sorted", MODE_SORTED,
                  (arg){sorted_value, "sorted_value"}, (arg){p, "p"}, (arg){k, "k"}, none,
                  (arg){out, "out"}, none, (arg){logits, "logits"},
                  (arg){sorted_indices, "sorted_indices"}, none, none, none, none,
                  workspace_size, plan);
}

llmk_status llmk_sample_top_k_top_p_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p, const llmk_tensor *k,
    const llmk_tensor *min_p, const llmk_tensor *temperature, const llmk_tensor *seed,
    const llmk_tensor *offset, const llmk_tensor *token_ids, size_t *workspace_size,
    llmk_plan **plan) {
  return plan_tkp("sample_top_k_top_p", MODE_SAMPLE, (arg){logits, "logits"},
                  (arg){p, "p"}, (arg){k, "k"}, (arg){min_p, "min_p"}, none, none, none,
                  none, (arg){temperature, "temperature"}, (arg){seed, "seed"},
                  (arg){offset, "offset"}, (arg){token_ids, "token_ids"}, workspace_size,
                  plan);
}

/* ------------------------------------------------------------------ phase 2 */

static llmk_status check_values(const tkp_plan *pl, void *ws) {
  const char *op = pl->op;
  for (int64_t r = 0; r < pl->B; r++) {
    if (pl->p.data) {
      float v = llmk__view_get_f(&pl->p, r, 0);
      if (!(v >= 0.0f && v <= 1.0f))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "p[%" PRId64 "]=%g must be in [0, 1]", r, (double)v);
    }
    if (pl->min_p.data) {
      float v = llmk__view_get_f(&pl->min_p, r, 0);
      if (!(v >= 0.0f && v <= 1.0f))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "min_p[%" PRId64 "]=%g must be in [0, 1]", r, (double)v);
    }
    if (pl->temperature.data) {
      float v = llmk__view_get_f(&pl->temperature, r, 0);
      if (!(v >= 0.0f) || isinf(v))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "temperature[%" PRId64 "]=%g must be finite and >= 0", r,
                           (double)v);
    }
  }
  if (pl->mode == MODE_SORTED && pl->V > 0) {
    uint8_t *seen = (uint8_t *)ws;
    for (int64_t r = 0; r < pl->B; r++) {
      memset(seen, 0, (size_t)pl->V);
      for (int64_t j = 0; j < pl->V; j++) {
        int32_t idx;
        memcpy(&idx, llmk__view_at(&pl->si, r, j), 4);
        if (idx < 0 || idx >= pl->V || seen[idx])
          return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                             "sorted_indices[%" PRId64 "][%" PRId64 "]=%d is %s", r, j,
                             (int)idx,
                             idx < 0 || idx >= pl->V ? "outside [0, V)" : "repeated");
        seen[idx] = 1;
      }
    }
  }
  return LLMK_SUCCESS;
}

/* ------------------------------------------------ top-p rows in a pipeline */

/* Rows with whole-row top-p alone (no top-k, no min-p, contiguous logits and out) go
 * through a pipeline on each worker: the mass pass of a row (bound by its exp) also
 * writes the previous row, whose window it knows, and finds the largest value of the
 * next, so that those two passes' memory traffic hides under its arithmetic. The results
 * are those of filter_one. */
typedef struct prow {
  int64_t r;
  rowctx rc;
  row_result rr;
  char *dst;
  int mode;
} prow;

static bool pipe_row(const tkp_plan *pl, int64_t r, float *thr) {
  if (pl->logits.s1 != 1 || pl->out.s1 != 1 || !pl->p.data ||
      (uint64_t)pl->V > LLMK__TKP_MB_MAX_N)
    return false;
  if (pl->k.data) {
    int64_t k = llmk__view_get(&pl->k, r, 0);
    if (k >= 1 && k <= pl->V - 1) return false;
  }
  if (pl->min_p.data && llmk__view_get_f(&pl->min_p, r, 0) > 0.0f) return false;
  *thr = 1.0f - llmk__view_get_f(&pl->p, r, 0);
  return *thr > 0.0f;
}

static prow pipe_start(const tkp_plan *pl, int64_t r) {
  prow q;
  memset(&q, 0, sizeof q);
  q.r = r;
  q.rc.v = &pl->logits;
  q.rc.r = r;
  q.rc.src = llmk__view_at(&pl->logits, r, 0);
  q.rc.dt = pl->logits.dtype;
  q.rc.esz = llmk_dtype_size(q.rc.dt);
  q.dst = (char *)llmk__view_at(&pl->out, r, 0);
  bool in_place = pl->out.data == pl->logits.data && pl->out.s0 == pl->logits.s0 &&
                  pl->out.s1 == pl->logits.s1;
  q.mode = in_place ? LLMK__TKP_IN_PLACE : pl->stream ? LLMK__TKP_STREAM : 0;
  return q;
}

/* q's row written with its final threshold, the first members of its tie group masked
 * (found by find_eq); its count */
static void pipe_write_plain(const tkp_plan *pl, const scratch *s, prow *q) {
  size_t g;
  int64_t kept =
      (int64_t)pl->kern->select(q->rc.src, q->rc.dt, (size_t)pl->V, q->rr.pb.key, 0,
                                q->dst, q->mode, 0, s->bk, s->cidx, 0, &g);
  kept -= mask_tie_group(pl, &q->rc, &q->rr, q->dst, q->rc.esz, q->rc.dt);
  if (pl->kept.data) llmk__view_set(&pl->kept, q->r, kept);
}

/* q's row has been written keeping its whole window (kept_w entries kept, its ng window
 * entries gathered into s->bk / s->cidx): its boundary, then the masks that the write
 * left out, and its count. */
static void pipe_finish(const tkp_plan *pl, const scratch *s0, prow *q, size_t kept_w,
                        size_t ng) {
  scratch local = *s0, *s = &local;
  if (q->rc.dt == LLMK_F32)
    local.row = (float *)(void *)llmk__view_at(&pl->logits, q->r, 0);
  resolve_window(pl, NULL, s, &q->rc, &q->rr, s->cidx, (int64_t)ng);
  if (ng > CAND_CAP) { /* the window was not gathered: write the row again */
    pipe_write_plain(pl, s, q);
    return;
  }
  int64_t ties,
      kept = (int64_t)kept_w - mask_listed(s->bk, s->cidx, (int64_t)ng, 0, q->rr.pb.key,
                                           q->rr.pb.key, q->rr.tie_cut, q->dst, q->rc.esz,
                                           q->rc.dt, &ties);
  if (pl->kept.data) llmk__view_set(&pl->kept, q->r, kept);
}

static void pipe_flush(const tkp_plan *pl, const scratch *s, prow *q) {
  size_t ng;
  size_t kept =
      pl->kern->select(q->rc.src, q->rc.dt, (size_t)pl->V, q->rr.win_lo, q->rr.win_hi,
                       q->dst, q->mode, 0, s->bk, s->cidx, CAND_CAP, &ng);
  pipe_finish(pl, s, q, kept, ng);
}

typedef struct tkp_job {
  const tkp_plan *pl;
  char *ws;
  _Atomic int64_t next; /* the next row to claim */
} tkp_job;

/* The rows a worker claims, one at a time (a slower core takes fewer; a row's result does
 * not depend on which worker computes it), each claimed one row ahead. */
static void filter_rows(const tkp_plan *pl, tkp_job *j, const scratch *s) {
  int64_t V = pl->V, nmax_row = -1;
  uint32_t nmax = 0;
  float nmin = 0;
  prow q; /* the row whose write waits for the next mass pass */
  bool have_q = false;
  for (int64_t r = atomic_fetch_add(&j->next, 1), r2; r < pl->B; r = r2) {
    r2 = atomic_fetch_add(&j->next, 1);
    float thr, thr2;
    bool next_piped = r2 < pl->B && pipe_row(pl, r2, &thr2);
    if (r2 < pl->B && pl->k.data) prefetch_sample(&pl->logits, r2, V);
    uint32_t max_key = 0;
    bool piped = pipe_row(pl, r, &thr);
    if (piped) {
      if (nmax_row != r) {
        nmax = pl->kern->max_key(llmk__view_at(&pl->logits, r, 0), pl->logits.dtype,
                                 (size_t)V, &nmin);
        nmax_row = r;
      }
      max_key = nmax;
      piped = max_key < LLMK__KEY_PINF && max_key > LLMK__KEY_NINF;
    }
    if (!piped) {
      if (have_q) pipe_flush(pl, s, &q);
      have_q = false;
      filter_one(pl, NULL, s, r);
      continue;
    }
    prow c = pipe_start(pl, r);
    c.rc.max_key = max_key;
    c.rc.have_max = true;
    c.rr.max = llmk__value_of_key(max_key);
    c.rr.have_p = true;
    llmk__tkp_rider rd;
    memset(&rd, 0, sizeof rd);
    if (have_q) {
      rd.sel_src = q.rc.src;
      rd.sel_dst = q.dst;
      rd.sel_t = q.rr.win_lo;
      rd.sel_hi = q.rr.win_hi;
      rd.sel_mode = q.mode;
      rd.sel_okey = s->bk;
      rd.sel_oidx = s->cidx;
      rd.sel_cap = CAND_CAP;
    }
    if (next_piped) rd.max_src = llmk__view_at(&pl->logits, r2, 0);
    /* the smallest value as well, from the pass before: the mass pass may skip checks */
    rd.src_dense = nmax_row == r && nmin - c.rr.max >= LLMK__TKP_DENSE_D;
    memset(s->mlo, 0, MB_TABLE_BYTES);
    pl->kern->mass_bins(c.rc.src, c.rc.dt, (size_t)V, c.rr.max, -INFINITY, s->mlo, &rd);
    if (next_piped) {
      nmax = rd.max_key;
      nmin = rd.max_min;
      nmax_row = r2;
    }
    bins_to_window(pl, NULL, s, &c.rc, c.rr.max, 0, max_key, thr,
                   &c.rr); /* before q's: mlo */
    if (have_q) pipe_finish(pl, s, &q, rd.sel_kept, rd.sel_ng);
    have_q = c.rr.pending;
    if (have_q) {
      q = c;
    } else { /* p == 0: decided */
      find_tie_cut(pl, &c.rc, V, &c.rr);
      pipe_write_plain(pl, s, &c);
    }
  }
  if (have_q) pipe_flush(pl, s, &q);
}

static void worker_task(void *job_arg, int w, int nth) {
  tkp_job *j = job_arg;
  const tkp_plan *pl = j->pl;
  (void)nth;
  scratch s = scratch_at(j->ws + (size_t)w * pl->worker_bytes);
  s.keys = (uint32_t *)(void *)(s.row + pl->V);
  s.rowbins = (uint16_t *)(void *)(s.keys + pl->V);
  if (pl->mode == MODE_FILTER) {
    filter_rows(pl, j, &s);
    return;
  }
  for (int64_t r = atomic_fetch_add(&j->next, 1); r < pl->B;
       r = atomic_fetch_add(&j->next, 1)) {
    if (r + 1 < pl->B && pl->k.data && pl->mode != MODE_SORTED)
      prefetch_sample(&pl->logits, r + 1, pl->V);
    if (pl->mode == MODE_SAMPLE)
      sample_one(pl, NULL, &s, r);
    else
      sorted_one(pl, &s, r);
  }
}

static llmk_status run(const void *payload, void *workspace, llmk_context *ctx) {
  const tkp_plan *pl = payload;
  llmk_status st = LLMK_SUCCESS;
  char *ws = (char *)(((uintptr_t)workspace + 63) & ~(uintptr_t)63);
  if (pl->B * pl->V > 0) {
    st = check_values(pl, ws);
    if (st == LLMK_SUCCESS) {
      if (pl->V == 1 && pl->mode != MODE_SAMPLE) {
        /* one entry: the largest, always kept */
        for (int64_t r = 0; r < pl->B; r++) {
          const llmk__view *src =
              pl->mode == MODE_SORTED && !pl->logits.data ? &pl->sv : &pl->logits;
          memmove((char *)llmk__view_at(&pl->out, r, 0), llmk__view_at(src, r, 0),
                  llmk_dtype_size(pl->out.dtype));
          if (pl->kept.data) llmk__view_set(&pl->kept, r, 1);
        }
      } else if (pl->mode != MODE_SORTED && pl->V >= SPLIT_MIN_V &&
                 pl->B < llmk__parallel_tasks(ctx, pl->workers) && pl->workers > 1) {
        /* fewer rows than threads: each row split over a team of threads */
        scratch ps[MAX_PARTS];
        int parts = llmk__parallel_tasks(ctx, pl->workers);
        for (int w = 0; w < parts; w++) {
          ps[w] = scratch_at(ws + (size_t)w * pl->worker_bytes);
          ps[w].keys = (uint32_t *)(void *)(ps[w].row + pl->V);
          ps[w].rowbins = (uint16_t *)(void *)(ps[w].keys + pl->V);
        }
        team tm = {ctx, parts, ps};
        for (int64_t r = 0; r < pl->B; r++) {
          if (pl->mode == MODE_FILTER)
            filter_one(pl, &tm, &ps[0], r);
          else
            sample_one(pl, &tm, &ps[0], r);
        }
      } else {
        tkp_job job = {pl, ws, 0};
        llmk__parallel_run(ctx, pl->workers, worker_task, &job);
      }
    }
  }
  return st;
}

llmk_status llmk_apply_top_k_top_p(void *workspace, size_t workspace_size,
                                   llmk_plan *plan, llmk_context *ctx) {
  return llmk__plan_run("apply_top_k_top_p", LLMK__OP_TOP_K_TOP_P, plan, workspace,
                        workspace_size, ctx, run);
}
