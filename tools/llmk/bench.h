/* SPDX-License-Identifier: Apache-2.0 */
/* llmk bench: what the per-op benchmark files share with the driver and the report.
 *
 * Each op file (bench_<op>.c) walks its table of cases; for every case that the filters
 * keep it sets up the tensors, runs the op once on one copy of the inputs and the
 * in-process reference (tests/ref) on another, compares them, then times the op with a
 * copy of the case's bytes beside it (bench_time: op and copy samples interleaved, so
 * both see the same machine), times the reference, and hands a bench_result to
 * bench_add(). % of the copy's bandwidth = copy time / op time for the same bytes.
 * Op files may also time the op on one thread (bench_one_thread), its whole call with a
 * fresh plan (bench_small_call), floors as extras, and declare issue 23's targets on
 * them (bench_target_*), which bench_add judges on the figures of the same run. */
#ifndef LLMK_TOOL_BENCH_H
#define LLMK_TOOL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "llmk/llmk.h"

#define BENCH_MAX_OP_FILTERS 16
#define BENCH_MAX_EXTRA 4
/* A case is flagged busy when the median of its op samples, or of the copy samples
 * beside them, exceeds the fastest sample by more than this factor: the machine was
 * doing something else during the case, and its ratios are suspect. */
#define BENCH_BUSY_SPREAD 1.25
/* The copy beside a case runs on the context's threads in parts that move at least this
 * many bytes (read + written), as the ops split their work: a smaller copy is one
 * thread's, since waking a second one would cost more than it saves. */
#define BENCH_COPY_BYTES_PER_THREAD (256.0 * 1024.0)

typedef enum bench_check {
  BENCH_CHECK_OK = 0,
  BENCH_CHECK_FAIL = 1,  /* results differ from the reference */
  BENCH_CHECK_ERROR = 2, /* the op (or its setup) returned an error */
} bench_check;

/* Another timing of a case, reported beside it (e.g. a floor, plan + run). */
typedef struct bench_extra {
  char name[80];
  double median_s, min_s; /* per call */
} bench_extra;

#define BENCH_MAX_TARGETS 4
/* A target of an issue, checked on a case's figures of this run (docs: README's benchmark
 * section). value is what the kind measures; the target holds when value >= limit
 * (at_least) or value <= limit; NaN (not measured, e.g. --no-one-thread): not judged. */
typedef enum bench_target_kind {
  BENCH_T_PCT_COPY,   /* % copy: 100 x copy median / op median, at least limit */
  BENCH_T_VS_COPY,    /* op median / copy median (a read + write pass), at most limit */
  BENCH_T_VS_FLOOR,   /* op median / extra[floor] median, at most limit */
  BENCH_T_SPEEDUP,    /* reference median / op median, at least limit */
  BENCH_T_TIME,       /* op median in seconds, at most limit */
  BENCH_T_WHOLE_CALL, /* small call: phase 1 + 2 with a fresh plan, seconds, at most */
  BENCH_T_THREADS,    /* op median / 1-thread median, at most limit */
} bench_target_kind;

typedef struct bench_target {
  bench_target_kind kind;
  char issue[16]; /* e.g. "23.1" */
  double limit;
  int floor;       /* BENCH_T_VS_FLOOR: the index of the extra timing that is the floor */
  bool one_thread; /* the op's time on one thread (the 1-thread run, or the main run
                    * when it has one thread); NaN without it */
  double paired;   /* BENCH_T_VS_FLOOR: the op / floor ratio of their alternate samples */
  /* filled by bench_add */
  double value;
  bool at_least, judged, holds;
} bench_target;

/* The threads target: a case's time on the context's threads over its time on one
 * thread, at most this (issue 23: threads never hurt). */
#define BENCH_THREADS_LIMIT 1.05

typedef struct bench_result {
  char op[40];
  char shape[96];
  char dtype[32];
  char kernel[16];    /* the ISA of the op's kernel table in force (its kernel list) */
  double median_s;    /* op, per call */
  double min_s;       /* op, fastest sample, per call */
  int samples, inner; /* samples taken, calls per sample */
  double bytes;       /* bytes an ideal implementation must move per call */
  double gbps;        /* bytes / median */
  /* the copy beside the op: bytes / 2 copied from one buffer to another (so as many
   * bytes read + written), its samples interleaved with the op's */
  double copy_median_s, copy_min_s;
  int copy_inner, copy_threads;
  double copy_gbps;           /* bytes / copy_median_s */
  double pct_bw;              /* 100 * copy_median_s / median_s */
  double pct_bw_min;          /* 100 * copy_min_s / min_s */
  double spread, copy_spread; /* median / min, op and copy */
  bool busy;                  /* spread or copy_spread > BENCH_BUSY_SPREAD */
  double ref_s;               /* reference, per call (median) */
  double ref_min_s;
  int ref_samples;
  double speedup; /* ref_s / median_s */
  bench_check check;
  char note[160]; /* e.g. boundary differences, error messages */
  bench_extra extra[BENCH_MAX_EXTRA];
  int n_extra;
  /* the op on a 1-thread context, timed after the main run (NaN: not measured) */
  double t1_median_s, t1_min_s;
  double vs_t1; /* median_s / t1_median_s */
  /* small calls (bench_small_call): the whole two-phase call with a fresh plan, and an
   * empty function called the same way (through the same pointer type and loop) */
  bool small;
  double whole_s, whole_min_s, empty_s, empty_min_s;
  bench_target target[BENCH_MAX_TARGETS + 1]; /* + the threads target */
  int n_target;
  /* --baseline: the case's median in the earlier JSON (NaN: not there) */
  double base_median_s, vs_base;
} bench_result;

typedef struct bench_env {
  bool quick;
  /* --check: every case checked against the reference and run once, nothing timed
   * (for emulators and sanitizers, whose times mean nothing) */
  bool check_only;
  bool list_only;
  int threads;
  llmk_context *ctx;
  /* --dtype: a mask over llmk_dtype values (bit d); 0 = no filter */
  unsigned dtype_mask;
  const char *shape_filter; /* --shape: a substring of the shape label, or NULL */
  const char *op_filters[BENCH_MAX_OP_FILTERS];
  int n_op_filters;
  double loadavg; /* 1-minute load average at the start (-1: unknown) */
  /* the 1-thread context of the /1t timings (NULL with --no-one-thread or 1 thread) */
  llmk_context *ctx1;
  bool no_one_thread;
  /* --baseline FILE: the cases of an earlier --json output */
  const char *baseline_path;
  struct bench_base_case *base;
  int n_base;
  /* collected results */
  bench_result *results;
  int n_results, cap_results;
  int n_listed;
  bool silent;                /* list mode without printing: counts the cases */
  int case_index, case_count; /* progress: [index/count] */
  double t_start;             /* bench_now() at the start of the run */
  bool failed;
} bench_env;

/* ------------------------------------------------------------------ timing */
double bench_now(void);

/* One call of the thing timed; returns 0 on success. */
typedef int (*bench_fn)(void *arg);

typedef struct bench_timing {
  double median, min; /* seconds per call */
  int samples, inner;
  int status; /* non-zero: a call failed (the timing is invalid) */
  /* bench_time only: the copy beside it, seconds per copy of the case's bytes */
  double copy_median, copy_min;
  int copy_inner, copy_threads;
} bench_timing;

/* Times fn with a copy of the same bytes beside it: one warm-up call of each, then
 * `samples` samples, each `inner` calls of fn followed by `copy_inner` copies of
 * bytes / 2 from one buffer to another over env->ctx's threads (bytes read + written:
 * the op's bytes model), where inner and copy_inner make each part last about 2 ms (at
 * most max_inner calls) and the samples fill about the op budget (between min_samples
 * and 51). reset (optional) runs before each sample and before the warm-up, untimed: it
 * restores inputs that the op updates in place. */
bench_timing bench_time(bench_env *env, bench_fn fn, bench_fn reset, void *arg,
                        double bytes, int min_samples, int max_inner);

/* Times fn alone, as bench_time does without the copy (for extra timings). */
bench_timing bench_time_only(const bench_env *env, bench_fn fn, bench_fn reset, void *arg,
                             int min_samples, int max_inner);

/* Times fn and floor (a cheaper thing the issue compares fn with) in alternate samples,
 * each as bench_time_only would (about 2 ms a sample, at most max_inner calls), so that
 * both see the same machine: *op and *fl get the two timings. */
void bench_time_beside(const bench_env *env, bench_fn fn, void *arg, bench_fn floor,
                       void *floor_arg, int min_samples, int max_inner, bench_timing *op,
                       bench_timing *fl);

/* Times a reference whose first run (the check) took first_s: the median of at least 3
 * runs (the first included; more where they fit the reference budget, up to 51), so
 * that one stall of a shared machine does not make the speed-up. With --quick, a
 * reference slower than BENCH_QUICK_REF_ONCE_S is the first run alone. */
#define BENCH_QUICK_REF_ONCE_S 0.5
bench_timing bench_time_ref(const bench_env *env, bench_fn fn, bench_fn reset, void *arg,
                            double first_s);

/* Time budgets for the current mode (quick / full). */
double bench_op_budget(const bench_env *env);
double bench_ref_budget(const bench_env *env);

/* Splits [0, n) over the context's threads, as the ops do (llmk's parallel-for: the
 * calling thread takes the first range); with at most `parts` ranges. */
typedef void (*bench_range_fn)(void *arg, int64_t begin, int64_t end);
void bench_parallel(const bench_env *env, int64_t n, int parts, bench_range_fn fn,
                    void *arg);

/* ------------------------------------------------------------------ helpers */
/* 64-byte aligned, every page touched (filled with `fill`); exits on failure. */
/* The op being timed: its phase 2, repeatable plan, workspace and context. */
typedef llmk_status (*bench_run_fn)(void *workspace, size_t workspace_size,
                                    llmk_plan *plan, llmk_context *ctx);
typedef struct bench_call {
  bench_run_fn run;
  llmk_plan *plan;
  size_t ws;
  void *w;
  llmk_context *ctx;
} bench_call;
/* After phase 1 returned st (c->plan and c->ws set by it): makes the plan repeatable and
 * allocates the workspace; false, with "setup: <message>" added as r's error, if either
 * failed. */
bool bench_call_ready(bench_env *env, bench_result *r, bench_call *c, llmk_status st);
/* One run of the op: its status. */
llmk_status bench_call_run(const bench_call *c);
/* bench_call_run as a bench_fn over a bench_call: 0 on success. */
int bench_call_fn(void *arg);
/* The check's first run: the op once, then ref(ref_arg) once, timed into *ref_s. False,
 * with r's check and note set, if the op failed or the reference refused the inputs
 * (ref returned non-zero); true: compare the outputs. */
bool bench_first_run(bench_result *r, const bench_call *c, bench_fn ref, void *ref_arg,
                     double *ref_s);
/* Destroys the plan and frees the workspace. */
void bench_call_free(bench_call *c);
/* "1.23 ms": s seconds for the table ("-" for NaN). */
const char *bench_fmt_time(double s, char *buf, size_t n);

void *bench_alloc(size_t n, int fill);
void bench_free(void *p);

typedef struct bench_rng {
  uint64_t s;
} bench_rng;
uint64_t bench_rand(bench_rng *r);
/* uniform in [0, n) */
uint64_t bench_rand_below(bench_rng *r, uint64_t n);

/* The dtype filter: true if a case of this dtype runs. LLMK_DTYPE_INVALID (an op without
 * float variants) always runs. */
bool bench_dtype_selected(const bench_env *env, llmk_dtype dt);

/* Called by an op file for each case of its table that fits the mode (quick / full).
 * Returns true if the case should run now; false if it is filtered out by --dtype, or
 * in --list mode (then it prints the case). */
bool bench_want(bench_env *env, const char *op, const char *shape,
                llmk_dtype filter_dtype, const char *dtype_label);

/* Progress on stderr. */
void bench_progress(bench_env *env, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Adds an extra timing to r (before bench_add). */
void bench_add_extra(bench_result *r, const char *name, double median_s, double min_s);

/* Fills the derived fields of r (gbps, the copy beside it, % of its bandwidth, spread,
 * busy, speed-up) from op and ref timings and the byte count, records it, and prints
 * the progress line. */
void bench_add(bench_env *env, bench_result *r, const bench_timing *op,
               const bench_timing *ref, double bytes);

/* Declares a target of the case (before bench_add, which judges it). */
void bench_target_want(bench_result *r, bench_target_kind kind, const char *issue,
                       double limit);
/* The same on the op's 1-thread time (issue targets stated "on 1 thread"). */
void bench_target_want_1t(bench_result *r, bench_target_kind kind, const char *issue,
                          double limit);
/* A floor timed beside the op (bench_time_beside) as an extra, and the target: the op's
 * median over the floor's, from those alternate samples, at most limit. */
void bench_target_floor(bench_result *r, const char *issue, const char *floor_name,
                        const bench_timing *op, const bench_timing *floor, double limit);
/* "% copy >= 85", "time / floor <= 1.20", "<= 1.00 us": the rule, for the report. */
const char *bench_target_rule(const bench_target *t, const bench_result *r, char *buf,
                              size_t n);
/* The measured value as printed ("87.1%", "1.13x", "0.84 us"). */
const char *bench_target_value(const bench_target *t, char *buf, size_t n);

/* The op once more on one thread: swaps *ctx_slot (the context fn runs on) for
 * env->ctx1, times fn as bench_time_only does, restores it, and records the time in r.
 * Nothing without a 1-thread context (--no-one-thread, 1 thread, --check). */
void bench_one_thread(bench_env *env, bench_result *r, bench_fn fn, bench_fn reset,
                      void *arg, llmk_context **ctx_slot, int min_samples, int max_inner);

/* A small call: whole(arg) (get_workspace_size + run with a fresh plan, as a caller
 * without a repeatable plan runs it) timed as bench_time_only does, and an empty
 * function of the same type through the same loop; r is then listed under
 * "small calls". */
void bench_small_call(bench_env *env, bench_result *r, bench_fn whole, bench_fn reset,
                      void *arg, int max_inner);

/* ---------------------------------------------------------------- baseline */
typedef struct bench_base_case {
  char op[40], shape[96], dtype[32];
  double median_s;
} bench_base_case;
/* Reads the cases of an earlier --json output into env->base; 0, or -1 with a message
 * on stderr. */
int bench_baseline_load(bench_env *env, const char *path);
/* The earlier median of the case (op, shape, dtype), NaN if it is not there. */
double bench_baseline_find(const bench_env *env, const char *op, const char *shape,
                           const char *dtype);

/* Starts a result: op, shape, dtype labels. */
void bench_result_init(bench_result *r, const char *op, const char *shape,
                       const char *dtype);

/* Records a case that could not run (setup error): check = ERROR, note = msg. */
void bench_add_error(bench_env *env, bench_result *r, const char *msg);

/* ---------------------------------------------------------------- the ops */
void bench_advance_step(bench_env *env);
void bench_scatter_pa_kv_cache(bench_env *env);
void bench_gather_pa_kv_cache(bench_env *env);
void bench_apply_top_k_top_p(bench_env *env);
void bench_fused_causal_conv1d(bench_env *env);

/* ---------------------------------------------------------------- report */
/* The lines above the table: version, ISA, threads, load. */
void report_header(const bench_env *env, FILE *f);
/* The table of every recorded case. */
void report_table(const bench_env *env, FILE *f);
/* The targets (issue 23), the small calls and, with --baseline, this run against it. */
void report_targets(const bench_env *env, FILE *f);
void report_small_calls(const bench_env *env, FILE *f);
void report_baseline(const bench_env *env, FILE *f);
/* JSON / SVG files ("-": stdout); 0 on success, -1 (message on stderr) on failure. */
int report_json(const bench_env *env, const char *path);
int report_svg(const bench_env *env, const char *path);

/* ---------------------------------------------------------------- machine */
/* "model name" from /proc/cpuinfo, or "unknown". */
const char *tool_cpu_model(void);
int tool_online_cpus(void);
/* The 1-minute load average (/proc/loadavg), -1 if unknown. */
double tool_loadavg(void);
/* The thread count a context gets by default (LLMK_NUM_THREADS, else online CPUs). */
int tool_default_threads(void);
/* The subcommands: exit codes 0 (success), 1 (a check or run failed), 2 (usage). */
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* Escapes s for a JSON string (without the quotes) into out (size n). */
void tool_json_escape(const char *s, char *out, size_t n);

#endif
