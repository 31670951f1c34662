/* SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>

#include "core/internal.h"
#include "dispatch/dispatch.h"
#include "kernels/advance_step/advance_step.h"

static const char op[] = "advance_step";

/* Slot of position pos in row `row`, after checking the lookup; -1 on error. */
static llmk_status lookup_slot(const llmk__advance_step_args *a, int64_t row, int64_t pos,
                               const char *pos_name, int64_t pos_index, int64_t *slot) {
  int64_t bs = a->block_size, b = llmk__div(&a->div, pos);
  if (b >= a->max_blocks)
    return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                       "%s[%" PRId64 "] gives position %" PRId64 ", block %" PRId64
                       " of block_tables row %" PRId64 ", but max_blocks=%" PRId64,
                       pos_name, pos_index, pos, b, row, a->max_blocks);
  int64_t blk = llmk__view_get(&a->block_tables, row, b);
  if (blk < 0)
    return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                       "block_tables[%" PRId64 "][%" PRId64 "]=%" PRId64 " is negative",
                       row, b, blk);
  int64_t slot_value;
  if (__builtin_mul_overflow(blk, bs, &slot_value) ||
      __builtin_add_overflow(slot_value, pos - b * bs, &slot_value))
    return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                       "block_tables[%" PRId64 "][%" PRId64 "]=%" PRId64
                       " * block_size=%" PRId64 " + %" PRId64 " overflows int64",
                       row, b, blk, bs, pos - b * bs);
  *slot = slot_value;
  return LLMK_SUCCESS;
}

static llmk_status not_fit(const char *what, int64_t index, int64_t value) {
  return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                     "%s[%" PRId64 "] would be %" PRId64 ", which does not fit i32", what,
                     index, value);
}

/* The detailed check of one plain row, which also writes the message. */
static LLMK__COLD llmk_status diagnose_row(const llmk__advance_step_args *a, int64_t q) {
  int64_t pos = llmk__view_get(&a->seq_lens, q, 0);
  if (pos < 0 || pos == INT64_MAX)
    return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                       "seq_lens[%" PRId64 "]=%" PRId64 " must be in [0, INT64_MAX)", q,
                       pos);
  int64_t slot = 0;
  llmk_status st = lookup_slot(a, q, pos, "seq_lens", q, &slot);
  if (st != LLMK_SUCCESS) return st;
  int64_t token = llmk__view_get(&a->sampled, q, 0);
  if (!llmk__view_fits(&a->input_tokens, token)) return not_fit("input_tokens", q, token);
  if (!llmk__view_fits(&a->input_positions, pos))
    return not_fit("input_positions", q, pos);
  if (!llmk__view_fits(&a->seq_lens, pos + 1)) return not_fit("seq_lens", q, pos + 1);
  if (!llmk__view_fits(&a->slot_mapping, slot)) return not_fit("slot_mapping", q, slot);
  return LLMK_SUCCESS;
}

/* The same rules as diagnose_row() as one predicate, for the common all-valid case. */
static inline bool row_ok(const llmk__advance_step_args *a, int64_t q) {
  int64_t pos = llmk__view_get(&a->seq_lens, q, 0), bs = a->block_size, slot;
  if ((uint64_t)pos >= (uint64_t)INT64_MAX) return false;
  int64_t b = llmk__div(&a->div, pos);
  if (b >= a->max_blocks) return false;
  int64_t blk = llmk__view_get(&a->block_tables, q, b);
  if (blk < 0 || __builtin_mul_overflow(blk, bs, &slot) ||
      __builtin_add_overflow(slot, pos - b * bs, &slot))
    return false;
  return llmk__view_fits(&a->input_tokens, llmk__view_get(&a->sampled, q, 0)) &&
         llmk__view_fits(&a->seq_lens, pos + 1) &&
         llmk__view_fits(&a->input_positions, pos) &&
         llmk__view_fits(&a->slot_mapping, slot);
}

llmk_status llmk__advance_step_check_rows(const llmk__advance_step_args *args, int64_t q0,
                                          int64_t q1) {
  const llmk__advance_step_args local = *args, *a = &local;
  for (int64_t q = q0; q < q1; q++)
    if (LLMK__UNLIKELY(!row_ok(a, q))) {
      llmk_status st = diagnose_row(a, q);
      if (st != LLMK_SUCCESS) return st;
    }
  return LLMK_SUCCESS;
}

/* Index of the first -1 in sampled row i, T if none. */
static int64_t first_rejected(const llmk__advance_step_args *a, int64_t i) {
  int64_t T = a->spec_len + 1;
  for (int64_t j = 0; j < T; j++)
    if (llmk__view_get(&a->sampled, i, j) == -1) return j;
  return T;
}

static llmk_status check_speculative(const llmk__advance_step_args *a) {
  int64_t S = a->spec_len, T = S + 1;
  for (int64_t i = 0; i < a->num_seqs; i++) {
    int64_t acc = llmk__view_get(&a->accepted_num, i, 0);
    if (acc < 0)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "accepted_num[%" PRId64 "]=%" PRId64 " is negative", i, acc);
    int64_t f = first_rejected(a, i);
    if (f == 0)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "sampled_token_ids[%" PRId64 "][0] is -1: no accepted token", i);
    int64_t last = llmk__view_get(&a->sampled, i, f - 1);
    if (!llmk__view_fits(&a->input_tokens, last))
      return not_fit("input_tokens", i * T, last);
    for (int64_t s = 0; s < S; s++) {
      int64_t tok = llmk__view_get(&a->spec_token, i, s);
      if (!llmk__view_fits(&a->input_tokens, tok))
        return not_fit("input_tokens", i * T + 1 + s, tok);
    }
    for (int64_t j = 0; j < T; j++) {
      int64_t k = i * T + j, old = llmk__view_get(&a->input_positions, k, 0), pos;
      if (old < 0)
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "input_positions[%" PRId64 "]=%" PRId64 " is negative", k,
                           old);
      if (__builtin_add_overflow(old, acc, &pos) || pos >= INT64_MAX - 1)
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "input_positions[%" PRId64 "]=%" PRId64
                           " + accepted_num[%" PRId64 "]=%" PRId64 " + 1 overflows int64",
                           k, old, i, acc);
      pos += 1;
      int64_t slot = 0;
      llmk_status st = lookup_slot(a, i, pos, "input_positions", k, &slot);
      if (st != LLMK_SUCCESS) return st;
      if (!llmk__view_fits(&a->input_positions, pos))
        return not_fit("input_positions", k, pos);
      if (!llmk__view_fits(&a->seq_lens, pos + 1)) return not_fit("seq_lens", k, pos + 1);
      if (!llmk__view_fits(&a->slot_mapping, slot))
        return not_fit("slot_mapping", k, slot);
    }
  }
  return LLMK_SUCCESS;
}

void llmk__advance_step_run_rows(const llmk__advance_step_args *args, int64_t q0,
                                 int64_t q1) {
  /* a local copy: the output stores could alias *args, which would make the compiler
   * reload every descriptor field after each store */
  const llmk__advance_step_args local = *args, *a = &local;
  int64_t bs = a->block_size;
  for (int64_t q = q0; q < q1; q++) {
    int64_t pos = llmk__view_get(&a->seq_lens, q, 0);
    int64_t b = llmk__div(&a->div, pos);
    int64_t blk = llmk__view_get(&a->block_tables, q, b);
    llmk__view_set(&a->input_tokens, q, llmk__view_get(&a->sampled, q, 0));
    llmk__view_set(&a->input_positions, q, pos);
    llmk__view_set(&a->seq_lens, q, pos + 1);
    llmk__view_set(&a->slot_mapping, q, (blk - b) * bs + pos);
  }
}

void llmk__advance_step_pad(const llmk__advance_step_args *a) {
  for (int64_t q = a->num_queries; q < a->num_seqs; q++) {
    llmk__view_set(&a->input_tokens, q, 0);
    llmk__view_set(&a->input_positions, q, 0);
    llmk__view_set(&a->slot_mapping, q, -1);
  }
}

static void run_speculative(const llmk__advance_step_args *a) {
  int64_t S = a->spec_len, T = S + 1, bs = a->block_size;
  for (int64_t i = 0; i < a->num_seqs; i++) {
    int64_t acc = llmk__view_get(&a->accepted_num, i, 0);
    int64_t last = llmk__view_get(&a->sampled, i, first_rejected(a, i) - 1);
    llmk__view_set(&a->input_tokens, i * T, last);
    for (int64_t s = 0; s < S; s++)
      llmk__view_set(&a->input_tokens, i * T + 1 + s,
                     llmk__view_get(&a->spec_token, i, s));
    for (int64_t j = 0; j < T; j++) {
      int64_t k = i * T + j;
      int64_t pos = llmk__view_get(&a->input_positions, k, 0) + acc + 1;
      int64_t b = llmk__div(&a->div, pos);
      int64_t blk = llmk__view_get(&a->block_tables, i, b);
      llmk__view_set(&a->input_positions, k, pos);
      llmk__view_set(&a->seq_lens, k, pos + 1);
      llmk__view_set(&a->slot_mapping, k, (blk - b) * bs + pos);
    }
  }
}

/* ------------------------------------------------------ CANN's flat lookup */

enum { F_TOK, F_SAMPLED, F_POS, F_LENS, F_SLOTS, F_TABLES };

static inline int64_t fget(const llmk__advance_step_args *a, int i, int64_t k) {
  return llmk__flat_get(&a->flat->t[i], k);
}

static inline void fset(const llmk__advance_step_args *a, int i, int64_t k, int64_t v) {
  llmk__flat_set(&a->flat->t[i], k, v);
}

static inline bool ffits(const llmk__advance_step_args *a, int i, int64_t v) {
  return a->flat->t[i].dtype == LLMK_I64 || (v >= INT32_MIN && v <= INT32_MAX);
}

/* Row q's slot in flat mode, or the error (message set). */
static llmk_status flat_slot(const llmk__advance_step_args *a, int64_t q, int64_t pos,
                             int64_t *slot) {
  int64_t bs = a->block_size, idx = llmk__div(&a->div, pos), s;
  if (idx >= a->flat->n)
    return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                       "seq_lens[%" PRId64 "]=%" PRId64 " gives block index %" PRId64
                       " (block_size=%" PRId64 "), but block_tables has %" PRId64
                       " elements",
                       q, pos, idx, bs, a->flat->n);
  int64_t blk = fget(a, F_TABLES, idx);
  if (blk < 0)
    return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                       "block_tables element %" PRId64 " (looked up for row %" PRId64
                       ") is %" PRId64 ", a negative block id",
                       idx, q, blk);
  if (__builtin_mul_overflow(a->flat->row_len, q, &s) ||
      __builtin_add_overflow(s, blk, &s) || __builtin_mul_overflow(s, bs, &s) ||
      __builtin_add_overflow(s, pos - idx * bs, &s))
    return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                       "row %" PRId64 ": slot (%" PRId64 " + %" PRId64 " * %" PRId64
                       ") * %" PRId64 " + %" PRId64 " overflows int64",
                       q, blk, a->flat->row_len, q, bs, pos - idx * bs);
  *slot = s;
  return LLMK_SUCCESS;
}

static llmk_status check_flat(const llmk__advance_step_args *a) {
  for (int64_t q = 0; q < a->num_queries; q++) {
    int64_t pos = fget(a, F_LENS, q), slot;
    if (pos < 0 || pos == INT64_MAX)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "seq_lens[%" PRId64 "]=%" PRId64 " must be in [0, INT64_MAX)", q,
                         pos);
    llmk_status st = flat_slot(a, q, pos, &slot);
    if (st != LLMK_SUCCESS) return st;
    int64_t token = fget(a, F_SAMPLED, q);
    if (!ffits(a, F_TOK, token)) return not_fit("input_tokens", q, token);
    if (!ffits(a, F_POS, pos)) return not_fit("input_positions", q, pos);
    if (!ffits(a, F_LENS, pos + 1)) return not_fit("seq_lens", q, pos + 1);
    if (!ffits(a, F_SLOTS, slot)) return not_fit("slot_mapping", q, slot);
  }
  return LLMK_SUCCESS;
}

static void run_flat(const llmk__advance_step_args *a) {
  for (int64_t q = 0; q < a->num_queries; q++) {
    int64_t pos = fget(a, F_LENS, q), slot = 0;
    (void)flat_slot(a, q, pos, &slot); /* checked */
    fset(a, F_TOK, q, fget(a, F_SAMPLED, q));
    fset(a, F_POS, q, pos);
    fset(a, F_LENS, q, pos + 1);
    fset(a, F_SLOTS, q, slot);
  }
  for (int64_t q = a->num_queries; q < a->num_seqs; q++) {
    fset(a, F_TOK, q, 0);
    fset(a, F_POS, q, 0);
    fset(a, F_SLOTS, q, -1);
  }
}

static llmk_status execute_scalar(const llmk__advance_step_args *a) {
  llmk_status st;
  if (a->flat) {
    st = check_flat(a);
    if (st == LLMK_SUCCESS) run_flat(a);
  } else if (a->speculative) {
    st = check_speculative(a);
    if (st == LLMK_SUCCESS) run_speculative(a);
  } else {
    st = llmk__advance_step_check_rows(a, 0, a->num_queries);
    if (st == LLMK_SUCCESS) {
      llmk__advance_step_run_rows(a, 0, a->num_queries);
      llmk__advance_step_pad(a);
    }
  }
  return st;
}

const llmk__advance_step_kernels llmk__advance_step_kernels_scalar = {
    .isa = LLMK_ISA_SCALAR,
    .execute = execute_scalar,
};
