/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Naive reference of scatter_pa_kv_cache, written from the spec (kv_cache_scatter.md)
 * and the layout definitions of <llmk/kv_cache.h>, not from the library: one element at
 * a time, its byte offset computed from the layout formula, fp8 through the format
 * definitions of convert_ref.h. Tensors are plain llmk_tensor descriptors (nothing of
 * the library is called).
 */
#ifndef LLMK_SCATTER_PA_KV_CACHE_REF_H
#define LLMK_SCATTER_PA_KV_CACHE_REF_H

#include <stddef.h>
#include <stdint.h>

#include "llmk/types.h"

/* The values of llmk_kv_layout. */
enum { KVREF_BLOCKS = 0, KVREF_XSPLIT = 1, KVREF_NZ = 2 };

/* Element size in bytes from the dtype definitions; 0 for an invalid dtype. */
size_t kvref_esize(llmk_dtype dtype);

/* Where logical element (b, o, h, d) of one cache lives. */
typedef struct kvref_view {
  int layout;   /* KVREF_* */
  int is_value; /* x-split only: the value cache's [nb, H, D, bs] form */
  size_t esize; /* cache element size */
  int64_t num_blocks, block_size, H, D;
  int64_t x;          /* x-split key: x = 16 / esize; NZ: ld = 32 / esize; else 1 */
  int64_t strides[5]; /* of the layout's physical dims, in elements */
} kvref_view;

/* Reads num_blocks, block_size and strides from a cache descriptor of `layout`, for
 * sources with H heads of D elements. Returns 0, or -1 if rank or shape is not the
 * layout's: BLOCKS [nb, bs, H, D]; XSPLIT key [nb, H, D/x, bs, x], value
 * [nb, H, D, bs]; NZ [nb, H*D/ld, bs, ld]. */
int kvref_view_init(kvref_view *v, const llmk_tensor *cache, int layout, int is_value,
                    int64_t H, int64_t D);

/* Byte offset from the cache's data pointer of element (b, o, h, d). */
static inline int64_t kvref_byte_offset(const kvref_view *v, int64_t b, int64_t o,
                                        int64_t h, int64_t d) {
  const int64_t *s = v->strides;
  int64_t e;
  if (v->layout == KVREF_BLOCKS) {
    e = b * s[0] + o * s[1] + h * s[2] + d * s[3];
  } else if (v->layout == KVREF_XSPLIT) {
    if (v->is_value)
      e = b * s[0] + h * s[1] + d * s[2] + o * s[3];
    else
      e = b * s[0] + h * s[1] + (d / v->x) * s[2] + o * s[3] + (d % v->x) * s[4];
  } else {
    int64_t i = h * v->D + d;
    e = b * s[0] + (i / v->x) * s[1] + o * s[2] + (i % v->x) * s[3];
  }
  return e * (int64_t)v->esize;
}

/* scatter_pa_kv_cache into key_cache->data / value_cache->data (the descriptors are
 * const; the bytes they point to are written). key [T, H, Dk], value [T, H, Dv] or
 * NULL (then value_cache and v_scale are ignored), slot_mapping [T] i32 or i64,
 * scales f32 [], [1] or [H] (NULL when the cache has the source's dtype).
 * Same dtype: bit copy. fp8 cache from f32/f16/bf16: fp8(f32(src) / scale[h]) with an
 * f32 division, rounded to nearest even and saturating (ref_encode).
 * Returns 0; -1 without writing anything if a slot >= num_blocks * block_size or a
 * scale value is not finite and > 0; -2 (nothing written) for descriptors no valid
 * call has (a test bug).
 * nan_map_k / nan_map_v (optional): byte maps indexed like the caches' bytes from their
 * data pointers; the byte of every element where a conversion stored a NaN is set to 1
 * (the test accepts any quiet NaN of the right sign there: convert.h leaves open which
 * of e5m2's two quiet NaNs a NaN becomes). */
int kvref_scatter(const llmk_tensor *key, const llmk_tensor *value,
                  const llmk_tensor *key_cache, const llmk_tensor *value_cache,
                  const llmk_tensor *slot_mapping, const llmk_tensor *k_scale,
                  const llmk_tensor *v_scale, int layout, unsigned char *nan_map_k,
                  unsigned char *nan_map_v);

#endif
