/* SPDX-License-Identifier: Apache-2.0 */
/* The harness shared by the op tests (tests/ops) and the aclnn tests (aclnn/tests), on
 * top of test_util.h. Every check goes through TU_CHECK, so it counts in tu_finish().
 *
 * Guarded tensors
 *   th_tensor            an llmk_tensor over its own tu_buf (guard zones both sides).
 *   th_tensor_make()     a tensor of a dtype, shape and strides (NULL: contiguous) over
 *                        a fresh buffer of exactly its span, zero-filled.
 *   th_tensor_free(), th_tensor_guards_ok(), th_tensor_byte() (address of an element).
 *   th_dtype_size(), th_span_bytes(), th_contiguous_strides(), th_fill_pattern()
 *   (seeded bytes, independent of the test RNG).
 * Buffers
 *   th_buf_clone()       a byte-identical copy, guards included, in a new buffer.
 *   th_buf_restore()     copies src over dst (same size), guards included.
 *   th_buf_same()        whole buffers equal, guards included.
 * Snapshots ("nothing written")
 *   th_snap_add() each writable buffer once before a call, th_snap_unchanged() after
 *   it: one check per buffer that its bytes, guards included, are as they were;
 *   th_snap_free().
 * Status and messages
 *   th_reset_error()     leaves another function's message as the last error, so that
 *                        a rejected call that sets none is not credited with an older
 * one. th_words_in(), th_msg_ok(): the last error starts with "<op>:" and names one of
 *                        '|'-separated words (and all of `must`).
 * Descriptor defects
 *   th_defect_apply()    the defects every op's error table puts on an llmk_tensor:
 *                        data NULL, dtype, rank, extent, stride (and a NULL tensor,
 *                        which the caller applies when it returns 0).
 * Error tables
 *   th_table             a growing table of rows: th_table_add() (TH_TABLE_ADD()) copies
 *                        a row in, th_table_str() keeps a copy of a row's name,
 *                        th_table_free().
 *   th_run_table()       runs every row of a table of bad-argument cases through the
 *                        test's row function and prints "<what>: N rows"; th_run_rows()
 *                        the same for a row function of the row alone.
 *   th_check_refused()   the checks of a refused phase 1: status, *plan NULL,
 *                        *workspace_size 0, the message.
 *   th_check_run()       the checks of an accepted phase 1 and its phase 2: status,
 *                        the message of a rejection.
 * Plans
 *   th_exec_fn           an op's phase 2 (llmk_<op>(ws, size, plan, ctx)).
 *   th_run_plan()        runs a plan with exactly the workspace asked for (malloc'd, so
 *                        ASan sees an overrun).
 *   th_check_null_plan() phase 2 of NULL, llmk_plan_destroy(NULL),
 *                        llmk_plan_set_repeatable(NULL).
 *   th_check_ws_too_small() a plan run with one byte too little workspace.
 * Thread / ISA sweep
 *   th_sweep_init()      contexts for a list of thread counts (0: ctx NULL).
 *   th_sweep_run()       calls fn for every ISA from scalar (or only the native one) to
 *                        the native one, with llmk_set_max_isa, and every context; fn
 *                        runs once and reports the bytes of its result; each result is
 *                        checked byte for byte against the first good one. The native
 *                        ISA is restored afterwards.
 *   th_sweep_free(). */
#ifndef LLMK_TEST_HARNESS_H
#define LLMK_TEST_HARNESS_H

#include "llmk/llmk.h"
#include "test_util.h"

/* "test bug: <what>" on stderr, exit 2. */
void th_die(const char *what);
void *th_xmalloc(size_t n); /* dies when out of memory; n == 0 allowed */

/* ---------------------------------------------------------------- tensors */

size_t th_dtype_size(llmk_dtype dt); /* 0 for an invalid dtype */
/* Bytes from the first element to the end of the last one; 0 for an empty tensor. */
size_t th_span_bytes(llmk_dtype dt, int rank, const int64_t *shape,
                     const int64_t *strides);
void th_contiguous_strides(int rank, const int64_t *shape, int64_t *strides);
int64_t th_numel(int rank, const int64_t *shape);
/* Element offset (in elements) of the idx-th element in row-major logical order. */
int64_t th_row_major_offset(int rank, const int64_t *shape, const int64_t *strides,
                            int64_t idx);
/* Bytes from splitmix64(seed), the same for one seed on every run. */
void th_fill_pattern(void *p, size_t n, uint64_t seed);

typedef struct th_tensor {
  llmk_tensor t;
  tu_buf buf;
} th_tensor;

void th_tensor_make(th_tensor *x, llmk_dtype dt, int rank, const int64_t *shape,
                    const int64_t *strides);
void th_tensor_free(th_tensor *x);
int th_tensor_guards_ok(const th_tensor *x);
/* Address of the element at element offset `elem` (a sum of index * stride). */
void *th_tensor_byte(const th_tensor *x, int64_t elem);

/* ---------------------------------------------------------------- buffers */

void th_buf_clone(tu_buf *dst, const tu_buf *src);
void th_buf_restore(tu_buf *dst, const tu_buf *src);
int th_buf_same(const tu_buf *a, const tu_buf *b);

/* -------------------------------------------------------------- snapshots */

#define TH_SNAP_MAX 16
typedef struct th_snap {
  int n;
  const tu_buf *live[TH_SNAP_MAX];
  tu_buf copy[TH_SNAP_MAX];
  const char *name[TH_SNAP_MAX];
} th_snap;

void th_snap_add(th_snap *s, const tu_buf *b, const char *name);
/* One check per buffer; returns 1 if all are unchanged. */
int th_snap_unchanged(const th_snap *s, const char *label);
void th_snap_free(th_snap *s);

/* ------------------------------------------------------ status, messages */

void th_reset_error(void);
/* Whether `m` contains any ('all': every one) of the '|'-separated words. */
int th_words_in(const char *m, const char *words, int all);
/* The last error starts with `op` followed by ':' and names one of `alts` (NULL: any)
 * and all of `must` (NULL: none). */
int th_msg_ok(const char *op, const char *alts, const char *must);

/* ------------------------------------------------------------ defects */

/* Codes below TH_D_OP are the shared defects; an op numbers its own from TH_D_OP. */
typedef enum th_defect {
  TH_D_NONE,
  TH_D_NULL,       /* the tensor not passed: th_defect_apply returns 0 */
  TH_D_DATA_NULL,  /* data NULL */
  TH_D_DTYPE,      /* dtype a */
  TH_D_RANK,       /* rank a: trailing extent-1 dimensions (stride 1) added, or the
                      trailing dimensions merged into dimension a - 1 (its extent the
                      product, its stride the innermost's); rank 0: shape and strides
                      all 0 */
  TH_D_RANK_LEAD,  /* rank a: leading extent-1 dimensions added (stride: the old
                      dimension 0's extent times its stride), or the leading ones merged
                      into dimension 0; rank 0 as for TH_D_RANK */
  TH_D_EXTENT_ADD, /* shape[a] += b */
  TH_D_EXTENT,     /* shape[a] = b */
  TH_D_STRIDE,     /* strides[a] = b */
  TH_D_OP
} th_defect;

/* Applies defect d (< TH_D_OP) to t; returns 0 when the tensor is not to be passed
 * (TH_D_NULL), else 1. */
int th_defect_apply(llmk_tensor *t, int d, int64_t a, int64_t b);

/* ------------------------------------------------------------ error tables */

typedef struct th_table {
  char *rows;
  int n, cap;
  size_t row_size;
  char **strs;
  int nstr, capstr;
} th_table;
/* Appends a copy of the row (every row of one table has one size); returns the copy,
 * valid until the next add. */
void *th_table_add(th_table *t, const void *row, size_t row_size);
#define TH_TABLE_ADD(t, type, ...) \
  ((type *)th_table_add((t), &(type){__VA_ARGS__}, sizeof(type)))
/* A copy of s that lives as long as the table. */
const char *th_table_str(th_table *t, const char *s);
void th_table_free(th_table *t);
/* th_run_rows() over the table's rows, then th_table_free(). */
void th_table_run(th_table *t, const char *what, void (*fn)(const void *row));

typedef void (*th_row_fn)(const void *row, int idx, void *user);
/* fn(rows + i * row_size, i, user) for i in [0, n); prints "<what>: n rows". */
void th_run_table(const char *what, const void *rows, int n, size_t row_size,
                  th_row_fn fn, void *user);
/* The same for a row function that needs only the row. */
typedef void (*th_case_fn)(const void *row);
void th_run_rows(const char *what, const void *rows, int n, size_t row_size,
                 th_case_fn fn);
/* A refused phase 1: st == expect, then (when asked for) *plan NULL and *ws 0, and a
 * message from `op` naming one of `alts`. plan / ws NULL: not checked. */
void th_check_refused(const char *label, llmk_status st, llmk_status expect,
                      llmk_plan *const *plan, const size_t *ws, const char *op,
                      const char *alts);

/* ------------------------------------------------------------------ plans */

typedef llmk_status (*th_exec_fn)(void *workspace, size_t workspace_size, llmk_plan *plan,
                                  llmk_context *ctx);
/* Phase 1 returned st and plan: one check that it accepted; then phase 2 (exec with ws
 * bytes, ctx NULL) must return expect, and a rejection's message come from `op` and
 * name one of `alts`. Returns phase 2's status, or phase 1's when it refused. */
llmk_status th_check_run(const char *label, llmk_status st, llmk_plan *plan, size_t ws,
                         th_exec_fn exec, llmk_status expect, const char *op,
                         const char *alts);
llmk_status th_run_plan(th_exec_fn exec, llmk_plan *plan, size_t ws, llmk_context *ctx);
void th_check_null_plan(th_exec_fn exec, const char *op);
/* exec with ws - 1 bytes: WORKSPACE_TOO_SMALL. The plan is not consumed by a refused
 * run, so the caller still owns it. Returns 0 (and checks nothing) when ws is 0. */
int th_check_ws_too_small(th_exec_fn exec, llmk_plan *plan, size_t ws, const char *label);

/* ------------------------------------------------------------------ sweep */

#define TH_SWEEP_MAX 8
typedef struct th_sweep {
  int n;
  int threads[TH_SWEEP_MAX]; /* 0: ctx NULL */
  llmk_context *ctx[TH_SWEEP_MAX];
  char name[TH_SWEEP_MAX][24];
} th_sweep;

/* Creates the contexts, checking each has its thread count. */
void th_sweep_init(th_sweep *w, const int *threads, int n);
void th_sweep_free(th_sweep *w);

/* The bytes a run produced, compared across the sweep (pointers stay the caller's). */
#define TH_OUT_MAX 16
typedef struct th_out {
  int n;
  const void *p[TH_OUT_MAX];
  size_t size[TH_OUT_MAX];
} th_out;
void th_out_add(th_out *o, const void *p, size_t size);
void th_out_add_buf(th_out *o, const tu_buf *b); /* guards included */

/* One run: `label` names the variant ("<case> [isa, ctx]"); returns 1 if the run
 * succeeded and `out` lists its bytes, else 0 (not compared). */
typedef int (*th_sweep_fn)(void *user, llmk_context *ctx, const char *label, th_out *out);
/* For isa in [scalar or native, native] and every context (each `reps[i]` times, NULL:
 * once): fn, then one check that the bytes equal the first good run's. Returns the
 * number of good runs. */
int th_sweep_run(const th_sweep *w, int all_isa, const int *reps, const char *label,
                 th_sweep_fn fn, void *user);

#endif
