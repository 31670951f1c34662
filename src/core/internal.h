/* SPDX-License-Identifier: Apache-2.0 */
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

/* ---------------------------------------------------------------- parallel */

/* The most threads a context has and the most tasks a run splits into, so that an op
 * may keep one result per task on the stack or one scratch area per task in its
 * workspace. */
#define LLMK__MAX_TASKS 256

/* A run of nth tasks: fn(arg, ith, nth) for every ith in [0, nth), each task on its own
 * thread of the context (the calling thread takes task 0), all finished on return.
 * Tasks may not wait for one another. An op's results may depend on how it splits its
 * work only through nth, and must not: every op gives the same bytes for any nth. */
typedef void (*llmk__task_fn)(void *arg, int ith, int nth);

/* The number of tasks a run over ctx would use for up to max_tasks: min(max_tasks,
 * the context's threads, LLMK__MAX_TASKS), at least 1 (1 for a NULL context). */
static inline int llmk__parallel_tasks(const llmk_context *ctx, int64_t max_tasks);
/* Runs llmk__parallel_tasks(ctx, max_tasks) tasks and returns that number. */
int llmk__parallel_run(llmk_context *ctx, int64_t max_tasks, llmk__task_fn fn, void *arg);

/* A run of tasks over [0, n): task ith of nth gets [begin, end), its llmk__split share
 * (empty where n < nth), and may keep per-task results at index ith. Returns nth. */
typedef void (*llmk__part_fn)(void *arg, int ith, int64_t begin, int64_t end);
int llmk__parallel_parts(llmk_context *ctx, int64_t max_tasks, int64_t n,
                         llmk__part_fn fn, void *arg);

/* The parallel version of `fn(arg, 0, n)`: [0, n) split by llmk__split into one range
 * per task, at most one task per `grain` items; with one task fn(arg, 0, n) runs on the
 * calling thread. */
typedef void (*llmk__range_fn)(void *arg, int64_t begin, int64_t end);
void llmk__parallel_for(llmk_context *ctx, int64_t n, int64_t grain, llmk__range_fn fn,
                        void *arg);

/* Room for per-task scratch, sized in phase 1 (which has no context): the tasks a run
 * on this machine may use, min(the CPUs this process may run on, LLMK__MAX_TASKS). A
 * run with more threads than this passes it as max_tasks. */
int llmk__plan_tasks(void);
/* The default thread count of llmk_context_create(0) and, in *rule, what chose it:
 * "LLMK_NUM_THREADS", "OMP_NUM_THREADS" or "CPU affinity". */
int llmk__default_threads(const char **rule);

/* Runtime-specific part of a context (parallel_openmp.c / parallel_pthreads.c):
 * fn(arg, ith, nth) for ith in [0, nth), 2 <= nth <= the pool's threads. */
struct llmk__pool;
llmk_status llmk__pool_create(int num_threads, struct llmk__pool **pool);
void llmk__pool_destroy(struct llmk__pool *pool);
void llmk__pool_run(struct llmk__pool *pool, int nth, llmk__task_fn fn, void *arg);
extern const char llmk__threading_name[];

struct llmk_context {
  int num_threads;
  struct llmk__pool *pool;
};

static inline int llmk__parallel_tasks(const llmk_context *ctx, int64_t max_tasks) {
  int64_t nt = ctx ? ctx->num_threads : 1;
  if (max_tasks < nt) nt = max_tasks;
  if (nt > LLMK__MAX_TASKS) nt = LLMK__MAX_TASKS;
  return nt < 1 ? 1 : (int)nt;
}

/* Split of [0, n) into `parts` ranges: range i is [begin, end). */
static inline void llmk__split(int64_t n, int parts, int i, int64_t *begin,
                               int64_t *end) {
  int64_t q = n / parts, r = n % parts;
  *begin = i * q + (i < r ? i : r);
  *end = *begin + q + (i < r ? 1 : 0);
}

#endif
