/* SPDX-License-Identifier: Apache-2.0 */
/* The results of llmk bench: the table on stdout, --json FILE and --plot FILE.svg. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const char *check_name(bench_check c) {
  return c == BENCH_CHECK_OK ? "ok" : "FAIL";
}

static const char *fmt_num(double v, int decimals, char *buf, size_t n) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%.*f", decimals, v);
  return buf;
}

void report_header(const bench_env *env, FILE *f) {
  fprintf(f, "llmk %s bench (%s set%s): ISA %s (native %s), %d thread%s (%s), CPU %s\n",
          llmk_version_string(), env->quick ? "quick" : "full",
          env->check_only ? ", --check: one call per case, nothing timed" : "",
          llmk_isa_name(llmk_get_isa()), llmk_isa_name(llmk_get_native_isa()),
          env->threads, env->threads == 1 ? "" : "s", llmk_threading_runtime(),
          tool_cpu_model());
  fprintf(f,
          "%% copy: each case against a memcpy of as many bytes (read + written) on the "
          "same threads, timed beside it in this run\n");
  if (env->loadavg > 0.5)
    fprintf(
        f,
        "warning: load average %.2f at the start: other processes compete for the CPUs, "
        "so multi-threaded timings may be inflated\n",
        env->loadavg);
}

void report_table(const bench_env *env, FILE *f) {
  fprintf(f, "\n%-20s %-48s %-19s %-6s %10s %10s %8s %8s %7s %9s %10s %5s  %s\n", "op",
          "shape", "dtype", "kernel", "time/call", "min", "GB/s", "copy", "% copy",
          "vs ref", "1t", "/1t", "check");
  char a[32], b[32], c[32], d[32], e[32], g[32], h[32], v1[32];
  for (int i = 0; i < env->n_results; i++) {
    const bench_result *r = &env->results[i];
    fprintf(f, "%-20s %-48s %-19s %-6s %10s %10s %8s %8s %7s %9s %10s %5s  %s%s\n", r->op,
            r->shape, r->dtype, r->kernel, bench_fmt_time(r->median_s, a, sizeof a),
            bench_fmt_time(r->min_s, e, sizeof e), fmt_num(r->gbps, 2, b, sizeof b),
            fmt_num(r->copy_gbps, 2, g, sizeof g), fmt_num(r->pct_bw, 1, c, sizeof c),
            isnan(r->speedup) ? "-" : (snprintf(d, sizeof d, "%.1fx", r->speedup), d),
            bench_fmt_time(r->t1_median_s, h, sizeof h),
            fmt_num(r->vs_t1, 2, v1, sizeof v1), check_name(r->check),
            r->busy ? " busy" : "");
  }
  int notes = 0, extras = 0, busy = 0;
  for (int i = 0; i < env->n_results; i++) {
    notes += env->results[i].note[0] != 0;
    extras += env->results[i].n_extra;
    busy += env->results[i].busy;
  }
  if (extras) {
    fprintf(f, "\nalso measured (median, min; the op's median / this):\n");
    for (int i = 0; i < env->n_results; i++) {
      const bench_result *r = &env->results[i];
      if (!r->n_extra) continue;
      fprintf(f, "  %s %s %s:\n", r->op, r->shape, r->dtype);
      for (int k = 0; k < r->n_extra; k++) {
        const bench_extra *x = &r->extra[k];
        fprintf(f, "    %-58s %10s %10s  %.2fx\n", x->name,
                bench_fmt_time(x->median_s, a, sizeof a),
                bench_fmt_time(x->min_s, b, sizeof b), r->median_s / x->median_s);
      }
    }
  }
  if (notes) {
    fprintf(f, "\nnotes:\n");
    for (int i = 0; i < env->n_results; i++) {
      const bench_result *r = &env->results[i];
      if (r->note[0]) fprintf(f, "  %s %s %s: %s\n", r->op, r->shape, r->dtype, r->note);
    }
  }
  fprintf(
      f,
      "\ntime/call, min: median and fastest sample per call; GB/s: the bytes the op "
      "must move (read + written) per call / median time; copy: GB/s of a memcpy of "
      "as many bytes (bytes/2 each way) on the same threads, timed interleaved with "
      "the op; %% copy: copy median / op median (small cases run from cache, and so "
      "does their copy); vs ref: the in-process naive reference's median time "
      "(tests/ref, 1 thread, at least 3 runs; --quick: one run where it takes over "
      "0.5 s) / the op's; 1t: the op's median on one thread, timed after the main run; "
      "/1t: time/call / 1t\n");
  if (busy)
    fprintf(f,
            "busy: %d case%s whose op or copy samples spread over %.2fx (median / min): "
            "the machine was busy, rerun %s before trusting %s figures\n",
            busy, busy == 1 ? "" : "s", BENCH_BUSY_SPREAD, busy == 1 ? "it" : "them",
            busy == 1 ? "its" : "their");
}

/* ----------------------------------------------- small calls, targets */

void report_small_calls(const bench_env *env, FILE *f) {
  int n = 0;
  for (int i = 0; i < env->n_results; i++) n += env->results[i].small;
  if (!n) return;
  fprintf(
      f,
      "\nsmall calls (each op's smallest shape, on the context's threads; whole call: "
      "get_workspace_size + run with a fresh plan each time; empty call: an empty "
      "function called the same way, through the same pointer and loop):\n");
  int w = 5;
  for (int i = 0; i < env->n_results; i++) {
    int len = (int)strlen(env->results[i].shape);
    if (env->results[i].small && len > w) w = len;
  }
  fprintf(f, "  %-20s %-*s %-8s %10s %12s %10s %11s\n", "op", w, "shape", "dtype",
          "run (plan)", "whole call", "empty call", "whole/empty");
  char a[32], b[32], c[32], d[32];
  for (int i = 0; i < env->n_results; i++) {
    const bench_result *r = &env->results[i];
    if (!r->small) continue;
    fprintf(f, "  %-20s %-*s %-8s %10s %12s %10s %11s\n", r->op, w, r->shape, r->dtype,
            bench_fmt_time(r->median_s, a, sizeof a),
            bench_fmt_time(r->whole_s, b, sizeof b),
            bench_fmt_time(r->empty_s, c, sizeof c),
            fmt_num(r->whole_s / r->empty_s, 0, d, sizeof d));
  }
}

static const char *target_verdict(const bench_target *t) {
  return !t->judged ? "n/a" : t->holds ? "holds" : "MISSED";
}

void report_targets(const bench_env *env, FILE *f) {
  int n = 0, threads = 0, threads_held = 0, threads_judged = 0;
  for (int i = 0; i < env->n_results; i++)
    for (int k = 0; k < env->results[i].n_target; k++) {
      const bench_target *t = &env->results[i].target[k];
      if (t->kind == BENCH_T_THREADS) {
        threads++;
        threads_judged += t->judged;
        threads_held += t->judged && t->holds;
      } else {
        n++;
      }
    }
  if (!n && !threads) return;
  if (env->check_only) {
    fprintf(f, "\ntargets: %d, not judged (--check times nothing)\n", n + threads);
    return;
  }
  fprintf(f,
          "\ntargets (issue 23; each the case against its floor measured in this run; "
          "/1t misses listed here too):\n");
  int w = 5; /* the widest shape label listed */
  for (int i = 0; i < env->n_results; i++) {
    int len = (int)strlen(env->results[i].shape);
    if (env->results[i].n_target && len > w) w = len;
  }
  fprintf(f, "  %-5s %-20s %-*s %-19s %-58s %10s  %s\n", "issue", "op", w, "shape",
          "dtype", "target", "measured", "verdict");
  char rule[160], val[32];
  for (int i = 0; i < env->n_results; i++) {
    const bench_result *r = &env->results[i];
    for (int k = 0; k < r->n_target; k++) {
      const bench_target *t = &r->target[k];
      if (t->kind == BENCH_T_THREADS && (!t->judged || t->holds)) continue;
      fprintf(f, "  %-5s %-20s %-*s %-19s %-58s %10s  %s%s\n", t->issue, r->op, w,
              r->shape, r->dtype, bench_target_rule(t, r, rule, sizeof rule),
              bench_target_value(t, val, sizeof val), target_verdict(t),
              r->busy ? " (busy)" : "");
    }
  }
  if (threads)
    fprintf(
        f,
        "  23.5  threads never hurt (time/call <= %.2f x the 1-thread time): %d of %d "
        "cases hold%s\n",
        BENCH_THREADS_LIMIT, threads_held, threads,
        threads_judged < threads ? " (the others not measured: --no-one-thread)" : "");
}

void report_baseline(const bench_env *env, FILE *f) {
  if (!env->base) return;
  fprintf(f,
          "\nagainst the baseline %s (time/call here / time/call there; below 1: faster "
          "now):\n",
          env->baseline_path);
  fprintf(f, "  %-20s %-48s %-19s %10s %10s %8s\n", "op", "shape", "dtype", "time/call",
          "baseline", "ratio");
  char a[32], b[32], c[32];
  int missing = 0;
  for (int i = 0; i < env->n_results; i++) {
    const bench_result *r = &env->results[i];
    missing += isnan(r->base_median_s);
    fprintf(f, "  %-20s %-48s %-19s %10s %10s %8s\n", r->op, r->shape, r->dtype,
            bench_fmt_time(r->median_s, a, sizeof a),
            bench_fmt_time(r->base_median_s, b, sizeof b),
            fmt_num(r->vs_base, 3, c, sizeof c));
  }
  if (missing)
    fprintf(f, "  (%d case%s not in the baseline: -)\n", missing,
            missing == 1 ? "" : "s");
}

/* ------------------------------------------------------------------ JSON */

void tool_json_escape(const char *s, char *out, size_t n) {
  size_t o = 0;
  if (n == 0) return;
  for (; *s && o + 7 < n; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') {
      out[o++] = '\\';
      out[o++] = (char)ch;
    } else if (ch < 0x20) {
      o += (size_t)snprintf(out + o, n - o, "\\u%04x", ch);
    } else {
      out[o++] = (char)ch;
    }
  }
  out[o] = 0;
}

static void json_str(FILE *f, const char *key, const char *v, bool comma) {
  char buf[1024];
  tool_json_escape(v, buf, sizeof buf);
  fprintf(f, "\"%s\": \"%s\"%s", key, buf, comma ? ", " : "");
}

static void json_num(FILE *f, const char *key, double v, bool comma) {
  if (isnan(v) || isinf(v))
    fprintf(f, "\"%s\": null%s", key, comma ? ", " : "");
  else
    fprintf(f, "\"%s\": %.9g%s", key, v, comma ? ", " : "");
}

int report_json(const bench_env *env, const char *path) {
  bool out = !strcmp(path, "-");
  FILE *f = out ? stdout : fopen(path, "w");
  if (!f) {
    perror(path);
    return -1;
  }
  fprintf(f, "{\n  ");
  json_str(f, "tool", "llmk bench", true);
  json_str(f, "version", llmk_version_string(), true);
  json_str(f, "set", env->quick ? "quick" : "full", true);
  fprintf(f, "\"check_only\": %s", env->check_only ? "true" : "false");
  fprintf(f, ",\n  \"machine\": {");
  json_str(f, "cpu", tool_cpu_model(), true);
  json_num(f, "online_cpus", tool_online_cpus(), true);
  json_str(f, "cpu_features", llmk_cpu_features(), true);
  json_str(f, "native_isa", llmk_isa_name(llmk_get_native_isa()), true);
  json_str(f, "isa", llmk_isa_name(llmk_get_isa()), true);
  json_str(f, "threading", llmk_threading_runtime(), true);
  json_num(f, "loadavg_1min", env->loadavg < 0 ? NAN : env->loadavg, false);
  fprintf(f, "},\n  ");
  json_num(f, "threads", env->threads, false);
  fprintf(f, ",\n  \"copy\": {");
  json_str(f, "method",
           "per case: memcpy of bytes/2 from one buffer to another (bytes read + "
           "written, the op's bytes model), on the context's threads in parts of at "
           "least copy_bytes_per_thread moved, its samples interleaved with the op's; "
           "pct_bandwidth = 100 * copy_median_s / median_s",
           true);
  json_num(f, "copy_bytes_per_thread", BENCH_COPY_BYTES_PER_THREAD, true);
  json_num(f, "busy_spread", BENCH_BUSY_SPREAD, false);
  fprintf(f, "},\n  \"cases\": [");
  int failed = 0, busy = 0, held = 0, missed = 0;
  for (int i = 0; i < env->n_results; i++) {
    const bench_result *r = &env->results[i];
    failed += r->check != BENCH_CHECK_OK;
    busy += r->busy;
    fprintf(f, "%s\n    {", i ? "," : "");
    json_str(f, "op", r->op, true);
    json_str(f, "shape", r->shape, true);
    json_str(f, "dtype", r->dtype, true);
    json_str(f, "kernel", r->kernel, true);
    json_num(f, "median_s", r->median_s, true);
    json_num(f, "min_s", r->min_s, true);
    json_num(f, "samples", r->samples, true);
    json_num(f, "calls_per_sample", r->inner, true);
    json_num(f, "bytes", r->bytes, true);
    json_num(f, "gbps", r->gbps, true);
    json_num(f, "copy_median_s", r->copy_median_s, true);
    json_num(f, "copy_min_s", r->copy_min_s, true);
    json_num(f, "copy_calls_per_sample", r->copy_inner, true);
    json_num(f, "copy_threads", r->copy_threads, true);
    json_num(f, "copy_gbps", r->copy_gbps, true);
    json_num(f, "pct_bandwidth", r->pct_bw, true);
    json_num(f, "pct_bandwidth_min", r->pct_bw_min, true);
    json_num(f, "spread", r->spread, true);
    json_num(f, "copy_spread", r->copy_spread, true);
    fprintf(f, "\"busy\": %s, ", r->busy ? "true" : "false");
    json_num(f, "ref_s", r->ref_s, true);
    json_num(f, "ref_min_s", r->ref_min_s, true);
    json_num(f, "ref_samples", r->ref_samples, true);
    json_num(f, "speedup_vs_ref", r->speedup, true);
    json_str(f, "check", r->check == BENCH_CHECK_OK ? "ok" : "FAIL", true);
    json_str(f, "note", r->note, true);
    fprintf(f, "\"extra\": [");
    for (int k = 0; k < r->n_extra; k++) {
      fprintf(f, "%s{", k ? ", " : "");
      json_str(f, "name", r->extra[k].name, true);
      json_num(f, "median_s", r->extra[k].median_s, true);
      json_num(f, "min_s", r->extra[k].min_s, false);
      fprintf(f, "}");
    }
    fprintf(f, "], ");
    json_num(f, "one_thread_median_s", r->t1_median_s, true);
    json_num(f, "one_thread_min_s", r->t1_min_s, true);
    json_num(f, "vs_one_thread", r->vs_t1, true);
    if (r->small) {
      fprintf(f, "\"small_call\": {");
      json_num(f, "whole_call_s", r->whole_s, true);
      json_num(f, "whole_call_min_s", r->whole_min_s, true);
      json_num(f, "empty_call_s", r->empty_s, true);
      json_num(f, "empty_call_min_s", r->empty_min_s, false);
      fprintf(f, "}, ");
    } else {
      fprintf(f, "\"small_call\": null, ");
    }
    fprintf(f, "\"targets\": [");
    for (int k = 0; k < r->n_target; k++) {
      const bench_target *t = &r->target[k];
      char rule[160];
      held += t->judged && t->holds;
      missed += t->judged && !t->holds;
      fprintf(f, "%s{", k ? ", " : "");
      json_str(f, "issue", t->issue, true);
      json_str(f, "target", bench_target_rule(t, r, rule, sizeof rule), true);
      json_num(f, "value", t->value, true);
      json_num(f, "limit", t->limit, true);
      fprintf(f, "\"at_least\": %s, \"one_thread\": %s, \"holds\": %s}",
              t->at_least ? "true" : "false", t->one_thread ? "true" : "false",
              !t->judged ? "null"
              : t->holds ? "true"
                         : "false");
    }
    fprintf(f, "]");
    if (env->base) {
      fprintf(f, ", ");
      json_num(f, "baseline_median_s", r->base_median_s, true);
      json_num(f, "vs_baseline", r->vs_base, false);
    }
    fprintf(f, "}");
  }
  fprintf(f, "\n  ],\n  ");
  json_num(f, "failed", failed, true);
  json_num(f, "busy", busy, true);
  json_num(f, "targets_held", held, true);
  json_num(f, "targets_missed", missed, false);
  if (env->base) {
    fprintf(f, ",\n  ");
    json_str(f, "baseline", env->baseline_path, false);
  }
  fprintf(f, "\n}\n");
  if (out ? fflush(f) != 0 : fclose(f) != 0) {
    perror(path);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------ SVG */

static void xml_text(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '&':
        fputs("&amp;", f);
        break;
      case '<':
        fputs("&lt;", f);
        break;
      case '>':
        fputs("&gt;", f);
        break;
      case '"':
        fputs("&quot;", f);
        break;
      case '\'':
        fputs("&apos;", f);
        break;
      default:
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
  }
}

int report_svg(const bench_env *env, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return -1;
  }
  const int label_w = 560, bar_w = 420, row_h = 20, top = 58, right = 110;
  const int n = env->n_results, width = label_w + bar_w + right;
  const int height = top + n * row_h + 40;
  double max_pct = 100.0;
  for (int i = 0; i < n; i++)
    if (env->results[i].pct_bw > max_pct) max_pct = env->results[i].pct_bw;
  max_pct *= 1.02;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans Mono, monospace\" "
          "font-size=\"11\">\n",
          width, height, width, height);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width,
          height);
  fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">");
  char title[256];
  snprintf(title, sizeof title,
           "llmk %s bench (%s): %% of a copy of the same bytes, per case",
           llmk_version_string(), env->quick ? "quick" : "full");
  xml_text(f, title);
  fprintf(f, "</text>\n<text x=\"10\" y=\"38\">");
  snprintf(title, sizeof title,
           "ISA %s, %d thread(s); the copy: memcpy of as many bytes (read + written) on "
           "the same threads, timed beside each case",
           llmk_isa_name(llmk_get_isa()), env->threads);
  xml_text(f, title);
  fprintf(f, "</text>\n");
  /* axis: 0, 25, 50, ... up to max_pct */
  double step = max_pct > 400 ? 100 : max_pct > 200 ? 50 : 25;
  for (double v = 0; v <= max_pct; v += step) {
    double x = label_w + bar_w * v / max_pct;
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
            "stroke-width=\"1\"%s/>\n",
            x, top - 6, x, top + n * row_h, v == 100 ? "#333" : "#ddd",
            v == 100 ? " stroke-dasharray=\"4,3\"" : "");
    fprintf(
        f,
        "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%.0f%%</text>\n",
        x, top + n * row_h + 14, v);
  }
  for (int i = 0; i < n; i++) {
    const bench_result *r = &env->results[i];
    int y = top + i * row_h;
    char label[256];
    snprintf(label, sizeof label, "%s %s %s", r->op, r->shape, r->dtype);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label_w - 6, y + 14);
    xml_text(f, label);
    fprintf(f, "</text>\n");
    double pct = isnan(r->pct_bw) ? 0 : r->pct_bw;
    double w = bar_w * pct / max_pct;
    const char *color = r->check != BENCH_CHECK_OK ? "#c0392b" : "#4a7ab5";
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>",
            label_w, y + 3, w, row_h - 6, color);
    xml_text(f, label);
    fprintf(f, ": %.1f%%, %.2f GB/s, copy %.2f GB/s%s</title></rect>\n", pct,
            isnan(r->gbps) ? 0.0 : r->gbps, isnan(r->copy_gbps) ? 0.0 : r->copy_gbps,
            r->busy ? ", busy" : "");
    fprintf(f, "<text x=\"%.1f\" y=\"%d\">%s%.1f%%%s</text>\n", label_w + w + 4, y + 14,
            r->check != BENCH_CHECK_OK ? "FAIL " : "", pct, r->busy ? " busy" : "");
  }
  fprintf(f,
          "<text x=\"10\" y=\"%d\" fill=\"#555\">bars: copy median / op median for the "
          "same bytes (read + written); dashed: 100%%, as fast as the copy</text>\n",
          height - 8);
  fprintf(f, "</svg>\n");
  if (fclose(f) != 0) {
    perror(path);
    return -1;
  }
  return 0;
}
