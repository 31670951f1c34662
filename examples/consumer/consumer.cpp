/* SPDX-License-Identifier: Apache-2.0 */
/* The C++ consumer: llmk's headers from C++ (C linkage, no C-only constructs), built
 * against an installed llmk. One top-k / top-p call on a small batch, checked against the
 * values worked out by hand: row 0 keeps its 2 largest logits (k = 2), row 1 keeps the
 * smallest set whose probability reaches p = 0.5 (the largest logit alone: 16/26). */
#include <llmk/llmk.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

int main() {
  if (llmk_version() != LLMK_VERSION) {
    std::fprintf(stderr, "header version %d, library %u\n", LLMK_VERSION, llmk_version());
    return 1;
  }
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> logits = {1.0f,          4.0f, 2.0f,
                               3.0f,  //
                               0.0f,          0.0f, std::log(16.0f),
                               std::log(8.0f)};
  std::vector<float> want = {ninf, 4.0f, ninf,
                             3.0f,  //
                             ninf, ninf, std::log(16.0f),
                             ninf};
  std::vector<float> p = {1.0f, 0.5f};
  std::vector<int64_t> k = {2, 4};
  int64_t shape[2] = {2, 4}, rows[1] = {2};
  llmk_tensor t_logits, t_p, t_k;
  llmk_tensor_init(&t_logits, LLMK_F32, 2, shape, nullptr, logits.data());
  llmk_tensor_init(&t_p, LLMK_F32, 1, rows, nullptr, p.data());
  llmk_tensor_init(&t_k, LLMK_I64, 1, rows, nullptr, k.data());
  size_t ws = 0;
  llmk_plan *plan = nullptr;
  llmk_status st = llmk_apply_top_k_top_p_get_workspace_size(&t_logits, &t_p, &t_k,
                                                             &t_logits, &ws, &plan);
  std::vector<unsigned char> workspace(ws);
  if (st == LLMK_SUCCESS)
    st = llmk_apply_top_k_top_p(ws ? workspace.data() : nullptr, ws, plan, nullptr);
  if (st != LLMK_SUCCESS) {
    std::fprintf(stderr, "apply_top_k_top_p: %s (%s)\n", llmk_status_string(st),
                 llmk_last_error());
    return 1;
  }
  for (size_t i = 0; i < logits.size(); i++)
    if (!(logits[i] == want[i])) {
      std::fprintf(stderr, "logit %zu: %g, want %g\n", i, logits[i], want[i]);
      return 1;
    }
  std::printf("llmk %s from C++ (ISA %s): top-k/top-p kept %g %g | %g\n",
              llmk_version_string(), llmk_isa_name(llmk_get_isa()), logits[1], logits[3],
              logits[6]);
  return 0;
}
