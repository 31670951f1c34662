/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p on CANN's sample, then min-p with kept counts, and sampling. */
#include <llmk/llmk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                   \
  do {                                                                \
    llmk_status st_ = (call);                                         \
    if (st_ != LLMK_SUCCESS) {                                        \
      fprintf(stderr, "%s: %s: %s\n", #call, llmk_status_string(st_), \
              llmk_last_error());                                     \
      return 1;                                                       \
    }                                                                 \
  } while (0)

int main(void) {
  printf("llmk %s, ISA %s\n", llmk_version_string(), llmk_isa_name(llmk_get_isa()));
  float logits[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, out[12];
  float p[3] = {0.2f, 0.4f, 0.6f};
  int32_t k[3] = {1, 2, 3};
  llmk_tensor tl, tp, tk, to;
  CHECK(llmk_tensor_init(&tl, LLMK_F32, 2, (int64_t[]){3, 4}, NULL, logits));
  CHECK(llmk_tensor_init(&tp, LLMK_F32, 1, (int64_t[]){3}, NULL, p));
  CHECK(llmk_tensor_init(&tk, LLMK_I32, 1, (int64_t[]){3}, NULL, k));
  CHECK(llmk_tensor_init(&to, LLMK_F32, 2, (int64_t[]){3, 4}, NULL, out));
  size_t ws;
  llmk_plan *plan;
  CHECK(llmk_apply_top_k_top_p_get_workspace_size(&tl, &tp, &tk, &to, &ws, &plan));
  void *w = malloc(ws ? ws : 1);
  CHECK(llmk_apply_top_k_top_p(w, ws, plan, NULL));
  free(w);
  int ok = 1;
  for (int i = 0; i < 12; i++) {
    printf("result[%d] is: %f\n", i, out[i]);
    ok &= (i % 4 == 3) ? out[i] == logits[i] : isinf(out[i]) && out[i] < 0;
  }

  /* min-p 0.3 on one row: keeps entries within log(0.3) of the largest logit */
  float row[6] = {0.0f, 2.0f, 1.5f, -1.0f, 2.0f, 0.5f}, filtered[6], min_p = 0.3f;
  int64_t kept = 0;
  llmk_tensor tr, tf, tm, tkept;
  CHECK(llmk_tensor_init(&tr, LLMK_F32, 2, (int64_t[]){1, 6}, NULL, row));
  CHECK(llmk_tensor_init(&tf, LLMK_F32, 2, (int64_t[]){1, 6}, NULL, filtered));
  CHECK(llmk_tensor_init(&tm, LLMK_F32, 1, (int64_t[]){1}, NULL, &min_p));
  CHECK(llmk_tensor_init(&tkept, LLMK_I64, 1, (int64_t[]){1}, NULL, &kept));
  CHECK(llmk_apply_top_k_top_p_min_p_get_workspace_size(&tr, NULL, NULL, &tm, &tf, &tkept,
                                                        &ws, &plan));
  w = malloc(ws ? ws : 1);
  CHECK(llmk_apply_top_k_top_p(w, ws, plan, NULL));
  free(w);
  printf("min_p 0.3 keeps %lld of 6:", (long long)kept);
  for (int i = 0; i < 6; i++) printf(" %g", filtered[i]);
  printf("\n");
  ok &= kept == 3;

  /* sampling: 1000 draws from one row with top-k 3 */
  enum { DRAWS = 1000 };
  static float rows[DRAWS * 6];
  static int64_t seeds[DRAWS], ids[DRAWS];
  static int32_t ks[DRAWS];
  for (int r = 0; r < DRAWS; r++) {
    for (int i = 0; i < 6; i++) rows[r * 6 + i] = row[i];
    seeds[r] = r;
    ks[r] = 3;
  }
  llmk_tensor trs, tks, tseed, tids;
  CHECK(llmk_tensor_init(&trs, LLMK_F32, 2, (int64_t[]){DRAWS, 6}, NULL, rows));
  CHECK(llmk_tensor_init(&tks, LLMK_I32, 1, (int64_t[]){DRAWS}, NULL, ks));
  CHECK(llmk_tensor_init(&tseed, LLMK_I64, 1, (int64_t[]){DRAWS}, NULL, seeds));
  CHECK(llmk_tensor_init(&tids, LLMK_I64, 1, (int64_t[]){DRAWS}, NULL, ids));
  CHECK(llmk_sample_top_k_top_p_get_workspace_size(&trs, NULL, &tks, NULL, NULL, &tseed,
                                                   NULL, &tids, &ws, &plan));
  w = malloc(ws ? ws : 1);
  CHECK(llmk_apply_top_k_top_p(w, ws, plan, NULL));
  free(w);
  int hist[6] = {0};
  for (int r = 0; r < DRAWS; r++) hist[ids[r]]++;
  printf(
      "1000 draws with k=3 (logits 0 2 1.5 -1 2 0.5): ids 1, 2, 4 drawn %d, %d, %d "
      "times; "
      "others %d\n",
      hist[1], hist[2], hist[4], hist[0] + hist[3] + hist[5]);
  ok &= hist[0] + hist[3] + hist[5] == 0;
  return ok ? 0 : 1;
}
