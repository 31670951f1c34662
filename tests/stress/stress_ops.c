/* SPDX-License-Identifier: Apache-2.0 */
/* Every op on small valid shapes: see stress_ops.h. */
#include "stress_ops.h"

#include <string.h>

const char *const so_op_names[NUM_OPS] = {"advance_step",       "scatter_pa_kv_cache",
                                          "gather_pa_kv_cache", "top_k_top_p",
                                          "top_k_top_p_min_p",  "top_k_top_p_with_sorted",
                                          "sample_top_k_top_p", "fused_causal_conv1d"};

static uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
static float noise(uint32_t i) { /* in [-4, 4) */
  return (float)(mix(i) >> 8) / (float)(1u << 24) * 8.0f - 4.0f;
}

void so_reset(bufs *b, int op) {
  switch (op) {
    case OP_ADVANCE:
      for (int i = 0; i < AS_N; i++) {
        b->as_tok[i] = 100 + i;
        b->as_samp[i] = 200 + i;
        b->as_pos[i] = 3 * i;
        b->as_lens[i] = 3 * i + 1;
        b->as_slot[i] = -7;
        for (int j = 0; j < AS_MB; j++) b->as_tab[i * AS_MB + j] = i * AS_MB + j;
      }
      break;
    case OP_SCATTER:
      for (int i = 0; i < KV_T * KV_ROW; i++) {
        b->kv_key[i] = noise((uint32_t)i);
        b->kv_val[i] = noise((uint32_t)i + 7777777u);
      }
      for (int i = 0; i < KV_SLOTS * KV_ROW; i++) b->kv_kc[i] = b->kv_vc[i] = -1.5f;
      for (int t = 0; t < KV_T; t++) b->kv_slots[t] = (t * 7) % KV_SLOTS; /* distinct */
      break;
    case OP_GATHER:
      for (int i = 0; i < KV_SLOTS * KV_ROW; i++) {
        b->g_kc[i] = noise((uint32_t)i + 1234567u);
        b->g_vc[i] = noise((uint32_t)i + 7654321u);
      }
      for (int j = 0; j < 16; j++) b->g_tab[j] = (j * 5) % KV_NB;
      b->g_lens[0] = 70; /* 70 + 58 = KV_T tokens */
      b->g_lens[1] = 58;
      memset(b->g_kout, 0, sizeof b->g_kout);
      memset(b->g_vout, 0, sizeof b->g_vout);
      break;
    case OP_TOPK:
    case OP_MINP:
    case OP_SAMPLE:
      for (int i = 0; i < TK_B * TK_V; i++) b->tk_logits[i] = noise((uint32_t)i + 42u);
      for (int r = 0; r < TK_B; r++) {
        b->tk_p[r] = 0.5f + 0.05f * (float)r;
        b->tk_k[r] = 5 + 7 * r;
        b->tk_minp[r] = 0.02f * (float)r;
        b->tk_kept[r] = -1;
        b->sm_seed[r] = 1000 + r;
        b->sm_ids[r] = -1;
      }
      memset(b->tk_out, 0, sizeof b->tk_out);
      break;
    case OP_SORTED:
      for (int r = 0; r < TK_B; r++) {
        b->tk_p[r] = 0.5f + 0.05f * (float)r;
        b->tk_k[r] = 5 + 7 * r;
        for (int j = 0; j < TK_V; j++) {
          b->ts_sv[r * TK_V + j] = -5.0f + 0.01f * (float)j; /* ascending */
          b->ts_si[r * TK_V + j] = (j * 769 + r) % TK_V;     /* a permutation */
        }
      }
      memset(b->tk_out, 0, sizeof b->tk_out);
      break;
    case OP_CONV: {
      static const int32_t qsl[CV_B + 1] = {0, 20, 30, 50, 64};
      static const int32_t ci[CV_B] = {0, 3, 1, 5};
      memcpy(b->cv_qsl, qsl, sizeof qsl);
      memcpy(b->cv_ci, ci, sizeof ci);
      for (int i = 0; i < CV_T * CV_DIM; i++) b->cv_x[i] = noise((uint32_t)i + 99u);
      for (int i = 0; i < CV_K * CV_DIM; i++) b->cv_w[i] = noise((uint32_t)i + 5u) / 4;
      for (int i = 0; i < CV_LINES * CV_C * CV_DIM; i++)
        b->cv_st[i] = noise((uint32_t)i + 3u);
      break;
    }
    default:
      break;
  }
}

llmk_status so_plan(bufs *b, int op, size_t *ws, llmk_plan **plan) {
  llmk_tensor t[12];
  switch (op) {
    case OP_ADVANCE: {
      int64_t n[1] = {AS_N}, n1[2] = {AS_N, 1}, nb[2] = {AS_N, AS_MB};
      T_INIT(&t[0], LLMK_I64, 1, n, b->as_tok);
      T_INIT(&t[1], LLMK_I64, 2, n1, b->as_samp);
      T_INIT(&t[2], LLMK_I64, 1, n, b->as_pos);
      T_INIT(&t[3], LLMK_I64, 1, n, b->as_lens);
      T_INIT(&t[4], LLMK_I64, 1, n, b->as_slot);
      T_INIT(&t[5], LLMK_I64, 2, nb, b->as_tab);
      return llmk_advance_step_get_workspace_size(&t[0], &t[1], &t[2], &t[3], &t[4],
                                                  &t[5], NULL, NULL, AS_N, AS_N, AS_BS,
                                                  ws, plan);
    }
    case OP_SCATTER: {
      int64_t tok[3] = {KV_T, KV_H, KV_D}, cache[4] = {KV_NB, KV_BS, KV_H, KV_D},
              ns[1] = {KV_T};
      T_INIT(&t[0], LLMK_F32, 3, tok, b->kv_key);
      T_INIT(&t[1], LLMK_F32, 3, tok, b->kv_val);
      T_INIT(&t[2], LLMK_F32, 4, cache, b->kv_kc);
      T_INIT(&t[3], LLMK_F32, 4, cache, b->kv_vc);
      T_INIT(&t[4], LLMK_I64, 1, ns, b->kv_slots);
      return llmk_scatter_pa_kv_cache_get_workspace_size(
          &t[0], &t[1], &t[2], &t[3], &t[4], NULL, NULL, LLMK_KV_BLOCKS, ws, plan);
    }
    case OP_GATHER: {
      int64_t tok[3] = {KV_T, KV_H, KV_D}, cache[4] = {KV_NB, KV_BS, KV_H, KV_D},
              tab[2] = {2, 8}, nl[1] = {2};
      T_INIT(&t[0], LLMK_F32, 4, cache, b->g_kc);
      T_INIT(&t[1], LLMK_F32, 4, cache, b->g_vc);
      T_INIT(&t[2], LLMK_I64, 2, tab, b->g_tab);
      T_INIT(&t[3], LLMK_I64, 1, nl, b->g_lens);
      T_INIT(&t[4], LLMK_F32, 3, tok, b->g_kout);
      T_INIT(&t[5], LLMK_F32, 3, tok, b->g_vout);
      return llmk_gather_pa_kv_cache_get_workspace_size(
          &t[0], &t[1], &t[2], &t[3], NULL, NULL, &t[4], &t[5], LLMK_KV_BLOCKS, ws, plan);
    }
    case OP_TOPK:
    case OP_MINP:
    case OP_SAMPLE:
    case OP_SORTED: {
      int64_t bv[2] = {TK_B, TK_V}, nb[1] = {TK_B};
      T_INIT(&t[0], LLMK_F32, 2, bv, b->tk_logits);
      T_INIT(&t[1], LLMK_F32, 1, nb, b->tk_p);
      T_INIT(&t[2], LLMK_I32, 1, nb, b->tk_k);
      T_INIT(&t[3], LLMK_F32, 2, bv, b->tk_out);
      T_INIT(&t[4], LLMK_F32, 1, nb, b->tk_minp);
      T_INIT(&t[5], LLMK_I64, 1, nb, b->tk_kept);
      T_INIT(&t[6], LLMK_I64, 1, nb, b->sm_seed);
      T_INIT(&t[7], LLMK_I64, 1, nb, b->sm_ids);
      T_INIT(&t[8], LLMK_F32, 2, bv, b->ts_sv);
      T_INIT(&t[9], LLMK_I32, 2, bv, b->ts_si);
      if (op == OP_TOPK)
        return llmk_apply_top_k_top_p_get_workspace_size(&t[0], &t[1], &t[2], &t[3], ws,
                                                         plan);
      if (op == OP_MINP)
        return llmk_apply_top_k_top_p_min_p_get_workspace_size(&t[0], &t[1], &t[2], &t[4],
                                                               &t[3], &t[5], ws, plan);
      if (op == OP_SAMPLE)
        return llmk_sample_top_k_top_p_get_workspace_size(&t[0], &t[1], &t[2], NULL, NULL,
                                                          &t[6], NULL, &t[7], ws, plan);
      return llmk_apply_top_k_top_p_with_sorted_get_workspace_size(
          &t[8], &t[9], &t[1], &t[2], NULL, &t[3], ws, plan);
    }
    case OP_CONV: {
      int64_t x[2] = {CV_T, CV_DIM}, w[2] = {CV_K, CV_DIM},
              st[3] = {CV_LINES, CV_C, CV_DIM}, q[1] = {CV_B + 1}, c[1] = {CV_B};
      T_INIT(&t[0], LLMK_F32, 2, x, b->cv_x);
      T_INIT(&t[1], LLMK_F32, 2, w, b->cv_w);
      T_INIT(&t[2], LLMK_F32, 3, st, b->cv_st);
      T_INIT(&t[3], LLMK_I32, 1, q, b->cv_qsl);
      T_INIT(&t[4], LLMK_I32, 1, c, b->cv_ci);
      return llmk_fused_causal_conv1d_get_workspace_size(
          &t[0], &t[1], &t[2], &t[3], &t[4], NULL, NULL, NULL, NULL, NULL, NULL, -1, 20,
          0, 0, 0, LLMK_ACTIVATION_SILU, ws, plan);
    }
    default:
      return LLMK_ERROR_INTERNAL;
  }
}

llmk_status so_run(int op, void *ws, size_t n, llmk_plan *plan, llmk_context *ctx) {
  switch (op) {
    case OP_ADVANCE:
      return llmk_advance_step(ws, n, plan, ctx);
    case OP_SCATTER:
      return llmk_scatter_pa_kv_cache(ws, n, plan, ctx);
    case OP_GATHER:
      return llmk_gather_pa_kv_cache(ws, n, plan, ctx);
    case OP_CONV:
      return llmk_fused_causal_conv1d(ws, n, plan, ctx);
    default:
      return llmk_apply_top_k_top_p(ws, n, plan, ctx);
  }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
  return h;
}

uint64_t so_digest(const bufs *b, int op) {
  uint64_t h = 0xcbf29ce484222325ull;
  switch (op) {
    case OP_ADVANCE:
      h = fnv(h, b->as_tok, sizeof b->as_tok);
      h = fnv(h, b->as_pos, sizeof b->as_pos);
      h = fnv(h, b->as_lens, sizeof b->as_lens);
      return fnv(h, b->as_slot, sizeof b->as_slot);
    case OP_SCATTER:
      h = fnv(h, b->kv_kc, sizeof b->kv_kc);
      return fnv(h, b->kv_vc, sizeof b->kv_vc);
    case OP_GATHER:
      h = fnv(h, b->g_kout, sizeof b->g_kout);
      return fnv(h, b->g_vout, sizeof b->g_vout);
    case OP_TOPK:
    case OP_SORTED:
      return fnv(h, b->tk_out, sizeof b->tk_out);
    case OP_MINP:
      h = fnv(h, b->tk_out, sizeof b->tk_out);
      return fnv(h, b->tk_kept, sizeof b->tk_kept);
    case OP_SAMPLE:
      return fnv(h, b->sm_ids, sizeof b->sm_ids);
    case OP_CONV:
      h = fnv(h, b->cv_x, sizeof b->cv_x);
      return fnv(h, b->cv_st, sizeof b->cv_st);
    default:
      return 0;
  }
}
