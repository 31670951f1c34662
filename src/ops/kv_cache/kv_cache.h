/* SPDX-License-Identifier: Apache-2.0 */
/* What scatter_pa_kv_cache and gather_pa_kv_cache share: the plan (each layout reduced
 * to runs per token, see kv_cache.c) and the helpers of their runs. */
#ifndef LLMK_OPS_KV_CACHE_H
#define LLMK_OPS_KV_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/internal.h"
#include "core/view.h"
#include "kernels/kv_cache/kv_cache.h"
#include "llmk/kv_cache.h"

extern const char llmk__scatter_op[], llmk__gather_op[];

/* scatter_pa_kv_cache_compressed (scatter_pa_kv_cache_compress.c): one side's tokens
 * [N, H, D] and cache [num_blocks, block_size, 1, D], strides in elements. */
typedef struct kv_cz_side {
  bool present;
  char *tok, *cache;
  llmk_dtype dtype;
  size_t esz;
  int64_t D, ts0, ts1, ts2, cs0, cs1, cs3;
} kv_cz_side;

typedef struct kv_compress {
  int mode; /* llmk_kv_compress; 0: an ordinary scatter or a gather */
  int64_t N, H, B;
  llmk__view lens, offs, seqs; /* compress_lens, compress_seq_offset, seq_lens */
  kv_cz_side side[2];
} kv_compress;

typedef struct kv_plan {
  const char *op;
  bool gather;
  llmk__kv_side side[2];
  int64_t T, num_blocks, block_size;
  int64_t num_slots;       /* num_blocks * block_size, checked in phase 1 */
  llmk__view slots;        /* scatter: [T] */
  llmk__view tables, lens; /* gather: [B, max_blocks], [B] ([B + 1] cumulative) */
  llmk__view offs;         /* gather: seq_offset [B] (has_offs) */
  bool has_offs, cumsum;
  int64_t B, max_blocks;
  const llmk__kv_kernels *kern;
  /* every side that moves anything is one bit copy per token (a single run of unit
   * strides) and its slots lie one slot stride apart (block stride = block_size x slot
   * stride): a token is then one copy to slot * slot stride, no division, no run list */
  bool rows;
  kv_compress cz; /* scatter_pa_kv_cache_compressed (then only op, T, num_blocks,
                     block_size, num_slots and slots are set besides) */
} kv_plan;

/* Phase 2 of scatter_pa_kv_cache_compressed: checks every value, then writes. */
llmk_status llmk__kv_run_compressed(const kv_plan *p);

typedef struct llmk__kv_side_args {
  const llmk_tensor *tok, *cache, *scale;
  const char *tok_name, *cache_name, *scale_name;
} llmk__kv_side_args;

/* Phase 1 of both ops: sides[0] is K, sides[1] V (tok NULL: K only); index_a is
 * slot_mapping (scatter) or block_tables (gather), index_b seq_lens (gather, [B + 1]
 * when cumsum), index_c seq_offset (gather, optional, [B]). */
llmk_status llmk__kv_plan(const char *op, bool gather, llmk__kv_side_args sides[2],
                          llmk_kv_layout layout, const llmk_tensor *index_a,
                          const char *index_a_name, const llmk_tensor *index_b,
                          const char *index_b_name, const llmk_tensor *index_c,
                          const char *index_c_name, bool cumsum, size_t *workspace_size,
                          llmk_plan **plan);
/* INVALID_VALUE unless every scale is finite and > 0 */
llmk_status llmk__kv_check_scales(const kv_plan *p);

/* Written bytes above which copies bypass the caches: the data would not fit in them
 * anyway, and non-temporal stores save the read of every destination line. */
#define KV_STREAM_BYTES ((int64_t)16 << 20)

/* Whether any token row has elements to move (else phase 2 only checks values). */
static inline bool llmk__kv_moves(const kv_plan *p) {
  return p->side[0].nruns > 0 || p->side[1].nruns > 0;
}

/* a * b, or INT64_MAX where that overflows (operands >= 0) */
static inline int64_t llmk__kv_sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static inline bool llmk__kv_use_streaming(const kv_plan *p) {
  int64_t bytes = 0;
  for (int i = 0; i < 2; i++)
    if (p->side[i].present) {
      int64_t b = llmk__kv_sat_mul(
          llmk__kv_sat_mul(llmk__kv_sat_mul(p->T, p->side[i].H), p->side[i].D),
          (int64_t)(p->gather ? p->side[i].tok_esz : p->side[i].cache_esz));
      if (__builtin_add_overflow(bytes, b, &bytes)) bytes = INT64_MAX;
    }
  return bytes >= KV_STREAM_BYTES;
}

/* Tokens per thread so that a task moves at least this many bytes: below it, waking a
 * second thread costs more than it saves. */
#define KV_BYTES_PER_TASK (256 * 1024)

static inline int64_t llmk__kv_token_grain(const kv_plan *p) {
  int64_t bytes = 0;
  for (int i = 0; i < 2; i++)
    if (p->side[i].present)
      if (__builtin_add_overflow(
              bytes,
              llmk__kv_sat_mul(llmk__kv_sat_mul(p->side[i].H, p->side[i].D),
                               (int64_t)(p->side[i].tok_esz + p->side[i].cache_esz)),
              &bytes))
        bytes = INT64_MAX;
  if (bytes <= 0) bytes = 1;
  int64_t g = KV_BYTES_PER_TASK / bytes;
  return g < 1 ? 1 : g;
}

#define KV_GROUP_MAX 64
#define KV_PREFETCH_AHEAD 4

static inline char *cache_row(const llmk__kv_side *k, const kv_plan *p, int64_t slot) {
  int64_t b = slot / p->block_size, o = slot % p->block_size;
  return k->cache + (size_t)(b * k->cache_sb + o * k->cache_so) * k->cache_esz;
}

/* Tokens t..t+g-1 to (or from) slots slot..slot+g-1, all in one block. */
static inline void move_slots(const kv_plan *p, int64_t t, int64_t g, int64_t slot,
                              bool stream) {
  for (int i = 0; i < 2; i++) {
    const llmk__kv_side *k = &p->side[i];
    if (!k->present || k->nruns == 0) continue; /* nothing to move (empty rows) */
    if (g > 1 && k->group) {
      llmk__kv_move_group(k, t, g, cache_row(k, p, slot), stream);
      continue;
    }
    for (int64_t j = 0; j < g; j++)
      llmk__kv_move_token(k, k->tok + (size_t)((t + j) * k->tok_s0) * k->tok_esz,
                          cache_row(k, p, slot + j), stream);
  }
}

/* Touches the cache lines of a slot's runs ahead of use: random slots are bound by
 * memory latency (and TLB misses), which a few rows of look-ahead overlap. */
static inline void prefetch_slot(const kv_plan *p, int64_t slot, bool write) {
  for (int i = 0; i < 2; i++) {
    const llmk__kv_side *k = &p->side[i];
    if (!k->present || k->nruns == 0) continue; /* nothing to move (empty rows) */
    const char *row = cache_row(k, p, slot);
    for (int64_t r = 0; r < k->nruns && r < 64; r++) {
      const llmk__kv_run *run = &k->runs[r];
      if (run->len <= 0) continue; /* (none are built; no bytes to touch) */
      const char *c = row + (size_t)run->cache_off * k->cache_esz;
      size_t bytes = (size_t)((run->len - 1) * run->cache_stride + 1) * k->cache_esz;
      for (size_t off = 0; off < bytes; off += 64) {
        if (write)
          __builtin_prefetch(c + off, 1, 3);
        else
          __builtin_prefetch(c + off, 0, 3);
      }
    }
  }
}

static inline void *align16(void *p) {
  return (void *)(((uintptr_t)p + 15) & ~(uintptr_t)15);
}

#endif
