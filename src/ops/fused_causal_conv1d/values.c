/* SPDX-License-Identifier: Apache-2.0 */
/* fused_causal_conv1d phase 2: the value checks, before anything is written. */
#include <inttypes.h>
#include <string.h>

#include "core/op.h"
#include "ops/fused_causal_conv1d/internal.h"

#define op llmk__fcc_op

static inline int64_t mod_pos(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

/* 2L + M + K + nfill*(K-1), the rows a sequence moves (only a balance of the work
 * between threads), saturated at FCC_COST_MAX so that sums and the products of run.c
 * stay in int64. */
static int64_t cost_of(int64_t L, int64_t M, int K, int64_t nfill) {
  int64_t c, f;
  if (__builtin_mul_overflow(nfill, (int64_t)(K - 1), &f) ||
      __builtin_mul_overflow(L, (int64_t)2, &c) || __builtin_add_overflow(c, M, &c) ||
      __builtin_add_overflow(c, (int64_t)K, &c) || __builtin_add_overflow(c, f, &c))
    return FCC_COST_MAX;
  return c < FCC_COST_MAX ? c : FCC_COST_MAX;
}

/* has_initial_state[b] of any integer dtype: whether it is non-zero. */
static bool his_set(const conv_plan *p, int64_t b) {
  const char *e = llmk__view_at(&p->his, b, 0);
  switch (p->his.dtype) {
    case LLMK_U8:
    case LLMK_I8:
      return *(const uint8_t *)e != 0;
    case LLMK_I32:
      return *(const int32_t *)(const void *)e != 0;
    default:
      return *(const int64_t *)(const void *)e != 0;
  }
}

static bool line_ok(const conv_plan *p, int64_t line) {
  return line == p->pad || (line >= 0 && line < p->lines);
}

llmk_status llmk__fcc_check_values(const conv_plan *p, uint8_t *written, seq_info *si,
                                   int64_t *prefix) {
  const int K = p->K;
  memset(written, 0, ((size_t)p->lines + 7) / 8);
  if (!p->x3) {
    int64_t q0 = llmk__view_get(&p->qsl, 0, 0);
    if (q0 != 0)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "query_start_loc[0]=%" PRId64 " must be 0", q0);
  }
  for (int64_t b = 0; b < p->batch; b++) {
    seq_info *s = &si[b];
    memset(s, 0, sizeof *s);
    if (p->x3) {
      s->base = b * p->xs0;
      s->ybase = b * p->ys0;
      s->L = p->S;
    } else {
      int64_t q0 = llmk__view_get(&p->qsl, b, 0), q1 = llmk__view_get(&p->qsl, b + 1, 0);
      if (q1 <= q0)
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "query_start_loc[%" PRId64 "]=%" PRId64
                           " must be greater than query_start_loc[%" PRId64 "]=%" PRId64,
                           b + 1, q1, b, q0);
      if (q1 > p->T || (b + 1 == p->batch && q1 != p->T))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "query_start_loc[%" PRId64 "]=%" PRId64 " %s T=%" PRId64,
                           b + 1, q1, q1 > p->T ? "exceeds" : "must equal", p->T);
      s->base = q0 * p->xs0;
      s->ybase = q0 * p->ys0;
      s->L = q1 - q0;
    }
    if (p->max_query_len > 0 && s->L > p->max_query_len)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "sequence %" PRId64 " has %" PRId64
                         " tokens, more than max_query_len=%" PRId64,
                         b, s->L, p->max_query_len);
    int64_t nct = p->has_nct ? llmk__view_get(&p->nct, b, 0) : -1;
    if (p->has_nct && nct < 0)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "num_computed_tokens[%" PRId64 "]=%" PRId64 " must be >= 0", b,
                         nct);
    int64_t first = 0, last = 0, init = 0;
    if (p->apc) {
      const llmk__view *iv[3] = {&p->first, &p->last, &p->init};
      static const char *const nm[3] = {"block_idx_first_scheduled_token",
                                        "block_idx_last_scheduled_token",
                                        "initial_state_idx"};
      int64_t v[3];
      for (int i = 0; i < 3; i++) {
        v[i] = llmk__view_get(iv[i], b, 0);
        if (v[i] < 0 || v[i] >= p->max_blocks)
          return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                             "%s[%" PRId64 "]=%" PRId64
                             " must be in [0, max_blocks=%" PRId64 ")",
                             nm[i], b, v[i], p->max_blocks);
      }
      first = v[0], last = v[1], init = v[2];
      if (init > last || first > last)
        return llmk__error(
            LLMK_ERROR_INVALID_VALUE, op,
            "sequence %" PRId64 ": %s=%" PRId64
            " must be <= "
            "block_idx_last_scheduled_token=%" PRId64,
            b, init > last ? "initial_state_idx" : "block_idx_first_scheduled_token",
            init > last ? init : first, last);
      s->R = llmk__view_get(&p->ci, b, init);
      s->W = llmk__view_get(&p->ci, b, last);
    } else {
      s->R = s->W = p->has_ci ? llmk__view_get(&p->ci, b, 0) : b;
    }
    const char *ci_name = p->has_ci ? "cache_indices" : "line (batch index)";
    if (!line_ok(p, s->R))
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "%s: sequence %" PRId64 " reads line %" PRId64
                         ", outside [0, %" PRId64 ") and not pad_slot_id=%" PRId64,
                         ci_name, b, s->R, p->lines, p->pad);
    if (s->R == p->pad) {
      s->skip = true;
      s->cost = 1;
      continue;
    }
    if (!line_ok(p, s->W))
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "cache_indices: sequence %" PRId64 " writes line %" PRId64
                         ", outside [0, %" PRId64 ") and not pad_slot_id=%" PRId64,
                         b, s->W, p->lines, p->pad);
    bool zero = (p->has_nct && nct == 0) || (p->has_his && !his_set(p, b));
    int64_t na = p->has_nacc ? llmk__view_get(&p->nacc, b, 0) : 0;
    if (p->has_nacc && !zero) {
      if (na > p->C - K + 2)
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "num_accepted_tokens[%" PRId64 "]=%" PRId64
                           " must be <= C-K+2=%" PRId64 " (history past the cache line)",
                           b, na, p->C - K + 2);
    }
    if (p->ring) {
      int64_t cl = llmk__view_get(&p->csl, b, 0);
      if (cl < 0)
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "cache_seqlens[%" PRId64 "]=%" PRId64 " must be >= 0", b, cl);
      s->ring = cl % p->C;
    }
    if (p->head) {
      /* vLLM: speculative rows keep the K-2 rows before the chunk and the chunk */
      s->nw = p->has_nacc && na >= 1 ? K - 2 + s->L : K - 1;
      if (s->nw > p->C)
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "sequence %" PRId64 ": num_accepted_tokens[%" PRId64
                           "]=%" PRId64 " with %" PRId64 " tokens writes K-2+L=%" PRId64
                           " rows, more than conv_states.shape[1]=%" PRId64,
                           b, b, na, s->L, s->nw, p->C);
    }
    if (zero) {
      s->zero_hist = true;
      s->offset = 0;
    } else if (p->has_nacc) {
      s->offset = na > 1 ? na - 1 : 0;
    } else {
      s->offset = p->head || p->ring ? 0 : p->C - (K - 1);
    }
    s->hn = s->offset + K - 1;
    if (p->conv_mode == 1) {
      int64_t r = K - 1 - nct;
      s->reset = r < 0 ? 0 : (r > s->L ? s->L : r);
    }
    if (s->W == p->pad) s->W = -1;
    if (p->apc && last > first) {
      int64_t B = p->block_size, L = s->L;
      int64_t seo = mod_pos(L - (B - mod_pos(nct, B)), B);
      s->last_full = L - seo - (seo == 0 ? B : 0);
      s->first = first;
      s->nfill = last - first;
      int64_t back, bdy0; /* an overflow is a boundary far before the history */
      if (__builtin_mul_overflow(s->nfill - 1, B, &back) ||
          __builtin_sub_overflow(s->last_full, back, &bdy0))
        bdy0 = -1;
      if (bdy0 < 0)
        return llmk__error(
            LLMK_ERROR_INVALID_VALUE, op,
            "sequence %" PRId64 ": %" PRId64 " block boundaries (first=%" PRId64
            ", last=%" PRId64 ") do not fit a chunk of %" PRId64
            " tokens with num_computed_tokens=%" PRId64 " and block_size=%" PRId64,
            b, s->nfill, first, last, L, nct, B);
      for (int64_t c = 0; c < s->nfill; c++) {
        int64_t f = fill_line(p, s, b, c);
        if (!line_ok(p, f))
          return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                             "cache_indices[%" PRId64 "][%" PRId64 "]=%" PRId64
                             " (a block to fill) is outside [0, %" PRId64
                             ") and not pad_slot_id=%" PRId64,
                             b, first + c, f, p->lines, p->pad);
      }
    }
    int64_t len = s->hn + s->L, M = p->C < len ? p->C : len;
    if (p->head) M = s->nw;
    if (p->ring) M = p->C < s->L ? p->C : s->L;
    s->cost = cost_of(s->L, M, K, s->nfill);
  }
  /* lines written twice, then lines read by one sequence and written by another */
  for (int64_t b = 0; b < p->batch; b++) {
    const seq_info *s = &si[b];
    if (s->skip) continue;
    for (int64_t c = -1; c < s->nfill; c++) {
      int64_t l = c < 0 ? s->W : fill_line(p, s, b, c);
      if (l < 0 || l == p->pad) continue;
      if (written[l >> 3] & (1u << (l & 7)))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "cache_indices: line %" PRId64
                           " is written twice (again by sequence %" PRId64
                           "); written lines must be distinct",
                           l, b);
      written[l >> 3] |= (uint8_t)(1u << (l & 7));
    }
  }
  for (int64_t b = 0; b < p->batch; b++) {
    const seq_info *s = &si[b];
    if (s->skip || s->zero_hist || !(written[s->R >> 3] & (1u << (s->R & 7)))) continue;
    bool own = s->R == s->W;
    for (int64_t c = 0; c < s->nfill && !own; c++) own = fill_line(p, s, b, c) == s->R;
    if (!own)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "cache_indices: sequence %" PRId64 " reads line %" PRId64
                         ", which another sequence writes",
                         b, s->R);
  }
  prefix[0] = 0;
  for (int64_t b = 0; b < p->batch; b++) {
    int64_t sum = prefix[b] + si[b].cost; /* both <= FCC_COST_MAX */
    prefix[b + 1] = sum < FCC_COST_MAX ? sum : FCC_COST_MAX;
  }
  return LLMK_SUCCESS;
}
