/* SPDX-License-Identifier: Apache-2.0 */
#include "advance_step_ref.h"

/* a + b and a * b for a, b >= 0; -1 on int64 overflow. */
static int64_t add_nn(int64_t a, int64_t b) {
  return a > INT64_MAX - b ? -1 : a + b;
}
static int64_t mul_nn(int64_t a, int64_t b) {
  return (b != 0 && a > INT64_MAX / b) ? -1 : a * b;
}

/* block_tables[row][pos / block_size] * block_size + pos % block_size, or -1 if the
 * block index is out of range, the block id is negative, or the result overflows. */
static int64_t slot_of(const int64_t *block_tables, int64_t max_blocks, int64_t row,
                       int64_t pos, int64_t block_size) {
  int64_t idx = pos / block_size;
  if (idx >= max_blocks) return -1;
  int64_t blk = block_tables[row * max_blocks + idx];
  if (blk < 0) return -1;
  int64_t base = mul_nn(blk, block_size);
  if (base < 0) return -1;
  return add_nn(base, pos % block_size);
}

int advance_step_ref_spec(int64_t num_seqs, int64_t S, int64_t block_size,
                          int64_t max_blocks, const int64_t *sampled,
                          const int64_t *spec_token, const int64_t *accepted_num,
                          const int64_t *block_tables, int64_t *input_tokens,
                          int64_t *input_positions, int64_t *seq_lens,
                          int64_t *slot_mapping) {
  const int64_t T = S + 1;
  for (int64_t i = 0; i < num_seqs; i++) {
    if (accepted_num[i] < 0) return -1;
    if (sampled[i * T] == -1) return -1;
    for (int64_t j = 0; j < T; j++) {
      int64_t p = input_positions[i * T + j];
      if (p < 0) return -1;
      int64_t pos = add_nn(p, accepted_num[i]);
      if (pos < 0) return -1;
      pos = add_nn(pos, 1);
      if (pos < 0 || pos == INT64_MAX) return -1; /* seq_lens = pos + 1 */
      if (slot_of(block_tables, max_blocks, i, pos, block_size) < 0) return -1;
    }
  }
  for (int64_t i = 0; i < num_seqs; i++) {
    for (int64_t j = 0; j < T; j++) {
      int64_t pos = input_positions[i * T + j] + accepted_num[i] + 1;
      input_positions[i * T + j] = pos;
      seq_lens[i * T + j] = pos + 1;
      slot_mapping[i * T + j] = slot_of(block_tables, max_blocks, i, pos, block_size);
    }
    int64_t f = 0;
    while (f < T && sampled[i * T + f] != -1) f++;
    input_tokens[i * T] = sampled[i * T + f - 1];
    for (int64_t s = 0; s < S; s++) input_tokens[i * T + 1 + s] = spec_token[i * S + s];
  }
  return 0;
}

/* (flat[pos / block_size] + row * row_len) * block_size + pos % block_size, or -1 as
 * slot_of (the index checked against numel). */
static int64_t flat_slot_of(const int64_t *flat, int64_t numel, int64_t row_len,
                            int64_t row, int64_t pos, int64_t block_size) {
  int64_t idx = pos / block_size;
  if (idx >= numel) return -1;
  int64_t blk = flat[idx];
  if (blk < 0) return -1;
  int64_t off = mul_nn(row, row_len);
  if (off < 0) return -1;
  int64_t b = add_nn(blk, off);
  if (b < 0) return -1;
  int64_t base = mul_nn(b, block_size);
  if (base < 0) return -1;
  return add_nn(base, pos % block_size);
}

/* The block lookup of plain mode: row q's own row (flat 0) or the flat table (1). */
typedef struct lookup {
  int flat;
  const int64_t *tab;
  int64_t n; /* max_blocks, or numel when flat */
  int64_t row_len;
} lookup;

static int64_t lookup_slot(const lookup *l, int64_t q, int64_t pos, int64_t block_size) {
  return l->flat ? flat_slot_of(l->tab, l->n, l->row_len, q, pos, block_size)
                 : slot_of(l->tab, l->n, q, pos, block_size);
}

static int plain(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                 const lookup *l, const int64_t *sampled, int64_t *input_tokens,
                 int64_t *input_positions, int64_t *seq_lens, int64_t *slot_mapping) {
  /* Pass 1: every rule, before anything is written. */
  for (int64_t q = 0; q < num_queries; q++) {
    int64_t pos = seq_lens[q];
    if (pos < 0 || pos == INT64_MAX) return -1; /* pos + 1 overflows */
    if (lookup_slot(l, q, pos, block_size) < 0) return -1;
  }
  for (int64_t q = 0; q < num_queries; q++) {
    int64_t pos = seq_lens[q];
    input_tokens[q] = sampled[q];
    input_positions[q] = pos;
    seq_lens[q] = pos + 1;
    slot_mapping[q] = lookup_slot(l, q, pos, block_size);
  }
  for (int64_t q = num_queries; q < num_seqs; q++) {
    input_tokens[q] = 0;
    input_positions[q] = 0;
    slot_mapping[q] = -1;
  }
  return 0;
}

int advance_step_ref_plain(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                           int64_t max_blocks, const int64_t *sampled,
                           const int64_t *block_tables, int64_t *input_tokens,
                           int64_t *input_positions, int64_t *seq_lens,
                           int64_t *slot_mapping) {
  lookup l = {0, block_tables, max_blocks, 0};
  return plain(num_seqs, num_queries, block_size, &l, sampled, input_tokens,
               input_positions, seq_lens, slot_mapping);
}

int advance_step_ref_flat(int64_t num_seqs, int64_t num_queries, int64_t block_size,
                          int64_t numel, const int64_t *sampled, const int64_t *flat,
                          int64_t *input_tokens, int64_t *input_positions,
                          int64_t *seq_lens, int64_t *slot_mapping) {
  lookup l = {1, flat, numel, num_seqs > 0 ? numel / num_seqs : 0};
  return plain(num_seqs, num_queries, block_size, &l, sampled, input_tokens,
               input_positions, seq_lens, slot_mapping);
}

int advance_step_ref_fits_i32(int64_t v) {
  return v >= INT32_MIN && v <= INT32_MAX;
}

int advance_step_ref_all_fit_i32(const int64_t *v, int64_t n) {
  for (int64_t k = 0; k < n; k++)
    if (!advance_step_ref_fits_i32(v[k])) return 0;
  return 1;
}
