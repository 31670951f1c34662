/* SPDX-License-Identifier: Apache-2.0 */
/* llmk_ab: A/B timing of two libllmk.so builds in one process.
 *
 *   llmk_ab [--case TEXT] [--threads N] [--min-pairs N] [--list] A.so B.so
 *
 * Each build is dlopen()ed (RTLD_NOW | RTLD_LOCAL) and every public function is resolved
 * from its own handle into its own table of function pointers, so nothing of one build
 * is ever called through the other. Each case builds its inputs once: what the op only
 * reads is shared by both builds, what it writes (and the workspace) has two copies,
 * both filled from the same bytes and, where the op updates it in place, reset from them
 * before every call, the same way for A and B. A runs on one copy while B runs on the
 * other, and they trade copies every two pairs, so that where a copy's pages happen to
 * sit (cache sets) does not favour one build. The first call of each build on each copy
 * is compared byte for byte over everything the op writes (MISMATCH otherwise). Then A
 * and B alternate (A B, B A, ...: the order swaps every pair) until at least
 * --min-pairs pairs (61), 0.3 s of timed calls and, for calls under 100 us, 1001 pairs.
 * A sample of a case that keeps no state between calls may be several calls (about
 * 50 us), shown as pairs x calls.
 *
 * Reported per case: the median time per call of A and of B, the median and 5-95% range
 * of the per-pair ratio B/A, and a 95% confidence interval of that median (order
 * statistics, no model); "B slower" where B was slower in more than 95% of the pairs
 * (p5 > 1), "B faster" where p95 < 1. The noise band of a machine is what an A/A run
 * (one revision built twice) shows.
 *
 * Only the public API (include/llmk of the tree this file is compiled in) is used. The
 * shapes and inputs are those of tools/llmk/bench_<op>.c.
 * Exit status: 0, 1 a MISMATCH or an op error, 2 usage or load error. */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/kv_layout.h"
#include "llmk/llmk.h"

/* ------------------------------------------------------------- the builds */

/* Every public function; `req` 0: absent in older builds and not used here. */
#define AB_FUNCS(X)                                      \
  X(status_string, 1)                                    \
  X(last_error, 1)                                       \
  X(dtype_size, 1)                                       \
  X(dtype_name, 1)                                       \
  X(tensor_init, 1)                                      \
  X(tensor_numel, 1)                                     \
  X(get_isa, 1)                                          \
  X(get_native_isa, 1)                                   \
  X(set_max_isa, 1)                                      \
  X(isa_name, 1)                                         \
  X(cpu_features, 1)                                     \
  X(context_create, 1)                                   \
  X(context_destroy, 1)                                  \
  X(context_num_threads, 1)                              \
  X(threading_runtime, 1)                                \
  X(plan_set_repeatable, 1)                              \
  X(plan_destroy, 1)                                     \
  X(version, 1)                                          \
  X(version_string, 1)                                   \
  X(f16_to_f32, 1)                                       \
  X(f32_to_f16, 1)                                       \
  X(bf16_to_f32, 1)                                      \
  X(f32_to_bf16, 1)                                      \
  X(fp8_e4m3fn_to_f32, 1)                                \
  X(f32_to_fp8_e4m3fn, 1)                                \
  X(fp8_e5m2_to_f32, 1)                                  \
  X(f32_to_fp8_e5m2, 1)                                  \
  X(convert, 1)                                          \
  X(kv_layout_name, 1)                                   \
  X(advance_step_get_workspace_size, 1)                  \
  X(advance_step_flat_get_workspace_size, 0)             \
  X(advance_step, 1)                                     \
  X(scatter_pa_kv_cache_get_workspace_size, 1)           \
  X(scatter_pa_kv_cache, 1)                              \
  X(gather_pa_kv_cache_get_workspace_size, 1)            \
  X(gather_pa_kv_cache, 1)                               \
  X(apply_top_k_top_p_get_workspace_size, 1)             \
  X(apply_top_k_top_p_min_p_get_workspace_size, 1)       \
  X(apply_top_k_top_p_with_sorted_get_workspace_size, 1) \
  X(sample_top_k_top_p_get_workspace_size, 1)            \
  X(apply_top_k_top_p, 1)                                \
  X(fused_causal_conv1d_get_workspace_size, 1)           \
  X(fused_causal_conv1d, 1)

typedef struct ab_lib {
  const char *path;
  char label; /* 'A' or 'B' */
  void *handle;
  llmk_context *ctx;
#define AB_FIELD(name, req) __typeof__(&llmk_##name) name;
  AB_FUNCS(AB_FIELD)
#undef AB_FIELD
} ab_lib;

/* Phase 2 of every op has this signature. */
typedef __typeof__(&llmk_advance_step) ab_exec_fn;

static int resolve(void *handle, const char *path, const char *name, bool required,
                   void *dst, size_t size) {
  void *sym = dlsym(handle, name);
  if (!sym) {
    if (!required) return 0;
    fprintf(stderr, "llmk_ab: %s: no symbol %s\n", path, name);
    return 1;
  }
  memcpy(dst, &sym, size); /* POSIX: object and function pointers convert */
  return 0;
}

static int lib_open(ab_lib *L, const char *path, char label) {
  memset(L, 0, sizeof *L);
  L->path = path;
  L->label = label;
  L->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!L->handle) {
    fprintf(stderr, "llmk_ab: %s\n", dlerror());
    return -1;
  }
  int missing = 0;
#define AB_RESOLVE(name, req) \
  missing += resolve(L->handle, path, "llmk_" #name, req, &L->name, sizeof L->name);
  AB_FUNCS(AB_RESOLVE)
#undef AB_RESOLVE
  return missing ? -1 : 0;
}

/* ------------------------------------------------------------------ helpers */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Page-aligned (so that A's and B's copies sit alike), every page touched. */
static void *xalloc(size_t n, int fill) {
  size_t sz = (n + 4095) / 4096 * 4096;
  void *p = aligned_alloc(4096, sz ? sz : 4096);
  if (!p) {
    fprintf(stderr, "llmk_ab: out of memory (%zu bytes)\n", n);
    exit(2);
  }
  memset(p, fill, sz ? sz : 4096);
  return p;
}

/* tools/llmk/bench_common.c's generator, so that the inputs are the bench's. */
typedef struct ab_rng {
  uint64_t s;
} ab_rng;

static uint64_t rng_next(ab_rng *r) { /* xorshift64* */
  uint64_t x = r->s ? r->s : 0x9e3779b97f4a7c15ull;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->s = x;
  return x * 0x2545f4914f6cdd1dull;
}

static uint64_t rng_below(ab_rng *r, uint64_t n) {
  return n ? (rng_next(r) >> 11) % n : 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* q-quantile of sorted v[0..n) (linear interpolation) */
static double quantile(const double *v, size_t n, double q) {
  if (n == 0) return NAN;
  double pos = q * (double)(n - 1);
  size_t i = (size_t)pos;
  if (i + 1 >= n) return v[n - 1];
  return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

static double median_of(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return quantile(v, n, 0.5);
}

/* The 1-minute load average (/proc/loadavg), -1 if unknown. */
static double load_average(void) {
  double load = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1) load = -1;
    fclose(f);
  }
  return load;
}

static void fmt_time(char *out, size_t n, double s) {
  if (s < 1e-6)
    snprintf(out, n, "%.1f ns", s * 1e9);
  else if (s < 1e-3)
    snprintf(out, n, "%.2f us", s * 1e6);
  else if (s < 1.0)
    snprintf(out, n, "%.3f ms", s * 1e3);
  else
    snprintf(out, n, "%.3f s", s);
}

/* ---------------------------------------------------------------- one case */

enum { AB_MAX_BUFS = 8, AB_MAX_SHARED = 16 };

/* Memory the op writes: a copy per build, both from init; [reset_off, +reset_len) is
 * restored from init before every call (0: the op's writes do not change its input). */
typedef struct ab_buf {
  const char *name;
  unsigned char *p[2], *init;
  size_t n, reset_off, reset_len;
} ab_buf;

typedef struct ab_run {
  ab_lib *lib[2];
  ab_exec_fn exec[2];
  llmk_plan *plan[2][2]; /* [build][copy] */
  size_t wss[2][2];
  void *ws[2]; /* per copy: the larger of the two builds' sizes */
  ab_buf buf[AB_MAX_BUFS];
  int nbuf;
  void *shared[AB_MAX_SHARED]; /* inputs both builds read */
  int nshared;
  bool error;
  char msg[320];
} ab_run;

static void *sh_alloc(ab_run *r, size_t n, int fill) {
  if (r->nshared == AB_MAX_SHARED) {
    fprintf(stderr, "llmk_ab: too many shared buffers\n");
    exit(2);
  }
  return r->shared[r->nshared++] = xalloc(n, fill);
}

/* A per-build buffer of n bytes; returns its index. The caller fills buf[i].init. */
static int pb_new(ab_run *r, const char *name, size_t n, int fill, bool reset) {
  if (r->nbuf == AB_MAX_BUFS) {
    fprintf(stderr, "llmk_ab: too many per-build buffers\n");
    exit(2);
  }
  ab_buf *b = &r->buf[r->nbuf];
  b->name = name;
  b->n = n;
  b->init = xalloc(n, fill);
  b->p[0] = xalloc(n, fill);
  b->p[1] = xalloc(n, fill);
  b->reset_off = 0;
  b->reset_len = reset ? n : 0;
  return r->nbuf++;
}

/* Both copies from init, and the workspaces. */
static void run_prepare(ab_run *r) {
  for (int i = 0; i < r->nbuf; i++)
    for (int s = 0; s < 2; s++) memcpy(r->buf[i].p[s], r->buf[i].init, r->buf[i].n);
  for (int s = 0; s < 2; s++) {
    size_t n = r->wss[0][s] > r->wss[1][s] ? r->wss[0][s] : r->wss[1][s];
    r->ws[s] = n ? xalloc(n + 64, 0) : NULL;
  }
}

static bool run_resets(const ab_run *r) {
  for (int i = 0; i < r->nbuf; i++)
    if (r->buf[i].reset_len) return true;
  return false;
}

static void run_free(ab_run *r) {
  for (int k = 0; k < 2; k++) {
    for (int s = 0; s < 2; s++)
      if (r->plan[k][s]) r->lib[k]->plan_destroy(r->plan[k][s]);
    free(r->ws[k]);
  }
  for (int i = 0; i < r->nbuf; i++) {
    free(r->buf[i].init);
    free(r->buf[i].p[0]);
    free(r->buf[i].p[1]);
  }
  for (int i = 0; i < r->nshared; i++) free(r->shared[i]);
}

/* Records a failed setup call of build k; returns true if st is an error. */
static bool failed(ab_run *r, int k, llmk_status st, const char *what) {
  if (st == LLMK_SUCCESS) return false;
  if (!r->error)
    snprintf(r->msg, sizeof r->msg, "%c: %s: %s: %s", r->lib[k]->label, what,
             r->lib[k]->status_string(st), r->lib[k]->last_error());
  r->error = true;
  return true;
}

/* After phase 1 of build k on copy s: the plan made repeatable. */
static void plan_ready(ab_run *r, int k, int s, llmk_status st, ab_exec_fn exec) {
  r->exec[k] = exec;
  if (failed(r, k, st, "get_workspace_size")) return;
  failed(r, k, r->lib[k]->plan_set_repeatable(r->plan[k][s]), "plan_set_repeatable");
}

static void reset_copy(ab_run *r, int s) {
  for (int i = 0; i < r->nbuf; i++) {
    ab_buf *b = &r->buf[i];
    if (b->reset_len)
      memcpy(b->p[s] + b->reset_off, b->init + b->reset_off, b->reset_len);
  }
}

/* One sample of build k on copy s: the reset (untimed), then `inner` calls; seconds per
 * call. */
static double sample(ab_run *r, int k, int s, int inner, llmk_status *st) {
  reset_copy(r, s);
  ab_lib *L = r->lib[k];
  double t0 = now_s();
  for (int i = 0; i < inner; i++) {
    llmk_status rc = r->exec[k](r->ws[s], r->wss[k][s], r->plan[k][s], L->ctx);
    if (rc != LLMK_SUCCESS) *st = rc;
  }
  return (now_s() - t0) / inner;
}

/* ----------------------------------------------------------------- options */

typedef struct ab_opts {
  const char *filter;
  int threads;
  int min_pairs;
  bool list;
} ab_opts;

typedef struct ab_summary {
  int cases, mismatches, errors;
  int slower, faster; /* p5 > 1, p95 < 1 */
  double log_sum;
  int n_ratio;
  double max_ratio, min_ratio;
  char max_case[96], min_case[96];
  char slower_cases[512];
} ab_summary;

enum { AB_NAME_W = 58, AB_MAX_PAIRS = 200001 };
#define AB_MIN_TIME_S 0.3   /* timed calls, A and B together, per case */
#define AB_MICRO_S 100e-6   /* calls shorter than this take AB_MICRO_PAIRS pairs */
#define AB_MICRO_PAIRS 1001 /* at least */
#define AB_SAMPLE_S 50e-6   /* a sample of a stateless case: this long at least */

static void print_row(const char *name, const char *a, const char *b, const char *ratio,
                      const char *ci, const char *pairs, const char *flag) {
  int pad = flag[0] && strlen(pairs) < 11 ? 11 - (int)strlen(pairs) : 0;
  printf("%-*s %11s %11s  %-20s %-14s %s%*s%s\n", AB_NAME_W, name, a, b, ratio, ci, pairs,
         pad, "", flag);
}

/* Checks, times and reports one prepared case. */
static void measure(const ab_opts *o, ab_run *r, const char *name, ab_summary *sum) {
  sum->cases++;
  if (r->error) {
    printf("%-*s ERROR %s\n", AB_NAME_W, name, r->msg);
    sum->errors++;
    fflush(stdout);
    return;
  }
  run_prepare(r);
  /* the first call of each build on each copy (A on 0 and B on 1, then the other way
   * round): the same bytes written? */
  for (int ph = 0; ph < 2; ph++) {
    for (int k = 0; k < 2; k++) {
      llmk_status st = LLMK_SUCCESS;
      (void)sample(r, k, k ^ ph, 1, &st);
      if (failed(r, k, st, "run")) {
        printf("%-*s ERROR %s\n", AB_NAME_W, name, r->msg);
        sum->errors++;
        fflush(stdout);
        return;
      }
    }
    for (int i = 0; i < r->nbuf; i++) {
      ab_buf *b = &r->buf[i];
      const unsigned char *pa = b->p[ph], *pb = b->p[1 - ph];
      if (memcmp(pa, pb, b->n) == 0) continue;
      size_t at = 0;
      while (pa[at] == pb[at]) at++;
      size_t diff = 0;
      for (size_t j = at; j < b->n; j++) diff += pa[j] != pb[j];
      printf(
          "%-*s MISMATCH %s: %zu of %zu bytes differ, first at byte %zu (A %02x, B "
          "%02x; A on copy %d)\n",
          AB_NAME_W, name, b->name, diff, b->n, at, pa[at], pb[at], ph);
      sum->mismatches++;
      fflush(stdout);
      return;
    }
  }

  /* calls per sample: one where the op changes its inputs, else about AB_SAMPLE_S */
  llmk_status st = LLMK_SUCCESS;
  double cal[2][3];
  for (int j = 0; j < 3; j++)
    for (int k = 0; k < 2; k++) cal[k][j] = sample(r, k, k ^ (j & 1), 1, &st);
  double t1 = fmin(median_of(cal[0], 3), median_of(cal[1], 3));
  int inner = 1;
  if (!run_resets(r) && t1 < AB_SAMPLE_S) {
    double n = ceil(AB_SAMPLE_S / fmax(t1, 1e-9));
    inner = n > 10000 ? 10000 : (int)n;
  }
  int min_pairs = o->min_pairs;
  if (t1 < AB_MICRO_S && min_pairs < AB_MICRO_PAIRS) min_pairs = AB_MICRO_PAIRS;

  size_t cap = 4096, n = 0;
  double *ta = malloc(cap * sizeof *ta), *tb = malloc(cap * sizeof *tb),
         *ratio = malloc(cap * sizeof *ratio);
  if (!ta || !tb || !ratio) exit(2);
  for (int k = 0; k < 2; k++) (void)sample(r, k, k, inner, &st); /* warm-up */
  double timed = 0;
  while (n < AB_MAX_PAIRS && (n < (size_t)min_pairs || timed < AB_MIN_TIME_S) &&
         st == LLMK_SUCCESS) {
    if (n == cap) {
      cap *= 2;
      ta = realloc(ta, cap * sizeof *ta);
      tb = realloc(tb, cap * sizeof *tb);
      ratio = realloc(ratio, cap * sizeof *ratio);
      if (!ta || !tb || !ratio) exit(2);
    }
    /* the order swaps every pair, the copies every two pairs */
    const int ca = (int)((n >> 1) & 1);
    double a, b;
    if (n & 1) {
      b = sample(r, 1, 1 - ca, inner, &st);
      a = sample(r, 0, ca, inner, &st);
    } else {
      a = sample(r, 0, ca, inner, &st);
      b = sample(r, 1, 1 - ca, inner, &st);
    }
    ta[n] = a;
    tb[n] = b;
    ratio[n] = b / a;
    timed += (a + b) * inner;
    n++;
  }
  if (st != LLMK_SUCCESS) {
    snprintf(r->msg, sizeof r->msg, "a timed call failed: %s",
             r->lib[0]->status_string(st));
    printf("%-*s ERROR %s\n", AB_NAME_W, name, r->msg);
    sum->errors++;
  } else {
    double ma = median_of(ta, n), mb = median_of(tb, n), mr = median_of(ratio, n);
    double p5 = quantile(ratio, n, 0.05), p95 = quantile(ratio, n, 0.95);
    char sa[32], sb[32], sr[64], sp[32];
    fmt_time(sa, sizeof sa, ma);
    fmt_time(sb, sizeof sb, mb);
    snprintf(sr, sizeof sr, "%.3f [%.3f, %.3f]", mr, p5, p95);
    /* a 95% confidence interval of the median ratio (order statistics, no model) */
    double half = 0.98 * sqrt((double)n), lo = floor((double)n / 2 - half),
           hi = ceil((double)n / 2 + half);
    size_t ilo = lo < 0 ? 0 : (size_t)lo, ihi = hi > (double)(n - 1) ? n - 1 : (size_t)hi;
    char sc[40];
    snprintf(sc, sizeof sc, "%.3f-%.3f", ratio[ilo], ratio[ihi]);
    if (inner > 1)
      snprintf(sp, sizeof sp, "%zu x%d", n, inner);
    else
      snprintf(sp, sizeof sp, "%zu", n);
    print_row(name, sa, sb, sr, sc, sp,
              p5 > 1.0    ? "B slower"
              : p95 < 1.0 ? "B faster"
                          : "");
    sum->log_sum += log(mr);
    if (sum->n_ratio == 0 || mr > sum->max_ratio) {
      sum->max_ratio = mr;
      snprintf(sum->max_case, sizeof sum->max_case, "%s", name);
    }
    if (sum->n_ratio == 0 || mr < sum->min_ratio) {
      sum->min_ratio = mr;
      snprintf(sum->min_case, sizeof sum->min_case, "%s", name);
    }
    sum->n_ratio++;
    if (p5 > 1.0) {
      sum->slower++;
      size_t l = strlen(sum->slower_cases);
      snprintf(sum->slower_cases + l, sizeof sum->slower_cases - l, "%s%s", l ? "; " : "",
               name);
    }
    if (p95 < 1.0) sum->faster++;
  }
  fflush(stdout);
  free(ta);
  free(tb);
  free(ratio);
}

/* ------------------------------------------------------------ advance_step */

typedef struct as_spec {
  bool spec;
  int64_t num_seqs, S, block_size, max_blocks;
} as_spec;

static const as_spec as_cases[] = {
    {false, 1024, 0, 16, 256},
    {true, 256, 3, 16, 256},
};

enum { AS_MAX_INNER = 200 }; /* the bench's room in the block tables */

/* bench_advance_step.c's arena: arrays at staggered offsets (no 4K aliasing). */
static size_t as_carve(size_t *off, size_t elems) {
  size_t r = *off;
  *off += (elems * 8 + 4095) / 4096 * 4096 + 576;
  return r;
}

static void setup_advance_step(ab_run *r, const as_spec *c) {
  const int64_t T = c->spec ? c->S + 1 : 1, rows = c->num_seqs * T;
  size_t off = 0, o_tok = as_carve(&off, (size_t)rows),
         o_samp = as_carve(&off, (size_t)(c->num_seqs * T)),
         o_pos = as_carve(&off, (size_t)rows), o_lens = as_carve(&off, (size_t)rows),
         o_slot = as_carve(&off, (size_t)rows),
         o_spec = as_carve(&off, (size_t)(c->num_seqs * c->S + 1)),
         o_acc = as_carve(&off, (size_t)c->num_seqs),
         o_tab = as_carve(&off, (size_t)(c->num_seqs * c->max_blocks));
  int bi = pb_new(r, "arena (all tensors)", off, 0, false);
  ab_buf *buf = &r->buf[bi];
  buf->reset_off = c->spec ? o_pos : o_lens; /* the tensor updated in place */
  buf->reset_len = (size_t)rows * 8;
  unsigned char *a = buf->init;
  int64_t *tables = (int64_t *)(void *)(a + o_tab),
          *sampled = (int64_t *)(void *)(a + o_samp),
          *spec = (int64_t *)(void *)(a + o_spec), *acc = (int64_t *)(void *)(a + o_acc),
          *inout = (int64_t *)(void *)(a + buf->reset_off);

  ab_rng rng = {0x5eed0001u + (uint64_t)c->num_seqs};
  const int64_t room = (AS_MAX_INNER * T + c->block_size - 1) / c->block_size + 8;
  const int64_t max_pos = (c->max_blocks - room) * c->block_size;
  for (int64_t i = 0; i < c->num_seqs * c->max_blocks; i++)
    tables[i] = (int64_t)rng_below(&rng, 100000);
  if (!c->spec) {
    for (int64_t q = 0; q < c->num_seqs; q++) {
      inout[q] = (int64_t)rng_below(&rng, (uint64_t)max_pos);
      sampled[q] = (int64_t)rng_below(&rng, 150000);
    }
  } else {
    for (int64_t i = 0; i < c->num_seqs; i++) {
      int64_t base = (int64_t)rng_below(&rng, (uint64_t)max_pos);
      int64_t f = 1 + (int64_t)rng_below(&rng, (uint64_t)T); /* first -1 */
      for (int64_t j = 0; j < T; j++) {
        inout[i * T + j] = base + j;
        sampled[i * T + j] = j < f ? (int64_t)rng_below(&rng, 150000) : -1;
      }
      for (int64_t j = 0; j < c->S; j++)
        spec[i * c->S + j] = (int64_t)rng_below(&rng, 150000);
      acc[i] = f - 1;
    }
  }

  int64_t n[1] = {rows}, samp[2] = {c->num_seqs, T},
          tab[2] = {c->num_seqs, c->max_blocks}, sps[2] = {c->num_seqs, c->S},
          accs[1] = {c->num_seqs};
  for (int j = 0; j < 4; j++) { /* build k, copy s */
    const int k = j / 2, s = j % 2;
    ab_lib *L = r->lib[k];
    unsigned char *b = buf->p[s];
    llmk_tensor t[8];
    L->tensor_init(&t[0], LLMK_I64, 1, n, NULL, b + o_tok);
    L->tensor_init(&t[1], LLMK_I64, 2, samp, NULL, b + o_samp);
    L->tensor_init(&t[2], LLMK_I64, 1, n, NULL, b + o_pos);
    L->tensor_init(&t[3], LLMK_I64, 1, n, NULL, b + o_lens);
    L->tensor_init(&t[4], LLMK_I64, 1, n, NULL, b + o_slot);
    L->tensor_init(&t[5], LLMK_I64, 2, tab, NULL, b + o_tab);
    L->tensor_init(&t[6], LLMK_I64, 2, sps, NULL, b + o_spec);
    L->tensor_init(&t[7], LLMK_I64, 1, accs, NULL, b + o_acc);
    llmk_status st = L->advance_step_get_workspace_size(
        &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], c->spec ? &t[6] : NULL,
        c->spec ? &t[7] : NULL, c->num_seqs, c->num_seqs, c->block_size, &r->wss[k][s],
        &r->plan[k][s]);
    plan_ready(r, k, s, st, L->advance_step);
  }
}

static void name_advance_step(const as_spec *c, char *s, size_t n) {
  if (c->spec)
    snprintf(s, n, "advance_step spec num_seqs=%lld S=%lld bs=%lld i64",
             (long long)c->num_seqs, (long long)c->S, (long long)c->block_size);
  else
    snprintf(s, n, "advance_step plain num_seqs=%lld bs=%lld i64", (long long)c->num_seqs,
             (long long)c->block_size);
}

/* ------------------------------------------------------- paged KV cache */

typedef struct kv_spec {
  bool gather;
  const char *label;
  int64_t T, H, D, block_size, num_blocks;
  llmk_dtype src, cache; /* gather: src = the cache's dtype, cache = the output's */
  llmk_kv_layout layout;
  bool contiguous; /* prefill: blocks in a random order, filled in token order */
  int64_t nseq;    /* gather */
} kv_spec;

#define BF LLMK_BF16
#define E4 LLMK_FP8_E4M3FN
#define NHD LLMK_KV_BLOCKS
static const kv_spec kv_cases[] = {
    {false, "decode", 256, 8, 128, 128, 512, BF, BF, NHD, false, 0},
    {false, "decode", 1, 8, 128, 128, 64, BF, BF, NHD, false, 0},
    {false, "prefill", 16384, 8, 128, 128, 256, BF, BF, NHD, true, 0},
    {false, "decode", 256, 8, 128, 128, 512, BF, BF, LLMK_KV_XSPLIT, false, 0},
    {false, "decode", 256, 8, 128, 128, 512, BF, E4, NHD, false, 0},
    {true, "1 seq", 16384, 8, 128, 128, 256, BF, BF, NHD, true, 1},
};

static void kv_cache_shape(const ab_lib *L, const kv_spec *c, llmk_dtype cache, bool key,
                           int *rank, int64_t *shape) {
  tool_kv_cache_shape(c->layout, (int64_t)L->dtype_size(cache), key, c->num_blocks,
                      c->block_size, c->H, c->D, rank, shape);
}

/* n values of dtype dt, roughly uniform in [-amp, amp) (bench_pa_kv_cache.h), converted
 * by build A's llmk_convert */
static void kv_fill_values(const ab_lib *L, void *dst, llmk_dtype dt, size_t n, float amp,
                           ab_rng *rng) {
  enum { CHUNK = 4096 };
  float tmp[CHUNK];
  size_t es = L->dtype_size(dt);
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t m = n - i < CHUNK ? n - i : CHUNK;
    for (size_t j = 0; j < m; j++)
      tmp[j] = ((float)(rng_next(rng) >> 40) * 0x1p-24f * 2.0f - 1.0f) * amp;
    L->convert((char *)dst + i * es, dt, tmp, LLMK_F32, m);
  }
}

static void kv_make_slots(const kv_spec *c, int64_t *slots, ab_rng *rng) {
  if (c->contiguous) {
    int64_t nblk = (c->T + c->block_size - 1) / c->block_size;
    int64_t *perm = xalloc((size_t)c->num_blocks * 8, 0);
    for (int64_t i = 0; i < c->num_blocks; i++) perm[i] = i;
    for (int64_t i = 0; i < nblk; i++) {
      int64_t j = i + (int64_t)rng_below(rng, (uint64_t)(c->num_blocks - i));
      int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (int64_t t = 0; t < c->T; t++)
      slots[t] = perm[t / c->block_size] * c->block_size + t % c->block_size;
    free(perm);
  } else { /* distinct random slots */
    int64_t nslots = c->num_blocks * c->block_size;
    int64_t *perm = xalloc((size_t)nslots * 8, 0);
    for (int64_t i = 0; i < nslots; i++) perm[i] = i;
    for (int64_t i = 0; i < c->T; i++) {
      int64_t j = i + (int64_t)rng_below(rng, (uint64_t)(nslots - i));
      int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      slots[i] = perm[i];
    }
    free(perm);
  }
}

static void setup_scatter(ab_run *r, const kv_spec *c) {
  const ab_lib *A = r->lib[0];
  bool quant = c->src != c->cache;
  ab_rng rng = {0x6b76u + (uint64_t)c->T * 31u + (uint64_t)c->D};
  size_t tok = (size_t)(c->T * c->H * c->D);
  size_t ses = A->dtype_size(c->src), ces = A->dtype_size(c->cache);
  size_t cache_bytes = (size_t)(c->num_blocks * c->block_size * c->H * c->D) * ces;
  void *key = sh_alloc(r, tok * ses, 0), *value = sh_alloc(r, tok * ses, 0);
  kv_fill_values(A, key, c->src, tok, 4.0f, &rng);
  kv_fill_values(A, value, c->src, tok, 4.0f, &rng);
  int kc = pb_new(r, "key_cache", cache_bytes, 0x11, false);
  int vc = pb_new(r, "value_cache", cache_bytes, 0x11, false);
  int64_t *slots = sh_alloc(r, (size_t)c->T * 8, 0);
  kv_make_slots(c, slots, &rng);
  float *scale = sh_alloc(r, sizeof(float), 0);
  *scale = 0.25f;
  int64_t ts[3] = {c->T, c->H, c->D}, cs[5], ns[1] = {c->T};
  for (int j = 0; j < 4; j++) { /* build k, copy s */
    const int k = j / 2, s = j % 2;
    ab_lib *L = r->lib[k];
    llmk_tensor tk, tv, tkc, tvc, tsl, tsc;
    int rank;
    L->tensor_init(&tk, c->src, 3, ts, NULL, key);
    L->tensor_init(&tv, c->src, 3, ts, NULL, value);
    kv_cache_shape(L, c, c->cache, true, &rank, cs);
    L->tensor_init(&tkc, c->cache, rank, cs, NULL, r->buf[kc].p[s]);
    kv_cache_shape(L, c, c->cache, false, &rank, cs);
    L->tensor_init(&tvc, c->cache, rank, cs, NULL, r->buf[vc].p[s]);
    L->tensor_init(&tsl, LLMK_I64, 1, ns, NULL, slots);
    L->tensor_init(&tsc, LLMK_F32, 0, NULL, NULL, scale);
    llmk_status st = L->scatter_pa_kv_cache_get_workspace_size(
        &tk, &tv, &tkc, &tvc, &tsl, quant ? &tsc : NULL, quant ? &tsc : NULL, c->layout,
        &r->wss[k][s], &r->plan[k][s]);
    plan_ready(r, k, s, st, L->scatter_pa_kv_cache);
  }
}

static void setup_gather(ab_run *r, const kv_spec *c) {
  const ab_lib *A = r->lib[0];
  bool conv = c->src != c->cache;
  ab_rng rng = {0x9a7e4u + (uint64_t)c->T};
  int64_t L_ = c->T / c->nseq, max_blocks = (L_ + c->block_size - 1) / c->block_size;
  size_t tok = (size_t)(c->T * c->H * c->D);
  size_t ces = A->dtype_size(c->src), oes = A->dtype_size(c->cache);
  size_t cache_elems = (size_t)(c->num_blocks * c->block_size * c->H * c->D);
  void *kc = sh_alloc(r, cache_elems * ces, 0), *vc = sh_alloc(r, cache_elems * ces, 0);
  kv_fill_values(A, kc, c->src, cache_elems, 4.0f, &rng);
  kv_fill_values(A, vc, c->src, cache_elems, 4.0f, &rng);
  int ko = pb_new(r, "key_out", tok * oes, 0, false);
  int vo = pb_new(r, "value_out", tok * oes, 0, false);
  int64_t *tab = sh_alloc(r, (size_t)(c->nseq * max_blocks) * 8, 0);
  int64_t *lens = sh_alloc(r, (size_t)c->nseq * 8, 0);
  { /* distinct blocks in a random order */
    int64_t *perm = xalloc((size_t)c->num_blocks * 8, 0);
    for (int64_t i = 0; i < c->num_blocks; i++) perm[i] = i;
    for (int64_t i = 0; i < c->nseq * max_blocks; i++) {
      int64_t j = i + (int64_t)rng_below(&rng, (uint64_t)(c->num_blocks - i));
      int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      tab[i] = perm[i];
    }
    free(perm);
  }
  for (int64_t i = 0; i < c->nseq; i++) lens[i] = L_;
  float *scale = sh_alloc(r, sizeof(float), 0);
  *scale = 0.25f;
  int64_t ts[3] = {c->T, c->H, c->D}, cs[5], tb[2] = {c->nseq, max_blocks},
          nl[1] = {c->nseq};
  for (int j = 0; j < 4; j++) { /* build k, copy s */
    const int k = j / 2, s = j % 2;
    ab_lib *L = r->lib[k];
    llmk_tensor tkc, tvc, ttab, tlen, tsc, tko, tvo;
    int rank;
    kv_cache_shape(L, c, c->src, true, &rank, cs);
    L->tensor_init(&tkc, c->src, rank, cs, NULL, kc);
    kv_cache_shape(L, c, c->src, false, &rank, cs);
    L->tensor_init(&tvc, c->src, rank, cs, NULL, vc);
    L->tensor_init(&tko, c->cache, 3, ts, NULL, r->buf[ko].p[s]);
    L->tensor_init(&tvo, c->cache, 3, ts, NULL, r->buf[vo].p[s]);
    L->tensor_init(&ttab, LLMK_I64, 2, tb, NULL, tab);
    L->tensor_init(&tlen, LLMK_I64, 1, nl, NULL, lens);
    L->tensor_init(&tsc, LLMK_F32, 0, NULL, NULL, scale);
    llmk_status st = L->gather_pa_kv_cache_get_workspace_size(
        &tkc, &tvc, &ttab, &tlen, conv ? &tsc : NULL, conv ? &tsc : NULL, &tko, &tvo,
        c->layout, &r->wss[k][s], &r->plan[k][s]);
    plan_ready(r, k, s, st, L->gather_pa_kv_cache);
  }
}

static void name_kv(const ab_lib *L, const kv_spec *c, char *s, size_t n) {
  const char *lay = c->layout == LLMK_KV_BLOCKS   ? "NHD"
                    : c->layout == LLMK_KV_XSPLIT ? "x-split"
                                                  : "NZ";
  char dt[40];
  if (c->src == c->cache)
    snprintf(dt, sizeof dt, "%s", L->dtype_name(c->src));
  else
    snprintf(dt, sizeof dt, "%s->%s", L->dtype_name(c->src), L->dtype_name(c->cache));
  snprintf(s, n, "%s %s T=%lld H=%lld D=%lld bs=%lld %s %s",
           c->gather ? "gather" : "scatter", c->label, (long long)c->T, (long long)c->H,
           (long long)c->D, (long long)c->block_size, lay, dt);
}

/* ------------------------------------------------------- apply_top_k_top_p */

typedef struct tk_spec {
  int64_t B, V;
  llmk_dtype dtype;
  int32_t k; /* 0: no k tensor */
  float p;   /* < 0: no p tensor */
} tk_spec;

static const tk_spec tk_cases[] = {
    {64, 128256, LLMK_F32, 50, 0.9f},  {64, 128256, LLMK_F32, 0, 0.9f},
    {64, 128256, LLMK_F32, 50, -1.0f}, {1, 151936, LLMK_F32, 50, 0.9f},
    {1, 151936, LLMK_F32, 0, 0.9f},    {256, 32000, LLMK_F32, 50, 0.9f},
    {64, 128256, LLMK_BF16, 50, 0.9f},
};

static void setup_top_k_top_p(ab_run *r, const tk_spec *c) {
  const ab_lib *A = r->lib[0];
  size_t n = (size_t)(c->B * c->V), esz = A->dtype_size(c->dtype);
  float *x = xalloc(n * 4, 0);
  ab_rng rng = {0x7b7bu + (uint64_t)c->V};
  for (size_t i = 0; i < n; i++) { /* roughly normal logits, sd 2 (bench) */
    float s = 0;
    for (int j = 0; j < 4; j++) s += (float)(rng_next(&rng) >> 40) * 0x1p-24f;
    x[i] = (s - 2.0f) * 3.4f;
  }
  void *logits = sh_alloc(r, n * esz, 0);
  A->convert(logits, c->dtype, x, LLMK_F32, n);
  free(x);
  float *pv = sh_alloc(r, (size_t)c->B * 4, 0);
  int32_t *kv = sh_alloc(r, (size_t)c->B * 4, 0);
  for (int64_t b = 0; b < c->B; b++) {
    pv[b] = c->p;
    kv[b] = c->k;
  }
  int out = pb_new(r, "out", n * esz, 0, false);
  bool has_p = c->p >= 0, has_k = c->k != 0;
  int64_t bv[2] = {c->B, c->V}, bb[1] = {c->B};
  for (int j = 0; j < 4; j++) { /* build k, copy s */
    const int k = j / 2, s = j % 2;
    ab_lib *L = r->lib[k];
    llmk_tensor tl, to, tp, tk;
    L->tensor_init(&tl, c->dtype, 2, bv, NULL, logits);
    L->tensor_init(&to, c->dtype, 2, bv, NULL, r->buf[out].p[s]);
    L->tensor_init(&tp, LLMK_F32, 1, bb, NULL, pv);
    L->tensor_init(&tk, LLMK_I32, 1, bb, NULL, kv);
    llmk_status st = L->apply_top_k_top_p_get_workspace_size(
        &tl, has_p ? &tp : NULL, has_k ? &tk : NULL, &to, &r->wss[k][s], &r->plan[k][s]);
    plan_ready(r, k, s, st, L->apply_top_k_top_p);
  }
}

static void name_top_k_top_p(const ab_lib *L, const tk_spec *c, char *s, size_t n) {
  char kp[48];
  if (c->k && c->p >= 0)
    snprintf(kp, sizeof kp, "k=%d p=%g", (int)c->k, (double)c->p);
  else if (c->k)
    snprintf(kp, sizeof kp, "k=%d", (int)c->k);
  else
    snprintf(kp, sizeof kp, "p=%g", (double)c->p);
  snprintf(s, n, "top_k_top_p B=%lld V=%lld %s %s", (long long)c->B, (long long)c->V, kp,
           L->dtype_name(c->dtype));
}

/* ----------------------------------------------------- fused_causal_conv1d */

typedef struct cc_spec {
  const char *label;
  int64_t batch, dim, m;
  int kind;            /* 0 fixed batch (3-D x), 1 varlen decode, 2 prefill, 3 mixed */
  int64_t prefill_len; /* kind 2/3 */
  int64_t n_prefill;   /* kind 3 */
  int act;             /* 0 none, 1 SiLU and a bias, 2 SiLU alone, 3 a bias alone */
  int K;
} cc_spec;

static const cc_spec cc_cases[] = {
    {"decode fixed silu+bias", 256, 8192, 0, 0, 0, 0, 1, 4},
    {"decode fixed bias", 256, 8192, 0, 0, 0, 0, 3, 4},
    {"prefill silu+bias", 4, 8192, 0, 2, 1024, 0, 1, 4},
    {"decode varlen", 256, 8192, 3, 1, 0, 0, 0, 3},
    {"mixed", 128, 8192, 3, 3, 512, 2, 0, 3},
};

/* n values in about [-2, 2] of dtype dt, none tiny (bench_fused_causal_conv1d.c) */
static void cc_fill_x(const ab_lib *L, void *dst, llmk_dtype dt, size_t n, ab_rng *rng) {
  enum { CHUNK = 4096 };
  float tmp[CHUNK];
  size_t es = L->dtype_size(dt);
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t m = n - i < CHUNK ? n - i : CHUNK;
    for (size_t j = 0; j < m; j++) {
      uint64_t u = rng_next(rng);
      float v = 0.25f + (float)(u >> 41) * 0x1p-23f * 1.75f;
      tmp[j] = (u & 1) ? -v : v;
    }
    L->convert((char *)dst + i * es, dt, tmp, LLMK_F32, m);
  }
}

static void setup_conv1d(ab_run *r, const cc_spec *c) {
  const ab_lib *A = r->lib[0];
  const llmk_dtype dt = LLMK_BF16;
  ab_rng rng = {0xc0171du + (uint64_t)c->batch * 7u + (uint64_t)c->kind};
  const bool silu = c->act == 1 || c->act == 2, has_bias = c->act == 1 || c->act == 3;
  const int64_t K = c->K, dim = c->dim, B = c->batch, m = c->m, C = K - 1 + m;
  const size_t es = A->dtype_size(dt);
  int64_t *len = xalloc((size_t)B * 8, 0);
  int64_t T = 0;
  for (int64_t b = 0; b < B; b++) {
    if (c->kind == 0)
      len[b] = m + 1;
    else if (c->kind == 1)
      len[b] = 1 + (int64_t)rng_below(&rng, (uint64_t)(m + 1));
    else if (c->kind == 2 || b < c->n_prefill)
      len[b] = c->prefill_len;
    else
      len[b] = 1 + (int64_t)rng_below(&rng, (uint64_t)(m + 1));
    T += len[b];
  }
  const bool use_nacc = c->kind != 2 && m > 0;
  const int64_t lines = 2 * B + 8;
  size_t x_bytes = (size_t)(T * dim) * es, cs_bytes = (size_t)(lines * C * dim) * es;
  int x = pb_new(r, "x", x_bytes, 0, true);
  int cs = pb_new(r, "conv_states", cs_bytes, 0, true);
  void *w = sh_alloc(r, (size_t)(K * dim) * es, 0),
       *bias = sh_alloc(r, (size_t)dim * es, 0);
  cc_fill_x(A, r->buf[x].init, dt, (size_t)(T * dim), &rng);
  cc_fill_x(A, r->buf[cs].init, dt, (size_t)(lines * C * dim), &rng);
  {
    float *tw = xalloc((size_t)(K * dim) * 4, 0), *tb = xalloc((size_t)dim * 4, 0);
    static const float taps3[3] = {0.5f, 0.5f, 0.70710678f};
    for (int64_t i = 0; i < K * dim; i++) {
      float tap = K == 3 ? taps3[i / dim] : 0.5f; /* K=4: 4 x 0.25 */
      tw[i] = (rng_next(&rng) & 1) ? -tap : tap;
    }
    for (int64_t i = 0; i < dim; i++) {
      uint64_t u = rng_next(&rng);
      tb[i] = (float)(1 + (u >> 1) % 4) * ((u & 1) ? -0.0625f : 0.0625f);
    }
    A->convert(w, dt, tw, LLMK_F32, (size_t)(K * dim));
    A->convert(bias, dt, tb, LLMK_F32, (size_t)dim);
    free(tw);
    free(tb);
  }
  int64_t *qsl = sh_alloc(r, (size_t)(B + 1) * 8, 0), *ci = sh_alloc(r, (size_t)B * 8, 0);
  int64_t *nacc = sh_alloc(r, (size_t)B * 8, 0);
  int64_t *perm = xalloc((size_t)lines * 8, 0);
  for (int64_t i = 0; i < lines; i++) perm[i] = i;
  for (int64_t i = lines - 1; i > 0; i--) {
    int64_t j = (int64_t)rng_below(&rng, (uint64_t)(i + 1));
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  qsl[0] = 0;
  for (int64_t b = 0; b < B; b++) qsl[b + 1] = qsl[b] + len[b];
  for (int64_t i = 0; i < B; i++) ci[i] = perm[i];
  for (int64_t b = 0; b < B; b++)
    nacc[b] = len[b] > m + 1 ? 0 : (int64_t)(1 + rng_below(&rng, (uint64_t)(m + 1)));
  free(perm);
  free(len);

  int64_t sx2[2] = {T, dim}, sx3[3] = {B, m + 1, dim}, sw[2] = {K, dim},
          scs[3] = {lines, C, dim}, sq[1] = {B + 1}, sb[1] = {B}, sd[1] = {dim};
  for (int j = 0; j < 4; j++) { /* build k, copy s */
    const int k = j / 2, s = j % 2;
    ab_lib *L = r->lib[k];
    llmk_tensor tx, tw, tcs, tq, tci, tn, tbias;
    if (c->kind == 0)
      L->tensor_init(&tx, dt, 3, sx3, NULL, r->buf[x].p[s]);
    else
      L->tensor_init(&tx, dt, 2, sx2, NULL, r->buf[x].p[s]);
    L->tensor_init(&tw, dt, 2, sw, NULL, w);
    L->tensor_init(&tcs, dt, 3, scs, NULL, r->buf[cs].p[s]);
    L->tensor_init(&tq, LLMK_I64, 1, sq, NULL, qsl);
    L->tensor_init(&tci, LLMK_I64, 1, sb, NULL, ci);
    L->tensor_init(&tn, LLMK_I64, 1, sb, NULL, nacc);
    L->tensor_init(&tbias, dt, 1, sd, NULL, bias);
    llmk_status st = L->fused_causal_conv1d_get_workspace_size(
        &tx, &tw, &tcs, c->kind == 0 ? NULL : &tq, &tci, use_nacc ? &tn : NULL, NULL,
        NULL, NULL, NULL, has_bias ? &tbias : NULL, -1, -1, 0, 0, 0,
        silu ? LLMK_ACTIVATION_SILU : LLMK_ACTIVATION_NONE, &r->wss[k][s],
        &r->plan[k][s]);
    plan_ready(r, k, s, st, L->fused_causal_conv1d);
  }
}

static void name_conv1d(const cc_spec *c, char *s, size_t n) {
  if (c->kind == 0)
    snprintf(s, n, "conv1d %s K=%d B=%lld dim=%lld m=%lld bf16", c->label, c->K,
             (long long)c->batch, (long long)c->dim, (long long)c->m);
  else if (c->kind == 1)
    snprintf(s, n, "conv1d %s K=%d B=%lld dim=%lld m=%lld (1..%lld tok) bf16", c->label,
             c->K, (long long)c->batch, (long long)c->dim, (long long)c->m,
             (long long)c->m + 1);
  else if (c->kind == 2)
    snprintf(s, n, "conv1d %s K=%d %lldx%lld dim=%lld bf16", c->label, c->K,
             (long long)c->batch, (long long)c->prefill_len, (long long)c->dim);
  else
    snprintf(s, n, "conv1d %s K=%d %lldx%lld+%lld decode dim=%lld m=%lld bf16", c->label,
             c->K, (long long)c->n_prefill, (long long)c->prefill_len,
             (long long)(c->batch - c->n_prefill), (long long)c->dim, (long long)c->m);
}

/* -------------------------------------------------------------------- main */

static int usage(void) {
  fprintf(stderr,
          "usage: llmk_ab [--case TEXT] [--threads N] [--min-pairs N] [--list] "
          "A.so B.so\n"
          "  --case TEXT    only cases whose name contains TEXT\n"
          "  --threads N    threads of each build's context (default 2)\n"
          "  --min-pairs N  at least N A/B pairs per case (default 61)\n"
          "  --list         print the case names and exit\n");
  return 2;
}

static bool parse_int(const char *s, int lo, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < lo || v > 1000000) return false;
  *out = (int)v;
  return true;
}

typedef enum { OP_AS, OP_KV, OP_TK, OP_CC } ab_op;

/* Runs (or lists) case i of op's table; false when the table has no case i. */
static bool one_case(const ab_opts *o, ab_lib *libs, ab_op op, size_t i,
                     ab_summary *sum) {
  char name[128];
  if (op == OP_AS) {
    if (i >= sizeof as_cases / sizeof as_cases[0]) return false;
    name_advance_step(&as_cases[i], name, sizeof name);
  } else if (op == OP_KV) {
    if (i >= sizeof kv_cases / sizeof kv_cases[0]) return false;
    name_kv(&libs[0], &kv_cases[i], name, sizeof name);
  } else if (op == OP_TK) {
    if (i >= sizeof tk_cases / sizeof tk_cases[0]) return false;
    name_top_k_top_p(&libs[0], &tk_cases[i], name, sizeof name);
  } else {
    if (i >= sizeof cc_cases / sizeof cc_cases[0]) return false;
    name_conv1d(&cc_cases[i], name, sizeof name);
  }
  if (o->filter && !strstr(name, o->filter)) return true;
  if (o->list) {
    printf("%s\n", name);
    return true;
  }
  ab_run r;
  memset(&r, 0, sizeof r);
  r.lib[0] = &libs[0];
  r.lib[1] = &libs[1];
  if (op == OP_AS)
    setup_advance_step(&r, &as_cases[i]);
  else if (op == OP_KV && kv_cases[i].gather)
    setup_gather(&r, &kv_cases[i]);
  else if (op == OP_KV)
    setup_scatter(&r, &kv_cases[i]);
  else if (op == OP_TK)
    setup_top_k_top_p(&r, &tk_cases[i]);
  else
    setup_conv1d(&r, &cc_cases[i]);
  measure(o, &r, name, sum);
  run_free(&r);
  return true;
}

int main(int argc, char **argv) {
  ab_opts o = {NULL, 2, 61, false};
  const char *paths[2] = {NULL, NULL};
  int npaths = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--case") && i + 1 < argc) {
      o.filter = argv[++i];
    } else if (!strcmp(a, "--threads") && i + 1 < argc) {
      if (!parse_int(argv[++i], 1, &o.threads)) return usage();
    } else if (!strcmp(a, "--min-pairs") && i + 1 < argc) {
      if (!parse_int(argv[++i], 1, &o.min_pairs)) return usage();
    } else if (!strcmp(a, "--list")) {
      o.list = true;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage();
      return 0;
    } else if (a[0] == '-' || npaths == 2) {
      return usage();
    } else {
      paths[npaths++] = a;
    }
  }
  if (npaths != 2) return usage();

  ab_lib libs[2];
  for (int k = 0; k < 2; k++)
    if (lib_open(&libs[k], paths[k], (char)('A' + k)) != 0) return 2;
  if (libs[0].handle == libs[1].handle)
    fprintf(stderr,
            "llmk_ab: note: A and B are the same loaded object (same file): "
            "an A/A run of one build\n");

  if (!o.list) {
    double load = load_average();
    for (int k = 0; k < 2; k++) {
      ab_lib *L = &libs[k];
      llmk_status st = L->context_create(o.threads, &L->ctx);
      if (st != LLMK_SUCCESS) {
        fprintf(stderr, "llmk_ab: %c: llmk_context_create: %s\n", L->label,
                L->last_error());
        return 1;
      }
      printf("%c: %s\n   llmk %s, ISA %s, %s, %d threads\n", L->label, L->path,
             L->version_string(), L->isa_name(L->get_isa()), L->threading_runtime(),
             L->context_num_threads(L->ctx));
    }
    printf("load average %.2f at start; min pairs %d, >= %.1f s of calls per case\n\n",
           load, o.min_pairs, AB_MIN_TIME_S);
    print_row("case", "A median", "B median", "B/A median [p5, p95]", "median 95% CI",
              "pairs", "(p5 > 1 / p95 < 1)");
    fflush(stdout);
  }

  ab_summary sum;
  memset(&sum, 0, sizeof sum);
  static const ab_op ops[4] = {OP_AS, OP_KV, OP_TK, OP_CC};
  for (int j = 0; j < 4; j++)
    for (size_t i = 0; one_case(&o, libs, ops[j], i, &sum); i++) {
    }

  if (!o.list) {
    if (sum.n_ratio)
      printf(
          "\nsummary: %d cases, %d MISMATCH, %d errors; B/A medians: geomean %.3f, "
          "min %.3f (%s), max %.3f (%s); B slower in >95%% of pairs (p5 > 1): %d%s%s%s; "
          "B faster in >95%% (p95 < 1): %d; load average %.2f at the end\n",
          sum.cases, sum.mismatches, sum.errors, exp(sum.log_sum / sum.n_ratio),
          sum.min_ratio, sum.min_case, sum.max_ratio, sum.max_case, sum.slower,
          sum.slower ? " (" : "", sum.slower_cases, sum.slower ? ")" : "", sum.faster,
          load_average());
    else
      printf("\nsummary: %d cases, %d MISMATCH, %d errors; nothing timed\n", sum.cases,
             sum.mismatches, sum.errors);
    for (int k = 0; k < 2; k++) libs[k].context_destroy(libs[k].ctx);
  }
  /* the handles stay open: the runtime's threads may still run the builds' code */
  return sum.mismatches || sum.errors ? 1 : 0;
}
