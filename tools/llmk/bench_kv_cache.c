/* scatter_pa_kv_cache and gather_pa_kv_cache. Scatter is checked against kvref_scatter
 * (tests/ref) over whole caches (the slots written and every other byte); gather against
 * a naive element-by-element gather written here from <llmk/kv_cache.h>, using the
 * reference's layout offsets (kvref_byte_offset) and format definitions (convert_ref).
 * Bytes per call: the new K/V read and the cache written once (scatter, plus the slots);
 * the cache rows read and K/V written once (gather, plus the tables). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "convert_ref.h"
#include "scatter_pa_kv_cache_ref.h"

typedef struct kv_case {
  bool quick;
  const char *label;
  int64_t T, H, D, block_size, num_blocks;
  llmk_dtype src, cache;
  llmk_kv_layout layout;
  bool contiguous; /* prefill: blocks in a random order, filled in token order */
  bool k_only;     /* no value cache (MLA) */
  int64_t nseq;    /* gather: sequences, T / nseq tokens each */
} kv_case;

#define BF LLMK_BF16
#define F16 LLMK_F16
#define E4 LLMK_FP8_E4M3FN
#define E5 LLMK_FP8_E5M2
#define NHD LLMK_KV_BLOCKS

static const kv_case scatter_cases[] = {
    {true, "decode", 256, 8, 128, 128, 512, BF, BF, NHD, false, false, 0},
    {true, "prefill", 16384, 8, 128, 128, 256, BF, BF, NHD, true, false, 0},
    {false, "decode", 1, 8, 128, 128, 64, BF, BF, NHD, false, false, 0},
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
    {false, "prefill", 16384, 8, 128, 128, 256, BF, E4, NHD, true, false, 0},
    {false, "prefill", 16384, 8, 128, 128, 256, F16, E5, NHD, true, false, 0},
    {false, "prefill", 16384, 8, 128, 128, 256, BF, BF, LLMK_KV_XSPLIT, true, false, 0},
    {false, "prefill", 16384, 8, 128, 128, 256, BF, BF, LLMK_KV_NZ, true, false, 0},
    {false, "PyPTO", 2633, 2, 256, 128, 9760, BF, BF, NHD, false, false, 0},
};

static const kv_case gather_cases[] = {
    {true, "1 seq", 16384, 8, 128, 128, 256, BF, BF, NHD, true, false, 1},
    {false, "32 seqs", 16384, 8, 128, 16, 2048, BF, BF, NHD, true, false, 32},
    {false, "1 seq", 16384, 8, 128, 128, 256, E4, BF, NHD, true, false, 1},
    {false, "1 seq", 16384, 8, 128, 128, 256, BF, BF, LLMK_KV_NZ, true, false, 1},
};

static void cache_shape(const kv_case *c, llmk_dtype cache, bool key, int *rank,
                        int64_t *shape) {
  int64_t es = (int64_t)llmk_dtype_size(cache), x = 16 / es, ld = 32 / es;
  int64_t nb = c->num_blocks, bs = c->block_size, H = c->H, D = c->D;
  if (c->layout == LLMK_KV_BLOCKS) {
    *rank = 4;
    int64_t s[4] = {nb, bs, H, D};
    memcpy(shape, s, sizeof s);
  } else if (c->layout == LLMK_KV_XSPLIT && key) {
    *rank = 5;
    int64_t s[5] = {nb, H, D / x, bs, x};
    memcpy(shape, s, sizeof s);
  } else if (c->layout == LLMK_KV_XSPLIT) {
    *rank = 4;
    int64_t s[4] = {nb, H, D, bs};
    memcpy(shape, s, sizeof s);
  } else {
    *rank = 4;
    int64_t s[4] = {nb, H * D / ld, bs, ld};
    memcpy(shape, s, sizeof s);
  }
}

static const char *layout_label(llmk_kv_layout l) {
  return l == LLMK_KV_BLOCKS ? "NHD" : l == LLMK_KV_XSPLIT ? "x-split" : "NZ";
}

/* n values of dtype dt (f32, f16, bf16 or fp8), roughly uniform in [-amp, amp) */
static void fill_values(void *dst, llmk_dtype dt, size_t n, float amp, bench_rng *rng) {
  enum { CHUNK = 4096 };
  float tmp[CHUNK];
  size_t es = llmk_dtype_size(dt);
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t m = n - i < CHUNK ? n - i : CHUNK;
    for (size_t j = 0; j < m; j++)
      tmp[j] = ((float)(bench_rand(rng) >> 40) * 0x1p-24f * 2.0f - 1.0f) * amp;
    llmk_convert((char *)dst + i * es, dt, tmp, LLMK_F32, m);
  }
}

/* ---------------------------------------------------------------- scatter */

typedef struct sc_state {
  const kv_case *c;
  llmk_tensor k, v, kc, vc, rkc, rvc, slots, scale;
  bool quant;
  llmk_plan *plan;
  size_t ws;
  void *w;
  llmk_context *ctx;
} sc_state;

static int sc_run_op(void *arg) {
  sc_state *s = arg;
  return llmk_scatter_pa_kv_cache(s->w, s->ws, s->plan, s->ctx) != LLMK_SUCCESS;
}

static int sc_run_ref(void *arg) {
  sc_state *s = arg;
  return kvref_scatter(&s->k, s->c->k_only ? NULL : &s->v, &s->rkc,
                       s->c->k_only ? NULL : &s->rvc, &s->slots,
                       s->quant ? &s->scale : NULL, s->quant ? &s->scale : NULL,
                       (int)s->c->layout, NULL, NULL) != 0;
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
  s.ctx = env->ctx;
  s.quant = c->src != c->cache;
  bench_rng rng = {0x6b76u + (uint64_t)c->T * 31u + (uint64_t)c->D};
  size_t tok = (size_t)(c->T * c->H * c->D);
  size_t ses = llmk_dtype_size(c->src), ces = llmk_dtype_size(c->cache);
  size_t cache_bytes = (size_t)(c->num_blocks * c->block_size * c->H * c->D) * ces;
  void *k = bench_alloc(tok * ses, 0), *v = bench_alloc(tok * ses, 0);
  fill_values(k, c->src, tok, 4.0f, &rng);
  fill_values(v, c->src, tok, 4.0f, &rng);
  void *kc = bench_alloc(cache_bytes, 0x11),
       *vc = c->k_only ? NULL : bench_alloc(cache_bytes, 0x11);
  void *rkc = bench_alloc(cache_bytes, 0x11),
       *rvc = c->k_only ? NULL : bench_alloc(cache_bytes, 0x11);
  int64_t *slots = bench_alloc((size_t)c->T * 8, 0);
  make_slots(c, slots, &rng);
  float scale = 0.25f;
  int64_t tshape[3] = {c->T, c->H, c->D}, cs[5], ns[1] = {c->T};
  int rank;
  llmk_tensor_init(&s.k, c->src, 3, tshape, NULL, k);
  llmk_tensor_init(&s.v, c->src, 3, tshape, NULL, v);
  cache_shape(c, c->cache, true, &rank, cs);
  llmk_tensor_init(&s.kc, c->cache, rank, cs, NULL, kc);
  llmk_tensor_init(&s.rkc, c->cache, rank, cs, NULL, rkc);
  cache_shape(c, c->cache, false, &rank, cs);
  llmk_tensor_init(&s.vc, c->cache, rank, cs, NULL, vc);
  llmk_tensor_init(&s.rvc, c->cache, rank, cs, NULL, rvc);
  llmk_tensor_init(&s.slots, LLMK_I64, 1, ns, NULL, slots);
  llmk_tensor_init(&s.scale, LLMK_F32, 0, NULL, NULL, &scale);
  llmk_status st = llmk_scatter_pa_kv_cache_get_workspace_size(
      &s.k, c->k_only ? NULL : &s.v, &s.kc, c->k_only ? NULL : &s.vc, &s.slots,
      s.quant ? &s.scale : NULL, s.quant ? &s.scale : NULL, c->layout, &s.ws, &s.plan);
  if (st == LLMK_SUCCESS) st = llmk_plan_set_repeatable(s.plan);
  if (st != LLMK_SUCCESS) {
    char msg[160];
    snprintf(msg, sizeof msg, "setup: %s", llmk_last_error());
    bench_add_error(env, &r, msg);
    goto done;
  }
  s.w = bench_alloc(s.ws + 1, 0);

  st = llmk_scatter_pa_kv_cache(s.w, s.ws, s.plan, s.ctx);
  double t0 = bench_now();
  int ref_rc = sc_run_ref(&s);
  double t_ref = bench_now() - t0;
  if (st != LLMK_SUCCESS) {
    r.check = BENCH_CHECK_ERROR;
    snprintf(r.note, sizeof r.note, "%s", llmk_last_error());
  } else if (ref_rc != 0) {
    r.check = BENCH_CHECK_FAIL;
    snprintf(r.note, sizeof r.note, "the reference rejected the inputs");
  } else if (memcmp(kc, rkc, cache_bytes) || (vc && memcmp(vc, rvc, cache_bytes))) {
    r.check = BENCH_CHECK_FAIL;
    snprintf(r.note, sizeof r.note, "%s cache differs from the reference",
             memcmp(kc, rkc, cache_bytes) ? "key" : "value");
  }
  bench_timing op = bench_time(sc_run_op, NULL, &s, bench_op_budget(env), 11, 1000);
  bench_timing ref = bench_time_ref(sc_run_ref, NULL, &s, t_ref, bench_ref_budget(env));
  double bytes =
      (double)(c->k_only ? 1 : 2) * (double)tok * (double)(ses + ces) + (double)c->T * 8;
  bench_add(env, &r, &op, &ref, bytes);
done:
  llmk_plan_destroy(s.plan);
  bench_free(s.w);
  bench_free(k);
  bench_free(v);
  bench_free(kc);
  bench_free(vc);
  bench_free(rkc);
  bench_free(rvc);
  bench_free(slots);
}

/* ---------------------------------------------------------------- gather */

typedef struct ga_state {
  const kv_case *c; /* c->src: the cache dtype, c->cache: the output dtype */
  llmk_tensor kc, vc, tables, lens, scale, ko, vo;
  int64_t max_blocks, L;
  int64_t *tab;
  void *rko, *rvo;
  float scale_v;
  llmk_plan *plan;
  size_t ws;
  void *w;
  llmk_context *ctx;
} ga_state;

static int ga_run_op(void *arg) {
  ga_state *s = arg;
  return llmk_gather_pa_kv_cache(s->w, s->ws, s->plan, s->ctx) != LLMK_SUCCESS;
}

/* The definition, one element at a time. */
static void ga_one(const ga_state *s, const llmk_tensor *cache, bool is_value,
                   void *out) {
  const kv_case *c = s->c;
  kvref_view view;
  kvref_view_init(&view, cache, (int)c->layout, is_value, c->H, c->D);
  size_t ces = llmk_dtype_size(c->src), oes = llmk_dtype_size(c->cache);
  bool conv = c->src != c->cache;
  ref_fmt cf = c->src == LLMK_FP8_E5M2 ? REF_FP8_E5M2 : REF_FP8_E4M3FN;
  int64_t t = 0;
  for (int64_t i = 0; i < c->nseq; i++)
    for (int64_t p = 0; p < s->L; p++, t++) {
      int64_t b = s->tab[i * s->max_blocks + p / c->block_size], o = p % c->block_size;
      for (int64_t h = 0; h < c->H; h++)
        for (int64_t d = 0; d < c->D; d++) {
          const unsigned char *src =
              (const unsigned char *)cache->data + kvref_byte_offset(&view, b, o, h, d);
          unsigned char *dst =
              (unsigned char *)out + (size_t)((t * c->H + h) * c->D + d) * oes;
          if (!conv) {
            memcpy(dst, src, ces);
            continue;
          }
          float f = (float)ref_decode(cf, *src) * s->scale_v; /* one f32 product */
          if (c->cache == LLMK_F32) {
            memcpy(dst, &f, 4);
          } else {
            uint16_t h16 =
                (uint16_t)ref_encode(c->cache == LLMK_F16 ? REF_F16 : REF_BF16, f);
            memcpy(dst, &h16, 2);
          }
        }
    }
}

static int ga_run_ref(void *arg) {
  ga_state *s = arg;
  ga_one(s, &s->kc, false, s->rko);
  if (!s->c->k_only) ga_one(s, &s->vc, true, s->rvo);
  return 0;
}

static void gather_case(bench_env *env, const kv_case *c, const char *shape,
                        const char *dt) {
  bench_result r;
  bench_result_init(&r, "gather_pa_kv_cache", shape, dt);
  ga_state s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.ctx = env->ctx;
  s.scale_v = 0.25f;
  bench_rng rng = {0x9a7e4u + (uint64_t)c->T};
  bool conv = c->src != c->cache;
  s.L = c->T / c->nseq;
  s.max_blocks = (s.L + c->block_size - 1) / c->block_size;
  size_t tok = (size_t)(c->T * c->H * c->D);
  size_t ces = llmk_dtype_size(c->src), oes = llmk_dtype_size(c->cache);
  size_t cache_elems = (size_t)(c->num_blocks * c->block_size * c->H * c->D);
  void *kc = bench_alloc(cache_elems * ces, 0), *vc = bench_alloc(cache_elems * ces, 0);
  fill_values(kc, c->src, cache_elems, 4.0f, &rng);
  fill_values(vc, c->src, cache_elems, 4.0f, &rng);
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
          nl[1] = {c->nseq};
  int rank;
  cache_shape(c, c->src, true, &rank, cs);
  llmk_tensor_init(&s.kc, c->src, rank, cs, NULL, kc);
  cache_shape(c, c->src, false, &rank, cs);
  llmk_tensor_init(&s.vc, c->src, rank, cs, NULL, vc);
  llmk_tensor_init(&s.ko, c->cache, 3, tshape, NULL, ko);
  llmk_tensor_init(&s.vo, c->cache, 3, tshape, NULL, vo);
  llmk_tensor_init(&s.tables, LLMK_I64, 2, tb, NULL, s.tab);
  llmk_tensor_init(&s.lens, LLMK_I64, 1, nl, NULL, lens);
  llmk_tensor_init(&s.scale, LLMK_F32, 0, NULL, NULL, &s.scale_v);
  llmk_status st = llmk_gather_pa_kv_cache_get_workspace_size(
      &s.kc, c->k_only ? NULL : &s.vc, &s.tables, &s.lens, conv ? &s.scale : NULL,
      conv ? &s.scale : NULL, &s.ko, c->k_only ? NULL : &s.vo, c->layout, &s.ws, &s.plan);
  if (st == LLMK_SUCCESS) st = llmk_plan_set_repeatable(s.plan);
  if (st != LLMK_SUCCESS) {
    char msg[160];
    snprintf(msg, sizeof msg, "setup: %s", llmk_last_error());
    bench_add_error(env, &r, msg);
    goto done;
  }
  s.w = bench_alloc(s.ws + 1, 0);
  st = llmk_gather_pa_kv_cache(s.w, s.ws, s.plan, s.ctx);
  double t0 = bench_now();
  ga_run_ref(&s);
  double t_ref = bench_now() - t0;
  if (st != LLMK_SUCCESS) {
    r.check = BENCH_CHECK_ERROR;
    snprintf(r.note, sizeof r.note, "%s", llmk_last_error());
  } else if (memcmp(ko, s.rko, tok * oes) ||
             (!c->k_only && memcmp(vo, s.rvo, tok * oes))) {
    r.check = BENCH_CHECK_FAIL;
    snprintf(r.note, sizeof r.note, "%s differs from the reference",
             memcmp(ko, s.rko, tok * oes) ? "key_out" : "value_out");
  }
  bench_timing op = bench_time(ga_run_op, NULL, &s, bench_op_budget(env), 11, 1000);
  bench_timing ref = bench_time_ref(ga_run_ref, NULL, &s, t_ref, bench_ref_budget(env));
  double bytes = (double)(c->k_only ? 1 : 2) * (double)tok * (double)(ces + oes) +
                 (double)(c->nseq * (s.max_blocks + 1)) * 8;
  bench_add(env, &r, &op, &ref, bytes);
done:
  llmk_plan_destroy(s.plan);
  bench_free(s.w);
  bench_free(kc);
  bench_free(vc);
  bench_free(ko);
  bench_free(vo);
  bench_free(s.rko);
  bench_free(s.rvo);
  bench_free(s.tab);
  bench_free(lens);
}

static void labels(const kv_case *c, bool gather, char *shape, size_t ns, char *dt,
                   size_t nd) {
  snprintf(shape, ns, "%s T=%lld H=%lld D=%lld bs=%lld %s", c->label, (long long)c->T,
           (long long)c->H, (long long)c->D, (long long)c->block_size,
           layout_label(c->layout));
  (void)gather;
  if (c->src == c->cache)
    snprintf(dt, nd, "%s", llmk_dtype_name(c->src));
  else
    snprintf(dt, nd, "%s->%s", llmk_dtype_name(c->src), llmk_dtype_name(c->cache));
}

static void walk(bench_env *env, const kv_case *cases, size_t n, bool gather) {
  const char *op = gather ? "gather_pa_kv_cache" : "scatter_pa_kv_cache";
  for (size_t i = 0; i < n; i++) {
    const kv_case *c = &cases[i];
    if (env->quick && !c->quick) continue;
    char shape[96], dt[32];
    labels(c, gather, shape, sizeof shape, dt, sizeof dt);
    /* the --dtype filter looks at the 16/32-bit side: the source (scatter) or the
     * output (gather) */
    llmk_dtype fd = gather ? c->cache : c->src;
    if (!bench_want(env, op, shape, fd, dt)) continue;
    if (gather)
      gather_case(env, c, shape, dt);
    else
      scatter_case(env, c, shape, dt);
  }
}

void bench_scatter_pa_kv_cache(bench_env *env) {
  walk(env, scatter_cases, sizeof scatter_cases / sizeof scatter_cases[0], false);
}

void bench_gather_pa_kv_cache(bench_env *env) {
  walk(env, gather_cases, sizeof gather_cases / sizeof gather_cases[0], true);
}
