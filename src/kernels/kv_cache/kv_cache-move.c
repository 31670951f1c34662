/* SPDX-License-Identifier: Apache-2.0 */
/* The movers: a token's row to or from its cache slot, run by run (kv_cache.h). */
#include <string.h>

#include "kernels/convert/convert-elem.h"
#include "kernels/kv_cache/kv_cache.h"

float llmk__kv_scale_of(const llmk__kv_side *k, int64_t head) {
  float s;
  memcpy(&s, k->scale + (k->scale_n > 1 ? head * k->scale_stride : 0) * 4, 4);
  return s;
}

static void copy_strided(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n,
                         size_t esz) {
  /* typed loops: a memcpy of a variable element size would be a call per element */
  if (esz == 2) {
    uint16_t *d = (uint16_t *)(void *)dst;
    const uint16_t *s = (const uint16_t *)(const void *)src;
    for (int64_t i = 0; i < n; i++) d[i * ds] = s[i * ss];
  } else if (esz == 1) {
    for (int64_t i = 0; i < n; i++) dst[i * ds] = src[i * ss];
  } else {
    uint32_t *d = (uint32_t *)(void *)dst;
    const uint32_t *s = (const uint32_t *)(const void *)src;
    for (int64_t i = 0; i < n; i++) d[i * ds] = s[i * ss];
  }
}

/* Element i of a run that is strided on one side, by mode. */
static inline void move_elem(const llmk__kv_side *k, const llmk__kv_run *run, char *t,
                             char *c, int64_t i, int64_t ci, float s) {
  char *te = t + (size_t)(i * run->tok_stride) * k->tok_esz;
  char *ce = c + (size_t)ci * k->cache_esz;
  if (k->mode == LLMK__KV_COPY) {
    if (k->gather)
      memcpy(te, ce, k->tok_esz);
    else
      memcpy(ce, te, k->tok_esz);
  } else if (k->mode == LLMK__KV_QUANT) {
    *(uint8_t *)ce = llmk__f32_to_fp8(llmk__load_f32(te, k->tok_dt) / s, k->e5m2);
  } else {
    llmk__store_f32(te, k->tok_dt, llmk__fp8_to_f32(*(const uint8_t *)ce, k->e5m2) * s);
  }
}

/* One run of one token: t and c point at the run's first element on each side. */
static void move_run(const llmk__kv_side *k, const llmk__kv_run *run, char *t, char *c,
                     bool stream) {
  bool unit = (run->tok_stride == 1 && run->cache_stride == 1) || run->len == 1;
  float s = k->mode == LLMK__KV_COPY ? 1.0f : llmk__kv_scale_of(k, run->head);
  if (k->mode == LLMK__KV_COPY) {
    char *dst = k->gather ? t : c;
    const char *src = k->gather ? c : t;
    if (unit) {
      size_t bytes = (size_t)run->len * k->tok_esz;
      if (bytes == 16)
        memcpy(dst, src, 16); /* x-split runs: inline, no call */
      else if (bytes == 32)
        memcpy(dst, src, 32);
      else
        k->kern->copy(dst, src, bytes, stream);
    } else if (k->gather) {
      copy_strided(t, run->tok_stride, c, run->cache_stride, run->len, k->tok_esz);
    } else {
      copy_strided(c, run->cache_stride, t, run->tok_stride, run->len, k->tok_esz);
    }
  } else if (unit && k->mode == LLMK__KV_QUANT) {
    k->kern->quant((uint8_t *)c, t, k->tok_dt, k->e5m2, (size_t)run->len, s);
  } else if (unit) {
    k->kern->dequant(t, k->tok_dt, (const uint8_t *)c, k->e5m2, (size_t)run->len, s);
  } else {
    for (int64_t i = 0; i < run->len; i++)
      move_elem(k, run, t, c, i, i * run->cache_stride, s);
  }
}

/* A bit copy of one unit-stride run; the 16- and 32-byte pieces of x-split and NZ are
 * inlined. */
static inline void copy_piece(const llmk__kv_side *k, char *dst, const char *src,
                              size_t bytes, bool stream) {
  if (bytes == 16)
    memcpy(dst, src, 16);
  else if (bytes == 32)
    memcpy(dst, src, 32);
  else
    k->kern->copy(dst, src, bytes, stream);
}

/* Moves one token's row between its [H, D] tensor and its cache slot. */
void llmk__kv_move_token(const llmk__kv_side *k, char *tok, char *cache, bool stream) {
  if (k->unit_copy) {
    for (int64_t r = 0; r < k->nruns; r++) {
      const llmk__kv_run *run = &k->runs[r];
      char *t = tok + (size_t)run->tok_off * k->tok_esz;
      char *c = cache + (size_t)run->cache_off * k->cache_esz;
      copy_piece(k, k->gather ? t : c, k->gather ? c : t, (size_t)run->len * k->tok_esz,
                 stream);
    }
    return;
  }
  for (int64_t r = 0; r < k->nruns; r++) {
    const llmk__kv_run *run = &k->runs[r];
    move_run(k, run, tok + (size_t)run->tok_off * k->tok_esz,
             cache + (size_t)run->cache_off * k->cache_esz, stream);
  }
}

/* Whether runs [r0, r1) are bit copies of pieces of `bytes` that follow each other in the
 * token row, one cache row apart (the same distance between every two), and slots are
 * `bytes` apart: then moving g tokens is a transpose of elements of that size. */
static bool pieces_in_rows(const llmk__kv_side *k, int64_t r0, int64_t r1, size_t bytes) {
  if (k->mode != LLMK__KV_COPY || k->tok_esz != k->cache_esz ||
      (size_t)k->cache_so * k->cache_esz != bytes)
    return false;
  const llmk__kv_run *a = &k->runs[r0];
  int64_t piece = (int64_t)bytes / (int64_t)k->tok_esz,
          crow = r1 - r0 > 1 ? k->runs[r0 + 1].cache_off - a->cache_off : 0;
  if (crow < 0) return false;
  for (int64_t r = r0; r < r1; r++) {
    const llmk__kv_run *b = &k->runs[r];
    if (b->len != piece || (b->tok_stride != 1 && b->len > 1) ||
        b->tok_off != a->tok_off + (r - r0) * piece ||
        b->cache_off != a->cache_off + (r - r0) * crow)
      return false;
  }
  return true;
}

/* Tokens t0..t0+g-1 to (or from) the consecutive slots of one block starting at `cache`.
 * Used where a token's row is cut into pieces and consecutive slots share cache lines
 * (x-split, NZ): the move is a small transpose, done in tiles of about one cache line
 * on each side, so that every line is read and written once (rows 2 KiB apart would
 * otherwise evict each other from the few L1 sets they map to). */
void llmk__kv_move_group(const llmk__kv_side *k, int64_t t0, int64_t g, char *cache,
                         bool stream) {
  size_t tstep = (size_t)k->tok_s0 * k->tok_esz,
         cstep = (size_t)k->cache_so * k->cache_esz;
  char *tok0 = k->tok + (size_t)(t0 * k->tok_s0) * k->tok_esz;
  int64_t r0 = 0;
  while (r0 < k->nruns) {
    const llmk__kv_run *run = &k->runs[r0];
    if (run->cache_stride == 1 || run->len == 1) {
      /* pieces: all consecutive unit runs, TJ tokens at a time, TJ pieces filling one
       * destination line; the token rows are read front to back */
      size_t rb = (size_t)run->len * k->cache_esz;
      int64_t tj = rb >= 64 ? 1 : (int64_t)(64 / rb), r1 = r0;
      while (r1 < k->nruns && (k->runs[r1].cache_stride == 1 || k->runs[r1].len == 1))
        r1++;
      void (*tr_fn)(char *, size_t, const char *, size_t, int64_t, int64_t, bool) =
          rb == 16   ? k->kern->transpose128
          : rb == 32 ? k->kern->transpose256
                     : NULL;
      if (tr_fn && pieces_in_rows(k, r0, r1, rb)) {
        /* 16- or 32-byte pieces (x-split keys, NZ), one after the other in the token
         * row and one row of slots apart in the cache: a transpose of such elements */
        char *c0 = cache + (size_t)run->cache_off * k->cache_esz,
             *tr = tok0 + (size_t)run->tok_off * k->tok_esz;
        size_t crow = r1 - r0 > 1 ? (size_t)(k->runs[r0 + 1].cache_off - run->cache_off) *
                                        k->cache_esz
                                  : 0;
        if (k->gather)
          tr_fn(tr, tstep, c0, crow, g, r1 - r0, stream);
        else
          tr_fn(c0, crow, tr, tstep, r1 - r0, g, stream);
        r0 = r1;
        continue;
      }
      for (int64_t j0 = 0; j0 < g; j0 += tj)
        for (int64_t r = r0; r < r1; r++)
          for (int64_t j = j0; j < g && j < j0 + tj; j++) {
            char *t = tok0 + j * tstep + (size_t)k->runs[r].tok_off * k->tok_esz;
            char *c = cache + (size_t)k->runs[r].cache_off * k->cache_esz + j * cstep;
            if (k->mode == LLMK__KV_COPY &&
                (k->runs[r].tok_stride == 1 || k->runs[r].len == 1))
              copy_piece(k, k->gather ? t : c, k->gather ? c : t,
                         (size_t)k->runs[r].len * k->tok_esz, stream);
            else
              move_run(k, &k->runs[r], t, c, stream);
          }
      r0 = r1;
      continue;
    }
    /* a run strided on the cache side (x-split value [nb, H, D, bs]): elements in tiles
     * of 32 along the run x 8 tokens */
    char *c = cache + (size_t)run->cache_off * k->cache_esz;
    char *t = tok0 + (size_t)run->tok_off * k->tok_esz;
    float s = k->mode == LLMK__KV_COPY ? 1.0f : llmk__kv_scale_of(k, run->head);
    bool copy16 = k->mode == LLMK__KV_COPY && k->tok_esz == 2;
    if (copy16 && k->kern->transpose16 && run->tok_stride == 1 && k->cache_so == 1) {
      /* tokens side by side in the cache: a transpose of the g x len tile */
      if (k->gather)
        k->kern->transpose16(t, tstep, c, (size_t)run->cache_stride * 2, g, run->len,
                             stream);
      else
        k->kern->transpose16(c, (size_t)run->cache_stride * 2, t, tstep, run->len, g,
                             stream);
      r0++;
      continue;
    }
    for (int64_t i0 = 0; i0 < run->len; i0 += 32)
      for (int64_t j0 = 0; j0 < g; j0 += 8)
        for (int64_t i = i0; i < run->len && i < i0 + 32; i++) {
          char *ce = c + (size_t)(i * run->cache_stride) * k->cache_esz;
          char *te = t + (size_t)(i * run->tok_stride) * k->tok_esz;
          for (int64_t j = j0; j < g && j < j0 + 8; j++) {
            if (copy16 && k->gather)
              memcpy(te + j * tstep, ce + j * cstep, 2);
            else if (copy16)
              memcpy(ce + j * cstep, te + j * tstep, 2);
            else
              move_elem(k, run, t + j * tstep, c, i,
                        i * run->cache_stride + j * k->cache_so, s);
          }
        }
    r0++;
  }
}
