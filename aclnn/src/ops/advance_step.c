/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnAdvanceStep and aclnnAdvanceStepV2 over llmk_advance_step.
 *
 * Speculative mode (V2 with specToken and acceptedNum both given and non-empty) is the
 * native speculative mode: CANN's shapes are the native ones and so is its per-row
 * lookup. CANN's tiling counts an optional tensor as given only when it has elements (a
 * NULL and an empty one are the same: absent), checks the shape of each one given, and
 * runs speculative mode only when both are given. Plain mode (V1, and V2 otherwise) is
 * the native flat lookup
 * (llmk_advance_step_flat_get_workspace_size): CANN looks the block up in the flattened
 * table and adds the row's share of it to the block id,
 * slot = (flat[pos / bs] + rowStride * q) * bs + pos % bs.
 */
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
  bool spec;   /* speculative mode (else plain, whatever the optional slots hold) */
} adv_attrs;

/* ----------------------------------------------------------- the op table */

static llmk_status adv_plan(const llmk_tensor *const *t, const void *attrs,
                            size_t *workspace_size, llmk_plan **plan) {
  const adv_attrs *a = attrs;
  if (a->spec)
    return llmk_advance_step_get_workspace_size(
        t[TOK], t[SAMP], t[POS], t[LENS], t[SLOT], t[TAB], t[SPEC], t[ACC], a->num_seqs,
        a->num_queries, a->block_size, workspace_size, plan);
  return llmk_advance_step_flat_get_workspace_size(
      t[TOK], t[SAMP], t[POS], t[LENS], t[SLOT], t[TAB], a->num_seqs, a->num_queries,
      a->block_size, workspace_size, plan);
}

static llmk_status adv_run(void *workspace, size_t workspace_size, llmk_plan *plan,
                           llmk_context *ctx) {
  (void)ctx; /* O(numSeqs): never worth a thread */
  return llmk_advance_step(workspace, workspace_size, plan, NULL);
}

/* Every tensor is an input of CANN's op (in/out "Ref" tensors); there are no outputs. */
static const acl__op adv_op1 = {OP1, 6, 0, adv_plan, adv_run, acl__map_status};
static const acl__op adv_op2 = {OP2, 8, 0, adv_plan, adv_run, acl__map_status};

/* ------------------------------------------------------------- phase 1 */

#define TILING(...) acl__fail(ACLNN_ERR_INNER_TILING_ERROR, op, __VA_ARGS__)

static int64_t dim(const aclTensor *t, uint64_t d) {
  return d < t->view_rank ? t->view_dims[d] : -1;
}

/* An optional tensor counts as given when it is not NULL and has elements (CANN's
 * tiling: a shape size <= 0 is an absent input). */
static bool given(const aclTensor *t) {
  if (!t) return false;
  for (uint64_t d = 0; d < t->view_rank; d++)
    if (t->view_dims[d] <= 0) return false;
  return true;
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
  for (int i = 0; i < 8; i++)
    if ((i < 6 || version == 2) && ts[i] && !acl__tensor_live(ts[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s is not a live aclTensor",
                       NAMES[i]);
  /* 2. dtypes (INT64 only) and formats, of every tensor passed (an empty optional one
   * too) */
  for (int i = 0; i < (version == 2 ? 8 : 6); i++) {
    if (!ts[i]) continue;
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
  /* The optional tensors: each one given (non-NULL, with elements) must have its
   * shape, whichever mode runs; speculative mode needs both. An empty specToken
   * ([numSeqs, 0]: no draft tokens) is absent, so plain mode's rules apply. */
  bool spec_given = version == 2 && given(ts[SPEC]);
  bool acc_given = version == 2 && given(ts[ACC]);
  if (spec_given && (ts[SPEC]->view_rank != 2 || ts[SPEC]->view_dims[0] != num_seqs))
    return check_shape(op, SPEC, ts[SPEC], 2, num_seqs, -1);
  if (acc_given) {
    aclnnStatus ast = check_shape(op, ACC, ts[ACC], 1, num_seqs, 0);
    if (ast) return ast;
  }
  bool spec = spec_given && acc_given;
  aclnnStatus st = ACLNN_SUCCESS;
  if (spec) {
    int64_t s = ts[SPEC]->view_dims[1], len; /* s >= 1: the tensor has elements */
    if (s == INT64_MAX || __builtin_mul_overflow(num_seqs, s + 1, &len))
      return TILING("specToken: dim 1 is %lld", (long long)s);
    st = check_shape(op, TOK, ts[TOK], 1, len, 0);
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
  adv_attrs a = {num_seqs, num_queries, block_size, version, spec};
  return acl__executor_create(version == 1 ? &adv_op1 : &adv_op2, ts, &a, sizeof a,
                              workspaceSize, executor);
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
  return acl__executor_run(&adv_op1, workspace, workspaceSize, executor, stream);
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
  return acl__executor_run(&adv_op2, workspace, workspaceSize, executor, stream);
}
