/* SPDX-License-Identifier: Apache-2.0 */
/* gather_pa_kv_cache: phase 1 and phase 2 (the plan is kv_cache.c's). */
#include <inttypes.h>
#include <string.h>

#include "core/op.h"
#include "ops/kv_cache/kv_cache.h"

llmk_status llmk_gather_pa_kv_cache_ex_get_workspace_size(
    const llmk_tensor *key_cache, const llmk_tensor *value_cache,
    const llmk_tensor *block_tables, const llmk_tensor *seq_lens,
    const llmk_tensor *seq_offset, int seq_lens_cumsum, const llmk_tensor *k_scale,
    const llmk_tensor *v_scale, const llmk_tensor *key_out, const llmk_tensor *value_out,
    llmk_kv_layout layout, size_t *workspace_size, llmk_plan **plan) {
  const char *op = llmk__gather_op;
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  if (!key_cache) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key_cache is NULL");
  if (!key_out) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key_out is NULL");
  if (!block_tables)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "block_tables is NULL");
  if (!seq_lens) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "seq_lens is NULL");
  if (value_cache && !value_out)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op,
                       "value_out is NULL but value_cache is given");
  if (!value_cache && value_out)
    return llmk__error(
        LLMK_ERROR_INVALID_ATTRIBUTE, op,
        "value_out is given but value_cache is NULL (K-only: pass neither)");
  if (!value_cache && v_scale)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "v_scale given without value_cache");
  llmk__kv_side_args sides[2] = {
      {key_out, key_cache, k_scale, "key_out", "key_cache", "k_scale"},
      {value_out, value_cache, v_scale, "value_out", "value_cache", "v_scale"}};
  return llmk__kv_plan(op, true, sides, layout, block_tables, "block_tables", seq_lens,
                       "seq_lens", seq_offset, "seq_offset", seq_lens_cumsum != 0,
                       workspace_size, plan);
}

llmk_status llmk_gather_pa_kv_cache_get_workspace_size(
    const llmk_tensor *key_cache, const llmk_tensor *value_cache,
    const llmk_tensor *block_tables, const llmk_tensor *seq_lens,
    const llmk_tensor *k_scale, const llmk_tensor *v_scale, const llmk_tensor *key_out,
    const llmk_tensor *value_out, llmk_kv_layout layout, size_t *workspace_size,
    llmk_plan **plan) {
  return llmk_gather_pa_kv_cache_ex_get_workspace_size(
      key_cache, value_cache, block_tables, seq_lens, NULL, 0, k_scale, v_scale, key_out,
      value_out, layout, workspace_size, plan);
}

/* The block-table column of sequence i's first block: seq_offset[i] / block_size
 * (checked >= 0 in phase 2 before any use), or 0. */
static int64_t first_block(const kv_plan *p, int64_t i) {
  if (!p->has_offs || p->block_size == 0 || i >= p->B) return 0;
  return llmk__view_get(&p->offs, i, 0) / p->block_size;
}

typedef struct gather_job {
  const kv_plan *p;
  const int64_t *start; /* [B + 1]: first output token of each sequence */
  int64_t base;         /* start[0]: the first token written */
  bool stream;
} gather_job;

static void gather_range(void *arg, int64_t t0, int64_t t1) {
  const gather_job *j = arg;
  t0 += j->base;
  t1 += j->base;
  const kv_plan *p = j->p;
  /* the sequence holding t0: the last i with start[i] <= t0 */
  int64_t lo = 0, hi = p->B;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (j->start[mid] <= t0)
      lo = mid;
    else
      hi = mid;
  }
  int64_t i = lo, pos = t0 - j->start[i];
  int64_t first = first_block(p, i);
  bool grouping = p->side[0].group || p->side[1].group;
  for (int64_t t = t0; t < t1;) {
    while (t >= j->start[i + 1]) { /* next non-empty sequence */
      i++;
      pos = 0;
      first = first_block(p, i);
    }
    int64_t o = pos % p->block_size, g = 1;
    if (grouping) {
      g = p->block_size - o;
      if (g > j->start[i + 1] - t) g = j->start[i + 1] - t;
      if (g > t1 - t) g = t1 - t;
      if (g > KV_GROUP_MAX) g = KV_GROUP_MAX;
    }
    int64_t blk = llmk__view_get(&p->tables, i, first + pos / p->block_size);
    move_slots(p, t, g, blk * p->block_size + o, j->stream);
    t += g;
    pos += g;
  }
  if (j->stream) p->kern->fence();
}

static llmk_status run_gather(const void *payload, void *workspace, llmk_context *ctx) {
  const kv_plan *p = payload;
  llmk_status st = LLMK_SUCCESS;
  int64_t *start = align16(workspace);
  st = llmk__kv_check_scales(p);
  int64_t total = 0;
  if (st == LLMK_SUCCESS && p->cumsum) {
    total = llmk__view_get(&p->lens, 0, 0);
    if (total < 0)
      st = llmk__error(LLMK_ERROR_INVALID_VALUE, llmk__gather_op,
                       "seq_lens[0]=%" PRId64 " is negative (cumulative)", total);
  }
  for (int64_t i = 0; st == LLMK_SUCCESS && i < p->B; i++) {
    int64_t len;
    if (p->cumsum) {
      int64_t end = llmk__view_get(&p->lens, i + 1, 0);
      if (end < total) {
        st = llmk__error(LLMK_ERROR_INVALID_VALUE, llmk__gather_op,
                         "seq_lens[%" PRId64 "]=%" PRId64 " is below seq_lens[%" PRId64
                         "]=%" PRId64 " (cumulative seq_lens must not decrease)",
                         i + 1, end, i, total);
        break;
      }
      len = end - total;
    } else {
      len = llmk__view_get(&p->lens, i, 0);
    }
    if (len < 0) {
      st = llmk__error(LLMK_ERROR_INVALID_VALUE, llmk__gather_op,
                       "seq_lens[%" PRId64 "]=%" PRId64 " is negative", i, len);
      break;
    }
    int64_t first = 0;
    if (p->has_offs) {
      int64_t off = llmk__view_get(&p->offs, i, 0);
      if (off < 0) {
        st = llmk__error(LLMK_ERROR_INVALID_VALUE, llmk__gather_op,
                         "seq_offset[%" PRId64 "]=%" PRId64 " is negative", i, off);
        break;
      }
      first = p->block_size == 0 ? 0 : off / p->block_size;
    }
    int64_t blocks =
        len == 0 ? 0 : (p->block_size == 0 ? INT64_MAX : (len - 1) / p->block_size + 1);
    if ((blocks > 0 && blocks > p->max_blocks - first) ||
        (len > 0 && p->block_size == 0)) {
      st = llmk__error(LLMK_ERROR_INVALID_VALUE, llmk__gather_op,
                       "seq_lens[%" PRId64 "]=%" PRId64 " needs %s%" PRId64
                       " blocks of %" PRId64 " from block-table column %" PRId64
                       ", but max_blocks=%" PRId64,
                       i, len, blocks == INT64_MAX ? "more than " : "",
                       blocks == INT64_MAX ? p->max_blocks : blocks, p->block_size, first,
                       p->max_blocks);
      break;
    }
    for (int64_t b = 0; b < blocks; b++) {
      int64_t id = llmk__view_get(&p->tables, i, first + b);
      if (id < 0 || id >= p->num_blocks) {
        st = llmk__error(LLMK_ERROR_INVALID_VALUE, llmk__gather_op,
                         "block_tables[%" PRId64 "][%" PRId64 "]=%" PRId64
                         " is outside [0, num_blocks=%" PRId64 ")",
                         i, first + b, id, p->num_blocks);
        break;
      }
    }
    start[i] = total;
    if (st == LLMK_SUCCESS && __builtin_add_overflow(total, len, &total))
      st = llmk__error(LLMK_ERROR_INVALID_VALUE, llmk__gather_op,
                       "sum(seq_lens) overflows");
  }
  if (st == LLMK_SUCCESS && total != p->T)
    st = llmk__error(LLMK_ERROR_INVALID_VALUE, llmk__gather_op,
                     "%s=%" PRId64 " must equal key_out.shape[0]=%" PRId64,
                     p->cumsum ? "seq_lens[B]" : "sum(seq_lens)", total, p->T);
  if (st == LLMK_SUCCESS && llmk__kv_moves(p)) {
    start[p->B] = total;
    int64_t base = p->B > 0 ? start[0] : total;
    gather_job job = {p, start, base, llmk__kv_use_streaming(p)};
    if (p->T > base)
      llmk__parallel_for(ctx, p->T - base, llmk__kv_token_grain(p), gather_range, &job);
  }
  return st;
}

llmk_status llmk_gather_pa_kv_cache(void *workspace, size_t workspace_size,
                                    llmk_plan *plan, llmk_context *ctx) {
  return llmk__plan_run(llmk__gather_op, LLMK__OP_GATHER_KV, plan, workspace,
                        workspace_size, ctx, run_gather);
}
