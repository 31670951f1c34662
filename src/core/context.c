#include <stdlib.h>

#include "core/internal.h"

static int default_threads(void) {
  const char *env = getenv("LLMK_NUM_THREADS");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end == '\0' && v > 0) return v > LLMK__MAX_TASKS ? LLMK__MAX_TASKS : (int)v;
  }
  return llmk__plan_tasks();
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

int llmk__parallel_run(llmk_context *ctx, int64_t max_tasks, llmk__task_fn fn,
                       void *arg) {
  int nth = llmk__parallel_tasks(ctx, max_tasks);
  if (nth == 1)
    fn(arg, 0, 1);
  else
    llmk__pool_run(ctx->pool, nth, fn, arg);
  return nth;
}

typedef struct parts_job {
  llmk__part_fn fn;
  void *arg;
  int64_t n;
} parts_job;

static void parts_task(void *arg, int ith, int nth) {
  const parts_job *j = arg;
  int64_t b, e;
  llmk__split(j->n, nth, ith, &b, &e);
  j->fn(j->arg, ith, b, e);
}

int llmk__parallel_parts(llmk_context *ctx, int64_t max_tasks, int64_t n,
                         llmk__part_fn fn, void *arg) {
  parts_job j = {fn, arg, n};
  return llmk__parallel_run(ctx, max_tasks, parts_task, &j);
}

typedef struct range_job {
  llmk__range_fn fn;
  void *arg;
} range_job;

static void range_part(void *arg, int ith, int64_t begin, int64_t end) {
  (void)ith;
  const range_job *j = arg;
  if (begin < end) j->fn(j->arg, begin, end);
}

void llmk__parallel_for(llmk_context *ctx, int64_t n, int64_t grain, llmk__range_fn fn,
                        void *arg) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int64_t max_tasks = (n + grain - 1) / grain;
  if (llmk__parallel_tasks(ctx, max_tasks) == 1) {
    fn(arg, 0, n);
    return;
  }
  range_job j = {fn, arg};
  llmk__parallel_parts(ctx, max_tasks, n, range_part, &j);
}
