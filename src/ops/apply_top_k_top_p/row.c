/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p: one row. Its decisions (filter_row), its write, its pending top-p
 * window, and the masks of its top-p tie group (filter_one). */

#include <math.h>
#include <string.h>

#include "ops/apply_top_k_top_p/internal.h"

/* The index after the last masked member of the top-p tie group (its first c members). */
void llmk__tkp_find_tie_cut(const tkp_plan *pl, const rowctx *rc, int64_t V,
                            row_result *r) {
  r->tie_cut = 0;
  if (!r->have_p || r->pb.masked_in_group <= 0) return;
  size_t j = pl->kern->find_eq(rc->src, rc->dt, (size_t)V, r->pb.key,
                               (size_t)r->pb.masked_in_group);
  if (j < (size_t)V) r->tie_cut = (int64_t)j + 1;
}

/* Filters row rc; the decisions go to r. */
/* The index after the c-th (1-based) entry of key `key` among n gathered ones (keys,
 * indices, in index order), or 0 when there are fewer. */
static int64_t cut_after(const uint32_t *keys, const uint32_t *idx, int64_t n,
                         uint32_t key, int64_t c) {
  for (int64_t i = 0, seen = 0; i < n && c > 0; i++)
    if (keys[i] == key && ++seen == c) return (int64_t)idx[i] + 1;
  return 0;
}

/* Filters row rc; the decisions go to r. With top-k, ncand >= 0 is the number of
 * candidates of the pivot (keys >= its threshold, in s->ckey / s->cidx), -1 when there
 * are none; on return r->ncand >= 0 when s->ckey / s->cidx hold every entry that top-k
 * keeps (the pivot's candidates, or those gathered here). */
void llmk__tkp_filter_row(const tkp_plan *pl, const team *tm, const scratch *s,
                          rowctx *rc, int64_t V, bool has_k, int64_t k, bool has_p,
                          float p, bool has_minp, float min_p, int64_t ncand,
                          row_result *r) {
  bool topk = has_k && k >= 1 && k <= V - 1;
  memset(r, 0, sizeof *r);
  r->ncand = -1;
  uint32_t t = 0;
  if (topk && ncand >= k && ncand <= CAND_CAP) {
    t = llmk__tkp_select_kth(s->ckey, ncand, k, s->sk);
    rc->max_key = 0; /* the largest is among them */
    for (int64_t i = 0; i < ncand; i++)
      rc->max_key = s->ckey[i] > rc->max_key ? s->ckey[i] : rc->max_key;
    rc->have_max = true;
    r->ncand = ncand;
  } else if (topk && V <= SHORT_V) {
    /* a short row: the histograms would cost more than the row (many short rows, say
     * a broadcast [B, V]); the heap gives the same k-th largest */
    llmk__tkp_need_keys(pl, tm, s, rc);
    t = llmk__tkp_select_kth(s->keys, V, k, s->sk);
  } else if (topk) {
    llmk__tkp_need_keys(pl, tm, s, rc);
    /* four interleaved histograms: logits crowd into a few bins, and one counter would
     * make every increment wait for the previous one */
    uint32_t hist0[HBINS],
        *h4 = (uint32_t *)(void *)s->mlo; /* 4 x HBINS fit in mlo+mhi */
    memset(h4, 0, 4 * HBINS * 4);
    int64_t j = 0;
    for (; j + 4 <= V; j += 4) {
      h4[s->keys[j] >> 21]++;
      h4[HBINS + (s->keys[j + 1] >> 21)]++;
      h4[2 * HBINS + (s->keys[j + 2] >> 21)]++;
      h4[3 * HBINS + (s->keys[j + 3] >> 21)]++;
    }
    for (; j < V; j++) h4[s->keys[j] >> 21]++;
    for (int d = 0; d < HBINS; d++)
      hist0[d] = h4[d] + h4[HBINS + d] + h4[2 * HBINS + d] + h4[3 * HBINS + d];
    t = llmk__tkp_kth_largest(s, V, k, hist0);
  }
  if (topk) {
    if (t != LLMK__KEY_NAN) r->t_key = t; /* a NaN threshold masks nothing (s < NaN) */
  }
  if (!(has_p || (has_minp && min_p > 0.0f))) { /* the largest matters only if known */
    if (rc->have_max) r->max = llmk__value_of_key(rc->max_key);
    return;
  }
  uint32_t max_key = llmk__tkp_row_max_key(pl, tm, s, rc);
  r->max = llmk__value_of_key(max_key);
  /* top-p and min-p need a distribution: a finite largest survivor */
  bool finite = max_key < LLMK__KEY_PINF && max_key > LLMK__KEY_NINF;
  if (has_p && finite) {
    float thr = 1.0f - p;
    r->have_p = true;
    if (thr <= 0.0f) {
      /* p == 1: only entries of probability exactly 0 go (exp underflows to 0) */
      r->have_p = false;
      r->min_e = 0x1p-149f;
    } else {
      uint32_t min_key = r->t_key;
      /* a short row is few entries too: the mass bins' fixed cost would exceed it */
      bool few = min_key > 0 || V <= SHORT_V;
      if (few && r->ncand < 0) { /* top-k's survivors, when few */
        int64_t c =
            llmk__tkp_team_gather_ge(pl, tm, rc, min_key, s->ckey, s->cidx, CAND_CAP);
        r->ncand = c <= CAND_CAP ? c : -1;
      }
      if (few && r->ncand >= 0) { /* top-k left few entries: work on them alone */
        int64_t n = 0;
        for (int64_t i = 0; i < r->ncand; i++)
          if (s->ckey[i] >= min_key) s->sk[n++] = s->ckey[i];
        r->pb = llmk__tkp_top_p_sorted(pl, s, s->sk, n, r->max, max_key, 0, 0, thr,
                                       (uint32_t *)(void *)s->sx, s->bk);
        r->tie_cut =
            cut_after(s->ckey, s->cidx, r->ncand, r->pb.key, r->pb.masked_in_group);
        if (has_minp && finite && min_p > 0.0f && min_p > r->min_e) r->min_e = min_p;
        return;
      }
      if (!llmk__tkp_top_p_bins(pl, tm, s, rc, V, r->max, min_key, max_key, thr, r)) {
        llmk__tkp_need_keys(pl, tm, s, rc);
        int64_t n_max = llmk__tkp_team_count_eq(pl, tm, s, rc, max_key);
        r->pb = llmk__tkp_top_p_search(pl, tm, s, s->row, s->keys, V, r->max, min_key,
                                       max_key, n_max, thr);
      }
    }
  }
  if (has_minp && finite && min_p > 0.0f && min_p > r->min_e) r->min_e = min_p;
  if (!r->pending) llmk__tkp_find_tie_cut(pl, rc, V, r);
}

/* -inf stored (at dst + index * dstep, elements of dt) to the gathered entries (keys and
 * indices, n) that are masked: key >= tw, and key < thr or a tie (key == tie_key with an
 * index below tie_cut); returns how many, *ties of them ties. Without branches: which
 * side of a top-p boundary an entry of its window falls on is a coin toss, and
 * mispredictions cost more than the stores of the kept entries, which go to a local
 * instead. */
int64_t llmk__tkp_mask_listed(const uint32_t *keys, const uint32_t *idx, int64_t n,
                              uint32_t tw, uint32_t thr, uint32_t tie_key,
                              int64_t tie_cut, char *dst, size_t dstep, llmk_dtype dt,
                              int64_t *ties) {
  uint32_t sink = 0;
  const uintptr_t other = (uintptr_t)&sink;
  const uint64_t tc = tie_cut > 0 ? (uint64_t)tie_cut : 0;
  const uint32_t f32 = 0xff800000u;
  const uint16_t h16 = llmk__tkp_neg_inf16[dt == LLMK_BF16];
  int64_t c = 0, t = 0;
  for (int64_t i = 0; i < n; i++) {
    uint32_t k = keys[i];
    uintptr_t tie = (uintptr_t)((k == tie_key) & (idx[i] < tc));
    uintptr_t mask = (uintptr_t)(k >= tw) & ((uintptr_t)(k < thr) | tie);
    uintptr_t at = (uintptr_t)(dst + (size_t)idx[i] * dstep), sel = (uintptr_t)0 - mask;
    void *e = (void *)((at & sel) | (other & ~sel));
    if (dt == LLMK_F32)
      memcpy(e, &f32, 4);
    else
      memcpy(e, &h16, 2);
    c += (int64_t)mask;
    t += (int64_t)(mask & tie);
  }
  *ties = t;
  return c;
}

typedef struct write_job {
  const tkp_plan *pl;
  const scratch *s;  /* the row's: s->row and s->keys */
  const scratch *ps; /* per part, for gathers */
  const rowctx *rc;
  const row_result *rr;
  const char *src;
  char *dst;
  bool in_place;
  int mode;       /* of select */
  uint32_t t, hi; /* select: keep keys >= t; gather those <= hi too */
  int64_t kept[MAX_PARTS], ng[MAX_PARTS];
  uint32_t *wkey, *widx; /* no team: gathers go straight here */
} write_job;

/* out[a, b) of the row: kept entries copied, the others -inf. Entries equal to the top-p
 * boundary are all kept here; the caller masks the first ones of that group. With the
 * contiguous select, the kept entries with key <= hi are gathered too. */
static void write_part(void *arg, int part, int64_t a, int64_t b) {
  write_job *j = arg;
  const tkp_plan *pl = j->pl;
  const row_result *rr = j->rr;
  size_t esz = llmk_dtype_size(pl->logits.dtype);
  size_t sstep = (size_t)pl->logits.s1 * esz, dstep = (size_t)pl->out.s1 * esz;
  int64_t kept = 0;
  if (pl->logits.s1 == 1 && pl->out.s1 == 1 && rr->min_e == 0.0f) {
    const scratch *ps = &j->ps[part];
    size_t ng = 0;
    kept = (int64_t)pl->kern->select(
        j->src + (size_t)a * esz, pl->logits.dtype, (size_t)(b - a), j->t, j->hi,
        j->dst + (size_t)a * esz, j->mode, (uint32_t)a, j->wkey ? j->wkey : ps->sk,
        j->widx ? j->widx : ps->cidx, CAND_CAP, &ng);
    j->ng[part] = (int64_t)ng;
  } else { /* the caller made the f32 row and its keys */
    for (int64_t i = a; i < b; i++) {
      bool keep =
          j->s->keys[i] >= j->t &&
          !(rr->min_e > 0.0f && llmk__exp_nonpos(j->s->row[i] - rr->max) < rr->min_e);
      if (keep) {
        kept++;
        if (!j->in_place)
          memcpy(j->dst + (size_t)i * dstep, j->src + (size_t)i * sstep, esz);
      } else {
        llmk__tkp_store_neg_inf(j->dst + (size_t)i * dstep, pl->logits.dtype);
      }
    }
    j->ng[part] = 0;
  }
  j->kept[part] = kept;
}

typedef struct window_job {
  const tkp_plan *pl;
  const scratch *ps;
  const rowctx *rc;
  uint32_t lo, hi;
  uint32_t *wkey, *widx; /* no team: gathers go straight here */
  int64_t ng[MAX_PARTS];
} window_job;

static void window_part(void *arg, int part, int64_t a, int64_t b) {
  window_job *j = arg;
  const scratch *ps = &j->ps[part];
  j->ng[part] = (int64_t)j->pl->kern->gather(
      llmk__tkp_src_at(j->rc, a), j->rc->dt, (size_t)(b - a), j->lo, j->hi, (uint32_t)a,
      j->wkey ? j->wkey : ps->sk, j->widx ? j->widx : ps->cidx, CAND_CAP);
}

/* The entries of the pending window of r, keys into s->bk and indices into widx; returns
 * how many there are (gathered only up to CAND_CAP). */
int64_t llmk__tkp_gather_window(const tkp_plan *pl, const team *tm, const scratch *s,
                                const rowctx *rc, const row_result *r, uint32_t *widx) {
  window_job gj = {
      .pl = pl, .ps = tm ? tm->ps : s, .rc = rc, .lo = r->win_lo, .hi = r->win_hi};
  if (!tm) {
    gj.wkey = s->bk;
    gj.widx = widx;
  }
  llmk__tkp_team_run(tm, pl->V, window_part, &gj);
  return llmk__tkp_join_parts(tm, gj.ng, s->bk, widx, CAND_CAP);
}

/* The pending top-p boundary of r among the n entries of its window (keys in s->bk,
 * indices in widx, in index order), or, when they were too many to gather (n over
 * CAND_CAP), among the whole row's entries in the window. Sets r->pb and r->tie_cut. */
void llmk__tkp_resolve_window(const tkp_plan *pl, const team *tm, const scratch *s,
                              rowctx *rc, row_result *r, const uint32_t *widx,
                              int64_t n) {
  uint32_t max_key = rc->max_key;
  r->pending = false;
  if (n <= CAND_CAP) {
    r->pb = llmk__tkp_top_p_sorted(pl, s, s->bk, n, r->max, max_key, r->target, r->below,
                                   0.0f, s->sk, (uint32_t *)(void *)s->sx);
    r->tie_cut = 0;
    for (int64_t i = 0, c = 0; i < n && c < r->pb.masked_in_group; i++)
      if (s->bk[i] == r->pb.key && ++c == r->pb.masked_in_group)
        r->tie_cut = (int64_t)widx[i] + 1;
  } else {
    llmk__tkp_need_keys(pl, tm, s, rc);
    int64_t n_max = llmk__tkp_team_count_eq(pl, tm, s, rc, max_key);
    r->pb = llmk__tkp_top_p_boundary(pl, s, s->row, s->keys, pl->V, r->max, r->win_lo,
                                     max_key, n_max, r->target, r->below);
    llmk__tkp_find_tie_cut(pl, rc, pl->V, r);
  }
}

/* The row written with select() keeping keys >= t, those <= hi also gathered in order
 * into okey / oidx (not the parts' temporaries); returns how many there are. */
static int64_t write_gathering(const team *tm, write_job *wj, int64_t V, uint32_t t,
                               uint32_t hi, uint32_t *okey, uint32_t *oidx) {
  wj->t = t;
  wj->hi = hi;
  wj->wkey = tm ? NULL : okey;
  wj->widx = tm ? NULL : oidx;
  llmk__tkp_team_run(tm, V, write_part, wj);
  return llmk__tkp_join_parts(tm, wj->ng, okey, oidx, CAND_CAP);
}

/* The members of r's top-p tie group before r->tie_cut (found by find_eq from the start
 * of the row) written as -inf in dst (elements dstep bytes apart); returns how many. */
int64_t llmk__tkp_mask_tie_group(const tkp_plan *pl, const rowctx *rc,
                                 const row_result *r, char *dst, size_t dstep,
                                 llmk_dtype dt) {
  int64_t n = 0;
  for (int64_t j = 0; j < r->tie_cut; j++, n++) {
    j += (int64_t)pl->kern->find_eq(llmk__tkp_src_at(rc, j), rc->dt,
                                    (size_t)(r->tie_cut - j), r->pb.key, 1);
    if (j >= r->tie_cut) break;
    llmk__tkp_store_neg_inf(dst + (size_t)j * dstep, dt);
  }
  return n;
}

/* The smallest key whose entry min-p keeps: exp(x - max) >= min_e. Both sides are
 * monotone in the key (the exp is, tests/core/test_exp_monotone.c), -inf is dropped and
 * max kept (min_e in (0, 1]), so a bisection over the keys finds the boundary with the
 * very exp the per-entry test used: the same decisions, and min-p rows take the
 * threshold writes of top-k instead of an exp per entry. */
static uint32_t min_e_key(float min_e, float max, uint32_t max_key) {
  uint32_t lo = LLMK__KEY_NINF, hi = max_key; /* lo dropped, hi kept */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (llmk__exp_nonpos(llmk__value_of_key(mid) - max) >= min_e)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

/* One row: decide, write, then mask what the write kept too much. A write keeps the
 * entries >= tw; when tw is below the final threshold (a top-p window's lowest key), the
 * entries between them must be in the gathered list (keys lk, indices li, n of them),
 * which is also how the first members of the top-p tie group are found (else by find_eq
 * from the start of the row). The top-k pivot's write masks every entry instead, and the
 * survivors among its candidates are copied afterwards. */
void llmk__tkp_filter_one(const tkp_plan *pl, const team *tm, const scratch *s0,
                          int64_t r) {
  int64_t V = pl->V;
  scratch local = *s0, *s = &local;
  rowctx rc = {.v = &pl->logits, .r = r};
  if (pl->logits.s1 == 1) { /* read the row where it is */
    rc.src = llmk__view_at(&pl->logits, r, 0);
    rc.dt = pl->logits.dtype;
    rc.esz = llmk_dtype_size(rc.dt);
    if (rc.dt == LLMK_F32) local.row = (float *)(void *)llmk__view_at(&pl->logits, r, 0);
  } else {
    llmk__tkp_need_keys(pl, tm, s, &rc);
    rc.src = s->row;
    rc.dt = LLMK_F32;
    rc.esz = 4;
  }
  bool has_k = pl->k.data != NULL, has_p = pl->p.data != NULL,
       has_m = pl->min_p.data != NULL;
  int64_t k = has_k ? llmk__view_get(&pl->k, r, 0) : 0;
  float min_p = has_m ? llmk__view_get_f(&pl->min_p, r, 0) : 0;
  write_job wj = {.pl = pl,
                  .s = s,
                  .ps = tm ? tm->ps : s,
                  .rc = &rc,
                  .src = llmk__view_at(&pl->logits, r, 0),
                  .dst = (char *)llmk__view_at(&pl->out, r, 0)};
  wj.in_place = pl->out.data == pl->logits.data && pl->out.s0 == pl->logits.s0 &&
                pl->out.s1 == pl->logits.s1;
  wj.mode = wj.in_place ? LLMK__TKP_IN_PLACE : pl->stream ? LLMK__TKP_STREAM : 0;
  bool contiguous = pl->logits.s1 == 1 && pl->out.s1 == 1;
  row_result rr;
  memset(&rr, 0, sizeof rr); /* write_part reads min_e */
  wj.rr = &rr;
  /* top-k by pivot: gather its candidates, or, writing to another buffer (the logits
   * stay), write the row masking every entry and gather them at the same time */
  int64_t ncand = -1;
  uint32_t tw = 0, tau;
  bool written = false, all = false; /* all: the write masked every entry */
  if (has_k && k >= 1 && k <= V - 1 && llmk__tkp_pivot_tau(pl, s, &rc, V, k, &tau)) {
    if (contiguous && !wj.in_place) {
      /* every entry masked; the few that stay are written once they are known */
      wj.mode |= LLMK__TKP_MASK_ALL;
      ncand = write_gathering(tm, &wj, V, tw = tau, UINT32_MAX, s->ckey, s->cidx);
      wj.mode &= ~LLMK__TKP_MASK_ALL;
      written = all = true;
    } else {
      ncand = llmk__tkp_team_gather_ge(pl, tm, &rc, tau, s->ckey, s->cidx, CAND_CAP);
    }
  }
  llmk__tkp_filter_row(pl, tm, s, &rc, V, has_k, k, has_p,
                       has_p ? llmk__view_get_f(&pl->p, r, 0) : 0, has_m, min_p, ncand,
                       &rr);
  if (rr.min_e > 0.0f) { /* set only with a finite largest entry */
    rr.m_key = min_e_key(rr.min_e, rr.max, llmk__key_of(rr.max));
    rr.min_e = 0.0f;
  }
  const uint32_t *lk = NULL, *li = NULL;
  int64_t n = 0;
  if (written && ncand >= k && ncand <= CAND_CAP) { /* the candidates, all >= tau */
    lk = s->ckey;
    li = s->cidx;
    n = ncand;
  } else {
    written = all = false; /* the pivot missed (tau is above the k-th): write again */
  }
  bool select = contiguous && rr.min_e == 0.0f;
  if (!select) llmk__tkp_need_keys(pl, tm, s, &rc);
  if (rr.pending) { /* the top-p boundary lies in a window of keys: gather it */
    int64_t nwin;
    if (select && rr.m_key <= rr.win_hi) { /* while writing the row, keeping it whole */
      nwin = write_gathering(tm, &wj, V, tw = rr.win_lo, rr.win_hi, s->bk, s->cidx);
      written = true;
      all = false;
    } else {
      llmk__tkp_need_keys(pl, tm, s, &rc);
      nwin = llmk__tkp_gather_window(pl, tm, s, &rc, &rr, s->cidx);
    }
    llmk__tkp_resolve_window(pl, tm, s, &rc, &rr, s->cidx, nwin);
    if (nwin <= CAND_CAP) {
      lk = s->bk;
      li = s->cidx;
      n = nwin;
    } else {
      lk = NULL;
      written = false; /* the window was not gathered: write again */
    }
  }
  uint32_t thr = rr.t_key;
  if (rr.have_p && rr.pb.key > thr) thr = rr.pb.key;
  if (rr.m_key > thr) thr = rr.m_key;
  if (!written) {
    wj.t = tw = thr;
    wj.hi = 0;
    wj.wkey = wj.widx = NULL;
    llmk__tkp_team_run(tm, V, write_part, &wj);
    if (!lk && rr.ncand >= 0) { /* top-k's survivors, with the tie group */
      lk = s->ckey;
      li = s->cidx;
      n = rr.ncand;
    }
  }
  int64_t kept = 0;
  for (int p = 0; p < llmk__tkp_team_parts(tm); p++) kept += wj.kept[p];
  /* the masked members of the top-p tie group (the write kept the whole group unless
   * min-p's threshold is above it), and the entries below the final threshold that the
   * write kept (it kept every entry >= tw and counted them) */
  bool group_kept = rr.pb.key >= rr.m_key;
  size_t esz = llmk_dtype_size(pl->out.dtype), dstep = (size_t)pl->out.s1 * esz;
  if (lk && all) { /* the survivors written (contiguous rows) */
    for (int64_t i = 0; i < n; i++) {
      bool tie = rr.have_p && lk[i] == rr.pb.key && (int64_t)li[i] < rr.tie_cut;
      bool keep = lk[i] >= thr && !tie;
      if (keep) {
        memcpy(wj.dst + (size_t)li[i] * esz, wj.src + (size_t)li[i] * esz, esz);
        kept++;
      }
    }
  } else if (lk) {
    int64_t ties, c = llmk__tkp_mask_listed(lk, li, n, tw, thr, rr.pb.key,
                                            rr.have_p ? rr.tie_cut : 0, wj.dst, dstep,
                                            pl->out.dtype, &ties);
    (void)ties;
    kept -= c;
  } else if (group_kept) {
    kept -= llmk__tkp_mask_tie_group(pl, &rc, &rr, wj.dst, dstep, pl->out.dtype);
  }
  if (pl->kept.data) llmk__view_set(&pl->kept, r, kept);
}
