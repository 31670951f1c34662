/* SPDX-License-Identifier: Apache-2.0 */
/* Cache shapes of the KV layouts, shared by the scatter and gather targets. */
#ifndef LLMK_FUZZ_KV_COMMON_H
#define LLMK_FUZZ_KV_COMMON_H

#include "fuzz_common.h"

static const llmk_dtype kv_src_dt[] = {LLMK_F16, LLMK_BF16, LLMK_F32,       LLMK_I8,
                                       LLMK_U8,  LLMK_I32,  LLMK_FP8_E4M3FN};
static const llmk_dtype kv_idx_dt[] = {LLMK_I64, LLMK_I32};
static const llmk_dtype kv_f32[] = {LLMK_F32};

/* The cache dtype: the source's, an fp8 one, or another. */
static inline llmk_dtype kv_cache_dtype(fz_reader *r, llmk_dtype src) {
  static const llmk_dtype other[] = {LLMK_FP8_E4M3FN, LLMK_FP8_E5M2, LLMK_F16, LLMK_F32};
  uint8_t b = fz_u8(r);
  return b < 0xA0 ? src : other[b % 4];
}

/* Shape (rank returned) of a cache of `layout` for D (value: is the value cache). */
static inline int kv_cache_shape(int layout, bool value, llmk_dtype dt, int64_t nb,
                                 int64_t bs, int64_t H, int64_t D, int64_t *s) {
  int64_t es = (int64_t)llmk_dtype_size(dt);
  if (es <= 0) es = 1;
  if (layout == LLMK_KV_XSPLIT) {
    int64_t x = 16 / es;
    if (value) {
      s[0] = nb, s[1] = H, s[2] = D, s[3] = bs;
      return 4;
    }
    s[0] = nb, s[1] = H, s[2] = D / x, s[3] = bs, s[4] = x;
    return 5;
  }
  if (layout == LLMK_KV_NZ) {
    int64_t ld = 32 / es, hd;
    if (__builtin_mul_overflow(H, D, &hd)) hd = INT64_MAX;
    s[0] = nb, s[1] = hd / ld, s[2] = bs, s[3] = ld;
    return 4;
  }
  s[0] = nb, s[1] = bs, s[2] = H, s[3] = D;
  return 4;
}

/* An f32 scale: absent, [], [1] or [H]; values mostly in (0, 4]. */
static inline llmk_tensor *kv_scale(fz_reader *r, fz_tensor *ft, int64_t H) {
  uint8_t m = fz_u8(r) % 4;
  if (m == 0) {
    ft->buf = -1;
    return NULL;
  }
  int64_t s[1] = {m == 2 ? 1 : H};
  llmk_tensor *t = fz_tensor_new(r, ft, kv_f32, 1, m == 1 ? 0 : 1, s);
  int64_t n = fz_numel(t);
  for (int64_t i = 0; i < n && i < 4096; i++) {
    uint8_t b = fz_u8(r);
    fz_set_float(ft, i, b < 0xF0 ? (float)(b + 1) / 64.0f : (b & 1) ? 0.0f : -1.0f);
  }
  return t;
}

static inline int kv_layout(fz_reader *r) {
  uint8_t b = fz_u8(r);
  return b < 0xF0 ? b % 3 : (b & 1) ? 3 : -1;
}

#endif
