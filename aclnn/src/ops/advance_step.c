/*
 * aclnnAdvanceStep and aclnnAdvanceStepV2.
 *
 * Speculative mode (V2 with specToken and acceptedNum) is llmk_advance_step itself:
 * CANN's shapes are the native ones and its lookup is the native per-row one.
 *
 * Plain mode (V1, and V2 without the optional tensors) is CANN's, which the native op
 * cannot express: CANN looks the block up in the *flattened* table and adds the row
 * offset to the block id, slot = (flat[pos / bs] + rowStride * q) * bs + pos % bs, where
 * the native op reads block_tables[q][pos / bs]. No view of the table gives "a value plus
 * rowStride * q", so plain mode is a small adapter here: it checks every row (nothing is
 * written if one is invalid), then writes every row.
 *
 * The adapter inside the executor framework: acl__op's run gets only the native plan, so
 * plan() makes a real native plan as a carrier (an empty llmk_advance_step plan, run
 * first at each phase 2, which checks the plan and workspace) and records, keyed by that
 * plan, the descriptors and attributes it was made from (a copy, as native plans copy
 * theirs). A re-pointed executor makes a new plan, hence a new record; the executor's
 * previous record is dropped then (records carry the executor's attrs address as owner).
 * Phase 2 messages of the adapter go through a thread-local buffer, since the executor
 * records llmk_last_error().
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_internal.h"
#include "aclnnop/aclnn_advance_step.h"
#include "aclnnop/aclnn_advance_step_v2.h"

static const char OP1[] = "aclnnAdvanceStep";
static const char OP2[] = "aclnnAdvanceStepV2";
#define MAX_NUMSEQS 200000000 /* CANN's tiling limit: numSeqs < 2e8 */

enum { TOK, SAMP, POS, LENS, SLOT, TAB, SPEC, ACC, NUM_T };
static const char *const NAMES[NUM_T] = {
    "inputTokens", "sampledTokenIds", "inputPositions", "seqLens",
    "slotMapping", "blockTables",     "specToken",      "acceptedNum"};

typedef struct adv_attrs {
  int64_t num_seqs, num_queries, block_size;
  int version; /* 1 or 2: the number of tensor slots is 6 or 8 */
} adv_attrs;

/* ------------------------------------------------------------- messages */

static _Thread_local char adv_msg[512];
static _Thread_local bool adv_msg_set;

static llmk_status adv_error(llmk_status st, const char *fmt, ...) ACL__PRINTF(2, 3);
static llmk_status adv_error(llmk_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(adv_msg, sizeof adv_msg, fmt, ap);
  va_end(ap);
  adv_msg_set = true;
  return st;
}

/* The framework records the native message for a failed plan()/run(); the adapter's own
 * message replaces it when the adapter set one. */
static aclnnStatus own_message(aclnnStatus st, const char *op) {
  if (st != ACLNN_SUCCESS && adv_msg_set) acl__fail(st, op, "%s", adv_msg);
  adv_msg_set = false;
  return st;
}

/* -------------------------------------------------------------- records */

typedef struct record {
  const llmk_plan *plan;
  const void *owner; /* the executor's attrs */
  llmk_tensor t[6];
  adv_attrs a;
} record;

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static record *recs;
static size_t rec_n, rec_cap;

/* Drops the records of `plan` (a reused address) and of `owner` (its previous plan).
 * Caller holds rec_lock. */
static void drop_locked(const llmk_plan *plan, const void *owner) {
  for (size_t i = 0; i < rec_n;) {
    if (recs[i].plan == plan || recs[i].owner == owner)
      recs[i] = recs[--rec_n];
    else
      i++;
  }
}

static bool record_put(const record *r) {
  bool ok = true;
  pthread_mutex_lock(&rec_lock);
  drop_locked(r->plan, r->owner);
  if (rec_n == rec_cap) {
    size_t cap = rec_cap ? rec_cap * 2 : 16;
    record *n = realloc(recs, cap * sizeof *n);
    if (n)
      recs = n, rec_cap = cap;
    else
      ok = false;
  }
  if (ok) recs[rec_n++] = *r;
  pthread_mutex_unlock(&rec_lock);
  return ok;
}

static void record_drop(const llmk_plan *plan, const void *owner) {
  pthread_mutex_lock(&rec_lock);
  drop_locked(plan, owner);
  pthread_mutex_unlock(&rec_lock);
}

static bool record_get(const llmk_plan *plan, record *out) {
  bool found = false;
  pthread_mutex_lock(&rec_lock);
  for (size_t i = 0; i < rec_n && !found; i++)
    if (recs[i].plan == plan) *out = recs[i], found = true;
  pthread_mutex_unlock(&rec_lock);
  return found;
}

/* ------------------------------------------------------------- plain mode */

/* An empty native advance_step plan: the carrier of a plain-mode executor. */
static llmk_status carrier_plan(size_t *workspace_size, llmk_plan **plan) {
  int64_t z[1] = {0}, z1[2] = {0, 1}, z0[2] = {0, 0};
  llmk_tensor v, m, tab;
  llmk_tensor_init(&v, LLMK_I64, 1, z, NULL, NULL);
  llmk_tensor_init(&m, LLMK_I64, 2, z1, NULL, NULL);
  llmk_tensor_init(&tab, LLMK_I64, 2, z0, NULL, NULL);
  return llmk_advance_step_get_workspace_size(&v, &m, &v, &v, &v, &tab, NULL, NULL, 0, 0,
                                              1, workspace_size, plan);
}

/* Element k of the view in row-major order (k < numel, no zero extent). */
static int64_t *at(const llmk_tensor *t, int64_t k) {
  int64_t off = 0;
  for (int d = t->rank - 1; d > 0; d--) {
    off += (k % t->shape[d]) * t->strides[d];
    k /= t->shape[d];
  }
  return (int64_t *)t->data + off + k * t->strides[0];
}

static int64_t numel(const llmk_tensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++)
    n *= t->shape[d]; /* checked not to overflow at phase 1 */
  return n;
}

typedef struct row {
  int64_t token, pos, slot;
} row;

/* CANN's plain mode: every query row checked, then every row written. */
static llmk_status plain_compute(const record *r) {
  const llmk_tensor *t = r->t;
  int64_t n = r->a.num_seqs, nq = r->a.num_queries, bs = r->a.block_size;
  int64_t flat_n = numel(&t[TAB]), stride = flat_n / t[TAB].shape[0];
  row stack[128], *rows = stack;
  if ((size_t)nq > sizeof stack / sizeof stack[0]) {
    rows = malloc((size_t)nq * sizeof *rows);
    if (!rows)
      return adv_error(LLMK_ERROR_OUT_OF_MEMORY, "out of memory for %lld rows",
                       (long long)nq);
  }
  llmk_status st = LLMK_SUCCESS;
  for (int64_t q = 0; q < nq && st == LLMK_SUCCESS; q++) {
    int64_t pos = *at(&t[LENS], q), idx = pos / bs, block, slot;
    if (pos < 0 || pos == INT64_MAX) {
      st = adv_error(LLMK_ERROR_INVALID_VALUE, "seqLens[%lld]=%lld is not a valid length",
                     (long long)q, (long long)pos);
    } else if (idx >= flat_n) {
      st = adv_error(LLMK_ERROR_INVALID_VALUE,
                     "seqLens[%lld]=%lld gives block index %lld (blockSize=%lld), but "
                     "blockTables has %lld elements",
                     (long long)q, (long long)pos, (long long)idx, (long long)bs,
                     (long long)flat_n);
    } else if ((block = *at(&t[TAB], idx)) < 0) {
      st = adv_error(
          LLMK_ERROR_INVALID_VALUE,
          "blockTables element %lld (looked up for row %lld) is %lld, a negative "
          "block id",
          (long long)idx, (long long)q, (long long)block);
    } else if (__builtin_mul_overflow(stride, q, &slot) ||
               __builtin_add_overflow(slot, block, &slot) ||
               __builtin_mul_overflow(slot, bs, &slot) ||
               __builtin_add_overflow(slot, pos % bs, &slot)) {
      st = adv_error(LLMK_ERROR_INVALID_VALUE,
                     "row %lld: slot (%lld + %lld * %lld) * %lld + %lld overflows int64",
                     (long long)q, (long long)block, (long long)stride, (long long)q,
                     (long long)bs, (long long)(pos % bs));
    } else {
      rows[q].token = *at(&t[SAMP], q);
      rows[q].pos = pos;
      rows[q].slot = slot;
    }
  }
  if (st == LLMK_SUCCESS) {
    for (int64_t q = 0; q < nq; q++) {
      *at(&t[TOK], q) = rows[q].token;
      *at(&t[POS], q) = rows[q].pos;
      *at(&t[LENS], q) = rows[q].pos + 1;
      *at(&t[SLOT], q) = rows[q].slot;
    }
    for (int64_t q = nq; q < n; q++) {
      *at(&t[TOK], q) = 0;
      *at(&t[POS], q) = 0;
      *at(&t[SLOT], q) = -1;
    }
  }
  if (rows != stack) free(rows);
  return st;
}

/* ----------------------------------------------------------- the op table */

static llmk_status adv_plan(const llmk_tensor *const *t, const void *attrs,
                            size_t *workspace_size, llmk_plan **plan) {
  const adv_attrs *a = attrs;
  bool spec = a->version == 2 && t[SPEC] && t[ACC];
  llmk_status st =
      spec ? llmk_advance_step_get_workspace_size(
                 t[TOK], t[SAMP], t[POS], t[LENS], t[SLOT], t[TAB], t[SPEC], t[ACC],
                 a->num_seqs, a->num_queries, a->block_size, workspace_size, plan)
           : carrier_plan(workspace_size, plan);
  if (st != LLMK_SUCCESS) return st;
  if (spec) {
    record_drop(*plan, attrs); /* no stale plain record may match this plan */
    return LLMK_SUCCESS;
  }
  record r;
  memset(&r, 0, sizeof r);
  r.plan = *plan;
  r.owner = attrs;
  r.a = *a;
  for (int i = 0; i < 6; i++) r.t[i] = *t[i];
  if (!record_put(&r)) {
    llmk_plan_destroy(*plan);
    *plan = NULL;
    return adv_error(LLMK_ERROR_OUT_OF_MEMORY, "out of memory for the executor's record");
  }
  return LLMK_SUCCESS;
}

static llmk_status adv_run(void *workspace, size_t workspace_size, llmk_plan *plan,
                           llmk_context *ctx) {
  (void)ctx; /* O(numSeqs): never worth a thread */
  /* Speculative mode: the native op. Plain mode: the empty carrier (checks the plan). */
  llmk_status st = llmk_advance_step(workspace, workspace_size, plan, NULL);
  if (st != LLMK_SUCCESS) return st;
  record r;
  memset(&r, 0, sizeof r);
  if (!record_get(plan, &r)) return LLMK_SUCCESS; /* speculative */
  return plain_compute(&r);
}

/* Every tensor is an input of CANN's op (in/out "Ref" tensors); there are no outputs. */
static const acl__op adv_op1 = {OP1, 6, 0, adv_plan, adv_run, acl__map_status};
static const acl__op adv_op2 = {OP2, 8, 0, adv_plan, adv_run, acl__map_status};

/* ------------------------------------------------------------- phase 1 */

#define TILING(...) acl__fail(ACLNN_ERR_INNER_TILING_ERROR, op, __VA_ARGS__)

static int64_t dim(const aclTensor *t, uint64_t d) {
  return d < t->view_rank ? t->view_dims[d] : -1;
}

/* dim 0 == rows and at least `rows` elements (no zero extent, no overflow). */
static aclnnStatus check_rows(const char *op, int i, const aclTensor *t, int64_t rows,
                              const char *what) {
  if (t->view_rank < 1 || t->view_dims[0] != rows)
    return TILING("%s: dim 0 is %lld, must equal %s=%lld", NAMES[i], (long long)dim(t, 0),
                  what, (long long)rows);
  int64_t n = 1;
  for (uint64_t d = 0; d < t->view_rank; d++) {
    if (t->view_dims[d] <= 0)
      return TILING("%s: dim %llu is %lld (empty tensors are not supported)", NAMES[i],
                    (unsigned long long)d, (long long)t->view_dims[d]);
    if (__builtin_mul_overflow(n, t->view_dims[d], &n))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s: the element count overflows",
                       NAMES[i]);
  }
  return ACLNN_SUCCESS;
}

static aclnnStatus check_shape(const char *op, int i, const aclTensor *t, uint64_t rank,
                               int64_t d0, int64_t d1) {
  if (t->view_rank != rank || t->view_dims[0] != d0 ||
      (rank == 2 && t->view_dims[1] != d1)) {
    if (rank == 1)
      return TILING("%s: shape must be [%lld] (rank %llu, dim 0 %lld)", NAMES[i],
                    (long long)d0, (unsigned long long)t->view_rank,
                    (long long)dim(t, 0));
    if (d1 < 0)
      return TILING("%s: shape must be [%lld, *] (rank %llu, dim 0 %lld)", NAMES[i],
                    (long long)d0, (unsigned long long)t->view_rank,
                    (long long)dim(t, 0));
    return TILING("%s: shape must be [%lld, %lld] (rank %llu, dims %lld, %lld)", NAMES[i],
                  (long long)d0, (long long)d1, (unsigned long long)t->view_rank,
                  (long long)dim(t, 0), (long long)dim(t, 1));
  }
  return ACLNN_SUCCESS;
}

static aclnnStatus phase1(const char *op, int version, const aclTensor *const *ts,
                          int64_t num_seqs, int64_t num_queries, int64_t block_size,
                          uint64_t *workspaceSize, aclOpExecutor **executor) {
  if (!workspaceSize || !executor)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, op, "workspaceSize or executor is NULL");
  *workspaceSize = 0;
  *executor = NULL;
  /* 1. NULLs */
  for (int i = 0; i < 6; i++)
    if (!ts[i]) return acl__fail(ACLNN_ERR_PARAM_NULLPTR, op, "%s is NULL", NAMES[i]);
  if (version == 2 && !ts[SPEC] != !ts[ACC])
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, op,
                     "%s is NULL but %s is not: give both (speculative mode) or neither",
                     NAMES[ts[SPEC] ? ACC : SPEC], NAMES[ts[SPEC] ? SPEC : ACC]);
  bool spec = version == 2 && ts[SPEC];
  int nt = spec ? 8 : 6;
  /* 2. dtypes (INT64 only) and formats */
  for (int i = 0; i < nt; i++) {
    if (ts[i]->dtype != ACL_INT64)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s dtype %d is not INT64", NAMES[i],
                       (int)ts[i]->dtype);
    if (!acl__format_is_nd(ts[i]->format))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s: format %d is not ND", NAMES[i],
                       (int)ts[i]->format);
  }
  /* 3. attributes and shapes: CANN's tiling checks (561002) */
  if (num_seqs < 1 || num_queries < 1 || block_size < 1)
    return TILING("numSeqs=%lld, numQueries=%lld and blockSize=%lld must all be positive",
                  (long long)num_seqs, (long long)num_queries, (long long)block_size);
  aclnnStatus st = ACLNN_SUCCESS;
  if (spec) {
    if (ts[SPEC]->view_rank != 2 || ts[SPEC]->view_dims[0] != num_seqs)
      return check_shape(op, SPEC, ts[SPEC], 2, num_seqs, -1);
    int64_t s = ts[SPEC]->view_dims[1], len;
    if (s < 0 || s == INT64_MAX || __builtin_mul_overflow(num_seqs, s + 1, &len))
      return TILING("specToken: dim 1 is %lld", (long long)s);
    st = check_shape(op, ACC, ts[ACC], 1, num_seqs, 0);
    if (!st) st = check_shape(op, TOK, ts[TOK], 1, len, 0);
    if (!st) st = check_shape(op, SAMP, ts[SAMP], 2, num_seqs, s + 1);
    if (!st) st = check_shape(op, POS, ts[POS], 1, len, 0);
    if (!st) st = check_shape(op, LENS, ts[LENS], 1, len, 0);
    if (!st) st = check_shape(op, SLOT, ts[SLOT], 1, len, 0);
    if (!st && (ts[TAB]->view_rank != 2 || ts[TAB]->view_dims[0] != num_seqs))
      st = check_shape(op, TAB, ts[TAB], 2, num_seqs, -1);
    if (!st && num_queries != num_seqs)
      st = TILING("numQueries=%lld must equal numSeqs=%lld in speculative mode",
                  (long long)num_queries, (long long)num_seqs);
  } else {
    if (num_seqs <= num_queries)
      return TILING("numSeqs=%lld must be greater than numQueries=%lld",
                    (long long)num_seqs, (long long)num_queries);
    if (num_seqs >= MAX_NUMSEQS)
      return TILING("numSeqs=%lld must be smaller than %d", (long long)num_seqs,
                    MAX_NUMSEQS);
    static const int rows_of[5] = {TOK, POS, LENS, SLOT, TAB};
    for (int k = 0; k < 5 && !st; k++)
      st = check_rows(op, rows_of[k], ts[rows_of[k]], num_seqs, "numSeqs");
    if (!st) st = check_rows(op, SAMP, ts[SAMP], num_queries, "numQueries");
    if (!st && dim(ts[SAMP], 1) != 1)
      st = TILING("sampledTokenIds: dim 1 is %lld, must be 1",
                  (long long)dim(ts[SAMP], 1));
  }
  if (st) return st;
  /* 4. strides, offsets, data and allocation bounds; then the plan */
  adv_attrs a = {num_seqs, num_queries, block_size, version};
  adv_msg_set = false;
  return own_message(acl__executor_create(version == 1 ? &adv_op1 : &adv_op2, ts, &a,
                                          sizeof a, workspaceSize, executor),
                     op);
}

aclnnStatus aclnnAdvanceStepGetWorkspaceSize(
    const aclTensor *inputTokens, const aclTensor *sampledTokenIds,
    const aclTensor *inputPositions, const aclTensor *seqLens,
    const aclTensor *slotMapping, const aclTensor *blockTables, int64_t numSeqs,
    int64_t numQueries, int64_t blockSize, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  const aclTensor *ts[6] = {inputTokens, sampledTokenIds, inputPositions,
                            seqLens,     slotMapping,     blockTables};
  return phase1(OP1, 1, ts, numSeqs, numQueries, blockSize, workspaceSize, executor);
}

aclnnStatus aclnnAdvanceStep(void *workspace, uint64_t workspaceSize,
                             aclOpExecutor *executor, aclrtStream stream) {
  adv_msg_set = false;
  return own_message(
      acl__executor_run(&adv_op1, workspace, workspaceSize, executor, stream), OP1);
}

aclnnStatus aclnnAdvanceStepV2GetWorkspaceSize(
    const aclTensor *inputTokens, const aclTensor *sampledTokenIds,
    const aclTensor *inputPositions, const aclTensor *seqLens,
    const aclTensor *slotMapping, const aclTensor *blockTables,
    const aclTensor *specTokenOptional, const aclTensor *acceptedNumOptional,
    int64_t numSeqs, int64_t numQueries, int64_t blockSize, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  const aclTensor *ts[8] = {inputTokens,       sampledTokenIds,    inputPositions,
                            seqLens,           slotMapping,        blockTables,
                            specTokenOptional, acceptedNumOptional};
  return phase1(OP2, 2, ts, numSeqs, numQueries, blockSize, workspaceSize, executor);
}

aclnnStatus aclnnAdvanceStepV2(void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *executor, aclrtStream stream) {
  adv_msg_set = false;
  return own_message(
      acl__executor_run(&adv_op2, workspace, workspaceSize, executor, stream), OP2);
}
