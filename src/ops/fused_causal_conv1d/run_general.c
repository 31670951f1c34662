/* SPDX-License-Identifier: Apache-2.0 */
/* fused_causal_conv1d phase 2 for the v2 entry's layouts that the channel-contiguous
 * TAIL run does not take: HEAD-aligned (vLLM) or ring lines, and channel strides other
 * than 1. The state rows move element by element; the conv is the ISA kernel of the
 * TAIL run (whole rows when x and y have unit channel strides, else one channel per
 * call), so the values are that run's bits. Sequences touch disjoint lines and rows
 * (phase 2 rejects conflicts), so any split over threads gives the same bytes. */
#include <string.h>

#include "core/op.h"
#include "ops/fused_causal_conv1d/internal.h"

typedef struct gen_job {
  const conv_plan *p;
  const seq_info *si;
  const float *w, *bias;
  int64_t wstride;
  char *scratch;
} gen_job;

static inline char *xat(const conv_plan *p, const seq_info *s, int64_t i, int64_t d) {
  int64_t ts = p->x3 ? p->xs1 : p->xs0;
  return p->x + (size_t)(s->base + i * ts + d * p->xsd) * p->esz;
}

static inline char *yat(const conv_plan *p, const seq_info *s, int64_t i, int64_t d) {
  int64_t ts = p->x3 ? p->ys1 : p->ys0;
  return p->y + (size_t)(s->ybase + i * ts + d * p->ysd) * p->esz;
}

static inline char *lat(const conv_plan *p, int64_t line, int64_t r) {
  return p->cs + (size_t)(line * p->cs0 + r * p->cs1) * p->esz;
}

/* dim elements from src (channel stride ss) to dst (ds); src NULL: zeros. */
static void copy_row(const conv_plan *p, char *dst, int64_t ds, const char *src,
                     int64_t ss) {
  const size_t esz = p->esz;
  if (ds == 1 && (ss == 1 || !src)) {
    if (src)
      memcpy(dst, src, (size_t)p->dim * esz);
    else
      memset(dst, 0, (size_t)p->dim * esz);
    return;
  }
  for (int64_t d = 0; d < p->dim; d++) {
    if (src)
      memcpy(dst + (size_t)(d * ds) * esz, src + (size_t)(d * ss) * esz, esz);
    else
      memset(dst + (size_t)(d * ds) * esz, 0, esz);
  }
}

static inline int64_t pmod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

static void run_seq(const gen_job *j, int64_t b, char *scratch) {
  const conv_plan *p = j->p;
  const seq_info *s = &j->si[b];
  if (s->skip) return;
  const int K = p->K;
  const int64_t C = p->C, L = s->L;
  const size_t rb = (size_t)p->dim * p->esz;
  char *snap = scratch;
  /* 1. the history xp[0, K-1), set aside (contiguous rows) before any line is written */
  for (int r = 0; r < K - 1; r++) {
    int64_t row = p->ring ? pmod(s->ring - (K - 1) + r, C) : s->offset + r;
    copy_row(p, snap + r * rb, 1, s->zero_hist ? NULL : lat(p, s->R, row), p->csd);
  }
  /* 2. the state line */
  if (s->W >= 0) {
    if (p->ring) {
      for (int64_t i = L > C ? L - C : 0; i < L; i++)
        copy_row(p, lat(p, s->W, (s->ring + i) % C), p->csd, xat(p, s, i, 0), p->xsd);
    } else if (p->head) {
      for (int64_t i = 0; i < s->nw; i++) {
        int64_t q = K - 1 + L - s->nw + i;
        if (q < K - 1)
          copy_row(p, lat(p, s->W, i), p->csd, snap + q * rb, 1);
        else
          copy_row(p, lat(p, s->W, i), p->csd, xat(p, s, q - (K - 1), 0), p->xsd);
      }
    } else {
      /* TAIL: as the TAIL run; rows of one line move down when Len >= C, else up */
      int64_t len = s->hn + L, M = C < len ? C : len;
      bool down = len >= C;
      for (int64_t k = 0; k < M; k++) {
        int64_t i = down ? k : M - 1 - k, dst = C - M + i, src = len - M + i;
        char *d = lat(p, s->W, dst);
        if (src >= s->hn)
          copy_row(p, d, p->csd, xat(p, s, src - s->hn, 0), p->xsd);
        else if (s->zero_hist)
          copy_row(p, d, p->csd, NULL, 1);
        else if (!(s->R == s->W && src == dst))
          copy_row(p, d, p->csd, lat(p, s->R, src), p->csd);
      }
    }
  }
  /* 3. APC fills: rows [0, K-1) (HEAD) or [C-(K-1), C) of each block's line */
  int64_t row0 = p->head ? 0 : C - (K - 1);
  for (int64_t c = 0; c < s->nfill; c++) {
    int64_t f = fill_line(p, s, b, c);
    if (f == p->pad) continue;
    int64_t bdy = s->last_full - (s->nfill - 1 - c) * p->block_size;
    for (int r = 0; r < K - 1; r++) {
      int64_t q = bdy + r;
      if (q < K - 1)
        copy_row(p, lat(p, f, row0 + r), p->csd, snap + q * rb, 1);
      else
        copy_row(p, lat(p, f, row0 + r), p->csd, xat(p, s, q - (K - 1), 0), p->xsd);
    }
  }
  /* 4. the conv */
  llmk__conv1d_seq q = {
      .xstride = (ptrdiff_t)((p->x3 ? p->xs1 : p->xs0) * (int64_t)p->esz),
      .ystride = (ptrdiff_t)((p->x3 ? p->ys1 : p->ys0) * (int64_t)p->esz),
      .L = L,
      .hstride = (ptrdiff_t)rb,
      .wstride = (size_t)j->wstride,
      .dt = p->dt,
      .K = K,
      .flags = p->flags,
      .reset = s->reset,
      .wbuf = (float *)(void *)(scratch + align64((size_t)(K - 1) * rb))};
  if (p->xsd == 1 && p->ysd == 1) {
    q.x = xat(p, s, 0, 0);
    q.y = yat(p, s, 0, 0);
    q.hist = snap;
    q.w = j->w;
    q.bias = j->bias;
    q.n = (size_t)p->dim;
    p->kern->seq(&q);
    return;
  }
  q.n = 1;
  for (int64_t d = 0; d < p->dim; d++) {
    q.x = xat(p, s, 0, d);
    q.y = yat(p, s, 0, d);
    q.hist = snap + (size_t)d * p->esz;
    q.w = j->w + d;
    q.bias = j->bias ? j->bias + d : NULL;
    p->kern->seq(&q);
  }
}

static void run_part(void *arg, int ith, int nth) {
  const gen_job *j = arg;
  const int64_t B = j->p->batch;
  int64_t a = B / nth * ith + B % nth * ith / nth;
  int64_t e = B / nth * (ith + 1) + B % nth * (ith + 1) / nth;
  char *scratch = j->scratch + (size_t)ith * j->p->scratch_bytes;
  for (int64_t b = a; b < e; b++) run_seq(j, b, scratch);
}

void llmk__fcc_run_general(const conv_plan *p, const seq_info *si, const float *w,
                           int64_t wstride, const float *bias, char *scratch,
                           llmk_context *ctx) {
  gen_job j = {p, si, w, bias, wstride, scratch};
  int64_t bytes;
  if (__builtin_mul_overflow(p->batch, p->dim * (int64_t)p->esz, &bytes))
    bytes = INT64_MAX;
  int parts = bytes < PARALLEL_MIN ? 1 : llmk__parallel_tasks(ctx, p->max_parts);
  if (parts > p->batch) parts = (int)p->batch;
  if (parts < 1) parts = 1;
  llmk__parallel_run(ctx, parts, run_part, &j);
}
