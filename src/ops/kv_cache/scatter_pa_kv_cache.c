/* SPDX-License-Identifier: Apache-2.0 */
/* scatter_pa_kv_cache: phase 1 and phase 2 (the plan is kv_cache.c's). */
#include <inttypes.h>
#include <string.h>

#include "core/op.h"
#include "ops/kv_cache/kv_cache.h"

llmk_status llmk_scatter_pa_kv_cache_get_workspace_size(
    const llmk_tensor *key, const llmk_tensor *value, const llmk_tensor *key_cache,
    const llmk_tensor *value_cache, const llmk_tensor *slot_mapping,
    const llmk_tensor *k_scale, const llmk_tensor *v_scale, llmk_kv_layout layout,
    size_t *workspace_size, llmk_plan **plan) {
  const char *op = llmk__scatter_op;
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  if (!key) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key is NULL");
  if (!key_cache) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key_cache is NULL");
  if (!slot_mapping)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "slot_mapping is NULL");
  if (value && !value_cache)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op,
                       "value_cache is NULL but value is given");
  if (!value && value_cache)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "value_cache is given but value is NULL (K-only: pass neither)");
  if (!value && v_scale)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op, "v_scale given without value");
  llmk__kv_side_args sides[2] = {
      {key, key_cache, k_scale, "key", "key_cache", "k_scale"},
      {value, value_cache, v_scale, "value", "value_cache", "v_scale"}};
  return llmk__kv_plan(op, false, sides, layout, slot_mapping, "slot_mapping", NULL, NULL,
                       NULL, NULL, false, workspace_size, plan);
}

static int parts_for(llmk_context *ctx, int64_t n, int64_t grain) {
  return llmk__parallel_tasks(ctx, (n + grain - 1) / grain);
}

typedef struct scatter_job {
  const kv_plan *p;
  const unsigned char *skip; /* NULL: every token writes */
  bool stream;
} scatter_job;

/* Rows of KV_PREFETCH_ROW bytes or more are not prefetched: their own copy keeps
 * enough misses in flight, and the prefetches cost more than they save (decode T=256,
 * 2 KiB rows: 1.4x a plain memcpy loop with them, 1.15x without). */
#define KV_PREFETCH_ROW 512

/* kv_plan.rows: one copy per token and side, the cache row at element slot * cache_so
 * (that is b * cache_sb + o * cache_so, an offset phase 1 checked). */
static void scatter_rows(const scatter_job *j, int64_t t0, int64_t t1) {
  const kv_plan *p = j->p;
  const llmk__kv_side *ks = &p->side[0], *vs = &p->side[1];
  const bool has_v = vs->present && vs->nruns > 0, has_k = ks->present && ks->nruns > 0;
  const bool pf = !j->stream && ((has_k && ks->row_bytes < KV_PREFETCH_ROW) ||
                                 (has_v && vs->row_bytes < KV_PREFETCH_ROW));
  for (int64_t t = t0; t < t1; t++) {
    if (pf && t + KV_PREFETCH_AHEAD < t1) {
      int64_t ps = llmk__view_get(&p->slots, t + KV_PREFETCH_AHEAD, 0);
      if (ps >= 0) prefetch_slot(p, ps, true);
    }
    int64_t s = llmk__view_get(&p->slots, t, 0);
    if (s < 0 || (j->skip && j->skip[t])) continue;
    if (has_k) {
      char *dst = ks->cache + (size_t)(s * ks->cache_so) * ks->cache_esz;
      const char *src = ks->tok + (size_t)(t * ks->tok_s0) * ks->tok_esz;
      if (j->stream)
        p->kern->copy(dst, src, ks->row_bytes, true);
      else
        memcpy(dst, src, ks->row_bytes);
    }
    if (has_v) {
      char *dst = vs->cache + (size_t)(s * vs->cache_so) * vs->cache_esz;
      const char *src = vs->tok + (size_t)(t * vs->tok_s0) * vs->tok_esz;
      if (j->stream)
        p->kern->copy(dst, src, vs->row_bytes, true);
      else
        memcpy(dst, src, vs->row_bytes);
    }
  }
  if (j->stream) p->kern->fence();
}

static void scatter_range(void *arg, int64_t t0, int64_t t1) {
  const scatter_job *j = arg;
  const kv_plan *p = j->p;
  if (p->rows) {
    scatter_rows(j, t0, t1);
    return;
  }
  bool grouping = p->side[0].group || p->side[1].group;
  for (int64_t t = t0; t < t1;) {
    if (!j->stream && t + KV_PREFETCH_AHEAD < t1) {
      int64_t ps = llmk__view_get(&p->slots, t + KV_PREFETCH_AHEAD, 0);
      if (ps >= 0) prefetch_slot(p, ps, true);
    }
    int64_t s = llmk__view_get(&p->slots, t, 0);
    if (s < 0 || (j->skip && j->skip[t])) {
      t++;
      continue;
    }
    int64_t g = 1;
    if (grouping) {
      int64_t room = p->block_size - s % p->block_size;
      while (g < KV_GROUP_MAX && g < room && t + g < t1 &&
             llmk__view_get(&p->slots, t + g, 0) == s + g && !(j->skip && j->skip[t + g]))
        g++;
    }
    move_slots(p, t, g, s, j->stream);
    t += g;
  }
  if (j->stream) p->kern->fence();
}

/* Marks every token whose slot a later token also writes, so that tokens can be split
 * over threads and the last one still wins. */
static unsigned char *mark_overwritten(const kv_plan *p, void *workspace) {
  int64_t T = p->T;
  size_t cap = 16;
  while (cap < (size_t)T * 2) cap *= 2;
  int64_t *table = align16(workspace); /* cap tokens (-1: empty), keyed by their slot */
  unsigned char *skip = (unsigned char *)(table + 2 * cap);
  memset(table, 0xff, cap * sizeof *table);
  memset(skip, 0, (size_t)T);
  const int shift = 64 - __builtin_ctzll((unsigned long long)cap);
  for (int64_t t = 0; t < T; t++) {
    int64_t s = llmk__view_get(&p->slots, t, 0);
    if (s < 0) continue;
    for (size_t i = (size_t)(((uint64_t)s * 0x9e3779b97f4a7c15ull) >> shift);;
         i = (i + 1) & (cap - 1)) {
      int64_t u = table[i];
      if (u < 0 || llmk__view_get(&p->slots, u, 0) == s) {
        if (u >= 0) skip[u] = 1;
        table[i] = t;
        break;
      }
    }
  }
  return skip;
}

static llmk_status run_scatter(const void *payload, void *workspace, llmk_context *ctx) {
  const kv_plan *p = payload;
  if (p->cz.mode) return llmk__kv_run_compressed(p);
  llmk_status st = LLMK_SUCCESS;
  st = llmk__kv_check_scales(p);
  int64_t num_slots = p->num_slots;
  /* a slot_mapping of stride 0 holds one value, however long */
  int64_t distinct = p->slots.s0 == 0 && p->T > 0 ? 1 : p->T;
  for (int64_t t = 0; st == LLMK_SUCCESS && t < distinct; t++) {
    int64_t s = llmk__view_get(&p->slots, t, 0);
    if (s >= num_slots)
      st = llmk__error(LLMK_ERROR_INVALID_VALUE, llmk__scatter_op,
                       "slot_mapping[%" PRId64 "]=%" PRId64
                       " is out of range: num_blocks*block_size=%" PRId64
                       " (negative slots are skipped)",
                       t, s, num_slots);
  }
  if (st == LLMK_SUCCESS && llmk__kv_moves(p)) {
    int64_t grain = llmk__kv_token_grain(p);
    scatter_job job = {p, NULL, llmk__kv_use_streaming(p)};
    if (parts_for(ctx, p->T, grain) > 1) job.skip = mark_overwritten(p, workspace);
    llmk__parallel_for(ctx, p->T, grain, scatter_range, &job);
  }
  return st;
}

llmk_status llmk_scatter_pa_kv_cache(void *workspace, size_t workspace_size,
                                     llmk_plan *plan, llmk_context *ctx) {
  return llmk__plan_run(llmk__scatter_op, LLMK__OP_SCATTER_KV, plan, workspace,
                        workspace_size, ctx, run_scatter);
}
