/* SPDX-License-Identifier: Apache-2.0 */
/* sample_top_k_top_p_ex: token ids and filtered rows against a reference written here
 * from the rules the header states (CANN's aclnnTopKTopPSample: k range with a cap, the
 * running sum of probabilities from the top cut where it first exceeds p, |q| + eps,
 * noise by rank or by token, softmax of probabilities for top-p-only rows or their
 * renormalization), in double precision, not from the library's code; rows whose
 * decision is within 1e-5 of flipping are counted, not compared. Then f32/f16/bf16,
 * strided views, every option, results byte-identical for 1, 3 and 8 threads and every
 * ISA, the error table with outputs unchanged after each refusal. */
#include <math.h>
#include <stdbool.h>

#include "convert_ref.h"
#include "harness.h"
#include "llmk/llmk.h"

#define TOL 1e-5

static float rnd(llmk_dtype dt, float v) {
  if (dt == LLMK_F32) return v;
  ref_fmt f = dt == LLMK_F16 ? REF_F16 : REF_BF16;
  return (float)ref_decode(f, ref_encode(f, v));
}

static void put(llmk_dtype dt, void *base, int64_t off, float v) {
  if (dt == LLMK_F32) {
    ((float *)base)[off] = v;
    return;
  }
  ((uint16_t *)base)[off] = (uint16_t)ref_encode(dt == LLMK_F16 ? REF_F16 : REF_BF16, v);
}

/* ------------------------------------------------------------- reference */
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

typedef struct opts {
  bool has_k, has_p, has_q;
  llmk_sample_ex_options o;
} opts;

static int64_t ref_row(const double *x, int64_t V, int64_t k, double p, const float *q,
                       const opts *op, unsigned char *kept, bool *amb) {
  int64_t *C = malloc((size_t)V * sizeof *C);
  double *a = malloc((size_t)V * sizeof *a), *w = malloc((size_t)V * sizeof *w);
  for (int64_t i = 0; i < V; i++) C[i] = i;
  g_x = x;
  qsort(C, (size_t)V, sizeof *C, rank_cmp);
  int64_t kcap = op->o.k_max > 0 && op->o.k_max < V ? op->o.k_max : V, n;
  bool topk = op->has_k && k >= 1 && k <= kcap, sorted = true;
  bool p_only = !topk && op->has_p && !(p <= 0 || p >= 1);
  *amb = false;
  if (topk || p_only) {
    int64_t m = topk ? k : V;
    if (topk) {
      for (int64_t j = 0; j < m; j++) a[j] = x[C[j]];
      softmax_d(a, m, w);
    } else {
      softmax_d(x, V, a);
      for (int64_t j = 0; j < m; j++) w[j] = a[C[j]];
    }
    n = m;
    if (p_only || (op->has_p && p > 0 && p < 1)) {
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
      softmax_d(a, n, w);
    } else if (op->o.resoftmax_top_p) {
      for (int64_t j = 0; j < n; j++) a[j] = w[j];
      softmax_d(a, n, w);
    } else {
      double s = 0.0;
      for (int64_t j = 0; j < n; j++) s += w[j];
      for (int64_t j = 0; j < n; j++) w[j] /= s;
    }
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
    if (q)
      s /= fabs((double)q[sorted && op->o.q_by_rank ? j : C[j]]) +
           (double)(float)op->o.eps;
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

/* ------------------------------------------------------------- one case */
static long compared, undecided;

typedef struct tcase {
  llmk_dtype dt;
  int64_t B, V, pad;
  opts op;
  float *x; /* [B][V], dt's values */
  int64_t *k;
  float *p; /* dt's values */
  float *q; /* [B][V] */
} tcase;

static llmk_status run_native(const tcase *c, int threads, int64_t *ids, float *filt) {
  int64_t ld = c->V + c->pad;
  size_t esz = c->dt == LLMK_F32 ? 4 : 2;
  void *lg = calloc((size_t)(c->B * ld + 1), esz), *pp = calloc((size_t)c->B + 1, esz);
  for (int64_t b = 0; b < c->B; b++) {
    for (int64_t i = 0; i < c->V; i++) put(c->dt, lg, b * ld + i, c->x[b * c->V + i]);
    put(c->dt, pp, b, c->p[b]);
  }
  llmk_tensor tl, tp, tk, tq, ti, tf;
  int64_t sh[2] = {c->B, c->V}, st[2] = {ld, 1};
  llmk_tensor_init(&tl, c->dt, 2, sh, st, lg);
  llmk_tensor_init(&tp, c->dt, 1, sh, NULL, pp);
  llmk_tensor_init(&tk, LLMK_I64, 1, sh, NULL, c->k);
  llmk_tensor_init(&tq, LLMK_F32, 2, sh, NULL, c->q);
  llmk_tensor_init(&ti, LLMK_I64, 1, sh, NULL, ids);
  llmk_tensor_init(&tf, LLMK_F32, 2, sh, NULL, filt);
  llmk_context *ctx = NULL;
  llmk_context_create(threads, &ctx);
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status s = llmk_sample_top_k_top_p_ex_get_workspace_size(
      &tl, c->op.has_p ? &tp : NULL, c->op.has_k ? &tk : NULL, c->op.has_q ? &tq : NULL,
      &c->op.o, &ti, filt ? &tf : NULL, &ws, &plan);
  if (s == LLMK_SUCCESS) {
    void *w = ws ? malloc(ws) : NULL;
    s = llmk_apply_top_k_top_p(w, ws, plan, ctx);
    free(w);
    llmk_plan_destroy(plan);
  }
  llmk_context_destroy(ctx);
  free(lg);
  free(pp);
  return s;
}

static void check_case(const tcase *c) {
  int64_t B = c->B, V = c->V;
  int64_t *ids = calloc((size_t)B, 8), *ids2 = calloc((size_t)B, 8);
  float *f = calloc((size_t)(B * V), 4), *f2 = calloc((size_t)(B * V), 4);
  TU_CHECK(run_native(c, 1, ids, f) == LLMK_SUCCESS, "%s", llmk_last_error());
  double *x = malloc((size_t)V * sizeof *x);
  unsigned char *kept = malloc((size_t)V);
  for (int64_t b = 0; b < B; b++) {
    for (int64_t i = 0; i < V; i++) x[i] = c->x[b * V + i];
    bool amb;
    int64_t want = ref_row(x, V, c->k[b], c->p[b], c->op.has_q ? c->q + b * V : NULL,
                           &c->op, kept, &amb);
    if (amb) {
      undecided++;
      continue;
    }
    compared++;
    TU_CHECK(ids[b] == want, "dt %d V %lld row %lld k %lld p %g: %lld, reference %lld",
             (int)c->dt, (long long)V, (long long)b, (long long)c->k[b], (double)c->p[b],
             (long long)ids[b], (long long)want);
    int64_t bad = 0;
    for (int64_t i = 0; i < V; i++) {
      float e = kept[i] ? (float)x[i] : c->op.o.fill;
      if (memcmp(&f[b * V + i], &e, 4) != 0) bad++;
    }
    TU_CHECK(bad == 0, "row %lld: %lld filtered entries differ", (long long)b,
             (long long)bad);
  }
  /* the same bytes for other thread counts and every ISA of this CPU */
  for (int isa = 0; isa < TU_NUM_ISAS; isa++) {
    if (!TU_ISA_HERE(isa)) continue;
    llmk_set_max_isa((llmk_isa)isa);
    for (int th = 3; th <= 8; th += 5) {
      memset(ids2, 0, (size_t)B * 8);
      memset(f2, 0, (size_t)(B * V) * 4);
      run_native(c, th, ids2, f2);
      TU_CHECK(memcmp(ids, ids2, (size_t)B * 8) == 0 &&
                   memcmp(f, f2, (size_t)(B * V) * 4) == 0,
               "results differ with %d threads, isa %d", th, isa);
    }
  }
  llmk_set_max_isa(llmk_get_native_isa());
  free(x);
  free(kept);
  free(ids);
  free(ids2);
  free(f);
  free(f2);
}

static double uni(double lo, double hi) {
  return lo + (hi - lo) * tu_rand_unit();
}

static void grid(void) {
  static const int64_t ks[] = {-2, 0, 1, 3, 17, 1024, 1025, 200, 2};
  static const float ps[] = {0.0f, 0.3f, 0.7f, 0.99f, 1.0f, 2.0f, -1.0f, NAN, 0.5f};
  const llmk_dtype dts[3] = {LLMK_F32, LLMK_F16, LLMK_BF16};
  const int64_t Vs[] = {1, 9, 300, 5000};
  for (int d = 0; d < 3; d++)
    for (int vi = 0; vi < 4; vi++)
      for (int m = 0; m < 8; m++) {
        tcase c = {.dt = dts[d], .B = 18, .V = Vs[vi], .pad = m & 1 ? 5 : 0};
        c.op.has_k = m != 5;
        c.op.has_p = m != 6;
        c.op.has_q = m != 7;
        c.op.o.eps = m == 2 ? 0.25 : 1e-8;
        c.op.o.k_max = m < 4 ? 1024 : m == 4 ? 10 : 0;
        c.op.o.q_by_rank = m != 3;
        c.op.o.resoftmax_top_p = m % 2 == 0;
        c.op.o.fill = m == 1 ? 0.0f : -INFINITY;
        int64_t B = c.B, V = c.V;
        c.x = malloc((size_t)(B * V) * 4);
        c.q = malloc((size_t)(B * V) * 4);
        c.k = malloc((size_t)B * 8);
        c.p = malloc((size_t)B * 4);
        double spread = m == 4 ? 12.0 : 3.0;
        for (int64_t i = 0; i < B * V; i++) {
          c.x[i] = rnd(c.dt, (float)uni(-spread, spread));
          float e = (float)-log(1.0 - tu_rand_unit());
          c.q[i] = m == 3 && i % 3 == 0 ? -e : e;
        }
        for (int64_t b = 0; b < B; b++) {
          c.k[b] = b % 8 == 7 ? V : ks[(b + (int64_t)m) % 9];
          c.p[b] = rnd(c.dt, ps[(b * 5 + vi) % 9]);
        }
        check_case(&c);
        free(c.x);
        free(c.q);
        free(c.k);
        free(c.p);
      }
}

/* ------------------------------------------------------------- errors */
static void errors(void) {
  float lg[12] = {0}, q[12] = {0}, filt[12], p[3] = {0.5f, 0.5f, 0.5f};
  int64_t k[3] = {1, 2, 3}, ids[3];
  int64_t sh[2] = {3, 4}, sh5[2] = {3, 5};
  llmk_tensor tl, tp, tk, tq, ti, tf, bad, t32;
  llmk_tensor_init(&tl, LLMK_F32, 2, sh, NULL, lg);
  llmk_tensor_init(&tp, LLMK_F32, 1, sh, NULL, p);
  llmk_tensor_init(&tk, LLMK_I64, 1, sh, NULL, k);
  llmk_tensor_init(&tq, LLMK_F32, 2, sh, NULL, q);
  llmk_tensor_init(&ti, LLMK_I64, 1, sh, NULL, ids);
  llmk_tensor_init(&tf, LLMK_F32, 2, sh, NULL, filt);
  llmk_sample_ex_options o = {.eps = 1e-8, .k_max = 1024, .fill = -INFINITY};
  struct {
    const char *name;
    llmk_status want;
    const llmk_tensor *t[6];
    bool null_opts;
  } rows[12];
  int n = 0;
#define ROW(nm, st, a, b, c, d, e, f) \
  rows[n++] = (__typeof__(rows[0])){nm, st, {a, b, c, d, e, f}, false}
  ROW("logits NULL", LLMK_ERROR_NULL_POINTER, NULL, &tp, &tk, &tq, &ti, &tf);
  ROW("token_ids NULL", LLMK_ERROR_NULL_POINTER, &tl, &tp, &tk, &tq, NULL, &tf);
  ROW("options NULL", LLMK_ERROR_NULL_POINTER, &tl, &tp, &tk, &tq, &ti, &tf);
  rows[n - 1].null_opts = true;
  llmk_tensor_init(&t32, LLMK_I32, 2, sh, NULL, q);
  ROW("q i32", LLMK_ERROR_INVALID_DTYPE, &tl, &tp, &tk, &t32, &ti, &tf);
  ROW("filtered i32", LLMK_ERROR_INVALID_DTYPE, &tl, &tp, &tk, &tq, &ti, &t32);
  ROW("k f32", LLMK_ERROR_INVALID_DTYPE, &tl, &tp, &tp, &tq, &ti, &tf);
  llmk_tensor_init(&bad, LLMK_F32, 2, sh5, NULL, q);
  ROW("q [3, 5]", LLMK_ERROR_INVALID_SHAPE, &tl, &tp, &tk, &bad, &ti, &tf);
  ROW("filtered [3, 5]", LLMK_ERROR_INVALID_SHAPE, &tl, &tp, &tk, &tq, &ti, &bad);
  ROW("p [3, 4]", LLMK_ERROR_INVALID_SHAPE, &tl, &tq, &tk, &tq, &ti, &tf);
  ROW("filtered over q", LLMK_ERROR_OVERLAP, &tl, &tp, &tk, &tq, &ti, &tq);
#undef ROW
  for (int r = 0; r < n; r++) {
    for (int i = 0; i < 12; i++) filt[i] = 7.0f;
    ids[0] = ids[1] = ids[2] = 9;
    size_t ws = 1;
    llmk_plan *plan = (llmk_plan *)&ws;
    llmk_status s = llmk_sample_top_k_top_p_ex_get_workspace_size(
        rows[r].t[0], rows[r].t[1], rows[r].t[2], rows[r].t[3],
        rows[r].null_opts ? NULL : &o, rows[r].t[4], rows[r].t[5], &ws, &plan);
    TU_CHECK(s == rows[r].want, "%s: %d (%s)", rows[r].name, (int)s, llmk_last_error());
    TU_CHECK(plan == NULL && ws == 0, "%s: plan or size set", rows[r].name);
    TU_CHECK(strstr(llmk_last_error(), "sample_top_k_top_p_ex") != NULL, "%s: '%s'",
             rows[r].name, llmk_last_error());
    TU_CHECK(filt[0] == 7.0f && ids[0] == 9, "%s: written", rows[r].name);
  }
}

int main(void) {
  tu_seed(5512);
  grid();
  errors();
  printf("rows compared %ld, within %g of a flip (not compared) %ld\n", compared, TOL,
         undecided);
  TU_CHECK(undecided * 50 <= compared, "too many undecided rows: %ld", undecided);
  return tu_finish("test_sample_top_k_top_p_ex");
}
