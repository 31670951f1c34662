/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p: the rows of a worker, whole-row top-p rows in a pipeline. */

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "ops/apply_top_k_top_p/internal.h"

/* Rows with whole-row top-p alone (no top-k, no min-p, contiguous logits and out) go
 * through a pipeline on each worker: the mass pass of a row (bound by its exp) also
 * writes the previous row, whose window it knows, and finds the largest value of the
 * next, so that those two passes' memory traffic hides under its arithmetic. The results
 * are those of llmk__tkp_filter_one. */
typedef struct prow {
  int64_t r;
  rowctx rc;
  row_result rr;
  char *dst;
  int mode;
} prow;

static bool pipe_row(const tkp_plan *pl, int64_t r, float *thr) {
  if (pl->logits.s1 != 1 || pl->out.s1 != 1 || !pl->p.data || pl->V <= SHORT_V ||
      (uint64_t)pl->V > LLMK__TKP_MB_MAX_N)
    return false;
  if (pl->k.data) {
    int64_t k = llmk__view_get(&pl->k, r, 0);
    if (k >= 1 && k <= pl->V - 1) return false;
  }
  if (pl->min_p.data && llmk__view_get_f(&pl->min_p, r, 0) > 0.0f) return false;
  *thr = 1.0f - llmk__view_get_f(&pl->p, r, 0);
  return *thr > 0.0f;
}

static prow pipe_start(const tkp_plan *pl, int64_t r) {
  prow q;
  memset(&q, 0, sizeof q);
  q.r = r;
  q.rc.v = &pl->logits;
  q.rc.r = r;
  q.rc.src = llmk__view_at(&pl->logits, r, 0);
  q.rc.dt = pl->logits.dtype;
  q.rc.esz = llmk_dtype_size(q.rc.dt);
  q.dst = (char *)llmk__view_at(&pl->out, r, 0);
  bool in_place = pl->out.data == pl->logits.data && pl->out.s0 == pl->logits.s0 &&
                  pl->out.s1 == pl->logits.s1;
  q.mode = in_place ? LLMK__TKP_IN_PLACE : pl->stream ? LLMK__TKP_STREAM : 0;
  return q;
}

/* q's row written with its final threshold, the first members of its tie group masked
 * (found by find_eq); its count */
static void pipe_write_plain(const tkp_plan *pl, const scratch *s, prow *q) {
  size_t g;
  int64_t kept =
      (int64_t)pl->kern->select(q->rc.src, q->rc.dt, (size_t)pl->V, q->rr.pb.key, 0,
                                q->dst, q->mode, 0, s->bk, s->cidx, 0, &g);
  kept -= llmk__tkp_mask_tie_group(pl, &q->rc, &q->rr, q->dst, q->rc.esz, q->rc.dt);
  if (pl->kept.data) llmk__view_set(&pl->kept, q->r, kept);
}

/* q's row has been written keeping its whole window (kept_w entries kept, its ng window
 * entries gathered into s->bk / s->cidx): its boundary, then the masks that the write
 * left out, and its count. */
static void pipe_finish(const tkp_plan *pl, const scratch *s0, prow *q, size_t kept_w,
                        size_t ng) {
  scratch local = *s0, *s = &local;
  if (q->rc.dt == LLMK_F32)
    local.row = (float *)(void *)llmk__view_at(&pl->logits, q->r, 0);
  llmk__tkp_resolve_window(pl, NULL, s, &q->rc, &q->rr, s->cidx, (int64_t)ng);
  if (ng > CAND_CAP) { /* the window was not gathered: write the row again */
    pipe_write_plain(pl, s, q);
    return;
  }
  int64_t ties, kept = (int64_t)kept_w -
                       llmk__tkp_mask_listed(s->bk, s->cidx, (int64_t)ng, 0, q->rr.pb.key,
                                             q->rr.pb.key, q->rr.tie_cut, q->dst,
                                             q->rc.esz, q->rc.dt, &ties);
  if (pl->kept.data) llmk__view_set(&pl->kept, q->r, kept);
}

static void pipe_flush(const tkp_plan *pl, const scratch *s, prow *q) {
  size_t ng;
  size_t kept =
      pl->kern->select(q->rc.src, q->rc.dt, (size_t)pl->V, q->rr.win_lo, q->rr.win_hi,
                       q->dst, q->mode, 0, s->bk, s->cidx, CAND_CAP, &ng);
  pipe_finish(pl, s, q, kept, ng);
}

/* The rows a worker claims, one at a time (a slower core takes fewer; a row's result does
 * not depend on which worker computes it), each claimed one row ahead. */
void llmk__tkp_filter_rows(const tkp_plan *pl, tkp_job *j, const scratch *s) {
  int64_t V = pl->V, nmax_row = -1;
  uint32_t nmax = 0;
  float nmin = 0;
  prow q; /* the row whose write waits for the next mass pass */
  bool have_q = false;
  for (int64_t r = atomic_fetch_add(&j->next, 1), r2; r < pl->B; r = r2) {
    r2 = atomic_fetch_add(&j->next, 1);
    float thr, thr2;
    bool next_piped = r2 < pl->B && pipe_row(pl, r2, &thr2);
    if (r2 < pl->B && pl->k.data) llmk__tkp_prefetch_sample(&pl->logits, r2, V);
    uint32_t max_key = 0;
    bool piped = pipe_row(pl, r, &thr);
    if (piped) {
      if (nmax_row != r) {
        nmax = pl->kern->max_key(llmk__view_at(&pl->logits, r, 0), pl->logits.dtype,
                                 (size_t)V, &nmin);
        nmax_row = r;
      }
      max_key = nmax;
      piped = max_key < LLMK__KEY_PINF && max_key > LLMK__KEY_NINF;
    }
    if (!piped) {
      if (have_q) pipe_flush(pl, s, &q);
      have_q = false;
      llmk__tkp_filter_one(pl, NULL, s, r);
      continue;
    }
    prow c = pipe_start(pl, r);
    c.rc.max_key = max_key;
    c.rc.have_max = true;
    c.rr.max = llmk__value_of_key(max_key);
    c.rr.have_p = true;
    llmk__tkp_rider rd;
    memset(&rd, 0, sizeof rd);
    if (have_q) {
      rd.sel_src = q.rc.src;
      rd.sel_dst = q.dst;
      rd.sel_t = q.rr.win_lo;
      rd.sel_hi = q.rr.win_hi;
      rd.sel_mode = q.mode;
      rd.sel_okey = s->bk;
      rd.sel_oidx = s->cidx;
      rd.sel_cap = CAND_CAP;
    }
    if (next_piped) rd.max_src = llmk__view_at(&pl->logits, r2, 0);
    /* the smallest value as well, from the pass before: the mass pass may skip checks */
    rd.src_dense = nmax_row == r && nmin - c.rr.max >= LLMK__TKP_DENSE_D;
    memset(s->mlo, 0, MB_TABLE_BYTES);
    pl->kern->mass_bins(c.rc.src, c.rc.dt, (size_t)V, c.rr.max, -INFINITY, s->mlo, &rd);
    if (next_piped) {
      nmax = rd.max_key;
      nmin = rd.max_min;
      nmax_row = r2;
    }
    llmk__tkp_bins_to_window(pl, NULL, s, &c.rc, c.rr.max, 0, max_key, thr,
                             &c.rr); /* before q's: mlo */
    if (have_q) pipe_finish(pl, s, &q, rd.sel_kept, rd.sel_ng);
    have_q = c.rr.pending;
    if (have_q) {
      q = c;
    } else { /* p == 0: decided */
      llmk__tkp_find_tie_cut(pl, &c.rc, V, &c.rr);
      pipe_write_plain(pl, s, &c);
    }
  }
  if (have_q) pipe_flush(pl, s, &q);
}
