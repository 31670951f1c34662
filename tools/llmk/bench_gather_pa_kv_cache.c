/* SPDX-License-Identifier: Apache-2.0 */
/* gather_pa_kv_cache, checked against the naive element-by-element gather of
 * tests/ref/gather_pa_kv_cache_ref.h, written from the spec.
 * Bytes per call: the cache rows read and K/V written once, plus the tables. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "bench_pa_kv_cache.h"
#include "gather_pa_kv_cache_ref.h"

static const kv_case cases[] = {
    {true, "1 seq", 16384, 8, 128, 128, 256, BF, BF, NHD, true, false, 1},
    {false, "32 seqs", 16384, 8, 128, 16, 2048, BF, BF, NHD, true, false, 32},
    {false, "1 seq", 16384, 8, 128, 128, 256, E4, BF, NHD, true, false, 1},
    {false, "1 seq", 16384, 8, 128, 128, 256, BF, BF, LLMK_KV_NZ, true, false, 1},
    {false, "1 seq", 16384, 8, 128, 16, 2048, BF, BF, VEC, true, false, 1},
    /* the smallest call (small calls) */
    {true, "1 seq", 1, 8, 128, 128, 64, BF, BF, NHD, true, false, 1},
};

typedef struct ga_state {
  const kv_case *c; /* c->src: the cache dtype, c->cache: the output dtype */
  llmk_tensor kc, vc, tables, lens, scale, ko, vo;
  int64_t max_blocks, L;
  int64_t *tab;
  void *rko, *rvo;
  float scale_v;
  bench_call call;
} ga_state;

static int ga_run_ref(void *arg) {
  ga_state *s = arg;
  const kv_case *c = s->c;
  llmk_tensor ko = s->ko, vo = s->vo;
  ko.data = s->rko;
  vo.data = s->rvo;
  gather_pa_kv_cache_ref_one((int)kv_op_layout(c), 0, &s->kc, s->lens.data, c->nseq,
                             s->tab, s->max_blocks, &s->scale_v, 1, &ko, NULL, NULL);
  if (!c->k_only)
    gather_pa_kv_cache_ref_one((int)kv_op_layout(c), 1, &s->vc, s->lens.data, c->nseq,
                               s->tab, s->max_blocks, &s->scale_v, 1, &vo, NULL, NULL);
  return 0;
}

/* The whole call with a fresh plan (small calls), in the case's workspace. */
static int ga_run_whole(void *arg) {
  ga_state *s = arg;
  const kv_case *c = s->c;
  bool conv = c->src != c->cache;
  size_t ws;
  llmk_plan *p;
  if (llmk_gather_pa_kv_cache_get_workspace_size(
          &s->kc, c->k_only ? NULL : &s->vc, &s->tables, &s->lens,
          conv ? &s->scale : NULL, conv ? &s->scale : NULL, &s->ko,
          c->k_only ? NULL : &s->vo, kv_op_layout(c), &ws, &p) != LLMK_SUCCESS)
    return 1;
  if (ws > s->call.ws) {
    llmk_plan_destroy(p);
    return 1;
  }
  return llmk_gather_pa_kv_cache(s->call.w, ws, p, s->call.ctx) != LLMK_SUCCESS;
}

static void gather_case(bench_env *env, const kv_case *c, const char *shape,
                        const char *dt) {
  bench_result r;
  bench_result_init(&r, "gather_pa_kv_cache", shape, dt);
  ga_state s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.call.run = llmk_gather_pa_kv_cache;
  s.call.ctx = env->ctx;
  s.scale_v = 0.25f;
  bench_rng rng = {0x9a7e4u + (uint64_t)c->T};
  bool conv = c->src != c->cache;
  s.L = c->T / c->nseq;
  s.max_blocks = (s.L + c->block_size - 1) / c->block_size;
  size_t tok = (size_t)(c->T * c->H * c->D);
  size_t ces = llmk_dtype_size(c->src), oes = llmk_dtype_size(c->cache);
  size_t cache_elems = (size_t)(c->num_blocks * c->block_size * c->H * c->D);
  void *kc = bench_alloc(cache_elems * ces, 0), *vc = bench_alloc(cache_elems * ces, 0);
  kv_fill_values(kc, c->src, cache_elems, 4.0f, &rng);
  kv_fill_values(vc, c->src, cache_elems, 4.0f, &rng);
  void *ko = bench_alloc(tok * oes, 0), *vo = bench_alloc(tok * oes, 0);
  s.rko = bench_alloc(tok * oes, 0);
  s.rvo = bench_alloc(tok * oes, 0);
  s.tab = bench_alloc((size_t)(c->nseq * s.max_blocks) * 8, 0);
  int64_t *lens = bench_alloc((size_t)c->nseq * 8, 0);
  { /* distinct blocks in a random order */
    int64_t *perm = bench_alloc((size_t)c->num_blocks * 8, 0);
    for (int64_t i = 0; i < c->num_blocks; i++) perm[i] = i;
    for (int64_t i = 0; i < c->nseq * s.max_blocks; i++) {
      int64_t j = i + (int64_t)bench_rand_below(&rng, (uint64_t)(c->num_blocks - i));
      int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      s.tab[i] = perm[i];
    }
    bench_free(perm);
  }
  for (int64_t i = 0; i < c->nseq; i++) lens[i] = s.L;
  int64_t tshape[3] = {c->T, c->H, c->D}, cs[5], tb[2] = {c->nseq, s.max_blocks},
          nl[1] = {c->nseq}, cst[4];
  const int64_t *strides = kv_cache_strides(c, cst);
  int rank;
  kv_cache_shape(c, c->src, true, &rank, cs);
  llmk_tensor_init(&s.kc, c->src, rank, cs, strides, kc);
  kv_cache_shape(c, c->src, false, &rank, cs);
  llmk_tensor_init(&s.vc, c->src, rank, cs, strides, vc);
  llmk_tensor_init(&s.ko, c->cache, 3, tshape, NULL, ko);
  llmk_tensor_init(&s.vo, c->cache, 3, tshape, NULL, vo);
  llmk_tensor_init(&s.tables, LLMK_I64, 2, tb, NULL, s.tab);
  llmk_tensor_init(&s.lens, LLMK_I64, 1, nl, NULL, lens);
  llmk_tensor_init(&s.scale, LLMK_F32, 0, NULL, NULL, &s.scale_v);
  llmk_status st = llmk_gather_pa_kv_cache_get_workspace_size(
      &s.kc, c->k_only ? NULL : &s.vc, &s.tables, &s.lens, conv ? &s.scale : NULL,
      conv ? &s.scale : NULL, &s.ko, c->k_only ? NULL : &s.vo, kv_op_layout(c),
      &s.call.ws, &s.call.plan);
  if (!bench_call_ready(env, &r, &s.call, st)) goto done;
  double t_ref;
  if (bench_first_run(&r, &s.call, ga_run_ref, &s, &t_ref) &&
      (memcmp(ko, s.rko, tok * oes) || (!c->k_only && memcmp(vo, s.rvo, tok * oes)))) {
    r.check = BENCH_CHECK_FAIL;
    snprintf(r.note, sizeof r.note, "%s differs from the reference",
             memcmp(ko, s.rko, tok * oes) ? "key_out" : "value_out");
  }
  double bytes = (double)(c->k_only ? 1 : 2) * (double)tok * (double)(ces + oes) +
                 (double)(c->nseq * (s.max_blocks + 1)) * 8;
  bench_timing op = bench_time(env, bench_call_fn, NULL, &s.call, bytes, 11, 1000);
  bench_timing ref = bench_time_ref(env, ga_run_ref, NULL, &s, t_ref);
  bench_one_thread(env, &r, bench_call_fn, NULL, &s.call, &s.call.ctx, 11, 1000);
  if (c->T == 1 && r.check == BENCH_CHECK_OK)
    bench_small_call(env, &r, ga_run_whole, NULL, &s, 100000);
  bench_add(env, &r, &op, &ref, bytes);
done:
  bench_call_free(&s.call);
  bench_free(kc);
  bench_free(vc);
  bench_free(ko);
  bench_free(vo);
  bench_free(s.rko);
  bench_free(s.rvo);
  bench_free(s.tab);
  bench_free(lens);
}

void bench_gather_pa_kv_cache(bench_env *env) {
  kv_walk(env, cases, sizeof cases / sizeof cases[0], true, gather_case);
}
