/* SPDX-License-Identifier: Apache-2.0 */
/* fused_causal_conv1d, K=3 (and K=4, the shapes of make peers), against fcc_ref_run
 * (tests/ref): the op on one copy of x and conv_states, the reference on another, both
 * compared bit for bit. Timing then runs the op in place, call after call; the taps have
 * gain 1 (0.5^2 + 0.5^2 + 0.7071^2, or 4 x 0.5^2) so that x keeps its scale (shrinking
 * values would turn subnormal and time the FPU's slow path). With SiLU the taps' absolute
 * sum is below 1 instead: SiLU passes large positive values on, so gain-1 taps grow x
 * call after call until |y| > 69, a range that real activations never reach and whose
 * exact SiLU takes the exp's slower full-range path; such taps keep x of order 1. With
 * SiLU the library uses its own exp (docs/ops/fused_causal_conv1d.md): an x element may
 * then differ from the reference by up to one output ulp + 2e-6 * |silu value|, as
 * tests/ops/test_fused_causal_conv1d.c allows; such elements are counted in the note.
 * Bytes per call: x read and written, the cache rows read (the history the conv or the
 * state shift needs) and written (state and APC fill rows), the weight and the bias.
 * The SiLU + bias cases of issue 23 (silu_shapes, over dtypes and K) also time the plain
 * conv of the same shape in place (their floor) and judge the targets. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "fused_causal_conv1d_ref.h"
#include "kernels/common/exp.h" /* the library's SiLU: the floor below is its cost */
#include "ref_util.h"

/* ------------------------------------------ the floor of the SiLU cases
 * SiLU alone, with the library's own SiLU for the ISA in use (AVX-512 or scalar), on as
 * many f32 values as the case's outputs, from and to L1-resident buffers, on the
 * context's threads: no conv, no memory traffic, no conversion. The conv with bias + SiLU
 * cannot take less than the plain conv plus this, unless the two overlap. */
enum { SILU_CHUNK = 1024, SILU_PARTS_MAX = 64 };

static void silu_scalar(const float *x, float *y, size_t n) {
  for (size_t i = 0; i < n; i++) y[i] = llmk__silu(x[i]);
}
#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__) /* GCC target pragmas */
#define SILU_AVX512 1
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma")
#include "kernels/common/exp-avx512.h"
static void silu_avx512(const float *x, float *y, size_t n) {
  for (size_t i = 0; i + 64 <= n; i += 64) {
    __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16),
           c = _mm512_loadu_ps(x + i + 32), d = _mm512_loadu_ps(x + i + 48);
    _mm512_storeu_ps(y + i, llmk__avx512_silu(a));
    _mm512_storeu_ps(y + i + 16, llmk__avx512_silu(b));
    _mm512_storeu_ps(y + i + 32, llmk__avx512_silu(c));
    _mm512_storeu_ps(y + i + 48, llmk__avx512_silu(d));
  }
}
#pragma GCC pop_options
#else
#define SILU_AVX512 0
#define silu_avx512 silu_scalar
#endif

static bool silu_simd(void) {
  return SILU_AVX512 && llmk_get_isa() == LLMK_ISA_AVX512;
}

typedef struct silu_job {
  const bench_env *env;
  int64_t n; /* values in all */
  int parts;
  float x[SILU_CHUNK];
  float y[SILU_PARTS_MAX][SILU_CHUNK];
} silu_job;

static void silu_range(void *arg, int64_t begin, int64_t end) {
  silu_job *j = arg;
  bool simd = silu_simd();
  for (int64_t part = begin; part < end; part++) {
    int64_t a = j->n / j->parts * part,
            b = part == j->parts - 1 ? j->n : a + j->n / j->parts;
    for (int64_t i = a; i < b; i += SILU_CHUNK) {
      if (simd)
        silu_avx512(j->x, j->y[part], SILU_CHUNK);
      else
        silu_scalar(j->x, j->y[part], SILU_CHUNK);
      __asm__ volatile("" ::: "memory");
    }
  }
}

static int run_silu_floor(void *arg) {
  silu_job *j = arg;
  bench_parallel(j->env, j->parts, j->parts, silu_range, j);
  return 0;
}

enum { KTAPS = 3 }; /* unless a case says otherwise */

typedef struct cc_case {
  bool quick;
  const char *label;
  llmk_dtype dtype;
  int64_t batch, dim, m;
  int kind;            /* 0 fixed batch (3-D x), 1 varlen decode, 2 prefill, 3 mixed */
  int64_t prefill_len; /* kind 2/3: tokens per prefill sequence */
  int64_t n_prefill;   /* kind 3: prefill sequences among batch */
  int64_t block_size;  /* APC when > 0 (prefill only) */
  int act;             /* 0 none, 1 SiLU and a bias, 2 SiLU alone */
  int K;               /* taps; 0: KTAPS */
  bool targets;        /* issue 23.1: within 1.2x the plain conv, >= 85% of a copy */
} cc_case;

#define BF LLMK_BF16
static const cc_case cases[] = {
    {false, "decode fixed", BF, 256, 8192, 0, 0, 0, 0, 0, 0, 3, false},
    {true, "decode fixed", BF, 256, 8192, 3, 0, 0, 0, 0, 0, 3, false},
    {true, "decode varlen", BF, 256, 8192, 3, 1, 0, 0, 0, 0, 3, false},
    {false, "prefill", BF, 4, 8192, 0, 2, 1024, 0, 0, 0, 3, false},
    {true, "mixed", BF, 128, 8192, 3, 3, 512, 2, 0, 0, 3, false},
    {false, "prefill APC bs=256", BF, 4, 8192, 0, 2, 1024, 0, 256, 0, 3, false},
    {false, "decode fixed", BF, 64, 4096, 0, 0, 0, 0, 0, 0, 3, false},
    {false, "decode fixed", LLMK_F16, 256, 8192, 3, 0, 0, 0, 0, 0, 3, false},
    {false, "prefill", LLMK_F16, 4, 8192, 0, 2, 1024, 0, 0, 0, 3, false},
    {false, "decode fixed", LLMK_F32, 256, 8192, 3, 0, 0, 0, 0, 0, 3, false},
    {false, "prefill", LLMK_F32, 4, 8192, 0, 2, 1024, 0, 0, 0, 3, false},
    {false, "prefill silu", BF, 4, 8192, 0, 2, 1024, 0, 0, 2, 3, false},
    /* the smallest call (small calls): one sequence, one token */
    {true, "decode fixed silu+bias", BF, 1, 8192, 0, 0, 0, 0, 0, 1, 4, false},
};

/* Issue 23.1: SiLU and a bias on these shapes, for each dtype and K = 2..4, against the
 * plain conv of the same shape timed beside it (the shapes of make peers among them:
 * K=4 bf16 decode fixed m=0 and prefill, the two of the quick set). */
static const cc_case silu_shapes[] = {
    {false, "decode fixed silu+bias", BF, 256, 8192, 0, 0, 0, 0, 0, 1, 0, true},
    {false, "decode fixed silu+bias", BF, 256, 8192, 3, 0, 0, 0, 0, 1, 0, true},
    {false, "decode varlen silu+bias", BF, 256, 8192, 0, 1, 0, 0, 0, 1, 0, true},
    {false, "decode varlen silu+bias", BF, 256, 8192, 3, 1, 0, 0, 0, 1, 0, true},
    {false, "prefill silu+bias", BF, 4, 8192, 0, 2, 1024, 0, 0, 1, 0, true},
};

typedef struct cc_state {
  bench_call call;
  fcc_ref_args ref;
  /* the op's tensors and attributes, for the plain conv and the whole call */
  const cc_case *c;
  llmk_tensor tx, tw, tcs, tq, tci, tn, tnct, tf, tl, ti, tbias;
} cc_state;

/* Phase 1 on the case's tensors; act: the case's activation and bias, or (false) the
 * plain conv of the same shape. */
static llmk_status plan_conv(cc_state *s, bool act, size_t *ws, llmk_plan **plan) {
  const cc_case *c = s->c;
  const bool apc = c->block_size > 0, use_nacc = c->kind != 2 && c->m > 0;
  return llmk_fused_causal_conv1d_get_workspace_size(
      &s->tx, &s->tw, &s->tcs, c->kind == 0 ? NULL : &s->tq, &s->tci,
      use_nacc ? &s->tn : NULL, apc ? &s->tnct : NULL, apc ? &s->tf : NULL,
      apc ? &s->tl : NULL, apc ? &s->ti : NULL, act && c->act == 1 ? &s->tbias : NULL, -1,
      -1, 0, c->block_size, 0,
      act && c->act != 0 ? LLMK_ACTIVATION_SILU : LLMK_ACTIVATION_NONE, ws, plan);
}

/* The whole call with a fresh plan (small calls), in the case's workspace. */
static int run_whole(void *arg) {
  cc_state *s = arg;
  size_t ws;
  llmk_plan *p;
  if (plan_conv(s, true, &ws, &p) != LLMK_SUCCESS) return 1;
  if (ws > s->call.ws) {
    llmk_plan_destroy(p);
    return 1;
  }
  return llmk_fused_causal_conv1d(s->call.w, ws, p, s->call.ctx) != LLMK_SUCCESS;
}

static int run_ref(void *arg) {
  cc_state *s = arg;
  return fcc_ref_run(&s->ref) != 0;
}

/* n values in about [-2, 2] of dtype dt, none tiny */
static void fill_x(void *dst, llmk_dtype dt, size_t n, bench_rng *rng) {
  enum { CHUNK = 4096 };
  float tmp[CHUNK];
  size_t es = llmk_dtype_size(dt);
  for (size_t i = 0; i < n; i += CHUNK) {
    size_t m = n - i < CHUNK ? n - i : CHUNK;
    for (size_t j = 0; j < m; j++) {
      uint64_t u = bench_rand(rng);
      float v = 0.25f + (float)(u >> 41) * 0x1p-23f * 1.75f;
      tmp[j] = (u & 1) ? -v : v;
    }
    llmk_convert((char *)dst + i * es, dt, tmp, LLMK_F32, m);
  }
}

/* x of the op against the reference's, with the SiLU tolerance: the number of elements
 * that differ within it in *near, and -1 if one differs by more (else 0). */
static int compare_silu(llmk_dtype dt, const void *got, const void *want,
                        const float *y_act, size_t n, size_t *near) {
  fcc_ref_dtype rd = dt == LLMK_F32   ? FCC_REF_F32
                     : dt == LLMK_F16 ? FCC_REF_F16
                                      : FCC_REF_BF16;
  *near = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t g = fcc_ref_load(got, (int64_t)i, rd),
             w = fcc_ref_load(want, (int64_t)i, rd);
    if (g == w) continue;
    double gv = fcc_ref_widen(rd, g), wv = fcc_ref_widen(rd, w);
    if (!isfinite(gv) || !isfinite(wv)) return -1;
    double diff = fabs(gv - wv), big = fmax(fabs(gv), fabs(wv));
    if (diff > ref_ulp(dt, big) + 2e-6 * fabs((double)y_act[i])) return -1;
    (*near)++;
  }
  return 0;
}

static fcc_ref_dtype ccdt(llmk_dtype d) {
  return d == LLMK_F32 ? FCC_REF_F32 : d == LLMK_F16 ? FCC_REF_F16 : FCC_REF_BF16;
}

static void run_case(bench_env *env, const cc_case *c, const char *shape,
                     const char *dt) {
  bench_result r;
  bench_result_init(&r, "fused_causal_conv1d", shape, dt);
  cc_state s;
  memset(&s, 0, sizeof s);
  s.call.run = llmk_fused_causal_conv1d;
  s.call.ctx = env->ctx;
  bench_rng rng = {0xc0171du + (uint64_t)c->batch * 7u + (uint64_t)c->kind};
  const bool silu = c->act != 0, has_bias = c->act == 1;
  const int64_t K = c->K ? c->K : KTAPS, dim = c->dim, B = c->batch, m = c->m,
                C = K - 1 + m;
  const size_t es = llmk_dtype_size(c->dtype);
  int64_t *len = bench_alloc((size_t)B * 8, 0);
  int64_t T = 0;
  for (int64_t b = 0; b < B; b++) {
    if (c->kind == 0)
      len[b] = m + 1;
    else if (c->kind == 1)
      len[b] = 1 + (int64_t)bench_rand_below(&rng, (uint64_t)(m + 1));
    else if (c->kind == 2 || b < c->n_prefill)
      len[b] = c->prefill_len;
    else
      len[b] = 1 + (int64_t)bench_rand_below(&rng, (uint64_t)(m + 1));
    T += len[b];
  }
  const bool apc = c->block_size > 0, use_nacc = c->kind != 2 && m > 0;
  int64_t max_blocks = apc ? c->prefill_len / c->block_size + 2 : 1;
  int64_t lines = apc ? B * max_blocks + 8 : 2 * B + 8;
  size_t x_bytes = (size_t)(T * dim) * es, cs_bytes = (size_t)(lines * C * dim) * es;
  void *x = bench_alloc(x_bytes, 0), *rx = bench_alloc(x_bytes, 0);
  void *cs = bench_alloc(cs_bytes, 0), *rcs = bench_alloc(cs_bytes, 0);
  void *w = bench_alloc((size_t)(K * dim) * es, 0),
       *bias = bench_alloc((size_t)dim * es, 0);
  fill_x(x, c->dtype, (size_t)(T * dim), &rng);
  fill_x(cs, c->dtype, (size_t)(lines * C * dim), &rng);
  {
    float *tw = bench_alloc((size_t)(K * dim) * 4, 0),
          *tb = bench_alloc((size_t)dim * 4, 0);
    static const float taps3[3] = {0.5f, 0.5f, 0.70710678f};
    for (int64_t i = 0; i < K * dim; i++) {
      /* gain 1: K=2 2 x 0.5, K=4 4 x 0.25; with SiLU, sum |tap| 7/8 */
      float tap = silu     ? 0.875f / (float)K
                  : K == 3 ? taps3[i / dim]
                  : K == 2 ? 0.70710678f
                           : 0.5f;
      tw[i] = (bench_rand(&rng) & 1) ? -tap : tap;
    }
    /* never 0: with SiLU, in-place repeated calls then settle on values away from 0 */
    for (int64_t i = 0; i < dim; i++) {
      uint64_t u = bench_rand(&rng);
      tb[i] = (float)(1 + (u >> 1) % 4) * ((u & 1) ? -0.0625f : 0.0625f);
    }
    llmk_convert(w, c->dtype, tw, LLMK_F32, (size_t)(K * dim));
    llmk_convert(bias, c->dtype, tb, LLMK_F32, (size_t)dim);
    bench_free(tw);
    bench_free(tb);
  }
  int64_t *qsl = bench_alloc((size_t)(B + 1) * 8, 0),
          *ci = bench_alloc((size_t)(B * max_blocks) * 8, 0);
  int64_t *nacc = bench_alloc((size_t)B * 8, 0), *nct = bench_alloc((size_t)B * 8, 0);
  int64_t *first = bench_alloc((size_t)B * 8, 0), *last = bench_alloc((size_t)B * 8, 0);
  int64_t *init = bench_alloc((size_t)B * 8, 0),
          *perm = bench_alloc((size_t)lines * 8, 0);
  for (int64_t i = 0; i < lines; i++) perm[i] = i;
  for (int64_t i = lines - 1; i > 0; i--) {
    int64_t j = (int64_t)bench_rand_below(&rng, (uint64_t)(i + 1));
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  qsl[0] = 0;
  for (int64_t b = 0; b < B; b++) qsl[b + 1] = qsl[b] + len[b];
  for (int64_t i = 0; i < B * max_blocks; i++) ci[i] = perm[i];
  for (int64_t b = 0; b < B; b++) {
    nacc[b] =
        len[b] > m + 1 ? 0 : (int64_t)(1 + bench_rand_below(&rng, (uint64_t)(m + 1)));
    nct[b] = apc ? c->block_size / 2 : 7;
    init[b] = 0;
    first[b] = 0;
    last[b] = apc ? (nct[b] % c->block_size + len[b] - 1) / c->block_size : 0;
  }
  /* the rows that must move */
  int64_t rows = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t off = use_nacc ? (nacc[b] > 1 ? nacc[b] - 1 : 0) : C - (K - 1),
            hn = off + K - 1;
    int64_t Ln = hn + len[b], M = C < Ln ? C : Ln, lo = Ln - M < off ? Ln - M : off;
    rows += 2 * len[b] + M + (hn - (lo > 0 ? lo : 0)) + (last[b] - first[b]) * (K - 1);
  }
  double bytes = (double)(rows + K + (has_bias ? 1 : 0)) * (double)dim * (double)es;
  memcpy(rx, x, x_bytes);
  memcpy(rcs, cs, cs_bytes);

  int64_t sx2[2] = {T, dim}, sx3[3] = {B, m + 1, dim}, sw[2] = {K, dim},
          scs[3] = {lines, C, dim};
  int64_t sq[1] = {B + 1}, sb[1] = {B}, sci2[2] = {B, max_blocks}, sd[1] = {dim};
  if (c->kind == 0)
    llmk_tensor_init(&s.tx, c->dtype, 3, sx3, NULL, x);
  else
    llmk_tensor_init(&s.tx, c->dtype, 2, sx2, NULL, x);
  llmk_tensor_init(&s.tw, c->dtype, 2, sw, NULL, w);
  llmk_tensor_init(&s.tcs, c->dtype, 3, scs, NULL, cs);
  llmk_tensor_init(&s.tq, LLMK_I64, 1, sq, NULL, qsl);
  if (apc)
    llmk_tensor_init(&s.tci, LLMK_I64, 2, sci2, NULL, ci);
  else
    llmk_tensor_init(&s.tci, LLMK_I64, 1, sb, NULL, ci);
  llmk_tensor_init(&s.tn, LLMK_I64, 1, sb, NULL, nacc);
  llmk_tensor_init(&s.tnct, LLMK_I64, 1, sb, NULL, nct);
  llmk_tensor_init(&s.tf, LLMK_I64, 1, sb, NULL, first);
  llmk_tensor_init(&s.tl, LLMK_I64, 1, sb, NULL, last);
  llmk_tensor_init(&s.ti, LLMK_I64, 1, sb, NULL, init);
  llmk_tensor_init(&s.tbias, c->dtype, 1, sd, NULL, bias);
  s.c = c;
  llmk_status st = plan_conv(&s, true, &s.call.ws, &s.call.plan);
  if (!bench_call_ready(env, &r, &s.call, st)) goto done;

  fcc_ref_args *a = &s.ref;
  memset(a, 0, sizeof *a);
  a->x_dtype = a->weight_dtype = a->bias_dtype = ccdt(c->dtype);
  a->batch = B;
  a->dim = dim;
  a->K = K;
  a->x = rx;
  a->num_tokens = T;
  a->seq_len_3d = c->kind == 0 ? m + 1 : 0;
  a->x_stride_b = (m + 1) * dim;
  a->x_stride_t = dim;
  a->query_start_loc = qsl;
  a->weight = w;
  a->weight_stride = dim;
  a->bias = has_bias ? bias : NULL;
  a->conv_states = rcs;
  a->num_lines = lines;
  a->C = C;
  a->cs_stride_line = C * dim;
  a->cs_stride_row = dim;
  a->cache_indices = ci;
  a->max_blocks = apc ? max_blocks : 0;
  a->num_accepted_tokens = use_nacc ? nacc : NULL;
  a->num_computed_tokens = apc ? nct : NULL;
  a->block_idx_first = apc ? first : NULL;
  a->block_idx_last = apc ? last : NULL;
  a->initial_state_idx = apc ? init : NULL;
  a->pad_slot_id = -1;
  a->max_query_len = -1;
  a->block_size = c->block_size;
  a->silu = silu;
  float *y_act = silu ? bench_alloc((size_t)(T * dim) * 4, 0) : NULL;
  a->y_act = y_act;

  bench_progress(env, "    reference...\n");
  double t_ref;
  if (bench_first_run(&r, &s.call, run_ref, &s, &t_ref)) {
    size_t near = 0;
    if (memcmp(cs, rcs, cs_bytes)) {
      r.check = BENCH_CHECK_FAIL;
      snprintf(r.note, sizeof r.note, "conv_states differs from the reference");
    } else if (!silu && memcmp(x, rx, x_bytes)) {
      r.check = BENCH_CHECK_FAIL;
      snprintf(r.note, sizeof r.note, "x differs from the reference");
    } else if (silu &&
               compare_silu(c->dtype, x, rx, y_act, (size_t)(T * dim), &near) != 0) {
      r.check = BENCH_CHECK_FAIL;
      snprintf(r.note, sizeof r.note,
               "x differs from the reference beyond the SiLU tolerance");
    } else if (near) {
      snprintf(r.note, sizeof r.note,
               "%zu of %lld x elements within 1 ulp of the reference "
               "(the library's own exp in SiLU, documented)",
               near, (long long)(T * dim));
    }
  }
  bench_timing op = bench_time(env, bench_call_fn, NULL, &s.call, bytes, 11, 1000);
  /* the reference keeps running in place on its own copy (its timing only) */
  bench_timing ref = bench_time_ref(env, run_ref, NULL, &s, t_ref);
  bench_one_thread(env, &r, bench_call_fn, NULL, &s.call, &s.call.ctx, 11, 1000);
  if (c->batch == 1 && r.check == BENCH_CHECK_OK)
    bench_small_call(env, &r, run_whole, NULL, &s, 1000);
  bench_call plain = {llmk_fused_causal_conv1d, NULL, 0, NULL, env->ctx};
  if (c->targets && r.check == BENCH_CHECK_OK && !op.status) {
    /* the floor: the plain conv of the same shape, in place on the same x */
    if (plan_conv(&s, false, &plain.ws, &plain.plan) == LLMK_SUCCESS &&
        llmk_plan_set_repeatable(plain.plan) == LLMK_SUCCESS) {
      plain.w = plain.ws ? bench_alloc(plain.ws, 0) : NULL;
      bench_progress(env, "    the plain conv of the same shape...\n");
      bench_timing opb, fl;
      bench_time_beside(env, bench_call_fn, &s.call, bench_call_fn, &plain, 11, 1000,
                        &opb, &fl);
      bench_target_floor(&r, "23.1", "plain conv (no bias, no SiLU), same shape", &opb,
                         &fl, 1.2);
      silu_job *sj = bench_alloc(sizeof *sj, 0);
      sj->env = env;
      sj->n = T * dim;
      sj->parts = env->ctx ? llmk_context_num_threads(env->ctx) : 1;
      if (sj->parts > SILU_PARTS_MAX) sj->parts = SILU_PARTS_MAX;
      for (int i = 0; i < SILU_CHUNK; i++) /* pre-activations of order 1, both signs */
        sj->x[i] = (float)((i * 7919) % 2001 - 1000) / 250.0f;
      bench_progress(env, "    SiLU alone...\n");
      bench_timing ts = bench_time_only(env, run_silu_floor, NULL, sj, 7, 1000);
      if (!ts.status && !fl.status) {
        char name[96];
        snprintf(name, sizeof name,
                 "floor: SiLU alone on as many values, in registers (%s)",
                 silu_simd() ? "avx512" : "scalar");
        bench_add_extra(&r, name, ts.median, ts.min);
        bench_add_extra(&r, "floor without overlap: plain conv + SiLU alone",
                        fl.median + ts.median, fl.min + ts.min);
      }
      bench_free(sj);
    }
    bench_target_want(&r, BENCH_T_PCT_COPY, "23.1", 85);
  }
  bench_add(env, &r, &op, &ref, bytes);
  bench_call_free(&plain);
done:
  bench_call_free(&s.call);
  bench_free(s.ref.y_act);
  bench_free(len);
  bench_free(x);
  bench_free(rx);
  bench_free(cs);
  bench_free(rcs);
  bench_free(w);
  bench_free(bias);
  bench_free(qsl);
  bench_free(ci);
  bench_free(nacc);
  bench_free(nct);
  bench_free(first);
  bench_free(last);
  bench_free(init);
  bench_free(perm);
}

static void walk_case(bench_env *env, const cc_case *c) {
  char shape[96];
  {
    if (c->kind == 0)
      snprintf(shape, sizeof shape, "%s B=%lld dim=%lld m=%lld", c->label,
               (long long)c->batch, (long long)c->dim, (long long)c->m);
    else if (c->kind == 1)
      snprintf(shape, sizeof shape, "%s B=%lld dim=%lld m=%lld (1..%lld tok)", c->label,
               (long long)c->batch, (long long)c->dim, (long long)c->m,
               (long long)c->m + 1);
    else if (c->kind == 2)
      snprintf(shape, sizeof shape, "%s %lldx%lld dim=%lld", c->label,
               (long long)c->batch, (long long)c->prefill_len, (long long)c->dim);
    else
      snprintf(shape, sizeof shape, "%s %lldx%lld+%lld decode dim=%lld m=%lld", c->label,
               (long long)c->n_prefill, (long long)c->prefill_len,
               (long long)(c->batch - c->n_prefill), (long long)c->dim, (long long)c->m);
    if (c->K && c->K != KTAPS) {
      size_t n = strlen(shape);
      snprintf(shape + n, sizeof shape - n, " K=%d", c->K);
    }
    const char *dt = llmk_dtype_name(c->dtype);
    if (bench_want(env, "fused_causal_conv1d", shape, c->dtype, dt))
      run_case(env, c, shape, dt);
  }
}

void bench_fused_causal_conv1d(bench_env *env) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (!env->quick || cases[i].quick) walk_case(env, &cases[i]);
  static const llmk_dtype dts[3] = {LLMK_BF16, LLMK_F16, LLMK_F32};
  for (int d = 0; d < 3; d++)
    for (int K = 2; K <= 4; K++)
      for (size_t i = 0; i < sizeof silu_shapes / sizeof silu_shapes[0]; i++) {
        cc_case c = silu_shapes[i];
        c.dtype = dts[d];
        c.K = K;
        /* the quick set: bf16, K=4, decode fixed m=0 and prefill */
        c.quick = dts[d] == LLMK_BF16 && K == 4 && c.m == 0 && c.kind != 1;
        if (!env->quick || c.quick) walk_case(env, &c);
      }
}
