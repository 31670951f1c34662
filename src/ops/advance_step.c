/* SPDX-License-Identifier: Apache-2.0 */
/* advance_step: phase 1 (validate, plan) and phase 2 (check values, run). */
#include "kernels/advance_step/advance_step.h"

#include <inttypes.h>

#include "core/internal.h"
#include "core/op.h"
#include "core/overlap.h"
#include "dispatch/dispatch.h"
#include "llmk/advance_step.h"

static const char op[] = "advance_step";

typedef struct advance_step_plan {
  llmk__advance_step_args args;
  llmk__advance_step_flat flat; /* args.flat points here in flat mode */
  const llmk__advance_step_kernels *kernels;
} advance_step_plan;

/* Flat lookup: every tensor read as one row-major array; dim 0 is the row count and
 * the array has at least that many elements. */
static llmk_status flat_shapes(const llmk_tensor *const t[8], const char *const names[8],
                               int64_t num_seqs, int64_t num_queries,
                               llmk__advance_step_flat *f) {
  for (int i = 0; i < 6; i++) {
    int64_t rows = i == 1 ? num_queries : num_seqs, numel = 1;
    if (t[i]->rank < 1 || t[i]->rank > LLMK_MAX_RANK)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "%s.rank=%d must be in [1, %d] (flat lookup)", names[i],
                         (int)t[i]->rank, LLMK_MAX_RANK);
    LLMK__TRY(llmk__check_dim(op, names[i], t[i], 0, rows,
                              i == 1 ? "num_queries" : "num_seqs"));
    for (int d = 0; d < t[i]->rank; d++)
      if (t[i]->shape[d] < 0 || __builtin_mul_overflow(numel, t[i]->shape[d], &numel))
        return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                           "%s: extent %d is negative or the element count overflows",
                           names[i], d);
    if (numel < rows)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "%s has %" PRId64 " elements, fewer than its %" PRId64 " rows",
                         names[i], numel, rows);
    f->t[i] = *t[i];
    if (i == 5) {
      f->n = numel;
      f->row_len = num_seqs > 0 ? numel / num_seqs : 0;
    }
  }
  return LLMK_SUCCESS;
}

static llmk_status validate(const llmk_tensor *const t[8], const char *const names[8],
                            int64_t num_seqs, int64_t num_queries, int64_t block_size,
                            llmk__advance_step_flat *flat, llmk__advance_step_args *a) {
  enum { TOK, SAMPLED, POS, LENS, SLOTS, TABLES, SPEC, ACC };
  /* 1. required tensors */
  for (int i = 0; i < 6; i++)
    if (!t[i]) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "%s is NULL", names[i]);
  bool speculative = t[SPEC] || t[ACC];
  int n = speculative ? 8 : 6;
  /* 2. dtypes */
  for (int i = 0; i < n; i++)
    if (t[i]) LLMK__TRY(llmk__check_dtype(op, names[i], t[i], LLMK__INTS));
  /* 3. attributes */
  if (speculative && !(t[SPEC] && t[ACC]))
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "spec_token and accepted_num must be given together (%s is NULL)",
                       t[SPEC] ? "accepted_num" : "spec_token");
  if (num_seqs < 0)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "num_seqs=%" PRId64 " must be >= 0", num_seqs);
  if (num_queries < 0 || num_queries > num_seqs)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "num_queries=%" PRId64 " must be in [0, num_seqs=%" PRId64 "]",
                       num_queries, num_seqs);
  if (block_size <= 0)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "block_size=%" PRId64 " must be > 0", block_size);
  if (speculative && num_queries != num_seqs)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "speculative mode needs num_queries=%" PRId64
                       " equal to num_seqs=%" PRId64 " (no padding rows)",
                       num_queries, num_seqs);
  /* 4. ranks and shapes */
  int64_t S = 0, len = num_seqs;
  if (speculative) {
    LLMK__TRY(llmk__check_rank(op, names[SPEC], t[SPEC], 2));
    LLMK__TRY(llmk__check_dim(op, names[SPEC], t[SPEC], 0, num_seqs, "num_seqs"));
    S = t[SPEC]->shape[1];
    int64_t S1; /* S + 1, itself checked: S may be INT64_MAX */
    if (__builtin_add_overflow(S, 1, &S1) || __builtin_mul_overflow(num_seqs, S1, &len))
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "num_seqs * (S + 1) overflows (num_seqs=%" PRId64
                         ", spec_token.shape[1]=S=%" PRId64 ")",
                         num_seqs, S);
    LLMK__TRY(llmk__check_rank(op, names[ACC], t[ACC], 1));
    LLMK__TRY(llmk__check_dim(op, names[ACC], t[ACC], 0, num_seqs, "num_seqs"));
    LLMK__TRY(llmk__check_rank(op, names[SAMPLED], t[SAMPLED], 2));
    LLMK__TRY(llmk__check_dim(op, names[SAMPLED], t[SAMPLED], 0, num_seqs, "num_seqs"));
    LLMK__TRY(llmk__check_dim(op, names[SAMPLED], t[SAMPLED], 1, S + 1,
                              "spec_token.shape[1]+1"));
  } else if (flat) {
    LLMK__TRY(flat_shapes(t, names, num_seqs, num_queries, flat));
  } else {
    const llmk_tensor *s = t[SAMPLED];
    if (s->rank != 1 && s->rank != 2)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "sampled_token_ids.rank=%d must be 2 ([num_queries, 1]) or 1",
                         (int)s->rank);
    LLMK__TRY(llmk__check_dim(op, names[SAMPLED], s, 0, num_queries, "num_queries"));
    if (s->rank == 2) LLMK__TRY(llmk__check_dim(op, names[SAMPLED], s, 1, 1, "1"));
  }
  if (!flat) {
    const char *len_name = speculative ? "num_seqs*(S+1)" : "num_seqs";
    const int outs[4] = {TOK, POS, LENS, SLOTS};
    for (int i = 0; i < 4; i++) {
      LLMK__TRY(llmk__check_rank(op, names[outs[i]], t[outs[i]], 1));
      LLMK__TRY(llmk__check_dim(op, names[outs[i]], t[outs[i]], 0, len, len_name));
    }
    LLMK__TRY(llmk__check_rank(op, names[TABLES], t[TABLES], 2));
    LLMK__TRY(llmk__check_dim(op, names[TABLES], t[TABLES], 0, num_seqs, "num_seqs"));
  }
  /* 5. strides, extents and data pointers */
  for (int i = 0; i < n; i++) LLMK__TRY(llmk__check_tensor(op, names[i], t[i]));

  a->input_tokens = llmk__view_of(t[TOK]);
  a->sampled = llmk__view_of(t[SAMPLED]);
  a->input_positions = llmk__view_of(t[POS]);
  a->seq_lens = llmk__view_of(t[LENS]);
  a->slot_mapping = llmk__view_of(t[SLOTS]);
  a->block_tables = llmk__view_of(t[TABLES]);
  if (speculative) {
    a->spec_token = llmk__view_of(t[SPEC]);
    a->accepted_num = llmk__view_of(t[ACC]);
  }
  a->num_seqs = num_seqs;
  a->num_queries = num_queries;
  a->block_size = block_size;
  a->div = llmk__divider_make(block_size);
  a->max_blocks = flat ? 0 : t[TABLES]->shape[1];
  a->flat = NULL; /* set to the plan's copy of *flat */
  a->spec_len = S;
  a->speculative = speculative;
  return LLMK_SUCCESS;
}

static llmk_status plan_advance_step(const llmk_tensor *const t[8], int64_t num_seqs,
                                     int64_t num_queries, int64_t block_size, bool flat,
                                     size_t *workspace_size, llmk_plan **plan) {
  static const char *const names[8] = {
      "input_tokens", "sampled_token_ids", "input_positions", "seq_lens",
      "slot_mapping", "block_tables",      "spec_token",      "accepted_num"};
  advance_step_plan p = {0};
  LLMK__TRY(validate(t, names, num_seqs, num_queries, block_size, flat ? &p.flat : NULL,
                     &p.args));
  /* in place: each output is read and written only as itself (input_positions and
   * seq_lens); no output may share memory with itself or another tensor */
  llmk__tref refs[8];
  for (int i = 0; i < 8; i++)
    refs[i] = (llmk__tref){t[i], names[i], i == 0 || i == 2 || i == 3 || i == 4};
  LLMK__TRY(llmk__check_overlaps(op, refs, 8, NULL, 0));
  p.kernels = llmk__advance_step_kernels_for(llmk_get_isa());
  llmk_plan *out;
  LLMK__TRY(llmk__plan_create(op, LLMK__OP_ADVANCE_STEP, sizeof p, 0, &out));
  advance_step_plan *pp = llmk__plan_payload(out);
  *pp = p;
  if (flat) pp->args.flat = &pp->flat;
  *workspace_size = 0;
  *plan = out;
  return LLMK_SUCCESS;
}

llmk_status llmk_advance_step_get_workspace_size(
    const llmk_tensor *input_tokens, const llmk_tensor *sampled_token_ids,
    const llmk_tensor *input_positions, const llmk_tensor *seq_lens,
    const llmk_tensor *slot_mapping, const llmk_tensor *block_tables,
    const llmk_tensor *spec_token, const llmk_tensor *accepted_num, int64_t num_seqs,
    int64_t num_queries, int64_t block_size, size_t *workspace_size, llmk_plan **plan) {
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  const llmk_tensor *const t[8] = {input_tokens, sampled_token_ids, input_positions,
                                   seq_lens,     slot_mapping,      block_tables,
                                   spec_token,   accepted_num};
  return plan_advance_step(t, num_seqs, num_queries, block_size, false, workspace_size,
                           plan);
}

llmk_status llmk_advance_step_flat_get_workspace_size(
    const llmk_tensor *input_tokens, const llmk_tensor *sampled_token_ids,
    const llmk_tensor *input_positions, const llmk_tensor *seq_lens,
    const llmk_tensor *slot_mapping, const llmk_tensor *block_tables, int64_t num_seqs,
    int64_t num_queries, int64_t block_size, size_t *workspace_size, llmk_plan **plan) {
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  const llmk_tensor *const t[8] = {input_tokens,
                                   sampled_token_ids,
                                   input_positions,
                                   seq_lens,
                                   slot_mapping,
                                   block_tables,
                                   NULL,
                                   NULL};
  return plan_advance_step(t, num_seqs, num_queries, block_size, true, workspace_size,
                           plan);
}

static llmk_status run(const void *payload, void *workspace, llmk_context *ctx) {
  (void)workspace;
  (void)ctx; /* O(num_seqs) with one random read per row: never worth a thread */
  const advance_step_plan *p = payload;
  return p->kernels->execute(&p->args);
}

llmk_status llmk_advance_step(void *workspace, size_t workspace_size, llmk_plan *plan,
                              llmk_context *ctx) {
  return llmk__plan_run(op, LLMK__OP_ADVANCE_STEP, plan, workspace, workspace_size, ctx,
                        run);
}
