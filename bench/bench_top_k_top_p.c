/* apply_top_k_top_p against the sort-based reference (a stable sort of every row, as
 * CANN's and vLLM's goldens do it, run in this process on the same threads) and against
 * one plain read + write pass over the same logits (memcpy), side by side in this run.
 * For top-p alone, also the floor of any exact design: the largest value of each row,
 * exp(x - max) of every entry with the library's own exp, and the read + write pass.
 * Usage: bench_top_k_top_p [threads] (default 2). */
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "kernels/common/exp.h" /* the library's exp: the floor is its cost */
#include "llmk/llmk.h"

static int threads = 2;
static llmk_context *ctx;

/* The floor's two loops over x[0, n) of one row: its largest value, and the sum of
 * exp(x - max) (summed so that the work is done), with the library's kernels' exp. */
static float row_max_scalar(const float *x, size_t n) {
  float m = -INFINITY;
  for (size_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
  return m;
}
static float exp_sum_scalar(const float *x, size_t n, float max) {
  float s = 0;
  for (size_t i = 0; i < n; i++) s += llmk__exp_nonpos_fma(x[i] - max);
  return s;
}
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kernels/common/exp-avx2.h"
static float row_max_avx2(const float *x, size_t n) {
  __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
  }
  float f[8], m = row_max_scalar(x + i, n - i);
  _mm256_storeu_ps(f, _mm256_max_ps(m0, m1));
  for (int j = 0; j < 8; j++) m = f[j] > m ? f[j] : m;
  return m;
}
static float exp_sum_avx2(const float *x, size_t n, float max) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, vm = _mm256_set1_ps(max);
  size_t i = 0; /* the mass pass's exp where its rows stay above max - 69, as here */
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_add_ps(
        s0, llmk__avx2_exp_nonpos_fma_ge69(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm)));
    s1 = _mm256_add_ps(s1, llmk__avx2_exp_nonpos_fma_ge69(
                               _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vm)));
  }
  float f[8], s = exp_sum_scalar(x + i, n - i, max);
  _mm256_storeu_ps(f, _mm256_add_ps(s0, s1));
  for (int j = 0; j < 8; j++) s += f[j];
  return s;
}
#pragma GCC pop_options
#endif
static bool floor_simd(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  return llmk_get_isa() != LLMK_ISA_SCALAR;
#else
  return false;
#endif
}

/* The floor's passes over the B rows of V entries, on the threads, each thread taking a
 * contiguous part of the whole (rows split as the op splits a single row): 0 the largest
 * value of every row into rmax, 1 the exps. */
static volatile float floor_sink;
static double floor_pass(int which, const float *x, int64_t B, int64_t V, float *rmax) {
  double t0 = bench_now();
#pragma omp parallel num_threads(threads)
  {
    int id = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t n = B * V, a = n / nt * id, b = id == nt - 1 ? n : n / nt * (id + 1);
    float acc = 0;
    for (int64_t i = a; i < b;) {
      int64_t r = i / V, e = (r + 1) * V < b ? (r + 1) * V : b;
      const float *row = x + i;
      size_t len = (size_t)(e - i);
      if (which == 0) {
        float m = floor_simd() ? row_max_avx2(row, len) : row_max_scalar(row, len);
#pragma omp critical
        rmax[r] = m > rmax[r] ? m : rmax[r];
      } else {
        acc += floor_simd() ? exp_sum_avx2(row, len, rmax[r])
                            : exp_sum_scalar(row, len, rmax[r]);
      }
      i = e;
    }
    floor_sink = acc;
  }
  return bench_now() - t0;
}

typedef struct pair {
  float v;
  int32_t i;
} pair;

static int cmp_pair(const void *a, const void *b) {
  const pair *x = a, *y = b;
  if (x->v < y->v) return -1;
  if (x->v > y->v) return 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* The reference on one f32 row: sort, top-k, softmax, cumsum, mask, scatter back. */
/* margin: the smallest |c[j] - (1 - p)| over the row, in ulps of 1 - p (how close f32
 * rounding came to deciding an entry) */
static void reference_row(const float *row, int64_t V, int64_t k, bool has_p, float p,
                          float *out, pair *s, float *q, double *margin) {
  for (int64_t j = 0; j < V; j++) s[j] = (pair){row[j], (int32_t)j};
  qsort(s, (size_t)V, sizeof *s, cmp_pair);
  if (k >= 1 && k <= V - 1) {
    float t = s[V - k].v;
    for (int64_t j = 0; j < V; j++)
      if (s[j].v < t) s[j].v = -INFINITY;
  }
  if (has_p) {
    float m = s[V - 1].v, sum = 0;
    for (int64_t j = 0; j < V; j++) sum += q[j] = expf(s[j].v - m);
    double c = 0, thr = 1.0f - p, ulp = nextafterf((float)thr, 2.0f) - (float)thr;
    *margin = INFINITY;
    for (int64_t j = 0; j < V; j++) {
      c += q[j] / sum;
      double gap = fabs(c - thr) / ulp;
      if (gap < *margin) *margin = gap;
      if (c <= 1.0f - p && j != V - 1) s[j].v = -INFINITY;
    }
  }
  for (int64_t j = 0; j < V; j++) out[s[j].i] = s[j].v;
}

enum { REF_RUNS = 3 };

typedef struct config {
  const char *name;
  int64_t B, V;
  llmk_dtype dtype;
  int32_t k; /* 0: none */
  float p;   /* < 0: none */
} config;

static void run(const config *c) {
  size_t n = (size_t)(c->B * c->V), esz = llmk_dtype_size(c->dtype);
  float *x = malloc(n * 4), *ref = malloc(n * 4);
  double *margin = malloc((size_t)c->B * sizeof *margin);
  void *logits = malloc(n * esz), *out = malloc(n * esz), *copy = malloc(n * esz);
  uint64_t r = 12345;
  for (size_t i = 0; i < n; i++) { /* roughly normal logits, sd 2 */
    float s = 0;
    for (int j = 0; j < 4; j++) {
      r ^= r << 13;
      r ^= r >> 7;
      r ^= r << 17;
      s += (float)(r >> 40) * 0x1p-24f;
    }
    x[i] = (s - 2.0f) * 3.4f;
  }
  if (c->dtype == LLMK_F32)
    memcpy(logits, x, n * 4);
  else
    llmk_convert(logits, c->dtype, x, LLMK_F32, n);
  llmk_convert(x, LLMK_F32, logits, c->dtype, n); /* the values the op sees */
  float *pv = malloc((size_t)c->B * 4);
  int32_t *kv = malloc((size_t)c->B * 4);
  for (int64_t b = 0; b < c->B; b++) {
    pv[b] = c->p;
    kv[b] = c->k;
  }
  llmk_tensor tl, to, tp, tk;
  llmk_tensor_init(&tl, c->dtype, 2, (int64_t[]){c->B, c->V}, NULL, logits);
  llmk_tensor_init(&to, c->dtype, 2, (int64_t[]){c->B, c->V}, NULL, out);
  llmk_tensor_init(&tp, LLMK_F32, 1, (int64_t[]){c->B}, NULL, pv);
  llmk_tensor_init(&tk, LLMK_I32, 1, (int64_t[]){c->B}, NULL, kv);
  size_t ws;
  llmk_plan *plan;
  if (llmk_apply_top_k_top_p_get_workspace_size(&tl, c->p >= 0 ? &tp : NULL,
                                                c->k ? &tk : NULL, &to, &ws,
                                                &plan) != LLMK_SUCCESS) {
    fprintf(stderr, "%s: %s\n", c->name, llmk_last_error());
    exit(1);
  }
  llmk_plan_set_repeatable(plan);
  void *w = malloc(ws + 64);
  /* the reference on the same threads over rows, REF_RUNS times (it is slow): its median,
   * so that one stall of the shared machine does not make the ratio */
  double tr[REF_RUNS], t0;
  for (int run = 0; run < REF_RUNS; run++) {
    t0 = bench_now();
#pragma omp parallel num_threads(threads)
    {
      pair *s = malloc((size_t)c->V * sizeof *s);
      float *q = malloc((size_t)c->V * 4);
#pragma omp for schedule(static)
      for (int64_t b = 0; b < c->B; b++)
        reference_row(x + b * c->V, c->V, c->k, c->p >= 0, c->p, ref + b * c->V, s, q,
                      &margin[b]);
      free(s);
      free(q);
    }
    tr[run] = bench_now() - t0;
  }
  double t_ref = bench_median(tr, REF_RUNS);
  /* check once: masks equal the reference's (values: same bits) */
  llmk_apply_top_k_top_p(w, ws, plan, ctx);
  float *got = malloc(n * 4);
  llmk_convert(got, LLMK_F32, out, c->dtype, n);
  size_t diff = 0, close = 0;
  for (int64_t b = 0; b < c->B; b++) {
    size_t d = 0;
    for (int64_t j = b * c->V; j < (b + 1) * c->V; j++)
      d += (isinf(got[j]) && got[j] < 0) != (isinf(ref[j]) && ref[j] < 0);
    diff += d;
    if (d && c->p >= 0 && margin[b] < 64) close += d; /* f32 rounding decides it */
  }
  /* at least 15 calls and 0.2 s of them: a median over a millisecond (B = 1) can sit
   * inside one stall of a shared VM's CPU */
  enum { MIN_REPS = 15, MAX_REPS = 2001 };
  int reps = 0;
  double *t = malloc(4 * MAX_REPS * sizeof *t), *m = t + MAX_REPS, *fm = m + MAX_REPS,
         *fe = fm + MAX_REPS, spent = 0;
  bool floor = c->k == 0 && c->p >= 0 && c->dtype == LLMK_F32;
  float *rmax = malloc((size_t)c->B * sizeof *rmax);
  for (int i = 0; i < MIN_REPS || (spent < 0.2 && i < MAX_REPS); i++, reps++) {
    if (floor) {
      for (int64_t b = 0; b < c->B; b++) rmax[b] = -INFINITY;
      fm[i] = floor_pass(0, logits, c->B, c->V, rmax);
      fe[i] = floor_pass(1, logits, c->B, c->V, rmax);
    }
    t0 = bench_now();
    llmk_apply_top_k_top_p(w, ws, plan, ctx);
    t[i] = bench_now() - t0;
    t0 = bench_now();
#pragma omp parallel num_threads(threads)
    {
      int id = omp_get_thread_num(), nt = omp_get_num_threads();
      size_t bytes = n * esz, b0 = bytes / (size_t)nt * (size_t)id;
      size_t b1 = id == nt - 1 ? bytes : bytes / (size_t)nt * (size_t)(id + 1);
      memcpy((char *)copy + b0, (const char *)logits + b0, b1 - b0);
    }
    m[i] = bench_now() - t0;
    spent += t[i] + m[i];
  }
  double op = bench_median(t, reps), pass = bench_median(m, reps);
  printf(
      "  %-40s %9.3f ms  reference %9.1f ms  %7.1fx faster  %5.2fx one read+write "
      "pass%s\n",
      c->name, op * 1e3, t_ref * 1e3, t_ref / op, op / pass,
      diff > close ? "  MASKS DIFFER FROM THE REFERENCE" : "");
  if (diff)
    printf(
        "    %zu entries differ, %zu of them in rows whose cumulative sum comes within "
        "64 ulp "
        "of 1-p (decided by f32 rounding)\n",
        diff, close);
  if (floor) {
    double tm = bench_median(fm, reps), te = bench_median(fe, reps);
    printf(
        "    floor of any exact top-p: largest values %.3f ms + exp of every entry (%s) "
        "%.3f ms"
        " + the pass = %.2fx the pass; this op %.2fx the floor\n",
        tm * 1e3, floor_simd() ? "avx2" : "scalar", te * 1e3, (tm + te + pass) / pass,
        op / (tm + te + pass));
  }
  fflush(stdout);
  llmk_plan_destroy(plan);
  free(margin);
  free(x);
  free(ref);
  free(logits);
  free(out);
  free(copy);
  free(pv);
  free(kv);
  free(w);
  free(got);
  free(rmax);
  free(t);
}

int main(int argc, char **argv) {
  if (argc > 1) threads = atoi(argv[1]);
  if (threads < 1) threads = 1;
  llmk_context_create(threads, &ctx);
  printf(
      "apply_top_k_top_p, %d thread(s), ISA %s; median of 15 calls or more (0.2 s); the "
      "reference: median of %d runs\n",
      threads, llmk_isa_name(llmk_get_isa()), REF_RUNS);
  const config configs[] = {
      {"B=64 V=151936 f32 k=50 p=0.9", 64, 151936, LLMK_F32, 50, 0.9f},
      {"B=64 V=151936 f32 p=0.9", 64, 151936, LLMK_F32, 0, 0.9f},
      {"B=64 V=151936 f32 k=50", 64, 151936, LLMK_F32, 50, -1},
      {"B=1 V=151936 f32 k=50 p=0.9", 1, 151936, LLMK_F32, 50, 0.9f},
      {"B=1 V=151936 f32 p=0.9", 1, 151936, LLMK_F32, 0, 0.9f},
      {"B=1 V=151936 f32 k=50", 1, 151936, LLMK_F32, 50, -1},
      {"B=256 V=32000 f32 k=50 p=0.9", 256, 32000, LLMK_F32, 50, 0.9f},
      {"B=64 V=151936 bf16 k=50 p=0.9", 64, 151936, LLMK_BF16, 50, 0.9f},
  };
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) run(&configs[i]);
  llmk_context_destroy(ctx);
  return 0;
}
