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

void llmk__pool_run(struct llmk__pool *pool, int num_threads, int64_t n, int64_t grain,
                    llmk__range_fn fn, void *arg) {
  (void)pool;
  (void)grain;
#pragma omp parallel num_threads(num_threads)
  {
    /* The split depends on num_threads only, even if OpenMP gives fewer threads. */
    int team = omp_get_num_threads();
    for (int part = omp_get_thread_num(); part < num_threads; part += team) {
      int64_t b, e;
      llmk__split(n, num_threads, part, &b, &e);
      if (b < e) fn(arg, b, e);
    }
  }
}
