/* SPDX-License-Identifier: Apache-2.0 */
/* advance_step, both modes, on the spec's samples: the two-phase call, error
 * handling, and a repeatable plan reused across decode steps. */
#include <inttypes.h>
#include <llmk/llmk.h>
#include <stdio.h>

#define CHECK(call)                                                          \
  do {                                                                       \
    llmk_status st_ = (call);                                                \
    if (st_ != LLMK_SUCCESS) {                                               \
      fprintf(stderr, "%s failed: %s: %s\n", #call, llmk_status_string(st_), \
              llmk_last_error());                                            \
      return 1;                                                              \
    }                                                                        \
  } while (0)

static void print_row(const char *name, const int64_t *v, int n) {
  printf("  %-16s", name);
  for (int i = 0; i < n; i++) printf(" %" PRId64, v[i]);
  printf("\n");
}

static int plain(void) {
  /* vllm-ascend's sample: 4 sequences, block_size 128, one block each */
  int64_t tokens[4] = {2926, 279, 12095, 1588}, sampled[4] = {13, 1968, 13, 13};
  int64_t positions[4] = {5, 7, 5, 5}, slots[4], seq_lens[4] = {6, 8, 6, 6};
  int64_t tables[4] = {0, 1, 2, 3};
  int64_t n[1] = {4}, n1[2] = {4, 1};
  llmk_tensor tok, samp, pos, lens, slot, tab;
  CHECK(llmk_tensor_init(&tok, LLMK_I64, 1, n, NULL, tokens));
  CHECK(llmk_tensor_init(&samp, LLMK_I64, 2, n1, NULL, sampled));
  CHECK(llmk_tensor_init(&pos, LLMK_I64, 1, n, NULL, positions));
  CHECK(llmk_tensor_init(&lens, LLMK_I64, 1, n, NULL, seq_lens));
  CHECK(llmk_tensor_init(&slot, LLMK_I64, 1, n, NULL, slots));
  CHECK(llmk_tensor_init(&tab, LLMK_I64, 2, n1, NULL, tables));

  size_t ws;
  llmk_plan *plan;
  CHECK(llmk_advance_step_get_workspace_size(&tok, &samp, &pos, &lens, &slot, &tab, NULL,
                                             NULL, 4, 4, 128, &ws, &plan));
  CHECK(llmk_plan_set_repeatable(plan)); /* the same tensors every step */
  printf("plain mode (vllm-ascend sample), two steps:\n");
  for (int step = 0; step < 2; step++) {
    CHECK(llmk_advance_step(NULL, ws, plan, NULL));
    printf(" step %d\n", step + 1);
    print_row("input_tokens", tokens, 4);
    print_row("input_positions", positions, 4);
    print_row("seq_lens", seq_lens, 4);
    print_row("slot_mapping", slots, 4);
  }
  CHECK(llmk_plan_destroy(plan));

  /* a position past the block table is rejected before anything is written */
  seq_lens[2] = 128;
  CHECK(llmk_advance_step_get_workspace_size(&tok, &samp, &pos, &lens, &slot, &tab, NULL,
                                             NULL, 4, 4, 128, &ws, &plan));
  llmk_status st = llmk_advance_step(NULL, ws, plan, NULL); /* consumes the plan */
  printf("seq_lens[2]=128 with one block of 128: %s\n  %s\n", llmk_status_string(st),
         llmk_last_error());
  return st == LLMK_ERROR_INVALID_VALUE ? 0 : 1;
}

static int speculative(void) {
  /* CANN's V2 sample: 8 sequences, one draft token each (T = 2), block_size 8 */
  enum { N = 8, T = 2 };
  int64_t tokens[N * T], positions[N * T], seq_lens[N * T], slots[N * T];
  int64_t sampled[N * T], spec[N], accepted[N];
  static int64_t tables[N * 1000];
  for (int i = 0; i < N * T; i++)
    tokens[i] = positions[i] = seq_lens[i] = slots[i] = i % 8;
  for (int i = 0; i < N * T; i++) sampled[i] = i % 8; /* "the same data" */
  for (int i = 0; i < N; i++) spec[i] = accepted[i] = i;
  for (int i = 0; i < N * 1000; i++) tables[i] = 7;
  int64_t flat[1] = {N * T}, nt[2] = {N, T}, ns[2] = {N, 1}, n[1] = {N},
          tb[2] = {N, 1000};
  llmk_tensor tok, samp, pos, lens, slot, tab, sp, acc;
  CHECK(llmk_tensor_init(&tok, LLMK_I64, 1, flat, NULL, tokens));
  CHECK(llmk_tensor_init(&samp, LLMK_I64, 2, nt, NULL, sampled));
  CHECK(llmk_tensor_init(&pos, LLMK_I64, 1, flat, NULL, positions));
  CHECK(llmk_tensor_init(&lens, LLMK_I64, 1, flat, NULL, seq_lens));
  CHECK(llmk_tensor_init(&slot, LLMK_I64, 1, flat, NULL, slots));
  CHECK(llmk_tensor_init(&tab, LLMK_I64, 2, tb, NULL, tables));
  CHECK(llmk_tensor_init(&sp, LLMK_I64, 2, ns, NULL, spec));
  CHECK(llmk_tensor_init(&acc, LLMK_I64, 1, n, NULL, accepted));
  size_t ws;
  llmk_plan *plan;
  CHECK(llmk_advance_step_get_workspace_size(&tok, &samp, &pos, &lens, &slot, &tab, &sp,
                                             &acc, N, N, 8, &ws, &plan));
  CHECK(llmk_advance_step(NULL, ws, plan, NULL));
  printf("speculative mode (CANN V2 sample):\n");
  print_row("input_tokens", tokens, N * T);
  print_row("input_positions", positions, N * T);
  print_row("seq_lens", seq_lens, N * T);
  print_row("slot_mapping", slots, N * T);
  return 0;
}

int main(void) {
  printf("llmk %s, ISA %s\n", llmk_version_string(), llmk_isa_name(llmk_get_isa()));
  return plain() || speculative();
}
