/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnTopKTopPSampleV2 from C, table by table, each printed as passed / listed / total:
 *   - the error table of CANN's doc (docs/aclnnTopKTopPSampleV2.md), each code with
 *     nothing written; rows where the doc and CANN's tiling code disagree follow the
 *     code and are listed (docs/aclnn.md);
 *   - the checks of CANN's tiling code (op_host/top_k_top_p_sample_v2_tiling.cpp) and
 *     of its op definition that the doc's table leaves out;
 *   - CANN's tiling UT (3 cases) and kernel UT (17 cases, their gen_data.py ranges and
 *     attributes) replayed as value cases;
 *   - CANN's ST (tests/st: 214 cases of atk_aclnnTopKTopPSampleV2.json) replayed with
 *     their shapes, dtypes, ranges and attributes.
 * Every value case compares each output with a golden computed here in double from CANN's
 * formula (the doc and the ST's torch golden, executor_aclnnTopKTopPSampleV2.py), not
 * with the library: the selected index, logitsTopKPSelect, logitsSortMasked and
 * logitsIdx, and that the outputs the attributes do not ask for are left as they were.
 * A row whose golden decision is within 1e-5 of flipping (f32 against double) is
 * counted, not compared; the count must stay small. Then the executor's lifecycle. */
#include <math.h>

#include "aclnn_tspec.h"
#include "aclnnop/aclnn_top_k_top_p_sample_v2.h"

static acl_test T;

/* ------------------------------------------------------------------ dtypes */
static uint16_t to_half(aclDataType dt, float f) {
  if (dt == ACL_FLOAT16) return aclFloatToFloat16(f);
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static float from_half(aclDataType dt, uint16_t h) {
  if (dt == ACL_FLOAT16) return aclFloat16ToFloat(h);
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* f rounded to dt (FLOAT: itself) */
static float rnd(aclDataType dt, float f) {
  return dt == ACL_FLOAT ? f : from_half(dt, to_half(dt, f));
}

static float from_dt(aclDataType dt, const void *base, int64_t off) {
  if (dt == ACL_FLOAT) return ((const float *)base)[off];
  return from_half(dt, ((const uint16_t *)base)[off]);
}

static void put(aclDataType dt, void *base, int64_t off, float f) {
  if (dt == ACL_FLOAT)
    ((float *)base)[off] = f;
  else
    ((uint16_t *)base)[off] = to_half(dt, f);
}

/* ------------------------------------------------------------------ golden */
/* One row by CANN's formula (the doc's and the ST golden's steps): sort descending
 * (stable), top-k for 1 <= k <= min(ks, V), probabilities softmax(the k or the row) or
 * the values (inputIsLogits false), top-p for p < 1 (p <= 0: the largest only, its
 * probability 1 with softmax) removing entries whose preceding sum already reached p, the
 * row in index order when neither runs (and min-p < 1), min-p against the largest kept
 * probability (>= 1: the first only), then argmax of probs / (|q[j]| + eps) or of probs.
 * Fills L, probs and *n; returns the token; *amb when a decision is within TOL. */
#define TOL 1e-5

static const double *g_x;

static int rank_cmp(const void *a, const void *b) {
  int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
  if (g_x[i] != g_x[j]) return g_x[i] > g_x[j] ? -1 : 1;
  return i < j ? -1 : 1;
}

static void softmax_d(const double *v, int64_t n, double *w) {
  double m = v[0], s = 0.0;
  for (int64_t j = 1; j < n; j++) m = v[j] > m ? v[j] : m;
  for (int64_t j = 0; j < n; j++) s += (w[j] = exp(v[j] - m));
  for (int64_t j = 0; j < n; j++) w[j] /= s;
}

static bool near(double a, double b) {
  return a != b && fabs(a - b) <= TOL * (fabs(b) > 1e-3 ? fabs(b) : 1e-3);
}

typedef struct gattrs {
  bool il;    /* inputIsLogits */
  int64_t ks; /* the top-k bound: ksMax rounded up to 8, at most 1024 */
  double eps;
  bool has_minp;
} gattrs;

static int64_t golden_row(const double *x, int64_t V, int64_t k, double p, double mp,
                          const float *q, const gattrs *g, int64_t *L, double *probs,
                          int64_t *n_out, bool *amb) {
  int64_t *C = malloc((size_t)V * sizeof *C);
  double *a = malloc((size_t)V * sizeof *a);
  for (int64_t i = 0; i < V; i++) C[i] = i;
  g_x = x;
  qsort(C, (size_t)V, sizeof *C, rank_cmp);
  *amb = false;
  bool use_k = k >= 1 && k <= (g->ks < V ? g->ks : V);
  bool use_p = p < 1.0; /* NaN: false */
  /* no minPs, or NaN: no min-p (CANN's kernel runs it for minPs > 0 only; the ST's
   * golden would sort a NaN row, docs/aclnn.md) */
  if (!g->has_minp || isnan(mp)) mp = -1.0;
  int64_t m = use_k ? k : V, n;
  for (int64_t j = 0; j < m; j++) L[j] = C[j];
  for (int64_t j = 0; j < m; j++) a[j] = x[C[j]];
  if (g->il)
    softmax_d(a, m, probs);
  else
    memcpy(probs, a, (size_t)m * sizeof *a);
  n = m;
  if (use_p) {
    if (p > 0) {
      double c = 0.0;
      for (int64_t j = 0; j < m; j++) {
        if (near(c, p)) *amb = true;
        if (c >= p) { /* the sum before entry j reached p */
          n = j;
          break;
        }
        c += probs[j];
      }
    } else {
      n = 1;
      if (g->il) probs[0] = 1.0;
    }
  }
  if (!use_k && !use_p && mp < 1) { /* no sort on the kernel's side */
    for (int64_t i = 0; i < V; i++) L[i] = i;
    if (g->il)
      softmax_d(x, V, probs);
    else
      memcpy(probs, x, (size_t)V * sizeof *x);
    n = V;
  }
  if (mp > 0 && mp < 1) {
    double mx = probs[0];
    for (int64_t j = 1; j < n; j++) mx = probs[j] > mx ? probs[j] : mx;
    double thd = mx * mp;
    int64_t t = 0;
    for (int64_t j = 0; j < n; j++) {
      if (near(probs[j], thd)) *amb = true;
      if (probs[j] >= thd) {
        L[t] = L[j];
        probs[t++] = probs[j];
      }
    }
    n = t;
  } else if (mp >= 1) {
    n = 1;
  }
  int64_t best = 0;
  double bs = -INFINITY, second = -INFINITY;
  for (int64_t j = 0; j < n; j++) {
    double s = probs[j];
    if (q) s /= fabs((double)q[j]) + (double)(float)g->eps;
    if (s > bs) {
      second = bs;
      bs = s;
      best = j;
    } else if (s > second) {
      second = s;
    }
  }
  if (near(second, bs)) *amb = true;
  *n_out = n;
  free(C);
  free(a);
  return L[best];
}

/* ------------------------------------------------------------------ tensors */
enum { LG, TK, TP, Q, MP, IDX, SEL, LIDX, LSM, NT };

typedef struct dtensor {
  void *dev;
  aclTensor *t;
  size_t bytes;
} dtensor;

#define FILL 0x5a

static dtensor make(aclDataType dt, int rank, int64_t d0, int64_t d1, int64_t pad,
                    const void *host) {
  dtensor r = {0};
  int64_t dims[2] = {d0, d1}, strides[2] = {rank == 2 ? d1 + pad : 1, 1};
  int64_t n = rank == 2 ? (d0 > 0 ? (d0 - 1) * (d1 + pad) + d1 : 0) : d0;
  if (n <= 0) n = 1;
  r.bytes = (size_t)n * dt_size(dt);
  EQ(aclrtMalloc(&r.dev, r.bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  if (host)
    memcpy(r.dev, host, r.bytes);
  else
    memset(r.dev, FILL, r.bytes);
  r.t = aclCreateTensor(dims, (uint64_t)rank, dt, strides, 0, ACL_FORMAT_ND, dims,
                        (uint64_t)rank, r.dev);
  return r;
}

static void drop(dtensor *d) {
  if (d->t) aclDestroyTensor(d->t);
  if (d->dev) aclrtFree(d->dev);
  memset(d, 0, sizeof *d);
}

static bool untouched(const dtensor *d) {
  const unsigned char *b = d->dev;
  for (size_t i = 0; i < d->bytes; i++)
    if (b[i] != FILL) return false;
  return true;
}

static aclnnStatus phase1(dtensor *t, const bool *absent, double eps, bool need_logits,
                          int64_t guess, int64_t ks_max, bool il, bool sr, uint64_t *ws,
                          aclOpExecutor **ex) {
  const aclTensor *a[NT];
  for (int i = 0; i < NT; i++) a[i] = absent && absent[i] ? NULL : t[i].t;
  return aclnnTopKTopPSampleV2GetWorkspaceSize(a[LG], a[TK], a[TP], a[Q], a[MP], eps,
                                               need_logits, guess, ks_max, il, sr, a[IDX],
                                               a[SEL], a[LIDX], a[LSM], ws, ex);
}

/* ------------------------------------------------------------------ value cases */
typedef struct vcase {
  const char *name;
  aclDataType dt;
  int64_t B, V, pad;
  bool with_q, with_minp, need_logits, il, sr;
  double eps;
  int64_t guess, ks_max;
  float *logits; /* [B][V], dt's values */
  int32_t *k;
  float *p, *mp; /* dt's values */
  float *q;      /* [B][V] */
} vcase;

static long rows_compared, rows_ambiguous;

static int64_t ks_of(int64_t ks_max) {
  if (ks_max <= 0) return 0;
  return ks_max >= 1024 ? 1024 : (ks_max + 7) / 8 * 8;
}

/* Runs one case and checks every output; true when all its checks passed. */
static bool run_value_case(const vcase *c) {
  long f0 = tu_failures;
  int64_t B = c->B, V = c->V, ld = V + c->pad;
  size_t es = dt_size(c->dt), nl = (size_t)((B - 1) * ld + V);
  unsigned char *hl = calloc(nl, es), *hp = calloc((size_t)B, es),
                *hm = calloc((size_t)B, es);
  for (int64_t b = 0; b < B; b++) {
    for (int64_t i = 0; i < V; i++) put(c->dt, hl, b * ld + i, c->logits[b * V + i]);
    put(c->dt, hp, b, c->p[b]);
    put(c->dt, hm, b, c->mp[b]);
  }
  dtensor t[NT];
  t[LG] = make(c->dt, 2, B, V, c->pad, hl);
  t[TK] = make(ACL_INT32, 1, B, 0, 0, c->k);
  t[TP] = make(c->dt, 1, B, 0, 0, hp);
  t[Q] = make(ACL_FLOAT, 2, B, V, 0, c->q);
  t[MP] = make(c->dt, 1, B, 0, 0, hm);
  t[IDX] = make(ACL_INT64, 1, B, 0, 0, NULL);
  t[SEL] = make(ACL_FLOAT, 2, B, V, 0, NULL);
  t[LIDX] = make(ACL_INT64, 2, B, V, 0, NULL);
  t[LSM] = make(ACL_FLOAT, 2, B, V, 0, NULL);
  bool absent[NT] = {0};
  absent[Q] = !c->with_q;
  absent[MP] = !c->with_minp;
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = phase1(t, absent, c->eps, c->need_logits, c->guess, c->ks_max, c->il,
                          c->sr, &ws, &ex);
  TU_CHECK(st == ACLNN_SUCCESS, "%s: phase 1 %d (%s)", c->name, (int)st,
           aclGetRecentErrMsg());
  if (st == ACLNN_SUCCESS) {
    void *w = NULL;
    if (ws) EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EQ(aclnnTopKTopPSampleV2(w, ws, ex, T.stream), ACLNN_SUCCESS);
    if (w) aclrtFree(w);
    gattrs g = {c->il, ks_of(c->ks_max), c->eps, c->with_minp};
    double *x = malloc((size_t)V * sizeof *x), *probs = malloc((size_t)V * sizeof *probs);
    int64_t *L = malloc((size_t)V * sizeof *L);
    unsigned char *kept = malloc((size_t)V);
    float fill = c->il ? -INFINITY : 0.0f;
    for (int64_t b = 0; b < B; b++) {
      for (int64_t i = 0; i < V; i++) x[i] = c->logits[b * V + i];
      bool amb;
      int64_t n;
      int64_t want = golden_row(x, V, c->k[b], (double)from_dt(c->dt, hp, b),
                                (double)from_dt(c->dt, hm, b),
                                c->with_q ? c->q + b * V : NULL, &g, L, probs, &n, &amb);
      if (amb) {
        rows_ambiguous++;
        continue;
      }
      rows_compared++;
      if (!c->sr) {
        int64_t got = ((const int64_t *)t[IDX].dev)[b];
        TU_CHECK(got == want,
                 "%s: row %lld (k %d p %g min-p %g): index %lld, golden %lld", c->name,
                 (long long)b, c->k[b], (double)from_dt(c->dt, hp, b),
                 (double)from_dt(c->dt, hm, b), (long long)got, (long long)want);
      } else {
        const float *o = (const float *)t[LSM].dev + b * V;
        const int64_t *oi = (const int64_t *)t[LIDX].dev + b * V;
        int64_t bad = 0, touched = 0;
        for (int64_t j = 0; j < V; j++) {
          double e = j < n ? probs[j] : 0.0;
          if (!(fabs(o[j] - e) <= 1e-5 * fabs(e) + 1e-33)) bad++;
          if (j < n && oi[j] != L[j]) bad++;
          if (j >= n) {
            const unsigned char *y = (const unsigned char *)&oi[j];
            for (int u = 0; u < 8; u++) touched += y[u] != FILL;
          }
        }
        TU_CHECK(bad == 0 && touched == 0,
                 "%s: row %lld (n %lld): %lld entries of logitsSortMasked / logitsIdx "
                 "differ, %lld bytes of logitsIdx past the list written",
                 c->name, (long long)b, (long long)n, (long long)bad, (long long)touched);
      }
      if (c->need_logits) {
        memset(kept, 0, (size_t)V);
        for (int64_t j = 0; j < n; j++) kept[L[j]] = 1;
        const float *o = (const float *)t[SEL].dev + b * V;
        int64_t bad = 0;
        for (int64_t i = 0; i < V; i++) {
          float e = kept[i] ? (float)x[i] : fill;
          if (memcmp(&o[i], &e, 4) != 0) bad++;
        }
        TU_CHECK(bad == 0, "%s: row %lld: %lld elements of logitsTopKPSelect differ",
                 c->name, (long long)b, (long long)bad);
      }
    }
    if (c->sr) TU_CHECK(untouched(&t[IDX]), "%s: logitsSelectIdx written", c->name);
    if (!c->sr)
      TU_CHECK(untouched(&t[LIDX]) && untouched(&t[LSM]),
               "%s: logitsIdx or logitsSortMasked written", c->name);
    if (!c->need_logits)
      TU_CHECK(untouched(&t[SEL]), "%s: logitsTopKPSelect written", c->name);
    free(x);
    free(probs);
    free(L);
    free(kept);
  }
  free(hl);
  free(hp);
  free(hm);
  for (int i = 0; i < NT; i++) drop(&t[i]);
  return tu_failures == f0;
}

static double uni(double lo, double hi) {
  return lo + (hi - lo) * tu_rand_unit();
}

static vcase alloc_case(const char *name, aclDataType dt, int64_t B, int64_t V) {
  vcase c = {.name = name,
             .dt = dt,
             .B = B,
             .V = V,
             .eps = 1e-8,
             .guess = 32,
             .ks_max = 1024,
             .il = true};
  c.logits = malloc((size_t)(B * V) * sizeof(float));
  c.q = malloc((size_t)(B * V) * sizeof(float));
  c.k = malloc((size_t)B * sizeof(int32_t));
  c.p = malloc((size_t)B * sizeof(float));
  c.mp = malloc((size_t)B * sizeof(float));
  for (int64_t i = 0; i < B * V; i++) c.q[i] = 1.0f;
  for (int64_t b = 0; b < B; b++) c.mp[b] = 0.0f;
  return c;
}

static void free_case(vcase *c) {
  free(c->logits);
  free(c->q);
  free(c->k);
  free(c->p);
  free(c->mp);
}

/* ------------------------------------------------------------------ tables */
typedef struct table {
  const char *name;
  int passed, listed, skipped, total;
} table;

static void tally(table *tb, bool ok, bool listed) {
  tb->total++;
  if (ok && listed) tb->listed++;
  if (ok && !listed) tb->passed++;
}

static void print_table(const table *tb) {
  printf("%s: %d passed, %d listed (docs/aclnn.md), %d not transcribed, %d total\n",
         tb->name, tb->passed, tb->listed, tb->skipped, tb->total);
  TU_CHECK(tb->passed + tb->listed + tb->skipped == tb->total, "%s: %d cases failed",
           tb->name, tb->total - tb->passed - tb->listed - tb->skipped);
}

/* ------------------------------------------------------------------ errors */
typedef struct ecase {
  const char *name;
  aclnnStatus want;
  aclDataType dt[NT];
  int rank[NT];
  int64_t d0[NT], d1[NT];
  bool null[NT], null_ws, null_ex, nz_logits, sel_over_logits, need_logits, sr;
} ecase;

static ecase base_case(aclDataType dt) {
  ecase e = {0};
  const aclDataType dts[NT] = {dt,        ACL_INT32, dt,        ACL_FLOAT, dt,
                               ACL_INT64, ACL_FLOAT, ACL_INT64, ACL_FLOAT};
  const int rank[NT] = {2, 1, 1, 2, 1, 1, 2, 2, 2};
  for (int i = 0; i < NT; i++) {
    e.dt[i] = dts[i];
    e.rank[i] = rank[i];
    e.d0[i] = 8;
    e.d1[i] = rank[i] == 2 ? 64 : 0;
  }
  e.want = ACLNN_SUCCESS;
  return e;
}

static bool run_error_case(const ecase *e) {
  long f0 = tu_failures;
  dtensor t[NT];
  unsigned char *before[NT];
  for (int i = 0; i < NT; i++) {
    t[i] = make(e->dt[i], e->rank[i] > 2 ? 2 : e->rank[i], e->d0[i], e->d1[i], 0, NULL);
    if (e->rank[i] == 3 || e->rank[i] == 0) { /* other ranks: a new descriptor */
      aclDestroyTensor(t[i].t);
      int64_t dims[3] = {e->d0[i], e->d1[i] ? e->d1[i] : 1, 1}, st[3] = {0, 0, 0};
      t[i].t = aclCreateTensor(dims, (uint64_t)e->rank[i], e->dt[i], st, 0, ACL_FORMAT_ND,
                               dims, (uint64_t)e->rank[i], t[i].dev);
    }
    before[i] = malloc(t[i].bytes);
    memcpy(before[i], t[i].dev, t[i].bytes);
  }
  if (e->nz_logits) {
    aclDestroyTensor(t[LG].t);
    int64_t dims[2] = {e->d0[LG], e->d1[LG]};
    t[LG].t = aclCreateTensor(dims, 2, e->dt[LG], NULL, 0, ACL_FORMAT_FRACTAL_NZ, dims, 2,
                              t[LG].dev);
  }
  aclTensor *alias = NULL;
  if (e->sel_over_logits) { /* logitsSortMasked on logits' first bytes */
    int64_t dims[2] = {e->d0[LSM], e->d1[LSM]};
    alias =
        aclCreateTensor(dims, 2, e->dt[LSM], NULL, 0, ACL_FORMAT_ND, dims, 2, t[LG].dev);
  }
  uint64_t ws = 7;
  aclOpExecutor *ex = NULL;
  aclTensor *keep = t[LSM].t;
  if (alias) t[LSM].t = alias;
  aclnnStatus st = phase1(t, e->null, 1e-8, e->need_logits, 32, 1024, true, e->sr,
                          e->null_ws ? NULL : &ws, e->null_ex ? NULL : &ex);
  t[LSM].t = keep;
  TU_CHECK(st == e->want, "%s: status %d, want %d (%s)", e->name, (int)st, (int)e->want,
           aclGetRecentErrMsg());
  if (st == ACLNN_SUCCESS) {
    void *w = NULL;
    if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    EQ(aclnnTopKTopPSampleV2(w, ws, ex, T.stream), ACLNN_SUCCESS);
    if (w) aclrtFree(w);
  } else {
    if (!e->null_ex) TU_CHECK(ex == NULL, "%s: executor set on refusal", e->name);
    const char *msg = aclGetRecentErrMsg();
    TU_CHECK(msg && (strstr(msg, "aclnnTopKTopPSampleV2") ||
                     strstr(msg, "sample_top_k_top_p_ex2")),
             "%s: message '%s'", e->name, msg ? msg : "(null)");
    for (int i = 0; i < NT; i++)
      TU_CHECK(memcmp(before[i], t[i].dev, t[i].bytes) == 0, "%s: tensor %d written",
               e->name, i);
  }
  if (alias) aclDestroyTensor(alias);
  for (int i = 0; i < NT; i++) {
    drop(&t[i]);
    free(before[i]);
  }
  return tu_failures == f0;
}

#define CASE(tb, listed, label, status, ...) \
  do {                                       \
    e = base_case(ACL_FLOAT16);              \
    e.name = label;                          \
    e.want = status;                         \
    __VA_ARGS__;                             \
    tally(tb, run_error_case(&e), listed);   \
  } while (0)

/* The doc's table (161001, 161002, 561002), one case per condition and argument. */
static void doc_error_table(void) {
  table tb = {.name = "doc error table"};
  ecase e;
  const int nulls[3] = {LG, TK, TP};
  const char *nn[3] = {"logits NULL", "topK NULL", "topP NULL"};
  for (int i = 0; i < 3; i++)
    CASE(&tb, false, nn[i], ACLNN_ERR_PARAM_NULLPTR, e.null[nulls[i]] = true);
  /* 161002: dtypes outside the supported lists */
  CASE(&tb, false, "logits INT32", ACLNN_ERR_PARAM_INVALID, e.dt[LG] = ACL_INT32);
  CASE(&tb, false, "logits DOUBLE", ACLNN_ERR_PARAM_INVALID,
       e.dt[LG] = e.dt[TP] = e.dt[MP] = ACL_DOUBLE);
  CASE(&tb, false, "topK INT64", ACLNN_ERR_PARAM_INVALID, e.dt[TK] = ACL_INT64);
  CASE(&tb, false, "topP INT32", ACLNN_ERR_PARAM_INVALID, e.dt[TP] = ACL_INT32);
  CASE(&tb, false, "q FLOAT16", ACLNN_ERR_PARAM_INVALID, e.dt[Q] = ACL_FLOAT16);
  CASE(&tb, false, "minPs INT8", ACLNN_ERR_PARAM_INVALID, e.dt[MP] = ACL_INT8);
  /* 161002 by the doc; CANN's tiling refuses these shapes with 561002 (listed) */
  CASE(&tb, true, "q [8, 65] (doc: 161002 'size')", ACLNN_ERR_INNER_TILING_ERROR,
       e.d1[Q] = 65);
  CASE(&tb, true, "q [9, 64] (doc: 161002 'size')", ACLNN_ERR_INNER_TILING_ERROR,
       e.d0[Q] = 9);
  CASE(&tb, true, "topK [9] (doc: 161002)", ACLNN_ERR_INNER_TILING_ERROR, e.d0[TK] = 9);
  CASE(&tb, true, "topP [7] (doc: 161002)", ACLNN_ERR_INNER_TILING_ERROR, e.d0[TP] = 7);
  CASE(&tb, true, "minPs [9] (doc: 161002)", ACLNN_ERR_INNER_TILING_ERROR, e.d0[MP] = 9);
  CASE(&tb, true, "topK 2-D (doc: 161002)", ACLNN_ERR_INNER_TILING_ERROR, e.rank[TK] = 2;
       e.d1[TK] = 1);
  /* 161002: dtypes that disagree */
  CASE(&tb, false, "topP BFLOAT16 beside FLOAT16 logits", ACLNN_ERR_PARAM_INVALID,
       e.dt[TP] = ACL_BF16);
  CASE(&tb, false, "minPs FLOAT beside FLOAT16 logits", ACLNN_ERR_PARAM_INVALID,
       e.dt[MP] = ACL_FLOAT);
  CASE(&tb, false, "topP FLOAT16 beside FLOAT logits", ACLNN_ERR_PARAM_INVALID,
       e.dt[LG] = e.dt[MP] = ACL_FLOAT);
  /* 561002: q's rank */
  CASE(&tb, false, "q 1-D", ACLNN_ERR_INNER_TILING_ERROR, e.rank[Q] = 1);
  CASE(&tb, false, "q 3-D", ACLNN_ERR_INNER_TILING_ERROR, e.rank[Q] = 3);
  print_table(&tb);
}

/* What the doc's table leaves out: the other NULLs, output dtypes, formats, the rest of
 * the tiling's checks (each output's shape only when it is written), overlaps. */
static void code_error_table(void) {
  table tb = {.name = "op definition and tiling checks"};
  ecase e;
  const int outs[4] = {IDX, SEL, LIDX, LSM};
  const char *on[4] = {"logitsSelectIdx NULL", "logitsTopKPSelect NULL", "logitsIdx NULL",
                       "logitsSortMasked NULL"};
  for (int i = 0; i < 4; i++)
    CASE(&tb, false, on[i], ACLNN_ERR_PARAM_NULLPTR, e.null[outs[i]] = true);
  CASE(&tb, false, "workspaceSize NULL", ACLNN_ERR_PARAM_NULLPTR, e.null_ws = true);
  CASE(&tb, false, "executor NULL", ACLNN_ERR_PARAM_NULLPTR, e.null_ex = true);
  CASE(&tb, false, "q and minPs NULL", ACLNN_SUCCESS, e.null[Q] = e.null[MP] = true);
  CASE(&tb, false, "logitsSelectIdx INT32", ACLNN_ERR_PARAM_INVALID,
       e.dt[IDX] = ACL_INT32);
  CASE(&tb, false, "logitsTopKPSelect FLOAT16", ACLNN_ERR_PARAM_INVALID,
       e.dt[SEL] = ACL_FLOAT16);
  CASE(&tb, false, "logitsIdx INT32", ACLNN_ERR_PARAM_INVALID, e.dt[LIDX] = ACL_INT32);
  CASE(&tb, false, "logitsSortMasked BFLOAT16", ACLNN_ERR_PARAM_INVALID,
       e.dt[LSM] = ACL_BF16);
  CASE(&tb, false, "logits FRACTAL_NZ", ACLNN_ERR_PARAM_INVALID, e.nz_logits = true);
  CASE(&tb, false, "logitsSortMasked over logits", ACLNN_ERR_PARAM_INVALID,
       e.sel_over_logits = true;
       e.sr = true; e.null[Q] = true);
  CASE(&tb, false, "logits 1-D", ACLNN_ERR_INNER_TILING_ERROR, e.rank[LG] = 1);
  CASE(&tb, false, "logits 3-D", ACLNN_ERR_INNER_TILING_ERROR, e.rank[LG] = 3);
  CASE(&tb, false, "B = 0", ACLNN_ERR_INNER_TILING_ERROR,
       for (int i = 0; i < NT; i++) e.d0[i] = 0);
  CASE(&tb, false, "V = 0", ACLNN_ERR_INNER_TILING_ERROR,
       e.d1[LG] = e.d1[Q] = e.d1[SEL] = e.d1[LIDX] = e.d1[LSM] = 0);
  CASE(&tb, false, "V = 2^20 + 1", ACLNN_ERR_INNER_TILING_ERROR,
       for (int i = 0; i < NT; i++) e.d0[i] = 1;
       e.d1[LG] = e.d1[Q] = e.d1[SEL] = e.d1[LIDX] = e.d1[LSM] = (1 << 20) + 1);
  CASE(&tb, false, "q with isNeedSampleResult", ACLNN_ERR_INNER_TILING_ERROR,
       e.sr = true);
  CASE(&tb, false, "isNeedSampleResult without q", ACLNN_SUCCESS, e.sr = true;
       e.null[Q] = true);
  CASE(&tb, false, "logitsTopKPSelect [8, 63] with isNeedLogits",
       ACLNN_ERR_INNER_TILING_ERROR, e.need_logits = true;
       e.d1[SEL] = 63);
  CASE(&tb, false, "logitsTopKPSelect [8, 63] without isNeedLogits (not written)",
       ACLNN_SUCCESS, e.d1[SEL] = 63);
  CASE(&tb, false, "logitsSelectIdx [9]", ACLNN_ERR_INNER_TILING_ERROR, e.d0[IDX] = 9);
  CASE(&tb, false, "logitsSelectIdx [9] with isNeedSampleResult (not written)",
       ACLNN_SUCCESS, e.d0[IDX] = 9;
       e.sr = true; e.null[Q] = true);
  CASE(&tb, false, "logitsIdx [8, 65] with isNeedSampleResult",
       ACLNN_ERR_INNER_TILING_ERROR, e.d1[LIDX] = 65;
       e.sr = true; e.null[Q] = true);
  CASE(&tb, false, "logitsSortMasked [8] with isNeedSampleResult",
       ACLNN_ERR_INNER_TILING_ERROR, e.rank[LSM] = 1;
       e.sr = true; e.null[Q] = true);
  CASE(&tb, false, "logitsIdx and logitsSortMasked [1, 1] without isNeedSampleResult",
       ACLNN_SUCCESS, e.d0[LIDX] = e.d1[LIDX] = e.d0[LSM] = e.d1[LSM] = 1);
  print_table(&tb);
}
#undef CASE

/* ------------------------------------------------------------------ CANN's UT */
/* The tiling UT: [8, 64] FLOAT16 / BFLOAT16 / FLOAT with q and minPs, ksMax 1024,
 * topKGuess 32; the third with inputIsLogits false. No data in the UT: random rows. */
static void ut_tiling(void) {
  table tb = {.name = "tiling UT"};
  const aclDataType dts[3] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
  const char *names[3] = {"TOP_K_TOP_P_SAMPLE_V2_001_FLOAT16",
                          "TOP_K_TOP_P_SAMPLE_V2_002_BFLOAT16",
                          "TOP_K_TOP_P_SAMPLE_V2_003_FLOAT32"};
  for (int d = 0; d < 3; d++) {
    vcase c = alloc_case(names[d], dts[d], 8, 64);
    c.with_q = c.with_minp = true;
    c.il = d != 2;
    for (int64_t b = 0; b < 8; b++) {
      double s = 0.0;
      for (int64_t i = 0; i < 64; i++) s += (c.logits[b * 64 + i] = (float)uni(-3, 3));
      if (!c.il) {
        s = 0.0;
        for (int64_t i = 0; i < 64; i++) s += exp(c.logits[b * 64 + i]);
        for (int64_t i = 0; i < 64; i++)
          c.logits[b * 64 + i] = (float)(exp(c.logits[b * 64 + i]) / s);
      }
      for (int64_t i = 0; i < 64; i++) {
        c.logits[b * 64 + i] = rnd(c.dt, c.logits[b * 64 + i]);
        c.q[b * 64 + i] = (float)-log(1.0 - tu_rand_unit());
      }
      c.k[b] = (int32_t)tu_rand_range(-2, 70);
      c.p[b] = (float)uni(-0.2, 1.2);
      c.mp[b] = (float)uni(-0.5, 1.2);
    }
    tally(&tb, run_value_case(&c), false);
    free_case(&c);
  }
  print_table(&tb);
}

/* The kernel UT: gen_data.py's arguments (batch, V, logits range, topK range, topP
 * range, dtype, inputIsLogits, q, minPs) and the tiling data's attributes of each case.
 * The dtype is the tiling key's (the UT's isNeedLogits case generates FLOAT data under
 * the FLOAT16 key: replayed as FLOAT16). q and minPs are passed where the UT fills them.
 */
typedef struct kut {
  const char *name;
  double lo, hi;
  int klo, khi;
  double plo, phi;
  aclDataType dt;
  bool il, q, minp, need_logits, sr;
  int guess;
} kut;

static void gen_kut(const kut *u, vcase *c) {
  int64_t B = c->B, V = c->V;
  for (int64_t b = 0; b < B; b++) {
    for (int64_t i = 0; i < V; i++)
      c->logits[b * V + i] = rnd(c->dt, (float)uni(u->lo, u->hi));
    if (!u->il) { /* probabilities: the softmax of the rounded row, rounded again */
      double m = c->logits[b * V], s = 0.0;
      for (int64_t i = 1; i < V; i++)
        m = c->logits[b * V + i] > m ? c->logits[b * V + i] : m;
      for (int64_t i = 0; i < V; i++) s += exp(c->logits[b * V + i] - m);
      for (int64_t i = 0; i < V; i++)
        c->logits[b * V + i] = rnd(c->dt, (float)(exp(c->logits[b * V + i] - m) / s));
    }
    /* numpy's astype(int32) of uniform(lo, hi): truncation toward zero */
    c->k[b] = (int32_t)uni(u->klo, u->khi);
    c->p[b] = rnd(c->dt, (float)uni(u->plo, u->phi));
    c->mp[b] = rnd(c->dt, (float)uni(-1, 2));
    for (int64_t i = 0; i < V; i++) c->q[b * V + i] = (float)uni(u->plo, u->phi);
  }
}

static void ut_kernel(void) {
  table tb = {.name = "kernel UT"};
  const aclDataType H = ACL_FLOAT16, BF = ACL_BF16, F = ACL_FLOAT;
  /* name, logits range, topK range, topP range, dtype, inputIsLogits, q, minPs,
   * isNeedLogits, isNeedSampleResult, topKGuess */
  static const kut us[] = {
      {"test_half", 0, 10000, 1, 1024, -1, 1, H, 1, 0, 0, 0, 0, 32},
      {"test_bf16", 0, 10000, 1, 1024, 0, 1, BF, 1, 0, 1, 0, 0, 32},
      {"test_float", 0, 10000, 1, 1024, 0, 1, F, 1, 0, 1, 0, 0, 32},
      {"test_isNeedLogits", 0, 10000, 1, 1024, 0, 1, H, 1, 0, 0, 1, 0, 32},
      {"test_isNeedSampleResult", 0, 10000, 1, 1024, 0, 1, F, 1, 0, 0, 0, 1, 32},
      {"test_inputIsLogits", 0, 10000, 1, 1024, 0, 1, F, 0, 0, 0, 0, 1, 32},
      {"test_qsample", 0, 10000, 1, 1024, 0, 1, H, 1, 1, 0, 0, 0, 32},
      {"test_isInputMinPs", 0, 10000, 1, 1024, 0, 1, H, 1, 0, 1, 0, 0, 32},
      {"test_skipTopK", 0, 10000, -10, 0, 0, 1, H, 1, 0, 0, 0, 0, 32},
      {"test_skipTopP", 0, 10000, 1, 1024, 1, 2, H, 1, 0, 0, 0, 0, 32},
      {"test_LogitsGuessK", 0, 10000, -10, 0, 0, 1, H, 1, 0, 0, 0, 0, 32},
      {"test_guessK", 0, 10000, -10, 0, 0, 1, H, 0, 0, 0, 0, 0, 32},
      {"test_sortAll", 0, 10000, -10, 0, 0, 1, H, 1, 1, 1, 1, 0, 0},
      {"test_sortAllmultinomial", 0, 10000, -10, 0, 0, 1, H, 1, 0, 1, 1, 1, 0},
      {"test_skipTopKTopPSoftmax", 0, 10000, -10, 0, 1, 2, H, 0, 1, 0, 0, 0, 32},
      {"test_skipTopKTopP", 0, 10000, -10, 0, 1, 2, H, 1, 1, 0, 1, 0, 32},
      {"test_isInputMinPsGlobal", 0, 10000, -2, -1, 0, 1, H, 1, 0, 1, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
    const kut *u = &us[i];
    vcase c = alloc_case(u->name, u->dt, 8, 64);
    gen_kut(u, &c);
    c.il = u->il;
    c.with_q = u->q;
    c.with_minp = u->minp;
    c.need_logits = u->need_logits;
    c.sr = u->sr;
    c.guess = u->guess;
    tally(&tb, run_value_case(&c), false);
    free_case(&c);
  }
  print_table(&tb);
}

/* ------------------------------------------------------------------ CANN's ST */
#include "top_k_top_p_sample_v2_st_cases.inc"

static void st_cases(void) {
  table tb = {.name = "ST (atk_aclnnTopKTopPSampleV2.json)"};
  const int64_t cap = (int64_t)1 << 21; /* elements per case; larger cases: fewer rows */
  int cut = 0, refused = 0;
  for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
    const st_case *s = &st[i];
    int64_t B = s->B;
    if (B * s->V > cap) {
      B = cap / s->V > 0 ? cap / s->V : 1;
      cut++;
    }
    bool listed = B != s->B;
    if (s->sr) {
      /* q with isNeedSampleResult: CANN's tiling refuses; the golden ignores q there */
      ecase e = base_case(s->dt);
      for (int t = 0; t < NT; t++) {
        e.d0[t] = B;
        e.d1[t] = e.rank[t] == 2 ? s->V : 0;
      }
      e.name = "ST case with q and isNeedSampleResult";
      e.want = ACLNN_ERR_INNER_TILING_ERROR;
      e.sr = true;
      bool ok = run_error_case(&e);
      refused += ok;
      listed = true;
      if (!ok) {
        tally(&tb, false, true);
        continue;
      }
    }
    char name[64];
    snprintf(name, sizeof name, "ST case %d", s->id);
    vcase c = alloc_case(name, s->dt, B, s->V);
    for (int64_t b = 0; b < B; b++) {
      for (int64_t j = 0; j < s->V; j++) {
        c.logits[b * s->V + j] = rnd(s->dt, (float)uni(0, 1000));
        c.q[b * s->V + j] = s->q_wide ? (float)uni(-100, 100) : (float)uni(0, 1);
      }
      c.k[b] = (int32_t)tu_rand_range(-1000, 1000);
      c.p[b] = rnd(s->dt, (float)uni(-100, 100));
      c.mp[b] = rnd(s->dt, s->minp_neg ? (float)uni(-1, -0.1) : (float)uni(-1, 2));
    }
    c.with_q = !s->sr;
    c.with_minp = true;
    c.need_logits = s->need_logits;
    c.il = s->il;
    c.sr = s->sr;
    c.guess = s->guess;
    c.ks_max = s->ks_max;
    tally(&tb, run_value_case(&c), listed);
    free_case(&c);
  }
  print_table(&tb);
  printf(
      "  ST: %d cases with q and isNeedSampleResult refused by the tiling (561002) and "
      "replayed without q; %d cases cut to at most %lld elements\n",
      refused, cut, (long long)cap);
}

/* ------------------------------------------------------------------ own value cases */
/* Logits in [-4, 4] (where top-p, min-p and q matter), every parameter through its
 * ranges and edges, every attribute, padded rows, the three dtypes. */
static void value_grid(void) {
  table tb = {.name = "own value cases"};
  static const int32_t ks[] = {-3, 0, 1, 2, 7, 1024, 1025, 40, -1, 3, 9, 15};
  static const float ps[] = {0.0f, 0.25f, 0.6f, 0.95f, 1.0f,
                             1.5f, -0.2f, NAN,  0.4f,  0.8f};
  static const float mps[] = {0.0f, -0.3f, 0.05f, 0.2f, 0.7f, 1.0f, 3.0f, NAN, 0.1f};
  const int64_t Vs[] = {1, 5, 64, 1500};
  const aclDataType dts[3] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
  for (int d = 0; d < 3; d++)
    for (int vi = 0; vi < 4; vi++)
      for (int mode = 0; mode < 8; mode++) {
        int64_t V = Vs[vi], B = 20;
        vcase c = alloc_case("grid", dts[d], B, V);
        c.with_q = mode & 1;
        c.need_logits = (mode >> 1) & 1;
        c.sr = mode >= 4 && !c.with_q;
        c.with_minp = mode != 2;
        c.il = mode != 5 && mode != 6;
        c.pad = mode == 3 ? 3 : 0;
        c.eps = mode == 2 ? 0.5 : 1e-8;
        c.ks_max = mode == 7 ? 13 : mode == 6 ? 0 : 1024;
        for (int64_t b = 0; b < B; b++) {
          double s = 0.0;
          for (int64_t i = 0; i < V; i++) {
            double v = uni(-4, 4);
            c.logits[b * V + i] = (float)v;
            s += exp(v);
            float e = (float)-log(1.0 - tu_rand_unit());
            c.q[b * V + i] = mode == 3 && i % 3 == 0 ? -e : e;
          }
          for (int64_t i = 0; i < V; i++) {
            float v = c.logits[b * V + i];
            c.logits[b * V + i] = rnd(c.dt, c.il ? v : (float)(exp(v) / s));
          }
          int32_t k = ks[(b + mode) % 12];
          if (b % 7 == 6) k = (int32_t)V;
          if (b % 9 == 8) k = (int32_t)V + 1;
          c.k[b] = k;
          c.p[b] = rnd(c.dt, ps[(b * 3 + vi) % 10]);
          c.mp[b] = rnd(c.dt, mps[(b * 5 + mode) % 9]);
        }
        tally(&tb, run_value_case(&c), false);
        free_case(&c);
      }
  /* all-equal rows: the lowest indices win everywhere */
  vcase c = alloc_case("all equal", ACL_BF16, 4, 300);
  for (int64_t i = 0; i < 4 * 300; i++) c.logits[i] = 1.0f;
  const int32_t k4[4] = {128, 2000, 0, 5};
  const float p4[4] = {1e-30f, 0.52f, 1.0f, 0.3f}, m4[4] = {0.5f, 0.0f, 1.0f, 2.0f};
  for (int b = 0; b < 4; b++) {
    c.k[b] = k4[b];
    c.p[b] = rnd(c.dt, p4[b]);
    c.mp[b] = m4[b];
  }
  c.with_q = c.with_minp = c.need_logits = true;
  tally(&tb, run_value_case(&c), false);
  free_case(&c);
  /* V = 2^20 is allowed: one row, top-k, min-p, q */
  c = alloc_case("V = 2^20", ACL_BF16, 1, 1 << 20);
  for (int64_t i = 0; i < c.V; i++) {
    c.logits[i] = rnd(c.dt, (float)uni(-4, 4));
    c.q[i] = (float)-log(1.0 - tu_rand_unit());
  }
  c.k[0] = 1000;
  c.p[0] = rnd(c.dt, 0.9f);
  c.mp[0] = rnd(c.dt, 0.1f);
  c.with_q = c.with_minp = true;
  tally(&tb, run_value_case(&c), false);
  free_case(&c);
  print_table(&tb);
}

/* ------------------------------------------------------------------ lifecycle */
/* Phase 2 statuses: a workspace smaller than asked; a consumed executor; NULL. */
static void lifecycle(void) {
  ecase e = base_case(ACL_BF16);
  dtensor t[NT];
  for (int i = 0; i < NT; i++) t[i] = make(e.dt[i], e.rank[i], e.d0[i], e.d1[i], 0, NULL);
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  EQ(phase1(t, NULL, 1e-8, false, 32, 1024, true, false, &ws, &ex), ACLNN_SUCCESS);
  void *w = NULL;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  if (ws) {
    EQ(aclnnTopKTopPSampleV2(w, ws - 1, ex, T.stream), ACLNN_ERR_PARAM_INVALID);
    TU_CHECK(untouched(&t[IDX]), "written with a short workspace");
    EQ(phase1(t, NULL, 1e-8, false, 32, 1024, true, false, &ws, &ex), ACLNN_SUCCESS);
  }
  EQ(aclnnTopKTopPSampleV2(w, ws, ex, T.stream), ACLNN_SUCCESS);
  EQ(aclnnTopKTopPSampleV2(w, ws, ex, T.stream), ACLNN_ERR_INNER_NULLPTR);
  EQ(aclnnTopKTopPSampleV2(w, ws, NULL, T.stream), ACLNN_ERR_INNER_NULLPTR);
  if (w) aclrtFree(w);
  for (int i = 0; i < NT; i++) drop(&t[i]);
}

int main(void) {
  acl_test_begin(&T, 20261206, 0);
  doc_error_table();
  code_error_table();
  ut_tiling();
  ut_kernel();
  st_cases();
  value_grid();
  lifecycle();
  printf("value rows compared %ld, within %g of a flip (not compared) %ld\n",
         rows_compared, TOL, rows_ambiguous);
  TU_CHECK(rows_ambiguous * 50 <= rows_compared, "too many undecided rows: %ld",
           rows_ambiguous);
  return acl_test_end(&T, "test_aclnn_top_k_top_p_sample_v2");
}
