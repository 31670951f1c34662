/* SPDX-License-Identifier: Apache-2.0 */
/* A persistent pool: num_threads - 1 workers sleep on a condition variable; a run
 * publishes a job under a new generation number and the caller takes part 0. */
#include <pthread.h>
#include <stdlib.h>

#include "core/internal.h"

const char llmk__threading_name[] = "pthreads";

struct llmk__pool {
  pthread_mutex_t lock;
  pthread_cond_t wake, done;
  pthread_t *threads;
  int num_workers;
  uint64_t generation;
  bool stop;
  /* the current job */
  llmk__task_fn fn;
  void *arg;
  int parts;
  int pending;
};

typedef struct worker_arg {
  struct llmk__pool *pool;
  int index; /* part index, 1..num_workers */
} worker_arg;

static void *worker_main(void *p) {
  worker_arg *wa = p;
  struct llmk__pool *pool = wa->pool;
  int index = wa->index;
  free(wa);
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->stop && pool->generation == seen)
      pthread_cond_wait(&pool->wake, &pool->lock);
    if (pool->stop) break;
    seen = pool->generation;
    llmk__task_fn fn = pool->fn;
    void *arg = pool->arg;
    int parts = pool->parts;
    pthread_mutex_unlock(&pool->lock);
    if (index < parts) fn(arg, index, parts);
    pthread_mutex_lock(&pool->lock);
    if (--pool->pending == 0) pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

llmk_status llmk__pool_create(int num_threads, struct llmk__pool **out) {
  struct llmk__pool *pool = calloc(1, sizeof *pool);
  if (!pool)
    return llmk__error(LLMK_ERROR_OUT_OF_MEMORY, "context_create", "out of memory");
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  pool->threads = calloc((size_t)num_threads, sizeof *pool->threads);
  if (!pool->threads) {
    llmk__pool_destroy(pool);
    return llmk__error(LLMK_ERROR_OUT_OF_MEMORY, "context_create", "out of memory");
  }
  for (int i = 1; i < num_threads; i++) {
    worker_arg *wa = malloc(sizeof *wa);
    if (wa) {
      wa->pool = pool;
      wa->index = i;
    }
    if (!wa || pthread_create(&pool->threads[pool->num_workers], NULL, worker_main, wa)) {
      free(wa);
      llmk__pool_destroy(pool);
      return llmk__error(LLMK_ERROR_OUT_OF_MEMORY, "context_create",
                         "cannot start worker thread %d", i);
    }
    pool->num_workers++;
  }
  *out = pool;
  return LLMK_SUCCESS;
}

void llmk__pool_destroy(struct llmk__pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->lock);
  pool->stop = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 0; i < pool->num_workers; i++) pthread_join(pool->threads[i], NULL);
  free(pool->threads);
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->lock);
  free(pool);
}

void llmk__pool_run(struct llmk__pool *pool, int nth, llmk__task_fn fn, void *arg) {
  pthread_mutex_lock(&pool->lock);
  pool->fn = fn;
  pool->arg = arg;
  pool->parts = nth;
  pool->pending = pool->num_workers;
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  fn(arg, 0, nth);
  pthread_mutex_lock(&pool->lock);
  while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
}
