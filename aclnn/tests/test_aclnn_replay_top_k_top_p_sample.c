/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnTopKTopPSample (V1) judged by CANN's own tests (ops-nn,
 * index/top_k_top_p_sample/tests/ut): every case of its tiling UT and its kernel UT,
 * replayed through the aclnn entry points. Neither gives a golden: every selected index
 * (and, with isNeedLogits, every element of logitsTopKPSelect) is compared with one
 * computed here in double precision from CANN's formula (its doc's rules): top-k for
 * 1 <= k <= min(V, 1024), else skipped; probabilities summed from the top and the
 * filter cut where the running sum first exceeds p (p outside (0, 1) skips top-p);
 * softmax of what is kept; argmax of probs / (|q| + eps) with q by rank in filtered
 * rows, plain argmax without q. A row whose golden decision is within 1e-5 of flipping
 * (f32 against double) is counted, not compared.
 *   tiling UT (TOP_K_TOP_P_SAMPLE_001_FLOAT16, _002_BFLOAT16): [8, 64] logits, topK [8]
 *     INT32, topP [8] of the logits' dtype, q [8, 64] FLOAT, eps 1e-8, isNeedLogits
 *     false, topKGuess 32: accepted; run with gen_data.py's ranges and the golden.
 *   kernel UT (top_k_top_p_sample_test_half, _bf16, _isNeedLogits): gen_data.py's data
 *     (logits uniform in [0, 10000), topK an integer in [1, 1024), topP uniform in
 *     [0, 1), in the logits' dtype), eps 1e-8, topKGuess 32; q is GmAlloc'd and never
 *     filled there: replayed with exponential noise and without q.
 * Prints passed / listed / total per table. */
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

typedef struct tally {
  int passed, listed, total;
} tally;

static void tally_print(const char *table, const tally *t) {
  printf("%s: %d passed, %d listed (docs/aclnn.md), %d total\n", table, t->passed,
         t->listed, t->total);
}

/* gen_data.py's ranges over [B, V] (q: exponential noise), rounded to dt. */
static vcase gen_data(aclDataType dt, int64_t B, int64_t V, bool with_q,
                      bool need_logits) {
  vcase c = alloc_case(dt, B, V);
  for (int64_t i = 0; i < B * V; i++) {
    c.logits[i] = from_half(dt, to_half(dt, (float)uni(0, 10000)));
    c.q[i] = noise(false);
  }
  for (int64_t b = 0; b < B; b++) {
    c.k[b] = (int32_t)uni(1, 1024); /* numpy's astype(int32) truncates */
    c.p[b] = from_half(dt, to_half(dt, (float)uni(0, 1)));
  }
  c.with_q = with_q;
  c.need_logits = need_logits;
  return c;
}

static bool run_one(aclDataType dt, bool with_q, bool need_logits) {
  long f0 = tu_failures;
  vcase c = gen_data(dt, 8, 64, with_q, need_logits);
  run_value_case(&c);
  free_case(&c);
  return tu_failures == f0;
}

static void test_tiling_ut(void) {
  static const struct {
    const char *name;
    aclDataType dt;
  } U[2] = {{"TOP_K_TOP_P_SAMPLE_001_FLOAT16", ACL_FLOAT16},
            {"TOP_K_TOP_P_SAMPLE_002_BFLOAT16", ACL_BF16}};
  tally t = {0};
  for (int i = 0; i < 2; i++) {
    t.total++;
    bool ok = run_one(U[i].dt, true, false);
    TU_CHECK(ok, "%s", U[i].name);
    t.passed += ok;
  }
  tally_print("tiling UT", &t);
}

static void test_kernel_ut(void) {
  static const struct {
    const char *name;
    aclDataType dt;
    bool need_logits;
  } U[3] = {{"top_k_top_p_sample_test_half", ACL_FLOAT16, false},
            {"top_k_top_p_sample_test_bf16", ACL_BF16, false},
            {"top_k_top_p_sample_test_isNeedLogits", ACL_FLOAT16, true}};
  tally t = {0};
  for (int i = 0; i < 3; i++) {
    t.total++;
    bool ok = true;
    for (int q = 0; q < 2; q++) ok &= run_one(U[i].dt, q == 0, U[i].need_logits);
    TU_CHECK(ok, "%s", U[i].name);
    t.passed += ok;
  }
  tally_print("kernel UT", &t);
}

int main(void) {
  acl_test_begin(&T, 20261206, 0);
  test_tiling_ut();
  test_kernel_ut();
  printf("value rows compared %ld, within %g of a flip (not compared) %ld\n",
         rows_compared, TOL, rows_ambiguous);
  TU_CHECK(rows_ambiguous * 10 <= rows_compared, "too many undecided rows: %ld",
           rows_ambiguous);
  return acl_test_end(&T, "test_aclnn_replay_top_k_top_p_sample");
}
