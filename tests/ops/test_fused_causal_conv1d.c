/* SPDX-License-Identifier: Apache-2.0 */
/* fused_causal_conv1d: the spec's Sample and APC worked example, random cases of the
 * four CANN scenarios and APC against tests/ref/fused_causal_conv1d_ref.c (each dtype, K
 * in 2..4, MTP, conv_mode 1, residual, silu, bias, pad sequences, strided x and
 * conv_states, i32/i64 index tensors), an error table for every phase-1 and phase-2 rule
 * of <llmk/causal_conv1d.h>, plan lifecycle, and bit-identical results for every
 * context (NULL, 1 and 2 threads) and ISA.
 *
 * Comparisons cover whole buffers, guard zones and the gaps of strided layouts
 * included. With activation NONE every byte must equal the reference. With SILU the
 * library uses its own exp: an output element may differ from the reference by
 *   |got - ref| <= ulp_out(max(|got|, |ref|)) + 2e-6 * |silu value|
 * (ulp_out: the spacing of x's dtype at that magnitude, i.e. one unit in the last place
 * of the output, plus a 2e-6 relative error of the activation before the residual add
 * and the rounding); cache lines, skipped sequences and everything else stay exact, and
 * all contexts and ISAs must give the same bits. The largest deviation seen is printed.
 */
#include <math.h>
#include <time.h>

#include "convert_ref.h"
#include "fused_causal_conv1d_ref.h"
#include "harness.h"
#include "llmk/llmk.h"
#include "ref_util.h"

static void *xcalloc(size_t n, size_t sz) {
  void *p = calloc(n ? n : 1, sz ? sz : 1);
  if (!p) th_die("out of memory");
  return p;
}

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
static int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}
static int64_t rr(int64_t lo, int64_t hi) {
  return tu_rand_range(lo, hi);
}
static int chance(int num, int den) {
  return tu_rand_range(0, den - 1) < num;
}

/* ------------------------------------------------------------------ cases */

enum { IX_QSL, IX_CI, IX_NACC, IX_NCT, IX_FIRST, IX_LAST, IX_INIT, IX_COUNT };
/* Buffers of a case: x, weight, bias, conv_states, then the index tensors. */
enum { B_X, B_W, B_BIAS, B_CS, B_IX0, NB = B_IX0 + IX_COUNT };
static const char *const buf_name[NB] = {"x",
                                         "weight",
                                         "bias",
                                         "conv_states",
                                         "query_start_loc",
                                         "cache_indices",
                                         "num_accepted_tokens",
                                         "num_computed_tokens",
                                         "block_idx_first_scheduled_token",
                                         "block_idx_last_scheduled_token",
                                         "initial_state_idx"};

/* One call: shapes, layouts, logical contents (raw element bits for the float
 * tensors, int64 values for the index tensors) and attributes. */
typedef struct cc_case {
  llmk_dtype xdt, wdt, bdt;
  int x3d;
  int64_t batch, S, T, dim, K, C, NL;
  int64_t xs_b, xs_t, w_row, cs_line, cs_row;
  int has_bias;
  int has[IX_COUNT];
  llmk_dtype idt[IX_COUNT];
  int64_t istr[IX_COUNT]; /* element stride (2-D cache_indices: row stride) */
  int64_t ci_col;         /* 2-D cache_indices column stride */
  int64_t mb;             /* 0: 1-D cache_indices; else [batch, mb] (APC) */
  int64_t *iv[IX_COUNT];
  uint32_t *xv, *wv, *bv, *csv;
  int64_t pad, mql, residual, block_size, conv_mode;
  llmk_activation act;
} cc_case;

static int64_t ix_numel(const cc_case *c, int k) {
  if (k == IX_QSL) return c->batch + 1;
  if (k == IX_CI && c->mb > 0) return c->batch * c->mb;
  return c->batch;
}

static int is_apc(const cc_case *c) {
  return c->has[IX_FIRST];
}

/* Allocates the logical arrays for the case's sizes (contents zero). */
static void case_alloc(cc_case *c) {
  c->T = c->x3d ? c->batch * c->S : c->T;
  c->xv = xcalloc((size_t)(c->T * c->dim), 4);
  c->wv = xcalloc((size_t)(c->K * c->dim), 4);
  c->bv = xcalloc((size_t)c->dim, 4);
  c->csv = xcalloc((size_t)(c->NL * c->C * c->dim), 4);
  for (int k = 0; k < IX_COUNT; k++) c->iv[k] = xcalloc((size_t)ix_numel(c, k) + 1, 8);
}

static void case_free(cc_case *c) {
  free(c->xv);
  free(c->wv);
  free(c->bv);
  free(c->csv);
  for (int k = 0; k < IX_COUNT; k++) free(c->iv[k]);
  c->xv = c->wv = c->bv = c->csv = NULL;
  for (int k = 0; k < IX_COUNT; k++) c->iv[k] = NULL;
}

static fcc_ref_dtype to_ref(llmk_dtype d) {
  return d == LLMK_F32 ? FCC_REF_F32 : d == LLMK_F16 ? FCC_REF_F16 : FCC_REF_BF16;
}

/* Layout of buffer k. */
typedef struct tdesc {
  llmk_dtype dt;
  int rank;
  int64_t shape[3], strides[3];
} tdesc;

static void case_desc(const cc_case *c, int k, tdesc *d) {
  memset(d, 0, sizeof *d);
  switch (k) {
    case B_X:
      d->dt = c->xdt;
      if (c->x3d) {
        d->rank = 3;
        d->shape[0] = c->batch;
        d->shape[1] = c->S;
        d->shape[2] = c->dim;
        d->strides[0] = c->xs_b;
        d->strides[1] = c->xs_t;
        d->strides[2] = 1;
      } else {
        d->rank = 2;
        d->shape[0] = c->T;
        d->shape[1] = c->dim;
        d->strides[0] = c->xs_t;
        d->strides[1] = 1;
      }
      break;
    case B_W:
      d->dt = c->wdt;
      d->rank = 2;
      d->shape[0] = c->K;
      d->shape[1] = c->dim;
      d->strides[0] = c->w_row;
      d->strides[1] = 1;
      break;
    case B_BIAS:
      d->dt = c->bdt;
      d->rank = 1;
      d->shape[0] = c->dim;
      d->strides[0] = 1;
      break;
    case B_CS:
      d->dt = c->xdt;
      d->rank = 3;
      d->shape[0] = c->NL;
      d->shape[1] = c->C;
      d->shape[2] = c->dim;
      d->strides[0] = c->cs_line;
      d->strides[1] = c->cs_row;
      d->strides[2] = 1;
      break;
    default: {
      int i = k - B_IX0;
      d->dt = c->idt[i];
      if (i == IX_CI && c->mb > 0) {
        d->rank = 2;
        d->shape[0] = c->batch;
        d->shape[1] = c->mb;
        d->strides[0] = c->istr[i];
        d->strides[1] = c->ci_col;
      } else {
        d->rank = 1;
        d->shape[0] = ix_numel(c, i);
        d->strides[0] = c->istr[i];
      }
    }
  }
}

static int case_has_buf(const cc_case *c, int k) {
  if (k == B_BIAS) return c->has_bias;
  if (k >= B_IX0) return c->has[k - B_IX0];
  return 1;
}

/* ------------------------------------------------------------- tensor sets */

typedef struct tset {
  int built[NB];
  tu_buf buf[NB];
  llmk_tensor t[NB];
  tdesc d[NB];
} tset;

/* Buffers whose gap bytes depend only on `seed`, then the case's values. */
static void tset_build(tset *s, const cc_case *c, uint64_t seed) {
  memset(s, 0, sizeof *s);
  for (int k = 0; k < NB; k++) {
    if (!case_has_buf(c, k)) continue;
    tdesc *d = &s->d[k];
    case_desc(c, k, d);
    s->buf[k] = tu_buf_alloc(th_span_bytes(d->dt, d->rank, d->shape, d->strides));
    unsigned char *p = s->buf[k].data;
    th_fill_pattern(
        p, s->buf[k].size,
        seed * 0x9e3779b97f4a7c15ull + (uint64_t)k * 0xbf58476d1ce4e5b9ull + 7);
    if (llmk_tensor_init(&s->t[k], d->dt, d->rank, d->shape, d->strides,
                         s->buf[k].data) != LLMK_SUCCESS)
      th_die("llmk_tensor_init rejected a test layout");
    int64_t n = th_numel(d->rank, d->shape);
    size_t es = th_dtype_size(d->dt);
    for (int64_t i = 0; i < n; i++) {
      uint64_t v;
      switch (k) {
        case B_X:
          v = c->xv[i];
          break;
        case B_W:
          v = c->wv[i];
          break;
        case B_BIAS:
          v = c->bv[i];
          break;
        case B_CS:
          v = c->csv[i];
          break;
        default:
          v = (uint64_t)c->iv[k - B_IX0][i];
          break;
      }
      ref_store_bits(p, th_row_major_offset(d->rank, d->shape, d->strides, i), es, v);
    }
    s->built[k] = 1;
  }
}

static void tset_copy(tset *dst, const tset *src) {
  *dst = *src;
  for (int k = 0; k < NB; k++) {
    if (!src->built[k]) continue;
    th_buf_clone(&dst->buf[k], &src->buf[k]);
    dst->t[k].data = dst->buf[k].data;
  }
}

static void tset_free(tset *s) {
  for (int k = 0; k < NB; k++)
    if (s->built[k]) tu_buf_free(&s->buf[k]);
  memset(s, 0, sizeof *s);
}

static int buf_same(const tset *a, const tset *b, int k) {
  return th_buf_same(&a->buf[k], &b->buf[k]);
}

/* Describes the first differing element of buffer k, or the gaps. */
static void report_diff(const tset *a, const tset *e, const cc_case *c, int k,
                        const char *label) {
  const tdesc *d = &a->d[k];
  size_t es = th_dtype_size(d->dt);
  int64_t n = th_numel(d->rank, d->shape), ndiff = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t off = th_row_major_offset(d->rank, d->shape, d->strides, i);
    ndiff +=
        ref_load_bits(a->buf[k].data, off, es) != ref_load_bits(e->buf[k].data, off, es);
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t off = th_row_major_offset(d->rank, d->shape, d->strides, i);
    uint64_t g = ref_load_bits(a->buf[k].data, off, es),
             w = ref_load_bits(e->buf[k].data, off, es);
    if (g == w) continue;
    if (k == B_X || k == B_CS) {
      int64_t dd = i % c->dim, row = i / c->dim;
      char where[64];
      if (k == B_X)
        snprintf(where, sizeof where, "token %" PRId64, row);
      else
        snprintf(where, sizeof where, "line %" PRId64 " row %" PRId64, row / c->C,
                 row % c->C);
      fcc_ref_dtype rd = to_ref(c->xdt);
      TU_CHECK(g == w,
               "%s: %s[%s][%" PRId64 "] = 0x%" PRIx64 " (%g), expected 0x%" PRIx64
               " (%g); %" PRId64 " of %" PRId64 " elements differ",
               label, buf_name[k], where, dd, g, (double)fcc_ref_widen(rd, (uint32_t)g),
               w, (double)fcc_ref_widen(rd, (uint32_t)w), ndiff, n);
    } else {
      TU_CHECK(g == w, "%s: %s element %" PRId64 " = 0x%" PRIx64 ", expected 0x%" PRIx64,
               label, buf_name[k], i, g, w);
    }
    return;
  }
  if (!tu_buf_check(&a->buf[k]))
    TU_CHECK(0, "%s: %s guard bytes overwritten", label, buf_name[k]);
  else
    TU_CHECK(0, "%s: %s: bytes between its elements changed", label, buf_name[k]);
}

/* All buffers byte-identical (guards and gaps included); 1 if so. */
static int tset_same(const tset *a, const tset *e, const cc_case *c, const char *label) {
  int same = 1;
  for (int k = 0; k < NB; k++) {
    if (!a->built[k]) continue;
    TU_CHECK(tu_buf_check(&a->buf[k]), "%s: %s guard bytes overwritten", label,
             buf_name[k]);
    if (buf_same(a, e, k)) continue;
    same = 0;
    report_diff(a, e, c, k, label);
  }
  return same;
}

/* ----------------------------------------------------------------- calls */

typedef struct call_args {
  const llmk_tensor *p[NB];
  int64_t pad, mql, residual, block_size, conv_mode;
  llmk_activation act;
  int null_ws, null_plan;
} call_args;

static void call_default(call_args *a, const tset *s, const cc_case *c) {
  memset(a, 0, sizeof *a);
  for (int k = 0; k < NB; k++) a->p[k] = s->built[k] ? &s->t[k] : NULL;
  a->pad = c->pad;
  a->mql = c->mql;
  a->residual = c->residual;
  a->block_size = c->block_size;
  a->conv_mode = c->conv_mode;
  a->act = c->act;
}

static llmk_status call_p1(const call_args *a, size_t *ws, llmk_plan **plan) {
  return llmk_fused_causal_conv1d_get_workspace_size(
      a->p[B_X], a->p[B_W], a->p[B_CS], a->p[B_IX0 + IX_QSL], a->p[B_IX0 + IX_CI],
      a->p[B_IX0 + IX_NACC], a->p[B_IX0 + IX_NCT], a->p[B_IX0 + IX_FIRST],
      a->p[B_IX0 + IX_LAST], a->p[B_IX0 + IX_INIT], a->p[B_BIAS], a->pad, a->mql,
      a->residual, a->block_size, a->conv_mode, a->act, a->null_ws ? NULL : ws,
      a->null_plan ? NULL : plan);
}

/* The workspace ends at a guard zone and starts at a varying misalignment (the API
 * asks for none); the guards must be intact after the run. */
static unsigned g_ws_shift;
static long g_ws_guard_fail;
static const char *g_label = "";

static llmk_status run_plan(llmk_plan *plan, size_t ws, llmk_context *ctx) {
  if (ws == 0) return llmk_fused_causal_conv1d(NULL, 0, plan, ctx);
  size_t shift = (g_ws_shift++ * 13u) % 64u;
  tu_buf b = tu_buf_alloc(ws + shift);
  memset(b.data, 0x5a, ws + shift);
  llmk_status st = llmk_fused_causal_conv1d((char *)b.data + shift, ws, plan, ctx);
  int ok = tu_buf_check(&b);
  TU_CHECK(ok,
           "%s: workspace of %zu bytes at offset %zu: bytes after its end (or before "
           "its start) overwritten",
           g_label, ws, shift);
  if (!ok) g_ws_guard_fail++;
  tu_buf_free(&b);
  return st;
}

/* "fused_causal_conv1d: ..." naming one of the '|'-separated words (NULL: any). */
static int msg_ok(const char *alts) {
  return th_msg_ok("fused_causal_conv1d", alts, NULL);
}

/* --------------------------------------------------------------- reference */

typedef struct ref_out {
  int rc;
  int64_t bad_batch;
  float *y_act, *y_final;
  unsigned char *skipped;
} ref_out;

/* Runs the reference on the buffers of e (in place). */
static void ref_run(const cc_case *c, tset *e, ref_out *o) {
  fcc_ref_args a;
  memset(&a, 0, sizeof a);
  memset(o, 0, sizeof *o);
  a.x_dtype = to_ref(c->xdt);
  a.weight_dtype = to_ref(c->wdt);
  a.bias_dtype = to_ref(c->bdt);
  a.batch = c->batch;
  a.dim = c->dim;
  a.K = c->K;
  a.x = e->buf[B_X].data;
  a.num_tokens = c->T;
  a.seq_len_3d = c->x3d ? c->S : 0;
  a.x_stride_b = c->xs_b;
  a.x_stride_t = c->xs_t;
  a.query_start_loc = c->has[IX_QSL] ? c->iv[IX_QSL] : NULL;
  a.weight = e->buf[B_W].data;
  a.weight_stride = c->w_row;
  a.bias = c->has_bias ? e->buf[B_BIAS].data : NULL;
  a.conv_states = e->buf[B_CS].data;
  a.num_lines = c->NL;
  a.C = c->C;
  a.cs_stride_line = c->cs_line;
  a.cs_stride_row = c->cs_row;
  a.cache_indices = c->has[IX_CI] ? c->iv[IX_CI] : NULL;
  a.max_blocks = c->mb;
  a.num_accepted_tokens = c->has[IX_NACC] ? c->iv[IX_NACC] : NULL;
  a.num_computed_tokens = c->has[IX_NCT] ? c->iv[IX_NCT] : NULL;
  if (is_apc(c)) {
    a.block_idx_first = c->iv[IX_FIRST];
    a.block_idx_last = c->iv[IX_LAST];
    a.initial_state_idx = c->iv[IX_INIT];
  }
  a.pad_slot_id = c->pad;
  a.max_query_len = c->mql;
  a.residual_connection = c->residual;
  a.block_size = c->block_size;
  a.conv_mode = c->conv_mode;
  a.silu = c->act == LLMK_ACTIVATION_SILU;
  o->y_act = xcalloc((size_t)(c->T * c->dim), sizeof(float));
  o->y_final = xcalloc((size_t)(c->T * c->dim), sizeof(float));
  o->skipped = xcalloc((size_t)c->batch, 1);
  a.y_act = o->y_act;
  a.y_final = o->y_final;
  a.skipped = o->skipped;
  a.bad_batch = &o->bad_batch;
  o->rc = fcc_ref_run(&a);
}

static void ref_free(ref_out *o) {
  free(o->y_act);
  free(o->y_final);
  free(o->skipped);
}

/* ----------------------------------------------------------- comparisons */

static double g_max_dev[3]; /* largest SILU deviation without residual, in output ulps */
static double g_max_ratio;  /* largest SILU |diff| / tolerance */
static long g_silu_elems;   /* SILU elements that differed from the reference */
static long g_silu_checked;

static int dt_slot(llmk_dtype d) {
  return d == LLMK_F32 ? 0 : d == LLMK_F16 ? 1 : 2;
}

/* Library result a against expected e. With SILU, x elements within the tolerance are
 * taken as equal (patched into a scratch copy); everything else must match exactly. */
static int compare_result(const tset *a, const tset *e, const cc_case *c,
                          const ref_out *ro, const char *label) {
  if (c->act != LLMK_ACTIVATION_SILU) return tset_same(a, e, c, label);
  tset tmp;
  tset_copy(&tmp, a);
  const tdesc *d = &a->d[B_X];
  size_t es = th_dtype_size(c->xdt);
  fcc_ref_dtype rd = to_ref(c->xdt);
  int64_t seq = 0;
  int bad = 0;
  for (int64_t t = 0; t < c->T && !bad; t++) {
    if (c->x3d)
      seq = t / c->S;
    else
      while (seq + 1 < c->batch && t >= c->iv[IX_QSL][seq + 1]) seq++;
    if (ro->skipped[seq]) continue;
    for (int64_t dd = 0; dd < c->dim; dd++) {
      int64_t i = t * c->dim + dd,
              off = th_row_major_offset(d->rank, d->shape, d->strides, i);
      uint32_t g = (uint32_t)ref_load_bits(tmp.buf[B_X].data, off, es);
      uint32_t w = (uint32_t)ref_load_bits(e->buf[B_X].data, off, es);
      g_silu_checked++;
      if (g == w) continue;
      double gv = fcc_ref_widen(rd, g), wv = fcc_ref_widen(rd, w);
      if (!isfinite(gv) || !isfinite(wv)) continue; /* reported below as exact */
      double diff = fabs(gv - wv), big = fmax(fabs(gv), fabs(wv));
      double tol = ref_ulp(c->xdt, big) + 2e-6 * fabs((double)ro->y_act[i]);
      double dev = diff / ref_ulp(c->xdt, wv);
      if (diff <= tol) {
        ref_store_bits(tmp.buf[B_X].data, off, es, w);
        g_silu_elems++;
        if (!c->residual && dev > g_max_dev[dt_slot(c->xdt)])
          g_max_dev[dt_slot(c->xdt)] = dev;
        if (diff / tol > g_max_ratio) g_max_ratio = diff / tol;
      } else {
        TU_CHECK(diff <= tol,
                 "%s: x[token %" PRId64 "][%" PRId64
                 "] = %.9g, expected %.9g (silu %.9g): "
                 "diff %.3g > tolerance %.3g",
                 label, t, dd, gv, wv, (double)ro->y_act[i], diff, tol);
        bad = 1;
        break;
      }
    }
  }
  int same = bad ? 0 : tset_same(&tmp, e, c, label);
  tset_free(&tmp);
  return same && !bad;
}

/* --------------------------------------------------------- running a case */

static th_sweep g_sw; /* ctx NULL, 1 thread, 2 threads */
static llmk_isa g_native, g_start;
static long g_runs;
static int g_repeat_2t = 1; /* runs of the 2-thread variant per ISA */

/* Expected bytes from outside the reference (the spec's samples): the function writes
 * them into e (a copy of the inputs). */
typedef void (*expect_fn)(tset *e, const cc_case *c);

/* th_sweep_run's callback: one run of a case with the ISA in force and a context; the
 * sweep compares x across the good runs. Stops at the first run that goes wrong. */
typedef struct run_user {
  const cc_case *c;
  const tset *P, *E;
  const ref_out *ro;
  llmk_status expect;
  const char *msg;
  int stop, have;
  tset S; /* the last run's buffers */
} run_user;

static int run_one(void *user, llmk_context *ctx, const char *l, th_out *out) {
  run_user *u = user;
  const cc_case *c = u->c;
  if (u->stop) return 0;
  if (u->have) tset_free(&u->S);
  tset *S = &u->S;
  tset_copy(S, u->P);
  u->have = 1;
  call_args ca;
  call_default(&ca, S, c);
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st = call_p1(&ca, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS && plan, "%s: phase 1 status %d (%s)", l, (int)st,
           llmk_last_error());
  if (st != LLMK_SUCCESS || !plan) return !(u->stop = 1);
  TU_CHECK(buf_same(S, u->P, B_X) && buf_same(S, u->P, B_CS), "%s: phase 1 wrote data",
           l);
  th_reset_error();
  g_label = l;
  st = run_plan(plan, ws, ctx);
  g_label = "";
  g_runs++;
  TU_CHECK(st == u->expect, "%s: status %d, expected %d (%s)", l, (int)st, (int)u->expect,
           st ? llmk_last_error() : "");
  if (st != u->expect) return !(u->stop = 1);
  if (u->expect != LLMK_SUCCESS) {
    TU_CHECK(msg_ok(u->msg), "%s: message '%s' should name %s", l, llmk_last_error(),
             u->msg ? u->msg : "the op");
    tset_same(S, u->P, c, l);
    return 0;
  }
  compare_result(S, u->E, c, u->ro, l);
  th_out_add_buf(out, &S->buf[B_X]);
  return 1;
}

/* Runs case c for every ISA and context (all_variants; else the 2-thread context).
 * The expected status and bytes come from the reference; with `spec`, from spec text,
 * which the reference must match. A rejected run must leave every buffer as it was
 * and give a message naming the op and one of the words of `msg` (NULL: any). */
static void run_case(const cc_case *c, uint64_t seed, const char *label, expect_fn spec,
                     int all_variants, const char *msg) {
  tset P, E;
  tset_build(&P, c, seed);
  tset_copy(&E, &P);
  ref_out ro;
  ref_run(c, &E, &ro);
  llmk_status expect = ro.rc ? LLMK_ERROR_INVALID_VALUE : LLMK_SUCCESS;
  if (ro.rc) { /* nothing written */
    tset_free(&E);
    tset_copy(&E, &P);
  }
  if (spec) {
    tset S;
    tset_copy(&S, &P);
    spec(&S, c);
    char l2[200];
    snprintf(l2, sizeof l2, "%s: reference vs spec text", label);
    TU_CHECK(ro.rc == 0, "%s: reference rejects it (rule %d)", label, ro.rc);
    tset_same(&E, &S, c, l2);
    tset_free(&E);
    E = S;
  }
  run_user u;
  memset(&u, 0, sizeof u);
  u.c = c;
  u.P = &P;
  u.E = &E;
  u.ro = &ro;
  u.expect = expect;
  u.msg = msg;
  if (all_variants) {
    int reps[3] = {1, 1, g_repeat_2t};
    th_sweep_run(&g_sw, 1, reps, label, run_one, &u);
  } else { /* the 2-thread context alone, on every ISA */
    th_sweep w = {1, {2}, {g_sw.ctx[2]}, {"2 threads"}};
    th_sweep_run(&w, 1, &g_repeat_2t, label, run_one, &u);
  }
  if (u.have) tset_free(&u.S);
  ref_free(&ro);
  tset_free(&P);
  tset_free(&E);
}

/* ------------------------------------------------------------- generation */

enum { SC_PREFILL, SC_MIXED, SC_DEC_VAR, SC_DEC_FIX, SC_APC, SC_COUNT };
static const char *const sc_name[SC_COUNT] = {"prefill", "mixed", "decode-varlen",
                                              "decode-fixed", "apc"};

typedef struct gen_opts {
  int scen;
  llmk_dtype xdt;                                                        /* 0: random */
  int K;                                                                 /* 0: random */
  int64_t dim;                                                           /* 0: random */
  int64_t batch;                                                         /* 0: random */
  int m;                                                                 /* -1: random */
  int64_t maxL;                                                          /* 0: default */
  int act, residual, bias, conv_mode, strided, pad_first, pad_last, x3d; /* -1: random */
  int64_t nct_all;           /* -1: random; else every sequence (nct given) */
  int64_t nacc_all;          /* INT64_MIN: random; else every sequence (nacc given) */
  int64_t B, apc_nct, apc_L; /* APC: 0 / -1 / 0 random */
  int apc_init;              /* -1 random; 0 natural, 1 first, 2 last, 3 below first */
  int apc_first_dec; /* -1 random; 1: first one block lower than natural (if valid) */
  int defect;        /* -1: one value defect in 1/12 of cases; 0 none */
} gen_opts;

static gen_opts opts(int scen) {
  gen_opts o;
  memset(&o, 0, sizeof o);
  o.scen = scen;
  o.m = -1;
  o.act = o.residual = o.bias = o.conv_mode = o.strided = o.pad_first = o.pad_last = -1;
  o.x3d = -1;
  o.nct_all = -1;
  o.nacc_all = INT64_MIN;
  o.apc_nct = -1;
  o.apc_init = -1;
  o.apc_first_dec = -1;
  o.defect = -1;
  return o;
}

static int64_t pmod64(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

static int64_t bdy_of(int64_t L, int64_t B, int64_t nct, int64_t n, int64_t c) {
  int64_t seo = pmod64(L - (B - pmod64(nct, B)), B);
  int64_t last_full = L - seo - (seo == 0 ? B : 0);
  return last_full - (n - 1 - c) * B;
}

/* APC coverage counters (valid cases only). */
enum {
  CV_N0,
  CV_N1,
  CV_NMANY,
  CV_BDY_HIST,
  CV_R_IS_FILL,
  CV_R_IS_W,
  CV_R_BELOW,
  CV_NCT_UNALIGNED,
  CV_NCT0,
  CV_W_PAD,
  CV_FILL_PAD,
  CV_SHARED_READ,
  CV_FIRST_DEC,
  CV_GARBAGE,
  CV_COUNT
};
static const char *const cv_name[CV_COUNT] = {"0 boundaries",
                                              "1 boundary",
                                              ">=2 boundaries",
                                              "fill row from history",
                                              "R = a fill line",
                                              "R = W",
                                              "R below first",
                                              "nct % B != 0",
                                              "nct = 0",
                                              "W = pad",
                                              "fill line = pad",
                                              "line read by 2 sequences",
                                              "first below natural",
                                              "garbage in unreferenced entries"};
static long g_cov[CV_COUNT];
static long g_cov_pending[CV_COUNT];

static uint32_t rand_val(llmk_dtype dt, double lo, double hi) {
  float f = (float)(lo + (hi - lo) * tu_rand_unit());
  uint32_t b = fcc_ref_narrow(to_ref(dt), f);
  uint32_t sign = dt == LLMK_F32 ? 0x80000000u : 0x8000u;
  if ((b & ~sign) == 0) b = 0; /* no -0.0 (conv_mode rows: x + 0 vs a copy of x) */
  return b;
}

#define PAD_MARK (-999999999)

static void gen_case(cc_case *c, const gen_opts *o, char *desc, size_t desc_n) {
  memset(c, 0, sizeof *c);
  memset(g_cov_pending, 0, sizeof g_cov_pending);
  static const llmk_dtype dts[3] = {LLMK_F32, LLMK_F16, LLMK_BF16};
  static const int64_t dims[] = {1, 15, 16, 17, 100, 257, 64, 33, 8, 128, 31, 48};
  const int sc = o->scen, apc = sc == SC_APC;
  c->xdt = o->xdt ? o->xdt : dts[rr(0, 2)];
  c->wdt = chance(1, 2) ? c->xdt : LLMK_F32;
  c->bdt = chance(1, 2) ? c->xdt : LLMK_F32;
  c->K = o->K ? o->K : (int)rr(2, 4);
  c->dim = o->dim ? o->dim : dims[rr(0, (int64_t)(sizeof dims / sizeof dims[0]) - 1)];
  const int big = c->dim >= 1000;
  const int64_t K = c->K;
  c->x3d = sc == SC_DEC_FIX || (apc && (o->x3d == 1 || (o->x3d < 0 && chance(1, 5))));
  int64_t m = o->m >= 0          ? o->m
              : sc == SC_PREFILL ? 0
              : sc == SC_MIXED   ? rr(1, 4)
              : apc              ? rr(0, 2)
                                 : rr(0, 7);
  c->C = K - 1 + m;
  if ((sc == SC_PREFILL || sc == SC_DEC_FIX) && o->m < 0 && chance(1, 5))
    c->C += rr(1, 2);
  const int64_t C = c->C;
  int64_t B = apc ? (o->B ? o->B : (int64_t[]){2, 3, 4, 5, 8, 16}[rr(0, 5)]) : 0;
  c->batch = o->batch           ? o->batch
             : big              ? rr(1, 3)
             : sc == SC_PREFILL ? rr(1, 5)
             : apc              ? rr(1, 4)
                                : rr(1, 8);
  const int64_t nb = c->batch;
  int64_t *L = xcalloc((size_t)nb, 8);
  int *pref = xcalloc((size_t)nb, sizeof(int));
  int64_t maxL = o->maxL ? o->maxL : big ? 12 : 40;
  switch (sc) {
    case SC_PREFILL:
      for (int64_t b = 0; b < nb; b++) L[b] = rr(1, maxL);
      if (maxL > 8) L[rr(0, nb - 1)] = rr(9, maxL);
      for (int64_t b = 0; b < nb; b++) pref[b] = 1;
      break;
    case SC_MIXED:
      for (int64_t b = 0; b < nb; b++) pref[b] = chance(1, 2);
      if (nb >= 2) { /* at least one prefill and one decode row */
        int64_t d1 = rr(0, nb - 1), d2 = (d1 + rr(1, nb - 1)) % nb;
        pref[d1] = 1;
        pref[d2] = 0;
      }
      for (int64_t b = 0; b < nb; b++)
        L[b] = pref[b] ? rr(1, big ? 12 : 30) : rr(1, m + 1);
      break;
    case SC_DEC_VAR:
      for (int64_t b = 0; b < nb; b++) L[b] = rr(1, m + 1);
      break;
    case SC_DEC_FIX:
      c->S = m + 1;
      for (int64_t b = 0; b < nb; b++) L[b] = c->S;
      break;
    default: { /* APC */
      int64_t hi = min64(4 * B + 3, big ? 12 : 70);
      if (c->x3d) {
        c->S = o->apc_L > 0 ? o->apc_L : rr(1, min64(3 * B + 2, hi));
        for (int64_t b = 0; b < nb; b++) L[b] = c->S;
      } else {
        for (int64_t b = 0; b < nb; b++) L[b] = o->apc_L > 0 ? o->apc_L : rr(1, hi);
      }
    }
  }
  int64_t Lmax = 0, T = 0;
  for (int64_t b = 0; b < nb; b++) {
    Lmax = max64(Lmax, L[b]);
    T += L[b];
  }
  c->T = T;

  /* attributes */
  c->conv_mode = o->conv_mode >= 0 ? o->conv_mode : chance(1, 6);
  c->act =
      (o->act >= 0 ? o->act : chance(2, 5)) ? LLMK_ACTIVATION_SILU : LLMK_ACTIVATION_NONE;
  c->residual = o->residual >= 0 ? o->residual : chance(1, 2);
  c->has_bias = o->bias >= 0 ? o->bias : chance(1, 2);
  c->block_size = apc ? B : (chance(1, 5) ? rr(2, 16) : 0);
  if (c->x3d) {
    int r = (int)rr(0, 9);
    c->mql = r < 3 ? -1 : r < 7 ? c->S : c->S + rr(1, 5);
  } else {
    int r = (int)rr(0, 9);
    c->mql = r < 3 ? -1 : r < 7 ? Lmax : Lmax + rr(1, 10);
  }

  /* num_computed_tokens */
  int64_t *nct = xcalloc((size_t)nb, 8);
  int has_nct = apc || c->conv_mode == 1 || o->nct_all >= 0 ||
                chance(sc == SC_PREFILL ? 3
                       : sc == SC_MIXED ? 4
                                        : 1,
                       sc == SC_MIXED ? 5 : 2);
  for (int64_t b = 0; b < nb; b++) {
    int64_t v;
    if (apc) {
      int r = (int)rr(0, 3);
      v = o->apc_nct >= 0 ? o->apc_nct
          : r == 0        ? 0
          : r == 1        ? B * rr(1, 3)
                          : rr(1, 4 * B);
    } else if (c->conv_mode == 1) {
      static const int64_t cm[5] = {0, 1, 2, 5, 3};
      v = cm[rr(0, 4)];
    } else if (pref[b]) {
      v = chance(1, 2) ? 0 : rr(1, 50);
    } else {
      v = chance(1, 10) ? 0 : rr(1, 100);
    }
    if (o->nct_all >= 0) v = o->nct_all;
    nct[b] = v;
  }

  /* num_accepted_tokens */
  const int64_t nacc_max = C - K + 2;
  int64_t *nacc = xcalloc((size_t)nb, 8);
  int has_nacc;
  switch (sc) {
    case SC_PREFILL:
      has_nacc = chance(1, 6);
      break;
    case SC_MIXED:
      has_nacc = 1;
      break;
    case SC_APC:
      has_nacc = chance(1, 5);
      break;
    default:
      has_nacc = chance(2, 3);
  }
  if (o->nacc_all != INT64_MIN) has_nacc = 1;
  for (int64_t b = 0; b < nb; b++) {
    if (sc == SC_PREFILL || (sc == SC_MIXED && pref[b]))
      nacc[b] = 0;
    else if (apc)
      nacc[b] = rr(0, nacc_max);
    else
      nacc[b] = chance(1, 6) ? rr(-2, 0) : rr(1, nacc_max);
    if (o->nacc_all != INT64_MIN) nacc[b] = o->nacc_all;
  }

  /* pad_slot_id kind: 0 -1, 1 -5, 2 beyond num_lines, 3 a line index no one uses */
  int pk;
  {
    int r = (int)rr(0, 9);
    pk = r < 7 ? 0 : r == 7 ? 1 : r == 8 ? 2 : 3;
  }
  int *padseq = xcalloc((size_t)nb, sizeof(int));
  for (int64_t b = 0; b < nb; b++) padseq[b] = chance(1, 10);
  padseq[0] = o->pad_first >= 0 ? o->pad_first : (padseq[0] || chance(1, 5));
  if (nb > 1 || o->pad_last >= 0)
    padseq[nb - 1] = o->pad_last >= 0 ? o->pad_last : (padseq[nb - 1] || chance(1, 5));
  int any_pad = 0;
  for (int64_t b = 0; b < nb; b++) any_pad |= padseq[b];

  /* lines */
  int64_t *first = xcalloc((size_t)nb, 8), *last = xcalloc((size_t)nb, 8),
          *init = xcalloc((size_t)nb, 8);
  int64_t need = 0, mb = 0;
  int has_ci = 1;
  if (!apc) {
    has_ci = any_pad || chance(4, 5) || pk == 3;
    need = nb;
  } else {
    for (int64_t b = 0; b < nb; b++) {
      int64_t f = nct[b] / B, l = (nct[b] + L[b] - 1) / B;
      int dec = o->apc_first_dec >= 0 ? o->apc_first_dec : chance(1, 6);
      if (dec && f >= 1 && bdy_of(L[b], B, nct[b], l - f + 1, 0) >= 0) {
        f--;
        g_cov_pending[CV_FIRST_DEC]++;
      }
      int mode = o->apc_init;
      if (mode < 0) {
        int r = (int)rr(0, 19);
        mode = r < 10 ? 0 : r < 13 ? 1 : r < 16 ? 2 : r < 18 ? 3 : 4;
      }
      int64_t in;
      switch (mode) {
        case 0:
          in = nct[b] == 0 ? f : (nct[b] - 1) / B;
          break;
        case 1:
          in = f;
          break;
        case 2:
          in = l;
          break;
        case 3:
          in = f > 0 ? f - 1 : f;
          break;
        default:
          in = rr(0, l);
      }
      first[b] = f;
      last[b] = l;
      init[b] = in;
      need += l - f + 1 + (in < f);
      mb = max64(mb, l + 1);
    }
    mb += rr(0, 2);
  }
  c->NL = need + rr(0, 3) + (pk == 3);
  int64_t *pool = xcalloc((size_t)c->NL, 8);
  for (int64_t i = 0; i < c->NL; i++) pool[i] = i;
  for (int64_t i = c->NL - 1; i > 0; i--) {
    int64_t j = rr(0, i), t = pool[i];
    pool[i] = pool[j];
    pool[j] = t;
  }
  c->pad = pk == 0 ? -1 : pk == 1 ? -5 : pk == 2 ? c->NL + rr(1, 5) : pool[c->NL - 1];
  int64_t next = 0;
  char *used = xcalloc((size_t)c->NL, 1);
  c->mb = apc ? mb : 0;
  c->has[IX_CI] = has_ci;
  c->has[IX_NCT] = has_nct;
  c->has[IX_NACC] = has_nacc;
  c->has[IX_QSL] = !c->x3d;
  c->has[IX_FIRST] = c->has[IX_LAST] = c->has[IX_INIT] = apc;

  /* layouts */
  int strided = o->strided >= 0 ? o->strided : chance(1, 2);
  const int64_t dim = c->dim;
  if (!strided) {
    c->xs_t = dim;
    c->xs_b = c->S * dim;
    c->cs_row = dim;
    c->cs_line = C * dim;
    c->w_row = dim;
  } else {
    if (c->x3d) {
      c->xs_t = dim + rr(0, 5);
      c->xs_b = c->S * c->xs_t + rr(1, 9);
    } else {
      c->xs_t = chance(1, 3) ? 2 * dim : dim + rr(1, 7);
    }
    c->cs_row = dim + rr(1, 5);
    c->cs_line = C * c->cs_row + rr(0, 9);
    c->w_row = dim + rr(0, 4);
  }
  for (int k = 0; k < IX_COUNT; k++) {
    c->idt[k] = chance(1, 2) ? LLMK_I32 : LLMK_I64;
    c->istr[k] = strided && chance(1, 3) ? rr(2, 3) : 1;
  }
  c->ci_col = 1;
  if (apc) {
    c->ci_col = strided && chance(1, 4) ? 2 : 1;
    c->istr[IX_CI] = c->ci_col * mb + (strided ? rr(0, 3) : 0);
  }

  case_alloc(c);

  /* index values */
  if (!c->x3d) {
    c->iv[IX_QSL][0] = 0;
    for (int64_t b = 0; b < nb; b++) c->iv[IX_QSL][b + 1] = c->iv[IX_QSL][b] + L[b];
  }
  for (int64_t b = 0; b < nb; b++) {
    c->iv[IX_NCT][b] = nct[b];
    c->iv[IX_NACC][b] = nacc[b];
  }
  int64_t shared_read = -1;
  if (!apc) {
    for (int64_t b = 0; b < nb; b++) {
      int64_t line = has_ci ? pool[next++] : b;
      if (padseq[b] && has_ci) line = c->pad;
      c->iv[IX_CI][b] = line;
      if (line != c->pad) used[line] = 1;
    }
  } else {
    for (int64_t b = 0; b < nb; b++) {
      int64_t *row = c->iv[IX_CI] + b * mb;
      for (int64_t j = 0; j < mb; j++)
        row[j] = PAD_MARK - 1; /* garbage, resolved below */
      int64_t f = first[b], l = last[b], in = init[b], n = l - f;
      for (int64_t j = f; j <= l; j++) row[j] = pool[next++];
      if (in < f) {
        int64_t line = pool[next++];
        if (shared_read >= 0 && chance(1, 2)) {
          line = shared_read;
          g_cov_pending[CV_SHARED_READ]++;
        }
        shared_read = line;
        row[in] = line;
      }
      if (padseq[b]) {
        row[in] = PAD_MARK;
      } else {
        if (in != l && chance(1, 8)) {
          row[l] = PAD_MARK;
          g_cov_pending[CV_W_PAD]++;
        }
        for (int64_t j = f; j < l; j++)
          if (j != in && chance(1, 8)) {
            row[j] = PAD_MARK;
            g_cov_pending[CV_FILL_PAD]++;
          }
        g_cov_pending[n == 0 ? CV_N0 : n == 1 ? CV_N1 : CV_NMANY]++;
        for (int64_t k2 = 0; k2 < n; k2++)
          if (bdy_of(L[b], B, nct[b], n, k2) < K - 1) g_cov_pending[CV_BDY_HIST]++;
        if (in >= f && in < l) g_cov_pending[CV_R_IS_FILL]++;
        if (in == l) g_cov_pending[CV_R_IS_W]++;
        if (in < f) g_cov_pending[CV_R_BELOW]++;
        if (nct[b] % B) g_cov_pending[CV_NCT_UNALIGNED]++;
        if (nct[b] == 0) g_cov_pending[CV_NCT0]++;
      }
      for (int64_t j = 0; j < mb; j++) {
        if (row[j] == PAD_MARK) {
          row[j] = c->pad;
        } else if (row[j] == PAD_MARK - 1) {
          int r = (int)rr(0, 3);
          row[j] = r == 0   ? -1000 - rr(0, 9)
                   : r == 1 ? c->NL + 100
                   : r == 2 ? rr(0, c->NL - 1)
                            : c->pad;
          g_cov_pending[CV_GARBAGE]++;
        } else {
          used[row[j]] = 1;
        }
      }
    }
  }
  for (int64_t b = 0; b < nb; b++) {
    c->iv[IX_FIRST][b] = first[b];
    c->iv[IX_LAST][b] = last[b];
    c->iv[IX_INIT][b] = init[b];
  }

  /* float values */
  for (int64_t i = 0; i < c->T * dim; i++) c->xv[i] = rand_val(c->xdt, -2, 2);
  for (int64_t i = 0; i < K * dim; i++) c->wv[i] = rand_val(c->wdt, -1, 1);
  for (int64_t i = 0; i < dim; i++) c->bv[i] = rand_val(c->bdt, -1, 1);
  for (int64_t l = 0; l < c->NL; l++) {
    int raw = !used[l] && chance(1, 2); /* unused lines: any bits, NaN included */
    for (int64_t i = 0; i < C * dim; i++) {
      uint32_t v = rand_val(c->xdt, -2, 2);
      if (raw) v = (uint32_t)tu_rand_u64() & (c->xdt == LLMK_F32 ? 0xffffffffu : 0xffffu);
      c->csv[l * C * dim + i] = v;
    }
  }

  /* one value defect in some cases; the reference decides the outcome */
  const char *defect = "";
  if (o->defect != 0 && (o->defect > 0 || chance(1, 12))) {
    int64_t b = rr(0, nb - 1);
    for (int64_t k2 = 0; k2 < nb && padseq[b]; k2++) b = (b + 1) % nb;
    if (!padseq[b]) {
      switch (rr(0, 5)) {
        case 0:
          if (!apc && has_ci) {
            c->iv[IX_CI][b] = chance(1, 2) ? c->NL : -2;
            defect = " defect:ci";
          } else if (apc) {
            c->iv[IX_CI][b * mb + last[b]] = c->NL + 1;
            defect = " defect:W";
          }
          break;
        case 1:
          if (has_nct) {
            c->iv[IX_NCT][b] = -rr(1, 3);
            defect = " defect:nct<0";
          }
          break;
        case 2:
          if (!c->x3d) {
            c->iv[IX_QSL][nb] += chance(1, 2) ? 1 : -1;
            defect = " defect:qsl";
          }
          break;
        case 3:
          if (has_nacc && (!has_nct || nct[b] != 0)) {
            c->iv[IX_NACC][b] = nacc_max + rr(1, 2);
            defect = " defect:nacc";
          }
          break;
        case 4:
          if (!apc && has_ci && nb >= 2) {
            int64_t b2 = (b + 1) % nb;
            if (!padseq[b2]) {
              c->iv[IX_CI][b2] = c->iv[IX_CI][b];
              defect = " defect:dup";
            }
          }
          break;
        default:
          if (!c->x3d && Lmax > 1) {
            c->mql = Lmax - 1;
            defect = " defect:mql";
          }
      }
    }
  }
  if (*defect) memset(g_cov_pending, 0, sizeof g_cov_pending);

  snprintf(desc, desc_n,
           "%s %s w%s K=%" PRId64 " dim=%" PRId64 " batch=%" PRId64 " T=%" PRId64
           " C=%" PRId64 " NL=%" PRId64 "%s%s%s%s%s%s%s%s pad=%" PRId64 " mql=%" PRId64
           "%s%s",
           sc_name[sc], llmk_dtype_name(c->xdt), llmk_dtype_name(c->wdt), K, dim, nb,
           c->T, C, c->NL, c->x3d ? " 3-D" : "", has_ci ? (apc ? " ci2d" : " ci") : "",
           has_nacc ? " nacc" : "", has_nct ? " nct" : "", c->has_bias ? " bias" : "",
           c->act ? " silu" : "", c->residual ? " residual" : "",
           c->conv_mode ? " conv_mode1" : "", c->pad, c->mql, strided ? " strided" : "",
           defect);
  if (apc) {
    size_t n = strlen(desc);
    snprintf(desc + n, desc_n - n, " B=%" PRId64 " nct0=%" PRId64, B, nct[0]);
  }
  free(L);
  free(pref);
  free(nct);
  free(nacc);
  free(padseq);
  free(first);
  free(last);
  free(init);
  free(pool);
  free(used);
}

static long g_cases, g_cases_err;

static void gen_and_run(const gen_opts *o, const char *tag, uint64_t seed) {
  cc_case c;
  char desc[400], label[512];
  gen_case(&c, o, desc, sizeof desc);
  snprintf(label, sizeof label, "%s #%" PRIu64 ": %s", tag, seed, desc);
  /* is it valid per the reference? */
  {
    tset P;
    tset_build(&P, &c, seed);
    ref_out ro;
    ref_run(&c, &P, &ro);
    if (ro.rc)
      g_cases_err++;
    else
      for (int k = 0; k < CV_COUNT; k++) g_cov[k] += g_cov_pending[k];
    TU_CHECK(ro.rc == 0 || strstr(desc, "defect:"),
             "%s: generated case invalid (rule %d, batch %" PRId64 ")", label, ro.rc,
             ro.bad_batch);
    ref_free(&ro);
    tset_free(&P);
  }
  g_cases++;
  const char *only = getenv("LLMK_TEST_CASE"); /* replay one case: its # number */
  if (!only || strtoull(only, NULL, 0) == seed) run_case(&c, seed, label, NULL, 1, NULL);
  case_free(&c);
}

/* ---------------------------------------------------------------- samples */

static uint32_t one_bits(llmk_dtype dt) {
  return dt == LLMK_F32 ? 0x3f800000u : dt == LLMK_F16 ? 0x3c00u : 0x3f80u;
}

/* Contiguous layouts, i32 index tensors. */
static void contiguous(cc_case *c) {
  c->xs_t = c->dim;
  c->xs_b = c->S * c->dim;
  c->w_row = c->dim;
  c->cs_row = c->dim;
  c->cs_line = c->C * c->dim;
  for (int k = 0; k < IX_COUNT; k++) {
    c->idt[k] = LLMK_I32;
    c->istr[k] = k == IX_CI && c->mb ? c->mb : 1;
  }
  c->ci_col = 1;
}

/* The spec's Sample: K=3, dim=128, batch=4, 8 lines, C=2, lens 5,3,7,4, x all 1.0,
 * w[0]=1, w[1]=w[2]=0, zero states, cache_indices 0,3,1,5, nacc 0, no nct. */
static void sample_case(cc_case *c, llmk_dtype dt, int strided) {
  memset(c, 0, sizeof *c);
  c->xdt = c->wdt = c->bdt = dt;
  c->K = 3;
  c->dim = 128;
  c->batch = 4;
  c->NL = 8;
  c->C = 2;
  c->T = 19;
  c->has[IX_QSL] = c->has[IX_CI] = c->has[IX_NACC] = 1;
  c->pad = -1;
  c->mql = 7;
  c->residual = 0;
  c->block_size = 0;
  c->conv_mode = 0;
  c->act = LLMK_ACTIVATION_NONE;
  contiguous(c);
  if (strided) {
    c->xs_t = 136;
    c->w_row = 130;
    c->cs_row = 144;
    c->cs_line = 300;
    c->idt[IX_CI] = LLMK_I64;
    c->istr[IX_CI] = 2;
  }
  case_alloc(c);
  static const int64_t qsl[5] = {0, 5, 8, 15, 19}, ci[4] = {0, 3, 1, 5};
  memcpy(c->iv[IX_QSL], qsl, sizeof qsl);
  memcpy(c->iv[IX_CI], ci, sizeof ci);
  for (int64_t i = 0; i < c->T * c->dim; i++) c->xv[i] = one_bits(dt);
  for (int64_t d = 0; d < c->dim; d++) c->wv[d] = one_bits(dt);
}

/* Written from the spec text: every sequence's rows become 0,0,1,1,...; lines 0,3,1,5
 * all 1.0; lines 2,4,6,7 stay 0. */
static void sample_expect(tset *e, const cc_case *c) {
  const tdesc *dx = &e->d[B_X], *dc = &e->d[B_CS];
  size_t es = th_dtype_size(c->xdt);
  static const int64_t qsl[5] = {0, 5, 8, 15, 19};
  for (int b = 0; b < 4; b++)
    for (int64_t t = qsl[b]; t < qsl[b + 1]; t++)
      for (int64_t d = 0; d < c->dim; d++)
        ref_store_bits(
            e->buf[B_X].data,
            th_row_major_offset(dx->rank, dx->shape, dx->strides, t * c->dim + d), es,
            t - qsl[b] < 2 ? 0 : one_bits(c->xdt));
  for (int64_t l = 0; l < c->NL; l++) {
    int on = l == 0 || l == 3 || l == 1 || l == 5;
    for (int64_t i = 0; i < c->C * c->dim; i++)
      ref_store_bits(
          e->buf[B_CS].data,
          th_row_major_offset(dc->rank, dc->shape, dc->strides, l * c->C * c->dim + i),
          es, on ? one_bits(c->xdt) : 0);
  }
}

/* The spec's APC worked example: B=4, nct=2, L=9, cache row [5,6,7], first=0, last=2,
 * init=0 (K=3, C=2), random values. */
static void apc_example_case(cc_case *c, llmk_dtype dt, int strided) {
  memset(c, 0, sizeof *c);
  c->xdt = c->wdt = c->bdt = dt;
  c->K = 3;
  c->dim = 16;
  c->batch = 1;
  c->NL = 8;
  c->C = 2;
  c->T = 9;
  c->mb = 3;
  c->has[IX_QSL] = c->has[IX_CI] = c->has[IX_NCT] = 1;
  c->has[IX_FIRST] = c->has[IX_LAST] = c->has[IX_INIT] = 1;
  c->pad = -1;
  c->mql = -1;
  c->block_size = 4;
  contiguous(c);
  if (strided) {
    c->xs_t = 21;
    c->w_row = 17;
    c->cs_row = 19;
    c->cs_line = 45;
    c->idt[IX_CI] = LLMK_I64;
    c->istr[IX_CI] = 7;
    c->ci_col = 2;
  }
  case_alloc(c);
  c->iv[IX_QSL][0] = 0;
  c->iv[IX_QSL][1] = 9;
  c->iv[IX_CI][0] = 5;
  c->iv[IX_CI][1] = 6;
  c->iv[IX_CI][2] = 7;
  c->iv[IX_NCT][0] = 2;
  c->iv[IX_FIRST][0] = 0;
  c->iv[IX_LAST][0] = 2;
  c->iv[IX_INIT][0] = 0;
  for (int64_t i = 0; i < c->T * c->dim; i++) c->xv[i] = rand_val(dt, -2, 2);
  for (int64_t i = 0; i < c->K * c->dim; i++) c->wv[i] = rand_val(dt, -1, 1);
  for (int64_t i = 0; i < c->NL * c->C * c->dim; i++) c->csv[i] = rand_val(dt, -2, 2);
}

/* From the spec text: line 5 gets x[0],x[1], line 6 x[4],x[5], line 7 (W) x[7],x[8];
 * the outputs convolve line 5's rows (read before it is filled) and the chunk. */
static void apc_example_expect(tset *e, const cc_case *c) {
  const tdesc *dx = &e->d[B_X], *dc = &e->d[B_CS];
  size_t es = th_dtype_size(c->xdt);
  fcc_ref_dtype rd = to_ref(c->xdt);
  const int64_t dim = c->dim, C = c->C;
  static const int64_t line[3] = {5, 6, 7}, tok[3][2] = {{0, 1}, {4, 5}, {7, 8}};
  for (int li = 0; li < 3; li++)
    for (int j = 0; j < 2; j++)
      for (int64_t d = 0; d < dim; d++)
        ref_store_bits(e->buf[B_CS].data,
                       th_row_major_offset(dc->rank, dc->shape, dc->strides,
                                           (line[li] * C + j) * dim + d),
                       es, c->xv[tok[li][j] * dim + d]);
  for (int64_t i = 0; i < 9; i++)
    for (int64_t d = 0; d < dim; d++) {
      float xp[3];
      for (int k = 0; k < 3; k++) {
        int64_t q = i + k; /* xp = line 5 rows 0..1, then x */
        uint32_t bits = q < 2 ? c->csv[(5 * C + q) * dim + d] : c->xv[(q - 2) * dim + d];
        xp[k] = fcc_ref_widen(rd, bits);
      }
      float w0 = fcc_ref_widen(rd, c->wv[d]), w1 = fcc_ref_widen(rd, c->wv[dim + d]),
            w2 = fcc_ref_widen(rd, c->wv[2 * dim + d]);
      float y = w0 * xp[0];
      float p1 = w1 * xp[1];
      y = y + p1;
      float p2 = w2 * xp[2];
      y = y + p2;
      ref_store_bits(e->buf[B_X].data,
                     th_row_major_offset(dx->rank, dx->shape, dx->strides, i * dim + d),
                     es, fcc_ref_narrow(rd, y));
    }
}

static void test_samples(void) {
  static const llmk_dtype dts[3] = {LLMK_F16, LLMK_BF16, LLMK_F32};
  char label[160];
  for (int i = 0; i < 3; i++)
    for (int strided = 0; strided <= 1; strided++) {
      cc_case c;
      sample_case(&c, dts[i], strided);
      snprintf(label, sizeof label, "spec Sample (%s%s)", llmk_dtype_name(dts[i]),
               strided ? ", strided" : "");
      run_case(&c, 1 + (uint64_t)i, label, sample_expect, 1, NULL);
      case_free(&c);
      apc_example_case(&c, dts[i], strided);
      snprintf(label, sizeof label, "spec APC worked example (%s%s)",
               llmk_dtype_name(dts[i]), strided ? ", strided" : "");
      run_case(&c, 4 + (uint64_t)i, label, apc_example_expect, 1, NULL);
      case_free(&c);
    }
}

/* ------------------------------------------------------------ error table */

enum { BASE_PLAIN, BASE_APC, BASE_3D };

static void fill_vals(cc_case *c) {
  for (int64_t i = 0; i < c->T * c->dim; i++) c->xv[i] = rand_val(c->xdt, -2, 2);
  for (int64_t i = 0; i < c->K * c->dim; i++) c->wv[i] = rand_val(c->wdt, -1, 1);
  for (int64_t i = 0; i < c->dim; i++) c->bv[i] = rand_val(c->bdt, -1, 1);
  for (int64_t i = 0; i < c->NL * c->C * c->dim; i++) c->csv[i] = rand_val(c->xdt, -2, 2);
}

/* Valid base calls.
 * plain: f16 x (weight f32, bias f16), K=3, dim=16, lens 4,2,5, C=3, 8 lines,
 *   cache_indices 2,5,0, nct 3,0,7, nacc 1,2,0, residual, padded x rows.
 * apc: f32, K=3, dim=8, lens 6,7, C=2, 8 lines, B=4, max_blocks 4, nct 2,5,
 *   first 0,1, last 1,2, init 0,1, rows [1,2,-1000,99] and [6,4,5,-3]
 *   (seq 0: R = fill = 1, W = 2; seq 1: R = fill = 4, W = 5).
 * 3-D: bf16 [3, 2, 16] with padded strides, K=4, C=4, 5 lines, cache_indices 4,0,2,
 *   nacc 2,1,0, no nct. */
static void base_case(cc_case *c, int base) {
  memset(c, 0, sizeof *c);
  c->pad = -1;
  c->mql = -1;
  c->act = LLMK_ACTIVATION_NONE;
  if (base == BASE_PLAIN) {
    c->xdt = LLMK_F16;
    c->wdt = LLMK_F32;
    c->bdt = LLMK_F16;
    c->K = 3;
    c->dim = 16;
    c->batch = 3;
    c->T = 11;
    c->C = 3;
    c->NL = 8;
    c->has_bias = 1;
    c->has[IX_QSL] = c->has[IX_CI] = c->has[IX_NCT] = c->has[IX_NACC] = 1;
    c->residual = 1;
    contiguous(c);
    c->xs_t = 20;
    c->idt[IX_QSL] = LLMK_I64;
    c->idt[IX_NCT] = LLMK_I64;
    case_alloc(c);
    static const int64_t qsl[4] = {0, 4, 6, 11}, ci[3] = {2, 5, 0}, nct[3] = {3, 0, 7},
                         nacc[3] = {1, 2, 0};
    memcpy(c->iv[IX_QSL], qsl, sizeof qsl);
    memcpy(c->iv[IX_CI], ci, sizeof ci);
    memcpy(c->iv[IX_NCT], nct, sizeof nct);
    memcpy(c->iv[IX_NACC], nacc, sizeof nacc);
  } else if (base == BASE_APC) {
    c->xdt = c->wdt = c->bdt = LLMK_F32;
    c->K = 3;
    c->dim = 8;
    c->batch = 2;
    c->T = 13;
    c->C = 2;
    c->NL = 8;
    c->mb = 4;
    c->has_bias = 1;
    c->has[IX_QSL] = c->has[IX_CI] = c->has[IX_NCT] = 1;
    c->has[IX_FIRST] = c->has[IX_LAST] = c->has[IX_INIT] = 1;
    c->block_size = 4;
    contiguous(c);
    c->idt[IX_CI] = LLMK_I64;
    c->idt[IX_LAST] = LLMK_I64;
    case_alloc(c);
    static const int64_t qsl[3] = {0, 6, 13}, ci[8] = {1, 2, -1000, 99, 6, 4, 5, -3},
                         nct[2] = {2, 5}, first[2] = {0, 1}, last[2] = {1, 2},
                         init[2] = {0, 1};
    memcpy(c->iv[IX_QSL], qsl, sizeof qsl);
    memcpy(c->iv[IX_CI], ci, sizeof ci);
    memcpy(c->iv[IX_NCT], nct, sizeof nct);
    memcpy(c->iv[IX_FIRST], first, sizeof first);
    memcpy(c->iv[IX_LAST], last, sizeof last);
    memcpy(c->iv[IX_INIT], init, sizeof init);
  } else {
    c->xdt = c->wdt = c->bdt = LLMK_BF16;
    c->x3d = 1;
    c->K = 4;
    c->dim = 16;
    c->batch = 3;
    c->S = 2;
    c->C = 4;
    c->NL = 5;
    c->has[IX_CI] = c->has[IX_NACC] = 1;
    contiguous(c);
    c->xs_t = 16;
    c->xs_b = 40;
    case_alloc(c);
    static const int64_t ci[3] = {4, 0, 2}, nacc[3] = {2, 1, 0};
    memcpy(c->iv[IX_CI], ci, sizeof ci);
    memcpy(c->iv[IX_NACC], nacc, sizeof nacc);
  }
  fill_vals(c);
}

/* The shared descriptor defects are the harness's (TH_D_*, on tensor a1 with a2, a3);
 * these are the op's own. */
enum defect { D_NULL_WS = TH_D_OP, D_NULL_PLAN, D_EXTRA_QSL, D_EXTRA_FIRST };
enum { A_NONE, A_PAD, A_MQL, A_RES, A_BS, A_CM, A_ACT };

typedef struct err_row {
  const char *name;
  int base, defect;
  int64_t a1, a2, a3;
  int attr;
  int64_t attr_val;
  int nset;
  int64_t set[4][3]; /* {index tensor, element, value} */
  int phase;         /* 0 success, 1 phase 1 rejects, 2 phase 2 rejects, 3 either */
  unsigned mask;     /* accepted phase-1 statuses */
  const char *msg;   /* phase 2: words one of which the message must contain */
} err_row;

static th_table rows;

#define ST(s) (1u << (s))

static err_row *add(const char *name, int base, int phase, unsigned mask,
                    const char *msg) {
  return TH_TABLE_ADD(&rows, err_row, .name = th_table_str(&rows, name), .base = base,
                      .phase = phase, .mask = mask, .msg = msg);
}

static err_row *add_d(const char *name, int base, int defect, int64_t a1, int64_t a2,
                      int64_t a3, unsigned mask) {
  err_row *r = add(name, base, 1, mask, NULL);
  r->defect = defect;
  r->a1 = a1;
  r->a2 = a2;
  r->a3 = a3;
  return r;
}

static err_row *add_attr(const char *name, int base, int attr, int64_t v, int phase,
                         unsigned mask, const char *msg) {
  err_row *r = add(name, base, phase, mask, msg);
  r->attr = attr;
  r->attr_val = v;
  return r;
}

static err_row *with_set(err_row *r, int ix, int64_t elem, int64_t v) {
  if (r->nset == 4) th_die("too many edits");
  r->set[r->nset][0] = ix;
  r->set[r->nset][1] = elem;
  r->set[r->nset][2] = v;
  r->nset++;
  return r;
}

static err_row *add_v(const char *name, int base, int ix, int64_t elem, int64_t v,
                      int phase, const char *msg) {
  return with_set(
      add(name, base, phase, phase == 2 ? ST(LLMK_ERROR_INVALID_VALUE) : 0, msg), ix,
      elem, v);
}

static void build_rows(void) {
  const unsigned NP = ST(LLMK_ERROR_NULL_POINTER), DT = ST(LLMK_ERROR_INVALID_DTYPE),
                 SH = ST(LLMK_ERROR_INVALID_SHAPE), AT = ST(LLMK_ERROR_INVALID_ATTRIBUTE),
                 VA = ST(LLMK_ERROR_INVALID_VALUE);
  const int P = BASE_PLAIN, A = BASE_APC, D = BASE_3D;
  const int Q = B_IX0 + IX_QSL, CI = B_IX0 + IX_CI, NA = B_IX0 + IX_NACC,
            NC = B_IX0 + IX_NCT, FI = B_IX0 + IX_FIRST, LA = B_IX0 + IX_LAST,
            IN = B_IX0 + IX_INIT;
  /* the bases themselves */
  add("plain base", P, 0, 0, NULL);
  add("apc base", A, 0, 0, NULL);
  add("3-D base", D, 0, 0, NULL);

  /* ---- phase 1: NULL_POINTER */
  add_d("x NULL", P, TH_D_NULL, B_X, 0, 0, NP);
  add_d("weight NULL", P, TH_D_NULL, B_W, 0, 0, NP);
  add_d("conv_states NULL", P, TH_D_NULL, B_CS, 0, 0, NP);
  add_d("3-D: conv_states NULL", D, TH_D_NULL, B_CS, 0, 0, NP);
  add_d("workspace_size NULL", P, D_NULL_WS, 0, 0, 0, NP);
  add_d("plan NULL", P, D_NULL_PLAN, 0, 0, 0, NP);
  add_d("2-D x without query_start_loc", P, TH_D_NULL, Q, 0, 0, NP);
  add_d("apc: 2-D x without query_start_loc", A, TH_D_NULL, Q, 0, 0, NP);
  static const int dnull_p[] = {
      B_X,           B_W, B_CS, B_BIAS, B_IX0 + IX_QSL, B_IX0 + IX_CI, B_IX0 + IX_NACC,
      B_IX0 + IX_NCT};
  for (size_t i = 0; i < sizeof dnull_p / sizeof dnull_p[0]; i++) {
    char n[100];
    snprintf(n, sizeof n, "%s.data NULL", buf_name[dnull_p[i]]);
    add_d(n, P, TH_D_DATA_NULL, dnull_p[i], 0, 0, NP);
  }
  add_d("apc: block_idx_first_scheduled_token.data NULL", A, TH_D_DATA_NULL, FI, 0, 0,
        NP);
  add_d("apc: block_idx_last_scheduled_token.data NULL", A, TH_D_DATA_NULL, LA, 0, 0, NP);
  add_d("apc: initial_state_idx.data NULL", A, TH_D_DATA_NULL, IN, 0, 0, NP);
  add_d("apc: 2-D cache_indices.data NULL", A, TH_D_DATA_NULL, CI, 0, 0, NP);
  add_d("3-D: x.data NULL", D, TH_D_DATA_NULL, B_X, 0, 0, NP);

  /* ---- phase 1: INVALID_DTYPE */
  add_d("x i32", P, TH_D_DTYPE, B_X, LLMK_I32, 0, DT);
  add_d("x fp8_e4m3fn", P, TH_D_DTYPE, B_X, LLMK_FP8_E4M3FN, 0, DT);
  add_d("x invalid dtype 0", P, TH_D_DTYPE, B_X, LLMK_DTYPE_INVALID, 0, DT);
  add_d("x dtype 77", P, TH_D_DTYPE, B_X, 77, 0, DT);
  add_d("weight bf16 with x f16", P, TH_D_DTYPE, B_W, LLMK_BF16, 0, DT);
  add_d("weight i32", P, TH_D_DTYPE, B_W, LLMK_I32, 0, DT);
  add_d("conv_states f32 with x f16", P, TH_D_DTYPE, B_CS, LLMK_F32, 0, DT);
  add_d("conv_states bf16 with x f16", P, TH_D_DTYPE, B_CS, LLMK_BF16, 0, DT);
  add_d("bias bf16 with x f16", P, TH_D_DTYPE, B_BIAS, LLMK_BF16, 0, DT);
  add_d("bias i64", P, TH_D_DTYPE, B_BIAS, LLMK_I64, 0, DT);
  add_d("query_start_loc f32", P, TH_D_DTYPE, Q, LLMK_F32, 0, DT);
  add_d("query_start_loc i8", P, TH_D_DTYPE, Q, LLMK_I8, 0, DT);
  add_d("query_start_loc u8", P, TH_D_DTYPE, Q, LLMK_U8, 0, DT);
  add_d("cache_indices f16", P, TH_D_DTYPE, CI, LLMK_F16, 0, DT);
  add_d("cache_indices i8", P, TH_D_DTYPE, CI, LLMK_I8, 0, DT);
  add_d("num_accepted_tokens f32", P, TH_D_DTYPE, NA, LLMK_F32, 0, DT);
  add_d("num_computed_tokens bf16", P, TH_D_DTYPE, NC, LLMK_BF16, 0, DT);
  add_d("apc: weight f16 with x f32", A, TH_D_DTYPE, B_W, LLMK_F16, 0, DT);
  add_d("apc: bias bf16 with x f32", A, TH_D_DTYPE, B_BIAS, LLMK_BF16, 0, DT);
  add_d("apc: conv_states f16 with x f32", A, TH_D_DTYPE, B_CS, LLMK_F16, 0, DT);
  add_d("apc: block_idx_first_scheduled_token f32", A, TH_D_DTYPE, FI, LLMK_F32, 0, DT);
  add_d("apc: block_idx_last_scheduled_token i8", A, TH_D_DTYPE, LA, LLMK_I8, 0, DT);
  add_d("apc: initial_state_idx f16", A, TH_D_DTYPE, IN, LLMK_F16, 0, DT);
  add_d("apc: cache_indices u8", A, TH_D_DTYPE, CI, LLMK_U8, 0, DT);
  add_d("3-D: x f16 (weight, conv_states bf16)", D, TH_D_DTYPE, B_X, LLMK_F16, 0, DT);
  add_d("3-D: weight f16 with x bf16", D, TH_D_DTYPE, B_W, LLMK_F16, 0, DT);
  add_d("3-D: conv_states f32 with x bf16", D, TH_D_DTYPE, B_CS, LLMK_F32, 0, DT);

  /* ---- phase 1: INVALID_SHAPE */
  add_d("x rank 1", P, TH_D_RANK_LEAD, B_X, 1, 0, SH);
  add_d("x rank 4", P, TH_D_RANK_LEAD, B_X, 4, 0, SH);
  add_d("x last stride 2", P, TH_D_STRIDE, B_X, 1, 2, SH);
  add_d("3-D: x last stride 2", D, TH_D_STRIDE, B_X, 2, 2, SH);
  add_d("3-D: x last stride 0", D, TH_D_STRIDE, B_X, 2, 0, SH);
  add_d("weight rank 1", P, TH_D_RANK_LEAD, B_W, 1, 0, SH);
  add_d("weight rank 3", P, TH_D_RANK_LEAD, B_W, 3, 0, SH);
  add_d("weight K = 1", P, TH_D_EXTENT, B_W, 0, 1, SH);
  add_d("weight K = 5", P, TH_D_EXTENT, B_W, 0, 5, SH);
  add_d("weight.shape[1] = dim + 1", P, TH_D_EXTENT, B_W, 1, 17, SH);
  add_d("weight.shape[1] = dim - 1", P, TH_D_EXTENT, B_W, 1, 15, SH);
  add_d("weight last stride 2", P, TH_D_STRIDE, B_W, 1, 2, SH);
  add_d("conv_states rank 2", P, TH_D_RANK_LEAD, B_CS, 2, 0, SH);
  add_d("conv_states rank 4", P, TH_D_RANK_LEAD, B_CS, 4, 0, SH);
  add_d("conv_states.shape[2] = dim - 1", P, TH_D_EXTENT, B_CS, 2, 15, SH);
  add_d("conv_states C = K - 2", P, TH_D_EXTENT, B_CS, 1, 1, SH);
  add_d("3-D: conv_states C = K - 2", D, TH_D_EXTENT, B_CS, 1, 2, SH);
  add_d("conv_states last stride 2", P, TH_D_STRIDE, B_CS, 2, 2, SH);
  add_d("query_start_loc rank 2", P, TH_D_RANK_LEAD, Q, 2, 0, SH);
  add_d("query_start_loc.shape[0] = batch (others batch)", P, TH_D_EXTENT, Q, 0, 3, SH);
  add_d("query_start_loc.shape[0] = batch + 2", P, TH_D_EXTENT, Q, 0, 5, SH);
  add_d("cache_indices 2-D without APC", P, TH_D_RANK_LEAD, CI, 2, 0, SH);
  add_d("cache_indices.shape[0] = batch + 1", P, TH_D_EXTENT, CI, 0, 4, SH);
  add_d("cache_indices.shape[0] = batch - 1", P, TH_D_EXTENT, CI, 0, 2, SH);
  add_d("num_accepted_tokens.shape[0] = batch - 1", P, TH_D_EXTENT, NA, 0, 2, SH);
  add_d("num_accepted_tokens rank 2", P, TH_D_RANK_LEAD, NA, 2, 0, SH);
  add_d("num_computed_tokens.shape[0] = batch + 1", P, TH_D_EXTENT, NC, 0, 4, SH);
  add_d("num_computed_tokens rank 0", P, TH_D_RANK_LEAD, NC, 0, 0, SH);
  add_d("bias.shape[0] = dim + 1", P, TH_D_EXTENT, B_BIAS, 0, 17, SH);
  add_d("bias rank 2", P, TH_D_RANK_LEAD, B_BIAS, 2, 0, SH);
  add_d("apc: cache_indices 1-D", A, TH_D_RANK_LEAD, CI, 1, 0, SH | AT);
  add_d("apc: cache_indices.shape[0] = batch - 1", A, TH_D_EXTENT, CI, 0, 1, SH);
  add_d("apc: block_idx_first_scheduled_token.shape[0] = batch + 1", A, TH_D_EXTENT, FI,
        0, 3, SH);
  add_d("apc: block_idx_last_scheduled_token rank 2", A, TH_D_RANK_LEAD, LA, 2, 0, SH);
  add_d("apc: initial_state_idx.shape[0] = batch - 1", A, TH_D_EXTENT, IN, 0, 1, SH);
  add_d("3-D x with query_start_loc", D, D_EXTRA_QSL, 0, 0, 0, SH);
  add_d("3-D: weight.shape[1] = dim - 1", D, TH_D_EXTENT, B_W, 1, 15, SH);
  add_d("3-D: cache_indices.shape[0] = batch + 1", D, TH_D_EXTENT, CI, 0, 4, SH);
  add_d("3-D: num_accepted_tokens.shape[0] = batch - 1", D, TH_D_EXTENT, NA, 0, 2, SH);

  /* ---- phase 1: INVALID_ATTRIBUTE */
  add_attr("max_query_len 0", P, A_MQL, 0, 1, AT, NULL);
  add_attr("max_query_len -2", P, A_MQL, -2, 1, AT, NULL);
  add_attr("3-D: max_query_len 0", D, A_MQL, 0, 1, AT, NULL);
  add_attr("residual_connection 2", P, A_RES, 2, 1, AT, NULL);
  add_attr("residual_connection -1", P, A_RES, -1, 1, AT, NULL);
  add_attr("block_size 1", P, A_BS, 1, 1, AT, NULL);
  add_attr("block_size -4", P, A_BS, -4, 1, AT, NULL);
  add_attr("conv_mode 2", P, A_CM, 2, 1, AT, NULL);
  add_attr("conv_mode -1", P, A_CM, -1, 1, AT, NULL);
  add_attr("activation 2", P, A_ACT, 2, 1, AT, NULL);
  add_attr("activation -1", P, A_ACT, -1, 1, AT, NULL);
  add_d("apc: block_idx_first_scheduled_token missing", A, TH_D_NULL, FI, 0, 0, AT);
  add_d("apc: block_idx_last_scheduled_token missing", A, TH_D_NULL, LA, 0, 0, AT);
  add_d("apc: initial_state_idx missing", A, TH_D_NULL, IN, 0, 0, AT);
  add_d("only block_idx_first_scheduled_token given", P, D_EXTRA_FIRST, 0, 0, 0, AT);
  add_attr("apc: block_size 0", A, A_BS, 0, 1, AT, NULL);
  add_attr("apc: block_size 1", A, A_BS, 1, 1, AT, NULL);
  add_d("apc: without num_computed_tokens", A, TH_D_NULL, NC, 0, 0, AT);
  add_d("apc: without cache_indices", A, TH_D_NULL, CI, 0, 0, AT | SH | NP);
  add_attr("3-D: conv_mode 1 without num_computed_tokens", D, A_CM, 1, 1, AT, NULL);

  /* ---- phase 2: INVALID_VALUE, nothing written */
  add_v("query_start_loc[0] = 1", P, IX_QSL, 0, 1, 2, "query_start_loc");
  add_v("query_start_loc[2] = [1] (empty sequence)", P, IX_QSL, 2, 4, 2,
        "query_start_loc");
  add_v("query_start_loc[1] > [2]", P, IX_QSL, 1, 7, 2, "query_start_loc");
  add_v("query_start_loc[batch] = T - 1", P, IX_QSL, 3, 10, 2, "query_start_loc");
  add_v("query_start_loc[batch] = T + 1", P, IX_QSL, 3, 12, 2, "query_start_loc");
  add_v("query_start_loc[0] = -1", P, IX_QSL, 0, -1, 2, "query_start_loc");
  add_attr("max_query_len 4 < longest 5", P, A_MQL, 4, 2, VA,
           "max_query_len|query_start_loc");
  add_attr("3-D: max_query_len 1 < S = 2", D, A_MQL, 1, 3, AT | SH | VA,
           "max_query_len|x");
  add_v("cache_indices[1] = num_lines", P, IX_CI, 1, 8, 2, "cache_indices");
  add_v("cache_indices[2] = -2 (pad -1)", P, IX_CI, 2, -2, 2, "cache_indices");
  with_set(add_attr("cache_indices[0] = -1 with pad_slot_id -7", P, A_PAD, -7, 2, VA,
                    "cache_indices"),
           IX_CI, 0, -1);
  add_v("3-D: cache_indices[0] = num_lines", D, IX_CI, 0, 5, 2, "cache_indices");
  add_v("num_computed_tokens[1] = -1", P, IX_NCT, 1, -1, 2, "num_computed_tokens");
  add_v("num_accepted_tokens[0] = C-K+3 (nct 3)", P, IX_NACC, 0, 3, 2,
        "num_accepted_tokens");
  add_v("3-D: num_accepted_tokens[1] = C-K+3 (no nct)", D, IX_NACC, 1, 3, 2,
        "num_accepted_tokens");
  add_v("cache_indices[2] = cache_indices[0] (written twice)", P, IX_CI, 2, 2, 2,
        "cache_indices");
  add_v("3-D: cache_indices[2] = cache_indices[0] (written twice)", D, IX_CI, 2, 4, 2,
        "cache_indices");
  add_v("apc: W of seq 1 = num_lines", A, IX_CI, 6, 8, 2, "cache_indices");
  with_set(add_v("apc: R of seq 1 (init 0 < first) = -9", A, IX_INIT, 1, 0, 2,
                 "cache_indices"),
           IX_CI, 4, -9);
  with_set(with_set(add_v("apc: fill line of seq 1 = 100", A, IX_INIT, 1, 0, 2,
                          "cache_indices"),
                    IX_CI, 4, 3),
           IX_CI, 5, 100);
  add_v("apc: block_idx_first_scheduled_token[0] = -1", A, IX_FIRST, 0, -1, 2,
        "block_idx_first_scheduled_token");
  add_v("apc: block_idx_last_scheduled_token[1] = max_blocks", A, IX_LAST, 1, 4, 2,
        "block_idx_last_scheduled_token");
  add_v("apc: initial_state_idx[0] = -1", A, IX_INIT, 0, -1, 2, "initial_state_idx");
  add_v("apc: initial_state_idx[1] = max_blocks", A, IX_INIT, 1, 4, 2,
        "initial_state_idx");
  add_v("apc: initial_state_idx[0] = 2 > last 1", A, IX_INIT, 0, 2, 2,
        "initial_state_idx");
  add_v("apc: block_idx_first_scheduled_token[1] = 3 > last 2", A, IX_FIRST, 1, 3, 2,
        "block_idx_first_scheduled_token|block_idx_last_scheduled_token");
  with_set(with_set(add_v("apc: fill boundary before the history (first 0 for seq 1)", A,
                          IX_FIRST, 1, 0, 2,
                          "block_idx_first_scheduled_token|num_computed_tokens|boundary"),
                    IX_INIT, 1, 0),
           IX_CI, 4, 3);
  add_v("apc: num_computed_tokens[0] = -1", A, IX_NCT, 0, -1, 2, "num_computed_tokens");
  add_v("apc: fill line of seq 1 = its W", A, IX_CI, 5, 5, 2, "cache_indices");
  add_v("apc: W of seq 1 = W of seq 0", A, IX_CI, 6, 2, 2, "cache_indices");
  with_set(add_v("apc: seq 1 reads the line seq 0 writes", A, IX_INIT, 1, 0, 2,
                 "cache_indices"),
           IX_CI, 4, 2);
  with_set(add_v("apc: seq 0 reads the line seq 1 writes", A, IX_FIRST, 0, 1, 2,
                 "cache_indices"),
           IX_CI, 0, 5);
  with_set(with_set(add_v("apc: fill line of seq 1 = fill line of seq 0", A, IX_INIT, 1,
                          0, 2, "cache_indices"),
                    IX_CI, 4, 3),
           IX_CI, 5, 1);

  /* ---- valid variants (must succeed and match the reference) */
  add_v("cache_indices[1] = pad (sequence skipped)", P, IX_CI, 1, -1, 0, NULL);
  with_set(add_v("cache_indices[0] = [1] = pad", P, IX_CI, 0, -1, 0, NULL), IX_CI, 1, -1);
  with_set(add_attr("pad_slot_id 7 = a line index, cache_indices[0] = 7", P, A_PAD, 7, 0,
                    0, NULL),
           IX_CI, 0, 7);
  with_set(add_attr("pad_slot_id 100, cache_indices[2] = 100", P, A_PAD, 100, 0, 0, NULL),
           IX_CI, 2, 100);
  add_attr("max_query_len 5 = longest", P, A_MQL, 5, 0, 0, NULL);
  add_attr("block_size 16 without APC", P, A_BS, 16, 0, 0, NULL);
  add_v("num_accepted_tokens[0] = -5", P, IX_NACC, 0, -5, 0, NULL);
  add_v("num_accepted_tokens[0] = C-K+2", P, IX_NACC, 0, 2, 0, NULL);
  add_d("num_computed_tokens absent", P, TH_D_NULL, NC, 0, 0, 0)->phase = 0;
  add_d("num_accepted_tokens absent", P, TH_D_NULL, NA, 0, 0, 0)->phase = 0;
  add_d("cache_indices absent", P, TH_D_NULL, CI, 0, 0, 0)->phase = 0;
  add_d("bias absent", P, TH_D_NULL, B_BIAS, 0, 0, 0)->phase = 0;
  add_attr("silu", P, A_ACT, LLMK_ACTIVATION_SILU, 0, 0, NULL);
  add_attr("conv_mode 1", P, A_CM, 1, 0, 0, NULL);
  add_attr("residual off", P, A_RES, 0, 0, 0, NULL);
  add_v("apc: W of seq 1 = pad (R = 4)", A, IX_CI, 6, -1, 0, NULL);
  with_set(with_set(add_v("apc: fill line of seq 1 = pad", A, IX_INIT, 1, 0, 0, NULL),
                    IX_CI, 4, 3),
           IX_CI, 5, -1);
  with_set(with_set(with_set(add_v("apc: seqs 0 and 1 both read line 3", A, IX_FIRST, 0,
                                   1, 0, NULL),
                             IX_CI, 0, 3),
                    IX_INIT, 1, 0),
           IX_CI, 4, 3);
  add_v("apc: R of seq 0 = pad (skipped)", A, IX_CI, 0, -1, 0, NULL);
  add_v("apc: seq 1 R = W (init = last)", A, IX_INIT, 1, 2, 0, NULL);
  add_attr("apc: conv_mode 1", A, A_CM, 1, 0, 0, NULL);
  add_attr("apc: silu", A, A_ACT, LLMK_ACTIVATION_SILU, 0, 0, NULL);
  add_v("3-D: cache_indices[1] = pad", D, IX_CI, 1, -1, 0, NULL);
  add_d("3-D: cache_indices absent", D, TH_D_NULL, CI, 0, 0, 0)->phase = 0;
  add_attr("3-D: max_query_len 2 = S", D, A_MQL, 2, 0, 0, NULL);
}

static void run_row(const err_row *r, int idx) {
  cc_case c;
  base_case(&c, r->base);
  for (int i = 0; i < r->nset; i++) c.iv[r->set[i][0]][r->set[i][1]] = r->set[i][2];
  switch (r->attr) {
    case A_PAD:
      c.pad = r->attr_val;
      break;
    case A_MQL:
      c.mql = r->attr_val;
      break;
    case A_RES:
      c.residual = r->attr_val;
      break;
    case A_BS:
      c.block_size = r->attr_val;
      break;
    case A_CM:
      c.conv_mode = r->attr_val;
      break;
    case A_ACT:
      c.act = (llmk_activation)r->attr_val;
      break;
    default:
      break;
  }
  if (r->defect == TH_D_NULL && r->phase == 0) { /* a valid call without that tensor */
    if (r->a1 == B_BIAS)
      c.has_bias = 0;
    else
      c.has[r->a1 - B_IX0] = 0;
  }
  char label[160];
  snprintf(label, sizeof label, "error row %d '%s'", idx, r->name);

  if (r->phase == 0 || r->phase == 2) {
    tset P;
    tset_build(&P, &c, 500 + (uint64_t)idx);
    ref_out ro;
    ref_run(&c, &P, &ro);
    if (r->phase == 0)
      TU_CHECK(ro.rc == 0, "%s: the reference rejects it (rule %d)", label, ro.rc);
    else
      TU_CHECK(ro.rc != 0, "%s: the reference accepts it", label);
    ref_free(&ro);
    tset_free(&P);
    run_case(&c, 500 + (uint64_t)idx, label, NULL, r->phase == 0, r->msg);
    case_free(&c);
    return;
  }

  /* phase 1 (or either phase) */
  tset P, S;
  tset_build(&P, &c, 500 + (uint64_t)idx);
  tset_copy(&S, &P);
  call_args ca;
  call_default(&ca, &S, &c);
  llmk_tensor extra;
  static int32_t extra_vals[8] = {0, 2, 4, 6, 0, 0, 0, 0};
  llmk_tensor *t = r->a1 >= 0 && r->a1 < NB ? &S.t[r->a1] : NULL;
  if (r->defect < TH_D_OP && !th_defect_apply(t, r->defect, r->a2, r->a3))
    ca.p[r->a1] = NULL;
  switch (r->defect) {
    case D_NULL_WS:
      ca.null_ws = 1;
      break;
    case D_NULL_PLAN:
      ca.null_plan = 1;
      break;
    case D_EXTRA_QSL: {
      int64_t shape[1] = {c.batch + 1};
      llmk_tensor_init(&extra, LLMK_I32, 1, shape, NULL, extra_vals);
      ca.p[B_IX0 + IX_QSL] = &extra;
      break;
    }
    case D_EXTRA_FIRST: {
      int64_t shape[1] = {c.batch};
      llmk_tensor_init(&extra, LLMK_I32, 1, shape, NULL, extra_vals + 4);
      ca.p[B_IX0 + IX_FIRST] = &extra;
      break;
    }
    default:
      break;
  }
  static int sentinel;
  size_t ws = 12345;
  llmk_plan *plan = (llmk_plan *)(void *)&sentinel;
  th_reset_error();
  llmk_status st = call_p1(&ca, &ws, &plan);
  if (r->phase == 3 && st == LLMK_SUCCESS) {
    /* phase 1 accepted it: phase 2 must reject it */
    TU_CHECK(plan && plan != (llmk_plan *)(void *)&sentinel, "%s: no plan", label);
    th_reset_error();
    st = run_plan(plan, ws, NULL);
    TU_CHECK(st == LLMK_ERROR_INVALID_VALUE, "%s: phase 2 status %d, expected %d (%s)",
             label, (int)st, (int)LLMK_ERROR_INVALID_VALUE, llmk_last_error());
    if (st != LLMK_SUCCESS)
      TU_CHECK(msg_ok(r->msg), "%s: message '%s' should name %s", label,
               llmk_last_error(), r->msg ? r->msg : "the op");
  } else {
    TU_CHECK(st != LLMK_SUCCESS && (r->mask & ST(st)),
             "%s: phase 1 status %d (%s), mask 0x%x", label, (int)st,
             st ? llmk_last_error() : "", r->mask);
    if (st == LLMK_SUCCESS) {
      if (plan && plan != (llmk_plan *)(void *)&sentinel) llmk_plan_destroy(plan);
    } else {
      if (!ca.null_plan)
        TU_CHECK(plan == NULL, "%s: plan not set to NULL on a phase-1 failure", label);
      if (!ca.null_ws)
        TU_CHECK(ws == 0, "%s: workspace_size %zu on a phase-1 failure", label, ws);
      TU_CHECK(msg_ok(NULL), "%s: message '%s'", label, llmk_last_error());
    }
  }
  tset_same(&S, &P, &c, label);
  tset_free(&S);
  tset_free(&P);
  case_free(&c);
}

static void test_errors(void) {
  build_rows();
  for (int i = 0; i < rows.n; i++) run_row((const err_row *)(void *)rows.rows + i, i);
  printf("error table: %d rows\n", rows.n);
  th_table_free(&rows);
}

/* --------------------------------------------------------------- lifecycle */

static void test_lifecycle(void) {
  cc_case c;
  base_case(&c, BASE_PLAIN);
  /* repeatable: two runs = two reference steps, on NULL ctx and 2 threads */
  for (int t = 0; t <= 2; t += 2) {
    tset S, E;
    tset_build(&S, &c, 900);
    tset_copy(&E, &S);
    ref_out r1, r2;
    ref_run(&c, &E, &r1);
    ref_run(&c, &E, &r2);
    TU_CHECK(r1.rc == 0 && r2.rc == 0, "lifecycle: reference rejects the base");
    call_args ca;
    call_default(&ca, &S, &c);
    size_t ws = 0;
    llmk_plan *plan = NULL;
    TU_CHECK(call_p1(&ca, &ws, &plan) == LLMK_SUCCESS, "lifecycle: phase 1 (%s)",
             llmk_last_error());
    TU_CHECK(llmk_plan_set_repeatable(plan) == LLMK_SUCCESS, "lifecycle: set_repeatable");
    for (int run = 0; run < 2; run++)
      TU_CHECK(run_plan(plan, ws, g_sw.ctx[t]) == LLMK_SUCCESS,
               "lifecycle: repeatable run %d (%s)", run, llmk_last_error());
    tset_same(&S, &E, &c,
              t ? "repeatable plan run twice (2 threads)" : "repeatable plan run twice");
    TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS,
             "lifecycle: destroy repeatable plan");
    ref_free(&r1);
    ref_free(&r2);
    tset_free(&S);
    tset_free(&E);
  }
  /* consumed plan run again */
  {
    tset S, E;
    tset_build(&S, &c, 901);
    tset_copy(&E, &S);
    ref_out r1;
    ref_run(&c, &E, &r1);
    call_args ca;
    call_default(&ca, &S, &c);
    size_t ws = 0;
    llmk_plan *plan = NULL;
    TU_CHECK(call_p1(&ca, &ws, &plan) == LLMK_SUCCESS, "lifecycle: phase 1");
    TU_CHECK(run_plan(plan, ws, NULL) == LLMK_SUCCESS, "lifecycle: first run");
    llmk_status st = run_plan(plan, ws, NULL);
    TU_CHECK(st == LLMK_ERROR_INVALID_PLAN, "lifecycle: consumed plan run again: %d",
             (int)st);
    tset_same(&S, &E, &c, "consumed plan run again");
    ref_free(&r1);
    tset_free(&S);
    tset_free(&E);
  }
  /* destroyed without running; too small and NULL workspaces */
  {
    tset S, P;
    tset_build(&S, &c, 902);
    tset_copy(&P, &S);
    call_args ca;
    call_default(&ca, &S, &c);
    size_t ws = 0;
    llmk_plan *plan = NULL;
    TU_CHECK(call_p1(&ca, &ws, &plan) == LLMK_SUCCESS, "lifecycle: phase 1");
    TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS, "lifecycle: destroy unrun plan");
    TU_CHECK(call_p1(&ca, &ws, &plan) == LLMK_SUCCESS, "lifecycle: phase 1");
    if (ws == 0) {
      printf("workspace size is 0: WORKSPACE_TOO_SMALL case skipped\n");
      TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS, "lifecycle: destroy");
    } else {
      void *w = malloc(ws);
      llmk_status st = llmk_fused_causal_conv1d(w, ws - 1, plan, NULL);
      TU_CHECK(st == LLMK_ERROR_WORKSPACE_TOO_SMALL,
               "lifecycle: workspace %zu of %zu: %d", ws - 1, ws, (int)st);
      TU_CHECK(call_p1(&ca, &ws, &plan) == LLMK_SUCCESS, "lifecycle: phase 1");
      st = llmk_fused_causal_conv1d(NULL, ws, plan, NULL);
      TU_CHECK(st == LLMK_ERROR_NULL_POINTER, "lifecycle: NULL workspace of %zu: %d", ws,
               (int)st);
      free(w);
    }
    tset_same(&S, &P, &c, "workspace too small / NULL");
    tset_free(&S);
    tset_free(&P);
  }
  TU_CHECK(llmk_fused_causal_conv1d(NULL, 0, NULL, NULL) == LLMK_ERROR_INVALID_PLAN,
           "NULL plan");
  case_free(&c);
}

/* ------------------------------------------------------------ random cases */

static void test_random(void) {
  static const llmk_dtype dts[3] = {LLMK_F32, LLMK_F16, LLMK_BF16};
  uint64_t seed = 1000;
  char tag[80];
  /* every scenario x dtype x K */
  for (int sc = 0; sc < SC_COUNT; sc++)
    for (int di = 0; di < 3; di++)
      for (int K = 2; K <= 4; K++)
        for (int rep = 0; rep < 4; rep++) {
          gen_opts o = opts(sc);
          o.xdt = dts[di];
          o.K = K;
          snprintf(tag, sizeof tag, "random %s", sc_name[sc]);
          gen_and_run(&o, tag, seed++);
        }
  /* decode fixed batch: every m in 0..7 */
  for (int m = 0; m <= 7; m++) {
    gen_opts o = opts(SC_DEC_FIX);
    o.m = m;
    o.defect = 0;
    gen_and_run(&o, "decode-fixed m", seed++);
  }
  /* MTP: num_accepted_tokens from -2 to m+1 for every sequence */
  for (int sc = SC_DEC_VAR; sc <= SC_DEC_FIX; sc++)
    for (int m = 3; m <= 7; m += 4)
      for (int64_t na = -2; na <= m + 1; na++) {
        gen_opts o = opts(sc);
        o.m = m;
        o.nacc_all = na;
        o.defect = 0;
        gen_and_run(&o, "MTP nacc", seed++);
      }
  /* conv_mode 1 with nct 0, 1, 2, 5 */
  static const int64_t nct_cm[4] = {0, 1, 2, 5};
  for (int i = 0; i < 4; i++)
    for (int K = 2; K <= 4; K++)
      for (int res = 0; res <= 1; res++) {
        gen_opts o = opts(i % 2 ? SC_PREFILL : SC_DEC_VAR);
        o.conv_mode = 1;
        o.nct_all = nct_cm[i];
        o.K = K;
        o.residual = res;
        o.defect = 0;
        gen_and_run(&o, "conv_mode 1", seed++);
      }
  /* silu x residual x bias, each scenario */
  for (int sc = 0; sc < SC_COUNT; sc++)
    for (int f = 0; f < 8; f++) {
      gen_opts o = opts(sc);
      o.act = f & 1;
      o.residual = (f >> 1) & 1;
      o.bias = (f >> 2) & 1;
      o.defect = 0;
      gen_and_run(&o, "flags", seed++);
    }
  /* pad sequences at the start and the end; strided layouts; contiguous layouts */
  for (int sc = 0; sc < SC_COUNT; sc++)
    for (int v = 0; v < 4; v++) {
      gen_opts o = opts(sc);
      o.defect = 0;
      if (v == 0) {
        o.pad_first = 1;
        o.pad_last = 0;
      }
      if (v == 1) {
        o.pad_first = 0;
        o.pad_last = 1;
      }
      if (v == 2) {
        o.pad_first = 1;
        o.pad_last = 1;
        o.batch = 3;
      }
      o.strided = v == 3 ? 0 : 1;
      gen_and_run(&o, v < 3 ? "pad sequences" : "contiguous", seed++);
    }
  /* APC: chosen block sizes, nct and lengths */
  {
    static const int64_t apc_cases[][3] = {
        /* B, nct, L */
        {4, 1, 2},  {4, 2, 2},  {4, 0, 3},    {4, 2, 4},   {4, 3, 1},  {4, 3, 2},
        {4, 3, 3},  {4, 4, 4},  {4, 4, 5},    {4, 3, 13},  {4, 2, 9},  {4, 0, 4},
        {4, 0, 8},  {4, 8, 9},  {2, 1, 7},    {2, 0, 5},   {3, 5, 10}, {3, 1, 2},
        {5, 4, 12}, {8, 7, 20}, {16, 15, 40}, {16, 0, 16}, {2, 3, 1},  {3, 2, 1}};
    for (size_t i = 0; i < sizeof apc_cases / sizeof apc_cases[0]; i++)
      for (int init = 0; init < 4; init++) {
        gen_opts o = opts(SC_APC);
        o.B = apc_cases[i][0];
        o.apc_nct = apc_cases[i][1];
        o.apc_L = apc_cases[i][2];
        o.apc_init = init;
        o.x3d = 0;
        o.defect = 0;
        o.K = (int)(2 + (i + (size_t)init) % 3);
        gen_and_run(&o, "apc chosen", seed++);
      }
    for (int i = 0; i < 12; i++) {
      gen_opts o = opts(SC_APC);
      o.apc_first_dec = 1;
      o.defect = 0;
      gen_and_run(&o, "apc first below natural", seed++);
    }
  }
  /* a few big channel counts */
  for (int sc = 0; sc < SC_COUNT; sc++) {
    gen_opts o = opts(sc);
    o.dim = sc == SC_APC ? 2048 : (sc % 2 ? 2048 : 2047);
    o.defect = 0;
    gen_and_run(&o, "big dim", seed++);
  }
  /* threads: long sequences (several 16-token tiles), channel counts that are not a
   * multiple of 16 or 64, big enough to be split; the 2-thread run repeated */
  g_repeat_2t = 4;
  for (int i = 0; i < 16; i++) {
    static const int64_t tdims[4] = {257, 100, 201, 1023};
    gen_opts o = opts(i % 4 == 3 ? SC_MIXED : SC_PREFILL);
    o.dim = tdims[i % 4];
    o.K = 2 + i % 3;
    o.maxL = 60;
    o.batch = 2 + i % 3;
    o.defect = 0;
    gen_and_run(&o, "threads", seed++);
  }
  g_repeat_2t = 1;
  /* random value defects */
  for (int i = 0; i < 30; i++) {
    gen_opts o = opts((int)(i % SC_COUNT));
    o.defect = 1;
    gen_and_run(&o, "value defect", seed++);
  }
  printf("random cases: %ld (%ld rejected by the reference), %ld library runs\n", g_cases,
         g_cases_err, g_runs);
  printf("apc coverage:");
  for (int k = 0; k < CV_COUNT; k++) {
    printf(" [%s: %ld]", cv_name[k], g_cov[k]);
    TU_CHECK(g_cov[k] > 0, "apc coverage: no case with %s", cv_name[k]);
  }
  printf("\n");
}

/* ------------------------------------------------------------ regressions */

/* Hand-built calls at the edges: empty x of every kind, workspace sizes that wrap, APC
 * block arithmetic near INT64_MAX. Each must answer at once. */

static void reg_desc(llmk_tensor *t, llmk_dtype dt, int rank, const int64_t *shape,
                     const int64_t *strides, void *data) {
  if (llmk_tensor_init(t, dt, rank, shape, strides, data) != LLMK_SUCCESS)
    th_die("llmk_tensor_init rejected a regression layout");
}

typedef struct reg_call {
  const llmk_tensor *x, *w, *cs, *qsl, *ci, *nct, *first, *last, *init;
  int64_t block_size;
} reg_call;

static llmk_status reg_p1(const char *label, const reg_call *c, size_t *ws,
                          llmk_plan **plan) {
  double t0 = tu_now();
  th_reset_error();
  llmk_status st = llmk_fused_causal_conv1d_get_workspace_size(
      c->x, c->w, c->cs, c->qsl, c->ci, NULL, c->nct, c->first, c->last, c->init, NULL,
      -1, -1, 0, c->block_size, 0, LLMK_ACTIVATION_NONE, ws, plan);
  double dt = tu_now() - t0;
  TU_CHECK(dt < 1.0, "%s: phase 1 took %.2f s", label, dt);
  return st;
}

/* Phase 1 then phase 2 with exactly the workspace asked for; returns phase 2's status
 * (phase 1's if it refused) and checks both took less than a second. */
static llmk_status reg_run(const char *label, const reg_call *c) {
  size_t ws = 1;
  llmk_plan *plan = NULL;
  llmk_status st = reg_p1(label, c, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS, "%s: phase 1 %d ('%s')", label, (int)st,
           llmk_last_error());
  if (st != LLMK_SUCCESS) return st;
  double t0 = tu_now();
  th_reset_error();
  st = th_run_plan(llmk_fused_causal_conv1d, plan, ws, NULL);
  TU_CHECK(tu_now() - t0 < 1.0, "%s: phase 2 took %.2f s", label, tu_now() - t0);
  return st;
}

/* Finding 7: a 3-D x [batch, 0, dim] took the 2-D path and read query_start_loc (NULL).
 */
static void test_reg_3d_no_tokens(void) {
  const char *label = "3-D x [2, 0, 16]";
  th_tensor w, cs;
  llmk_tensor x;
  th_tensor_make(&w, LLMK_F16, 2, (int64_t[]){3, 16}, NULL);
  th_tensor_make(&cs, LLMK_F16, 3, (int64_t[]){2, 2, 16}, NULL);
  th_fill_pattern(cs.t.data, cs.buf.size, 7);
  tu_buf before;
  th_buf_clone(&before, &cs.buf);
  reg_desc(&x, LLMK_F16, 3, (int64_t[]){2, 0, 16}, (int64_t[]){16, 16, 1}, NULL);
  reg_call c = {.x = &x, .w = &w.t, .cs = &cs.t};
  llmk_status st = reg_run(label, &c);
  TU_CHECK(st == LLMK_SUCCESS, "%s: phase 2 %d ('%s')", label, (int)st,
           llmk_last_error());
  TU_CHECK(th_buf_same(&cs.buf, &before), "%s: conv_states changed", label);
  tu_buf_free(&before);
  th_tensor_free(&w);
  th_tensor_free(&cs);
}

/* Finding 9: x [2^62, 1, 0]: batch * sizeof(seq_info) wrapped to a small workspace that
 * phase 2 then cleared past its end. */
static void test_reg_empty_huge_batch(void) {
  const int64_t one[3] = {1, 1, 1};
  llmk_tensor x, w, cs;
  reg_desc(&x, LLMK_F16, 3, (int64_t[]){INT64_C(1) << 62, 1, 0}, one, NULL);
  reg_desc(&w, LLMK_F16, 2, (int64_t[]){3, 0}, one, NULL);
  reg_desc(&cs, LLMK_F16, 3, (int64_t[]){1, 2, 0}, one, NULL);
  reg_call c = {.x = &x, .w = &w, .cs = &cs};
  llmk_status st = reg_run("x [2^62, 1, 0]", &c);
  TU_CHECK(st == LLMK_SUCCESS, "x [2^62, 1, 0]: phase 2 %d ('%s')", (int)st,
           llmk_last_error());
  /* dim 0 with a stride only an empty x allows: the row-overlap rule is not computed */
  reg_desc(&x, LLMK_F16, 3, (int64_t[]){2, 4, 0}, (int64_t[]){1, INT64_MAX, 1}, NULL);
  st = reg_run("x [2, 4, 0], strides[1] INT64_MAX", &c);
  TU_CHECK(st == LLMK_SUCCESS, "x [2, 4, 0], strides[1] INT64_MAX: %d ('%s')", (int)st,
           llmk_last_error());
}

/* Class (b): workspace terms that overflow size_t are refused in phase 1 (before, they
 * wrapped to a workspace too small for phase 2). Phase 1 reads no data. */
static void test_reg_workspace_overflow(void) {
  static uint16_t dummy[4];
  const int64_t one[3] = {1, 1, 1};
  llmk_tensor x, w, cs;
  size_t ws = 1;
  llmk_plan *plan = NULL;
  /* batch 2^61 of one token, dim 1: 2^61 per-sequence entries */
  reg_desc(&x, LLMK_F16, 3, (int64_t[]){INT64_C(1) << 61, 1, 1}, one, dummy);
  reg_desc(&w, LLMK_F16, 2, (int64_t[]){2, 1}, one, dummy);
  reg_desc(&cs, LLMK_F16, 3, (int64_t[]){1, 1, 1}, one, dummy);
  reg_call c = {.x = &x, .w = &w, .cs = &cs};
  llmk_status st = reg_p1("batch 2^61", &c, &ws, &plan);
  th_check_refused("batch 2^61", st, LLMK_ERROR_INVALID_SHAPE, &plan, &ws,
                   "fused_causal_conv1d", "batch");
  if (st == LLMK_SUCCESS) llmk_plan_destroy(plan);
  /* dim 2^61-1 with an f16 weight: its f32 copy, K*dim*4 bytes, is about 2^64 */
  const int64_t dim = (INT64_C(1) << 61) - 1;
  reg_desc(&x, LLMK_F16, 2, (int64_t[]){1, dim}, one, dummy);
  reg_desc(&w, LLMK_F16, 2, (int64_t[]){2, dim}, (int64_t[]){dim, 1}, dummy);
  reg_desc(&cs, LLMK_F16, 3, (int64_t[]){1, 1, dim}, (int64_t[]){dim, dim, 1}, dummy);
  int64_t qsl[2] = {0, 1};
  llmk_tensor q;
  reg_desc(&q, LLMK_I64, 1, (int64_t[]){2}, one, qsl);
  c = (reg_call){.x = &x, .w = &w, .cs = &cs, .qsl = &q};
  st = reg_p1("dim 2^61-1", &c, &ws, &plan);
  th_check_refused("dim 2^61-1", st, LLMK_ERROR_INVALID_SHAPE, &plan, &ws,
                   "fused_causal_conv1d", "dim");
  if (st == LLMK_SUCCESS) llmk_plan_destroy(plan);
}

/* Class (b): APC with block_size 2^62 and 3 blocks to fill: (n-1) * block_size
 * overflowed int64 in the boundary check; it is a boundary before the history. */
static void test_reg_apc_block_overflow(void) {
  const char *label = "APC block_size 2^62";
  th_tensor x, w, cs;
  th_tensor_make(&x, LLMK_F16, 2, (int64_t[]){4, 16}, NULL);
  th_tensor_make(&w, LLMK_F16, 2, (int64_t[]){3, 16}, NULL);
  th_tensor_make(&cs, LLMK_F16, 3, (int64_t[]){4, 2, 16}, NULL);
  int64_t qsl[2] = {0, 4}, ci[4] = {0, 1, 2, 3}, nct = 0, first = 0, last = 3, init = 0;
  const int64_t one[2] = {4, 1};
  llmk_tensor q, cit, nt, ft, lt, it;
  reg_desc(&q, LLMK_I64, 1, (int64_t[]){2}, one + 1, qsl);
  reg_desc(&cit, LLMK_I64, 2, (int64_t[]){1, 4}, one, ci);
  reg_desc(&nt, LLMK_I64, 1, (int64_t[]){1}, one + 1, &nct);
  reg_desc(&ft, LLMK_I64, 1, (int64_t[]){1}, one + 1, &first);
  reg_desc(&lt, LLMK_I64, 1, (int64_t[]){1}, one + 1, &last);
  reg_desc(&it, LLMK_I64, 1, (int64_t[]){1}, one + 1, &init);
  th_snap snap = {0};
  th_snap_add(&snap, &x.buf, "x");
  th_snap_add(&snap, &cs.buf, "conv_states");
  reg_call c = {.x = &x.t,
                .w = &w.t,
                .cs = &cs.t,
                .qsl = &q,
                .ci = &cit,
                .nct = &nt,
                .first = &ft,
                .last = &lt,
                .init = &it,
                .block_size = INT64_C(1) << 62};
  llmk_status st = reg_run(label, &c);
  TU_CHECK(st == LLMK_ERROR_INVALID_VALUE &&
               th_msg_ok("fused_causal_conv1d", "boundaries", NULL),
           "%s: phase 2 %d ('%s')", label, (int)st, llmk_last_error());
  th_snap_unchanged(&snap, label);
  th_snap_free(&snap);
  th_tensor_free(&x);
  th_tensor_free(&w);
  th_tensor_free(&cs);
}

/* ------------------------------------------------ separate output (y) */

static llmk_status call_out(const call_args *a, const llmk_tensor *y, size_t *ws,
                            llmk_plan **plan) {
  return llmk_fused_causal_conv1d_out_get_workspace_size(
      a->p[B_X], a->p[B_W], a->p[B_CS], a->p[B_IX0 + IX_QSL], a->p[B_IX0 + IX_CI],
      a->p[B_IX0 + IX_NACC], a->p[B_IX0 + IX_NCT], a->p[B_IX0 + IX_FIRST],
      a->p[B_IX0 + IX_LAST], a->p[B_IX0 + IX_INIT], a->p[B_BIAS], a->pad, a->mql,
      a->residual, a->block_size, a->conv_mode, a->act, y, ws, plan);
}

/* y: x's dtype and shape in a buffer of its own, rows gap elements apart (3-D: and
 * sequences bgap further), every byte 0x5a. */
static void y_build(tu_buf *b, llmk_tensor *y, const cc_case *c, int64_t gap,
                    int64_t bgap) {
  tdesc d;
  case_desc(c, B_X, &d);
  int64_t row = c->dim + gap;
  if (c->x3d) {
    d.strides[1] = row;
    d.strides[0] = c->S * row + bgap;
  } else {
    d.strides[0] = row;
  }
  *b = tu_buf_alloc(th_span_bytes(d.dt, d.rank, d.shape, d.strides));
  memset(b->data, 0x5a, b->size);
  memset(y, 0, sizeof *y);
  y->dtype = d.dt;
  y->rank = d.rank;
  for (int i = 0; i < d.rank; i++) {
    y->shape[i] = d.shape[i];
    y->strides[i] = d.strides[i];
  }
  y->data = b->data;
}

/* One case run in place (A) and into a separate y (B): B's x and every other input
 * keep their bytes, its conv_states get A's, y's elements A's x elements, and y's
 * gaps and guards stay 0x5a; a call A refuses is refused alike, nothing written. */
static long g_sep_cases, g_sep_err;

static void sep_case(const cc_case *c, uint64_t seed, const char *label,
                     llmk_context *ctx, int64_t gap, int64_t bgap) {
  tset P, A, B;
  tset_build(&P, c, seed);
  tset_copy(&A, &P);
  tset_copy(&B, &P);
  call_args ca, cb;
  call_default(&ca, &A, c);
  call_default(&cb, &B, c);
  size_t wa = 0, wb = 0;
  llmk_plan *pa = NULL, *pb = NULL;
  llmk_status sa = call_p1(&ca, &wa, &pa), sb;
  TU_CHECK(sa == LLMK_SUCCESS, "%s: in-place phase 1 %d (%s)", label, (int)sa,
           llmk_last_error());
  sa = run_plan(pa, wa, ctx);
  tu_buf yb;
  llmk_tensor y;
  y_build(&yb, &y, c, gap, bgap);
  tu_buf yexp;
  th_buf_clone(&yexp, &yb);
  sb = call_out(&cb, &y, &wb, &pb);
  TU_CHECK(sb == LLMK_SUCCESS && wb == wa, "%s: y phase 1 %d (%s), workspace %zu vs %zu",
           label, (int)sb, llmk_last_error(), wb, wa);
  TU_CHECK(th_buf_same(&yb, &yexp) && tset_same(&B, &P, c, label),
           "%s: phase 1 with y wrote data", label);
  sb = run_plan(pb, wb, ctx);
  TU_CHECK(sb == sa, "%s: status with y %d, in place %d", label, (int)sb, (int)sa);
  g_sep_cases++;
  if (sa == LLMK_SUCCESS) {
    /* a skipped sequence (cache line pad_slot_id) writes nothing, y included */
    tset R;
    tset_copy(&R, &P);
    ref_out ro;
    ref_run(c, &R, &ro);
    tdesc xd;
    case_desc(c, B_X, &xd);
    size_t es = th_dtype_size(c->xdt);
    int64_t n = th_numel(xd.rank, xd.shape), b = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t tok = i / c->dim;
      if (c->x3d)
        b = tok / c->S;
      else
        while (b + 1 < c->batch && tok >= c->iv[IX_QSL][b + 1]) b++;
      if (ro.skipped && ro.skipped[b]) continue;
      ref_store_bits(
          yexp.data, th_row_major_offset(y.rank, y.shape, y.strides, i), es,
          ref_load_bits(A.buf[B_X].data,
                        th_row_major_offset(xd.rank, xd.shape, xd.strides, i), es));
    }
    ref_free(&ro);
    tset_free(&R);
    /* B: x untouched, conv_states as in place */
    tset E;
    tset_copy(&E, &P);
    tu_buf_free(&E.buf[B_CS]);
    th_buf_clone(&E.buf[B_CS], &A.buf[B_CS]);
    tset_same(&B, &E, c, label);
    tset_free(&E);
  } else {
    g_sep_err++;
    tset_same(&B, &P, c, label);
  }
  TU_CHECK(tu_buf_check(&yb) && th_buf_same(&yb, &yexp),
           "%s: y's elements differ from the in-place x, or its gaps were written",
           label);
  llmk_plan_destroy(pa);
  llmk_plan_destroy(pb);
  tu_buf_free(&yb);
  tu_buf_free(&yexp);
  tset_free(&P);
  tset_free(&A);
  tset_free(&B);
}

static void test_separate_output(void) {
  static const llmk_dtype dts[3] = {LLMK_F32, LLMK_F16, LLMK_BF16};
  uint64_t seed = 70000;
  for (int sc = 0; sc < SC_COUNT; sc++)
    for (int di = 0; di < 3; di++)
      for (int rep = 0; rep < 4; rep++, seed++) {
        gen_opts o = opts(sc);
        o.xdt = dts[di];
        cc_case c;
        char desc[400], label[512];
        gen_case(&c, &o, desc, sizeof desc);
        snprintf(label, sizeof label, "separate y %s #%" PRIu64 ": %s", sc_name[sc], seed,
                 desc);
        sep_case(&c, seed, label, rep % 2 ? g_sw.ctx[2] : NULL, rep % 3 == 1 ? 3 : 0,
                 rep % 2 ? 5 : 0);
        case_free(&c);
      }
  printf("separate y: %ld cases (%ld refused at phase 2 like in place)\n", g_sep_cases,
         g_sep_err);
}

/* y refused at phase 1: status, and nothing written anywhere. */
static void y_refused(const cc_case *c, const tset *P, const llmk_tensor *y,
                      const tu_buf *yb, llmk_status want, const char *what) {
  tset S;
  tset_copy(&S, P);
  tu_buf ycopy;
  int own = yb != NULL;
  if (own) th_buf_clone(&ycopy, yb);
  llmk_tensor yy = *y;
  /* a y into one of the set's buffers is moved into S's copy of that buffer */
  for (int k = 0; k < NB; k++)
    if (P->built[k] && (const char *)y->data >= (const char *)P->buf[k].data &&
        (const char *)y->data < (const char *)P->buf[k].data + P->buf[k].size)
      yy.data =
          (char *)S.buf[k].data + ((const char *)y->data - (const char *)P->buf[k].data);
  if (own)
    yy.data = (char *)ycopy.data + ((const char *)y->data - (const char *)yb->data);
  call_args a;
  call_default(&a, &S, c);
  size_t ws = 7;
  llmk_plan *plan = (llmk_plan *)&ws;
  llmk_status st = call_out(&a, &yy, &ws, &plan);
  char label[160];
  snprintf(label, sizeof label, "y %s", what);
  TU_CHECK(st == want && plan == NULL, "%s: status %d, expected %d (%s)", label, (int)st,
           (int)want, llmk_last_error());
  TU_CHECK(strstr(llmk_last_error(), "fused_causal_conv1d") != NULL,
           "%s: message '%s' should name the op", label, llmk_last_error());
  tset_same(&S, P, c, label);
  if (own) {
    TU_CHECK(th_buf_same(&ycopy, yb), "%s: y written", label);
    tu_buf_free(&ycopy);
  }
  tset_free(&S);
}

static void test_y_errors(void) {
  for (int x3 = 0; x3 < 2; x3++) {
    gen_opts o = opts(x3 ? SC_DEC_FIX : SC_PREFILL);
    o.xdt = LLMK_F16;
    o.defect = 0;
    o.strided = 0;
    o.bias = 1;
    o.batch = 3;
    o.m = 2;
    o.dim = 24;
    cc_case c;
    char desc[400];
    gen_case(&c, &o, desc, sizeof desc);
    tset P;
    tset_build(&P, &c, 90 + (uint64_t)x3);
    const llmk_tensor *x = &P.t[B_X];
    tu_buf yb;
    llmk_tensor y;
    y_build(&yb, &y, &c, 2, 1);
    /* y's own view of x: the in-place call */
    {
      tset A, B;
      tset_copy(&A, &P);
      tset_copy(&B, &P);
      call_args ca, cb;
      call_default(&ca, &A, &c);
      call_default(&cb, &B, &c);
      size_t wa, wb;
      llmk_plan *pa = NULL, *pb = NULL;
      llmk_tensor same = B.t[B_X];
      TU_CHECK(call_p1(&ca, &wa, &pa) == LLMK_SUCCESS &&
                   call_out(&cb, &same, &wb, &pb) == LLMK_SUCCESS,
               "y == x: phase 1 (%s)", llmk_last_error());
      TU_CHECK(run_plan(pa, wa, NULL) == LLMK_SUCCESS &&
                   run_plan(pb, wb, NULL) == LLMK_SUCCESS,
               "y == x: run (%s)", llmk_last_error());
      tset_same(&B, &A, &c, "y == x (in place)");
      llmk_plan_destroy(pa);
      llmk_plan_destroy(pb);
      tset_free(&A);
      tset_free(&B);
    }
    size_t es = th_dtype_size(c.xdt);
    int r = x->rank;
    llmk_tensor t;
    /* overlaps: x shifted by one channel and by one row, conv_states, weight, bias,
     * query_start_loc / cache_indices, itself */
    t = *x;
    t.data = (char *)x->data + es;
    y_refused(&c, &P, &t, NULL, LLMK_ERROR_OVERLAP, "= x one channel on");
    t = *x;
    t.data = (char *)x->data + (size_t)x->strides[r - 2] * es;
    y_refused(&c, &P, &t, NULL, LLMK_ERROR_OVERLAP, "= x one token on");
    const int over[] = {B_CS, B_W, B_BIAS, B_IX0 + IX_CI,
                        x3 ? B_IX0 + IX_NACC : B_IX0 + IX_QSL};
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
      if (!P.built[over[i]]) continue;
      t = y;
      t.data = P.buf[over[i]].data;
      char what[80];
      snprintf(what, sizeof what, "over %s", buf_name[over[i]]);
      y_refused(&c, &P, &t, NULL, LLMK_ERROR_OVERLAP, what);
    }
    t = y;
    t.strides[r - 2] = 0;
    y_refused(&c, &P, &t, &yb, LLMK_ERROR_OVERLAP, "with token stride 0 (itself)");
    /* dtype, rank, shape, last stride, data */
    t = y;
    t.dtype = LLMK_BF16;
    y_refused(&c, &P, &t, &yb, LLMK_ERROR_INVALID_DTYPE, "dtype bf16 beside f16 x");
    t = y;
    t.dtype = LLMK_I32;
    y_refused(&c, &P, &t, &yb, LLMK_ERROR_INVALID_DTYPE, "dtype i32");
    t = y;
    t.rank = x3 ? 2 : 3;
    if (!x3) {
      t.shape[2] = t.shape[1];
      t.shape[1] = t.shape[0];
      t.shape[0] = 1;
      t.strides[2] = 1;
      t.strides[1] = y.strides[0];
      t.strides[0] = y.strides[0] * y.shape[0];
    } else {
      t.shape[0] = y.shape[0] * y.shape[1];
      t.shape[1] = y.shape[2];
      t.strides[0] = y.strides[1];
      t.strides[1] = 1;
    }
    y_refused(&c, &P, &t, &yb, LLMK_ERROR_INVALID_SHAPE, "of another rank");
    for (int d = 0; d < r; d++) {
      t = y;
      t.shape[d] -= 1;
      char what[80];
      snprintf(what, sizeof what, "shape[%d] one short", d);
      y_refused(&c, &P, &t, &yb, LLMK_ERROR_INVALID_SHAPE, what);
    }
    t = y;
    t.strides[r - 1] = 2;
    y_refused(&c, &P, &t, &yb, LLMK_ERROR_INVALID_SHAPE, "last stride 2");
    t = y;
    t.data = NULL;
    y_refused(&c, &P, &t, NULL, LLMK_ERROR_NULL_POINTER, "data NULL");
    /* y NULL: in place (the old entry's bytes) */
    {
      tset A, B;
      tset_copy(&A, &P);
      tset_copy(&B, &P);
      call_args ca, cb;
      call_default(&ca, &A, &c);
      call_default(&cb, &B, &c);
      size_t wa, wb;
      llmk_plan *pa = NULL, *pb = NULL;
      TU_CHECK(call_p1(&ca, &wa, &pa) == LLMK_SUCCESS &&
                   call_out(&cb, NULL, &wb, &pb) == LLMK_SUCCESS &&
                   run_plan(pa, wa, NULL) == LLMK_SUCCESS &&
                   run_plan(pb, wb, NULL) == LLMK_SUCCESS,
               "y NULL: %s", llmk_last_error());
      tset_same(&B, &A, &c, "y NULL (in place)");
      llmk_plan_destroy(pa);
      llmk_plan_destroy(pb);
      tset_free(&A);
      tset_free(&B);
    }
    tu_buf_free(&yb);
    tset_free(&P);
    case_free(&c);
  }
}

static void test_regressions(void) {
  double t0 = tu_now();
  test_reg_3d_no_tokens();
  test_reg_empty_huge_batch();
  test_reg_workspace_overflow();
  test_reg_apc_block_overflow();
  printf("regressions: %.2f s\n", tu_now() - t0);
}

int main(void) {
  double t0 = tu_now();
  tu_seed(20250701);
  g_start = llmk_get_isa();
  g_native = llmk_get_native_isa();
  printf("native isa %s, isa in force %s, threading %s\n", llmk_isa_name(g_native),
         llmk_isa_name(g_start), llmk_threading_runtime());
  static const int threads[3] = {0, 1, 2};
  th_sweep_init(&g_sw, threads, 3);
  test_regressions();
  test_samples();
  double t1 = tu_now();
  test_errors();
  double t2 = tu_now();
  test_lifecycle();
  test_random();
  test_separate_output();
  test_y_errors();
  double t3 = tu_now();
  printf(
      "silu: %ld elements checked, %ld within tolerance but not bit-equal; max deviation "
      "without residual in output ulps: f32 %.2f, f16 %.2f, bf16 %.2f; max |diff| / "
      "tolerance %.3f\n",
      g_silu_checked, g_silu_elems, g_max_dev[0], g_max_dev[1], g_max_dev[2],
      g_max_ratio);
  printf("workspace guard failures: %ld\n", g_ws_guard_fail);
  printf("time %.2f s (samples %.2f, error table %.2f, lifecycle + random %.2f)\n",
         t3 - t0, t1 - t0, t2 - t1, t3 - t2);
  th_sweep_free(&g_sw);
  return tu_finish("test_fused_causal_conv1d");
}
