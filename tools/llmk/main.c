/* SPDX-License-Identifier: Apache-2.0 */
/* llmk: the command-line tool of the llmk library.
 *   llmk bench [OP...] [options]   benchmarks every operator against a copy of the same
 *                                  bytes and the in-process references
 *   llmk info                      version, ISA, chosen kernels, threads */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: llmk <command> [options]\n"
          "\n"
          "commands:\n"
          "  bench [OP...] [options]  run the operators on the spec's benchmark shapes, "
          "check\n"
          "                           each against its reference, print a table (llmk "
          "bench --help)\n"
          "  info                     version, detected ISA, the kernels each op uses, "
          "threads\n"
          "\n"
          "  llmk --help | -h         this text\n"
          "  llmk --version           the library's version\n");
}

typedef struct op_entry {
  const char *name;
  void (*run)(bench_env *env);
} op_entry;

static const op_entry ops[] = {
    {"advance_step", bench_advance_step},
    {"scatter_pa_kv_cache", bench_scatter_pa_kv_cache},
    {"gather_pa_kv_cache", bench_gather_pa_kv_cache},
    {"apply_top_k_top_p", bench_apply_top_k_top_p},
    {"fused_causal_conv1d", bench_fused_causal_conv1d},
};
enum { NUM_OPS = sizeof ops / sizeof ops[0] };

static void bench_usage(FILE *f) {
  fprintf(
      f,
      "usage: llmk bench [OP...] [--quick] [--threads N] [--dtype LIST] [--json FILE]\n"
      "                  [--plot FILE.svg] [--shape TEXT] [--isa ISA] [--list]\n"
      "                  [--check] [--no-one-thread] [--baseline OLD.json]\n"
      "\n"
      "Runs every operator on the benchmark shapes of the spec. Each case is first\n"
      "checked once against the in-process reference (tests/ref: naive code written\n"
      "from the spec), on separate copies of the inputs, then timed. Progress goes to\n"
      "stderr, the table to stdout. Per case:\n"
      "\n"
      "  time/call, min  the median and the fastest of the op's timing samples, per "
      "call\n"
      "  GB/s            the bytes the op must read and write per call (its bytes "
      "model)\n"
      "                  / the median time\n"
      "  copy GB/s       the same bytes through memcpy: bytes/2 copied from one buffer "
      "to\n"
      "                  another (so as many bytes read + written), split over the same\n"
      "                  threads as the op (the context's, in parts of at least 256 KiB\n"
      "                  moved; smaller copies run on one thread), its samples "
      "interleaved\n"
      "                  with the op's in the same run\n"
      "  %% copy          100 x copy median / op median: the op's bandwidth as a %% of "
      "a\n"
      "                  copy of as many bytes measured beside it (cached sizes compare\n"
      "                  with a cached copy; over 100: the op beats a plain copy)\n"
      "  vs ref          the reference's median time (at least 3 runs, one thread; "
      "with\n"
      "                  --quick one run where it takes over 0.5 s) / the op's\n"
      "  busy            the op's or the copy's median/min exceeds %.2f: the machine "
      "was\n"
      "                  busy during the case, its figures are suspect (rerun it)\n"
      "  1t              the op's median on a 1-thread context, timed after the main "
      "run\n"
      "                  (not with --threads 1 or --no-one-thread)\n"
      "  /1t             time/call / 1t: at most %.2f is the target (threads never "
      "hurt)\n"
      "Then: extra timings of some cases (floors, plan + run); the small calls (each "
      "op's\n"
      "smallest shape: the whole two-phase call with a fresh plan against an empty\n"
      "function called the same way); the targets of issue 23, each a ratio of this run\n"
      "(the case against its floor measured beside it) and whether it holds; with\n"
      "--baseline, each case's time against the earlier run. A missed target does not\n"
      "change the exit status (timings are noisy); a failed check does.\n"
      "\n"
      "  OP               advance_step, scatter_pa_kv_cache, gather_pa_kv_cache,\n"
      "                   apply_top_k_top_p, fused_causal_conv1d; any part of a name\n"
      "                   selects every op containing it (kv_cache: scatter and\n"
      "                   gather). Default: every op.\n"
      "  --quick          the quick set (about a minute on 2 idle cores); default: the\n"
      "                   full set\n"
      "  --threads N      threads for the ops and the copies (default: as\n"
      "                   llmk_context_create(0): LLMK_NUM_THREADS if set, else the\n"
      "                   online CPUs)\n"
      "  --dtype LIST     comma-separated f32,f16,bf16: only cases of these dtypes (the\n"
      "                   16/32-bit side of fp8 conversions); advance_step (integers)\n"
      "                   always runs\n"
      "  --shape TEXT     only cases whose shape label contains TEXT (see --list)\n"
      "  --json FILE      also write the results as JSON (machine, cases); - : stdout\n"
      "                   (the table then goes to stderr)\n"
      "  --plot FILE.svg  also write an SVG bar chart of %% copy per case\n"
      "  --isa ISA        cap the kernels at scalar, avx2, avx512 or neon (as LLMK_ISA "
      "does)\n"
      "  --list           list the cases the filters select; run nothing\n"
      "  --no-one-thread  skip the 1-thread timing of every case (the 1t column)\n"
      "  --baseline FILE  an earlier --json output: print each case's median / its\n"
      "                   median there (matched by op, shape and dtype)\n"
      "  --check          check every case against the reference and run it once;\n"
      "                   time nothing (under an emulator or a sanitizer, whose times\n"
      "                   mean nothing: the figures are of one call)\n"
      "\n"
      "Exit status: 0 every check passed; 1 a check failed (FAIL in the table) or an op\n"
      "returned an error; 2 a usage error.\n",
      BENCH_BUSY_SPREAD, BENCH_THREADS_LIMIT);
}

static int parse_int(const char *s, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < 1 || v > 4096) return -1;
  *out = (int)v;
  return 0;
}

static int parse_dtypes(const char *s, unsigned *mask) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  *mask = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (!strcmp(tok, "f32"))
      *mask |= 1u << LLMK_F32;
    else if (!strcmp(tok, "f16"))
      *mask |= 1u << LLMK_F16;
    else if (!strcmp(tok, "bf16"))
      *mask |= 1u << LLMK_BF16;
    else
      return -1;
  }
  return *mask ? 0 : -1;
}

static bool op_selected(const bench_env *env, const char *name) {
  if (env->n_op_filters == 0) return true;
  for (int i = 0; i < env->n_op_filters; i++)
    if (strstr(name, env->op_filters[i])) return true;
  return false;
}

int cmd_bench(int argc, char **argv) {
  bench_env env;
  memset(&env, 0, sizeof env);
  const char *json = NULL, *plot = NULL, *isa = NULL;
  int threads = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    char opt[32];
    if (a[0] == '-' && a[1] == '-' && strchr(a, '=')) { /* --opt=value */
      size_t n = (size_t)(strchr(a, '=') - a);
      if (n >= sizeof opt) n = sizeof opt - 1;
      memcpy(opt, a, n);
      opt[n] = 0;
      val = strchr(a, '=') + 1;
      a = opt;
    }
    bool takes = !strcmp(a, "--threads") || !strcmp(a, "--dtype") ||
                 !strcmp(a, "--json") || !strcmp(a, "--plot") || !strcmp(a, "--isa") ||
                 !strcmp(a, "--shape") || !strcmp(a, "--baseline");
    if (takes && !val) {
      if (i + 1 >= argc) {
        fprintf(stderr, "llmk bench: %s needs a value\n", a);
        return 2;
      }
      val = argv[++i];
    } else if (!takes && val) {
      fprintf(stderr, "llmk bench: %s takes no value\n", a);
      return 2;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      bench_usage(stdout);
      return 0;
    } else if (!strcmp(a, "--quick")) {
      env.quick = true;
    } else if (!strcmp(a, "--check")) {
      env.check_only = true;
    } else if (!strcmp(a, "--no-one-thread")) {
      env.no_one_thread = true;
    } else if (!strcmp(a, "--baseline")) {
      env.baseline_path = val;
    } else if (!strcmp(a, "--list")) {
      env.list_only = true;
    } else if (!strcmp(a, "--threads")) {
      if (parse_int(val, &threads)) {
        fprintf(stderr, "llmk bench: --threads wants a number from 1 to 4096, not '%s'\n",
                val);
        return 2;
      }
    } else if (!strcmp(a, "--dtype")) {
      if (parse_dtypes(val, &env.dtype_mask)) {
        fprintf(stderr,
                "llmk bench: --dtype wants a comma-separated list of f32, f16, bf16, "
                "not '%s'\n",
                val);
        return 2;
      }
    } else if (!strcmp(a, "--shape")) {
      env.shape_filter = val;
    } else if (!strcmp(a, "--json")) {
      json = val;
    } else if (!strcmp(a, "--plot")) {
      plot = val;
    } else if (!strcmp(a, "--isa")) {
      isa = val;
      if (strcmp(isa, "scalar") && strcmp(isa, "avx2") && strcmp(isa, "avx512") &&
          strcmp(isa, "neon")) {
        fprintf(stderr,
                "llmk bench: --isa wants scalar, avx2, avx512 or neon, not '%s'\n", isa);
        return 2;
      }
    } else if (a[0] == '-') {
      fprintf(stderr, "llmk bench: unknown option '%s' (see llmk bench --help)\n", a);
      return 2;
    } else {
      bool any = false;
      for (int k = 0; k < NUM_OPS; k++) any |= strstr(ops[k].name, a) != NULL;
      if (!any || !a[0]) {
        fprintf(stderr, "llmk bench: no op matches '%s' (ops:", a);
        for (int k = 0; k < NUM_OPS; k++) fprintf(stderr, " %s", ops[k].name);
        fprintf(stderr, ")\n");
        return 2;
      }
      if (env.n_op_filters == BENCH_MAX_OP_FILTERS) {
        fprintf(stderr, "llmk bench: too many OP arguments\n");
        return 2;
      }
      env.op_filters[env.n_op_filters++] = a;
    }
  }
  if (isa)
    llmk_set_max_isa(!strcmp(isa, "scalar")   ? LLMK_ISA_SCALAR
                     : !strcmp(isa, "avx2")   ? LLMK_ISA_AVX2
                     : !strcmp(isa, "avx512") ? LLMK_ISA_AVX512
                                              : LLMK_ISA_NEON);
  env.threads = threads > 0 ? threads : tool_default_threads();

  if (env.list_only) {
    printf("cases of the %s set:\n", env.quick ? "quick" : "full");
    for (int k = 0; k < NUM_OPS; k++)
      if (op_selected(&env, ops[k].name)) ops[k].run(&env);
    printf("%d case%s\n", env.n_listed, env.n_listed == 1 ? "" : "s");
    return 0;
  }

  env.list_only = env.silent = true; /* count the cases first, for the progress lines */
  for (int k = 0; k < NUM_OPS; k++)
    if (op_selected(&env, ops[k].name)) ops[k].run(&env);
  env.case_count = env.n_listed;
  env.list_only = env.silent = false;
  if (env.case_count == 0) {
    fprintf(stderr, "llmk bench: no case of the %s set matches the filters\n",
            env.quick ? "quick" : "full");
    return 2;
  }
  if (env.baseline_path && bench_baseline_load(&env, env.baseline_path) != 0) return 2;
  if (llmk_context_create(env.threads, &env.ctx) != LLMK_SUCCESS ||
      (env.threads > 1 && !env.no_one_thread && !env.check_only &&
       llmk_context_create(1, &env.ctx1) != LLMK_SUCCESS)) {
    fprintf(stderr, "llmk bench: cannot create a context of %d threads: %s\n",
            env.threads, llmk_last_error());
    return 1;
  }
  double t_start = env.t_start = bench_now();
  env.loadavg = tool_loadavg();
  if (env.loadavg > 0.5)
    fprintf(stderr,
            "llmk bench: warning: load average %.2f before the run: other processes "
            "compete for the CPUs, multi-threaded timings may be inflated\n",
            env.loadavg);
  for (int k = 0; k < NUM_OPS; k++)
    if (op_selected(&env, ops[k].name)) ops[k].run(&env);
  double elapsed = bench_now() - t_start;

  /* --json -: the JSON alone on stdout, the table on stderr */
  FILE *table = json && !strcmp(json, "-") ? stderr : stdout;
  report_header(&env, table);
  report_table(&env, table);
  report_small_calls(&env, table);
  report_targets(&env, table);
  report_baseline(&env, table);
  int failed = 0, busy = 0, held = 0, missed = 0;
  for (int i = 0; i < env.n_results; i++) {
    const bench_result *r = &env.results[i];
    failed += r->check != BENCH_CHECK_OK;
    busy += r->busy;
    for (int k = 0; k < r->n_target; k++) {
      held += r->target[k].judged && r->target[k].holds;
      missed += r->target[k].judged && !r->target[k].holds;
    }
  }
  fprintf(table, "%d case%s, %d failed, %d busy, targets %d held %d missed, %.1f s\n",
          env.n_results, env.n_results == 1 ? "" : "s", failed, busy, held, missed,
          elapsed);
  fflush(table);
  int rc = failed ? 1 : 0;
  if (json && report_json(&env, json) != 0) rc = 1;
  if (plot && report_svg(&env, plot) != 0) rc = 1;
  llmk_context_destroy(env.ctx);
  llmk_context_destroy(env.ctx1);
  free(env.results);
  free(env.base);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
    printf("llmk %s\n", llmk_version_string());
    return 0;
  }
  if (!strcmp(cmd, "bench")) return cmd_bench(argc - 1, argv + 1);
  if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
  fprintf(stderr, "llmk: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return 2;
}
