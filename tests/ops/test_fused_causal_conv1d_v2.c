/* SPDX-License-Identifier: Apache-2.0 */
/* llmk_fused_causal_conv1d_v2_get_workspace_size against
 * tests/ref/causal_conv1d_vllm_ref.c (vLLM's causal_conv1d_fn / causal_conv1d_update and
 * the circular update, in vLLM's own layouts): HEAD-aligned prefill with state_len > K-1
 * and has_initial_state, varlen decode, speculative decode (num_accepted_tokens, also
 * right after a prefill), 3-D x, the ring (cache_seqlens), pad_slot_id, bias, silu,
 * K 2..4, f32/f16/bf16, i32 and i64 index tensors, y separate and in place. Each case
 * runs the library on every layout of x (token- or channel-major), weight ([K, dim] or
 * (dim, K)) and conv_states ((C, dim) or (dim, C) per line), on the scalar and the native
 * ISA, with no context and with 2 threads: all of these must give the same bytes, and
 * those bytes must equal the reference's (outputs with SILU: within the tolerance of
 * test_fused_causal_conv1d.c, the library having its own exp). TAIL calls with strided
 * views and has_initial_state must give the bytes of the _out entry on contiguous
 * copies with num_computed_tokens = 0 for the sequences without history. Refusals:
 * status, message and nothing written. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causal_conv1d_vllm_ref.h"
#include "convert_ref.h"
#include "llmk/llmk.h"
#include "ref_util.h"
#include "test_util.h"

static int g_fail, g_cases, g_cmp;
static bool g_big; /* large cases: dim > 4096, 8 sequences */

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      g_fail++;                                            \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
    }                                                      \
  } while (0)

static int64_t rr(int64_t lo, int64_t hi) {
  return tu_rand_range(lo, hi);
}

enum { M_FN, M_UPD, M_RING };

/* A case in logical order: x [T][dim] (T = batch*S for 3-D), weight [K][dim],
 * state [lines][C][dim], y0 [T][dim] (y's bytes before the call), bits of dt. */
typedef struct vcase {
  int mode;
  fcc_ref_dtype dt, wdt, bdt;
  int64_t K, dim, batch, T, S, lines, C; /* S > 0: 3-D x */
  int64_t qsl[17], ci[16], nacc[16], csl[16], max_query_len;
  unsigned char his[16];
  bool has_ci, has_nacc, has_his, silu, has_bias, in_place, i64;
  bool lib_nacc0; /* the library gets num_accepted_tokens = 0 (prefill rows), the
                     reference none */
  int64_t pad;
  uint32_t *x, *w, *bias, *st, *y0;
} vcase;

typedef struct layout {
  bool xcm, wt, scm; /* channel-major x; weight (dim, K); state (dim, C) */
} layout;

static llmk_dtype ldt(fcc_ref_dtype d) {
  return d == FCC_REF_F32 ? LLMK_F32 : d == FCC_REF_F16 ? LLMK_F16 : LLMK_BF16;
}

static uint32_t rnd_val(fcc_ref_dtype dt) {
  float f = (float)(tu_rand_unit() * 4.0 - 2.0);
  return fcc_ref_narrow(dt, f);
}

/* element offsets of the logical elements in a layout */
static int64_t x_off(const vcase *c, const layout *l, int64_t t, int64_t d) {
  if (c->S > 0) {
    int64_t b = t / c->S, s = t % c->S;
    return l->xcm ? b * c->dim * c->S + d * c->S + s : t * c->dim + d;
  }
  return l->xcm ? d * c->T + t : t * c->dim + d;
}
static int64_t w_off(const vcase *c, const layout *l, int64_t k, int64_t d) {
  return l->wt ? d * c->K + k : k * c->dim + d;
}
static int64_t s_off(const vcase *c, const layout *l, int64_t ln, int64_t r, int64_t d) {
  return l->scm ? ln * c->dim * c->C + d * c->C + r : (ln * c->C + r) * c->dim + d;
}

typedef struct mem {
  void *x, *y, *w, *bias, *st;
} mem;

static void mem_make(const vcase *c, const layout *l, mem *m) {
  size_t e = (size_t)fcc_ref_dtype_size(c->dt);
  m->x = malloc((size_t)(c->T * c->dim) * e + 1);
  m->y = malloc((size_t)(c->T * c->dim) * e + 1);
  m->w = malloc((size_t)(c->K * c->dim) * 4 + 1);
  m->bias = malloc((size_t)c->dim * 4 + 1);
  m->st = malloc((size_t)(c->lines * c->C * c->dim) * e + 1);
  for (int64_t t = 0; t < c->T; t++)
    for (int64_t d = 0; d < c->dim; d++) {
      fcc_ref_store(m->x, x_off(c, l, t, d), c->dt, c->x[t * c->dim + d]);
      fcc_ref_store(m->y, x_off(c, l, t, d), c->dt, c->y0[t * c->dim + d]);
    }
  for (int64_t k = 0; k < c->K; k++)
    for (int64_t d = 0; d < c->dim; d++)
      fcc_ref_store(m->w, w_off(c, l, k, d), c->wdt, c->w[k * c->dim + d]);
  for (int64_t d = 0; d < c->dim; d++) fcc_ref_store(m->bias, d, c->bdt, c->bias[d]);
  for (int64_t ln = 0; ln < c->lines; ln++)
    for (int64_t r = 0; r < c->C; r++)
      for (int64_t d = 0; d < c->dim; d++)
        fcc_ref_store(m->st, s_off(c, l, ln, r, d), c->dt,
                      c->st[(ln * c->C + r) * c->dim + d]);
}

static void mem_free(mem *m) {
  free(m->x), free(m->y), free(m->w), free(m->bias), free(m->st);
}

/* results in logical order: out [T][dim] then state [lines][C][dim] */
static uint32_t *extract(const vcase *c, const layout *l, const mem *m, bool y_is_x) {
  int64_t nt = c->T * c->dim, ns = c->lines * c->C * c->dim;
  uint32_t *r = malloc((size_t)(nt + ns + 1) * 4);
  for (int64_t t = 0; t < c->T; t++)
    for (int64_t d = 0; d < c->dim; d++)
      r[t * c->dim + d] = fcc_ref_load(y_is_x ? m->x : m->y, x_off(c, l, t, d), c->dt);
  for (int64_t ln = 0; ln < c->lines; ln++)
    for (int64_t rr_ = 0; rr_ < c->C; rr_++)
      for (int64_t d = 0; d < c->dim; d++)
        r[nt + (ln * c->C + rr_) * c->dim + d] =
            fcc_ref_load(m->st, s_off(c, l, ln, rr_, d), c->dt);
  return r;
}

/* The reference, on the vLLM layout (channel-major x, (dim, K) weight, (dim, C)). */
static uint32_t *run_ref(const vcase *c) {
  layout l = {true, true, true};
  mem m;
  mem_make(c, &l, &m);
  if (c->in_place) /* the library writes x: the reference's out starts as x */
    memcpy(m.y, m.x, (size_t)(c->T * c->dim) * (size_t)fcc_ref_dtype_size(c->dt));
  vllm_ref_args a = {0};
  a.dt = c->dt, a.wdt = c->wdt, a.bdt = c->bdt;
  a.dim = c->dim, a.K = c->K, a.batch = c->batch;
  a.x = m.x, a.out = m.y;
  if (c->S > 0) {
    a.x_sb = a.o_sb = c->dim * c->S, a.x_st = a.o_st = 1, a.x_sd = a.o_sd = c->S;
  } else {
    a.x_st = a.o_st = 1, a.x_sd = a.o_sd = c->T;
  }
  a.weight = m.w, a.w_sd = c->K, a.w_sk = 1;
  a.bias = c->has_bias ? m.bias : NULL;
  a.conv_state = m.st, a.num_lines = c->lines, a.state_len = c->C;
  a.s_sl = c->dim * c->C, a.s_sd = c->C, a.s_st = 1;
  a.query_start_loc = c->S > 0 ? NULL : c->qsl;
  a.seqlen = c->S;
  a.cache_indices = c->has_ci ? c->ci : NULL;
  a.has_initial_state = c->has_his ? c->his : NULL;
  a.num_accepted_tokens = c->has_nacc ? c->nacc : NULL;
  a.cache_seqlens = c->mode == M_RING ? c->csl : NULL;
  a.max_query_len = c->max_query_len;
  a.pad_slot_id = c->pad;
  a.silu = c->silu;
  if (c->mode == M_FN)
    vllm_ref_fn(&a);
  else if (c->mode == M_UPD)
    vllm_ref_update(&a);
  else
    vllm_ref_update_ring(&a);
  uint32_t *r = extract(c, &l, &m, false);
  mem_free(&m);
  return r;
}

/* index tensors: i32 or i64 copies */
typedef struct itens {
  llmk_tensor t;
  int64_t v64[17];
  int32_t v32[17];
} itens;

static const llmk_tensor *itens_of(itens *it, const int64_t *v, int64_t n, bool i64) {
  for (int64_t i = 0; i < n; i++) it->v64[i] = v[i], it->v32[i] = (int32_t)v[i];
  llmk_tensor_init(&it->t, i64 ? LLMK_I64 : LLMK_I32, 1, (int64_t[]){n}, NULL,
                   i64 ? (void *)it->v64 : (void *)it->v32);
  return &it->t;
}

typedef struct call_extra {
  int align;
  const int64_t *nct; /* TAIL comparison: the _out entry with this */
  bool use_out_entry;
} call_extra;

/* Runs the library on layout l; returns the results, or NULL with *st set. */
static uint32_t *run_lib(const vcase *c, const layout *l, llmk_isa isa, llmk_context *ctx,
                         const call_extra *ex, llmk_status *st_out) {
  mem m;
  mem_make(c, l, &m);
  llmk_dtype dt = ldt(c->dt);
  llmk_tensor tx, ty, tw, tb, ts, thi;
  if (c->S > 0) {
    int64_t sh[3] = {c->batch, c->S, c->dim};
    int64_t tm[3] = {c->S * c->dim, c->dim, 1}, cm[3] = {c->dim * c->S, 1, c->S};
    llmk_tensor_init(&tx, dt, 3, sh, l->xcm ? cm : tm, m.x);
    llmk_tensor_init(&ty, dt, 3, sh, l->xcm ? cm : tm, m.y);
  } else {
    int64_t sh[2] = {c->T, c->dim}, tm[2] = {c->dim, 1}, cm[2] = {1, c->T};
    llmk_tensor_init(&tx, dt, 2, sh, l->xcm ? cm : tm, m.x);
    llmk_tensor_init(&ty, dt, 2, sh, l->xcm ? cm : tm, m.y);
  }
  int64_t wsh[2] = {c->K, c->dim}, wtm[2] = {c->dim, 1}, wcm[2] = {1, c->K};
  llmk_tensor_init(&tw, ldt(c->wdt), 2, wsh, l->wt ? wcm : wtm, m.w);
  llmk_tensor_init(&tb, ldt(c->bdt), 1, (int64_t[]){c->dim}, NULL, m.bias);
  int64_t ssh[3] = {c->lines, c->C, c->dim};
  int64_t stm[3] = {c->C * c->dim, c->dim, 1}, scm[3] = {c->dim * c->C, 1, c->C};
  llmk_tensor_init(&ts, dt, 3, ssh, l->scm ? scm : stm, m.st);
  llmk_tensor_init(&thi, LLMK_U8, 1, (int64_t[]){c->batch}, NULL, (void *)c->his);
  itens iq, ic, in, il, inct;
  const llmk_tensor *q = c->S > 0 ? NULL : itens_of(&iq, c->qsl, c->batch + 1, c->i64);
  const llmk_tensor *ci = c->has_ci ? itens_of(&ic, c->ci, c->batch, c->i64) : NULL;
  static const int64_t zeros[16];
  const llmk_tensor *na = c->has_nacc    ? itens_of(&in, c->nacc, c->batch, c->i64)
                          : c->lib_nacc0 ? itens_of(&in, zeros, c->batch, c->i64)
                                         : NULL;
  const llmk_tensor *nct = ex->nct ? itens_of(&inct, ex->nct, c->batch, !c->i64) : NULL;
  const llmk_tensor *cs =
      c->mode == M_RING ? itens_of(&il, c->csl, c->batch, c->i64) : NULL;
  llmk_causal_conv1d_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.state_align = (llmk_conv_state_align)ex->align;
  o.has_initial_state = c->has_his ? &thi : NULL;
  o.cache_seqlens = cs;
  o.y = c->in_place ? NULL : &ty;
  llmk_set_max_isa(isa);
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st;
  if (ex->use_out_entry)
    st = llmk_fused_causal_conv1d_out_get_workspace_size(
        &tx, &tw, &ts, q, ci, na, nct, NULL, NULL, NULL, c->has_bias ? &tb : NULL, c->pad,
        c->max_query_len, 0, 0, 0, c->silu ? LLMK_ACTIVATION_SILU : LLMK_ACTIVATION_NONE,
        o.y, &ws, &plan);
  else
    st = llmk_fused_causal_conv1d_v2_get_workspace_size(
        &tx, &tw, &ts, q, ci, na, nct, NULL, NULL, NULL, c->has_bias ? &tb : NULL, c->pad,
        c->max_query_len, 0, 0, 0, c->silu ? LLMK_ACTIVATION_SILU : LLMK_ACTIVATION_NONE,
        &o, &ws, &plan);
  llmk_set_max_isa(llmk_get_native_isa());
  void *wsp = NULL;
  if (st == LLMK_SUCCESS) {
    wsp = malloc(ws ? ws : 1);
    st = llmk_fused_causal_conv1d(wsp, ws, plan, ctx);
  }
  free(wsp);
  *st_out = st;
  uint32_t *r = st == LLMK_SUCCESS ? extract(c, l, &m, c->in_place) : NULL;
  mem_free(&m);
  return r;
}

static int g_silu_off; /* SILU outputs within tolerance but not bit-equal */

static void compare_ref(const vcase *c, const uint32_t *got, const uint32_t *ref,
                        const char *what) {
  int64_t nt = c->T * c->dim, n = nt + c->lines * c->C * c->dim;
  llmk_dtype dt = ldt(c->dt);
  g_cmp++;
  for (int64_t i = 0; i < n; i++) {
    if (got[i] == ref[i]) continue;
    if (i < nt && c->silu) {
      double g = fcc_ref_widen(c->dt, got[i]), r = fcc_ref_widen(c->dt, ref[i]);
      double big = fmax(fabs(g), fabs(r));
      if (fabs(g - r) <= ref_ulp(dt, big) + 2e-6 * fabs(r)) {
        g_silu_off++;
        continue;
      }
    }
    CHECK(0, "%s: %s[%" PRId64 "] = 0x%x, reference 0x%x", what,
          i < nt ? "y" : "conv_states", i < nt ? i : i - nt, got[i], ref[i]);
    return;
  }
}

/* Every layout x ISA x context: the same bytes; the first against ref. */
static void run_all(const vcase *c, const uint32_t *ref, const call_extra *ex,
                    const char *what, llmk_context *ctx2) {
  int64_t n = c->T * c->dim + c->lines * c->C * c->dim;
  uint32_t *first = NULL;
  llmk_isa isas[2] = {LLMK_ISA_SCALAR, llmk_get_native_isa()};
  for (int li = 0; li < 8; li++) {
    if (g_big && li != 0 && li != 7) continue; /* plain and all strided */
    layout l = {(li & 1) != 0, (li & 2) != 0, (li & 4) != 0};
    for (int ii = 0; ii < 2; ii++)
      for (int ci = 0; ci < 2; ci++) {
        llmk_status st;
        uint32_t *got = run_lib(c, &l, isas[ii], ci ? ctx2 : NULL, ex, &st);
        CHECK(st == LLMK_SUCCESS, "%s: layout %d: status %d: %s", what, li, (int)st,
              llmk_last_error());
        if (!got) continue;
        if (!first) {
          first = got;
          if (ref) compare_ref(c, got, ref, what);
          continue;
        }
        CHECK(memcmp(first, got, (size_t)n * 4) == 0,
              "%s: layout %d isa %d ctx %d differs from layout 0", what, li, ii, ci);
        free(got);
      }
  }
  free(first);
}

/* ------------------------------------------------------------------ cases */

static void gen_common(vcase *c, int mode, int64_t K, fcc_ref_dtype dt) {
  memset(c, 0, sizeof *c);
  c->mode = mode;
  c->dt = dt;
  c->wdt = rr(0, 1) ? FCC_REF_F32 : dt;
  c->bdt = rr(0, 1) ? FCC_REF_F32 : dt;
  c->K = K;
  c->dim = rr(0, 2) == 0 ? rr(1, 5) : rr(16, 40);
  c->batch = rr(1, 5);
  if (g_big) { /* enough bytes for the run to split over threads */
    c->dim = 4200 + rr(0, 17);
    c->batch = 8;
  }
  c->silu = rr(0, 2) == 0;
  c->has_bias = rr(0, 1);
  c->in_place = rr(0, 1);
  c->i64 = rr(0, 1);
  c->pad = -1;
  c->max_query_len = -1;
}

static void gen_buffers(vcase *c) {
  c->x = malloc((size_t)(c->T * c->dim + 1) * 4);
  c->y0 = malloc((size_t)(c->T * c->dim + 1) * 4);
  c->w = malloc((size_t)(c->K * c->dim + 1) * 4);
  c->bias = malloc((size_t)(c->dim + 1) * 4);
  c->st = malloc((size_t)(c->lines * c->C * c->dim + 1) * 4);
  for (int64_t i = 0; i < c->T * c->dim; i++)
    c->x[i] = rnd_val(c->dt), c->y0[i] = rnd_val(c->dt);
  for (int64_t i = 0; i < c->K * c->dim; i++) c->w[i] = rnd_val(c->wdt);
  for (int64_t i = 0; i < c->dim; i++) c->bias[i] = rnd_val(c->bdt);
  for (int64_t i = 0; i < c->lines * c->C * c->dim; i++) c->st[i] = rnd_val(c->dt);
}

static void free_case(vcase *c) {
  free(c->x), free(c->y0), free(c->w), free(c->bias), free(c->st);
}

/* distinct lines, some pad_slot_id */
static void gen_lines(vcase *c) {
  c->lines = c->batch + rr(0, 3);
  int64_t perm[32];
  for (int64_t i = 0; i < c->lines; i++) perm[i] = i;
  for (int64_t i = c->lines - 1; i > 0; i--) {
    int64_t j = rr(0, i), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  c->has_ci = true;
  for (int64_t b = 0; b < c->batch; b++) c->ci[b] = rr(0, 5) == 0 ? c->pad : perm[b];
}

static void gen_varlen(vcase *c, int64_t lo, int64_t hi) {
  c->qsl[0] = 0;
  for (int64_t b = 0; b < c->batch; b++) c->qsl[b + 1] = c->qsl[b] + rr(lo, hi);
  c->T = c->qsl[c->batch];
}

/* causal_conv1d_fn: prefill, state_len >= K-1, has_initial_state */
static void gen_fn(vcase *c, int64_t K, fcc_ref_dtype dt) {
  gen_common(c, M_FN, K, dt);
  c->C = K - 1 + rr(0, 3);
  gen_varlen(c, 1, 20);
  gen_lines(c);
  c->has_his = rr(0, 3) != 0;
  for (int64_t b = 0; b < c->batch; b++) c->his[b] = (unsigned char)(rr(0, 2) ? 1 : 0);
  c->lib_nacc0 = rr(0, 2) == 0;
  gen_buffers(c);
}

/* causal_conv1d_update: varlen (all of max_query_len tokens without nacc) or 3-D */
static void gen_update(vcase *c, int64_t K, fcc_ref_dtype dt, bool spec) {
  gen_common(c, M_UPD, K, dt);
  int64_t m = spec ? rr(1, 3) : rr(0, 2);
  c->C = K - 1 + m;
  c->has_nacc = spec;
  bool three = rr(0, 2) == 0;
  if (three) {
    c->S = spec ? rr(1, m + 1) : rr(1, 3);
    c->T = c->batch * c->S;
  } else if (spec) {
    gen_varlen(c, 1, m + 1);
    c->max_query_len = 0;
    for (int64_t b = 0; b < c->batch; b++)
      if (c->qsl[b + 1] - c->qsl[b] > c->max_query_len)
        c->max_query_len = c->qsl[b + 1] - c->qsl[b];
  } else {
    c->max_query_len = rr(1, 3);
    gen_varlen(c, c->max_query_len, c->max_query_len);
  }
  gen_lines(c);
  for (int64_t b = 0; b < c->batch; b++) c->nacc[b] = rr(1, c->C - K + 2);
  gen_buffers(c);
}

static void gen_ring(vcase *c, int64_t K, fcc_ref_dtype dt) {
  gen_common(c, M_RING, K, dt);
  c->C = K - 1 + rr(0, 4);
  c->S = rr(1, c->C + 2);
  c->T = c->batch * c->S;
  gen_lines(c);
  for (int64_t b = 0; b < c->batch; b++) c->csl[b] = rr(0, 3 * c->C);
  gen_buffers(c);
}

static void run_case(vcase *c, const char *what, llmk_context *ctx2) {
  g_cases++;
  uint32_t *ref = run_ref(c);
  call_extra ex = {LLMK_CONV_STATE_HEAD, NULL, false};
  run_all(c, ref, &ex, what, ctx2);
  free(ref);
}

/* A prefill (fn), then speculative decode steps from its state: the first with
 * num_accepted_tokens = 1 (the prefill's last token), the reference and the library
 * each chaining their own state. */
static void prefill_then_spec(int64_t K, fcc_ref_dtype dt, llmk_context *ctx2) {
  vcase f, u;
  gen_fn(&f, K, dt);
  f.lib_nacc0 = false;
  int64_t m = rr(1, 3);
  f.C = K - 1 + m;
  free(f.st);
  f.st = malloc((size_t)(f.lines * f.C * f.dim + 1) * 4);
  for (int64_t i = 0; i < f.lines * f.C * f.dim; i++) f.st[i] = rnd_val(dt);
  uint32_t *ref = run_ref(&f);
  call_extra ex = {LLMK_CONV_STATE_HEAD, NULL, false};
  llmk_status st;
  layout l = {true, true, true};
  uint32_t *got = run_lib(&f, &l, llmk_get_native_isa(), ctx2, &ex, &st);
  CHECK(got != NULL, "prefill_then_spec: prefill status %d", (int)st);
  if (got) compare_ref(&f, got, ref, "prefill_then_spec: prefill");
  /* the decode: same lines, batch, dim */
  u = f;
  u.mode = M_UPD;
  u.has_his = false;
  u.has_nacc = true;
  u.S = 0;
  gen_varlen(&u, 1, m + 1);
  u.max_query_len = 0;
  for (int64_t b = 0; b < u.batch; b++) {
    int64_t L = u.qsl[b + 1] - u.qsl[b];
    if (L > u.max_query_len) u.max_query_len = L;
    u.nacc[b] = 1;
  }
  u.x = malloc((size_t)(u.T * u.dim + 1) * 4);
  u.y0 = malloc((size_t)(u.T * u.dim + 1) * 4);
  for (int64_t i = 0; i < u.T * u.dim; i++) u.x[i] = rnd_val(dt), u.y0[i] = rnd_val(dt);
  int64_t nt_f = f.T * f.dim;
  u.st = malloc((size_t)(u.lines * u.C * u.dim + 1) * 4);
  uint32_t *ref2 = NULL, *got2 = NULL;
  if (got) {
    memcpy(u.st, ref + nt_f, (size_t)(u.lines * u.C * u.dim) * 4);
    ref2 = run_ref(&u);
    memcpy(u.st, got + nt_f, (size_t)(u.lines * u.C * u.dim) * 4);
    got2 = run_lib(&u, &l, LLMK_ISA_SCALAR, NULL, &ex, &st);
    CHECK(got2 != NULL, "prefill_then_spec: decode status %d: %s", (int)st,
          llmk_last_error());
    if (got2) compare_ref(&u, got2, ref2, "prefill_then_spec: decode nacc=1");
  }
  g_cases++;
  free(ref), free(got), free(ref2), free(got2);
  free(u.x), free(u.y0), free(u.st);
  free_case(&f);
}

/* TAIL with strided views and has_initial_state == the _out entry on contiguous
 * copies with num_computed_tokens[b] = 0 where has_initial_state[b] == 0. */
static void tail_vs_out(int64_t K, fcc_ref_dtype dt, llmk_context *ctx2) {
  vcase c;
  gen_fn(&c, K, dt);
  c.has_his = true;
  c.lib_nacc0 = false;
  int64_t nct[16];
  for (int64_t b = 0; b < c.batch; b++) nct[b] = c.his[b] ? 5 : 0;
  call_extra e1 = {LLMK_CONV_STATE_TAIL, nct, true};
  layout plain = {false, false, false};
  llmk_status st;
  vcase c1 = c;
  c1.has_his = false;
  uint32_t *want = run_lib(&c1, &plain, llmk_get_native_isa(), NULL, &e1, &st);
  CHECK(want != NULL, "tail_vs_out: _out status %d: %s", (int)st, llmk_last_error());
  call_extra e2 = {LLMK_CONV_STATE_TAIL, NULL, false};
  if (want) {
    vcase c2 = c;
    g_cases++;
    int64_t n = c.T * c.dim + c.lines * c.C * c.dim;
    for (int li = 0; li < 8; li++) {
      layout l = {(li & 1) != 0, (li & 2) != 0, (li & 4) != 0};
      uint32_t *got = run_lib(&c2, &l, li & 1 ? LLMK_ISA_SCALAR : llmk_get_native_isa(),
                              li & 2 ? ctx2 : NULL, &e2, &st);
      CHECK(got != NULL, "tail_vs_out: v2 status %d: %s", (int)st, llmk_last_error());
      if (got)
        CHECK(memcmp(got, want, (size_t)n * 4) == 0,
              "tail_vs_out: layout %d differs from the _out entry", li);
      free(got);
    }
  }
  free(want);
  free_case(&c);
}

/* ------------------------------------------------------------------ refusals */

typedef struct rtest {
  const char *name;
  llmk_status want;
  const char *words; /* in the message */
  int phase;         /* 1 or 2 */
} rtest;

static void refusals(void) {
  const int64_t K = 3, dim = 4, T = 4, lines = 3, C = 3;
  float x[16], y[16], w[12], sv[36];
  for (int i = 0; i < 16; i++) x[i] = (float)i, y[i] = -1.0f;
  for (int i = 0; i < 12; i++) w[i] = 0.5f;
  for (int i = 0; i < 36; i++) sv[i] = 2.0f;
  float st0[36], y0[16];
  memcpy(st0, sv, sizeof sv), memcpy(y0, y, sizeof y);
  llmk_tensor tx, ty, tw, ts, tq, tc, tn, tl, th, tbad;
  llmk_tensor_init(&tx, LLMK_F32, 2, (int64_t[]){T, dim}, NULL, x);
  llmk_tensor_init(&ty, LLMK_F32, 2, (int64_t[]){T, dim}, NULL, y);
  int64_t wstr[2] = {1, K};
  llmk_tensor_init(&tw, LLMK_F32, 2, (int64_t[]){K, dim}, wstr, w);
  int64_t sstr[3] = {dim * C, 1, C};
  llmk_tensor_init(&ts, LLMK_F32, 3, (int64_t[]){lines, C, dim}, sstr, sv);
  llmk_tensor tyo; /* y over conv_states' memory */
  llmk_tensor_init(&tyo, LLMK_F32, 2, (int64_t[]){T, dim}, NULL, sv + 8);
  int32_t qsl[3] = {0, 2, 4}, ci[2] = {0, 1}, nacc[2] = {1, 1}, csl[2] = {0, 0};
  uint8_t his[2] = {1, 1};
  float fhis[2] = {1, 1};
  llmk_tensor_init(&tq, LLMK_I32, 1, (int64_t[]){3}, NULL, qsl);
  llmk_tensor_init(&tc, LLMK_I32, 1, (int64_t[]){2}, NULL, ci);
  llmk_tensor_init(&tn, LLMK_I32, 1, (int64_t[]){2}, NULL, nacc);
  llmk_tensor_init(&tl, LLMK_I32, 1, (int64_t[]){2}, NULL, csl);
  llmk_tensor_init(&th, LLMK_U8, 1, (int64_t[]){2}, NULL, his);
  llmk_tensor_init(&tbad, LLMK_F32, 1, (int64_t[]){2}, NULL, fhis);
  for (int k = 0; k < 12; k++) {
    llmk_causal_conv1d_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.state_align = LLMK_CONV_STATE_HEAD;
    o.y = &ty;
    const llmk_tensor *na = NULL;
    ci[0] = 0, ci[1] = 1, nacc[0] = nacc[1] = 1, csl[0] = csl[1] = 0;
    rtest r = {0};
    switch (k) {
      case 0:
        r = (rtest){"cache_indices out of range", LLMK_ERROR_INVALID_VALUE,
                    "cache_indices 7", 2};
        ci[1] = 7;
        break;
      case 1:
        r = (rtest){"cache_seqlens < 0", LLMK_ERROR_INVALID_VALUE, "cache_seqlens[1] -3",
                    2};
        o.cache_seqlens = &tl;
        csl[1] = -3;
        break;
      case 2:
        r = (rtest){"nacc: K-2+L past the line", LLMK_ERROR_INVALID_VALUE,
                    "num_accepted_tokens rows", 2};
        na = &tn;
        qsl[1] = 1;
        break;
      case 3:
        r = (rtest){"nacc > C-K+2", LLMK_ERROR_INVALID_VALUE, "num_accepted_tokens[0] 3",
                    2};
        na = &tn;
        nacc[0] = 3;
        break;
      case 4:
        r = (rtest){"struct_size small", LLMK_ERROR_INVALID_ATTRIBUTE, "struct_size", 1};
        o.struct_size = 8;
        break;
      case 5:
        r = (rtest){"state_align 7", LLMK_ERROR_INVALID_ATTRIBUTE, "state_align 7", 1};
        o.state_align = (llmk_conv_state_align)7;
        break;
      case 6:
        r = (rtest){"has_initial_state f32", LLMK_ERROR_INVALID_DTYPE,
                    "has_initial_state", 1};
        o.has_initial_state = &tbad;
        break;
      case 7:
        r = (rtest){"cache_seqlens with nacc", LLMK_ERROR_INVALID_ATTRIBUTE,
                    "cache_seqlens num_accepted_tokens", 1};
        o.cache_seqlens = &tl;
        na = &tn;
        break;
      case 8:
        r = (rtest){"y overlaps conv_states", LLMK_ERROR_OVERLAP, "y", 1};
        o.y = &tyo;
        break;
      case 9:
        r = (rtest){"duplicate line", LLMK_ERROR_INVALID_VALUE, "line written twice", 2};
        ci[1] = 0;
        break;
      case 10:
        r = (rtest){"has_initial_state shape", LLMK_ERROR_INVALID_SHAPE,
                    "has_initial_state", 1};
        o.has_initial_state = &th;
        th.shape[0] = 3;
        break;
      case 11:
        r = (rtest){"unknown option byte", LLMK_ERROR_INVALID_ATTRIBUTE, "opts byte", 1};
        break;
    }
    qsl[1] = k == 2 ? 1 : 2;
    if (k == 2) nacc[0] = 1, qsl[1] = 1; /* sequence 1: 3 tokens, K-2+3 = 4 > C */
    llmk_status st;
    size_t ws = 0;
    llmk_plan *plan = NULL;
    unsigned char big[sizeof(llmk_causal_conv1d_options) + 8];
    const llmk_causal_conv1d_options *op = &o;
    if (k == 11) {
      memset(big, 0, sizeof big);
      memcpy(big, &o, sizeof o);
      ((llmk_causal_conv1d_options *)(void *)big)->struct_size = sizeof big;
      big[sizeof o + 3] = 1;
      op = (const llmk_causal_conv1d_options *)(void *)big;
    }
    st = llmk_fused_causal_conv1d_v2_get_workspace_size(
        &tx, &tw, &ts, &tq, &tc, na, NULL, NULL, NULL, NULL, NULL, -1, -1, 0, 0, 0,
        LLMK_ACTIVATION_NONE, op, &ws, &plan);
    if (r.phase == 2) {
      CHECK(st == LLMK_SUCCESS, "%s: phase 1 status %d: %s", r.name, (int)st,
            llmk_last_error());
      void *wsp = malloc(ws ? ws : 1);
      if (st == LLMK_SUCCESS) st = llmk_fused_causal_conv1d(wsp, ws, plan, NULL);
      free(wsp);
    } else {
      CHECK(plan == NULL && ws == 0, "%s: plan or workspace set on failure", r.name);
    }
    const char *msg = llmk_last_error();
    CHECK(st == r.want, "%s: status %d, want %d (%s)", r.name, (int)st, (int)r.want, msg);
    /* the message names the argument (and value) */
    char words[128];
    snprintf(words, sizeof words, "%s", r.words);
    for (char *t = strtok(words, " "); t; t = strtok(NULL, " "))
      CHECK(strstr(msg, t) != NULL, "%s: message '%s' lacks '%s'", r.name, msg, t);
    CHECK(memcmp(sv, st0, sizeof sv) == 0 && memcmp(y, y0, sizeof y) == 0,
          "%s: something was written", r.name);
    th.shape[0] = 2;
    g_cases++;
  }
}

int main(void) {
  tu_seed(0x7c0a5eedULL);
  llmk_context *ctx2 = NULL;
  if (llmk_context_create(2, &ctx2) != LLMK_SUCCESS) {
    fprintf(stderr, "context\n");
    return 2;
  }
  static const fcc_ref_dtype dts[3] = {FCC_REF_F32, FCC_REF_F16, FCC_REF_BF16};
  char what[96];
  for (int64_t K = 2; K <= 4; K++)
    for (int di = 0; di < 3; di++)
      for (int rep = 0; rep < 8; rep++) {
        vcase c;
        gen_fn(&c, K, dts[di]);
        snprintf(what, sizeof what, "fn K=%d dt=%d #%d", (int)K, di, rep);
        run_case(&c, what, ctx2);
        free_case(&c);
        gen_update(&c, K, dts[di], false);
        snprintf(what, sizeof what, "update K=%d dt=%d #%d", (int)K, di, rep);
        run_case(&c, what, ctx2);
        free_case(&c);
        gen_update(&c, K, dts[di], true);
        snprintf(what, sizeof what, "update nacc K=%d dt=%d #%d", (int)K, di, rep);
        run_case(&c, what, ctx2);
        free_case(&c);
        gen_ring(&c, K, dts[di]);
        snprintf(what, sizeof what, "ring K=%d dt=%d #%d", (int)K, di, rep);
        run_case(&c, what, ctx2);
        free_case(&c);
        prefill_then_spec(K, dts[di], ctx2);
        tail_vs_out(K, dts[di], ctx2);
      }
  /* the general run split over 2 threads: the same bytes as on one */
  g_big = true;
  for (int di = 0; di < 3; di++) {
    vcase c;
    gen_fn(&c, 4, dts[di]);
    run_case(&c, "big fn", ctx2);
    free_case(&c);
    gen_update(&c, 3, dts[di], true);
    run_case(&c, "big update nacc", ctx2);
    free_case(&c);
    gen_ring(&c, 2, dts[di]);
    run_case(&c, "big ring", ctx2);
    free_case(&c);
  }
  g_big = false;
  refusals();
  llmk_context_destroy(ctx2);
  printf(
      "test_fused_causal_conv1d_v2: %d cases, %d reference comparisons, %d silu "
      "elements within tolerance but not bit-equal, %d failures\n",
      g_cases, g_cmp, g_silu_off, g_fail);
  return g_fail ? 1 : 0;
}
