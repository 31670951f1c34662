/* SPDX-License-Identifier: Apache-2.0 */
/* fused_causal_conv1d phase 2: the run, split into items over threads. */
#include <inttypes.h>
#include <string.h>

#include "core/op.h"
#include "ops/fused_causal_conv1d/internal.h"

#define op llmk__fcc_op

typedef struct conv_job {
  const conv_plan *p;
  const seq_info *si;
  const int64_t *prefix;
  const float *w, *bias;
  int64_t wstride;
  int parts;
  int64_t nblk, wblk; /* channel blocks per sequence and their width */
  char *scratch;
} conv_job;

static inline char *xrow(const conv_plan *p, const seq_info *s, int64_t i, int64_t d0) {
  int64_t ts = p->x3 ? p->xs1 : p->xs0;
  return p->x + (size_t)(s->base + i * ts + d0) * p->esz;
}

static inline char *yrow(const conv_plan *p, const seq_info *s, int64_t i, int64_t d0) {
  int64_t ts = p->x3 ? p->ys1 : p->ys0;
  return p->y + (size_t)(s->ybase + i * ts + d0) * p->esz;
}

static inline char *lrow(const conv_plan *p, int64_t line, int64_t r, int64_t d0) {
  return p->cs + (size_t)(line * p->cs0 + r * p->cs1 + d0) * p->esz;
}

/* Channels [d0, d0+n) of sequence b, steps 2-9. */
static void run_cols(const conv_job *j, const seq_info *s, int64_t b, int64_t d0,
                     size_t n, char *scratch) {
  const conv_plan *p = j->p;
  const int K = p->K;
  const int64_t C = p->C;
  const size_t rb = n * p->esz;
  char *snap = scratch;
  /* 1. the conv's history rows xp[0, K-1) = padded[offset, offset+K-1), set aside */
  for (int r = 0; r < K - 1; r++) {
    if (s->zero_hist)
      memset(snap + r * rb, 0, rb);
    else
      memcpy(snap + r * rb, lrow(p, s->R, s->offset + r, d0), rb);
  }
  /* 2. state: conv_states[W][C-M+i] = padded[Len-M+i]; within one line the rows move
   * towards lower indices when Len >= C, so the copy order follows the shift */
  if (s->W >= 0) {
    int64_t len = s->hn + s->L, M = C < len ? C : len;
    bool up = len >= C;
    for (int64_t k = 0; k < M; k++) {
      int64_t i = up ? k : M - 1 - k, dst = C - M + i, src = len - M + i;
      char *d = lrow(p, s->W, dst, d0);
      if (src >= s->hn)
        memcpy(d, xrow(p, s, src - s->hn, d0), rb);
      else if (s->zero_hist)
        memset(d, 0, rb);
      else if (!(s->R == s->W && src == dst))
        memcpy(d, lrow(p, s->R, src, d0), rb);
    }
  }
  /* 3. APC: the K-1 tokens ending at each block boundary crossed */
  for (int64_t c = 0; c < s->nfill; c++) {
    int64_t f = fill_line(p, s, b, c);
    if (f == p->pad) continue;
    int64_t bdy = s->last_full - (s->nfill - 1 - c) * p->block_size;
    for (int r = 0; r < K - 1; r++) {
      int64_t q = bdy + r;
      const void *src =
          q < K - 1 ? (const void *)(snap + q * rb) : xrow(p, s, q - (K - 1), d0);
      memcpy(lrow(p, f, C - (K - 1) + r, d0), src, rb);
    }
  }
  /* 4. the conv over the chunk */
  llmk__conv1d_seq q = {
      .x = xrow(p, s, 0, d0),
      .xstride = (ptrdiff_t)((p->x3 ? p->xs1 : p->xs0) * (int64_t)p->esz),
      .y = yrow(p, s, 0, d0),
      .ystride = (ptrdiff_t)((p->x3 ? p->ys1 : p->ys0) * (int64_t)p->esz),
      .L = s->L,
      .hist = (const char *)snap,
      .hstride = (ptrdiff_t)rb,
      .w = j->w + d0,
      .wstride = (size_t)j->wstride,
      .bias = j->bias ? j->bias + d0 : NULL,
      .dt = p->dt,
      .K = K,
      .flags = p->flags,
      .reset = s->reset,
      .n = n,
      .wbuf = (float *)(void *)(scratch + align64((size_t)(K - 1) * rb))};
  p->kern->seq(&q);
}

/* Short chunks go in slices of DECODE_SLICE channels, so that the rows set aside and
 * those the state copies read are still in L1 when the conv reads them; long ones in
 * whole item rows, which keeps each token row's reads contiguous. */
#define DECODE_SLICE 512

/* Touches the rows a slice reads (history, state, tokens) and writes (state, outputs)
 * one slice ahead: the copies of steps 1-2 wait on memory while the conv before them
 * (with SiLU, mostly arithmetic) would leave it idle. */
static void prefetch_cols(const conv_job *j, const seq_info *s, int64_t d0, size_t n) {
  const conv_plan *p = j->p;
  const size_t rb = n * p->esz;
  for (size_t o = 0; o < rb; o += 64) {
    if (!s->zero_hist)
      for (int64_t r = 0; r < s->hn && r < p->C; r++)
        __builtin_prefetch(lrow(p, s->R, r, d0) + o, 0, 3);
    if (s->W >= 0 && s->W != s->R)
      for (int64_t r = 0; r < p->C; r++)
        __builtin_prefetch(lrow(p, s->W, r, d0) + o, 1, 3);
    for (int64_t i = 0; i < s->L; i++) {
      __builtin_prefetch(xrow(p, s, i, d0) + o, 0, 3);
      __builtin_prefetch(yrow(p, s, i, d0) + o, 1, 3);
    }
  }
}

static void run_item(const conv_job *j, int64_t b, int64_t blk, char *scratch) {
  const seq_info *s = &j->si[b];
  if (s->skip) return;
  const int64_t d0 = blk * j->wblk,
                n = j->p->dim - d0 < j->wblk ? j->p->dim - d0 : j->wblk;
  const bool decode = s->L <= LLMK__CONV_TILE;
  const int64_t slice = decode ? DECODE_SLICE : n;
  for (int64_t c = 0; c < n; c += slice) {
    if (decode && c + slice < n)
      prefetch_cols(j, s, d0 + c + slice,
                    (size_t)(n - c - slice < slice ? n - c - slice : slice));
    run_cols(j, s, b, d0 + c, (size_t)(n - c < slice ? n - c : slice), scratch);
  }
}

/* First item whose cumulative cost start is >= t (items: sequence-major, nblk each). */
static int64_t first_item(const conv_job *j, int64_t t) {
  const int64_t nb = j->nblk, *pre = j->prefix, B = j->p->batch;
  if (t <= 0) return 0;
  if (t >= pre[B] * nb) return B * nb;
  int64_t lo = 0, hi = B; /* largest b with pre[b]*nb <= t */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (pre[mid] * nb <= t)
      lo = mid;
    else
      hi = mid;
  }
  int64_t cost = pre[lo + 1] - pre[lo], rem = t - pre[lo] * nb;
  int64_t k = (rem + cost - 1) / cost;
  return k >= nb ? (lo + 1) * nb : lo * nb + k;
}

/* Part ith of nth: the items whose cumulative cost starts in the ith nth of the total. */
static void run_part(void *arg, int ith, int nth) {
  const conv_job *j = arg;
  const int64_t total = j->prefix[j->p->batch] * j->nblk;
  int64_t a = first_item(j, total / nth * ith + total % nth * ith / nth);
  int64_t e =
      ith + 1 == nth
          ? j->p->batch * j->nblk
          : first_item(j, total / nth * (ith + 1) + total % nth * (ith + 1) / nth);
  char *scratch = j->scratch + (size_t)ith * j->p->scratch_bytes;
  for (int64_t it = a; it < e; it++) run_item(j, it / j->nblk, it % j->nblk, scratch);
}

static llmk_status run(const void *payload, void *workspace, llmk_context *ctx) {
  const conv_plan *p = payload;
  llmk_status st = LLMK_SUCCESS;
  if (!p->noop) {
    char *ws = (char *)(((uintptr_t)workspace + 63) & ~(uintptr_t)63);
    seq_info *si = (seq_info *)(void *)(ws + p->off_seq);
    int64_t *prefix = (int64_t *)(void *)(ws + p->off_prefix);
    st = llmk__fcc_check_values(p, (uint8_t *)ws, si, prefix);
    if (st == LLMK_SUCCESS && p->dim > 0) {
      conv_job j = {p, si, prefix, (const float *)(const void *)p->w, NULL, p->ws0, 1,
                    1, 0,  NULL};
      if (p->wsd != 1) { /* a strided weight: gathered, any dtype */
        float *w = (float *)(void *)(ws + p->off_w);
        size_t wesz = llmk_dtype_size(p->wdt);
        for (int k = 0; k < p->K; k++)
          for (int64_t d = 0; d < p->dim; d++)
            w[k * p->dim + d] =
                llmk__load_f32(p->w + (size_t)(k * p->ws0 + d * p->wsd) * wesz, p->wdt);
        j.w = w;
        j.wstride = p->dim;
      } else if (p->wdt != LLMK_F32) {
        float *w = (float *)(void *)(ws + p->off_w);
        for (int k = 0; k < p->K; k++) {
          const void *src = p->w + (size_t)(k * p->ws0) * 2;
          if (p->wdt == LLMK_F16)
            p->cvt->f16_to_f32(w + k * p->dim, src, (size_t)p->dim);
          else
            p->cvt->bf16_to_f32(w + k * p->dim, src, (size_t)p->dim);
        }
        j.w = w;
        j.wstride = p->dim;
      }
      if (p->bias && (p->bdt != LLMK_F32 || p->bs0 != 1)) {
        float *bb = (float *)(void *)(ws + p->off_b);
        size_t besz = llmk_dtype_size(p->bdt);
        if (p->bs0 == 1 && p->bdt == LLMK_F16)
          p->cvt->f16_to_f32(bb, p->bias, (size_t)p->dim);
        else if (p->bs0 == 1 && p->bdt == LLMK_BF16)
          p->cvt->bf16_to_f32(bb, p->bias, (size_t)p->dim);
        else
          for (int64_t d = 0; d < p->dim; d++)
            bb[d] = llmk__load_f32(p->bias + (size_t)(d * p->bs0) * besz, p->bdt);
        j.bias = bb;
      } else if (p->bias) {
        j.bias = (const float *)(const void *)p->bias;
      }
      if (p->general) {
        llmk__fcc_run_general(p, si, j.w, j.wstride, j.bias, ws + p->off_scratch, ctx);
        return st;
      }
      int64_t bytes;
      if (__builtin_mul_overflow(prefix[p->batch], p->dim * (int64_t)p->esz, &bytes))
        bytes = INT64_MAX;
      int parts = bytes < PARALLEL_MIN ? 1 : llmk__parallel_tasks(ctx, p->max_parts);
      /* whole rows per item unless there are too few sequences to go round */
      int64_t nblk = (4 * (int64_t)parts + p->batch - 1) / p->batch, cap = p->dim / 256;
      if (parts == 1 || nblk < 1) nblk = 1;
      if (nblk > cap) nblk = cap > 1 ? cap : 1;
      j.wblk = ((p->dim + nblk - 1) / nblk + 15) & ~(int64_t)15;
      j.nblk = (p->dim + j.wblk - 1) / j.wblk;
      if (parts > p->batch * j.nblk) parts = (int)(p->batch * j.nblk);
      j.parts = parts;
      j.scratch = ws + p->off_scratch;
      llmk__parallel_run(ctx, j.parts, run_part, &j);
    }
  }
  return st;
}

llmk_status llmk_fused_causal_conv1d(void *workspace, size_t workspace_size,
                                     llmk_plan *plan, llmk_context *ctx) {
  return llmk__plan_run(op, LLMK__OP_CAUSAL_CONV1D, plan, workspace, workspace_size, ctx,
                        run);
}
