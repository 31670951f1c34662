/* Private core API shared by the ops: errors, tensor checks, plans, parallel-for.
 * Every symbol here is prefixed llmk__ and hidden from the shared library. */
#ifndef LLMK_CORE_INTERNAL_H
#define LLMK_CORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llmk/types.h"

#if defined(__GNUC__)
#define LLMK__PRINTF(f, a) __attribute__((format(printf, f, a)))
#define LLMK__LIKELY(x) __builtin_expect(!!(x), 1)
#define LLMK__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LLMK__COLD __attribute__((cold, noinline))
#else
#define LLMK__COLD
#define LLMK__PRINTF(f, a)
#define LLMK__LIKELY(x) (x)
#define LLMK__UNLIKELY(x) (x)
#endif

/* ------------------------------------------------------------------ errors */

/* Records "<op>: <message>" as this thread's last error and returns status. */
llmk_status llmk__error(llmk_status status, const char *op, const char *fmt, ...)
    LLMK__PRINTF(3, 4);

/* ------------------------------------------------------------ tensor checks */

/* Bit mask of dtypes, for llmk__check_dtype. */
#define LLMK__DT(d) (1u << (d))

/* NULL descriptor -> NULL_POINTER; invalid dtype -> INVALID_DTYPE; rank outside
 * [0, 8], a negative extent, a negative stride or an extent whose byte span overflows
 * -> INVALID_SHAPE; data NULL while the tensor has elements -> NULL_POINTER. */
llmk_status llmk__check_tensor(const char *op, const char *name, const llmk_tensor *t);
llmk_status llmk__check_dtype(const char *op, const char *name, const llmk_tensor *t,
                              uint32_t allowed_mask);
llmk_status llmk__check_rank(const char *op, const char *name, const llmk_tensor *t,
                             int rank);
/* t->shape[dim] must equal `expected`; `what` names it in the message. */
llmk_status llmk__check_dim(const char *op, const char *name, const llmk_tensor *t,
                            int dim, int64_t expected, const char *what);
/* Byte offset of the last element + element size: the span the tensor may touch
 * (0 for an empty tensor). Valid after llmk__check_tensor succeeded. */
size_t llmk__tensor_span_bytes(const llmk_tensor *t);

/* ------------------------------------------------------------------- plans */

typedef enum llmk__op {
  LLMK__OP_ADVANCE_STEP = 1,
  LLMK__OP_SCATTER_KV = 2,
  LLMK__OP_GATHER_KV = 3,
  LLMK__OP_TOP_K_TOP_P = 4,
  LLMK__OP_CAUSAL_CONV1D = 5,
} llmk__op;

/* Allocates a live plan with `payload_size` bytes of zeroed, max-aligned payload. */
llmk_status llmk__plan_create(const char *op_name, llmk__op op, size_t payload_size,
                              size_t workspace_size, llmk_plan **plan);
void *llmk__plan_payload(llmk_plan *plan);
size_t llmk__plan_workspace_size(const llmk_plan *plan);
/* Start of a run: the plan must be live and of `op`, the workspace large enough.
 * Any live, non-repeatable plan passed here is consumed by the matching
 * llmk__plan_end_run(), which the caller must call iff this returned a plan
 * (*live = true), whatever the status. */
llmk_status llmk__plan_begin_run(const char *op_name, llmk__op op, llmk_plan *plan,
                                 const void *workspace, size_t workspace_size,
                                 bool *live);
void llmk__plan_end_run(llmk_plan *plan);

/* ------------------------------------------------------------ parallel-for */

/* The parallel version of `fn(arg, 0, n)`: [0, n) is split into at most
 * num_threads contiguous ranges of at least `grain` items, one per thread, in a
 * fixed way that depends only on n, grain and the thread count; the calling
 * thread takes the first range. With ctx NULL or one thread, or n <= grain,
 * fn(arg, 0, n) runs on the calling thread. */
typedef void (*llmk__range_fn)(void *arg, int64_t begin, int64_t end);
void llmk__parallel_for(llmk_context *ctx, int64_t n, int64_t grain, llmk__range_fn fn,
                        void *arg);

/* Runtime-specific part of a context (parallel_openmp.c / parallel_pthreads.c). */
struct llmk__pool;
llmk_status llmk__pool_create(int num_threads, struct llmk__pool **pool);
void llmk__pool_destroy(struct llmk__pool *pool);
void llmk__pool_run(struct llmk__pool *pool, int num_threads, int64_t n, int64_t grain,
                    llmk__range_fn fn, void *arg);
extern const char llmk__threading_name[];

struct llmk_context {
  int num_threads;
  struct llmk__pool *pool;
};

/* Split of [0, n) into `parts` ranges: range i is [begin, end). */
static inline void llmk__split(int64_t n, int parts, int i, int64_t *begin,
                               int64_t *end) {
  int64_t q = n / parts, r = n % parts;
  *begin = i * q + (i < r ? i : r);
  *end = *begin + q + (i < r ? 1 : 0);
}

#endif
