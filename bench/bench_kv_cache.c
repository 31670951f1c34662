/* scatter_pa_kv_cache / gather_pa_kv_cache against memcpy of the same bytes, measured
 * side by side in this run. Effective bandwidth counts the bytes the op must move: K/V
 * read and written once (slot_mapping too). The memcpy baseline copies as many bytes
 * with the same number of threads (each thread one contiguous part).
 * Usage: bench_kv_cache [threads] (default 2). */
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

static void *xmalloc(size_t n) {
  void *p = aligned_alloc(64, (n + 63) / 64 * 64);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", n);
    exit(1);
  }
  memset(p, 0x11, n); /* touch every page before timing */
  return p;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* median seconds of `reps` memcpy's of n bytes split over `threads` threads */
static double time_memcpy(char *dst, const char *src, size_t n, int reps) {
  double t[64];
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
#pragma omp parallel num_threads(threads)
    {
      int i = omp_get_thread_num(), k = omp_get_num_threads();
      size_t b = n / (size_t)k * (size_t)i,
             e = i == k - 1 ? n : n / (size_t)k * (size_t)(i + 1);
      memcpy(dst + b, src + b, e - b);
    }
    t[r] = bench_now() - t0;
  }
  return bench_median(t, reps);
}

typedef struct config {
  const char *name;
  int64_t T, H, D, block_size, num_blocks;
  llmk_dtype src, cache;
  llmk_kv_layout layout;
  bool contiguous_slots; /* prefill: each block filled in order; else random slots */
  bool gather;
} config;

static void shape_of(const config *c, bool key, int *rank, int64_t *shape) {
  int64_t x = 16 / (int64_t)llmk_dtype_size(c->cache),
          ld = 32 / (int64_t)llmk_dtype_size(c->cache);
  if (c->layout == LLMK_KV_BLOCKS) {
    *rank = 4;
    int64_t s[4] = {c->num_blocks, c->block_size, c->H, c->D};
    memcpy(shape, s, sizeof s);
  } else if (c->layout == LLMK_KV_XSPLIT && key) {
    *rank = 5;
    int64_t s[5] = {c->num_blocks, c->H, c->D / x, c->block_size, x};
    memcpy(shape, s, sizeof s);
  } else if (c->layout == LLMK_KV_XSPLIT) {
    *rank = 4;
    int64_t s[4] = {c->num_blocks, c->H, c->D, c->block_size};
    memcpy(shape, s, sizeof s);
  } else {
    *rank = 4;
    int64_t s[4] = {c->num_blocks, c->H * c->D / ld, c->block_size, ld};
    memcpy(shape, s, sizeof s);
  }
}

static void run(const config *c) {
  size_t tok_bytes = (size_t)(c->T * c->H * c->D) * llmk_dtype_size(c->src);
  size_t cache_elems = (size_t)(c->num_blocks * c->block_size * c->H * c->D);
  size_t cache_bytes = cache_elems * llmk_dtype_size(c->cache);
  char *k = xmalloc(tok_bytes), *v = xmalloc(tok_bytes);
  char *kc = xmalloc(cache_bytes), *vc = xmalloc(cache_bytes);
  int64_t *slots = xmalloc((size_t)c->T * 8);
  for (size_t i = 0; i < tok_bytes / 2; i++)
    ((uint16_t *)(void *)k)[i] = (uint16_t)(0x3c00 + (next_rand() & 0x3ff));
  memcpy(v, k, tok_bytes);
  int64_t nslots = c->num_blocks * c->block_size;
  if (c->contiguous_slots) {
    /* blocks in a random order, tokens filling each block in order, as in prefill */
    int64_t nblk = (c->T + c->block_size - 1) / c->block_size;
    int64_t *perm = xmalloc((size_t)c->num_blocks * 8);
    for (int64_t i = 0; i < c->num_blocks; i++) perm[i] = i;
    for (int64_t i = 0; i < nblk; i++) {
      int64_t j = i + (int64_t)(next_rand() % (uint64_t)(c->num_blocks - i));
      int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (int64_t t = 0; t < c->T; t++)
      slots[t] = perm[t / c->block_size] * c->block_size + t % c->block_size;
    free(perm);
  } else { /* distinct random slots */
    int64_t *perm = xmalloc((size_t)nslots * 8);
    for (int64_t i = 0; i < nslots; i++) perm[i] = i;
    for (int64_t i = 0; i < c->T; i++) {
      int64_t j = i + (int64_t)(next_rand() % (uint64_t)(nslots - i));
      int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      slots[i] = perm[i];
    }
    free(perm);
  }
  llmk_tensor tk, tv, tkc, tvc, ts, tsc, tbt, tln;
  int64_t tshape[3] = {c->T, c->H, c->D}, cshape[5];
  int rank;
  llmk_tensor_init(&tk, c->src, 3, tshape, NULL, k);
  llmk_tensor_init(&tv, c->src, 3, tshape, NULL, v);
  shape_of(c, true, &rank, cshape);
  llmk_tensor_init(&tkc, c->cache, rank, cshape, NULL, kc);
  shape_of(c, false, &rank, cshape);
  llmk_tensor_init(&tvc, c->cache, rank, cshape, NULL, vc);
  llmk_tensor_init(&ts, LLMK_I64, 1, (int64_t[]){c->T}, NULL, slots);
  float scale = 0.25f;
  llmk_tensor_init(&tsc, LLMK_F32, 0, NULL, NULL, &scale);
  bool quant = c->src != c->cache;
  size_t ws;
  llmk_plan *plan;
  if (llmk_scatter_pa_kv_cache_get_workspace_size(
          &tk, &tv, &tkc, &tvc, &ts, quant ? &tsc : NULL, quant ? &tsc : NULL, c->layout,
          &ws, &plan) != LLMK_SUCCESS) {
    fprintf(stderr, "%s: %s\n", c->name, llmk_last_error());
    exit(1);
  }
  void *w = xmalloc(ws + 1);
  llmk_plan_set_repeatable(plan);
  /* gather: one sequence per block-sized run of tokens, as the scatter laid them out */
  int64_t B = 0, max_blocks = 0, *tables = NULL, *lens = NULL;
  llmk_plan *gplan = NULL;
  size_t gws = 0;
  void *gw = NULL;
  char *ko = NULL, *vo = NULL;
  if (c->gather) {
    if (!c->contiguous_slots) {
      fprintf(stderr, "gather needs contiguous slots\n");
      exit(1);
    }
    B = 1;
    max_blocks = (c->T + c->block_size - 1) / c->block_size;
    tables = xmalloc((size_t)max_blocks * 8);
    lens = xmalloc(8);
    for (int64_t b = 0; b < max_blocks; b++)
      tables[b] = slots[b * c->block_size] / c->block_size;
    lens[0] = c->T;
    ko = xmalloc(tok_bytes);
    vo = xmalloc(tok_bytes);
    llmk_tensor tko, tvo;
    llmk_tensor_init(&tko, c->src, 3, tshape, NULL, ko);
    llmk_tensor_init(&tvo, c->src, 3, tshape, NULL, vo);
    llmk_tensor_init(&tbt, LLMK_I64, 2, (int64_t[]){B, max_blocks}, NULL, tables);
    llmk_tensor_init(&tln, LLMK_I64, 1, (int64_t[]){B}, NULL, lens);
    if (llmk_gather_pa_kv_cache_get_workspace_size(&tkc, &tvc, &tbt, &tln, NULL, NULL,
                                                   &tko, &tvo, c->layout, &gws,
                                                   &gplan) != LLMK_SUCCESS) {
      fprintf(stderr, "%s: %s\n", c->name, llmk_last_error());
      exit(1);
    }
    llmk_plan_set_repeatable(gplan);
    gw = xmalloc(gws + 1);
  }
  /* check once against the definition before timing (NHD bit copies) */
  if (llmk_scatter_pa_kv_cache(w, ws, plan, ctx) != LLMK_SUCCESS) {
    fprintf(stderr, "%s: %s\n", c->name, llmk_last_error());
    exit(1);
  }
  if (c->layout == LLMK_KV_BLOCKS && !quant)
    for (int64_t t = 0; t < c->T; t++)
      if (memcmp(kc + (size_t)(slots[t] * c->H * c->D) * 2,
                 k + (size_t)(t * c->H * c->D) * 2, (size_t)(c->H * c->D) * 2)) {
        fprintf(stderr, "%s: token %lld not in its slot\n", c->name, (long long)t);
        exit(1);
      }
  if (c->gather) {
    llmk_gather_pa_kv_cache(gw, gws, gplan, ctx);
    if (memcmp(ko, k, tok_bytes) || memcmp(vo, v, tok_bytes)) {
      fprintf(stderr, "%s: gather did not return the scattered tokens\n", c->name);
      exit(1);
    }
  }
  size_t moved =
      2 * tok_bytes + 2 * (size_t)(c->T * c->H * c->D) * llmk_dtype_size(c->cache);
  int reps = c->T <= 512 ? 41 : 11, inner = c->T <= 512 ? 20 : 1;
  double t[64];
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    for (int i = 0; i < inner; i++) {
      if (c->gather)
        llmk_gather_pa_kv_cache(gw, gws, gplan, ctx);
      else
        llmk_scatter_pa_kv_cache(w, ws, plan, ctx);
    }
    t[r] = (bench_now() - t0) / inner;
  }
  double op = bench_median(t, reps);
  /* memcpy of the same number of bytes (moved/2 read and moved/2 written) */
  char *a = xmalloc(moved / 2), *b = xmalloc(moved / 2);
  double mt[64];
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    for (int i = 0; i < inner; i++) time_memcpy(b, a, moved / 2, 1);
    mt[r] = (bench_now() - t0) / inner;
  }
  double mc = bench_median(mt, reps);
  printf(
      "  %-44s %10.1f us  %7.2f GB/s  memcpy %7.2f GB/s  %5.1f%%  (%.2fx memcpy time)\n",
      c->name, op * 1e6, (double)moved / op * 1e-9, (double)moved / mc * 1e-9,
      100.0 * mc / op, op / mc);
  fflush(stdout);
  free(a);
  free(b);
  free(k);
  free(v);
  free(kc);
  free(vc);
  free(slots);
  free(w);
  free(tables);
  free(lens);
  free(ko);
  free(vo);
  free(gw);
  llmk_plan_destroy(plan);
  llmk_plan_destroy(gplan);
}

int main(int argc, char **argv) {
  if (argc > 1) threads = atoi(argv[1]);
  if (threads < 1) threads = 1;
  llmk_context_create(threads, &ctx);
  printf(
      "scatter/gather_pa_kv_cache, %d thread(s), ISA %s; median per call; %% = memcpy "
      "time / "
      "op time for the same bytes\n",
      threads, llmk_isa_name(llmk_get_isa()));
  const config configs[] = {
      {"(a) prefill T=16384 H=8 D=128 bf16 NHD bs128", 16384, 8, 128, 128, 256, LLMK_BF16,
       LLMK_BF16, LLMK_KV_BLOCKS, true, false},
      {"(b) decode T=256 H=8 D=128 bf16 NHD bs128", 256, 8, 128, 128, 4096, LLMK_BF16,
       LLMK_BF16, LLMK_KV_BLOCKS, false, false},
      {"(c) prefill, fp8 e4m3 cache", 16384, 8, 128, 128, 256, LLMK_BF16, LLMK_FP8_E4M3FN,
       LLMK_KV_BLOCKS, true, false},
      {"(d) prefill, x-split", 16384, 8, 128, 128, 256, LLMK_BF16, LLMK_BF16,
       LLMK_KV_XSPLIT, true, false},
      {"(d) prefill, NZ", 16384, 8, 128, 128, 256, LLMK_BF16, LLMK_BF16, LLMK_KV_NZ, true,
       false},
      {"(e) PyPTO T=2633 H=2 D=256 nb9760", 2633, 2, 256, 128, 9760, LLMK_BF16, LLMK_BF16,
       LLMK_KV_BLOCKS, false, false},
      {"(e) PyPTO T=7902 H=2 D=256 nb9760", 7902, 2, 256, 128, 9760, LLMK_BF16, LLMK_BF16,
       LLMK_KV_BLOCKS, false, false},
      {"(e) PyPTO T=16384 H=2 D=256 nb9760", 16384, 2, 256, 128, 9760, LLMK_BF16,
       LLMK_BF16, LLMK_KV_BLOCKS, false, false},
      {"(f) gather of (a) back", 16384, 8, 128, 128, 256, LLMK_BF16, LLMK_BF16,
       LLMK_KV_BLOCKS, true, true},
  };
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) run(&configs[i]);
  llmk_context_destroy(ctx);
  return 0;
}
