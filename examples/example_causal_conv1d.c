/* SPDX-License-Identifier: Apache-2.0 */
/* fused_causal_conv1d on the spec's sample (CANN's doc example: a 2-D varlen prefill of
 * four sequences, f16), checked against the spec's stated result; then three decode steps
 * (3-D x, one token per sequence) that continue from the cache lines the prefill left,
 * with a repeatable plan. Returns non-zero if any value differs from the expected one. */
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

enum { K = 3, DIM = 128, BATCH = 4, LINES = 8, C = 2, T = 19 };

#define F16_ONE 0x3c00

static uint16_t x[T * DIM];              /* [T, dim] */
static uint16_t weight[K * DIM];         /* [K, dim] */
static uint16_t states[LINES * C * DIM]; /* [num_lines, C, dim] */
static int32_t cache_indices[BATCH] = {0, 3, 1, 5};

/* 1 if every element of n f16 values has the bits of v */
static int all_equal(const uint16_t *p, int n, uint16_t v) {
  for (int i = 0; i < n; i++)
    if (p[i] != v) return 0;
  return 1;
}

static int line_of(int l) {
  for (int b = 0; b < BATCH; b++)
    if (cache_indices[b] == l) return b;
  return -1;
}

static int run(void *ws_buf, size_t ws, llmk_plan *plan) {
  CHECK(llmk_fused_causal_conv1d(ws_buf, ws, plan, NULL));
  return 0;
}

static int prefill(void) {
  int32_t qsl[BATCH + 1] = {0, 5, 8, 15, 19}; /* sequence lengths 5, 3, 7, 4 */
  int32_t nacc[BATCH] = {0, 0, 0, 0};
  for (int i = 0; i < T * DIM; i++) x[i] = F16_ONE;
  for (int d = 0; d < DIM; d++) weight[d] = F16_ONE; /* w[0] = 1 (the oldest token) */
  /* w[1] = w[2] = 0 and conv_states = 0: the static arrays start zeroed */
  static uint16_t before[LINES * C * DIM];
  memcpy(before, states, sizeof states);

  llmk_tensor tx, tw, ts, tq, tc, tn;
  CHECK(llmk_tensor_init(&tx, LLMK_F16, 2, (int64_t[]){T, DIM}, NULL, x));
  CHECK(llmk_tensor_init(&tw, LLMK_F16, 2, (int64_t[]){K, DIM}, NULL, weight));
  CHECK(llmk_tensor_init(&ts, LLMK_F16, 3, (int64_t[]){LINES, C, DIM}, NULL, states));
  CHECK(llmk_tensor_init(&tq, LLMK_I32, 1, (int64_t[]){BATCH + 1}, NULL, qsl));
  CHECK(llmk_tensor_init(&tc, LLMK_I32, 1, (int64_t[]){BATCH}, NULL, cache_indices));
  CHECK(llmk_tensor_init(&tn, LLMK_I32, 1, (int64_t[]){BATCH}, NULL, nacc));

  size_t ws;
  llmk_plan *plan;
  CHECK(llmk_fused_causal_conv1d_get_workspace_size(
      &tx, &tw, &ts, &tq, &tc, &tn, NULL /* num_computed_tokens */, NULL, NULL,
      NULL /* no APC */, NULL /* bias */, -1 /* pad_slot_id */, 7 /* max_query_len */,
      0 /* residual */, 0 /* block_size */, 0 /* conv_mode */, LLMK_ACTIVATION_NONE, &ws,
      &plan));
  void *ws_buf = malloc(ws ? ws : 1);
  int rc = run(ws_buf, ws, plan); /* consumes the plan */
  free(ws_buf);
  if (rc) return rc;

  int ok = 1;
  printf("prefill (CANN sample: K=3, dim=128, lengths 5 3 7 4, x = 1, w = [1, 0, 0]):\n");
  for (int b = 0; b < BATCH; b++) {
    printf("  seq %d (line %d) x[:, 0] =", b, cache_indices[b]);
    for (int t = qsl[b]; t < qsl[b + 1]; t++) {
      int i = t - qsl[b];
      uint16_t want = i < K - 1 ? 0x0000 : F16_ONE; /* two zero-history outputs, then 1 */
      ok &= all_equal(x + t * DIM, DIM, want);
      printf(" %g", (double)llmk_f16_to_f32(x[t * DIM]));
    }
    printf("\n");
  }
  printf("  lines changed:");
  for (int l = 0; l < LINES; l++)
    if (memcmp(states + l * C * DIM, before + l * C * DIM, C * DIM * 2)) printf(" %d", l);
  printf("\n  lines unchanged:");
  for (int l = 0; l < LINES; l++)
    if (!memcmp(states + l * C * DIM, before + l * C * DIM, C * DIM * 2))
      printf(" %d", l);
  printf("\n");
  for (int l = 0; l < LINES; l++)
    ok &= all_equal(states + l * C * DIM, C * DIM, line_of(l) >= 0 ? F16_ONE : 0x0000);
  printf("  %s\n",
         ok ? "matches the spec's result (x rows 0 0 1 1 ...; lines 0 3 1 5 all 1; "
              "lines 2 4 6 7 stay 0)"
            : "DIFFERS from the spec's result");
  return ok ? 0 : 1;
}

/* decode step s >= 0 feeds sequence b the token 2 + 4s + b; steps -1 and -2 stand for the
 * prefill's last two tokens, both 1 */
static float token(int step, int b) {
  return step < 0 ? 1.0f : (float)(2 + 4 * step + b);
}

static int decode(void) {
  /* one token per sequence; conv_states keeps the last C = K-1 tokens of each sequence */
  static uint16_t xd[BATCH * DIM]; /* [batch, 1, dim] */
  llmk_tensor tx, tw, ts, tc;
  CHECK(llmk_tensor_init(&tx, LLMK_F16, 3, (int64_t[]){BATCH, 1, DIM}, NULL, xd));
  CHECK(llmk_tensor_init(&tw, LLMK_F16, 2, (int64_t[]){K, DIM}, NULL, weight));
  CHECK(llmk_tensor_init(&ts, LLMK_F16, 3, (int64_t[]){LINES, C, DIM}, NULL, states));
  CHECK(llmk_tensor_init(&tc, LLMK_I32, 1, (int64_t[]){BATCH}, NULL, cache_indices));
  size_t ws;
  llmk_plan *plan;
  /* no num_accepted_tokens / num_computed_tokens: the history is the whole line */
  CHECK(llmk_fused_causal_conv1d_get_workspace_size(
      &tx, &tw, &ts, NULL, &tc, NULL, NULL, NULL, NULL, NULL, NULL, -1,
      -1 /* max_query_len unknown */, 0, 0, 0, LLMK_ACTIVATION_NONE, &ws, &plan));
  CHECK(llmk_plan_set_repeatable(plan)); /* same tensors every step */
  void *ws_buf = malloc(ws ? ws : 1);

  int ok = 1;
  printf("decode, x [4, 1, 128], three steps from the prefill's state:\n");
  for (int step = 0; step < 3; step++) {
    for (int b = 0; b < BATCH; b++)
      for (int d = 0; d < DIM; d++) xd[b * DIM + d] = llmk_f32_to_f16(token(step, b));
    if (run(ws_buf, ws, plan)) {
      free(ws_buf);
      llmk_plan_destroy(plan);
      return 1;
    }
    printf("  step %d: tokens", step + 1);
    for (int b = 0; b < BATCH; b++) printf(" %g", (double)token(step, b));
    printf(" -> y");
    for (int b = 0; b < BATCH; b++) {
      printf(" %g", (double)llmk_f16_to_f32(xd[b * DIM]));
      /* y = w[0] * (the token K-1 = 2 back) */
      ok &= all_equal(xd + b * DIM, DIM, llmk_f32_to_f16(token(step - 2, b)));
      /* the line now holds [previous token, this token] */
      const uint16_t *line = states + cache_indices[b] * C * DIM;
      ok &= all_equal(line, DIM, llmk_f32_to_f16(token(step - 1, b)));
      ok &= all_equal(line + DIM, DIM, llmk_f32_to_f16(token(step, b)));
    }
    printf("; lines");
    for (int b = 0; b < BATCH; b++) {
      const uint16_t *line = states + cache_indices[b] * C * DIM;
      printf(" %d:[%g %g]", cache_indices[b], (double)llmk_f16_to_f32(line[0]),
             (double)llmk_f16_to_f32(line[DIM]));
    }
    printf("\n");
  }
  for (int l = 0; l < LINES; l++)
    if (line_of(l) < 0) ok &= all_equal(states + l * C * DIM, C * DIM, 0x0000);
  free(ws_buf);
  CHECK(llmk_plan_destroy(plan));
  printf("  %s\n",
         ok ? "as expected (other lines still 0)" : "DIFFERS from the expected result");
  return ok ? 0 : 1;
}

int main(void) {
  printf("llmk %s, ISA %s\n", llmk_version_string(), llmk_isa_name(llmk_get_isa()));
  return prefill() || decode();
}
