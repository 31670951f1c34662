/* SPDX-License-Identifier: Apache-2.0 */
#include "gather_pa_kv_cache_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_ref.h"
#include "ref_util.h"

static void die(const char *what) {
  fprintf(stderr, "gather_pa_kv_cache_ref: %s\n", what);
  exit(2);
}

static ref_fmt fmt_of(llmk_dtype d) {
  switch (d) {
    case LLMK_F16:
      return REF_F16;
    case LLMK_BF16:
      return REF_BF16;
    case LLMK_FP8_E4M3FN:
      return REF_FP8_E4M3FN;
    case LLMK_FP8_E5M2:
      return REF_FP8_E5M2;
    default:
      die("not a narrow float");
      return REF_F16;
  }
}

/* Element offset of cache element (b, o, h, d), from the layout definitions. */
static int64_t cache_off(int layout, int is_value, const llmk_tensor *c, int64_t D,
                         int64_t b, int64_t o, int64_t h, int64_t d) {
  const int64_t *s = c->strides;
  int64_t es = (int64_t)ref_dtype_size(c->dtype);
  switch (layout) {
    case 0:
      return b * s[0] + o * s[1] + h * s[2] + d * s[3];
    case 1: {
      int64_t x = 16 / es;
      if (!is_value)
        return b * s[0] + h * s[1] + (d / x) * s[2] + o * s[3] + (d % x) * s[4];
      return b * s[0] + h * s[1] + d * s[2] + o * s[3];
    }
    default: {
      int64_t ld = 32 / es, e = h * D + d;
      return b * s[0] + (e / ld) * s[1] + o * s[2] + (e % ld) * s[3];
    }
  }
}

static int64_t block_size_of(int layout, const llmk_tensor *c) {
  return layout == 0 ? c->shape[1] : layout == 1 ? c->shape[3] : c->shape[2];
}

void gather_pa_kv_cache_ref_one_at(int layout, int is_value, const llmk_tensor *cache,
                                   const int64_t *starts, const int64_t *seq_lens,
                                   const int64_t *first_col, int64_t batch,
                                   const int64_t *block_tables, int64_t max_blocks,
                                   const float *scales, int64_t num_scales,
                                   const llmk_tensor *out,
                                   gather_pa_kv_cache_ref_nan_fn nan, void *user) {
  const llmk_dtype cdt = cache->dtype, odt = out->dtype;
  const size_t ces = ref_dtype_size(cdt), oes = ref_dtype_size(odt);
  const int64_t H = out->shape[1], D = out->shape[2], bs = block_size_of(layout, cache);
  const int64_t *os = out->strides;
  const char *cb = cache->data;
  char *ob = out->data;
  /* dequantization: every (head, code) once, from convert_ref */
  uint32_t *lut = NULL;
  if (cdt != odt) {
    lut = malloc((size_t)H * 256 * sizeof *lut);
    if (!lut) die("out of memory");
    for (int64_t h = 0; h < H; h++)
      for (uint32_t code = 0; code < 256; code++) {
        float f = (float)ref_decode(fmt_of(cdt), code);
        float sc = num_scales > 1 ? scales[h] : scales[0];
        /* a product of two floats is exact in double: one rounding to f32 */
        float prod = (float)((double)f * (double)sc);
        uint32_t u;
        if (odt == LLMK_F32)
          memcpy(&u, &prod, 4);
        else
          u = ref_encode(fmt_of(odt), prod);
        lut[h * 256 + code] = u;
      }
  }
  int64_t t = 0;
  for (int64_t i = 0; i < batch; i++) {
    if (starts) t = starts[i];
    int64_t col0 = first_col ? first_col[i] : 0;
    for (int64_t p = 0; p < seq_lens[i]; p++, t++) {
      int64_t blk = block_tables[i * max_blocks + col0 + p / bs], o = p % bs;
      for (int64_t h = 0; h < H; h++)
        for (int64_t d = 0; d < D; d++) {
          const char *sp =
              cb + cache_off(layout, is_value, cache, D, blk, o, h, d) * (int64_t)ces;
          char *dp = ob + (t * os[0] + h * os[1] + d * os[2]) * (int64_t)oes;
          if (cdt == odt) {
            memcpy(dp, sp, ces);
            continue;
          }
          uint8_t code = *(const uint8_t *)sp;
          memcpy(dp, &lut[h * 256 + code], oes); /* little-endian low bytes */
          if (nan && ref_is_nan(fmt_of(cdt), code)) nan(user, dp, code >> 7);
        }
    }
  }
  free(lut);
}

void gather_pa_kv_cache_ref_one(int layout, int is_value, const llmk_tensor *cache,
                                const int64_t *seq_lens, int64_t batch,
                                const int64_t *block_tables, int64_t max_blocks,
                                const float *scales, int64_t num_scales,
                                const llmk_tensor *out, gather_pa_kv_cache_ref_nan_fn nan,
                                void *user) {
  gather_pa_kv_cache_ref_one_at(layout, is_value, cache, NULL, seq_lens, NULL, batch,
                                block_tables, max_blocks, scales, num_scales, out, nan,
                                user);
}
