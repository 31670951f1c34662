/* SPDX-License-Identifier: Apache-2.0 */
/* Every op on small valid shapes over one struct of buffers: shared by the stress test
 * (tests/stress) and the allocation-failure test (tests/alloc). */
#ifndef LLMK_STRESS_OPS_H
#define LLMK_STRESS_OPS_H

#include <stdint.h>

#include "llmk/llmk.h"

/* advance_step */
enum { AS_N = 8, AS_MB = 4, AS_BS = 16 };
/* kv caches: T tokens of H x D f32, NB blocks of BS slots; two tasks on 2 threads */
enum { KV_T = 128, KV_H = 4, KV_D = 64, KV_NB = 16, KV_BS = 16 };
enum { KV_SLOTS = KV_NB * KV_BS, KV_ROW = KV_H * KV_D };
/* top-k/top-p */
enum { TK_B = 8, TK_V = 1024 };
/* fused_causal_conv1d: varlen prefill, f32, big enough (>= 64 KiB) to use threads */
enum { CV_T = 64, CV_DIM = 256, CV_K = 4, CV_C = 3, CV_B = 4, CV_LINES = 8 };

enum {
  OP_ADVANCE,
  OP_SCATTER,
  OP_GATHER,
  OP_TOPK,
  OP_MINP,
  OP_SORTED,
  OP_SAMPLE,
  OP_CONV,
  NUM_OPS
};

typedef struct bufs {
  int64_t as_tok[AS_N], as_samp[AS_N], as_pos[AS_N], as_lens[AS_N], as_slot[AS_N],
      as_tab[AS_N * AS_MB];
  float kv_key[KV_T * KV_ROW], kv_val[KV_T * KV_ROW];
  float kv_kc[KV_SLOTS * KV_ROW], kv_vc[KV_SLOTS * KV_ROW];
  int64_t kv_slots[KV_T];
  float g_kc[KV_SLOTS * KV_ROW], g_vc[KV_SLOTS * KV_ROW];
  float g_kout[KV_T * KV_ROW], g_vout[KV_T * KV_ROW];
  int64_t g_tab[2 * 8], g_lens[2];
  float tk_logits[TK_B * TK_V], tk_out[TK_B * TK_V], tk_p[TK_B], tk_minp[TK_B];
  int32_t tk_k[TK_B];
  int64_t tk_kept[TK_B];
  float ts_sv[TK_B * TK_V];
  int32_t ts_si[TK_B * TK_V];
  int64_t sm_seed[TK_B], sm_ids[TK_B];
  float cv_x[CV_T * CV_DIM], cv_w[CV_K * CV_DIM], cv_st[CV_LINES * CV_C * CV_DIM];
  int32_t cv_qsl[CV_B + 1], cv_ci[CV_B];
} bufs;

extern const char *const so_op_names[NUM_OPS];

#define T_INIT(t, dt, rank, shape, data) llmk_tensor_init(t, dt, rank, shape, NULL, data)

/* Inputs (and outputs, to a fixed pattern) of one op, so that every run starts equal. */
void so_reset(bufs *b, int op);
/* Phase 1 of op over b's buffers. */
llmk_status so_plan(bufs *b, int op, size_t *ws, llmk_plan **plan);
/* Phase 2 of op. */
llmk_status so_run(int op, void *ws, size_t n, llmk_plan *plan, llmk_context *ctx);
/* A digest of what op writes. */
uint64_t so_digest(const bufs *b, int op);

#endif
