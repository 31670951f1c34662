/* SPDX-License-Identifier: Apache-2.0 */
/* What bench_scatter_pa_kv_cache.c and bench_gather_pa_kv_cache.c share: the case
 * description, the cache shapes of each layout, the value fill and the labels. */
#ifndef LLMK_TOOL_BENCH_PA_KV_CACHE_H
#define LLMK_TOOL_BENCH_PA_KV_CACHE_H

#include <stdio.h>
#include <string.h>

#include "../common/kv_layout.h"
#include "bench.h"

typedef struct kv_case {
  bool quick;
  const char *label;
  int64_t T, H, D, block_size, num_blocks;
  llmk_dtype src, cache;
  llmk_kv_layout layout;
  bool contiguous; /* prefill: blocks in a random order, filled in token order */
  bool k_only;     /* no value cache (MLA) */
  int64_t nseq;    /* gather: sequences, T / nseq tokens each */
} kv_case;

#define BF LLMK_BF16
#define F16 LLMK_F16
#define E4 LLMK_FP8_E4M3FN
#define E5 LLMK_FP8_E5M2
#define NHD LLMK_KV_BLOCKS
/* vLLM's CPU attention layout: blocks of [H, block_size, D] (head-major), passed as the
 * NHD view [num_blocks, block_size, H, D] with strides [H*bs*D, D, bs*D, 1] */
#define VEC ((llmk_kv_layout)3)

/* The layout the op is called with. */
static inline llmk_kv_layout kv_op_layout(const kv_case *c) {
  return c->layout == VEC ? LLMK_KV_BLOCKS : c->layout;
}

static inline void kv_cache_shape(const kv_case *c, llmk_dtype cache, bool key, int *rank,
                                  int64_t *shape) {
  tool_kv_cache_shape(kv_op_layout(c), (int64_t)llmk_dtype_size(cache), key,
                      c->num_blocks, c->block_size, c->H, c->D, rank, shape);
}

/* The cache's strides (elements), or NULL: contiguous. */
static inline const int64_t *kv_cache_strides(const kv_case *c, int64_t *st) {
  if (c->layout != VEC) return NULL;
  st[0] = c->H * c->block_size * c->D;
  st[1] = c->D;
  st[2] = c->block_size * c->D;
  st[3] = 1;
  return st;
}

static inline const char *kv_layout_label(llmk_kv_layout l) {
  return l == LLMK_KV_BLOCKS   ? "NHD"
         : l == LLMK_KV_XSPLIT ? "x-split"
         : l == VEC            ? "VEC"
                               : "NZ";
}

/* n values of dtype dt (f32, f16, bf16 or fp8), roughly uniform in [-amp, amp) */
static inline void kv_fill_values(void *dst, llmk_dtype dt, size_t n, float amp,
                                  bench_rng *rng) {
  enum { CHUNK = 4096 };
  float tmp[CHUNK];
  size_t es = llmk_dtype_size(dt);
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t m = n - i < CHUNK ? n - i : CHUNK;
    for (size_t j = 0; j < m; j++)
      tmp[j] = ((float)(bench_rand(rng) >> 40) * 0x1p-24f * 2.0f - 1.0f) * amp;
    llmk_convert((char *)dst + i * es, dt, tmp, LLMK_F32, m);
  }
}

static inline void kv_labels(const kv_case *c, char *shape, size_t ns, char *dt,
                             size_t nd) {
  snprintf(shape, ns, "%s T=%lld H=%lld D=%lld bs=%lld %s", c->label, (long long)c->T,
           (long long)c->H, (long long)c->D, (long long)c->block_size,
           kv_layout_label(c->layout));
  if (c->src == c->cache)
    snprintf(dt, nd, "%s", llmk_dtype_name(c->src));
  else
    snprintf(dt, nd, "%s->%s", llmk_dtype_name(c->src), llmk_dtype_name(c->cache));
}

/* Runs fn on every case of the table that the mode and the filters keep. gather: the
 * --dtype filter looks at the 16/32-bit side, the source (scatter) or the output
 * (gather). */
typedef void (*kv_case_fn)(bench_env *env, const kv_case *c, const char *shape,
                           const char *dt);
static inline void kv_walk(bench_env *env, const kv_case *cases, size_t n, bool gather,
                           kv_case_fn fn) {
  const char *op = gather ? "gather_pa_kv_cache" : "scatter_pa_kv_cache";
  for (size_t i = 0; i < n; i++) {
    const kv_case *c = &cases[i];
    if (env->quick && !c->quick) continue;
    char shape[96], dt[32];
    kv_labels(c, shape, sizeof shape, dt, sizeof dt);
    llmk_dtype fd = gather ? c->cache : c->src;
    if (bench_want(env, op, shape, fd, dt)) fn(env, c, shape, dt);
  }
}

#endif
