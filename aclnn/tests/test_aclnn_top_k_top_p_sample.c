/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnTopKTopPSample from C. Values: every selected index (and, with isNeedLogits, every
 * element of logitsTopKPSelect) equals a golden computed here in double precision from
 * CANN's formula (its doc and kernel, index/top_k_top_p_sample of ops-nn), not from the
 * library: top-k for 1 <= k <= min(V, 1024), the running sum of probabilities from the
 * top cut where it first exceeds p, softmax of the probabilities for top-p-only rows,
 * argmax of w / (|q| + eps) with q by rank in filtered rows. A row whose golden decision
 * is within 1e-5 of flipping (f32 against double) is counted, not compared; the count
 * must stay small. Then the error table (status, and outputs byte-identical after each
 * refusal), the executor's lifecycle. CANN's own UT tables are replayed by
 * test_aclnn_replay_top_k_top_p_sample. */
#include <math.h>

#include "aclnn_tspec.h"
#include "aclnnop/aclnn_top_k_top_p_sample.h"

static acl_test T;

/* ---------------------------------------------------------------- halves */
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

/* ---------------------------------------------------------------- golden */
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

#define TOL 1e-5

/* One row by CANN's formula; *amb when a decision is within TOL of flipping. kept[i]:
 * whether entry i survives the filters. */
static int64_t golden_row(const double *x, int64_t V, int64_t k, double p, const float *q,
                          double eps, unsigned char *kept, bool *amb) {
  int64_t *C = malloc((size_t)V * sizeof *C);
  double *a = malloc((size_t)V * sizeof *a), *w = malloc((size_t)V * sizeof *w);
  for (int64_t i = 0; i < V; i++) C[i] = i;
  g_x = x;
  qsort(C, (size_t)V, sizeof *C, rank_cmp);
  int64_t kcap = V < 1024 ? V : 1024, n;
  bool topk = k >= 1 && k <= kcap, sorted = true;
  *amb = false;
  if (topk || !(p <= 0 || p >= 1)) {
    int64_t m = topk ? k : V;
    if (topk) {
      for (int64_t j = 0; j < m; j++) a[j] = x[C[j]];
      softmax_d(a, m, w);
    } else {
      softmax_d(x, V, a);
      for (int64_t j = 0; j < m; j++) w[j] = a[C[j]];
    }
    n = m;
    if (!topk || (p > 0 && p < 1)) {
      double c = 0.0;
      for (int64_t j = 0; j < m; j++) {
        c += w[j];
        if (fabs(c - p) < TOL) *amb = true;
        if (c > p) {
          n = j + 1;
          break;
        }
      }
    }
    if (topk) {
      for (int64_t j = 0; j < n; j++) a[j] = x[C[j]];
    } else {
      for (int64_t j = 0; j < n; j++) a[j] = w[j]; /* the probabilities, again */
    }
    softmax_d(a, n, w);
  } else {
    sorted = false;
    n = V;
    for (int64_t i = 0; i < V; i++) C[i] = i;
    softmax_d(x, V, w);
  }
  for (int64_t i = 0; i < V; i++) kept[i] = 0;
  for (int64_t j = 0; j < n; j++) kept[C[j]] = 1;
  int64_t best = 0;
  double bs = -1.0, second = -1.0;
  for (int64_t j = 0; j < n; j++) {
    double s = w[j];
    if (q) s /= fabs((double)q[sorted ? j : C[j]]) + (double)(float)eps;
    if (s > bs) {
      second = bs;
      bs = s;
      best = j;
    } else if (s > second) {
      second = s;
    }
  }
  if (second > 0 && bs - second > 0 && bs - second < TOL * bs) *amb = true;
  int64_t tok = C[best];
  free(C);
  free(a);
  free(w);
  return tok;
}

/* ---------------------------------------------------------------- tensors */
typedef struct dtensor {
  void *dev;
  aclTensor *t;
  size_t bytes;
} dtensor;

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
    memset(r.dev, 0x5a, r.bytes);
  r.t = aclCreateTensor(dims, (uint64_t)rank, dt, strides, 0, ACL_FORMAT_ND, dims,
                        (uint64_t)rank, r.dev);
  return r;
}

static void drop(dtensor *d) {
  if (d->t) aclDestroyTensor(d->t);
  if (d->dev) aclrtFree(d->dev);
  memset(d, 0, sizeof *d);
}

/* ---------------------------------------------------------------- value cases */
typedef struct vcase {
  aclDataType dt;
  int64_t B, V, pad;
  bool with_q, need_logits;
  double eps;
  float *logits; /* [B][V], already of dt's values */
  int32_t *k;
  float *p; /* of dt's values */
  float *q; /* [B][V] */
} vcase;

static long rows_compared, rows_ambiguous;

static void run_value_case(const vcase *c) {
  int64_t B = c->B, V = c->V, ld = V + c->pad;
  size_t nl = (size_t)((B - 1) * ld + V);
  uint16_t *hl = calloc(nl, 2), *hp = calloc((size_t)B, 2);
  for (int64_t b = 0; b < B; b++) {
    for (int64_t i = 0; i < V; i++) hl[b * ld + i] = to_half(c->dt, c->logits[b * V + i]);
    hp[b] = to_half(c->dt, c->p[b]);
  }
  dtensor lg = make(c->dt, 2, B, V, c->pad, hl), tk = make(ACL_INT32, 1, B, 0, 0, c->k);
  dtensor tp = make(c->dt, 1, B, 0, 0, hp);
  dtensor q = c->with_q ? make(ACL_FLOAT, 2, B, V, 0, c->q) : (dtensor){0};
  dtensor idx = make(ACL_INT64, 1, B, 0, 0, NULL),
          sel = make(ACL_FLOAT, 2, B, V, 0, NULL);
  unsigned char *sel0 = malloc(sel.bytes);
  memcpy(sel0, sel.dev, sel.bytes);
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = aclnnTopKTopPSampleGetWorkspaceSize(
      lg.t, tk.t, tp.t, q.t, c->eps, c->need_logits, 32, idx.t, sel.t, &ws, &ex);
  EQ(st, ACLNN_SUCCESS);
  if (st == ACLNN_SUCCESS) {
    void *w = NULL;
    if (ws) EQ(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EQ(aclnnTopKTopPSample(w, ws, ex, T.stream), ACLNN_SUCCESS);
    if (w) aclrtFree(w);
    double *x = malloc((size_t)V * sizeof *x);
    unsigned char *kept = malloc((size_t)V);
    for (int64_t b = 0; b < B; b++) {
      for (int64_t i = 0; i < V; i++) x[i] = from_half(c->dt, hl[b * ld + i]);
      bool amb;
      int64_t want = golden_row(x, V, c->k[b], (double)from_half(c->dt, hp[b]),
                                c->with_q ? c->q + b * V : NULL, c->eps, kept, &amb);
      if (amb) {
        rows_ambiguous++;
        continue;
      }
      rows_compared++;
      int64_t got = ((const int64_t *)idx.dev)[b];
      TU_CHECK(got == want,
               "dt %d B %lld V %lld row %lld: k %d p %g: index %lld, golden %lld",
               (int)c->dt, (long long)B, (long long)V, (long long)b, c->k[b],
               (double)from_half(c->dt, hp[b]), (long long)got, (long long)want);
      if (c->need_logits) {
        const float *o = (const float *)sel.dev + b * V;
        int64_t bad = 0;
        for (int64_t i = 0; i < V; i++) {
          float e = kept[i] ? (float)x[i] : -INFINITY;
          if (memcmp(&o[i], &e, 4) != 0) bad++;
        }
        TU_CHECK(bad == 0, "row %lld: %lld elements of logitsTopKPSelect differ",
                 (long long)b, (long long)bad);
      }
    }
    if (!c->need_logits)
      TU_CHECK(memcmp(sel.dev, sel0, sel.bytes) == 0,
               "logitsTopKPSelect written without isNeedLogits");
    free(x);
    free(kept);
  }
  free(sel0);
  free(hl);
  free(hp);
  drop(&lg);
  drop(&tk);
  drop(&tp);
  drop(&q);
  drop(&idx);
  drop(&sel);
}

static double uni(double lo, double hi) {
  return lo + (hi - lo) * tu_rand_unit();
}

/* exponential noise, as samplers draw q; negative values sometimes (|q| is used) */
static float noise(bool signs) {
  float e = (float)-log(1.0 - tu_rand_unit());
  return signs && tu_rand_unit() < 0.3 ? -e : e;
}

static vcase alloc_case(aclDataType dt, int64_t B, int64_t V) {
  vcase c = {.dt = dt, .B = B, .V = V, .eps = 1e-8};
  c.logits = malloc((size_t)(B * V) * sizeof(float));
  c.q = malloc((size_t)(B * V) * sizeof(float));
  c.k = malloc((size_t)B * sizeof(int32_t));
  c.p = malloc((size_t)B * sizeof(float));
  return c;
}

static void free_case(vcase *c) {
  free(c->logits);
  free(c->q);
  free(c->k);
  free(c->p);
}

/* Own cases: logits in [-4, 4] (where top-p and q matter), k and p through their
 * ranges and edges, with and without q and isNeedLogits, padded rows. */
static void value_grid(void) {
  static const int32_t ks[] = {-3, 0, 1, 2, 7, 1024, 1025, 40, -1, 3};
  static const float ps[] = {0.0f, 0.25f, 0.6f, 0.95f, 1.0f,
                             1.5f, -0.2f, NAN,  0.4f,  0.8f};
  const int64_t Vs[] = {1, 5, 64, 1500};
  const aclDataType dts[2] = {ACL_FLOAT16, ACL_BF16};
  for (int d = 0; d < 2; d++)
    for (int vi = 0; vi < 4; vi++)
      for (int mode = 0; mode < 4; mode++) {
        int64_t V = Vs[vi], B = 20;
        vcase c = alloc_case(dts[d], B, V);
        c.with_q = mode & 1;
        c.need_logits = (mode >> 1) & 1;
        c.pad = mode == 3 ? 3 : 0;
        c.eps = mode == 2 ? 0.5 : 1e-8;
        for (int64_t i = 0; i < B * V; i++) {
          c.logits[i] = from_half(c.dt, to_half(c.dt, (float)uni(-4, 4)));
          c.q[i] = noise(mode == 3);
        }
        for (int64_t b = 0; b < B; b++) {
          int32_t k = ks[(b + mode) % 10];
          if (b % 7 == 6) k = (int32_t)V;
          if (b % 9 == 8) k = (int32_t)V + 1;
          c.k[b] = k;
          c.p[b] = from_half(c.dt, to_half(c.dt, ps[(b * 3 + vi) % 10]));
        }
        run_value_case(&c);
        free_case(&c);
      }
  /* all-equal rows (CANN's sample in small): the lowest indices win */
  vcase c = alloc_case(ACL_BF16, 4, 300);
  for (int64_t i = 0; i < 4 * 300; i++) {
    c.logits[i] = 1.0f;
    c.q[i] = 1.0f;
  }
  const int32_t k4[4] = {128, 2000, 0, 5};
  const float p4[4] = {1e-30f, 0.5f, 1.0f, 0.3f};
  for (int b = 0; b < 4; b++) {
    c.k[b] = k4[b];
    c.p[b] = from_half(c.dt, to_half(c.dt, p4[b]));
  }
  c.with_q = true;
  c.need_logits = true;
  run_value_case(&c);
  free_case(&c);
}

/* ---------------------------------------------------------------- errors */
enum { LG, TK, TP, Q, IDX, SEL, NT };

typedef struct ecase {
  const char *name;
  aclnnStatus want;
  aclDataType dt[NT];
  int rank[NT];
  int64_t d0[NT], d1[NT];
  bool null[NT], null_ws, null_ex, nz_logits, sel_over_logits;
} ecase;

static ecase base_case(void) {
  ecase e = {0};
  const aclDataType dt[NT] = {ACL_FLOAT16, ACL_INT32, ACL_FLOAT16,
                              ACL_FLOAT,   ACL_INT64, ACL_FLOAT};
  const int rank[NT] = {2, 1, 1, 2, 1, 2};
  for (int i = 0; i < NT; i++) {
    e.dt[i] = dt[i];
    e.rank[i] = rank[i];
    e.d0[i] = 8;
    e.d1[i] = rank[i] == 2 ? 64 : 0;
  }
  e.want = ACLNN_SUCCESS;
  return e;
}

static void run_error_case(const ecase *e) {
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
  aclTensor *lg_alias = NULL;
  if (e->sel_over_logits) { /* the logits on the first bytes of logitsTopKPSelect */
    int64_t dims[2] = {e->d0[LG], e->d1[LG]};
    lg_alias =
        aclCreateTensor(dims, 2, e->dt[LG], NULL, 0, ACL_FORMAT_ND, dims, 2, t[SEL].dev);
  }
  aclTensor *a[NT];
  for (int i = 0; i < NT; i++) a[i] = e->null[i] ? NULL : t[i].t;
  if (lg_alias) a[LG] = lg_alias;
  uint64_t ws = 7;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = aclnnTopKTopPSampleGetWorkspaceSize(
      a[LG], a[TK], a[TP], a[Q], 1e-8, true, 32, a[IDX], a[SEL], e->null_ws ? NULL : &ws,
      e->null_ex ? NULL : &ex);
  TU_CHECK(st == e->want, "%s: status %d, want %d (%s)", e->name, (int)st, (int)e->want,
           aclGetRecentErrMsg());
  if (st == ACLNN_SUCCESS) {
    void *w = NULL;
    if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    EQ(aclnnTopKTopPSample(w, ws, ex, T.stream), ACLNN_SUCCESS);
    if (w) aclrtFree(w);
  } else {
    if (!e->null_ex) TU_CHECK(ex == NULL, "%s: executor set on refusal", e->name);
    const char *msg = aclGetRecentErrMsg();
    TU_CHECK(msg && (strstr(msg, "aclnnTopKTopPSample") ||
                     strstr(msg, "sample_top_k_top_p_ex")),
             "%s: message '%s'", e->name, msg ? msg : "(null)");
    for (int i = 0; i < NT; i++)
      TU_CHECK(memcmp(before[i], t[i].dev, t[i].bytes) == 0, "%s: tensor %d written",
               e->name, i);
  }
  if (lg_alias) aclDestroyTensor(lg_alias);
  for (int i = 0; i < NT; i++) {
    drop(&t[i]);
    free(before[i]);
  }
}

static int error_table(void) {
  int n = 0;
  ecase e;
#define CASE(label, status, ...) \
  do {                           \
    e = base_case();             \
    e.name = label;              \
    e.want = status;             \
    __VA_ARGS__;                 \
    run_error_case(&e);          \
    n++;                         \
  } while (0)
  /* the base, [8, 64] with q as in CANN's tiling UT (replayed by the replay test), and
   * its BFLOAT16 form */
  CASE("base FLOAT16", ACLNN_SUCCESS, (void)0);
  CASE("base BFLOAT16", ACLNN_SUCCESS, e.dt[LG] = e.dt[TP] = ACL_BF16);
  CASE("q NULL (no sampling)", ACLNN_SUCCESS, e.null[Q] = true);
  /* 161001 */
  const char *nn[NT] = {
      "logits NULL",           "topK NULL", "topP NULL", NULL, "logitsSelectIdx NULL",
      "logitsTopKPSelect NULL"};
  for (int i = 0; i < NT; i++)
    if (nn[i]) CASE(nn[i], ACLNN_ERR_PARAM_NULLPTR, e.null[i] = true);
  CASE("workspaceSize NULL", ACLNN_ERR_PARAM_NULLPTR, e.null_ws = true);
  CASE("executor NULL", ACLNN_ERR_PARAM_NULLPTR, e.null_ex = true);
  /* 161002: dtypes outside the op definition, formats, overlap */
  CASE("logits FLOAT", ACLNN_ERR_PARAM_INVALID, e.dt[LG] = e.dt[TP] = ACL_FLOAT);
  CASE("logits INT32", ACLNN_ERR_PARAM_INVALID, e.dt[LG] = ACL_INT32);
  CASE("topP BF16 beside FLOAT16 logits", ACLNN_ERR_PARAM_INVALID, e.dt[TP] = ACL_BF16);
  CASE("topP FLOAT", ACLNN_ERR_PARAM_INVALID, e.dt[TP] = ACL_FLOAT);
  CASE("topK INT64", ACLNN_ERR_PARAM_INVALID, e.dt[TK] = ACL_INT64);
  CASE("q FLOAT16", ACLNN_ERR_PARAM_INVALID, e.dt[Q] = ACL_FLOAT16);
  CASE("logitsSelectIdx INT32", ACLNN_ERR_PARAM_INVALID, e.dt[IDX] = ACL_INT32);
  CASE("logitsTopKPSelect FLOAT16", ACLNN_ERR_PARAM_INVALID, e.dt[SEL] = ACL_FLOAT16);
  CASE("logits FRACTAL_NZ", ACLNN_ERR_PARAM_INVALID, e.nz_logits = true);
  CASE("logitsTopKPSelect over logits", ACLNN_ERR_PARAM_INVALID,
       e.sel_over_logits = true);
  /* 561002: the tiling's shapes */
  CASE("logits 1-D", ACLNN_ERR_INNER_TILING_ERROR, e.rank[LG] = 1);
  CASE("logits 3-D", ACLNN_ERR_INNER_TILING_ERROR, e.rank[LG] = 3);
  CASE("topK [9]", ACLNN_ERR_INNER_TILING_ERROR, e.d0[TK] = 9);
  CASE("topP [7]", ACLNN_ERR_INNER_TILING_ERROR, e.d0[TP] = 7);
  CASE("topK 2-D", ACLNN_ERR_INNER_TILING_ERROR, e.rank[TK] = 2; e.d1[TK] = 1);
  CASE("q [8, 65]", ACLNN_ERR_INNER_TILING_ERROR, e.d1[Q] = 65);
  CASE("q [9, 64]", ACLNN_ERR_INNER_TILING_ERROR, e.d0[Q] = 9);
  CASE("q 1-D", ACLNN_ERR_INNER_TILING_ERROR, e.rank[Q] = 1);
  CASE("logitsTopKPSelect [8, 63]", ACLNN_ERR_INNER_TILING_ERROR, e.d1[SEL] = 63);
  CASE("logitsTopKPSelect [8] (CANN's doc table; its tiling wants [8, 64])",
       ACLNN_ERR_INNER_TILING_ERROR, e.rank[SEL] = 1);
  CASE("logitsSelectIdx [9]", ACLNN_ERR_INNER_TILING_ERROR, e.d0[IDX] = 9);
  CASE("B = 0", ACLNN_ERR_INNER_TILING_ERROR,
       e.d0[LG] = e.d0[TK] = e.d0[TP] = e.d0[Q] = e.d0[IDX] = e.d0[SEL] = 0);
  CASE("V = 0", ACLNN_ERR_INNER_TILING_ERROR, e.d1[LG] = e.d1[Q] = e.d1[SEL] = 0);
  CASE("V = 2^20 + 1", ACLNN_ERR_INNER_TILING_ERROR,
       e.d0[LG] = e.d0[TK] = e.d0[TP] = e.d0[Q] = e.d0[IDX] = e.d0[SEL] = 1;
       e.d1[LG] = e.d1[Q] = e.d1[SEL] = (1 << 20) + 1);
#undef CASE
  return n;
}

/* V = 2^20 is allowed (one row, top-k and q). */
static void largest_v(void) {
  vcase c = alloc_case(ACL_BF16, 1, 1 << 20);
  for (int64_t i = 0; i < c.V; i++) {
    c.logits[i] = from_half(c.dt, to_half(c.dt, (float)uni(-4, 4)));
    c.q[i] = noise(false);
  }
  c.k[0] = 1000;
  c.p[0] = from_half(c.dt, to_half(c.dt, 0.9f));
  c.with_q = true;
  run_value_case(&c);
  free_case(&c);
}

/* Phase 2 statuses: a consumed executor; a workspace smaller than asked. */
static void lifecycle(void) {
  ecase e = base_case();
  dtensor t[NT];
  for (int i = 0; i < NT; i++) t[i] = make(e.dt[i], e.rank[i], e.d0[i], e.d1[i], 0, NULL);
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  EQ(aclnnTopKTopPSampleGetWorkspaceSize(t[LG].t, t[TK].t, t[TP].t, t[Q].t, 1e-8, false,
                                         32, t[IDX].t, t[SEL].t, &ws, &ex),
     ACLNN_SUCCESS);
  void *w = NULL;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  if (ws) {
    unsigned char *idx0 = malloc(t[IDX].bytes);
    memcpy(idx0, t[IDX].dev, t[IDX].bytes);
    EQ(aclnnTopKTopPSample(w, ws - 1, ex, T.stream), ACLNN_ERR_PARAM_INVALID);
    TU_CHECK(memcmp(idx0, t[IDX].dev, t[IDX].bytes) == 0,
             "written with a short workspace");
    free(idx0);
    EQ(aclnnTopKTopPSampleGetWorkspaceSize(t[LG].t, t[TK].t, t[TP].t, t[Q].t, 1e-8, false,
                                           32, t[IDX].t, t[SEL].t, &ws, &ex),
       ACLNN_SUCCESS);
  }
  EQ(aclnnTopKTopPSample(w, ws, ex, T.stream), ACLNN_SUCCESS);
  EQ(aclnnTopKTopPSample(w, ws, ex, T.stream), ACLNN_ERR_INNER_NULLPTR);
  EQ(aclnnTopKTopPSample(w, ws, NULL, T.stream), ACLNN_ERR_INNER_NULLPTR);
  if (w) aclrtFree(w);
  for (int i = 0; i < NT; i++) drop(&t[i]);
}

int main(void) {
  acl_test_begin(&T, 20261205, 0);
  value_grid();
  largest_v();
  int ne = error_table();
  lifecycle();
  printf(
      "value rows compared %ld, within %g of a flip (not compared) %ld; error cases %d\n",
      rows_compared, TOL, rows_ambiguous, ne);
  TU_CHECK(rows_ambiguous * 50 <= rows_compared, "too many undecided rows: %ld",
           rows_ambiguous);
  return acl_test_end(&T, "test_aclnn_top_k_top_p_sample");
}
