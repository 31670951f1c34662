/* SPDX-License-Identifier: Apache-2.0 */
/* Concurrency stress test (run under ThreadSanitizer by scripts/ci_tsan.sh): several
 * threads call every op at once and compare each result with a single-threaded run.
 *
 * What docs/api.md allows, and what is exercised:
 *   - threads with their own contexts (2 worker threads each), recreated now and then;
 *   - one context shared by two threads, used in turn under a mutex ("a context may
 *     serve one run at a time"), while plan creation happens outside the mutex;
 *   - runs with ctx == NULL;
 *   - llmk_set_max_isa changed by one thread while others make plans (every ISA gives
 *     the same bits, so results must not change);
 *   - llmk_last_error per thread: each thread's failing call leaves its own message;
 *   - plans made on one thread and run on another, a repeatable plan run by two threads
 *     in turn and destroyed by a third (hand-offs through barriers).
 * Concurrent runs of one repeatable plan are not tested: the docs say "don't".
 *
 * Usage: test_stress [iterations]   (default 12; LLMK_STRESS_ITERS also sets it) */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llmk/llmk.h"

#define NTHREADS 4
#include "stress_ops.h"

static atomic_int failures;

#define FAIL(...)                                        \
  do {                                                   \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                        \
    fprintf(stderr, "\n");                               \
    atomic_fetch_add(&failures, 1);                      \
  } while (0)

static uint64_t ref_digest[NUM_OPS];

/* Runs a plan whose buffers were reset, with a fresh workspace; checks the digest. */
static void run_check(const char *who, bufs *b, int op, size_t ws, llmk_plan *plan,
                      llmk_context *ctx, pthread_mutex_t *ctx_lock) {
  void *w = malloc(ws ? ws : 1);
  if (!w) {
    FAIL("%s: no memory", who);
    llmk_plan_destroy(plan);
    return;
  }
  if (ctx_lock) pthread_mutex_lock(ctx_lock);
  llmk_status st = so_run(op, w, ws, plan, ctx);
  if (ctx_lock) pthread_mutex_unlock(ctx_lock);
  free(w);
  if (st != LLMK_SUCCESS)
    FAIL("%s: %s run: %s: %s", who, so_op_names[op], llmk_status_string(st),
         llmk_last_error());
  else if (so_digest(b, op) != ref_digest[op])
    FAIL("%s: %s: result differs from the single-threaded run", who, so_op_names[op]);
}

/* Plan, reset and run one op; returns 0 on a phase-1 failure (reported). */
static void one_op(const char *who, bufs *b, int op, llmk_context *ctx,
                   pthread_mutex_t *ctx_lock) {
  size_t ws;
  llmk_plan *plan;
  llmk_status st = so_plan(b, op, &ws, &plan);
  if (st != LLMK_SUCCESS) {
    FAIL("%s: %s phase 1: %s: %s", who, so_op_names[op], llmk_status_string(st),
         llmk_last_error());
    return;
  }
  so_reset(b, op); /* phase 1 reads no data: inputs may be written after it */
  run_check(who, b, op, ws, plan, ctx, ctx_lock);
}

/* A failing call whose message names a number of this thread's own. */
static void own_error(int tid, const char *who) {
  int64_t n[1] = {AS_N}, n1[2] = {AS_N, 1}, nb[2] = {AS_N, AS_MB};
  int64_t d[AS_N * AS_MB] = {0};
  llmk_tensor a, s, tb;
  T_INIT(&a, LLMK_I64, 1, n, d);
  T_INIT(&s, LLMK_I64, 2, n1, d);
  T_INIT(&tb, LLMK_I64, 2, nb, d);
  size_t ws;
  llmk_plan *plan;
  int64_t num_seqs = 9000 + tid;
  llmk_status st = llmk_advance_step_get_workspace_size(
      &a, &s, &a, &a, &a, &tb, NULL, NULL, num_seqs, num_seqs, AS_BS, &ws, &plan);
  char want[32];
  snprintf(want, sizeof want, "%lld", (long long)num_seqs);
  if (st == LLMK_SUCCESS) {
    FAIL("%s: advance_step with num_seqs=%s succeeded", who, want);
    llmk_plan_destroy(plan);
  } else if (plan != NULL || !strstr(llmk_last_error(), want)) {
    FAIL("%s: last error \"%s\" does not name %s", who, llmk_last_error(), want);
  }
}

static int iterations = 12;
static bufs *thread_bufs[NTHREADS];
static llmk_context *shared_ctx;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;
/* hand-off slots: plans made by thread i over thread_bufs[i] */
static llmk_plan *handoff[NTHREADS][NUM_OPS];
static size_t handoff_ws[NTHREADS][NUM_OPS];

static void *worker(void *arg) {
  int tid = (int)(intptr_t)arg;
  char who[32];
  snprintf(who, sizeof who, "thread %d", tid);
  bufs *b = thread_bufs[tid];
  llmk_context *own = NULL;
  const bool shares = tid >= 2;
  if (!shares && llmk_context_create(2, &own) != LLMK_SUCCESS)
    FAIL("%s: context_create: %s", who, llmk_last_error());

  /* Phase A: every op, every iteration, all threads at once. */
  for (int it = 0; it < iterations; it++) {
    if (tid == 3) /* the ISA in force changes under the other threads' plans */
      llmk_set_max_isa((llmk_isa)(it % 3 == 0   ? LLMK_ISA_SCALAR
                                  : it % 3 == 1 ? LLMK_ISA_AVX2
                                                : LLMK_ISA_AVX512));
    if (!shares && it % 4 == 3) { /* contexts come and go while others run */
      llmk_context_destroy(own);
      own = NULL;
      if (llmk_context_create(tid + 1, &own) != LLMK_SUCCESS)
        FAIL("%s: context_create: %s", who, llmk_last_error());
    }
    if (it % 3 == 0) own_error(tid, who);
    for (int op = 0; op < NUM_OPS; op++) {
      if (shares)
        one_op(who, b, op, shared_ctx, &shared_lock);
      else
        one_op(who, b, op, (tid == 1 && it % 2) ? NULL : own, NULL);
    }
    if (it % 3 == 0) { /* successes leave the thread's own last message alone */
      char want[32];
      snprintf(want, sizeof want, "%d", 9000 + tid);
      if (!strstr(llmk_last_error(), want))
        FAIL("%s: last error changed to \"%s\"", who, llmk_last_error());
    }
  }
  if (tid == 3) llmk_set_max_isa(LLMK_ISA_AVX512);

  /* Phase B: plans made here are run on thread tid+1 over this thread's buffers. */
  for (int op = 0; op < NUM_OPS; op++) {
    llmk_status st = so_plan(b, op, &handoff_ws[tid][op], &handoff[tid][op]);
    if (st != LLMK_SUCCESS) {
      FAIL("%s: %s phase 1: %s", who, so_op_names[op], llmk_last_error());
      handoff[tid][op] = NULL;
    }
  }
  pthread_barrier_wait(&barrier);
  int from = (tid + NTHREADS - 1) % NTHREADS;
  for (int op = 0; op < NUM_OPS; op++) {
    if (!handoff[from][op]) continue;
    so_reset(thread_bufs[from], op);
    run_check(who, thread_bufs[from], op, handoff_ws[from][op], handoff[from][op], own,
              NULL); /* consumed here */
    handoff[from][op] = NULL;
  }
  pthread_barrier_wait(&barrier);

  /* Phase C: repeatable plans made here, run by tid+1 then tid+2, destroyed by tid+3. */
  for (int op = 0; op < NUM_OPS; op++) {
    llmk_plan *p = NULL;
    if (so_plan(b, op, &handoff_ws[tid][op], &p) != LLMK_SUCCESS ||
        llmk_plan_set_repeatable(p) != LLMK_SUCCESS) {
      FAIL("%s: %s repeatable plan: %s", who, so_op_names[op], llmk_last_error());
      llmk_plan_destroy(p);
      p = NULL;
    }
    handoff[tid][op] = p;
  }
  for (int step = 1; step <= 3; step++) {
    pthread_barrier_wait(&barrier);
    int src = (tid + NTHREADS - step) % NTHREADS;
    for (int op = 0; op < NUM_OPS; op++) {
      llmk_plan *p = handoff[src][op];
      if (!p) continue;
      if (step < 3) {
        so_reset(thread_bufs[src], op);
        run_check(who, thread_bufs[src], op, handoff_ws[src][op], p, own, NULL);
      } else if (llmk_plan_destroy(p) != LLMK_SUCCESS) {
        FAIL("%s: plan_destroy: %s", who, llmk_last_error());
      }
    }
  }
  pthread_barrier_wait(&barrier);
  llmk_context_destroy(own);
  return NULL;
}

int main(int argc, char **argv) {
  const char *env = getenv("LLMK_STRESS_ITERS");
  if (argc > 1)
    iterations = atoi(argv[1]);
  else if (env && *env)
    iterations = atoi(env);
  if (iterations < 1) iterations = 1;
  printf("test_stress: %d threads, %d iterations, runtime %s, ISA %s\n", NTHREADS,
         iterations, llmk_threading_runtime(), llmk_isa_name(llmk_get_isa()));

  for (int i = 0; i < NTHREADS; i++) {
    thread_bufs[i] = calloc(1, sizeof(bufs));
    if (!thread_bufs[i]) return 2;
  }
  /* the reference: every op on the calling thread alone, and the same again with a
   * 2-thread context (results are bit-identical for any thread count) */
  for (int op = 0; op < NUM_OPS; op++) {
    size_t ws;
    llmk_plan *plan;
    llmk_status st = so_plan(thread_bufs[0], op, &ws, &plan);
    void *w = malloc(ws ? ws : 1);
    so_reset(thread_bufs[0], op);
    if (st == LLMK_SUCCESS) st = so_run(op, w, ws, plan, NULL);
    free(w);
    if (st != LLMK_SUCCESS) {
      fprintf(stderr, "FAIL: %s single-threaded: %s: %s\n", so_op_names[op],
              llmk_status_string(st), llmk_last_error());
      return 1;
    }
    ref_digest[op] = so_digest(thread_bufs[0], op);
  }
  if (llmk_context_create(2, &shared_ctx) != LLMK_SUCCESS) {
    fprintf(stderr, "FAIL: context_create: %s\n", llmk_last_error());
    return 1;
  }
  for (int op = 0; op < NUM_OPS; op++)
    one_op("main", thread_bufs[1], op, shared_ctx, NULL);

  pthread_barrier_init(&barrier, NULL, NTHREADS);
  pthread_t th[NTHREADS];
  for (int i = 0; i < NTHREADS; i++)
    if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i)) {
      fprintf(stderr, "FAIL: pthread_create\n");
      return 1;
    }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&barrier);
  llmk_context_destroy(shared_ctx);
  for (int i = 0; i < NTHREADS; i++) free(thread_bufs[i]);

  int f = atomic_load(&failures);
  printf("%s: %d failure(s)\n", f ? "FAILED" : "passed", f);
  return f ? 1 : 0;
}
