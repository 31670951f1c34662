/* SPDX-License-Identifier: Apache-2.0 */
/* A C program built against an installed llmk (pkg-config or find_package; see
 * CMakeLists.txt here): the header and library versions agree, and one advance_step call
 * gives the slots of the vllm-ascend sample. */
#include <inttypes.h>
#include <llmk/llmk.h>
#include <stdio.h>

int main(void) {
  if (llmk_version() != LLMK_VERSION) {
    fprintf(stderr, "header version %d, library %u\n", LLMK_VERSION, llmk_version());
    return 1;
  }
  int64_t tokens[4] = {2926, 279, 12095, 1588}, sampled[4] = {13, 1968, 13, 13};
  int64_t positions[4] = {5, 7, 5, 5}, slots[4] = {0};
  int32_t seq_lens[4] = {6, 8, 6, 6}, tables[4] = {0, 1, 2, 3};
  int64_t n4[1] = {4}, s41[2] = {4, 1};
  llmk_tensor t_tok, t_samp, t_pos, t_lens, t_slots, t_tab;
  llmk_tensor_init(&t_tok, LLMK_I64, 1, n4, NULL, tokens);
  llmk_tensor_init(&t_samp, LLMK_I64, 2, s41, NULL, sampled);
  llmk_tensor_init(&t_pos, LLMK_I64, 1, n4, NULL, positions);
  llmk_tensor_init(&t_lens, LLMK_I32, 1, n4, NULL, seq_lens);
  llmk_tensor_init(&t_slots, LLMK_I64, 1, n4, NULL, slots);
  llmk_tensor_init(&t_tab, LLMK_I32, 2, s41, NULL, tables);
  size_t ws;
  llmk_plan *plan;
  llmk_status st =
      llmk_advance_step_get_workspace_size(&t_tok, &t_samp, &t_pos, &t_lens, &t_slots,
                                           &t_tab, NULL, NULL, 4, 4, 128, &ws, &plan);
  if (st == LLMK_SUCCESS) st = llmk_advance_step(NULL, ws, plan, NULL);
  if (st != LLMK_SUCCESS) {
    fprintf(stderr, "advance_step: %s (%s)\n", llmk_status_string(st), llmk_last_error());
    return 1;
  }
  const int64_t want[4] = {6, 136, 262, 390};
  for (int i = 0; i < 4; i++)
    if (slots[i] != want[i] || seq_lens[i] != positions[i] + 1) {
      fprintf(stderr, "row %d: slot %" PRId64 " want %" PRId64 "\n", i, slots[i],
              want[i]);
      return 1;
    }
  printf("llmk %s (ISA %s): slots %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n",
         llmk_version_string(), llmk_isa_name(llmk_get_isa()), slots[0], slots[1],
         slots[2], slots[3]);
  return 0;
}
