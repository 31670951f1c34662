/* SPDX-License-Identifier: Apache-2.0 */
/* llmk info: version, ISA, the kernels each op will use, threads. The kernel tables are
 * internal (src/dispatch, src/kernels): the tool links the static library and asks each
 * op's table chooser which kernels a plan made now would get, and which the build has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "core/internal.h"
#include "dispatch/dispatch.h"

const char *tool_cpu_model(void) {
  static char model[128];
  if (model[0]) return model;
  snprintf(model, sizeof model, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return model;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *p = strchr(line, ':');
    if (!p) continue;
    p++;
    while (*p == ' ' || *p == '\t') p++;
    size_t n = strcspn(p, "\n");
    if (n >= sizeof model) n = sizeof model - 1;
    memcpy(model, p, n);
    model[n] = 0;
    break;
  }
  fclose(f);
  return model;
}

int tool_online_cpus(void) {
  return llmk__cpu_count();
}

double tool_loadavg(void) {
  double v = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return -1;
  if (fscanf(f, "%lf", &v) != 1) v = -1;
  fclose(f);
  return v;
}

int tool_default_threads(void) {
  return llmk__default_threads(NULL);
}

/* The variants a kernel list has, highest first; those this CPU cannot run marked. */
static void isa_list(const llmk__kernel_list *l, llmk_isa cap, char *out, size_t n) {
  out[0] = 0;
  for (int i = 0; i < l->count; i++) {
    llmk_isa k = llmk__kernels_isa(l->tables[i]);
    size_t o = strlen(out);
    snprintf(out + o, n - o, "%s%s%s", o ? " " : "", llmk_isa_name(k),
             k > cap ? "(no cpu)" : "");
  }
}

static void jstr(const char *key, const char *v, const char *end) {
  char buf[1024];
  tool_json_escape(v ? v : "", buf, sizeof buf);
  printf("\"%s\": \"%s\"%s", key, buf, end);
}

static int info_json(void) {
  llmk_isa isa = llmk_get_isa(), native = llmk_get_native_isa();
  const char *rule = NULL;
  int nthr = llmk__default_threads(&rule);
  printf("{\n  ");
  jstr("tool", "llmk info", ", ");
  jstr("version", llmk_version_string(), ", ");
  printf("\"version_number\": %u, ", llmk_version());
  jstr("header_version", LLMK_VERSION_STRING, ",\n  ");
  jstr("cpu", tool_cpu_model(), ", ");
  printf("\"online_cpus\": %d, \"allowed_cpus\": %d,\n  ", tool_online_cpus(),
         llmk__cpu_allowed());
  jstr("cpu_features", llmk_cpu_features(), ",\n  ");
  jstr("isa", llmk_isa_name(isa), ", ");
  jstr("native_isa", llmk_isa_name(native), ", ");
  jstr("LLMK_ISA", getenv("LLMK_ISA"), ",\n  ");
  jstr("threading", llmk_threading_runtime(), ", ");
  printf("\"default_threads\": %d, ", nthr);
  jstr("thread_rule", rule, ", ");
  jstr("LLMK_NUM_THREADS", getenv("LLMK_NUM_THREADS"), ", ");
  jstr("OMP_NUM_THREADS", getenv("OMP_NUM_THREADS"), ",\n  ");
  printf("\"kernels\": [");
  for (int i = 0; i < llmk__kernel_list_count; i++) {
    const llmk__kernel_list *l = llmk__kernel_lists[i];
    printf("%s\n    {", i ? "," : "");
    jstr("name", l->name, ", ");
    jstr("chosen", llmk_isa_name(llmk__kernels_isa(llmk__kernels_pick(l, isa))), ", ");
    printf("\"variants\": [");
    for (int k = 0; k < l->count; k++) {
      llmk_isa v = llmk__kernels_isa(l->tables[k]);
      printf("%s{\"isa\": \"%s\", \"runs_here\": %s}", k ? ", " : "", llmk_isa_name(v),
             v > native ? "false" : "true");
    }
    printf("]}");
  }
  printf("\n  ]\n}\n");
  return 0;
}

int cmd_info(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf(
          "usage: llmk info [--json]\n\nPrints the library version, the CPU's ISA and "
          "the "
          "one in force,\n"
          "the kernels each op will use, and the threading runtime and default thread "
          "count\n(and the rule that chose it). --json: the same as one JSON object on "
          "stdout.\n");
      return 0;
    }
    if (!strcmp(argv[i], "--json")) {
      json = 1;
      continue;
    }
    fprintf(stderr, "llmk info: unknown argument '%s' (see llmk info --help)\n", argv[i]);
    return 2;
  }
  if (json) return info_json();
  llmk_isa isa = llmk_get_isa(), native = llmk_get_native_isa();
  const char *env_isa = getenv("LLMK_ISA"), *env_thr = getenv("LLMK_NUM_THREADS");
  printf("llmk %s (llmk_version() %u, headers %s)\n", llmk_version_string(),
         llmk_version(), LLMK_VERSION_STRING);
  printf("cpu:        %s, %d online CPUs\n", tool_cpu_model(), tool_online_cpus());
  printf("features:   %s\n", llmk_cpu_features());
  printf("isa:        %s in force (native %s%s%s%s)\n", llmk_isa_name(isa),
         llmk_isa_name(native), env_isa ? ", LLMK_ISA=" : "", env_isa ? env_isa : "",
         env_isa ? "" : ", LLMK_ISA unset");
  const char *rule = NULL;
  int nthr = llmk__default_threads(&rule);
  const char *env_omp = getenv("OMP_NUM_THREADS");
  printf("threading:  %s, default %d thread%s (%s; %d online CPUs, %d allowed)\n",
         llmk_threading_runtime(), nthr, nthr == 1 ? "" : "s", rule, tool_online_cpus(),
         llmk__cpu_allowed());
  if (env_thr) printf("            LLMK_NUM_THREADS=%s\n", env_thr);
  if (env_omp) printf("            OMP_NUM_THREADS=%s\n", env_omp);
  printf("kernels (chosen now; built variants):\n");
  for (int i = 0; i < llmk__kernel_list_count; i++) {
    const llmk__kernel_list *l = llmk__kernel_lists[i];
    char list[96];
    isa_list(l, native, list, sizeof list);
    printf("  %-42s %-7s [%s]\n", l->name,
           llmk_isa_name(llmk__kernels_isa(llmk__kernels_pick(l, isa))), list);
  }
  return 0;
}
