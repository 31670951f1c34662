/* Timing, the bandwidth probe, buffers, filters and progress shared by the op files. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

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

bench_timing bench_time(bench_fn fn, bench_fn reset, void *arg, double budget_s,
                        int min_samples, int max_inner) {
  bench_timing t = {NAN, NAN, 0, 0, 0};
  if (max_inner < 1) max_inner = 1;
  if (min_samples < 1) min_samples = 1;
  if (min_samples > MAX_SAMPLES) min_samples = MAX_SAMPLES;
  /* warm-up: page faults, caches, branch predictors; also the first estimate */
  if (reset && reset(arg)) return t.status = 1, t;
  double t0 = bench_now();
  if (fn(arg)) return t.status = 1, t;
  double one = bench_now() - t0;
  /* a better estimate for calls too short for one clock reading */
  if (one < 20e-6) {
    int n = 0;
    if (reset && reset(arg)) return t.status = 1, t;
    t0 = bench_now();
    do {
      if (fn(arg)) return t.status = 1, t;
      n++;
    } while (n < max_inner && bench_now() - t0 < 200e-6);
    one = (bench_now() - t0) / n;
  }
  if (one <= 0) one = 1e-9;
  const double sample_s = 2e-3;
  int inner = (int)(sample_s / one);
  if (inner < 1) inner = 1;
  if (inner > max_inner) inner = max_inner;
  int samples = (int)(budget_s / (one * inner));
  if (samples < min_samples) samples = min_samples;
  if (samples > MAX_SAMPLES) samples = MAX_SAMPLES;
  if (samples % 2 == 0 && samples < MAX_SAMPLES) samples++;
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

bench_timing bench_time_ref(bench_fn fn, bench_fn reset, void *arg, double first_s,
                            double budget_s) {
  bench_timing t = {first_s, first_s, 1, 1, 0};
  int more = first_s > 0 ? (int)(budget_s / first_s) - 1 : 0;
  if (more < 2) return t; /* slow: the check's run is the timing */
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

/* ------------------------------------------------------------- bandwidth */

typedef struct probe_arg {
  pthread_barrier_t *start, *stop;
  char *dst;
  const char *src;
  size_t n;
  int passes;
} probe_arg;

static void *probe_worker(void *p) {
  probe_arg *a = p;
  for (int i = 0; i < a->passes; i++) {
    pthread_barrier_wait(a->start);
    memcpy(a->dst, a->src, a->n);
    pthread_barrier_wait(a->stop);
  }
  return NULL;
}

double bench_memcpy_bandwidth(int threads, size_t bytes) {
  if (threads < 1) threads = 1;
  enum { PASSES = 9 };
  bytes = bytes / 4096 / (size_t)threads * 4096 * (size_t)threads;
  char *src = bench_alloc(bytes, 1), *dst = bench_alloc(bytes, 2);
  pthread_barrier_t start, stop;
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  pthread_barrier_init(&stop, NULL, (unsigned)threads);
  probe_arg *args = calloc((size_t)threads, sizeof *args);
  pthread_t *tid = calloc((size_t)threads, sizeof *tid);
  if (!args || !tid) {
    fprintf(stderr, "llmk: out of memory\n");
    exit(1);
  }
  size_t part = bytes / (size_t)threads;
  for (int i = 0; i < threads; i++)
    args[i] = (probe_arg){
        &start, &stop, dst + part * (size_t)i, src + part * (size_t)i, part, PASSES + 1};
  int started = 1;
  for (int i = 1; i < threads; i++) {
    if (pthread_create(&tid[i], NULL, probe_worker, &args[i]) != 0) {
      fprintf(stderr, "llmk: cannot start the bandwidth probe's threads\n");
      exit(1);
    }
    started++;
  }
  double v[PASSES];
  for (int pass = 0; pass <= PASSES; pass++) { /* pass 0 warms up */
    pthread_barrier_wait(&start);
    double t0 = bench_now();
    memcpy(args[0].dst, args[0].src, args[0].n);
    pthread_barrier_wait(&stop);
    if (pass) v[pass - 1] = bench_now() - t0;
  }
  for (int i = 1; i < started; i++) pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&start);
  pthread_barrier_destroy(&stop);
  free(args);
  free(tid);
  bench_free(src);
  bench_free(dst);
  return 2.0 * (double)bytes / median(v, PASSES) * 1e-9;
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
  bench_progress(env, "[%d/%d] %s %s %s\n", env->case_index, env->case_count, op, shape,
                 dtype_label);
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
  r->median_s = r->min_s = r->ref_s = r->gbps = r->pct_bw = r->speedup = NAN;
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

static const char *fmt_time(double s, char *buf, size_t n) {
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

void bench_add(bench_env *env, bench_result *r, const bench_timing *op,
               const bench_timing *ref, double bytes) {
  r->bytes = bytes;
  if (op && !op->status) {
    r->median_s = op->median;
    r->min_s = op->min;
    r->samples = op->samples;
    r->inner = op->inner;
    r->gbps = bytes / op->median * 1e-9;
    if (env->bandwidth_gbps > 0) r->pct_bw = 100.0 * r->gbps / env->bandwidth_gbps;
  } else if (r->check == BENCH_CHECK_OK) {
    r->check = BENCH_CHECK_ERROR;
    if (!r->note[0])
      snprintf(r->note, sizeof r->note, "run failed: %s", llmk_last_error());
  }
  if (ref && !ref->status) {
    r->ref_s = ref->median;
    r->ref_samples = ref->samples;
    if (r->median_s > 0) r->speedup = r->ref_s / r->median_s;
  }
  record(env, r);
  char a[32], b[32];
  bench_progress(
      env, "    %s/call, %.2f GB/s, reference %s/call%s%s%s\n",
      fmt_time(r->median_s, a, sizeof a), r->gbps, fmt_time(r->ref_s, b, sizeof b),
      r->check == BENCH_CHECK_OK ? "" : "  FAIL", r->note[0] ? ": " : "", r->note);
}

void bench_add_error(bench_env *env, bench_result *r, const char *msg) {
  r->check = BENCH_CHECK_ERROR;
  snprintf(r->note, sizeof r->note, "%s", msg);
  record(env, r);
  bench_progress(env, "    FAIL: %s\n", msg);
}
