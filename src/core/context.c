#include <stdlib.h>
#include <unistd.h>

#include "core/internal.h"

static int default_threads(void) {
  const char *env = getenv("LLMK_NUM_THREADS");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end == '\0' && v > 0 && v <= 4096) return (int)v;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)(n > 4096 ? 4096 : n) : 1;
}

llmk_status llmk_context_create(int num_threads, llmk_context **ctx) {
  if (!ctx) return llmk__error(LLMK_ERROR_NULL_POINTER, "context_create", "ctx is NULL");
  *ctx = NULL;
  llmk_context *c = calloc(1, sizeof *c);
  if (!c) return llmk__error(LLMK_ERROR_OUT_OF_MEMORY, "context_create", "out of memory");
  c->num_threads =
      num_threads > 0 ? (num_threads > 4096 ? 4096 : num_threads) : default_threads();
  if (c->num_threads > 1) {
    llmk_status st = llmk__pool_create(c->num_threads, &c->pool);
    if (st != LLMK_SUCCESS) {
      free(c);
      return st;
    }
  }
  *ctx = c;
  return LLMK_SUCCESS;
}

void llmk_context_destroy(llmk_context *ctx) {
  if (!ctx) return;
  llmk__pool_destroy(ctx->pool);
  free(ctx);
}

int llmk_context_num_threads(const llmk_context *ctx) {
  return ctx ? ctx->num_threads : 1;
}

const char *llmk_threading_runtime(void) {
  return llmk__threading_name;
}

void llmk__parallel_for(llmk_context *ctx, int64_t n, int64_t grain, llmk__range_fn fn,
                        void *arg) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int nt = ctx ? ctx->num_threads : 1;
  int64_t max_parts = (n + grain - 1) / grain;
  if (max_parts < nt) nt = (int)max_parts;
  if (nt <= 1) {
    fn(arg, 0, n);
    return;
  }
  llmk__pool_run(ctx->pool, nt, n, grain, fn, arg);
}
