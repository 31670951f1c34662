/* SPDX-License-Identifier: Apache-2.0 */
#include "causal_conv1d_vllm_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "causal_conv1d_vllm_ref: out of memory\n");
    exit(2);
  }
  return p;
}

static int64_t x_el(const vllm_ref_args *a, int64_t b, int64_t t, int64_t d) {
  return b * a->x_sb + t * a->x_st + d * a->x_sd;
}

static int64_t s_el(const vllm_ref_args *a, int64_t line, int64_t d, int64_t r) {
  return line * a->s_sl + d * a->s_sd + r * a->s_st;
}

static uint32_t x_bits(const vllm_ref_args *a, int64_t b, int64_t t, int64_t d) {
  return fcc_ref_load(a->x, x_el(a, b, t, d), a->dt);
}

static uint32_t s_bits(const vllm_ref_args *a, int64_t line, int64_t d, int64_t r) {
  return fcc_ref_load(a->conv_state, s_el(a, line, d, r), a->dt);
}

static void s_put(const vllm_ref_args *a, int64_t line, int64_t d, int64_t r,
                  uint32_t v) {
  fcc_ref_store(a->conv_state, s_el(a, line, d, r), a->dt, v);
}

/* The outputs of channel d of one sequence: cols = the K-1 values before token 0. */
static void conv(const vllm_ref_args *a, int64_t b, int64_t t0, int64_t L, int64_t d,
                 const uint32_t *cols) {
  const int K = (int)a->K;
  float w[4], win[4];
  for (int k = 0; k < K; k++)
    w[k] =
        fcc_ref_widen(a->wdt, fcc_ref_load(a->weight, d * a->w_sd + k * a->w_sk, a->wdt));
  for (int j = 0; j < K - 1; j++) win[j] = fcc_ref_widen(a->dt, cols[j]);
  for (int64_t i = 0; i < L; i++) {
    win[K - 1] = fcc_ref_widen(a->dt, x_bits(a, b, t0 + i, d));
    float acc = w[0] * win[0];
    for (int k = 1; k < K; k++) acc = acc + w[k] * win[k];
    if (a->bias) acc = acc + fcc_ref_widen(a->bdt, fcc_ref_load(a->bias, d, a->bdt));
    if (a->silu) acc = acc / (1.0f + expf(-acc));
    fcc_ref_store(a->out, b * a->o_sb + (t0 + i) * a->o_st + d * a->o_sd, a->dt,
                  fcc_ref_narrow(a->dt, acc));
    for (int k = 0; k < K - 1; k++) win[k] = win[k + 1];
  }
}

void vllm_ref_fn(const vllm_ref_args *a) {
  const int64_t SL = a->K - 1; /* the fn kernel's state_len: always K-1 */
  uint32_t cols[3];
  uint32_t *ns = xmalloc((size_t)SL * sizeof *ns);
  for (int64_t b = 0; b < a->batch; b++) {
    int64_t t0 = a->query_start_loc[b], L = a->query_start_loc[b + 1] - t0;
    int64_t line = a->cache_indices ? a->cache_indices[b] : b;
    if (line == a->pad_slot_id) continue;
    int init = a->has_initial_state ? a->has_initial_state[b] != 0 : 1;
    for (int64_t d = 0; d < a->dim; d++) {
      /* history: rows [0, K-1) of the line, or zeros */
      for (int64_t j = 0; j < SL; j++) cols[j] = init ? s_bits(a, line, d, j) : 0;
      /* new rows [0, K-1): the last K-1 of history ++ x */
      for (int64_t i = 0; i < SL; i++) {
        if (SL <= L)
          ns[i] = x_bits(a, 0, t0 + L - SL + i, d);
        else if (i + L < SL)
          ns[i] = init ? s_bits(a, line, d, i + L) : 0;
        else
          ns[i] = x_bits(a, 0, t0 + i - (SL - L), d);
      }
      for (int64_t i = 0; i < SL; i++) s_put(a, line, d, i, ns[i]);
      conv(a, 0, t0, L, d, cols);
    }
  }
  free(ns);
}

void vllm_ref_update(const vllm_ref_args *a) {
  const int K = (int)a->K;
  uint32_t cols[3];
  int64_t cap = a->K + (a->max_query_len > a->seqlen ? a->max_query_len : a->seqlen);
  uint32_t *ns = xmalloc((size_t)cap * sizeof *ns);
  for (int64_t b = 0; b < a->batch; b++) {
    int64_t line = a->cache_indices ? a->cache_indices[b] : b;
    if (line == a->pad_slot_id) continue;
    int64_t L, t0, xb, state_len;
    int spec = a->num_accepted_tokens != NULL;
    if (a->query_start_loc) {
      t0 = a->query_start_loc[b];
      L = a->query_start_loc[b + 1] - t0;
      xb = 0;
      /* the wrapper's state_len for max_query_len tokens, shrunk by the kernel */
      state_len =
          (spec ? K - 1 + (a->max_query_len - 1) : K - 1) - (a->max_query_len - L);
    } else {
      t0 = 0;
      L = a->seqlen;
      xb = b;
      state_len = spec ? K - 1 + (L - 1) : K - 1;
    }
    if (L == 0) continue;
    int64_t off = spec ? a->num_accepted_tokens[b] - 1 : 0;
    for (int64_t d = 0; d < a->dim; d++) {
      for (int j = 0; j < K - 1; j++) cols[j] = s_bits(a, line, d, off + j);
      for (int64_t i = 0; i < state_len; i++)
        ns[i] = i + L < state_len ? s_bits(a, line, d, off + i + (spec ? 1 : L))
                                  : x_bits(a, xb, t0 + i - (state_len - L), d);
      for (int64_t i = 0; i < state_len; i++) s_put(a, line, d, i, ns[i]);
      conv(a, xb, t0, L, d, cols);
    }
  }
  free(ns);
}

void vllm_ref_update_ring(const vllm_ref_args *a) {
  const int K = (int)a->K;
  const int64_t SL = a->state_len;
  uint32_t cols[3];
  for (int64_t b = 0; b < a->batch; b++) {
    int64_t line = a->cache_indices ? a->cache_indices[b] : b;
    if (line == a->pad_slot_id) continue;
    for (int64_t d = 0; d < a->dim; d++) {
      int64_t pos = a->cache_seqlens[b] % SL, upd = pos - (K - 1);
      if (upd < 0) upd += SL;
      for (int j = 0; j < K - 1; j++) {
        cols[j] = s_bits(a, line, d, upd);
        upd = upd + 1 >= SL ? upd + 1 - SL : upd + 1;
      }
      for (int64_t i = 0; i < a->seqlen; i++) {
        s_put(a, line, d, pos, x_bits(a, b, i, d));
        pos = (pos + 1) % SL;
      }
      conv(a, b, 0, a->seqlen, d, cols);
    }
  }
}
