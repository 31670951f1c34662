/* SPDX-License-Identifier: Apache-2.0 */
#include "scatter_pa_kv_cache_ref.h"

#include <math.h>
#include <string.h>

#include "convert_ref.h"
#include "ref_util.h"

size_t kvref_esize(llmk_dtype dtype) {
  return ref_dtype_size(dtype);
}

int kvref_view_init(kvref_view *v, const llmk_tensor *c, int layout, int is_value,
                    int64_t H, int64_t D) {
  memset(v, 0, sizeof *v);
  v->layout = layout;
  v->is_value = is_value;
  v->esize = kvref_esize(c->dtype);
  v->H = H;
  v->D = D;
  v->x = 1;
  if (v->esize == 0 || v->esize > 4) return -1;
  const int64_t *sh = c->shape;
  if (layout == KVREF_BLOCKS) {
    if (c->rank != 4 || sh[2] != H || sh[3] != D) return -1;
    v->num_blocks = sh[0];
    v->block_size = sh[1];
  } else if (layout == KVREF_XSPLIT && is_value) {
    if (c->rank != 4 || sh[1] != H || sh[2] != D) return -1;
    v->num_blocks = sh[0];
    v->block_size = sh[3];
  } else if (layout == KVREF_XSPLIT) {
    v->x = 16 / (int64_t)v->esize;
    if (c->rank != 5 || D % v->x != 0 || sh[1] != H || sh[2] != D / v->x || sh[4] != v->x)
      return -1;
    v->num_blocks = sh[0];
    v->block_size = sh[3];
  } else if (layout == KVREF_NZ) {
    v->x = 32 / (int64_t)v->esize;
    if (c->rank != 4 || (H * D) % v->x != 0 || sh[1] != H * D / v->x || sh[3] != v->x)
      return -1;
    v->num_blocks = sh[0];
    v->block_size = sh[2];
  } else {
    return -1;
  }
  for (int k = 0; k < c->rank; k++) v->strides[k] = c->strides[k];
  return 0;
}

static int is_fp8(llmk_dtype d) {
  return d == LLMK_FP8_E4M3FN || d == LLMK_FP8_E5M2;
}
static int is_float_src(llmk_dtype d) {
  return d == LLMK_F32 || d == LLMK_F16 || d == LLMK_BF16;
}

static const unsigned char *elem3(const llmk_tensor *t, int64_t i, int64_t j, int64_t k) {
  return (const unsigned char *)t->data +
         (i * t->strides[0] + j * t->strides[1] + k * t->strides[2]) *
             (int64_t)kvref_esize(t->dtype);
}

static int64_t read_slot(const llmk_tensor *s, int64_t t) {
  return ref_load_index(s->data, t * s->strides[0], s->dtype);
}

static int64_t scale_count(const llmk_tensor *sc) {
  return sc->rank == 0 ? 1 : sc->shape[0];
}

/* Per tensor ([] or [1]) or per head ([H]). */
static float scale_at(const llmk_tensor *sc, int64_t h) {
  int64_t i = scale_count(sc) == 1 ? 0 : h;
  float f;
  memcpy(&f, (const unsigned char *)sc->data + (sc->rank ? i * sc->strides[0] : 0) * 4,
         4);
  return f;
}

/* The exact f32 value of an f32 / f16 / bf16 element (f16 and bf16 through the format
 * definitions; a NaN becomes a NaN of the same sign). */
static float widen(llmk_dtype dt, const unsigned char *p) {
  if (dt == LLMK_F32) {
    uint32_t u = (uint32_t)ref_load_bits(p, 0, 4);
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  return (float)ref_decode(dt == LLMK_F16 ? REF_F16 : REF_BF16,
                           (uint16_t)ref_load_bits(p, 0, 2));
}

/* ref_encode is a pure function of (format, f32 bits) but slow (a search in double);
 * a direct-mapped memo keeps the 16 MiB cases quick without changing any result. */
#define MEMO_BITS 18
static struct {
  uint32_t key, code; /* code bit 8: entry valid */
} memo[2][1u << MEMO_BITS];

static uint32_t encode(ref_fmt fmt, float q) {
  uint32_t u;
  memcpy(&u, &q, 4);
  const int f = fmt == REF_FP8_E4M3FN ? 0 : 1;
  const uint32_t i = (u * 0x9E3779B1u) >> (32 - MEMO_BITS);
  if ((memo[f][i].code & 0x100u) && memo[f][i].key == u) return memo[f][i].code & 0xFFu;
  uint32_t c = ref_encode(fmt, q);
  memo[f][i].key = u;
  memo[f][i].code = c | 0x100u;
  return c;
}

static void store_token(const llmk_tensor *src, int64_t t, const llmk_tensor *cache,
                        const kvref_view *v, const llmk_tensor *scale, int64_t b,
                        int64_t o, unsigned char *map) {
  const int64_t H = src->shape[1], D = src->shape[2];
  const size_t ses = kvref_esize(src->dtype);
  const int convert = src->dtype != cache->dtype;
  const ref_fmt fmt = cache->dtype == LLMK_FP8_E4M3FN ? REF_FP8_E4M3FN : REF_FP8_E5M2;
  for (int64_t h = 0; h < H; h++) {
    const float s = convert ? scale_at(scale, h) : 1.0f;
    for (int64_t d = 0; d < D; d++) {
      const unsigned char *sp = elem3(src, t, h, d);
      int64_t off = kvref_byte_offset(v, b, o, h, d);
      unsigned char *dp = (unsigned char *)cache->data + off;
      if (!convert) {
        memcpy(dp, sp, ses);
        continue;
      }
      float q = widen(src->dtype, sp) / s; /* one f32 division */
      uint32_t code = encode(fmt, q);
      *dp = (unsigned char)code;
      if (map) map[off] = ref_is_nan(fmt, code) ? 1 : 0;
    }
  }
}

/* -1 if a scale value is not finite and > 0. */
static int check_scale(const llmk_tensor *sc) {
  for (int64_t i = 0; i < scale_count(sc); i++) {
    float f;
    memcpy(&f, (const unsigned char *)sc->data + (sc->rank ? i * sc->strides[0] : 0) * 4,
           4);
    if (!isfinite(f) || !(f > 0.0f)) return -1;
  }
  return 0;
}

/* -2 unless the cache dtype is the source's, or fp8 from a float type with a scale. */
static int check_pair(const llmk_tensor *src, const llmk_tensor *cache,
                      const llmk_tensor *scale) {
  if (src->dtype == cache->dtype) return kvref_esize(src->dtype) ? 0 : -2;
  if (!is_fp8(cache->dtype) || !is_float_src(src->dtype) || !scale) return -2;
  if (scale->dtype != LLMK_F32 || scale->rank > 1) return -2;
  if (scale->rank == 1 && scale->shape[0] != 1 && scale->shape[0] != src->shape[1])
    return -2;
  return 0;
}

int kvref_scatter(const llmk_tensor *key, const llmk_tensor *value,
                  const llmk_tensor *key_cache, const llmk_tensor *value_cache,
                  const llmk_tensor *slot_mapping, const llmk_tensor *k_scale,
                  const llmk_tensor *v_scale, int layout, unsigned char *nan_map_k,
                  unsigned char *nan_map_v) {
  if (!key || !key_cache || !slot_mapping || (value && !value_cache)) return -2;
  if (key->rank != 3 || slot_mapping->rank != 1 ||
      slot_mapping->shape[0] != key->shape[0])
    return -2;
  if (slot_mapping->dtype != LLMK_I32 && slot_mapping->dtype != LLMK_I64) return -2;
  const int64_t T = key->shape[0], H = key->shape[1];
  kvref_view kv, vv;
  if (kvref_view_init(&kv, key_cache, layout, 0, H, key->shape[2]) != 0) return -2;
  if (check_pair(key, key_cache, k_scale) != 0) return -2;
  if (value) {
    if (value->rank != 3 || value->shape[0] != T || value->shape[1] != H) return -2;
    if (kvref_view_init(&vv, value_cache, layout, 1, H, value->shape[2]) != 0) return -2;
    if (vv.num_blocks != kv.num_blocks || vv.block_size != kv.block_size) return -2;
    if (check_pair(value, value_cache, v_scale) != 0) return -2;
  }
  const int64_t cap = kv.num_blocks * kv.block_size;

  /* every value check before the first write */
  for (int64_t t = 0; t < T; t++)
    if (read_slot(slot_mapping, t) >= cap) return -1;
  if (key->dtype != key_cache->dtype && check_scale(k_scale) != 0) return -1;
  if (value && value->dtype != value_cache->dtype && check_scale(v_scale) != 0) return -1;

  for (int64_t t = 0; t < T; t++) { /* in order: a later token wins a duplicate slot */
    int64_t s = read_slot(slot_mapping, t);
    if (s < 0) continue; /* padding */
    int64_t b = s / kv.block_size, o = s % kv.block_size;
    store_token(key, t, key_cache, &kv, k_scale, b, o, nan_map_k);
    if (value) store_token(value, t, value_cache, &vv, v_scale, b, o, nan_map_v);
  }
  return 0;
}
