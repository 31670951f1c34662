/* SPDX-License-Identifier: Apache-2.0 */
/* scatter_pa_kv_cache_compressed: phase 1, and the phase 2 that
 * llmk_scatter_pa_kv_cache runs for its plans (semantics: include/llmk/kv_cache.h and
 * docs/ops/scatter_pa_kv_cache.md, "Compressed writes"). Each (sequence, head) pair
 * writes a run of single-head rows; runs are short and few, so the writes are one
 * serial pass in pair order (a later pair wins a slot written twice). */
#include <inttypes.h>
#include <string.h>

#include "core/op.h"
#include "core/overlap.h"
#include "ops/kv_cache/kv_cache.h"

static const char *mode_name(int mode) {
  return mode == LLMK_KV_COMPRESS_ALIBI  ? "alibi"
         : mode == LLMK_KV_COMPRESS_ROPE ? "rope"
                                         : "omni";
}

static llmk_status check_index(const char *op, const char *name, const llmk_tensor *t,
                               int64_t n, const char *what) {
  LLMK__TRY(llmk__check_tensor(op, name, t));
  LLMK__TRY(llmk__check_dtype(op, name, t, LLMK__INTS));
  LLMK__TRY(llmk__check_rank(op, name, t, 1));
  return llmk__check_dim(op, name, t, 0, n, what);
}

/* One side: tok [N, H, D] and cache [num_blocks, block_size, 1, D] of one dtype. */
static llmk_status check_side(const char *op, const llmk_tensor *tok,
                              const llmk_tensor *cache, const char *tn, const char *cn,
                              int mode, kv_cz_side *out) {
  LLMK__TRY(llmk__check_tensor(op, tn, tok));
  LLMK__TRY(llmk__check_tensor(op, cn, cache));
  size_t esz = llmk_dtype_size(tok->dtype);
  if (esz != 1 && esz != 2 && esz != 4)
    return llmk__error(LLMK_ERROR_INVALID_DTYPE, op,
                       "%s: elements of %zu bytes (1, 2 or 4 are copied)", tn, esz);
  if (mode == LLMK_KV_COMPRESS_ROPE)
    LLMK__TRY(llmk__check_dtype(op, tn, tok, LLMK__FLOATS));
  if (cache->dtype != tok->dtype)
    return llmk__error(LLMK_ERROR_INVALID_DTYPE, op,
                       "%s dtype %s differs from %s dtype %s (compressed writes copy)",
                       cn, llmk_dtype_name(cache->dtype), tn,
                       llmk_dtype_name(tok->dtype));
  LLMK__TRY(llmk__check_rank(op, tn, tok, 3));
  LLMK__TRY(llmk__check_rank(op, cn, cache, 4));
  LLMK__TRY(llmk__check_dim(op, cn, cache, 2, 1, "1 (one head per row)"));
  LLMK__TRY(llmk__check_dim(op, cn, cache, 3, tok->shape[2], "the head size"));
  *out = (kv_cz_side){.present = true,
                      .tok = tok->data,
                      .cache = cache->data,
                      .dtype = tok->dtype,
                      .esz = esz,
                      .D = tok->shape[2],
                      .ts0 = tok->strides[0],
                      .ts1 = tok->strides[1],
                      .ts2 = tok->strides[2],
                      .cs0 = cache->strides[0],
                      .cs1 = cache->strides[1],
                      .cs3 = cache->strides[3]};
  return LLMK_SUCCESS;
}

llmk_status llmk_scatter_pa_kv_cache_compressed_get_workspace_size(
    const llmk_tensor *key, const llmk_tensor *value, const llmk_tensor *key_cache,
    const llmk_tensor *value_cache, const llmk_tensor *slot_mapping,
    const llmk_tensor *compress_lens, const llmk_tensor *compress_seq_offset,
    const llmk_tensor *seq_lens, llmk_kv_compress mode, size_t *workspace_size,
    llmk_plan **plan) {
  const char *op = llmk__scatter_op;
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  if (mode != LLMK_KV_COMPRESS_ALIBI && mode != LLMK_KV_COMPRESS_ROPE &&
      mode != LLMK_KV_COMPRESS_OMNI)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "compress mode %d is not ALIBI (1), ROPE (2) or OMNI (3)",
                       (int)mode);
  if (!key) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key is NULL");
  if (!key_cache) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key_cache is NULL");
  if (!slot_mapping)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "slot_mapping is NULL");
  if (!compress_lens)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "compress_lens is NULL");
  if (!seq_lens) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "seq_lens is NULL");
  if (value && !value_cache)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op,
                       "value_cache is NULL but value is given");
  if (!value && value_cache)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "value_cache is given but value is NULL (K-only: pass neither)");
  if (mode == LLMK_KV_COMPRESS_ALIBI && compress_seq_offset)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "compress_seq_offset is given but alibi does not read it");
  if (mode != LLMK_KV_COMPRESS_ALIBI && !compress_seq_offset)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "compress_seq_offset is NULL (%s)",
                       mode_name(mode));
  kv_compress cz = {.mode = mode};
  LLMK__TRY(check_side(op, key, key_cache, "key", "key_cache", mode, &cz.side[0]));
  int64_t N = key->shape[0], H = key->shape[1];
  int64_t nb = key_cache->shape[0], bs = key_cache->shape[1];
  if (value) {
    LLMK__TRY(
        check_side(op, value, value_cache, "value", "value_cache", mode, &cz.side[1]));
    LLMK__TRY(llmk__check_dim(op, "value", value, 0, N, "key's tokens"));
    LLMK__TRY(llmk__check_dim(op, "value", value, 1, H, "key's heads"));
    LLMK__TRY(
        llmk__check_dim(op, "value_cache", value_cache, 0, nb, "key_cache's blocks"));
    LLMK__TRY(
        llmk__check_dim(op, "value_cache", value_cache, 1, bs, "key_cache's block size"));
  }
  LLMK__TRY(llmk__check_tensor(op, "seq_lens", seq_lens));
  LLMK__TRY(llmk__check_dtype(op, "seq_lens", seq_lens, LLMK__INTS));
  LLMK__TRY(llmk__check_rank(op, "seq_lens", seq_lens, 1));
  int64_t B = seq_lens->shape[0], BH;
  if (__builtin_mul_overflow(B, H, &BH))
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "seq_lens [%" PRId64 "] times %" PRId64 " heads overflows", B, H);
  LLMK__TRY(check_index(op, "slot_mapping", slot_mapping, BH, "B * H"));
  LLMK__TRY(check_index(op, "compress_lens", compress_lens, BH, "B * H"));
  if (compress_seq_offset)
    LLMK__TRY(check_index(op, "compress_seq_offset", compress_seq_offset, BH, "B * H"));
  int64_t num_slots;
  if (__builtin_mul_overflow(nb, bs, &num_slots))
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "num_blocks %" PRId64 " * block_size %" PRId64 " overflows", nb,
                       bs);
  const llmk__tref ts[] = {{key, "key", false},
                           {value, "value", false},
                           {key_cache, "key_cache", true},
                           {value_cache, "value_cache", true},
                           {slot_mapping, "slot_mapping", false},
                           {compress_lens, "compress_lens", false},
                           {compress_seq_offset, "compress_seq_offset", false},
                           {seq_lens, "seq_lens", false}};
  LLMK__TRY(llmk__check_overlaps(op, ts, (int)(sizeof ts / sizeof ts[0]), NULL, 0));
  cz.N = N;
  cz.H = H;
  cz.B = B;
  cz.lens = llmk__view_of(compress_lens);
  cz.offs = llmk__view_of(compress_seq_offset);
  cz.seqs = llmk__view_of(seq_lens);
  LLMK__TRY(llmk__plan_create(op, LLMK__OP_SCATTER_KV, sizeof(kv_plan), 0, plan));
  kv_plan *p = llmk__plan_payload(*plan);
  p->op = op;
  p->T = BH;
  p->num_blocks = nb;
  p->block_size = bs;
  p->num_slots = num_slots;
  p->slots = llmk__view_of(slot_mapping);
  p->cz = cz;
  return LLMK_SUCCESS;
}

/* Pair i's rows: n rows to slots s.. (n = 0: none); the window [o, o + w) of its
 * sequence is what ROPE averages into row o and OMNI drops (w = 0: nothing). */
typedef struct cz_pair {
  int64_t s, n, start, L, o, w;
} cz_pair;

static llmk_status pair_of(const kv_plan *p, int64_t i, int64_t start, int64_t L,
                           cz_pair *q) {
  const kv_compress *cz = &p->cz;
  int64_t w = llmk__view_get(&cz->lens, i, 0);
  *q = (cz_pair){.s = llmk__view_get(&p->slots, i, 0), .start = start, .L = L};
  if (w < 0)
    return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                       "compress_lens[%" PRId64 "]=%" PRId64 " is negative", i, w);
  if (cz->mode == LLMK_KV_COMPRESS_ALIBI) {
    if (w > L)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                         "compress_lens[%" PRId64 "]=%" PRId64
                         " is above its sequence's %" PRId64 " tokens (alibi)",
                         i, w, L);
    q->o = L - w; /* the rows: tokens [L - w, L) */
    q->n = w;
  } else {
    int64_t o = llmk__view_get(&cz->offs, i, 0);
    if (o != -1 && (o < 0 || o > L))
      return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                         "compress_seq_offset[%" PRId64 "]=%" PRId64
                         " is neither -1 nor in [0, %" PRId64 "]",
                         i, o, L);
    if (o == -1 || w == 0 || o == L) {
      o = L;
      w = 0;
    } else if (w > L - o) {
      return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                         "compress_seq_offset[%" PRId64 "]=%" PRId64
                         " + compress_lens[%" PRId64 "]=%" PRId64
                         " is above its sequence's %" PRId64 " tokens",
                         i, o, i, w, L);
    }
    q->o = o;
    q->w = w;
    q->n = L - w + (cz->mode == LLMK_KV_COMPRESS_ROPE && w > 0 ? 1 : 0);
  }
  if (q->s >= 0 && (q->s >= p->num_slots || q->s > p->num_slots - q->n))
    return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                       "slot_mapping[%" PRId64 "]=%" PRId64 " + %" PRId64
                       " rows is past num_blocks*block_size=%" PRId64
                       " (negative slots are skipped)",
                       i, q->s, q->n, p->num_slots);
  return LLMK_SUCCESS;
}

static char *cache_at(const kv_cz_side *k, const kv_plan *p, int64_t slot) {
  int64_t b = slot / p->block_size, o = slot % p->block_size;
  return k->cache + (size_t)(b * k->cs0 + o * k->cs1) * k->esz;
}

static void copy_row(const kv_cz_side *k, const kv_plan *p, int64_t t, int64_t h,
                     int64_t slot) {
  const char *src = k->tok + (size_t)(t * k->ts0 + h * k->ts1) * k->esz;
  char *dst = cache_at(k, p, slot);
  for (int64_t d = 0; d < k->D; d++)
    memcpy(dst + (size_t)(d * k->cs3) * k->esz, src + (size_t)(d * k->ts2) * k->esz,
           k->esz);
}

/* ROPE: row `slot` = the mean of tokens t0..t0+w-1 of head h (f32 sums in token order,
 * one f32 division, rounded once to the dtype). */
static void mean_row(const kv_cz_side *k, const kv_plan *p, int64_t t0, int64_t w,
                     int64_t h, int64_t slot) {
  char *dst = cache_at(k, p, slot);
  for (int64_t d = 0; d < k->D; d++) {
    float sum = 0.0f;
    for (int64_t j = 0; j < w; j++)
      sum += llmk__load_f32(
          k->tok + (size_t)((t0 + j) * k->ts0 + h * k->ts1 + d * k->ts2) * k->esz,
          k->dtype);
    llmk__store_f32(dst + (size_t)(d * k->cs3) * k->esz, k->dtype, sum / (float)w);
  }
}

static void write_pair(const kv_plan *p, const cz_pair *q, int64_t h) {
  const kv_compress *cz = &p->cz;
  for (int side = 0; side < 2; side++) {
    const kv_cz_side *k = &cz->side[side];
    if (!k->present) continue;
    if (cz->mode == LLMK_KV_COMPRESS_ALIBI) {
      for (int64_t j = 0; j < q->n; j++) copy_row(k, p, q->start + q->o + j, h, q->s + j);
      continue;
    }
    int64_t slot = q->s;
    for (int64_t j = 0; j < q->o; j++) copy_row(k, p, q->start + j, h, slot++);
    if (q->w == 0) continue;
    if (cz->mode == LLMK_KV_COMPRESS_ROPE)
      mean_row(k, p, q->start + q->o, q->w, h, slot++);
    for (int64_t j = q->o + q->w; j < q->L; j++) copy_row(k, p, q->start + j, h, slot++);
  }
}

llmk_status llmk__kv_run_compressed(const kv_plan *p) {
  const kv_compress *cz = &p->cz;
  int64_t total = 0;
  for (int64_t b = 0; b < cz->B; b++) {
    int64_t L = llmk__view_get(&cz->seqs, b, 0);
    if (L < 0)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                         "seq_lens[%" PRId64 "]=%" PRId64 " is negative", b, L);
    if (__builtin_add_overflow(total, L, &total) || total > cz->N)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                         "seq_lens up to [%" PRId64 "] add up to more than the %" PRId64
                         " tokens of key",
                         b, cz->N);
  }
  if (total != cz->N)
    return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                       "seq_lens add up to %" PRId64 ", key has %" PRId64 " tokens",
                       total, cz->N);
  /* every value first, so that a refused call writes nothing */
  cz_pair q;
  for (int pass = 0; pass < 2; pass++) {
    int64_t start = 0;
    for (int64_t b = 0; b < cz->B; b++) {
      int64_t L = llmk__view_get(&cz->seqs, b, 0);
      for (int64_t h = 0; h < cz->H; h++) {
        LLMK__TRY(pair_of(p, b * cz->H + h, start, L, &q));
        if (pass == 1 && q.s >= 0 && q.n > 0) write_pair(p, &q, h);
      }
      start += L;
    }
  }
  return LLMK_SUCCESS;
}
