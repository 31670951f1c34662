/* SPDX-License-Identifier: Apache-2.0 */
/* scatter_pa_kv_cache, checked against kvref_scatter (tests/ref) over whole caches (the
 * slots written and every other byte).
 * Bytes per call: the new K/V read and the cache written once, plus the slots.
 * Issue 23's targets: NHD decode writes against one memcpy per token row to its slot (the
 * floor, timed beside them), the non-NHD and fp8 prefill writes against the copy, the
 * whole call at T=1 against 1 us. VEC caches are vLLM's CPU layout as a strided view. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "bench_pa_kv_cache.h"
#include "scatter_pa_kv_cache_ref.h"

static const kv_case cases[] = {
    {true, "decode", 256, 8, 128, 128, 512, BF, BF, NHD, false, false, 0},
    {true, "prefill", 16384, 8, 128, 128, 256, BF, BF, NHD, true, false, 0},
    /* the smallest call (small calls; issue 23.2: the whole call <= 1 us) */
    {true, "decode", 1, 8, 128, 128, 64, BF, BF, NHD, false, false, 0},
    /* issue 23.3: x-split, NZ and VEC prefill >= 70% of a copy, fp8 writes >= 60% */
    {true, "prefill", 16384, 8, 128, 16, 2048, BF, BF, VEC, true, false, 0},
    {true, "prefill", 16384, 8, 128, 128, 256, BF, E4, NHD, true, false, 0},
    {false, "decode", 256, 8, 128, 16, 2048, BF, BF, VEC, false, false, 0},
    {false, "decode", 64, 8, 128, 128, 256, BF, BF, NHD, false, false, 0},
    {false, "decode", 4096, 8, 128, 128, 256, BF, BF, NHD, false, false, 0},
    {false, "prefill", 4096, 1, 128, 128, 64, BF, BF, NHD, true, false, 0},
    {false, "prefill", 4096, 32, 128, 128, 64, BF, BF, NHD, true, false, 0},
    {false, "prefill", 4096, 8, 64, 128, 64, BF, BF, NHD, true, false, 0},
    {false, "prefill", 4096, 8, 256, 128, 64, BF, BF, NHD, true, false, 0},
    {false, "prefill MLA K-only", 4096, 1, 576, 128, 64, BF, BF, NHD, true, true, 0},
    {false, "prefill", 4096, 8, 128, 16, 512, BF, BF, NHD, true, false, 0},
    {false, "prefill", 4096, 8, 128, 32, 256, BF, BF, NHD, true, false, 0},
    {false, "decode", 256, 8, 128, 128, 512, F16, F16, NHD, false, false, 0},
    {false, "prefill", 16384, 8, 128, 128, 256, F16, F16, NHD, true, false, 0},
    {false, "decode", 256, 8, 128, 128, 512, BF, E4, NHD, false, false, 0},
    {false, "prefill", 16384, 8, 128, 128, 256, F16, E5, NHD, true, false, 0},
    {false, "prefill", 16384, 8, 128, 128, 256, BF, BF, LLMK_KV_XSPLIT, true, false, 0},
    {false, "prefill", 16384, 8, 128, 128, 256, BF, BF, LLMK_KV_NZ, true, false, 0},
    /* the PyPTO shapes of the issue (random slots in a large cache) */
    {false, "PyPTO", 2633, 2, 256, 128, 9760, BF, BF, NHD, false, false, 0},
    {false, "PyPTO", 7902, 2, 256, 128, 9760, BF, BF, NHD, false, false, 0},
    {false, "PyPTO", 16384, 2, 256, 128, 9760, BF, BF, NHD, false, false, 0},
    /* decode into a 1 GiB cache per side: slots far apart, as in a full server */
    {false, "decode large cache", 256, 8, 128, 128, 4096, BF, BF, NHD, false, false, 0},
    /* the shapes of make peers (bench/peers/peer_bench.py): block_size 16, 2048 blocks */
    {false, "peer decode", 256, 8, 128, 16, 2048, BF, BF, NHD, false, false, 0},
    {false, "peer prefill", 16384, 8, 128, 16, 2048, BF, BF, NHD, true, false, 0},
};

typedef struct sc_state {
  const kv_case *c;
  llmk_tensor k, v, kc, vc, rkc, rvc, slots, scale;
  bool quant;
  bench_call call;
} sc_state;

static int sc_run_ref(void *arg) {
  sc_state *s = arg;
  return kvref_scatter(&s->k, s->c->k_only ? NULL : &s->v, &s->rkc,
                       s->c->k_only ? NULL : &s->rvc, &s->slots,
                       s->quant ? &s->scale : NULL, s->quant ? &s->scale : NULL,
                       (int)kv_op_layout(s->c), NULL, NULL) != 0;
}

/* The whole call with a fresh plan (small calls); the workspace of the case's plan (the
 * same shapes ask for the same size). */
static int sc_run_whole(void *arg) {
  sc_state *s = arg;
  const kv_case *c = s->c;
  size_t ws;
  llmk_plan *p;
  if (llmk_scatter_pa_kv_cache_get_workspace_size(
          &s->k, c->k_only ? NULL : &s->v, &s->kc, c->k_only ? NULL : &s->vc, &s->slots,
          s->quant ? &s->scale : NULL, s->quant ? &s->scale : NULL, kv_op_layout(c), &ws,
          &p) != LLMK_SUCCESS)
    return 1;
  if (ws > s->call.ws) {
    llmk_plan_destroy(p);
    return 1;
  }
  return llmk_scatter_pa_kv_cache(s->call.w, ws, p, s->call.ctx) != LLMK_SUCCESS;
}

/* The floor of a write into an NHD cache (issue 23.3): one memcpy per token row (its H x
 * D elements, key and value) to its slot, the tokens split over the context's threads. */
typedef struct row_copy {
  const char *k, *v;
  char *kc, *vc;
  const int64_t *slots;
  size_t row;
  int64_t T;
  int parts;
  const bench_env *env;
} row_copy;

static void row_copy_range(void *arg, int64_t begin, int64_t end) {
  row_copy *j = arg;
  for (int64_t part = begin; part < end; part++)
    for (int64_t t = j->T * part / j->parts; t < j->T * (part + 1) / j->parts; t++) {
      size_t to = (size_t)j->slots[t] * j->row, from = (size_t)t * j->row;
      memcpy(j->kc + to, j->k + from, j->row);
      if (j->vc) memcpy(j->vc + to, j->v + from, j->row);
    }
}

static int run_row_copy(void *arg) {
  row_copy *j = arg;
  bench_parallel(j->env, j->parts, j->parts, row_copy_range, j);
  __asm__ volatile("" ::: "memory");
  return 0;
}

static void make_slots(const kv_case *c, int64_t *slots, bench_rng *rng) {
  if (c->contiguous) {
    int64_t nblk = (c->T + c->block_size - 1) / c->block_size;
    int64_t *perm = bench_alloc((size_t)c->num_blocks * 8, 0);
    for (int64_t i = 0; i < c->num_blocks; i++) perm[i] = i;
    for (int64_t i = 0; i < nblk; i++) {
      int64_t j = i + (int64_t)bench_rand_below(rng, (uint64_t)(c->num_blocks - i));
      int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (int64_t t = 0; t < c->T; t++)
      slots[t] = perm[t / c->block_size] * c->block_size + t % c->block_size;
    bench_free(perm);
  } else { /* distinct random slots */
    int64_t nslots = c->num_blocks * c->block_size;
    int64_t *perm = bench_alloc((size_t)nslots * 8, 0);
    for (int64_t i = 0; i < nslots; i++) perm[i] = i;
    for (int64_t i = 0; i < c->T; i++) {
      int64_t j = i + (int64_t)bench_rand_below(rng, (uint64_t)(nslots - i));
      int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      slots[i] = perm[i];
    }
    bench_free(perm);
  }
}

static void scatter_case(bench_env *env, const kv_case *c, const char *shape,
                         const char *dt) {
  bench_result r;
  bench_result_init(&r, "scatter_pa_kv_cache", shape, dt);
  sc_state s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.call.run = llmk_scatter_pa_kv_cache;
  s.call.ctx = env->ctx;
  s.quant = c->src != c->cache;
  bench_rng rng = {0x6b76u + (uint64_t)c->T * 31u + (uint64_t)c->D};
  size_t tok = (size_t)(c->T * c->H * c->D);
  size_t ses = llmk_dtype_size(c->src), ces = llmk_dtype_size(c->cache);
  size_t cache_bytes = (size_t)(c->num_blocks * c->block_size * c->H * c->D) * ces;
  void *k = bench_alloc(tok * ses, 0), *v = bench_alloc(tok * ses, 0);
  kv_fill_values(k, c->src, tok, 4.0f, &rng);
  kv_fill_values(v, c->src, tok, 4.0f, &rng);
  void *kc = bench_alloc(cache_bytes, 0x11),
       *vc = c->k_only ? NULL : bench_alloc(cache_bytes, 0x11);
  void *rkc = bench_alloc(cache_bytes, 0x11),
       *rvc = c->k_only ? NULL : bench_alloc(cache_bytes, 0x11);
  int64_t *slots = bench_alloc((size_t)c->T * 8, 0);
  make_slots(c, slots, &rng);
  float scale = 0.25f;
  int64_t tshape[3] = {c->T, c->H, c->D}, cs[5], ns[1] = {c->T}, cst[4];
  const int64_t *strides = kv_cache_strides(c, cst);
  int rank;
  llmk_tensor_init(&s.k, c->src, 3, tshape, NULL, k);
  llmk_tensor_init(&s.v, c->src, 3, tshape, NULL, v);
  kv_cache_shape(c, c->cache, true, &rank, cs);
  llmk_tensor_init(&s.kc, c->cache, rank, cs, strides, kc);
  llmk_tensor_init(&s.rkc, c->cache, rank, cs, strides, rkc);
  kv_cache_shape(c, c->cache, false, &rank, cs);
  llmk_tensor_init(&s.vc, c->cache, rank, cs, strides, vc);
  llmk_tensor_init(&s.rvc, c->cache, rank, cs, strides, rvc);
  llmk_tensor_init(&s.slots, LLMK_I64, 1, ns, NULL, slots);
  llmk_tensor_init(&s.scale, LLMK_F32, 0, NULL, NULL, &scale);
  llmk_status st = llmk_scatter_pa_kv_cache_get_workspace_size(
      &s.k, c->k_only ? NULL : &s.v, &s.kc, c->k_only ? NULL : &s.vc, &s.slots,
      s.quant ? &s.scale : NULL, s.quant ? &s.scale : NULL, kv_op_layout(c), &s.call.ws,
      &s.call.plan);
  if (!bench_call_ready(env, &r, &s.call, st)) goto done;

  double t_ref;
  if (bench_first_run(&r, &s.call, sc_run_ref, &s, &t_ref) &&
      (memcmp(kc, rkc, cache_bytes) || (vc && memcmp(vc, rvc, cache_bytes)))) {
    r.check = BENCH_CHECK_FAIL;
    snprintf(r.note, sizeof r.note, "%s cache differs from the reference",
             memcmp(kc, rkc, cache_bytes) ? "key" : "value");
  }
  double bytes =
      (double)(c->k_only ? 1 : 2) * (double)tok * (double)(ses + ces) + (double)c->T * 8;
  bench_timing op = bench_time(env, bench_call_fn, NULL, &s.call, bytes, 11, 1000);
  bench_timing ref = bench_time_ref(env, sc_run_ref, NULL, &s, t_ref);
  bench_one_thread(env, &r, bench_call_fn, NULL, &s.call, &s.call.ctx, 11, 1000);
  if (c->T == 1 && r.check == BENCH_CHECK_OK) {
    bench_small_call(env, &r, sc_run_whole, NULL, &s, 100000);
    if (c->H == 8 && c->D == 128 && c->src == BF && c->cache == BF)
      bench_target_want(&r, BENCH_T_WHOLE_CALL, "23.2", 1e-6);
  }
  /* the row-copy floor of the NHD decode writes (same dtype, so the same bytes) */
  if (c->layout == NHD && c->src == c->cache && c->T > 1 && !c->contiguous &&
      r.check == BENCH_CHECK_OK) {
    row_copy j = {k,    v, kc, c->k_only ? NULL : vc, slots, (size_t)(c->H * c->D) * ces,
                  c->T, 1, env};
    j.parts = env->ctx ? llmk_context_num_threads(env->ctx) : 1;
    bench_timing opb, fl;
    bench_time_beside(env, bench_call_fn, &s.call, run_row_copy, &j, 11, 1000, &opb, &fl);
    const char *name = "one memcpy per token row (threads)";
    if (c->T == 256)
      bench_target_floor(&r, "23.3", name, &opb, &fl, 1.0);
    else if (!fl.status)
      bench_add_extra(&r, name, fl.median, fl.min);
  }
  if (c->contiguous && c->src == c->cache && c->layout != NHD)
    bench_target_want(&r, BENCH_T_PCT_COPY, "23.3", 70);
  if (c->contiguous && s.quant) bench_target_want(&r, BENCH_T_PCT_COPY, "23.3", 60);
  bench_add(env, &r, &op, &ref, bytes);
done:
  bench_call_free(&s.call);
  bench_free(k);
  bench_free(v);
  bench_free(kc);
  bench_free(vc);
  bench_free(rkc);
  bench_free(rvc);
  bench_free(slots);
}

void bench_scatter_pa_kv_cache(bench_env *env) {
  kv_walk(env, cases, sizeof cases / sizeof cases[0], false, scatter_case);
}
