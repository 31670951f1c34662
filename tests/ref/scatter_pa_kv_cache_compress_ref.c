/* SPDX-License-Identifier: Apache-2.0 */
#include "scatter_pa_kv_cache_compress_ref.h"

#include <stdlib.h>
#include <string.h>

#include "convert_ref.h"
#include "ref_util.h"

/* A source row: token t of the sequence, or (t = -1) the mean of tokens [m0, m0 + mw). */
typedef struct row {
  int64_t t, m0, mw;
} row;

static int64_t idx(const llmk_tensor *t, int64_t i) {
  return ref_load_index(t->data, i * t->strides[0], t->dtype);
}

static float load_float(const llmk_tensor *x, int64_t off) {
  size_t es = ref_dtype_size(x->dtype);
  uint64_t bits = ref_load_bits(x->data, off, es);
  if (x->dtype == LLMK_F32) {
    float f;
    uint32_t b = (uint32_t)bits;
    memcpy(&f, &b, 4);
    return f;
  }
  return (float)ref_decode(x->dtype == LLMK_F16 ? REF_F16 : REF_BF16, (uint32_t)bits);
}

static uint64_t encode_float(llmk_dtype dt, float f) {
  if (dt == LLMK_F32) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
  }
  return ref_encode(dt == LLMK_F16 ? REF_F16 : REF_BF16, f);
}

/* Rows of one pair; returns the count, or -1 for values the mode does not allow. */
static int64_t pair_rows(int mode, int64_t L, int64_t w, int64_t o, row *out) {
  int64_t n = 0;
  if (w < 0) return -1;
  if (mode == CZREF_ALIBI) {
    if (w > L) return -1;
    for (int64_t t = L - w; t < L; t++) out[n++] = (row){t, 0, 0};
    return n;
  }
  if (o != -1 && (o < 0 || o > L)) return -1;
  int compress = !(o == -1 || w == 0 || o == L);
  if (compress && o + w > L) return -1;
  if (!compress) {
    for (int64_t t = 0; t < L; t++) out[n++] = (row){t, 0, 0};
    return n;
  }
  for (int64_t t = 0; t < o; t++) out[n++] = (row){t, 0, 0};
  if (mode == CZREF_ROPE) out[n++] = (row){-1, o, w};
  for (int64_t t = o + w; t < L; t++) out[n++] = (row){t, 0, 0};
  return n;
}

static void put_row(const llmk_tensor *src, llmk_tensor *cache, int64_t start, int64_t h,
                    const row *r, int64_t slot) {
  int64_t bs = cache->shape[1], D = src->shape[2];
  size_t es = ref_dtype_size(src->dtype);
  int64_t b = slot / bs, o = slot % bs;
  for (int64_t d = 0; d < D; d++) {
    int64_t dst = b * cache->strides[0] + o * cache->strides[1] + d * cache->strides[3];
    if (r->t >= 0) {
      int64_t off =
          (start + r->t) * src->strides[0] + h * src->strides[1] + d * src->strides[2];
      ref_store_bits(cache->data, dst, es, ref_load_bits(src->data, off, es));
    } else {
      float sum = 0.0f;
      for (int64_t j = 0; j < r->mw; j++)
        sum += load_float(src, (start + r->m0 + j) * src->strides[0] +
                                   h * src->strides[1] + d * src->strides[2]);
      ref_store_bits(cache->data, dst, es, encode_float(src->dtype, sum / (float)r->mw));
    }
  }
}

int czref_scatter(int mode, const llmk_tensor *key, const llmk_tensor *value,
                  llmk_tensor *key_cache, llmk_tensor *value_cache,
                  const llmk_tensor *slots, const llmk_tensor *lens,
                  const llmk_tensor *offs, const llmk_tensor *seq_lens) {
  int64_t B = seq_lens->shape[0], H = key->shape[1], N = key->shape[0];
  int64_t slots_total = key_cache->shape[0] * key_cache->shape[1];
  row *rows = malloc(sizeof(row) * (size_t)(N + 1));
  int64_t sum = 0;
  for (int64_t b = 0; b < B; b++) {
    if (idx(seq_lens, b) < 0) sum = N + 1;
    sum += idx(seq_lens, b);
  }
  int bad = sum != N;
  /* pass 0 checks every pair, pass 1 writes */
  for (int pass = 0; pass < 2 && !bad; pass++) {
    int64_t start = 0;
    for (int64_t b = 0; b < B && !bad; b++) {
      int64_t L = idx(seq_lens, b);
      for (int64_t h = 0; h < H && !bad; h++) {
        int64_t i = b * H + h;
        int64_t n = pair_rows(mode, L, idx(lens, i), offs ? idx(offs, i) : 0, rows);
        int64_t s = idx(slots, i);
        if (n < 0 || (s >= 0 && (s >= slots_total || s + n > slots_total))) {
          bad = 1;
          break;
        }
        if (pass == 0 || s < 0) continue;
        for (int64_t j = 0; j < n; j++) {
          put_row(key, key_cache, start, h, &rows[j], s + j);
          if (value) put_row(value, value_cache, start, h, &rows[j], s + j);
        }
      }
      start += L;
    }
  }
  free(rows);
  return bad ? -1 : 0;
}
