/* SPDX-License-Identifier: Apache-2.0 */
/* scatter_pa_kv_cache and gather_pa_kv_cache on the spec's samples: PyPTO's NHD sample,
 * CANN's NZ sample, an fp8 cache, and reading a sequence back by its block table. */
#include <llmk/llmk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                   \
  do {                                                                \
    llmk_status st_ = (call);                                         \
    if (st_ != LLMK_SUCCESS) {                                        \
      fprintf(stderr, "%s: %s: %s\n", #call, llmk_status_string(st_), \
              llmk_last_error());                                     \
      return 1;                                                       \
    }                                                                 \
  } while (0)

static int pypto(void) {
  enum { T = 8, D = 64, NB = 16, BS = 16 };
  static uint16_t key[T * D], cache[NB * BS * D];
  int64_t slots[T] = {22, 38, 41, 54, 86, 122, 207, 254};
  for (int i = 0; i < T * D; i++) key[i] = llmk_f32_to_bf16((float)i / 64.0f);
  for (int i = 0; i < NB * BS * D; i++) cache[i] = 0x7fc1; /* a pattern, not zeros */
  llmk_tensor tk, tc, ts;
  CHECK(llmk_tensor_init(&tk, LLMK_BF16, 3, (int64_t[]){T, 1, D}, NULL, key));
  CHECK(llmk_tensor_init(&tc, LLMK_BF16, 4, (int64_t[]){NB, BS, 1, D}, NULL, cache));
  CHECK(llmk_tensor_init(&ts, LLMK_I64, 1, (int64_t[]){T}, NULL, slots));
  size_t ws;
  llmk_plan *plan;
  CHECK(llmk_scatter_pa_kv_cache_get_workspace_size(&tk, NULL, &tc, NULL, &ts, NULL, NULL,
                                                    LLMK_KV_BLOCKS, &ws, &plan));
  void *w = malloc(ws ? ws : 1);
  CHECK(llmk_scatter_pa_kv_cache(w, ws, plan, NULL));
  free(w);
  int rows = 0, untouched = 0;
  for (int t = 0; t < T; t++) rows += !memcmp(cache + slots[t] * D, key + t * D, D * 2);
  for (int i = 0; i < NB * BS * D; i++) untouched += cache[i] == 0x7fc1;
  printf(
      "PyPTO sample: %d of %d slot rows equal their key, %d of %d other elements "
      "unchanged\n",
      rows, T, untouched, NB * BS * D - T * D);
  return rows == T && untouched == NB * BS * D - T * D ? 0 : 1;
}

static int cann_nz(void) {
  static uint16_t key[2 * 2 * 32], value[2 * 2 * 32], kc[4 * 32 * 16], vc[4 * 32 * 16];
  int32_t slots[2] = {0, 1};
  for (int i = 0; i < 4 * 32 * 16; i++) kc[i] = vc[i] = 0x0001;
  llmk_tensor tk, tv, tkc, tvc, ts;
  CHECK(llmk_tensor_init(&tk, LLMK_F16, 3, (int64_t[]){2, 2, 32}, NULL, key));
  CHECK(llmk_tensor_init(&tv, LLMK_F16, 3, (int64_t[]){2, 2, 32}, NULL, value));
  CHECK(llmk_tensor_init(&tkc, LLMK_F16, 4, (int64_t[]){1, 4, 32, 16}, NULL, kc));
  CHECK(llmk_tensor_init(&tvc, LLMK_F16, 4, (int64_t[]){1, 4, 32, 16}, NULL, vc));
  CHECK(llmk_tensor_init(&ts, LLMK_I32, 1, (int64_t[]){2}, NULL, slots));
  size_t ws;
  llmk_plan *plan;
  CHECK(llmk_scatter_pa_kv_cache_get_workspace_size(&tk, &tv, &tkc, &tvc, &ts, NULL, NULL,
                                                    LLMK_KV_NZ, &ws, &plan));
  void *w = malloc(ws ? ws : 1);
  CHECK(llmk_scatter_pa_kv_cache(w, ws, plan, NULL));
  free(w);
  int zeros = 0, ones = 0, ok = 1;
  for (int i = 0; i < 4 * 32 * 16; i++) {
    int in_row = i % 512 < 32;
    zeros += kc[i] == 0;
    ones += kc[i] == 1;
    ok &= kc[i] == (in_row ? 0 : 1) && vc[i] == kc[i];
  }
  printf("CANN NZ sample: %d elements became 0 (c*512 + 0..31), %d stayed 0x0001\n",
         zeros, ones);
  return ok ? 0 : 1;
}

static int fp8_and_gather(void) {
  /* two sequences of 5 and 3 tokens, H = 2, D = 16, blocks of 4, an e4m3 cache */
  enum { T = 8, H = 2, D = 16, NB = 6, BS = 4 };
  static float key[T * H * D], back[T * H * D];
  static uint8_t cache[NB * BS * H * D];
  int64_t tables[2][2] = {{4, 1}, {2, 5}}, lens[2] = {5, 3}, slots[T];
  for (int t = 0; t < T; t++) {
    int i = t < 5 ? 0 : 1, p = t < 5 ? t : t - 5;
    slots[t] = tables[i][p / BS] * BS + p % BS;
  }
  for (int i = 0; i < T * H * D; i++) key[i] = (float)(i % 37) - 18.0f;
  float scale = 0.125f;
  llmk_tensor tk, tc, ts, tsc, tbt, tln, tout;
  CHECK(llmk_tensor_init(&tk, LLMK_F32, 3, (int64_t[]){T, H, D}, NULL, key));
  CHECK(
      llmk_tensor_init(&tc, LLMK_FP8_E4M3FN, 4, (int64_t[]){NB, BS, H, D}, NULL, cache));
  CHECK(llmk_tensor_init(&ts, LLMK_I64, 1, (int64_t[]){T}, NULL, slots));
  CHECK(llmk_tensor_init(&tsc, LLMK_F32, 0, NULL, NULL, &scale));
  CHECK(llmk_tensor_init(&tbt, LLMK_I64, 2, (int64_t[]){2, 2}, NULL, tables));
  CHECK(llmk_tensor_init(&tln, LLMK_I64, 1, (int64_t[]){2}, NULL, lens));
  CHECK(llmk_tensor_init(&tout, LLMK_F32, 3, (int64_t[]){T, H, D}, NULL, back));
  size_t ws;
  llmk_plan *plan;
  CHECK(llmk_scatter_pa_kv_cache_get_workspace_size(&tk, NULL, &tc, NULL, &ts, &tsc, NULL,
                                                    LLMK_KV_BLOCKS, &ws, &plan));
  void *w = malloc(ws ? ws : 1);
  CHECK(llmk_scatter_pa_kv_cache(w, ws, plan, NULL));
  free(w);
  CHECK(llmk_gather_pa_kv_cache_get_workspace_size(
      &tc, NULL, &tbt, &tln, &tsc, NULL, &tout, NULL, LLMK_KV_BLOCKS, &ws, &plan));
  w = malloc(ws ? ws : 1);
  CHECK(llmk_gather_pa_kv_cache(w, ws, plan, NULL));
  free(w);
  double max_err = 0;
  for (int i = 0; i < T * H * D; i++) {
    double e = back[i] - key[i];
    if (e < 0) e = -e;
    if (e > max_err) max_err = e;
  }
  /* e4m3 keeps 3 mantissa bits: values up to 18 / 0.125 = 144 are within 1/16 relative */
  printf(
      "fp8 e4m3 round trip of 2 sequences (5 + 3 tokens): max |error| %.3f (values up to "
      "18)\n",
      max_err);
  return max_err <= 18.0 / 16 ? 0 : 1;
}

int main(void) {
  printf("llmk %s, ISA %s\n", llmk_version_string(), llmk_isa_name(llmk_get_isa()));
  return pypto() || cann_nz() || fp8_and_gather();
}
