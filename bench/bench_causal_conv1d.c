/* fused_causal_conv1d against memcpy of the same bytes, measured in the same run.
 * Bytes that must move per call: x read and written, the cache rows read (history the
 * conv or the state shift needs) and written (state and APC fill rows), and the weight.
 * The memcpy baseline copies half that many bytes (so it reads and writes as many). */
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "llmk/llmk.h"

static int threads = 2;
static llmk_context *ctx;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void *xmalloc(size_t n) {
  void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

static double time_memcpy(char *dst, const char *src, size_t n) {
  double t0 = bench_now();
#pragma omp parallel num_threads(threads)
  {
    int i = omp_get_thread_num(), k = omp_get_num_threads();
    size_t b = n / (size_t)k * (size_t)i,
           e = i == k - 1 ? n : n / (size_t)k * (size_t)(i + 1);
    memcpy(dst + b, src + b, e - b);
  }
  return bench_now() - t0;
}

typedef struct config {
  const char *name;
  int64_t batch, dim, m;
  int kind;            /* 0 fixed batch (3-D x), 1 varlen decode, 2 prefill, 3 mixed */
  int64_t prefill_len; /* kind 2/3: tokens per prefill sequence */
  int64_t n_prefill;   /* kind 3: prefill sequences among batch */
  int64_t block_size;  /* APC when > 0 (prefill only) */
  int silu;            /* SiLU activation */
} config;

static void fill_bf16(uint16_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    p[i] =
        (uint16_t)(0x3c00 + (next_rand() & 0x7ff)) ^ (uint16_t)((next_rand() & 1) << 15);
}

static void run(const config *c) {
  const int K = 3;
  const int64_t dim = c->dim, B = c->batch, m = c->m, C = K - 1 + m;
  int64_t *len = xmalloc((size_t)B * 8);
  int64_t T = 0;
  for (int64_t b = 0; b < B; b++) {
    if (c->kind == 0)
      len[b] = m + 1;
    else if (c->kind == 1)
      len[b] = 1 + (int64_t)(next_rand() % (uint64_t)(m + 1));
    else if (c->kind == 2 || b < c->n_prefill)
      len[b] = c->prefill_len;
    else
      len[b] = 1 + (int64_t)(next_rand() % (uint64_t)(m + 1));
    T += len[b];
  }
  int64_t lines = 2 * B + 8,
          max_blocks = c->block_size ? (c->prefill_len / c->block_size + 2) : 1;
  if (c->block_size) lines = B * max_blocks + 8;
  uint16_t *x = xmalloc((size_t)(T * dim) * 2), *w = xmalloc((size_t)(K * dim) * 2);
  uint16_t *cs = xmalloc((size_t)(lines * C * dim) * 2);
  fill_bf16(x, (size_t)(T * dim));
  /* taps of gain 1 (0.5^2 + 0.5^2 + 0.7071^2), so that x keeps its scale over the
   * repeated in-place calls: shrinking values would turn subnormal and time the FPU's
   * slow path instead of the op */
  static const uint16_t taps[3] = {0x3f00, 0x3f00, 0x3f35};
  for (int64_t i = 0; i < K * dim; i++)
    w[i] = (uint16_t)(taps[i / dim] | ((next_rand() & 1) << 15));
  fill_bf16(cs, (size_t)(lines * C * dim));
  int32_t *qsl = xmalloc((size_t)(B + 1) * 4),
          *ci = xmalloc((size_t)(B * max_blocks) * 4);
  int32_t *nacc = xmalloc((size_t)B * 4), *nct = xmalloc((size_t)B * 4);
  int32_t *first = xmalloc((size_t)B * 4), *last = xmalloc((size_t)B * 4),
          *init = xmalloc((size_t)B * 4);
  int32_t *perm = xmalloc((size_t)lines * 4);
  for (int64_t i = 0; i < lines; i++) perm[i] = (int32_t)i;
  for (int64_t i = lines - 1; i > 0; i--) {
    int64_t j = (int64_t)(next_rand() % (uint64_t)(i + 1));
    int32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  qsl[0] = 0;
  for (int64_t b = 0; b < B; b++) qsl[b + 1] = qsl[b] + (int32_t)len[b];
  for (int64_t i = 0; i < B * max_blocks; i++) ci[i] = perm[i];
  for (int64_t b = 0; b < B; b++) {
    nacc[b] = len[b] > m + 1 ? 0 : (int32_t)(1 + next_rand() % (uint64_t)(m + 1));
    nct[b] = c->block_size ? (int32_t)(c->block_size / 2) : 7;
    init[b] = 0;
    first[b] = 0;
    last[b] = c->block_size
                  ? (int32_t)((nct[b] % c->block_size + len[b] - 1) / c->block_size)
                  : 0;
  }
  /* the rows that must move */
  int64_t rows = 0;
  for (int64_t b = 0; b < B; b++) {
    bool use_nacc = c->kind != 2 && m > 0;
    int64_t off = use_nacc ? (nacc[b] > 1 ? nacc[b] - 1 : 0) : C - (K - 1),
            hn = off + K - 1;
    int64_t Ln = hn + len[b], M = C < Ln ? C : Ln, lo = Ln - M < off ? Ln - M : off;
    rows += 2 * len[b] + M + (hn - (lo > 0 ? lo : 0)) +
            (int64_t)(last[b] - first[b]) * (K - 1);
  }
  size_t moved = (size_t)(rows + K) * (size_t)dim * 2;

  llmk_tensor tx, tw, tcs, tq, tci, tn, tnct, tf, tl, ti;
  int64_t sx2[2] = {T, dim}, sx3[3] = {B, m + 1, dim}, sw[2] = {K, dim},
          scs[3] = {lines, C, dim};
  if (c->kind == 0)
    llmk_tensor_init(&tx, LLMK_BF16, 3, sx3, NULL, x);
  else
    llmk_tensor_init(&tx, LLMK_BF16, 2, sx2, NULL, x);
  llmk_tensor_init(&tw, LLMK_BF16, 2, sw, NULL, w);
  llmk_tensor_init(&tcs, LLMK_BF16, 3, scs, NULL, cs);
  int64_t sq[1] = {B + 1}, sb[1] = {B}, sci2[2] = {B, max_blocks};
  llmk_tensor_init(&tq, LLMK_I32, 1, sq, NULL, qsl);
  if (c->block_size)
    llmk_tensor_init(&tci, LLMK_I32, 2, sci2, NULL, ci);
  else
    llmk_tensor_init(&tci, LLMK_I32, 1, sb, NULL, ci);
  llmk_tensor_init(&tn, LLMK_I32, 1, sb, NULL, nacc);
  llmk_tensor_init(&tnct, LLMK_I32, 1, sb, NULL, nct);
  llmk_tensor_init(&tf, LLMK_I32, 1, sb, NULL, first);
  llmk_tensor_init(&tl, LLMK_I32, 1, sb, NULL, last);
  llmk_tensor_init(&ti, LLMK_I32, 1, sb, NULL, init);
  bool apc = c->block_size > 0, use_nacc = c->kind != 2 && m > 0;
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st = llmk_fused_causal_conv1d_get_workspace_size(
      &tx, &tw, &tcs, c->kind == 0 ? NULL : &tq, &tci, use_nacc ? &tn : NULL,
      apc ? &tnct : NULL, apc ? &tf : NULL, apc ? &tl : NULL, apc ? &ti : NULL, NULL, -1,
      -1, 0, c->block_size, 0, c->silu ? LLMK_ACTIVATION_SILU : LLMK_ACTIVATION_NONE, &ws,
      &plan);
  if (st != LLMK_SUCCESS) {
    fprintf(stderr, "%s: %s\n", c->name, llmk_last_error());
    exit(1);
  }
  llmk_plan_set_repeatable(plan);
  void *wsp = ws ? xmalloc(ws) : NULL;
  int reps = 21, inner = moved < (64u << 20) ? 5 : 1;
  double t[64], mt[64];
  char *a = xmalloc(moved / 2), *bb = xmalloc(moved / 2);
  memset(a, 1, moved / 2);
  memset(bb, 2, moved / 2);
  for (int i = 0; i < 2; i++) { /* warm-up: page faults, caches */
    llmk_fused_causal_conv1d(wsp, ws, plan, ctx);
    time_memcpy(bb, a, moved / 2);
  }
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    for (int i = 0; i < inner; i++) {
      st = llmk_fused_causal_conv1d(wsp, ws, plan, ctx);
      if (st != LLMK_SUCCESS) {
        fprintf(stderr, "%s: %s\n", c->name, llmk_last_error());
        exit(1);
      }
    }
    t[r] = (bench_now() - t0) / inner;
    double m0 = 0;
    for (int i = 0; i < inner; i++) m0 += time_memcpy(bb, a, moved / 2);
    mt[r] = m0 / inner;
  }
  double op = bench_median(t, reps), mc = bench_median(mt, reps);
  printf("  %-46s %9.1f us  %7.2f GB/s  memcpy %7.2f GB/s  %5.1f%%\n", c->name, op * 1e6,
         (double)moved / op * 1e-9, (double)moved / mc * 1e-9, 100.0 * mc / op);
  fflush(stdout);
  llmk_plan_destroy(plan);
  free(wsp);
  free(a);
  free(bb);
  free(len);
  free(x);
  free(w);
  free(cs);
  free(qsl);
  free(ci);
  free(nacc);
  free(nct);
  free(first);
  free(last);
  free(init);
  free(perm);
}

int main(int argc, char **argv) {
  if (argc > 1) threads = atoi(argv[1]);
  if (threads < 1) threads = 1;
  llmk_context_create(threads, &ctx);
  printf(
      "fused_causal_conv1d, bf16, K=3, %d thread(s), ISA %s; median per call; %% = "
      "memcpy "
      "time / op time for the same bytes (memcpy timed alternately in the same loop)\n",
      threads, llmk_isa_name(llmk_get_isa()));
  const config configs[] = {
      {"decode fixed batch B=256 dim=8192 m=0", 256, 8192, 0, 0, 0, 0, 0, 0},
      {"decode fixed batch B=256 dim=8192 m=3", 256, 8192, 3, 0, 0, 0, 0, 0},
      {"decode varlen B=256 dim=8192 m=3 (1..4 tok)", 256, 8192, 3, 1, 0, 0, 0, 0},
      {"prefill 4 x 1024 dim=8192", 4, 8192, 0, 2, 1024, 0, 0, 0},
      {"prefill 4 x 1024 dim=8192, APC block 256", 4, 8192, 0, 2, 1024, 0, 256, 0},
      {"prefill 4 x 1024 dim=8192, SiLU", 4, 8192, 0, 2, 1024, 0, 0, 1},
      {"mixed 2 x 512 prefill + 126 decode, m=3", 128, 8192, 3, 3, 512, 2, 0, 0},
  };
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
    if (argc < 3 || strstr(configs[i].name, argv[2])) run(&configs[i]);
  llmk_context_destroy(ctx);
  return 0;
}
