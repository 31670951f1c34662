/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* A positive decimal number at the start of s, ended by '\0' or (when list) a ','. */
static int env_threads(const char *s, int list) {
  if (!s || !*s) return 0;
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || v <= 0 || !(*end == '\0' || (list && *end == ','))) return 0;
  return v > LLMK__MAX_TASKS ? LLMK__MAX_TASKS : (int)v;
}

int llmk__default_threads(const char **rule) {
  const char *why = "CPU affinity";
  int n = env_threads(getenv("LLMK_NUM_THREADS"), 0);
  if (n > 0) {
    why = "LLMK_NUM_THREADS";
  } else if (!strcmp(llmk__threading_name, "openmp") &&
             (n = env_threads(getenv("OMP_NUM_THREADS"), 1)) > 0) {
    why = "OMP_NUM_THREADS"; /* its first level: ours is the only parallel region */
  } else {
    n = llmk__plan_tasks();
  }
  if (rule) *rule = why;
  return n;
}

llmk_status llmk_context_create(int num_threads, llmk_context **ctx) {
  if (!ctx) return llmk__error(LLMK_ERROR_NULL_POINTER, "context_create", "ctx is NULL");
  *ctx = NULL;
  llmk_context *c = calloc(1, sizeof *c);
  if (!c) return llmk__error(LLMK_ERROR_OUT_OF_MEMORY, "context_create", "out of memory");
  c->num_threads = num_threads > 0 ? (num_threads > 4096 ? 4096 : num_threads)
                                   : llmk__default_threads(NULL);
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
