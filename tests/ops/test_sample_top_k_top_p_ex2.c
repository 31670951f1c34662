/* SPDX-License-Identifier: Apache-2.0 */
/* sample_top_k_top_p_ex2 (CANN aclnnTopKTopPSampleV2's rules): token ids, filtered rows,
 * the kept list (values and indices) against a reference written here in double from the
 * rules the header states (p <= 0 keeps the largest; top-k for 1 <= k <= min(V, k_max);
 * the cut where the running sum from the top reaches p; min-p against the largest kept
 * value, >= 1 keeping one; |q| + eps with q by position in the list; softmax or the
 * values themselves), not from the library's code; rows whose decision is within 1e-5
 * of flipping are counted, not compared. Then f32/f16/bf16, strided views, i32 and i64
 * outputs, every option, results byte-identical for 1, 3 and 8 threads and every ISA,
 * entries of kept_index past the list left alone, the options' struct_size rules and
 * the error table with outputs unchanged after each refusal. */
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
  bool has_k, has_p, has_q, has_minp;
  llmk_sample_ex2_options o;
} opts;

static bool near(double a, double b) {
  return fabs(a - b) <= TOL * (fabs(b) > 1e-3 ? fabs(b) : 1e-3);
}

/* One row: L[0..*n) and vals[0..*n) (the list), the token; *amb when a decision is
 * within TOL of flipping. */
static int64_t ref_row(const double *x, int64_t V, int64_t k, double p, double mp,
                       const float *q, const opts *op, int64_t *L, double *vals,
                       int64_t *n_out, bool *amb) {
  int64_t *C = malloc((size_t)V * sizeof *C);
  double *a = malloc((size_t)V * sizeof *a);
  for (int64_t i = 0; i < V; i++) C[i] = i;
  g_x = x;
  qsort(C, (size_t)V, sizeof *C, rank_cmp);
  bool il = op->o.input_is_logits != 0;
  int64_t kcap = op->o.k_max <= 0 ? 0 : op->o.k_max < V ? op->o.k_max : V, n;
  bool topk = op->has_k && k >= 1 && k <= kcap;
  bool top_p = op->has_p && p > 0 && p < 1;
  *amb = false;
  if (op->has_p && p <= 0) {
    L[0] = C[0];
    vals[0] = il ? 1.0 : x[C[0]];
    n = 1;
  } else if (topk || top_p) {
    int64_t m = topk ? k : V;
    for (int64_t j = 0; j < m; j++) L[j] = C[j];
    if (topk) {
      for (int64_t j = 0; j < m; j++) a[j] = x[C[j]];
      if (il)
        softmax_d(a, m, vals);
      else
        memcpy(vals, a, (size_t)m * sizeof *a);
    } else {
      if (il)
        softmax_d(x, V, a);
      else
        memcpy(a, x, (size_t)V * sizeof *a);
      for (int64_t j = 0; j < m; j++) vals[j] = a[C[j]];
    }
    n = m;
    if (top_p) {
      double c = 0.0;
      for (int64_t j = 0; j < m; j++) {
        c += vals[j];
        if (c != p && near(c, p)) *amb = true;
        if (c >= p) {
          n = j + 1;
          break;
        }
      }
    }
  } else {
    for (int64_t i = 0; i < V; i++) L[i] = i;
    if (il)
      softmax_d(x, V, vals);
    else
      memcpy(vals, x, (size_t)V * sizeof *x);
    n = V;
  }
  if (op->has_minp && mp > 0) {
    int64_t m = 0;
    for (int64_t j = 1; j < n; j++)
      if (vals[j] > vals[m]) m = j;
    if (mp >= 1) {
      L[0] = L[m];
      vals[0] = vals[m];
      n = 1;
    } else {
      double thd = mp * vals[m];
      int64_t t = 0;
      for (int64_t j = 0; j < n; j++) {
        if (vals[j] != thd && near(vals[j], thd)) *amb = true;
        if (vals[j] >= thd) {
          L[t] = L[j];
          vals[t++] = vals[j];
        }
      }
      if (t > 0) n = t;
    }
  }
  int64_t best = 0;
  double bs = -INFINITY, second = -INFINITY;
  for (int64_t j = 0; j < n; j++) {
    double s = vals[j];
    if (q) s /= fabs((double)q[j]) + (double)(float)op->o.eps;
    if (s > bs) {
      second = bs;
      bs = s;
      best = j;
    } else if (s > second) {
      second = s;
    }
  }
  if (second != bs && near(second, bs)) *amb = true;
  *n_out = n;
  free(C);
  free(a);
  return L[best];
}

/* ------------------------------------------------------------- one case */
static long compared, undecided;

typedef struct tcase {
  llmk_dtype dt;
  int64_t B, V, pad;
  bool idx32;
  opts op;
  float *x; /* [B][V], dt's values */
  int64_t *k;
  float *p, *mp; /* dt's values */
  float *q;      /* [B][V] */
} tcase;

typedef struct outs {
  int64_t *ids;
  float *filt, *kv;
  void *ki; /* [B][V] i64 or i32 */
} outs;

#define SENTINEL 0x5b

static outs outs_new(const tcase *c) {
  size_t bv = (size_t)(c->B * c->V);
  outs o = {calloc((size_t)c->B, 8), calloc(bv, 4), calloc(bv, 4), malloc(bv * 8)};
  memset(o.ki, SENTINEL, bv * 8);
  return o;
}

static void outs_free(outs *o) {
  free(o->ids);
  free(o->filt);
  free(o->kv);
  free(o->ki);
}

static llmk_status run_native(const tcase *c, int threads, outs *o) {
  int64_t ld = c->V + c->pad;
  size_t esz = c->dt == LLMK_F32 ? 4 : 2;
  void *lg = calloc((size_t)(c->B * ld + 1), esz), *pp = calloc((size_t)c->B + 1, esz),
       *mm = calloc((size_t)c->B + 1, esz);
  for (int64_t b = 0; b < c->B; b++) {
    for (int64_t i = 0; i < c->V; i++) put(c->dt, lg, b * ld + i, c->x[b * c->V + i]);
    put(c->dt, pp, b, c->p[b]);
    put(c->dt, mm, b, c->mp[b]);
  }
  llmk_tensor tl, tp, tk, tm, tq, ti, tf, tv, tx;
  int64_t sh[2] = {c->B, c->V}, st[2] = {ld, 1};
  llmk_tensor_init(&tl, c->dt, 2, sh, st, lg);
  llmk_tensor_init(&tp, c->dt, 1, sh, NULL, pp);
  llmk_tensor_init(&tm, c->dt, 1, sh, NULL, mm);
  llmk_tensor_init(&tk, LLMK_I64, 1, sh, NULL, c->k);
  llmk_tensor_init(&tq, LLMK_F32, 2, sh, NULL, c->q);
  llmk_tensor_init(&ti, LLMK_I64, 1, sh, NULL, o->ids);
  llmk_tensor_init(&tf, LLMK_F32, 2, sh, NULL, o->filt);
  llmk_tensor_init(&tv, LLMK_F32, 2, sh, NULL, o->kv);
  llmk_tensor_init(&tx, c->idx32 ? LLMK_I32 : LLMK_I64, 2, sh, NULL, o->ki);
  llmk_context *ctx = NULL;
  llmk_context_create(threads, &ctx);
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status s = llmk_sample_top_k_top_p_ex2_get_workspace_size(
      &tl, c->op.has_p ? &tp : NULL, c->op.has_k ? &tk : NULL,
      c->op.has_minp ? &tm : NULL, c->op.has_q ? &tq : NULL, &c->op.o, &ti, &tf, &tv, &tx,
      &ws, &plan);
  if (s == LLMK_SUCCESS) {
    void *w = ws ? malloc(ws) : NULL;
    s = llmk_apply_top_k_top_p(w, ws, plan, ctx);
    free(w);
    llmk_plan_destroy(plan);
  }
  llmk_context_destroy(ctx);
  free(lg);
  free(pp);
  free(mm);
  return s;
}

static int64_t ki_at(const tcase *c, const outs *o, int64_t off) {
  return c->idx32 ? ((const int32_t *)o->ki)[off] : ((const int64_t *)o->ki)[off];
}

static void check_case(const tcase *c) {
  int64_t B = c->B, V = c->V;
  outs o = outs_new(c), o2 = outs_new(c);
  TU_CHECK(run_native(c, 1, &o) == LLMK_SUCCESS, "%s", llmk_last_error());
  double *x = malloc((size_t)V * sizeof *x), *vals = malloc((size_t)V * sizeof *vals);
  int64_t *L = malloc((size_t)V * sizeof *L);
  unsigned char *kept = malloc((size_t)V);
  size_t isz = c->idx32 ? 4 : 8;
  for (int64_t b = 0; b < B; b++) {
    for (int64_t i = 0; i < V; i++) x[i] = c->x[b * V + i];
    bool amb;
    int64_t n;
    int64_t want = ref_row(x, V, c->k[b], c->p[b], c->mp[b],
                           c->op.has_q ? c->q + b * V : NULL, &c->op, L, vals, &n, &amb);
    if (amb) {
      undecided++;
      continue;
    }
    compared++;
    TU_CHECK(o.ids[b] == want,
             "dt %d V %lld row %lld k %lld p %g min_p %g: %lld, reference %lld",
             (int)c->dt, (long long)V, (long long)b, (long long)c->k[b], (double)c->p[b],
             (double)c->mp[b], (long long)o.ids[b], (long long)want);
    memset(kept, 0, (size_t)V);
    int64_t bad_i = 0, bad_v = 0, bad_f = 0, touched = 0;
    for (int64_t j = 0; j < n; j++) {
      kept[L[j]] = 1;
      if (ki_at(c, &o, b * V + j) != L[j]) bad_i++;
      double g = o.kv[b * V + j];
      if (c->op.o.input_is_logits ? !(fabs(g - vals[j]) <= 1e-5 * vals[j] + 1e-30)
                                  : g != (double)(float)vals[j])
        bad_v++;
    }
    for (int64_t j = n; j < V; j++) {
      if (o.kv[b * V + j] != 0.0f) bad_v++;
      const unsigned char *e = (const unsigned char *)o.ki + (size_t)(b * V + j) * isz;
      for (size_t y = 0; y < isz; y++) touched += e[y] != SENTINEL;
    }
    for (int64_t i = 0; i < V; i++) {
      float e = kept[i] ? (float)x[i] : c->op.o.fill;
      if (memcmp(&o.filt[b * V + i], &e, 4) != 0) bad_f++;
    }
    TU_CHECK(
        bad_i + bad_v + bad_f + touched == 0,
        "dt %d V %lld row %lld (n %lld): kept_index %lld, kept_values %lld, filtered "
        "%lld differ; %lld bytes past the list written",
        (int)c->dt, (long long)V, (long long)b, (long long)n, (long long)bad_i,
        (long long)bad_v, (long long)bad_f, (long long)touched);
  }
  /* the same bytes for other thread counts and every ISA of this CPU */
  size_t bv = (size_t)(B * V);
  for (int isa = 0; isa < TU_NUM_ISAS; isa++) {
    if (!TU_ISA_HERE(isa)) continue;
    llmk_set_max_isa((llmk_isa)isa);
    for (int th = 3; th <= 8; th += 5) {
      memset(o2.ids, 0, (size_t)B * 8);
      memset(o2.filt, 0, bv * 4);
      memset(o2.kv, 0, bv * 4);
      memset(o2.ki, SENTINEL, bv * 8);
      run_native(c, th, &o2);
      TU_CHECK(memcmp(o.ids, o2.ids, (size_t)B * 8) == 0 &&
                   memcmp(o.filt, o2.filt, bv * 4) == 0 &&
                   memcmp(o.kv, o2.kv, bv * 4) == 0 && memcmp(o.ki, o2.ki, bv * 8) == 0,
               "results differ with %d threads, isa %d", th, isa);
    }
  }
  llmk_set_max_isa(llmk_get_native_isa());
  free(x);
  free(vals);
  free(L);
  free(kept);
  outs_free(&o);
  outs_free(&o2);
}

static double uni(double lo, double hi) {
  return lo + (hi - lo) * tu_rand_unit();
}

static void grid(void) {
  static const int64_t ks[] = {-2, 0, 1, 3, 17, 1024, 1025, 200, 2};
  static const float ps[] = {0.0f, 0.3f, 0.7f, 0.99f, 1.0f, 2.0f, -1.0f, NAN, 0.5f};
  static const float mps[] = {0.0f, -0.5f, 0.05f, 0.3f, 0.9f, 1.0f, 1.5f, NAN, 0.1f};
  const llmk_dtype dts[3] = {LLMK_F32, LLMK_F16, LLMK_BF16};
  const int64_t Vs[] = {1, 9, 300, 3000};
  for (int d = 0; d < 3; d++)
    for (int vi = 0; vi < 4; vi++)
      for (int m = 0; m < 10; m++) {
        tcase c = {.dt = dts[d], .B = 18, .V = Vs[vi], .pad = m & 1 ? 5 : 0};
        c.idx32 = m == 4;
        c.op.has_k = m != 5;
        c.op.has_p = m != 6;
        c.op.has_q = m % 3 != 0;
        c.op.has_minp = m != 7 && m != 2;
        c.op.o = (llmk_sample_ex2_options)LLMK_SAMPLE_EX2_OPTIONS_INIT;
        c.op.o.eps = m == 2 ? 0.25 : 1e-8;
        c.op.o.k_max = m == 4 ? 10 : m == 8 ? 0 : 1024;
        c.op.o.input_is_logits = m < 6;
        c.op.o.fill = m < 6 ? -INFINITY : 0.0f;
        int64_t B = c.B, V = c.V;
        c.x = malloc((size_t)(B * V) * 4);
        c.q = malloc((size_t)(B * V) * 4);
        c.k = malloc((size_t)B * 8);
        c.p = malloc((size_t)B * 4);
        c.mp = malloc((size_t)B * 4);
        for (int64_t b = 0; b < B; b++) {
          /* probabilities for rows that are not logits (a softmax of random logits) */
          double s = 0.0;
          for (int64_t i = 0; i < V; i++) {
            double v = uni(-3.0, 3.0);
            c.x[b * V + i] = (float)(c.op.o.input_is_logits ? v : exp(v));
            s += c.op.o.input_is_logits ? 0.0 : exp(v);
          }
          for (int64_t i = 0; i < V; i++) {
            float v = c.x[b * V + i];
            c.x[b * V + i] =
                rnd(c.dt, c.op.o.input_is_logits || m == 9 ? v : (float)(v / s));
            float e = (float)-log(1.0 - tu_rand_unit());
            c.q[b * V + i] = m == 1 && i % 3 == 0 ? -e : e;
          }
          c.k[b] = b % 8 == 7 ? V : ks[(b + (int64_t)m) % 9];
          c.p[b] = rnd(c.dt, ps[(b * 5 + vi) % 9]);
          c.mp[b] = rnd(c.dt, mps[(b * 7 + m) % 9]);
        }
        check_case(&c);
        free(c.x);
        free(c.q);
        free(c.k);
        free(c.p);
        free(c.mp);
      }
}

/* Equal values: the lower index first in every sorted list, min-p >= 1 keeps index 0. */
static void ties(void) {
  tcase c = {.dt = LLMK_BF16, .B = 4, .V = 40};
  c.op.has_k = c.op.has_p = c.op.has_q = c.op.has_minp = true;
  c.op.o = (llmk_sample_ex2_options)LLMK_SAMPLE_EX2_OPTIONS_INIT;
  float x[160], q[160], p[4] = {0.1f, 1.0f, 0.0f, 0.51f}, mp[4] = {0, 1.0f, 0, 0.5f};
  int64_t k[4] = {8, 0, 0, 50};
  for (int i = 0; i < 160; i++) {
    x[i] = 1.0f;
    q[i] = 1.0f;
  }
  c.x = x;
  c.q = q;
  c.k = k;
  c.p = p;
  c.mp = mp;
  check_case(&c);
}

/* Sums and thresholds met exactly (dyadic probabilities): the cut keeps the entry at
 * which the sum reaches p, min-p keeps the entries equal to its threshold. */
static void exact(void) {
  tcase c = {.dt = LLMK_F32, .B = 3, .V = 4};
  c.op.has_k = c.op.has_p = c.op.has_minp = true;
  c.op.o = (llmk_sample_ex2_options)LLMK_SAMPLE_EX2_OPTIONS_INIT;
  c.op.o.input_is_logits = 0;
  c.op.o.fill = 0.0f;
  float x[12], q[12] = {0}, p[3] = {0.75f, 1.0f, 0.75f}, mp[3] = {0, 0.5f, 0};
  const float row[4] = {0.25f, 0.5f, 0.125f, 0.125f};
  int64_t k[3] = {0, 0, 3};
  for (int i = 0; i < 12; i++) x[i] = row[i % 4];
  c.x = x;
  c.q = q;
  c.k = k;
  c.p = p;
  c.mp = mp;
  long before = compared;
  check_case(&c);
  TU_CHECK(compared == before + 3, "exact rows not compared");
}

/* ------------------------------------------------------------- errors */
static void errors(void) {
  float lg[12] = {0}, q[12] = {0}, filt[12], kv[12], p[3] = {0.5f, 0.5f, 0.5f};
  int64_t k[3] = {1, 2, 3}, ids[3], kix[12];
  int64_t sh[2] = {3, 4}, sh5[2] = {3, 5};
  llmk_tensor tl, tp, tk, tq, ti, tf, tv, tx, bad, t32, th, tf32;
  llmk_tensor_init(&tl, LLMK_F32, 2, sh, NULL, lg);
  llmk_tensor_init(&tp, LLMK_F32, 1, sh, NULL, p);
  llmk_tensor_init(&tk, LLMK_I64, 1, sh, NULL, k);
  llmk_tensor_init(&tq, LLMK_F32, 2, sh, NULL, q);
  llmk_tensor_init(&ti, LLMK_I64, 1, sh, NULL, ids);
  llmk_tensor_init(&tf, LLMK_F32, 2, sh, NULL, filt);
  llmk_tensor_init(&tv, LLMK_F32, 2, sh, NULL, kv);
  llmk_tensor_init(&tx, LLMK_I64, 2, sh, NULL, kix);
  llmk_tensor_init(&tf32, LLMK_I32, 2, sh, NULL, filt);
  llmk_tensor_init(&t32, LLMK_I32, 2, sh, NULL, q);
  llmk_tensor_init(&th, LLMK_F16, 1, sh, NULL, p);
  llmk_tensor_init(&bad, LLMK_F32, 2, sh5, NULL, q);
  llmk_sample_ex2_options o = LLMK_SAMPLE_EX2_OPTIONS_INIT;
  struct {
    llmk_sample_ex2_options o;
    unsigned char tail[8];
  } big = {o, {0}}, big1 = {o, {0}};
  big.o.struct_size = big1.o.struct_size = sizeof big;
  big1.tail[3] = 1; /* a field this build cannot honour */
  llmk_sample_ex2_options small = o;
  small.struct_size = LLMK_SAMPLE_EX2_OPTIONS_V1_SIZE - 1;
  struct {
    const char *name;
    llmk_status want;
    const llmk_tensor *t[9]; /* logits p k min_p q ids filtered kept_values kept_index */
    const llmk_sample_ex2_options *o;
  } rows[20];
  int n = 0;
#define ROW(nm, st, opt, a, b, c, d, e, f, g, h, i) \
  rows[n++] = (__typeof__(rows[0])){nm, st, {a, b, c, d, e, f, g, h, i}, opt}
  ROW("all given", LLMK_SUCCESS, &o, &tl, &tp, &tk, &tp, &tq, &ti, &tf, &tv, &tx);
  ROW("struct_size larger, zero tail", LLMK_SUCCESS, &big.o, &tl, &tp, &tk, NULL, NULL,
      &ti, NULL, NULL, NULL);
  ROW("logits NULL", LLMK_ERROR_NULL_POINTER, &o, NULL, &tp, &tk, &tp, &tq, &ti, &tf,
      NULL, NULL);
  ROW("options NULL", LLMK_ERROR_NULL_POINTER, NULL, &tl, &tp, &tk, &tp, &tq, &ti, &tf,
      NULL, NULL);
  ROW("struct_size too small", LLMK_ERROR_INVALID_ATTRIBUTE, &small, &tl, &tp, &tk, &tp,
      &tq, &ti, &tf, NULL, NULL);
  ROW("q i32", LLMK_ERROR_INVALID_DTYPE, &o, &tl, &tp, &tk, &tp, &t32, &ti, &tf, NULL,
      NULL);
  ROW("min_p f16 beside f32 logits", LLMK_ERROR_INVALID_DTYPE, &o, &tl, &tp, &tk, &th,
      &tq, &ti, &tf, NULL, NULL);
  ROW("kept_values i32", LLMK_ERROR_INVALID_DTYPE, &o, &tl, &tp, &tk, &tp, &tq, &ti, &tf,
      &t32, NULL);
  ROW("kept_index f32", LLMK_ERROR_INVALID_DTYPE, &o, &tl, &tp, &tk, &tp, &tq, &ti, &tf,
      NULL, &tf);
  ROW("q [3, 5]", LLMK_ERROR_INVALID_SHAPE, &o, &tl, &tp, &tk, &tp, &bad, &ti, &tf, NULL,
      NULL);
  ROW("kept_values [3, 5]", LLMK_ERROR_INVALID_SHAPE, &o, &tl, &tp, &tk, &tp, &tq, &ti,
      &tf, &bad, NULL);
  ROW("min_p [3, 4]", LLMK_ERROR_INVALID_SHAPE, &o, &tl, &tp, &tk, &tq, &tq, &ti, &tf,
      NULL, NULL);
  ROW("kept_values over q", LLMK_ERROR_OVERLAP, &o, &tl, &tp, &tk, &tp, &tq, &ti, &tf,
      &tq, NULL);
  ROW("kept_index over filtered", LLMK_ERROR_OVERLAP, &o, &tl, &tp, &tk, &tp, NULL, &ti,
      &tf, NULL, &tf32);
#undef ROW
  rows[n++] = (__typeof__(rows[0])){"struct_size larger, tail set",
                                    LLMK_ERROR_INVALID_ATTRIBUTE,
                                    {&tl, &tp, &tk, NULL, NULL, &ti, NULL, NULL, NULL},
                                    &big1.o};
  for (int r = 0; r < n; r++) {
    for (int i = 0; i < 12; i++) {
      filt[i] = 7.0f;
      kix[i] = 9;
    }
    ids[0] = ids[1] = ids[2] = 9;
    size_t ws = 1;
    llmk_plan *plan = (llmk_plan *)&ws;
    const llmk_tensor *const *t = rows[r].t;
    llmk_status s = llmk_sample_top_k_top_p_ex2_get_workspace_size(
        t[0], t[1], t[2], t[3], t[4], rows[r].o, t[5], t[6], t[7], t[8], &ws, &plan);
    TU_CHECK(s == rows[r].want, "%s: %d (%s)", rows[r].name, (int)s, llmk_last_error());
    if (s == LLMK_SUCCESS) {
      void *w = ws ? malloc(ws) : NULL;
      TU_CHECK(llmk_apply_top_k_top_p(w, ws, plan, NULL) == LLMK_SUCCESS, "%s: run: %s",
               rows[r].name, llmk_last_error());
      free(w);
      llmk_plan_destroy(plan);
      continue;
    }
    TU_CHECK(plan == NULL && ws == 0, "%s: plan or size set", rows[r].name);
    TU_CHECK(strstr(llmk_last_error(), "sample_top_k_top_p_ex2") != NULL, "%s: '%s'",
             rows[r].name, llmk_last_error());
    TU_CHECK(filt[0] == 7.0f && ids[0] == 9 && kix[0] == 9, "%s: written", rows[r].name);
  }
}

int main(void) {
  tu_seed(5513);
  grid();
  ties();
  exact();
  errors();
  printf("rows compared %ld, within %g of a flip (not compared) %ld\n", compared, TOL,
         undecided);
  TU_CHECK(undecided * 20 <= compared, "too many undecided rows: %ld", undecided);
  return tu_finish("test_sample_top_k_top_p_ex2");
}
