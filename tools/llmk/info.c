/* llmk info: version, ISA, the kernels each op will use, threads. The kernel tables are
 * internal (src/dispatch, src/kernels): the tool links the static library and asks each
 * op's table chooser which kernels a plan made now would get, and which the build has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "dispatch/dispatch.h"
#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"
#include "kernels/kv_cache/kv_cache.h"

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
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
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
  llmk_context *ctx = NULL;
  if (llmk_context_create(0, &ctx) != LLMK_SUCCESS) return 1;
  int n = llmk_context_num_threads(ctx);
  llmk_context_destroy(ctx);
  return n;
}

/* The ISA of the kernels chosen for `isa`, for each table chooser. */
typedef llmk_isa (*isa_of_fn)(llmk_isa isa);
static llmk_isa isa_convert(llmk_isa i) {
  return llmk__convert_kernels_for(i)->isa;
}
static llmk_isa isa_advance(llmk_isa i) {
  return llmk__advance_step_kernels_for(i)->isa;
}
static llmk_isa isa_kv(llmk_isa i) {
  return llmk__kv_kernels_for(i)->isa;
}
static llmk_isa isa_tkp(llmk_isa i) {
  return llmk__tkp_kernels_for(i)->isa;
}
static llmk_isa isa_conv(llmk_isa i) {
  return llmk__conv1d_kernels_for(i)->isa;
}

static const struct {
  const char *ops;
  isa_of_fn isa_of;
} kernel_tables[] = {
    {"advance_step", isa_advance},
    {"scatter_pa_kv_cache, gather_pa_kv_cache", isa_kv},
    {"apply_top_k_top_p (+ min_p, sample)", isa_tkp},
    {"fused_causal_conv1d", isa_conv},
    {"convert (f32 <-> f16/bf16/fp8)", isa_convert},
};

static void isa_list(isa_of_fn of, llmk_isa cap, char *out, size_t n) {
  /* the variants built: what each ISA level maps to, deduplicated; only those this
   * CPU can run are "available" */
  out[0] = 0;
  llmk_isa seen = (llmk_isa)-1;
  for (int i = LLMK_ISA_SCALAR; i <= LLMK_ISA_AVX512; i++) {
    llmk_isa k = of((llmk_isa)i);
    if (k == seen) continue;
    seen = k;
    size_t o = strlen(out);
    snprintf(out + o, n - o, "%s%s%s", o ? " " : "", llmk_isa_name(k),
             k > cap ? "(no cpu)" : "");
  }
}

int cmd_info(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf(
          "usage: llmk info\n\nPrints the library version, the CPU's ISA and the one in "
          "force,\n"
          "the kernels each op will use, and the threading runtime and default thread "
          "count.\n");
      return 0;
    }
    fprintf(stderr, "llmk info: unknown argument '%s' (see llmk info --help)\n", argv[i]);
    return 2;
  }
  llmk_isa isa = llmk_get_isa(), native = llmk_get_native_isa();
  const char *env_isa = getenv("LLMK_ISA"), *env_thr = getenv("LLMK_NUM_THREADS");
  printf("llmk %s (llmk_version() %u, headers %s)\n", llmk_version_string(),
         llmk_version(), LLMK_VERSION_STRING);
  printf("cpu:        %s, %d online CPUs\n", tool_cpu_model(), tool_online_cpus());
  printf("features:   %s\n", llmk_cpu_features());
  printf("isa:        %s in force (native %s%s%s%s)\n", llmk_isa_name(isa),
         llmk_isa_name(native), env_isa ? ", LLMK_ISA=" : "", env_isa ? env_isa : "",
         env_isa ? "" : ", LLMK_ISA unset");
  printf("threading:  %s, default %d thread%s (%s)\n", llmk_threading_runtime(),
         tool_default_threads(), tool_default_threads() == 1 ? "" : "s",
         env_thr ? "LLMK_NUM_THREADS" : "online CPUs; LLMK_NUM_THREADS unset");
  if (env_thr) printf("            LLMK_NUM_THREADS=%s\n", env_thr);
  printf("kernels (chosen now; built variants):\n");
  for (size_t i = 0; i < sizeof kernel_tables / sizeof kernel_tables[0]; i++) {
    char list[96];
    isa_list(kernel_tables[i].isa_of, native, list, sizeof list);
    printf("  %-42s %-7s [%s]\n", kernel_tables[i].ops,
           llmk_isa_name(kernel_tables[i].isa_of(isa)), list);
  }
  return 0;
}
