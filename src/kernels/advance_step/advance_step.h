/* What an advance_step plan holds; shared by the op and its kernels. */
#ifndef LLMK_KERNELS_ADVANCE_STEP_H
#define LLMK_KERNELS_ADVANCE_STEP_H

#include <stdbool.h>
#include <stdint.h>

/* An i32 or i64 view of up to two dims; strides in elements. */
typedef struct llmk__iview {
  char *data;
  bool is64;
  int64_t s0, s1;
} llmk__iview;

typedef struct llmk__advance_step_args {
  llmk__iview input_tokens, input_positions, seq_lens, slot_mapping; /* [num_seqs*T] */
  llmk__iview sampled;      /* [num_queries, 1] plain, [num_seqs, T] speculative */
  llmk__iview block_tables; /* [num_seqs, max_blocks] */
  llmk__iview spec_token;   /* [num_seqs, S] */
  llmk__iview accepted_num; /* [num_seqs] */
  int64_t num_seqs, num_queries, block_size, max_blocks, spec_len /* S */;
  bool speculative;
} llmk__advance_step_args;

static inline int64_t llmk__iv_get(const llmk__iview *v, int64_t i, int64_t j) {
  int64_t off = i * v->s0 + j * v->s1;
  return v->is64 ? ((const int64_t *)(const void *)v->data)[off]
                 : ((const int32_t *)(const void *)v->data)[off];
}

static inline void llmk__iv_set(const llmk__iview *v, int64_t i, int64_t value) {
  int64_t off = i * v->s0;
  if (v->is64) ((int64_t *)(void *)v->data)[off] = value;
  else ((int32_t *)(void *)v->data)[off] = (int32_t)value;
}

static inline bool llmk__iv_fits(const llmk__iview *v, int64_t value) {
  return v->is64 || (value >= INT32_MIN && value <= INT32_MAX);
}

#endif
