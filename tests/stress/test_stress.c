/* Concurrency stress test (run under ThreadSanitizer by scripts/ci_tsan.sh): several
 * threads call every op at once and compare each result with a single-threaded run.
 *
 * What docs/api.md allows, and what is exercised:
 *   - threads with their own contexts (2 worker threads each), recreated now and then;
 *   - one context shared by two threads, used in turn under a mutex ("a context may
 *     serve one run at a time"), while plan creation happens outside the mutex;
 *   - runs with ctx == NULL;
 *   - llmk_set_max_isa changed by one thread while others make plans (every ISA gives
 *     the same bits, so results must not change);
 *   - llmk_last_error per thread: each thread's failing call leaves its own message;
 *   - plans made on one thread and run on another, a repeatable plan run by two threads
 *     in turn and destroyed by a third (hand-offs through barriers).
 * Concurrent runs of one repeatable plan are not tested: the docs say "don't".
 *
 * Usage: test_stress [iterations]   (default 12; LLMK_STRESS_ITERS also sets it) */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llmk/llmk.h"

#define NTHREADS 4

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
static const char *const op_names[NUM_OPS] = {
    "advance_step",       "scatter_pa_kv_cache", "gather_pa_kv_cache",
    "top_k_top_p",        "top_k_top_p_min_p",   "top_k_top_p_with_sorted",
    "sample_top_k_top_p", "fused_causal_conv1d"};

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

static atomic_int failures;

#define FAIL(...)                                        \
  do {                                                   \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                        \
    fprintf(stderr, "\n");                               \
    atomic_fetch_add(&failures, 1);                      \
  } while (0)

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

/* Inputs (and outputs, to a fixed pattern) of one op, so that every run starts equal. */
static void reset(bufs *b, int op) {
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

#define T_INIT(t, dt, rank, shape, data) llmk_tensor_init(t, dt, rank, shape, NULL, data)

/* Phase 1 of op over b's buffers. */
static llmk_status plan_op(bufs *b, int op, size_t *ws, llmk_plan **plan) {
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

static llmk_status run_op(int op, void *ws, size_t n, llmk_plan *plan,
                          llmk_context *ctx) {
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

/* A digest of what op writes. */
static uint64_t digest(const bufs *b, int op) {
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

static uint64_t ref_digest[NUM_OPS];

/* Runs a plan whose buffers were reset, with a fresh workspace; checks the digest. */
static void run_check(const char *who, bufs *b, int op, size_t ws, llmk_plan *plan,
                      llmk_context *ctx, pthread_mutex_t *ctx_lock) {
  void *w = malloc(ws ? ws : 1);
  if (!w) {
    FAIL("%s: no memory", who);
    llmk_plan_destroy(plan);
    return;
  }
  if (ctx_lock) pthread_mutex_lock(ctx_lock);
  llmk_status st = run_op(op, w, ws, plan, ctx);
  if (ctx_lock) pthread_mutex_unlock(ctx_lock);
  free(w);
  if (st != LLMK_SUCCESS)
    FAIL("%s: %s run: %s: %s", who, op_names[op], llmk_status_string(st),
         llmk_last_error());
  else if (digest(b, op) != ref_digest[op])
    FAIL("%s: %s: result differs from the single-threaded run", who, op_names[op]);
}

/* Plan, reset and run one op; returns 0 on a phase-1 failure (reported). */
static void one_op(const char *who, bufs *b, int op, llmk_context *ctx,
                   pthread_mutex_t *ctx_lock) {
  size_t ws;
  llmk_plan *plan;
  llmk_status st = plan_op(b, op, &ws, &plan);
  if (st != LLMK_SUCCESS) {
    FAIL("%s: %s phase 1: %s: %s", who, op_names[op], llmk_status_string(st),
         llmk_last_error());
    return;
  }
  reset(b, op); /* phase 1 reads no data: inputs may be written after it */
  run_check(who, b, op, ws, plan, ctx, ctx_lock);
}

/* A failing call whose message names a number of this thread's own. */
static void own_error(int tid, const char *who) {
  int64_t n[1] = {AS_N}, n1[2] = {AS_N, 1}, nb[2] = {AS_N, AS_MB};
  int64_t d[AS_N * AS_MB] = {0};
  llmk_tensor a, s, tb;
  T_INIT(&a, LLMK_I64, 1, n, d);
  T_INIT(&s, LLMK_I64, 2, n1, d);
  T_INIT(&tb, LLMK_I64, 2, nb, d);
  size_t ws;
  llmk_plan *plan;
  int64_t num_seqs = 9000 + tid;
  llmk_status st = llmk_advance_step_get_workspace_size(
      &a, &s, &a, &a, &a, &tb, NULL, NULL, num_seqs, num_seqs, AS_BS, &ws, &plan);
  char want[32];
  snprintf(want, sizeof want, "%lld", (long long)num_seqs);
  if (st == LLMK_SUCCESS) {
    FAIL("%s: advance_step with num_seqs=%s succeeded", who, want);
    llmk_plan_destroy(plan);
  } else if (plan != NULL || !strstr(llmk_last_error(), want)) {
    FAIL("%s: last error \"%s\" does not name %s", who, llmk_last_error(), want);
  }
}

static int iterations = 12;
static bufs *thread_bufs[NTHREADS];
static llmk_context *shared_ctx;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;
/* hand-off slots: plans made by thread i over thread_bufs[i] */
static llmk_plan *handoff[NTHREADS][NUM_OPS];
static size_t handoff_ws[NTHREADS][NUM_OPS];

static void *worker(void *arg) {
  int tid = (int)(intptr_t)arg;
  char who[32];
  snprintf(who, sizeof who, "thread %d", tid);
  bufs *b = thread_bufs[tid];
  llmk_context *own = NULL;
  const bool shares = tid >= 2;
  if (!shares && llmk_context_create(2, &own) != LLMK_SUCCESS)
    FAIL("%s: context_create: %s", who, llmk_last_error());

  /* Phase A: every op, every iteration, all threads at once. */
  for (int it = 0; it < iterations; it++) {
    if (tid == 3) /* the ISA in force changes under the other threads' plans */
      llmk_set_max_isa((llmk_isa)(it % 3 == 0   ? LLMK_ISA_SCALAR
                                  : it % 3 == 1 ? LLMK_ISA_AVX2
                                                : LLMK_ISA_AVX512));
    if (!shares && it % 4 == 3) { /* contexts come and go while others run */
      llmk_context_destroy(own);
      own = NULL;
      if (llmk_context_create(tid + 1, &own) != LLMK_SUCCESS)
        FAIL("%s: context_create: %s", who, llmk_last_error());
    }
    if (it % 3 == 0) own_error(tid, who);
    for (int op = 0; op < NUM_OPS; op++) {
      if (shares)
        one_op(who, b, op, shared_ctx, &shared_lock);
      else
        one_op(who, b, op, (tid == 1 && it % 2) ? NULL : own, NULL);
    }
    if (it % 3 == 0) { /* successes leave the thread's own last message alone */
      char want[32];
      snprintf(want, sizeof want, "%d", 9000 + tid);
      if (!strstr(llmk_last_error(), want))
        FAIL("%s: last error changed to \"%s\"", who, llmk_last_error());
    }
  }
  if (tid == 3) llmk_set_max_isa(LLMK_ISA_AVX512);

  /* Phase B: plans made here are run on thread tid+1 over this thread's buffers. */
  for (int op = 0; op < NUM_OPS; op++) {
    llmk_status st = plan_op(b, op, &handoff_ws[tid][op], &handoff[tid][op]);
    if (st != LLMK_SUCCESS) {
      FAIL("%s: %s phase 1: %s", who, op_names[op], llmk_last_error());
      handoff[tid][op] = NULL;
    }
  }
  pthread_barrier_wait(&barrier);
  int from = (tid + NTHREADS - 1) % NTHREADS;
  for (int op = 0; op < NUM_OPS; op++) {
    if (!handoff[from][op]) continue;
    reset(thread_bufs[from], op);
    run_check(who, thread_bufs[from], op, handoff_ws[from][op], handoff[from][op], own,
              NULL); /* consumed here */
    handoff[from][op] = NULL;
  }
  pthread_barrier_wait(&barrier);

  /* Phase C: repeatable plans made here, run by tid+1 then tid+2, destroyed by tid+3. */
  for (int op = 0; op < NUM_OPS; op++) {
    llmk_plan *p = NULL;
    if (plan_op(b, op, &handoff_ws[tid][op], &p) != LLMK_SUCCESS ||
        llmk_plan_set_repeatable(p) != LLMK_SUCCESS) {
      FAIL("%s: %s repeatable plan: %s", who, op_names[op], llmk_last_error());
      llmk_plan_destroy(p);
      p = NULL;
    }
    handoff[tid][op] = p;
  }
  for (int step = 1; step <= 3; step++) {
    pthread_barrier_wait(&barrier);
    int src = (tid + NTHREADS - step) % NTHREADS;
    for (int op = 0; op < NUM_OPS; op++) {
      llmk_plan *p = handoff[src][op];
      if (!p) continue;
      if (step < 3) {
        reset(thread_bufs[src], op);
        run_check(who, thread_bufs[src], op, handoff_ws[src][op], p, own, NULL);
      } else if (llmk_plan_destroy(p) != LLMK_SUCCESS) {
        FAIL("%s: plan_destroy: %s", who, llmk_last_error());
      }
    }
  }
  pthread_barrier_wait(&barrier);
  llmk_context_destroy(own);
  return NULL;
}

int main(int argc, char **argv) {
  const char *env = getenv("LLMK_STRESS_ITERS");
  if (argc > 1)
    iterations = atoi(argv[1]);
  else if (env && *env)
    iterations = atoi(env);
  if (iterations < 1) iterations = 1;
  printf("test_stress: %d threads, %d iterations, runtime %s, ISA %s\n", NTHREADS,
         iterations, llmk_threading_runtime(), llmk_isa_name(llmk_get_isa()));

  for (int i = 0; i < NTHREADS; i++) {
    thread_bufs[i] = calloc(1, sizeof(bufs));
    if (!thread_bufs[i]) return 2;
  }
  /* the reference: every op on the calling thread alone, and the same again with a
   * 2-thread context (results are bit-identical for any thread count) */
  for (int op = 0; op < NUM_OPS; op++) {
    size_t ws;
    llmk_plan *plan;
    llmk_status st = plan_op(thread_bufs[0], op, &ws, &plan);
    void *w = malloc(ws ? ws : 1);
    reset(thread_bufs[0], op);
    if (st == LLMK_SUCCESS) st = run_op(op, w, ws, plan, NULL);
    free(w);
    if (st != LLMK_SUCCESS) {
      fprintf(stderr, "FAIL: %s single-threaded: %s: %s\n", op_names[op],
              llmk_status_string(st), llmk_last_error());
      return 1;
    }
    ref_digest[op] = digest(thread_bufs[0], op);
  }
  if (llmk_context_create(2, &shared_ctx) != LLMK_SUCCESS) {
    fprintf(stderr, "FAIL: context_create: %s\n", llmk_last_error());
    return 1;
  }
  for (int op = 0; op < NUM_OPS; op++)
    one_op("main", thread_bufs[1], op, shared_ctx, NULL);

  pthread_barrier_init(&barrier, NULL, NTHREADS);
  pthread_t th[NTHREADS];
  for (int i = 0; i < NTHREADS; i++)
    if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i)) {
      fprintf(stderr, "FAIL: pthread_create\n");
      return 1;
    }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&barrier);
  llmk_context_destroy(shared_ctx);
  for (int i = 0; i < NTHREADS; i++) free(thread_bufs[i]);

  int f = atomic_load(&failures);
  printf("%s: %d failure(s)\n", f ? "FAILED" : "passed", f);
  return f ? 1 : 0;
}
