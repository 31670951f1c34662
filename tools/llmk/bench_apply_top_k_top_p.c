/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p against the sort-based reference apply_top_k_top_p_ref (tests/ref): a
 * stable sort of every row, one thread (the reference is not thread-safe). It is slow,
 * so it runs once for the check (and a few more times only where that is cheap); the
 * speed-up is its time over the op's median.
 * The check compares every entry: kept entries keep their bits, masked ones are -inf.
 * Where the reference's f32 rounding decides an entry (its cumulative sum within 64 ulp
 * of 1-p, the header's documented exception), a difference is counted and reported but
 * only fails the case when there are many (more than 0.1% of the entries); any other
 * difference fails it.
 * The reference's time is the median of at least 3 runs (it is slow: one stall of a
 * shared machine would otherwise make the speed-up).
 * Top-p alone (f32) also times the floor of any exact design: the largest value of each
 * row and exp(x - max) of every entry (with the library's own exp, src/kernels/common),
 * on the context's threads, plus one read + write pass over the logits (the copy beside
 * the case); the op's time over that floor is reported with the case.
 * Bytes per call: the logits read once and the output written once. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "apply_top_k_top_p_ref.h"
#include "bench.h"
#include "kernels/common/exp.h" /* the library's exp: the floor is its cost */

/* ------------------------------------------------ the floor of exact top-p */

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
#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__) /* GCC target pragmas */
#define FLOOR_AVX2 1
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
#else
#define FLOOR_AVX2 0
#define row_max_avx2 row_max_scalar
#define exp_sum_avx2 exp_sum_scalar
#endif

static bool floor_simd(void) {
  return FLOOR_AVX2 && llmk_get_isa() != LLMK_ISA_SCALAR;
}

enum { FLOOR_PARTS_MAX = 256 };

/* The floor's passes over the B rows of V entries, on the context's threads, each
 * taking a contiguous part of the whole (rows split as the op splits a single row):
 * which 0 the largest value of every part of every row into pmax, 1 the exps. */
typedef struct floor_job {
  const bench_env *env;
  const float *x;
  int64_t B, V;
  int parts;
  int which;
  float *rmax; /* [B] */
  float pmax[FLOOR_PARTS_MAX]
            [2]; /* per part: the largest value of its first and last row */
  volatile float sink;
} floor_job;

static void floor_range(void *arg, int64_t begin, int64_t end) {
  floor_job *j = arg;
  bool simd = floor_simd();
  for (int64_t part = begin; part < end; part++) {
    int64_t n = j->B * j->V, a = n / j->parts * part,
            b = part == j->parts - 1 ? n : n / j->parts * (part + 1);
    float acc = 0;
    j->pmax[part][0] = j->pmax[part][1] = -INFINITY;
    for (int64_t i = a; i < b;) {
      int64_t r = i / j->V, e = (r + 1) * j->V < b ? (r + 1) * j->V : b;
      const float *row = j->x + i;
      size_t len = (size_t)(e - i);
      if (j->which == 0) {
        float m = simd ? row_max_avx2(row, len) : row_max_scalar(row, len);
        if (i == a) /* a row split with the part before: merged after the pass */
          j->pmax[part][0] = m;
        else if (e == b && e % j->V)
          j->pmax[part][1] = m;
        else
          j->rmax[r] = m;
      } else {
        acc += simd ? exp_sum_avx2(row, len, j->rmax[r])
                    : exp_sum_scalar(row, len, j->rmax[r]);
      }
      i = e;
    }
    if (j->which) j->sink = acc;
  }
}

static void floor_pass(floor_job *j, int which) {
  j->which = which;
  if (which == 0)
    for (int64_t r = 0; r < j->B; r++) j->rmax[r] = -INFINITY;
  bench_parallel(j->env, j->parts, j->parts, floor_range, j);
  if (which == 0) /* the rows split between parts */
    for (int p = 0; p < j->parts; p++) {
      int64_t n = j->B * j->V, a = n / j->parts * p,
              b = p == j->parts - 1 ? n : n / j->parts * (p + 1);
      if (a >= b) continue;
      int64_t r0 = a / j->V, r1 = (b - 1) / j->V;
      if (j->pmax[p][0] > j->rmax[r0]) j->rmax[r0] = j->pmax[p][0];
      if (j->pmax[p][1] > j->rmax[r1]) j->rmax[r1] = j->pmax[p][1];
    }
}

static int floor_max(void *arg) {
  floor_pass(arg, 0);
  return 0;
}

static int floor_exp(void *arg) {
  floor_pass(arg, 1);
  return 0;
}

typedef struct tkp_case {
  bool quick;
  int64_t B, V;
  llmk_dtype dtype;
  int32_t k;   /* 0: no k tensor */
  float p;     /* < 0: no p tensor */
  bool mixed;  /* per-row k and p drawn from the spec's values */
  float min_p; /* < 0: no min_p tensor (llmk_apply_top_k_top_p_min_p otherwise) */
} tkp_case;

static const tkp_case cases[] = {
    {true, 64, 151936, LLMK_F32, 50, 0.9f, false, -1.0f},
    {true, 1, 151936, LLMK_F32, 50, 0.9f, false, -1.0f},
    {true, 256, 32000, LLMK_F32, 50, 0.9f, false, -1.0f},
    {true, 64, 151936, LLMK_BF16, 50, 0.9f, false, -1.0f},
    {true, 64, 151936, LLMK_F32, 0, 0.9f, false,
     -1.0f}, /* top-p alone: against its floor */
    {false, 64, 151936, LLMK_F32, 50, -1.0f, false, -1.0f},
    {false, 1, 151936, LLMK_F32, 0, 0.9f, false, -1.0f},
    {false, 1, 151936, LLMK_F32, 50, -1.0f, false, -1.0f},
    {false, 8, 128256, LLMK_F32, 50, 0.9f, false, -1.0f},
    {false, 8, 256000, LLMK_F32, 50, 0.9f, false, -1.0f},
    {false, 64, 256000, LLMK_F32, 50, 0.9f, false, -1.0f},
    {false, 64, 151936, LLMK_F32, 1000, 0.99f, false, -1.0f},
    {false, 64, 151936, LLMK_F32, 1, 0.5f, false, -1.0f},
    {false, 64, 151936, LLMK_F16, 50, 0.9f, false, -1.0f},
    {false, 64, 151936, LLMK_F32, 0, 0.0f, true, -1.0f},
    /* min-p (issue 23.4: at most 1.5x one read + write pass over the logits) */
    {true, 64, 32000, LLMK_F32, 0, -1.0f, false, 0.1f},
    {true, 1, 151936, LLMK_F32, 0, -1.0f, false, 0.1f},
    {false, 256, 32000, LLMK_F32, 0, -1.0f, false, 0.1f},
    {false, 64, 151936, LLMK_F32, 50, 0.9f, false, 0.1f},
};

typedef struct tkp_state {
  const tkp_case *c;
  size_t n, esz;
  float *x; /* the values the op sees, widened */
  void *logits, *out;
  float *pv;
  int32_t *kv;
  unsigned char *keep; /* the reference's result */
  double *margin;      /* per row */
  double *margin_min_p;
  bench_call call;
  llmk_tensor tl, to, tp, tk, tm; /* for the whole call */
} tkp_state;

/* The whole call with a fresh plan (small calls), in the case's workspace. */
static int run_whole(void *arg) {
  tkp_state *s = arg;
  const tkp_case *c = s->c;
  bool has_p = c->p >= 0 || c->mixed, has_k = c->k != 0 || c->mixed;
  size_t ws;
  llmk_plan *p;
  llmk_status st =
      c->min_p >= 0
          ? llmk_apply_top_k_top_p_min_p_get_workspace_size(&s->tl, has_p ? &s->tp : NULL,
                                                            has_k ? &s->tk : NULL, &s->tm,
                                                            &s->to, NULL, &ws, &p)
          : llmk_apply_top_k_top_p_get_workspace_size(
                &s->tl, has_p ? &s->tp : NULL, has_k ? &s->tk : NULL, &s->to, &ws, &p);
  if (st != LLMK_SUCCESS) return 1;
  if (ws > s->call.ws) {
    llmk_plan_destroy(p);
    return 1;
  }
  return llmk_apply_top_k_top_p(s->call.w, ws, p, s->call.ctx) != LLMK_SUCCESS;
}

static int run_ref(void *arg) {
  tkp_state *s = arg;
  const tkp_case *c = s->c;
  for (int64_t b = 0; b < c->B; b++) {
    tkp_ref_args a = {c->k || c->mixed ? s->kv[b] : 0, c->p >= 0 || c->mixed, s->pv[b],
                      c->min_p >= 0, c->min_p >= 0 ? c->min_p : 0.0f};
    tkp_ref_info info;
    tkp_ref_row(s->x + b * c->V, c->V, &a, s->keep + b * c->V, &info);
    s->margin[b] = info.margin_p;
    s->margin_min_p[b] = info.margin_min_p;
  }
  return 0;
}

static uint32_t load_bits(const void *p, size_t i, size_t esz) {
  if (esz == 4) {
    uint32_t u;
    memcpy(&u, (const char *)p + i * 4, 4);
    return u;
  }
  uint16_t h;
  memcpy(&h, (const char *)p + i * 2, 2);
  return h;
}

static void run_case(bench_env *env, const tkp_case *c, const char *shape) {
  bench_result r;
  const char *dt = llmk_dtype_name(c->dtype);
  bench_result_init(&r, "apply_top_k_top_p", shape, dt);
  tkp_state s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.call.run = llmk_apply_top_k_top_p;
  s.call.ctx = env->ctx;
  s.n = (size_t)(c->B * c->V);
  s.esz = llmk_dtype_size(c->dtype);
  s.x = bench_alloc(s.n * 4, 0);
  s.logits = bench_alloc(s.n * s.esz, 0);
  s.out = bench_alloc(s.n * s.esz, 0);
  s.keep = bench_alloc(s.n, 0);
  s.margin = bench_alloc((size_t)c->B * sizeof *s.margin, 0);
  s.margin_min_p = bench_alloc((size_t)c->B * sizeof *s.margin_min_p, 0);
  s.pv = bench_alloc((size_t)c->B * 4, 0);
  s.kv = bench_alloc((size_t)c->B * 4, 0);
  bench_rng rng = {0x7b7bu + (uint64_t)c->V};
  for (size_t i = 0; i < s.n; i++) { /* roughly normal logits, sd 2 */
    float sum = 0;
    for (int j = 0; j < 4; j++) sum += (float)(bench_rand(&rng) >> 40) * 0x1p-24f;
    s.x[i] = (sum - 2.0f) * 3.4f;
  }
  if (c->dtype == LLMK_F32)
    memcpy(s.logits, s.x, s.n * 4);
  else
    llmk_convert(s.logits, c->dtype, s.x, LLMK_F32, s.n);
  llmk_convert(s.x, LLMK_F32, s.logits, c->dtype, s.n); /* exact widening */
  static const int32_t mk[5] = {0, 1, 20, 50, 1000};
  static const float mp[4] = {0.5f, 0.9f, 0.99f, 1.0f};
  for (int64_t b = 0; b < c->B; b++) {
    s.kv[b] = c->mixed ? mk[b % 5] : c->k;
    s.pv[b] = c->mixed ? mp[(b / 5) % 4] : c->p;
  }
  bool has_p = c->p >= 0 || c->mixed, has_k = c->k != 0 || c->mixed;
  llmk_tensor tl, to, tp, tk, tmp;
  float *mpv = bench_alloc((size_t)c->B * 4, 0);
  for (int64_t b = 0; b < c->B; b++) mpv[b] = c->min_p;
  int64_t bv[2] = {c->B, c->V}, bb[1] = {c->B};
  llmk_tensor_init(&tl, c->dtype, 2, bv, NULL, s.logits);
  llmk_tensor_init(&to, c->dtype, 2, bv, NULL, s.out);
  llmk_tensor_init(&tp, LLMK_F32, 1, bb, NULL, s.pv);
  llmk_tensor_init(&tk, LLMK_I32, 1, bb, NULL, s.kv);
  llmk_tensor_init(&tmp, LLMK_F32, 1, bb, NULL, mpv);
  llmk_status st = c->min_p >= 0 ? llmk_apply_top_k_top_p_min_p_get_workspace_size(
                                       &tl, has_p ? &tp : NULL, has_k ? &tk : NULL, &tmp,
                                       &to, NULL, &s.call.ws, &s.call.plan)
                                 : llmk_apply_top_k_top_p_get_workspace_size(
                                       &tl, has_p ? &tp : NULL, has_k ? &tk : NULL, &to,
                                       &s.call.ws, &s.call.plan);
  s.tl = tl;
  s.to = to;
  s.tp = tp;
  s.tk = tk;
  s.tm = tmp;
  if (!bench_call_ready(env, &r, &s.call, st)) goto done;

  bench_progress(env, "    reference (sorts every row, 1 thread)...\n");
  double t_ref;
  if (bench_first_run(&r, &s.call, run_ref, &s, &t_ref)) {
    const uint32_t ninf = s.esz == 4             ? 0xff800000u
                          : c->dtype == LLMK_F16 ? 0xfc00u
                                                 : 0xff80u;
    size_t diff = 0, close = 0;
    for (int64_t b = 0; b < c->B; b++) {
      size_t d = 0;
      for (size_t j = (size_t)(b * c->V); j < (size_t)((b + 1) * c->V); j++) {
        uint32_t want = s.keep[j] ? load_bits(s.logits, j, s.esz) : ninf;
        d += load_bits(s.out, j, s.esz) != want;
      }
      diff += d;
      /* decided by f32 rounding */
      if (d && ((has_p && s.margin[b] < 64) || (c->min_p >= 0 && s.margin_min_p[b] < 64)))
        close += d;
    }
    if (diff > close || close > s.n / 1000) {
      r.check = BENCH_CHECK_FAIL;
      snprintf(r.note, sizeof r.note,
               "%zu entries differ from the reference (%zu near the top-p "
               "boundary)",
               diff, close);
    } else if (diff) {
      snprintf(r.note, sizeof r.note,
               "%zu entries differ within 64 ulp of the top-p boundary "
               "(f32 rounding, allowed)",
               diff);
    }
  }
  double bytes = 2.0 * (double)s.n * (double)s.esz;
  bench_timing op = bench_time(env, bench_call_fn, NULL, &s.call, bytes, 7, 1000);
  bench_progress(env, "    reference, at least 2 more runs...\n");
  bench_timing ref = bench_time_ref(env, run_ref, NULL, &s, t_ref);
  if (c->k == 0 && c->p >= 0 && !c->mixed && c->dtype == LLMK_F32 && !op.status) {
    floor_job *fj = bench_alloc(sizeof *fj, 0);
    fj->env = env;
    fj->x = s.logits;
    fj->B = c->B;
    fj->V = c->V;
    fj->parts = env->ctx ? llmk_context_num_threads(env->ctx) : 1;
    if (fj->parts > FLOOR_PARTS_MAX) fj->parts = FLOOR_PARTS_MAX;
    fj->rmax = bench_alloc((size_t)c->B * sizeof *fj->rmax, 0);
    bench_timing tm = bench_time_only(env, floor_max, NULL, fj, 7, 1000);
    floor_pass(fj, 0);
    bench_timing te = bench_time_only(env, floor_exp, NULL, fj, 7, 1000);
    if (!tm.status && !te.status) {
      char name[80];
      bench_add_extra(&r, "floor: the largest value of each row", tm.median, tm.min);
      snprintf(name, sizeof name, "floor: exp(x - max) of every entry (%s)",
               floor_simd() ? "avx2" : "scalar");
      bench_add_extra(&r, name, te.median, te.min);
      bench_add_extra(&r, "floor of any exact top-p: max + exp + the copy beside",
                      tm.median + te.median + op.copy_median,
                      tm.min + te.min + op.copy_min);
    }
    bench_free(fj->rmax);
    bench_free(fj);
  }
  bench_one_thread(env, &r, bench_call_fn, NULL, &s.call, &s.call.ctx, 7, 1000);
  if (c->B == 1 && c->k == 50 && r.check == BENCH_CHECK_OK)
    bench_small_call(env, &r, run_whole, NULL, &s, 1000);
  if (c->min_p >= 0) bench_target_want(&r, BENCH_T_VS_COPY, "23.4", 1.5);
  if (c->B == 64 && c->V == 151936 && c->k == 50 && c->p == 0.9f && c->min_p < 0 &&
      c->dtype == LLMK_F32)
    bench_target_want(&r, BENCH_T_SPEEDUP, "23.7", 403);
  bench_add(env, &r, &op, &ref, bytes);
done:
  bench_free(mpv);
  bench_call_free(&s.call);
  bench_free(s.x);
  bench_free(s.logits);
  bench_free(s.out);
  bench_free(s.keep);
  bench_free(s.margin);
  bench_free(s.margin_min_p);
  bench_free(s.pv);
  bench_free(s.kv);
}

void bench_apply_top_k_top_p(bench_env *env) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const tkp_case *c = &cases[i];
    if (env->quick && !c->quick) continue;
    char shape[96], kp[48];
    if (c->mixed)
      snprintf(kp, sizeof kp, "mixed k, p per row");
    else if (c->k && c->p >= 0)
      snprintf(kp, sizeof kp, "k=%d p=%g", (int)c->k, (double)c->p);
    else if (c->k)
      snprintf(kp, sizeof kp, "k=%d", (int)c->k);
    else if (c->p >= 0)
      snprintf(kp, sizeof kp, "p=%g", (double)c->p);
    else
      kp[0] = 0;
    if (c->min_p >= 0) {
      size_t n = strlen(kp);
      snprintf(kp + n, sizeof kp - n, "%smin_p=%g", n ? " " : "", (double)c->min_p);
    }
    snprintf(shape, sizeof shape, "B=%lld V=%lld %s", (long long)c->B, (long long)c->V,
             kp);
    if (bench_want(env, "apply_top_k_top_p", shape, c->dtype, llmk_dtype_name(c->dtype)))
      run_case(env, c, shape);
  }
}
