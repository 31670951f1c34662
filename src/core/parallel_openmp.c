/* SPDX-License-Identifier: Apache-2.0 */
#include <omp.h>

#include "core/internal.h"

const char llmk__threading_name[] = "openmp";

/* OpenMP keeps its own worker threads; the pool object only marks the context. */
struct llmk__pool {
  int unused;
};
static struct llmk__pool openmp_pool;

llmk_status llmk__pool_create(int num_threads, struct llmk__pool **pool) {
  (void)num_threads;
  *pool = &openmp_pool;
  return LLMK_SUCCESS;
}

void llmk__pool_destroy(struct llmk__pool *pool) {
  (void)pool;
}

void llmk__pool_run(struct llmk__pool *pool, int nth, llmk__task_fn fn, void *arg) {
  (void)pool;
#pragma omp parallel num_threads(nth)
  {
    /* nth tasks even if OpenMP gives fewer threads: tasks never wait for each other */
    int team = omp_get_num_threads();
    for (int ith = omp_get_thread_num(); ith < nth; ith += team) fn(arg, ith, nth);
  }
}
