/* SPDX-License-Identifier: Apache-2.0 */
/* Timing, the copy beside each case, buffers, filters and progress shared by the op
 * files. The copy runs on the context's threads through the library's own parallel-for
 * (src/core/internal.h), so that it uses the very threads the ops use. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "core/internal.h"
#include "dispatch/dispatch.h"

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of n samples (sorts them). */
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define MAX_SAMPLES 51
#define SAMPLE_S 2e-3

/* Calls of fn per sample: the first call (t_first) or, for calls too short for one clock
 * reading, a loop of them estimates one call; inner makes a sample last about SAMPLE_S.
 */
static int estimate(bench_fn fn, bench_fn reset, void *arg, double t_first, int max_inner,
                    double *one_out) {
  double one = t_first;
  if (one < 20e-6) {
    int n = 0;
    if (reset && reset(arg)) return -1;
    double t0 = bench_now();
    do {
      if (fn(arg)) return -1;
      n++;
    } while (n < max_inner && bench_now() - t0 < 200e-6);
    one = (bench_now() - t0) / n;
  }
  if (one <= 0) one = 1e-9;
  *one_out = one;
  int inner = (int)(SAMPLE_S / one);
  if (inner < 1) inner = 1;
  if (inner > max_inner) inner = max_inner;
  return inner;
}

static int sample_count(double budget_s, double per_sample, int min_samples) {
  if (min_samples < 1) min_samples = 1;
  if (min_samples > MAX_SAMPLES) min_samples = MAX_SAMPLES;
  int samples = per_sample > 0 ? (int)(budget_s / per_sample) : MAX_SAMPLES;
  if (samples < min_samples) samples = min_samples;
  if (samples > MAX_SAMPLES) samples = MAX_SAMPLES;
  if (samples % 2 == 0 && samples < MAX_SAMPLES) samples++;
  return samples;
}

/* ------------------------------------------------------- the copy beside */

void bench_parallel(const bench_env *env, int64_t n, int parts, bench_range_fn fn,
                    void *arg) {
  if (parts <= 1 || !env->ctx || n <= 1) {
    fn(arg, 0, n);
    return;
  }
  /* grain: at least n / parts items a range, so at most `parts` ranges */
  int64_t grain = (n + parts - 1) / parts;
  llmk__parallel_for(env->ctx, n, grain, fn, arg);
}

typedef struct copy_job {
  const bench_env *env;
  char *dst;
  const char *src;
  size_t n;   /* bytes copied (each way) */
  int parts;  /* threads it runs on */
  size_t cut; /* bytes per part, a multiple of 64 */
} copy_job;

static void copy_range(void *arg, int64_t begin, int64_t end) {
  copy_job *j = arg;
  for (int64_t p = begin; p < end; p++) {
    size_t a = (size_t)p * j->cut, b = p == j->parts - 1 ? j->n : a + j->cut;
    if (a < b) memcpy(j->dst + a, j->src + a, b - a);
  }
}

static int run_copy(void *arg) {
  copy_job *j = arg;
  bench_parallel(j->env, j->parts, j->parts, copy_range, j);
  __asm__ volatile("" ::: "memory");
  return 0;
}

bench_timing bench_time(bench_env *env, bench_fn fn, bench_fn reset, void *arg,
                        double bytes, int min_samples, int max_inner) {
  bench_timing t = {NAN, NAN, 0, 0, 0, NAN, NAN, 0, 0};
  if (max_inner < 1) max_inner = 1;
  /* the copy: bytes / 2 each way, as many parts as the threads, each moving at least
   * BENCH_COPY_BYTES_PER_THREAD */
  copy_job cj;
  memset(&cj, 0, sizeof cj);
  cj.env = env;
  cj.n = (size_t)(bytes / 2 / 64 + 0.5) * 64;
  if (cj.n < 64) cj.n = 64;
  int threads = env->ctx ? llmk_context_num_threads(env->ctx) : 1;
  double by_size = 2.0 * (double)cj.n / BENCH_COPY_BYTES_PER_THREAD;
  cj.parts = by_size < 1 ? 1 : by_size < threads ? (int)by_size : threads;
  cj.cut = (cj.n / (size_t)cj.parts + 63) / 64 * 64;
  char *src = bench_alloc(cj.n, 1), *dst = bench_alloc(cj.n, 2);
  cj.src = src;
  cj.dst = dst;
  double v[MAX_SAMPLES], c[MAX_SAMPLES];
  /* warm-up: page faults, caches, branch predictors; also the first estimates */
  if (reset && reset(arg)) goto fail;
  double t0 = bench_now();
  if (fn(arg)) goto fail;
  double one, cone, t_first = bench_now() - t0;
  if (env->check_only) { /* one call and one copy, as they come */
    t0 = bench_now();
    run_copy(&cj);
    t.samples = t.inner = t.copy_inner = 1;
    t.median = t.min = t_first;
    t.copy_median = t.copy_min = bench_now() - t0;
    t.copy_threads = cj.parts;
    bench_free(src);
    bench_free(dst);
    return t;
  }
  int inner = estimate(fn, reset, arg, t_first, max_inner, &one);
  if (inner < 0) goto fail;
  t0 = bench_now();
  run_copy(&cj);
  int cinner = estimate(run_copy, NULL, &cj, bench_now() - t0, 100000, &cone);
  /* the copy's part of a sample lasts about as long as the op's, or less */
  if (cinner > 1 && cone * cinner > one * inner) cinner = (int)(one * inner / cone);
  if (cinner < 1) cinner = 1;
  int samples =
      sample_count(bench_op_budget(env), one * inner + cone * cinner, min_samples);
  for (int s = 0; s < samples; s++) {
    if (reset && reset(arg)) goto fail;
    t0 = bench_now();
    for (int i = 0; i < inner; i++)
      if (fn(arg)) goto fail;
    double t1 = bench_now();
    for (int i = 0; i < cinner; i++) run_copy(&cj);
    double t2 = bench_now();
    v[s] = (t1 - t0) / inner;
    c[s] = (t2 - t1) / cinner;
  }
  t.samples = samples;
  t.inner = inner;
  t.median = median(v, samples);
  t.min = v[0];
  t.copy_inner = cinner;
  t.copy_threads = cj.parts;
  t.copy_median = median(c, samples);
  t.copy_min = c[0];
  bench_free(src);
  bench_free(dst);
  return t;
fail:
  t.status = 1;
  bench_free(src);
  bench_free(dst);
  return t;
}

bench_timing bench_time_only(const bench_env *env, bench_fn fn, bench_fn reset, void *arg,
                             int min_samples, int max_inner) {
  bench_timing t = {NAN, NAN, 0, 0, 0, NAN, NAN, 0, 0};
  if (max_inner < 1) max_inner = 1;
  if (reset && reset(arg)) return t.status = 1, t;
  double t0 = bench_now();
  if (fn(arg)) return t.status = 1, t;
  double one, t_first = bench_now() - t0;
  if (env->check_only) {
    t.samples = t.inner = 1;
    t.median = t.min = t_first;
    return t;
  }
  int inner = estimate(fn, reset, arg, t_first, max_inner, &one);
  if (inner < 0) return t.status = 1, t;
  int samples = sample_count(bench_op_budget(env) / 2, one * inner, min_samples);
  double v[MAX_SAMPLES];
  for (int s = 0; s < samples; s++) {
    if (reset && reset(arg)) return t.status = 1, t;
    t0 = bench_now();
    for (int i = 0; i < inner; i++)
      if (fn(arg)) return t.status = 1, t;
    v[s] = (bench_now() - t0) / inner;
  }
  t.samples = samples;
  t.inner = inner;
  t.median = median(v, samples);
  t.min = v[0];
  return t;
}

void bench_time_beside(const bench_env *env, bench_fn fn, void *arg, bench_fn floor,
                       void *floor_arg, int min_samples, int max_inner, bench_timing *op,
                       bench_timing *fl) {
  bench_timing bad = {NAN, NAN, 0, 0, 1, NAN, NAN, 0, 0};
  *op = *fl = bad;
  if (max_inner < 1) max_inner = 1;
  bench_fn f[2] = {fn, floor};
  void *a[2] = {arg, floor_arg};
  int inner[2];
  double one[2], v[2][MAX_SAMPLES];
  for (int k = 0; k < 2; k++) { /* warm-up and estimates */
    double t0 = bench_now();
    if (f[k](a[k])) return;
    inner[k] = env->check_only
                   ? 1
                   : estimate(f[k], NULL, a[k], bench_now() - t0, max_inner, &one[k]);
    if (inner[k] < 0) return;
    if (env->check_only) one[k] = bench_now() - t0;
  }
  int samples = env->check_only
                    ? 1
                    : sample_count(bench_op_budget(env) / 2,
                                   one[0] * inner[0] + one[1] * inner[1], min_samples);
  for (int s = 0; s < samples; s++)
    for (int k = 0; k < 2; k++) {
      double t0 = bench_now();
      for (int i = 0; i < inner[k]; i++)
        if (f[k](a[k])) return;
      v[k][s] = (bench_now() - t0) / inner[k];
    }
  bench_timing *out[2] = {op, fl};
  for (int k = 0; k < 2; k++) {
    out[k]->status = 0;
    out[k]->samples = samples;
    out[k]->inner = inner[k];
    out[k]->min = v[k][0];
    for (int s = 1; s < samples; s++)
      if (v[k][s] < out[k]->min) out[k]->min = v[k][s];
    out[k]->median = median(v[k], samples);
  }
}

bench_timing bench_time_ref(const bench_env *env, bench_fn fn, bench_fn reset, void *arg,
                            double first_s) {
  bench_timing t = {first_s, first_s, 1, 1, 0, NAN, NAN, 0, 0};
  if (env->check_only) return t;
  /* --quick: a slow reference runs once (its check run), to keep the quick set quick */
  if (env->quick && first_s > BENCH_QUICK_REF_ONCE_S) return t;
  int more = first_s > 0 ? (int)(bench_ref_budget(env) / first_s) - 1 : 2;
  if (more < 2) more = 2; /* at least the median of 3 */
  if (more > MAX_SAMPLES - 1) more = MAX_SAMPLES - 1;
  double v[MAX_SAMPLES];
  v[0] = first_s;
  int n = 1;
  for (; n <= more; n++) {
    if (reset && reset(arg)) return t.status = 1, t;
    double t0 = bench_now();
    if (fn(arg)) return t.status = 1, t;
    v[n] = bench_now() - t0;
  }
  if (n % 2 == 0) n--; /* an odd count: the median is a sample */
  t.samples = n;
  t.median = median(v, n);
  t.min = v[0];
  return t;
}

double bench_op_budget(const bench_env *env) {
  return env->quick ? 0.2 : 0.8;
}
double bench_ref_budget(const bench_env *env) {
  return env->quick ? 0.15 : 0.6;
}

/* --------------------------------------------------------------- helpers */

void *bench_alloc(size_t n, int fill) {
  size_t sz = (n + 63) / 64 * 64;
  void *p = aligned_alloc(64, sz ? sz : 64);
  if (!p) {
    fprintf(stderr, "llmk: out of memory (%zu bytes)\n", n);
    exit(1);
  }
  memset(p, fill, sz ? sz : 64);
  return p;
}

void bench_free(void *p) {
  free(p);
}

uint64_t bench_rand(bench_rng *r) {
  /* xorshift64* */
  uint64_t x = r->s ? r->s : 0x9e3779b97f4a7c15ull;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->s = x;
  return x * 0x2545f4914f6cdd1dull;
}

uint64_t bench_rand_below(bench_rng *r, uint64_t n) {
  return n ? (bench_rand(r) >> 11) % n : 0;
}

bool bench_dtype_selected(const bench_env *env, llmk_dtype dt) {
  if (env->dtype_mask == 0 || dt == LLMK_DTYPE_INVALID) return true;
  return (env->dtype_mask >> (unsigned)dt) & 1u;
}

bool bench_want(bench_env *env, const char *op, const char *shape,
                llmk_dtype filter_dtype, const char *dtype_label) {
  if (!bench_dtype_selected(env, filter_dtype)) return false;
  if (env->shape_filter && !strstr(shape, env->shape_filter)) return false;
  if (env->list_only) {
    if (!env->silent) printf("  %-22s %-48s %s\n", op, shape, dtype_label);
    env->n_listed++;
    return false;
  }
  env->case_index++;
  bench_progress(env, "[%d/%d] %s %s %s (at %.1f s)\n", env->case_index, env->case_count,
                 op, shape, dtype_label, bench_now() - env->t_start);
  return true;
}

void bench_progress(bench_env *env, const char *fmt, ...) {
  (void)env;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fflush(stderr);
}

void bench_result_init(bench_result *r, const char *op, const char *shape,
                       const char *dtype) {
  memset(r, 0, sizeof *r);
  snprintf(r->op, sizeof r->op, "%s", op);
  snprintf(r->shape, sizeof r->shape, "%s", shape);
  snprintf(r->dtype, sizeof r->dtype, "%s", dtype);
  snprintf(r->kernel, sizeof r->kernel, "-");
  for (int i = 0; i < llmk__kernel_list_count; i++)
    if (strstr(llmk__kernel_lists[i]->name, op))
      snprintf(r->kernel, sizeof r->kernel, "%s",
               llmk_isa_name(llmk__kernels_isa(
                   llmk__kernels_pick(llmk__kernel_lists[i], llmk_get_isa()))));
  r->median_s = r->min_s = r->ref_s = r->ref_min_s = r->gbps = r->pct_bw = NAN;
  r->copy_median_s = r->copy_min_s = r->copy_gbps = r->pct_bw_min = r->speedup = NAN;
  r->spread = r->copy_spread = NAN;
  r->t1_median_s = r->t1_min_s = r->vs_t1 = NAN;
  r->whole_s = r->whole_min_s = r->empty_s = r->empty_min_s = NAN;
  r->base_median_s = r->vs_base = NAN;
}

static void record(bench_env *env, const bench_result *r) {
  if (env->n_results == env->cap_results) {
    int cap = env->cap_results ? 2 * env->cap_results : 32;
    bench_result *n = realloc(env->results, (size_t)cap * sizeof *n);
    if (!n) {
      fprintf(stderr, "llmk: out of memory\n");
      exit(1);
    }
    env->results = n;
    env->cap_results = cap;
  }
  env->results[env->n_results++] = *r;
  if (r->check != BENCH_CHECK_OK) env->failed = true;
}

const char *bench_fmt_time(double s, char *buf, size_t n) {
  if (!(s == s))
    snprintf(buf, n, "-");
  else if (s < 1e-6)
    snprintf(buf, n, "%.1f ns", s * 1e9);
  else if (s < 1e-3)
    snprintf(buf, n, "%.2f us", s * 1e6);
  else if (s < 1.0)
    snprintf(buf, n, "%.2f ms", s * 1e3);
  else
    snprintf(buf, n, "%.2f s", s);
  return buf;
}

void bench_add_extra(bench_result *r, const char *name, double median_s, double min_s) {
  if (r->n_extra == BENCH_MAX_EXTRA) return;
  bench_extra *e = &r->extra[r->n_extra++];
  snprintf(e->name, sizeof e->name, "%s", name);
  e->median_s = median_s;
  e->min_s = min_s;
}

/* ------------------------------------------------------------- targets */

static void target_add(bench_result *r, bench_target_kind kind, const char *issue,
                       double limit, bool one_thread, int floor) {
  if (r->n_target == BENCH_MAX_TARGETS + 1) return;
  bench_target *t = &r->target[r->n_target++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  snprintf(t->issue, sizeof t->issue, "%s", issue);
  t->limit = limit;
  t->one_thread = one_thread;
  t->floor = floor;
  t->value = t->paired = NAN;
  t->at_least = kind == BENCH_T_PCT_COPY || kind == BENCH_T_SPEEDUP;
}

void bench_target_want(bench_result *r, bench_target_kind kind, const char *issue,
                       double limit) {
  target_add(r, kind, issue, limit, false, -1);
}

void bench_target_want_1t(bench_result *r, bench_target_kind kind, const char *issue,
                          double limit) {
  target_add(r, kind, issue, limit, true, -1);
}

void bench_target_floor(bench_result *r, const char *issue, const char *floor_name,
                        const bench_timing *op, const bench_timing *floor, double limit) {
  if (op->status || floor->status || r->n_extra == BENCH_MAX_EXTRA) return;
  bench_add_extra(r, floor_name, floor->median, floor->min);
  target_add(r, BENCH_T_VS_FLOOR, issue, limit, false, r->n_extra - 1);
  r->target[r->n_target - 1].paired = op->median / floor->median;
}

static void judge_targets(const bench_env *env, bench_result *r) {
  /* the op's time on one thread: its 1-thread run, or the main run on 1 thread */
  double t1 = env->threads == 1 ? r->median_s : r->t1_median_s;
  for (int i = 0; i < r->n_target; i++) {
    bench_target *t = &r->target[i];
    double op = t->one_thread ? t1 : r->median_s;
    switch (t->kind) {
      case BENCH_T_PCT_COPY:
        t->value = 100.0 * r->copy_median_s / op;
        break;
      case BENCH_T_VS_COPY:
        t->value = op / r->copy_median_s;
        break;
      case BENCH_T_VS_FLOOR:
        t->value = t->paired;
        break;
      case BENCH_T_SPEEDUP:
        t->value = r->ref_s / op;
        break;
      case BENCH_T_TIME:
        t->value = op;
        break;
      case BENCH_T_WHOLE_CALL:
        t->value = r->whole_s;
        break;
      case BENCH_T_THREADS:
        t->value = r->vs_t1;
        break;
    }
    /* --check times one call: nothing to judge */
    t->judged = !isnan(t->value) && !env->check_only && r->check == BENCH_CHECK_OK;
    t->holds = t->judged && (t->at_least ? t->value >= t->limit : t->value <= t->limit);
  }
}

const char *bench_target_rule(const bench_target *t, const bench_result *r, char *buf,
                              size_t n) {
  char lim[32];
  const char *on = t->one_thread ? ", 1 thread" : "";
  switch (t->kind) {
    case BENCH_T_PCT_COPY:
      snprintf(buf, n, "%% copy >= %.0f%s", t->limit, on);
      break;
    case BENCH_T_VS_COPY:
      snprintf(buf, n, "time / copy beside (one read + write pass) <= %.2f%s", t->limit,
               on);
      break;
    case BENCH_T_VS_FLOOR:
      snprintf(buf, n, "time / %s <= %.2f%s",
               t->floor >= 0 && t->floor < r->n_extra ? r->extra[t->floor].name : "floor",
               t->limit, on);
      break;
    case BENCH_T_SPEEDUP:
      snprintf(buf, n, "reference / time >= %.0fx%s", t->limit, on);
      break;
    case BENCH_T_TIME:
      snprintf(buf, n, "time <= %s%s", bench_fmt_time(t->limit, lim, sizeof lim), on);
      break;
    case BENCH_T_WHOLE_CALL:
      snprintf(buf, n, "whole call (fresh plan) <= %s",
               bench_fmt_time(t->limit, lim, sizeof lim));
      break;
    case BENCH_T_THREADS:
      snprintf(buf, n, "time / 1-thread time <= %.2f", t->limit);
      break;
  }
  return buf;
}

const char *bench_target_value(const bench_target *t, char *buf, size_t n) {
  if (isnan(t->value))
    snprintf(buf, n, "-");
  else if (t->kind == BENCH_T_PCT_COPY)
    snprintf(buf, n, "%.1f%%", t->value);
  else if (t->kind == BENCH_T_TIME || t->kind == BENCH_T_WHOLE_CALL)
    bench_fmt_time(t->value, buf, n);
  else if (t->kind == BENCH_T_SPEEDUP)
    snprintf(buf, n, "%.1fx", t->value);
  else
    snprintf(buf, n, "%.3f", t->value);
  return buf;
}

/* ---------------------------------------------- 1 thread, small calls */

void bench_one_thread(bench_env *env, bench_result *r, bench_fn fn, bench_fn reset,
                      void *arg, llmk_context **ctx_slot, int min_samples,
                      int max_inner) {
  if (!env->ctx1 || env->check_only || r->check != BENCH_CHECK_OK) return;
  llmk_context *saved = *ctx_slot;
  *ctx_slot = env->ctx1;
  bench_progress(env, "    1 thread...\n");
  bench_timing t = bench_time_only(env, fn, reset, arg, min_samples, max_inner);
  *ctx_slot = saved;
  if (t.status) return;
  r->t1_median_s = t.median;
  r->t1_min_s = t.min;
}

/* The empty call beside a small call: same type, same loop; noinline and an asm
 * barrier, so that the call is made and not folded away. */
__attribute__((noinline)) static int empty_call(void *arg) {
  __asm__ volatile("" : : "r"(arg) : "memory");
  return 0;
}

void bench_small_call(bench_env *env, bench_result *r, bench_fn whole, bench_fn reset,
                      void *arg, int max_inner) {
  r->small = true;
  bench_fn volatile e = empty_call; /* called through a pointer, as whole is */
  bench_progress(env, "    whole call (fresh plan) and an empty call...\n");
  bench_timing w = bench_time_only(env, whole, reset, arg, 11, max_inner);
  bench_timing z = bench_time_only(env, e, NULL, arg, 11, max_inner);
  if (!w.status) {
    r->whole_s = w.median;
    r->whole_min_s = w.min;
  } else if (r->check == BENCH_CHECK_OK) {
    r->check = BENCH_CHECK_ERROR;
    snprintf(r->note, sizeof r->note, "whole call failed: %s", llmk_last_error());
  }
  if (!z.status) {
    r->empty_s = z.median;
    r->empty_min_s = z.min;
  }
}

void bench_add(bench_env *env, bench_result *r, const bench_timing *op,
               const bench_timing *ref, double bytes) {
  r->bytes = bytes;
  if (op && !op->status) {
    r->median_s = op->median;
    r->min_s = op->min;
    r->samples = op->samples;
    r->inner = op->inner;
    r->gbps = bytes / op->median * 1e-9;
    r->spread = op->median / op->min;
    if (op->copy_median > 0) {
      r->copy_median_s = op->copy_median;
      r->copy_min_s = op->copy_min;
      r->copy_inner = op->copy_inner;
      r->copy_threads = op->copy_threads;
      r->copy_gbps = bytes / op->copy_median * 1e-9;
      r->pct_bw = 100.0 * op->copy_median / op->median;
      r->pct_bw_min = 100.0 * op->copy_min / op->min;
      r->copy_spread = op->copy_median / op->copy_min;
    }
    r->busy = r->spread > BENCH_BUSY_SPREAD || r->copy_spread > BENCH_BUSY_SPREAD;
  } else if (r->check == BENCH_CHECK_OK) {
    r->check = BENCH_CHECK_ERROR;
    if (!r->note[0])
      snprintf(r->note, sizeof r->note, "run failed: %s", llmk_last_error());
  }
  if (ref && !ref->status) {
    r->ref_s = ref->median;
    r->ref_min_s = ref->min;
    r->ref_samples = ref->samples;
    if (r->median_s > 0) r->speedup = r->ref_s / r->median_s;
  }
  if (!isnan(r->t1_median_s)) r->vs_t1 = r->median_s / r->t1_median_s;
  if (env->threads > 1 && r->n_target <= BENCH_MAX_TARGETS)
    bench_target_want(r, BENCH_T_THREADS, "23.5", BENCH_THREADS_LIMIT);
  judge_targets(env, r);
  if (env->base) {
    r->base_median_s = bench_baseline_find(env, r->op, r->shape, r->dtype);
    r->vs_base = r->median_s / r->base_median_s;
  }
  record(env, r);
  char a[32], b[32], c[32];
  bench_progress(env,
                 "    %s/call (min %s), %.2f GB/s, %.1f%% of the copy beside it "
                 "(%.2f GB/s), reference %s/call%s%s%s%s\n",
                 bench_fmt_time(r->median_s, a, sizeof a),
                 bench_fmt_time(r->min_s, c, sizeof c), r->gbps, r->pct_bw, r->copy_gbps,
                 bench_fmt_time(r->ref_s, b, sizeof b), r->busy ? "  busy" : "",
                 r->check == BENCH_CHECK_OK ? "" : "  FAIL", r->note[0] ? ": " : "",
                 r->note);
}

void bench_add_error(bench_env *env, bench_result *r, const char *msg) {
  r->check = BENCH_CHECK_ERROR;
  snprintf(r->note, sizeof r->note, "%s", msg);
  record(env, r);
  bench_progress(env, "    FAIL: %s\n", msg);
}

bool bench_call_ready(bench_env *env, bench_result *r, bench_call *c, llmk_status st) {
  c->w = NULL;
  if (st == LLMK_SUCCESS) st = llmk_plan_set_repeatable(c->plan);
  if (st != LLMK_SUCCESS) {
    char msg[160];
    snprintf(msg, sizeof msg, "setup: %s", llmk_last_error());
    bench_add_error(env, r, msg);
    return false;
  }
  c->w = c->ws ? bench_alloc(c->ws, 0) : NULL;
  return true;
}

llmk_status bench_call_run(const bench_call *c) {
  return c->run(c->w, c->ws, c->plan, c->ctx);
}

int bench_call_fn(void *arg) {
  return bench_call_run(arg) != LLMK_SUCCESS;
}

bool bench_first_run(bench_result *r, const bench_call *c, bench_fn ref, void *ref_arg,
                     double *ref_s) {
  llmk_status st = bench_call_run(c);
  double t0 = bench_now();
  int ref_rc = ref(ref_arg);
  *ref_s = bench_now() - t0;
  if (st != LLMK_SUCCESS) {
    r->check = BENCH_CHECK_ERROR;
    snprintf(r->note, sizeof r->note, "%s", llmk_last_error());
    return false;
  }
  if (ref_rc != 0) {
    r->check = BENCH_CHECK_FAIL;
    snprintf(r->note, sizeof r->note, "the reference rejected the inputs (%d)", ref_rc);
    return false;
  }
  return true;
}

void bench_call_free(bench_call *c) {
  llmk_plan_destroy(c->plan);
  bench_free(c->w);
  c->plan = NULL;
  c->w = NULL;
}
