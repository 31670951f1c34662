/* SPDX-License-Identifier: Apache-2.0 */
/* advance_step: spec samples, random cases against tests/ref/advance_step_ref.c
 * (both modes, i32/i64 per tensor, strided views), an error table, plan lifecycle,
 * and bit-identical results for every context and ISA. */
#include <time.h>

#include "advance_step_ref.h"
#include "harness.h"
#include "llmk/llmk.h"
#include "ref_util.h"

enum { T_TOK, T_SAMP, T_POS, T_SEQ, T_SLOT, T_BT, T_SPEC, T_ACC, T_COUNT };
static const char *const tname[T_COUNT] = {
    "input_tokens", "sampled_token_ids", "input_positions", "seq_lens",
    "slot_mapping", "block_tables",      "spec_token",      "accepted_num"};
static const int is_output[T_COUNT] = {1, 0, 1, 1, 1, 0, 0, 0};

/* ---------------------------------------------------------------- layouts */

typedef struct layout {
  llmk_dtype dtype;
  int rank;
  int64_t shape[3]; /* rank 3: flat lookup only */
  int64_t strides[3];
} layout;

/* Stride patterns. Rank 1: 0 contiguous, 1 stride 2, 2 stride 3, 3 stride 0 (inputs
 * only). Rank 2: 0 contiguous, 1 padded rows, 2 column stride 2 + padding,
 * 3 column stride 3, 4 column-major with padding, 5 rows broadcast (inputs only). */
static void lay_make(layout *l, llmk_dtype dt, int rank, int64_t d0, int64_t d1,
                     int kind) {
  memset(l, 0, sizeof *l);
  l->dtype = dt;
  l->rank = rank;
  l->shape[0] = d0;
  l->shape[1] = d1;
  if (rank == 1) {
    static const int64_t s1[4] = {1, 2, 3, 0};
    l->strides[0] = s1[kind];
  } else {
    switch (kind) {
      case 0:
        l->strides[0] = d1;
        l->strides[1] = 1;
        break;
      case 1:
        l->strides[0] = d1 + 3;
        l->strides[1] = 1;
        break;
      case 2:
        l->strides[0] = 2 * d1 + 1;
        l->strides[1] = 2;
        break;
      case 3:
        l->strides[0] = 3 * d1;
        l->strides[1] = 3;
        break;
      case 4:
        l->strides[0] = 1;
        l->strides[1] = d0 + 2;
        break;
      default:
        l->strides[0] = 0;
        l->strides[1] = 1;
        break;
    }
  }
}

static int64_t lay_numel(const layout *l) {
  return th_numel(l->rank, l->shape);
}

static size_t lay_bytes(const layout *l) {
  return th_span_bytes(l->dtype, l->rank, l->shape, l->strides);
}

static int64_t lay_offset(const layout *l, int64_t idx) {
  return th_row_major_offset(l->rank, l->shape, l->strides, idx);
}

/* ------------------------------------------------------------------ cases */

/* One call: attributes, a layout per tensor and the logical contents of every tensor
 * before the call; out[] holds the expected contents of the 4 outputs afterwards. */
typedef struct as_case {
  int spec;
  int flat; /* plain mode through llmk_advance_step_flat_get_workspace_size */
  int64_t ns, nq, bs, mb, S;
  int has[T_COUNT];  /* tensor built */
  int pass[T_COUNT]; /* tensor passed to the call */
  layout L[T_COUNT];
  int64_t *v[T_COUNT];
  int64_t *out[T_COUNT];
  llmk_status expect;
} as_case;

static int64_t *alloc64(int64_t n) {
  int64_t *p = calloc((size_t)n + 1, sizeof *p);
  if (!p) th_die("out of memory");
  return p;
}

static void case_alloc(as_case *c) {
  for (int k = 0; k < T_COUNT; k++) {
    if (!c->has[k]) continue;
    c->v[k] = alloc64(lay_numel(&c->L[k]));
    if (is_output[k]) c->out[k] = alloc64(lay_numel(&c->L[k]));
  }
}

static void case_free(as_case *c) {
  for (int k = 0; k < T_COUNT; k++) {
    free(c->v[k]);
    free(c->out[k]);
    c->v[k] = c->out[k] = NULL;
  }
}

/* Shapes of every tensor for the case's attributes; dtype i64, contiguous. */
static void case_shapes(as_case *c) {
  int64_t T = c->S + 1, n = c->spec ? c->ns * T : c->ns;
  lay_make(&c->L[T_TOK], LLMK_I64, 1, n, 0, 0);
  lay_make(&c->L[T_POS], LLMK_I64, 1, n, 0, 0);
  lay_make(&c->L[T_SEQ], LLMK_I64, 1, n, 0, 0);
  lay_make(&c->L[T_SLOT], LLMK_I64, 1, n, 0, 0);
  if (c->spec)
    lay_make(&c->L[T_SAMP], LLMK_I64, 2, c->ns, T, 0);
  else
    lay_make(&c->L[T_SAMP], LLMK_I64, 2, c->nq, 1, 0);
  lay_make(&c->L[T_BT], LLMK_I64, 2, c->ns, c->mb, 0);
  lay_make(&c->L[T_SPEC], LLMK_I64, 2, c->ns, c->S, 0);
  lay_make(&c->L[T_ACC], LLMK_I64, 1, c->ns, 0, 0);
  for (int k = 0; k < T_COUNT; k++) c->has[k] = c->pass[k] = k < T_SPEC || c->spec;
}

static void lay_redo(layout *l, llmk_dtype dt, int kind) {
  lay_make(l, dt, l->rank, l->shape[0], l->shape[1], kind);
}

/* Expected status and outputs, from the reference and the i32 fit rule. */
static llmk_status case_expect(as_case *c) {
  for (int k = 0; k < T_COUNT; k++)
    if (is_output[k])
      memcpy(c->out[k], c->v[k], (size_t)lay_numel(&c->L[k]) * sizeof(int64_t));
  int r;
  if (c->flat)
    r = advance_step_ref_flat(c->ns, c->nq, c->bs, lay_numel(&c->L[T_BT]), c->v[T_SAMP],
                              c->v[T_BT], c->out[T_TOK], c->out[T_POS], c->out[T_SEQ],
                              c->out[T_SLOT]);
  else if (c->spec)
    r = advance_step_ref_spec(c->ns, c->S, c->bs, c->mb, c->v[T_SAMP], c->v[T_SPEC],
                              c->v[T_ACC], c->v[T_BT], c->out[T_TOK], c->out[T_POS],
                              c->out[T_SEQ], c->out[T_SLOT]);
  else
    r = advance_step_ref_plain(c->ns, c->nq, c->bs, c->mb, c->v[T_SAMP], c->v[T_BT],
                               c->out[T_TOK], c->out[T_POS], c->out[T_SEQ],
                               c->out[T_SLOT]);
  if (r != 0) return LLMK_ERROR_INVALID_VALUE;
  for (int k = 0; k < T_COUNT; k++)
    if (is_output[k] && c->L[k].dtype == LLMK_I32 &&
        !advance_step_ref_all_fit_i32(c->out[k], lay_numel(&c->L[k])))
      return LLMK_ERROR_INVALID_VALUE;
  return LLMK_SUCCESS;
}

/* The next step: expected outputs become the inputs. */
static void case_advance(as_case *c) {
  for (int k = 0; k < T_COUNT; k++)
    if (is_output[k]) {
      int64_t *t = c->v[k];
      c->v[k] = c->out[k];
      c->out[k] = t;
    }
}

/* ------------------------------------------------------------- tensor sets */

typedef th_tensor ttensor; /* an llmk_tensor over a guarded buffer */

typedef struct tset {
  int flat; /* the case's */
  int built[T_COUNT], pass[T_COUNT];
  ttensor x[T_COUNT];
} tset;

static void tt_store(ttensor *x, const layout *l, int64_t idx, int64_t v) {
  if (l->dtype == LLMK_I32 && !advance_step_ref_fits_i32(v))
    th_die("value does not fit an i32 input");
  ref_store_bits(x->buf.data, lay_offset(l, idx), th_dtype_size(l->dtype), (uint64_t)v);
}

static int64_t tt_load(const ttensor *x, const layout *l, int64_t idx) {
  return ref_load_index(x->buf.data, lay_offset(l, idx), l->dtype);
}

/* Buffers with a byte pattern that depends only on `seed` (the gaps between strided
 * elements keep it), then the case's values. Two builds with one seed are identical. */
static void tset_build(tset *s, const as_case *c, uint64_t seed) {
  memset(s, 0, sizeof *s);
  s->flat = c->flat;
  for (int k = 0; k < T_COUNT; k++) {
    if (!c->has[k]) continue;
    const layout *l = &c->L[k];
    ttensor *x = &s->x[k];
    th_tensor_make(x, l->dtype, l->rank, l->shape, l->strides);
    if (x->buf.size != lay_bytes(l)) th_die("span of a test layout");
    uint64_t h = seed * 0x9e3779b97f4a7c15ull + (uint64_t)k * 0xbf58476d1ce4e5b9ull + 1;
    unsigned char *d = x->buf.data;
    for (size_t i = 0; i < x->buf.size; i += 8) {
      h = h * 6364136223846793005ull + 1442695040888963407ull;
      memcpy(d + i, &h, x->buf.size - i < 8 ? x->buf.size - i : 8);
    }
    int64_t n = lay_numel(l);
    for (int64_t i = 0; i < n; i++) tt_store(x, l, i, c->v[k][i]);
    s->built[k] = 1;
    s->pass[k] = c->pass[k];
  }
}

/* A byte-identical copy (guards included) with its own buffers. */
static void tset_copy(tset *dst, const tset *src) {
  *dst = *src;
  for (int k = 0; k < T_COUNT; k++) {
    if (!src->built[k]) continue;
    th_buf_clone(&dst->x[k].buf, &src->x[k].buf);
    dst->x[k].t.data = dst->x[k].buf.data;
  }
}

static void tset_store_out(tset *s, const as_case *c) {
  for (int k = 0; k < T_COUNT; k++)
    if (is_output[k] && s->built[k])
      for (int64_t i = 0; i < lay_numel(&c->L[k]); i++)
        tt_store(&s->x[k], &c->L[k], i, c->out[k][i]);
}

static void tset_free(tset *s) {
  for (int k = 0; k < T_COUNT; k++)
    if (s->built[k]) th_tensor_free(&s->x[k]);
}

/* Whole buffers, guards included; reports the first difference. Returns 1 if equal. */
static int tset_same(const tset *a, const tset *e, const as_case *c, const char *label) {
  int same = 1;
  for (int k = 0; k < T_COUNT; k++) {
    if (!a->built[k]) continue;
    const tu_buf *ab = &a->x[k].buf, *eb = &e->x[k].buf;
    TU_CHECK(tu_buf_check(ab), "%s: %s guard bytes overwritten", label, tname[k]);
    if (th_buf_same(ab, eb)) continue;
    same = 0;
    int64_t n = lay_numel(&c->L[k]), i;
    for (i = 0; i < n; i++) {
      int64_t got = tt_load(&a->x[k], &c->L[k], i), want = tt_load(&e->x[k], &c->L[k], i);
      if (got != want) {
        TU_CHECK(got == want, "%s: %s[%" PRId64 "] = %" PRId64 ", expected %" PRId64,
                 label, tname[k], i, got, want);
        break;
      }
    }
    if (i == n)
      TU_CHECK(0, "%s: %s: bytes outside its elements changed", label, tname[k]);
  }
  return same;
}

static llmk_status call_p1(const tset *s, int64_t ns, int64_t nq, int64_t bs, size_t *ws,
                           llmk_plan **plan) {
  const llmk_tensor *p[T_COUNT];
  for (int k = 0; k < T_COUNT; k++) p[k] = s->pass[k] ? &s->x[k].t : NULL;
  if (s->flat)
    return llmk_advance_step_flat_get_workspace_size(p[T_TOK], p[T_SAMP], p[T_POS],
                                                     p[T_SEQ], p[T_SLOT], p[T_BT], ns, nq,
                                                     bs, ws, plan);
  return llmk_advance_step_get_workspace_size(p[T_TOK], p[T_SAMP], p[T_POS], p[T_SEQ],
                                              p[T_SLOT], p[T_BT], p[T_SPEC], p[T_ACC], ns,
                                              nq, bs, ws, plan);
}

static llmk_status run_plan(llmk_plan *plan, size_t ws, llmk_context *ctx) {
  return th_run_plan(llmk_advance_step, plan, ws, ctx);
}

/* "advance_step: ..." naming one of the '|'-separated words. */
static int msg_ok(const char *alts) {
  return th_msg_ok("advance_step", alts, NULL);
}

/* Runs a case whose phase 1 must succeed; checks the status against c->expect and all
 * buffers, guards and gaps included, against the expected bytes (untouched when it
 * fails). */
static void run_case_keep(const as_case *c, uint64_t seed, llmk_context *ctx,
                          const char *label, tset *kept) {
  tset s, e;
  tset_build(&s, c, seed);
  tset_copy(&e, &s);
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st = call_p1(&s, c->ns, c->nq, c->bs, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS && plan, "%s: phase 1 status %d (%s)", label, (int)st,
           llmk_last_error());
  if (st == LLMK_SUCCESS && plan) {
    tset_same(&s, &e, c, label); /* phase 1 touches no data */
    th_reset_error();
    st = run_plan(plan, ws, ctx);
    TU_CHECK(st == c->expect, "%s: status %d, expected %d (%s)", label, (int)st,
             (int)c->expect, st ? llmk_last_error() : "");
    if (c->expect != LLMK_SUCCESS)
      TU_CHECK(st == LLMK_SUCCESS || msg_ok(NULL), "%s: message '%s'", label,
               llmk_last_error());
    if (c->expect == LLMK_SUCCESS) tset_store_out(&e, c);
    if (st == c->expect) tset_same(&s, &e, c, label);
  }
  if (kept)
    *kept = s;
  else
    tset_free(&s);
  tset_free(&e);
}

static void run_case(const as_case *c, uint64_t seed, llmk_context *ctx,
                     const char *label) {
  run_case_keep(c, seed, ctx, label, NULL);
}

/* th_sweep_run's callback: one random case with the ISA in force and a context. */
typedef struct sweep_case {
  const as_case *c;
  uint64_t seed;
  int have;
  tset last; /* the previous run's buffers, compared by the sweep */
} sweep_case;

static int sweep_one(void *user, llmk_context *ctx, const char *label, th_out *out) {
  sweep_case *w = user;
  if (w->have) tset_free(&w->last);
  long before = tu_failures;
  run_case_keep(w->c, w->seed, ctx, label, &w->last);
  w->have = 1;
  for (int k = 0; k < T_COUNT; k++)
    if (w->last.built[k]) th_out_add_buf(out, &w->last.x[k].buf);
  return tu_failures == before;
}

/* ---------------------------------------------------------------- samples */

static void set_vals(int64_t *dst, const int64_t *src, int64_t n) {
  memcpy(dst, src, (size_t)n * sizeof *dst);
}

static int same_vals(const int64_t *a, const int64_t *b, int64_t n) {
  return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* layouts: 0 all i64 contiguous, 1 all i32 contiguous, 2 mixed dtypes and strides. */
static void sample_layouts(as_case *c, int variant) {
  for (int k = 0; k < T_COUNT; k++) {
    if (!c->has[k]) continue;
    llmk_dtype dt = variant == 1 ? LLMK_I32 : LLMK_I64;
    int kind = 0;
    if (variant == 2) {
      dt = (k % 2) ? LLMK_I32 : LLMK_I64;
      kind = c->L[k].rank == 1 ? 1 + k % 2 : 1 + k % 4;
    }
    lay_redo(&c->L[k], dt, kind);
  }
}

static void test_samples(void) {
  static const char *const vname[3] = {"i64", "i32", "mixed strided"};
  char label[128];
  for (int variant = 0; variant < 3; variant++) {
    /* vllm-ascend */
    {
      as_case c = {0};
      c.ns = c.nq = 4;
      c.bs = 128;
      c.mb = 1;
      case_shapes(&c);
      sample_layouts(&c, variant);
      case_alloc(&c);
      static const int64_t tok[] = {2926, 279, 12095, 1588}, samp[] = {13, 1968, 13, 13},
                           pos[] = {5, 7, 5, 5}, seq[] = {6, 8, 6, 6},
                           bt[] = {0, 1, 2, 3}, slot[] = {-7, -7, -7, -7};
      static const int64_t etok[] = {13, 1968, 13, 13}, epos[] = {6, 8, 6, 6},
                           eseq[] = {7, 9, 7, 7}, eslot[] = {6, 136, 262, 390};
      set_vals(c.v[T_TOK], tok, 4);
      set_vals(c.v[T_SAMP], samp, 4);
      set_vals(c.v[T_POS], pos, 4);
      set_vals(c.v[T_SEQ], seq, 4);
      set_vals(c.v[T_SLOT], slot, 4);
      set_vals(c.v[T_BT], bt, 4);
      TU_CHECK(case_expect(&c) == LLMK_SUCCESS,
               "reference rejects the vllm-ascend sample");
      TU_CHECK(same_vals(c.out[T_TOK], etok, 4) && same_vals(c.out[T_POS], epos, 4) &&
                   same_vals(c.out[T_SEQ], eseq, 4) && same_vals(c.out[T_SLOT], eslot, 4),
               "reference disagrees with the vllm-ascend sample");
      set_vals(c.out[T_TOK], etok, 4);
      set_vals(c.out[T_POS], epos, 4);
      set_vals(c.out[T_SEQ], eseq, 4);
      set_vals(c.out[T_SLOT], eslot, 4);
      c.expect = LLMK_SUCCESS;
      snprintf(label, sizeof label, "vllm-ascend sample (%s)", vname[variant]);
      run_case(&c, 11, NULL, label);
      case_free(&c);
    }
    /* CANN V2 (speculative) */
    {
      as_case c = {0};
      c.spec = 1;
      c.ns = c.nq = 8;
      c.S = 1;
      c.bs = 8;
      c.mb = 1000;
      case_shapes(&c);
      sample_layouts(&c, variant);
      case_alloc(&c);
      for (int64_t i = 0; i < 16; i++) {
        c.v[T_TOK][i] = c.v[T_POS][i] = c.v[T_SEQ][i] = c.v[T_SLOT][i] = i % 8;
        c.v[T_SAMP][i] = i % 8;
      }
      for (int64_t i = 0; i < 8000; i++) c.v[T_BT][i] = 7;
      for (int64_t i = 0; i < 8; i++) c.v[T_SPEC][i] = c.v[T_ACC][i] = i;
      static const int64_t etok[] = {1, 0, 3, 1, 5, 2, 7, 3, 1, 4, 3, 5, 5, 6, 7, 7},
                           epos[] = {1, 2, 4, 5, 7,  8,  10, 11,
                                     5, 6, 8, 9, 11, 12, 14, 15},
                           eslot[] = {57, 58, 60, 61, 63, 56, 58, 59,
                                      61, 62, 56, 57, 59, 60, 62, 63};
      int64_t eseq[16];
      for (int i = 0; i < 16; i++) eseq[i] = epos[i] + 1;
      TU_CHECK(case_expect(&c) == LLMK_SUCCESS, "reference rejects the CANN V2 sample");
      TU_CHECK(same_vals(c.out[T_TOK], etok, 16) && same_vals(c.out[T_POS], epos, 16) &&
                   same_vals(c.out[T_SEQ], eseq, 16) &&
                   same_vals(c.out[T_SLOT], eslot, 16),
               "reference disagrees with the CANN V2 sample");
      set_vals(c.out[T_TOK], etok, 16);
      set_vals(c.out[T_POS], epos, 16);
      set_vals(c.out[T_SEQ], eseq, 16);
      set_vals(c.out[T_SLOT], eslot, 16);
      c.expect = LLMK_SUCCESS;
      snprintf(label, sizeof label, "CANN V2 sample (%s)", vname[variant]);
      run_case(&c, 12, NULL, label);
      case_free(&c);
    }
    /* CANN plain data: through the per-row native API, row 2 needs block 1 of a
     * 1-block table (an error); with 2-block rows table[q][j] = q + j, the per-row
     * lookup equals CANN's flattened formula and gives its documented result. */
    for (int mb = 1; mb <= 2; mb++) {
      as_case c = {0};
      c.ns = 8;
      c.nq = 4;
      c.bs = 2;
      c.mb = mb;
      case_shapes(&c);
      sample_layouts(&c, variant);
      case_alloc(&c);
      for (int64_t i = 0; i < 8; i++)
        c.v[T_TOK][i] = c.v[T_POS][i] = c.v[T_SEQ][i] = c.v[T_SLOT][i] = i;
      for (int64_t i = 0; i < 4; i++) c.v[T_SAMP][i] = i;
      for (int64_t q = 0; q < 8; q++)
        for (int64_t j = 0; j < mb; j++) c.v[T_BT][q * mb + j] = mb == 1 ? q : q + j;
      if (mb == 1) {
        TU_CHECK(case_expect(&c) == LLMK_ERROR_INVALID_VALUE,
                 "reference accepts the CANN sample with 1-block rows");
        c.expect = LLMK_ERROR_INVALID_VALUE;
        snprintf(label, sizeof label, "CANN plain sample, native, 1-block rows (%s)",
                 vname[variant]);
        run_case(&c, 13, NULL, label); /* resets the last error before its run */
        TU_CHECK(msg_ok("block_tables|max_blocks|seq_lens"),
                 "%s: message '%s' should name block_tables", label, llmk_last_error());
      } else {
        static const int64_t etok[] = {0, 1, 2, 3, 0, 0, 0, 0},
                             eseq[] = {1, 2, 3, 4, 4, 5, 6, 7},
                             eslot[] = {0, 3, 6, 9, -1, -1, -1, -1};
        TU_CHECK(case_expect(&c) == LLMK_SUCCESS, "reference rejects the CANN variant");
        TU_CHECK(same_vals(c.out[T_TOK], etok, 8) && same_vals(c.out[T_POS], etok, 8) &&
                     same_vals(c.out[T_SEQ], eseq, 8) &&
                     same_vals(c.out[T_SLOT], eslot, 8),
                 "reference disagrees with the CANN plain sample");
        set_vals(c.out[T_TOK], etok, 8);
        set_vals(c.out[T_POS], etok, 8);
        set_vals(c.out[T_SEQ], eseq, 8);
        set_vals(c.out[T_SLOT], eslot, 8);
        c.expect = LLMK_SUCCESS;
        snprintf(label, sizeof label, "CANN plain sample, native, 2-block rows (%s)",
                 vname[variant]);
        run_case(&c, 14, NULL, label);
      }
      case_free(&c);
    }
  }
}

/* ------------------------------------------------------------ random cases */

/* One cycle of num_seqs; 2500 spans more than one 1024-row chunk of the SIMD kernel.
 * The large sizes come once a cycle to keep the run short under sanitizers. */
static const int64_t ns_list[] = {0, 1, 2, 3, 7,  16, 17,  100, 1024, 2500,
                                  1, 2, 3, 7, 16, 17, 100, 3,   7,    17};
#define NS_COUNT ((int)(sizeof ns_list / sizeof ns_list[0]))

static llmk_dtype rand_dt(void) {
  return tu_rand_range(0, 1) ? LLMK_I64 : LLMK_I32;
}
static int64_t dt_max(llmk_dtype d) {
  return d == LLMK_I32 ? INT32_MAX : INT64_MAX;
}
static int64_t clamp_dt(int64_t v, llmk_dtype d) {
  if (d != LLMK_I32) return v;
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
}
static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
static int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}

static int64_t rand_token(int big, llmk_dtype d) {
  if (!big) return tu_rand_range(0, 151935);
  if (d == LLMK_I32) return tu_rand_range(INT32_MIN, INT32_MAX);
  return tu_rand_range(-(INT64_C(1) << 40), INT64_C(1) << 40);
}

/* A position in [0, hi], often on a block boundary. */
static int64_t rand_pos(int64_t hi, int64_t bs) {
  if (hi < 0) return tu_rand_range(0, 5);
  if (tu_rand_range(0, 3) == 0) {
    int64_t p = bs * tu_rand_range(0, hi / bs) + (tu_rand_range(0, 1) ? 0 : bs - 1);
    return min64(p, hi);
  }
  return tu_rand_range(0, hi);
}

/* Reads back what the library will see (stride-0 inputs alias elements), then the
 * expected outcome. */
static void case_settle(as_case *c) {
  tset s;
  tset_build(&s, c, 0);
  for (int k = 0; k < T_COUNT; k++)
    if (c->has[k])
      for (int64_t i = 0; i < lay_numel(&c->L[k]); i++)
        c->v[k][i] = tt_load(&s.x[k], &c->L[k], i);
  tset_free(&s);
  c->expect = case_expect(c);
}

static void gen_case(as_case *c, int idx) {
  memset(c, 0, sizeof *c);
  c->spec = (idx / NS_COUNT) % 2;
  c->ns = ns_list[idx % NS_COUNT];
  int big = tu_rand_range(0, 19) == 0; /* values near the dtype limits */
  if (c->spec) {
    static const int64_t S_list[] = {0, 1, 2, 3, 7};
    c->nq = c->ns;
    c->S =
        S_list[tu_rand_range(0, c->ns >= 1024 ? 3 : 4)]; /* S = 7 on the smaller sizes */
  } else {
    int r = (int)tu_rand_range(0, 3);
    c->nq = r == 0 ? 0 : r == 1 ? c->ns : tu_rand_range(0, c->ns);
  }
  static const int64_t bs_list[] = {1, 2, 16, 128};
  int rb = (int)tu_rand_range(0, 4);
  c->bs = rb < 4 ? bs_list[rb] : tu_rand_range(1, 1000);
  if (big) {
    static const int64_t big_bs[] = {INT64_C(1) << 16, INT64_C(1) << 30,
                                     INT64_C(1) << 40};
    c->bs = big_bs[tu_rand_range(0, 2)];
  }
  int64_t mb_max = max64(1, min64(64, 4096 / max64(c->ns, 1)));
  c->mb = tu_rand_range(1, mb_max);
  if (!c->spec && c->nq == 0 && tu_rand_range(0, 4) == 0) c->mb = 0;
  if (c->spec && c->mb * c->bs < 2) c->mb = 2;
  case_shapes(c);
  /* Half the cases keep the 1-D tensors and sampled_token_ids unit-stride (the layout
   * SIMD kernels take); block_tables and the dtypes stay random. */
  int unit = (int)tu_rand_range(0, 1);
  for (int k = 0; k < T_COUNT; k++) {
    if (!c->has[k]) continue;
    layout *l = &c->L[k];
    if (k == T_SAMP && !c->spec && tu_rand_range(0, 3) == 0) /* [num_queries] */
      lay_make(l, LLMK_I64, 1, c->nq, 0, 0);
    int kinds = l->rank == 1 ? (is_output[k] ? 3 : 4) : (is_output[k] ? 5 : 6);
    int kind = (int)tu_rand_range(0, kinds - 1);
    if (unit && k != T_BT) kind = (l->rank == 2 && tu_rand_range(0, 1)) ? 4 : 0;
    lay_redo(l, rand_dt(), kind);
  }
  case_alloc(c);

  const int64_t T = c->S + 1, cap = c->mb * c->bs;
  const int64_t nout = lay_numel(&c->L[T_TOK]);
  for (int k = 0; k < T_COUNT; k++)
    if (is_output[k])
      for (int64_t i = 0; i < nout; i++) c->v[k][i] = tu_rand_range(-1000000, 1000000);
  llmk_dtype btd = c->L[T_BT].dtype;
  for (int64_t i = 0; i < c->ns * c->mb; i++)
    c->v[T_BT][i] = big ? clamp_dt(tu_rand_range(0, INT64_C(1) << 40), btd)
                        : tu_rand_range(0, 100000);
  if (!c->spec) {
    llmk_dtype sd = c->L[T_SEQ].dtype;
    for (int64_t q = 0; q < c->nq; q++) {
      c->v[T_SAMP][q] = rand_token(big, c->L[T_SAMP].dtype);
      c->v[T_SEQ][q] = rand_pos(min64(cap - 1, dt_max(sd)), c->bs);
    }
    for (int64_t q = c->nq; q < c->ns; q++) c->v[T_SEQ][q] = tu_rand_range(0, 1000000);
  } else {
    llmk_dtype ad = c->L[T_ACC].dtype, pd = c->L[T_POS].dtype;
    for (int64_t i = 0; i < c->ns; i++) {
      int64_t a = big ? tu_rand_range(0, 1 << 20) : tu_rand_range(0, min64(7, cap - 2));
      c->v[T_ACC][i] = clamp_dt(a, ad);
      for (int64_t j = 0; j < T; j++)
        c->v[T_POS][i * T + j] = clamp_dt(rand_pos(cap - c->v[T_ACC][i] - 2, c->bs), pd);
      int64_t f = tu_rand_range(1, T); /* first rejected position */
      for (int64_t j = 0; j < T; j++) {
        int64_t t = rand_token(big, c->L[T_SAMP].dtype);
        c->v[T_SAMP][i * T + j] = j < f    ? t
                                  : j == f ? -1
                                           : (tu_rand_range(0, 1) ? -1 : t);
      }
      for (int64_t s = 0; s < c->S; s++)
        c->v[T_SPEC][i * c->S + s] = rand_token(big, c->L[T_SPEC].dtype);
    }
  }
  /* One value defect in a tenth of the cases; the reference decides the outcome. */
  if (tu_rand_range(0, 9) == 0 && c->nq > 0) {
    if (!c->spec) {
      int64_t q = tu_rand_range(0, c->nq - 1);
      switch (tu_rand_range(0, 2)) {
        case 0:
          c->v[T_SEQ][q] = -tu_rand_range(1, 5);
          break;
        case 1:
          c->v[T_SEQ][q] = clamp_dt(cap + tu_rand_range(0, 3 * c->bs), c->L[T_SEQ].dtype);
          break;
        default:
          c->v[T_BT][q * c->mb + c->v[T_SEQ][q] / c->bs] = -tu_rand_range(1, 1000);
      }
    } else {
      int64_t i = tu_rand_range(0, c->ns - 1);
      switch (tu_rand_range(0, 4)) {
        case 0:
          c->v[T_ACC][i] = -1;
          break;
        case 1:
          c->v[T_POS][i * T + tu_rand_range(0, c->S)] = -tu_rand_range(1, 9);
          break;
        case 2:
          c->v[T_SAMP][i * T] = -1;
          break;
        case 3:
          c->v[T_ACC][i] = clamp_dt(cap, c->L[T_ACC].dtype);
          break;
        default:
          for (int64_t j = 0; j < c->mb; j++) c->v[T_BT][i * c->mb + j] = -1;
      }
    }
  }
  case_settle(c);
}

#define NUM_CASES 400

static void test_random_and_determinism(void) {
  static as_case cases[NUM_CASES];
  int n_ok = 0, n_err = 0;
  for (int i = 0; i < NUM_CASES; i++) {
    gen_case(&cases[i], i);
    if (cases[i].expect == LLMK_SUCCESS)
      n_ok++;
    else
      n_err++;
  }
  static const int threads[3] = {0, 1, 2};
  th_sweep sw;
  th_sweep_init(&sw, threads, 3);

  llmk_isa start = llmk_get_isa(), native = llmk_get_native_isa();
  printf(
      "random cases: %d (%d valid, %d expected INVALID_VALUE); native isa %s, isa in "
      "force %s\n",
      NUM_CASES, n_ok, n_err, llmk_isa_name(native), llmk_isa_name(start));
  for (int isa = LLMK_ISA_SCALAR; isa <= (int)native; isa++) {
    if (!TU_ISA_HERE(isa)) continue;
    /* Without LLMK_ISA in the environment the ISA in force is exactly `isa`; with it,
     * the header leaves open whether set_max_isa() may go above the env cap, so both
     * readings are accepted. */
    llmk_isa capped = isa < (int)start ? (llmk_isa)isa : start;
    llmk_isa got = llmk_set_max_isa((llmk_isa)isa);
    TU_CHECK((got == (llmk_isa)isa || got == capped) && llmk_get_isa() == got,
             "set_max_isa(%d) -> %d, get_isa %d", isa, (int)got, (int)llmk_get_isa());
  }
  llmk_set_max_isa(native);
  /* every case on every ISA x context against the same expected bytes, and byte for
   * byte against its first run: bit-identical results */
  for (int i = 0; i < NUM_CASES; i++) {
    char label[160];
    as_case *c = &cases[i];
    snprintf(label, sizeof label,
             "random case %d (%s, ns=%" PRId64 " nq=%" PRId64 " S=%" PRId64 " bs=%" PRId64
             " mb=%" PRId64 ")",
             i, c->spec ? "spec" : "plain", c->ns, c->nq, c->S, c->bs, c->mb);
    sweep_case w;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.seed = 100 + (uint64_t)i;
    th_sweep_run(&sw, 1, NULL, label, sweep_one, &w);
    if (w.have) tset_free(&w.last);
  }
  printf("  every isa up to %s x ctx NULL, 1 thread, 2 threads done\n",
         llmk_isa_name(native));
  th_sweep_free(&sw);
  for (int i = 0; i < NUM_CASES; i++) case_free(&cases[i]);
}

/* ------------------------------------------------------------ error table */

/* The valid base call. Plain: ns rows, nq queries, bs 16, 4 blocks per row; spec:
 * S speculative tokens. Every tensor i64 contiguous; spec_token / accepted_num are
 * built in plain mode too (not passed), for the "only one of them" rows. */
static void fx_init(as_case *c, int spec, int64_t ns, int64_t nq, int64_t S) {
  memset(c, 0, sizeof *c);
  c->spec = spec;
  c->ns = ns;
  c->nq = nq;
  c->S = spec ? S : 2;
  c->bs = 16;
  c->mb = 4;
  int keep = spec;
  c->spec = 1;
  case_shapes(c); /* builds all 8 */
  c->spec = keep;
  if (!spec) {
    int64_t n = ns;
    lay_make(&c->L[T_TOK], LLMK_I64, 1, n, 0, 0);
    lay_make(&c->L[T_POS], LLMK_I64, 1, n, 0, 0);
    lay_make(&c->L[T_SEQ], LLMK_I64, 1, n, 0, 0);
    lay_make(&c->L[T_SLOT], LLMK_I64, 1, n, 0, 0);
    lay_make(&c->L[T_SAMP], LLMK_I64, 2, nq, 1, 0);
    c->pass[T_SPEC] = c->pass[T_ACC] = 0;
  }
  case_alloc(c);
  const int64_t T = c->S + 1, nout = lay_numel(&c->L[T_TOK]);
  for (int64_t i = 0; i < nout; i++) {
    c->v[T_TOK][i] = 900 + i;
    c->v[T_SLOT][i] = 700 + i;
    if (spec)
      c->v[T_SEQ][i] = 600 + i;
    else
      c->v[T_POS][i] = 800 + i;
  }
  for (int64_t q = 0; q < ns; q++)
    for (int64_t j = 0; j < c->mb; j++) c->v[T_BT][q * c->mb + j] = 10 * q + j + 1;
  for (int64_t i = 0; i < ns * c->S; i++) c->v[T_SPEC][i] = 300 + i;
  for (int64_t i = 0; i < ns; i++) c->v[T_ACC][i] = i % 3;
  if (!spec) {
    for (int64_t q = 0; q < ns; q++) c->v[T_SEQ][q] = 3 + 9 * (q % 7); /* < 64 */
    for (int64_t q = 0; q < nq; q++) c->v[T_SAMP][q] = 1000 + q;
  } else {
    for (int64_t i = 0; i < ns; i++) {
      for (int64_t j = 0; j < T; j++) {
        c->v[T_POS][i * T + j] = 5 * (i % 5) + j;
        c->v[T_SAMP][i * T + j] = 100 * i + j + 1;
      }
      if (i % 2 == 0 && T >= 2) c->v[T_SAMP][i * T + T - 1] = -1;
    }
  }
}

/* The shared descriptor defects are the harness's (TH_D_*); these are the op's own. */
enum defect {
  D_NULL_WS = TH_D_OP,
  D_NULL_PLAN,
  D_ALL_DATA_NULL,
  D_RANK_PAIR, /* a 1-D tensor as [n, 2] */
  D_FEW,       /* an extent-0 dimension added: no elements */
  D_NUM_SEQS,
  D_NUM_QUERIES,
  D_BLOCK_SIZE,
  D_ONLY,
  D_SAMPLED_RANK1,
  D_UNUSED_BT,
  D_SPEC_SEQ_GARBAGE,
  D_MIXED_LAYOUT,
  D_BIG_VALUES,
  /* value defects (phase 2) */
  V_SEQ,
  V_BLK_LOOKUP,
  V_BLK_ROW,
  V_SAMP0,
  V_ACC,
  V_POS,
  V_SLOT_I32,
  V_SEQ_I32,
  V_POS_I32,
  V_TOK_I32,
  V_I64_SLOT,
  V_SLOT_EDGE,
  V_I64_SEQ,
  V_SEQ_I32_SPEC,
  V_POS_I32_SPEC,
  /* value defects of the flat table (row 2, a query) */
  F_NEG_SEQ,
  F_SEQ_MAX,
  F_BEYOND,
  F_NEG_BLOCK,
  F_SLOT_OVF,
  F_SLOT_I32,
  F_TOK_I32,
  F_SEQ_I32,
  F_POS_I32
};

typedef struct err_row {
  const char *name;
  int spec;
  int64_t ns, nq, S;
  int defect, tensor;
  int64_t a1, a2;
  llmk_status expect;
  int phase; /* 1 or 2: the phase that must reject; 0: must succeed */
  const char *msg;
} err_row;

static th_table rows;

static void add(const char *name, int spec, int64_t ns, int64_t nq, int64_t S, int defect,
                int tensor, int64_t a1, int64_t a2, llmk_status expect, int phase,
                const char *msg) {
  TH_TABLE_ADD(&rows, err_row, th_table_str(&rows, name), spec, ns, nq, S, defect, tensor,
               a1, a2, expect, phase, msg);
}

/* Block index that row q (plain) looks up. */
static int64_t plain_idx(const as_case *c, int64_t q) {
  return c->v[T_SEQ][q] / c->bs;
}

/* Defects on the values, layouts and attributes, before the tensors are built. */
static void apply_pre(as_case *c, const err_row *r) {
  const int64_t T = c->S + 1, q = r->a1;
  switch (r->defect) {
    case D_SAMPLED_RANK1:
      lay_make(&c->L[T_SAMP], LLMK_I64, 1, c->nq, 0, 0);
      break;
    case D_UNUSED_BT: {
      /* entries no row looks up: -1 or the dtype's maximum */
      char used[64 * 4] = {0};
      for (int64_t i = 0; i < c->ns; i++) {
        if (!c->spec) {
          if (i < c->nq) used[i * c->mb + plain_idx(c, i)] = 1;
        } else {
          for (int64_t j = 0; j < T; j++)
            used[i * c->mb + (c->v[T_POS][i * T + j] + c->v[T_ACC][i] + 1) / c->bs] = 1;
        }
      }
      for (int64_t i = 0; i < c->ns * c->mb; i++)
        if (!used[i]) c->v[T_BT][i] = r->a2 ? INT64_MAX : -1;
      break;
    }
    case D_SPEC_SEQ_GARBAGE:
      for (int64_t i = 0; i < lay_numel(&c->L[T_SEQ]); i++) c->v[T_SEQ][i] = -5 - i;
      break;
    case D_MIXED_LAYOUT:
      for (int k = 0; k < T_COUNT; k++)
        lay_redo(&c->L[k], k % 2 ? LLMK_I32 : LLMK_I64,
                 c->L[k].rank == 1 ? 1 + (k + (int)r->a1) % 2 : 1 + (k + (int)r->a1) % 4);
      break;
    case D_BIG_VALUES: /* valid, but positions and block ids beyond 2^31 in some rows */
      c->bs = INT64_C(1) << 30;
      for (int64_t i = 0; i < c->ns; i++) {
        c->v[T_SEQ][i] = i % 2 ? 3 * c->bs + i : i;
        for (int64_t j = 0; j < c->mb; j++)
          c->v[T_BT][i * c->mb + j] = i % 3 == 0 ? (INT64_C(1) << 32) + i : i + 1;
      }
      break;
    case V_SEQ:
      c->v[T_SEQ][q] = r->a2;
      break;
    case V_BLK_LOOKUP:
      c->v[T_BT][q * c->mb + plain_idx(c, q)] = r->a2;
      break;
    case V_BLK_ROW:
      for (int64_t j = 0; j < c->mb; j++) c->v[T_BT][q * c->mb + j] = r->a2;
      break;
    case V_SAMP0:
      c->v[T_SAMP][q * T] = -1;
      break;
    case V_ACC:
      c->v[T_ACC][q] = r->a2;
      break;
    case V_POS:
      c->v[T_POS][q] = r->a2;
      break;
    case V_SLOT_I32: /* block id 2^28 * block_size 16 = 2^32 */
      lay_redo(&c->L[T_SLOT], LLMK_I32, 0);
      if (c->spec)
        for (int64_t j = 0; j < c->mb; j++) c->v[T_BT][q * c->mb + j] = INT64_C(1) << 28;
      else
        c->v[T_BT][q * c->mb + plain_idx(c, q)] = INT64_C(1) << 28;
      break;
    case V_SEQ_I32: /* pos + 1 = 2^31 */
      lay_redo(&c->L[T_SEQ], LLMK_I32, 0);
      c->bs = INT64_C(1) << 30;
      c->v[T_SEQ][q] = INT32_MAX;
      break;
    case V_POS_I32: /* input_positions = 2^31 */
      lay_redo(&c->L[T_POS], LLMK_I32, 0);
      c->bs = INT64_C(1) << 30;
      c->v[T_SEQ][q] = INT64_C(1) << 31;
      break;
    case V_TOK_I32:
      lay_redo(&c->L[T_TOK], LLMK_I32, 0);
      if (c->spec)
        c->v[T_SPEC][q * c->S] = INT64_C(1) << 40;
      else
        c->v[T_SAMP][q] = INT64_C(1) << 40;
      break;
    case V_I64_SLOT: /* block id * 16 overflows int64 */
      if (c->spec)
        for (int64_t j = 0; j < c->mb; j++) c->v[T_BT][q * c->mb + j] = INT64_MAX / 8;
      else
        c->v[T_BT][q * c->mb + plain_idx(c, q)] = INT64_MAX / 8;
      break;
    case V_SLOT_EDGE: /* slot of row q near INT64_MAX; a2: 0 slot INT64_MAX-1, 1 slot
                         INT64_MAX (block_size 1), 2 slot INT64_MAX+1 */
      c->bs = r->a2 == 1 ? 1 : 3;
      for (int64_t i = 0; i < c->ns; i++) c->v[T_SEQ][i] = i % 3;
      c->v[T_SEQ][q] = r->a2 == 2 ? 2 : 0;
      c->v[T_BT][q * c->mb] = INT64_MAX / c->bs;
      break;
    case V_I64_SEQ: /* pos + 1 overflows int64: bs = INT64_MAX keeps pos / bs = 1 */
      c->bs = INT64_MAX;
      for (int64_t i = 0; i < c->ns * c->mb; i++) c->v[T_BT][i] = 0;
      c->v[T_SEQ][q] = INT64_MAX;
      break;
    case V_SEQ_I32_SPEC: /* new position INT32_MAX, seq_lens 2^31 */
      lay_redo(&c->L[T_SEQ], LLMK_I32, 0);
      c->bs = INT64_C(1) << 30;
      c->v[T_POS][q * T] = INT32_MAX - 1 - c->v[T_ACC][q];
      break;
    case V_POS_I32_SPEC: /* new position 2^31 in an i32 in/out tensor */
      lay_redo(&c->L[T_POS], LLMK_I32, 0);
      c->bs = INT64_C(1) << 30;
      c->v[T_POS][q * T] = INT32_MAX - c->v[T_ACC][q];
      break;
    default:
      break;
  }
}

/* Defects on descriptors and arguments, after the tensors are built. */
static void apply_post(tset *s, as_case *c, const err_row *r) {
  llmk_tensor *t = r->tensor >= 0 ? &s->x[r->tensor].t : NULL;
  if (r->defect < TH_D_OP) {
    if (!th_defect_apply(t, r->defect, r->a1, r->a2)) s->pass[r->tensor] = 0;
    return;
  }
  switch (r->defect) {
    case D_ALL_DATA_NULL:
      for (int k = 0; k < T_COUNT; k++) s->x[k].t.data = NULL;
      break;
    case D_RANK_PAIR:
      t->shape[1] = 2;
      t->strides[0] = 2;
      t->strides[1] = 1;
      t->rank = 2;
      break;
    case D_FEW:
      t->shape[t->rank] = 0;
      t->strides[t->rank] = 1;
      t->rank++;
      break;
    case D_NUM_SEQS:
      c->ns = r->a1;
      break;
    case D_NUM_QUERIES:
      c->nq = r->a1;
      break;
    case D_BLOCK_SIZE:
      c->bs = r->a1;
      break;
    case D_ONLY:
      s->pass[T_SPEC] = s->pass[T_ACC] = 0;
      s->pass[r->tensor] = 1;
      break;
    default:
      break;
  }
}

static void build_rows(void) {
  char nm[112];
  static const llmk_dtype bad_dt[3] = {LLMK_F32, LLMK_I8, LLMK_F16};
  static const char *const bad_dt_name[3] = {"f32", "i8", "f16"};
  const llmk_status NP = LLMK_ERROR_NULL_POINTER, DT = LLMK_ERROR_INVALID_DTYPE,
                    SH = LLMK_ERROR_INVALID_SHAPE, AT = LLMK_ERROR_INVALID_ATTRIBUTE,
                    VA = LLMK_ERROR_INVALID_VALUE, OK = LLMK_SUCCESS;
  /* positive controls: the base calls themselves and other valid variants */
  add("valid plain base (7 seqs, 5 queries)", 0, 7, 5, 0, TH_D_NONE, -1, 0, 0, OK, 0,
      NULL);
  add("valid plain base, no padding", 0, 7, 7, 0, TH_D_NONE, -1, 0, 0, OK, 0, NULL);
  add("valid spec base (5 seqs, S=2)", 1, 5, 5, 2, TH_D_NONE, -1, 0, 0, OK, 0, NULL);
  add("valid spec, S=0, spec_token data NULL", 1, 5, 5, 0, TH_D_DATA_NULL, T_SPEC, 0, 0,
      OK, 0, NULL);
  add("valid plain, num_seqs=0, all data NULL", 0, 0, 0, 0, D_ALL_DATA_NULL, -1, 0, 0, OK,
      0, NULL);
  add("valid spec, num_seqs=0, all data NULL", 1, 0, 0, 2, D_ALL_DATA_NULL, -1, 0, 0, OK,
      0, NULL);
  add("valid plain, num_queries=0, sampled data NULL", 0, 7, 0, 0, TH_D_DATA_NULL, T_SAMP,
      0, 0, OK, 0, NULL);
  add("valid plain, sampled_token_ids as [num_queries]", 0, 7, 5, 0, D_SAMPLED_RANK1, -1,
      0, 0, OK, 0, NULL);
  add("valid plain, mixed dtypes and strides", 0, 7, 5, 0, D_MIXED_LAYOUT, -1, 0, 0, OK,
      0, NULL);
  add("valid spec, mixed dtypes and strides", 1, 5, 5, 2, D_MIXED_LAYOUT, -1, 1, 0, OK, 0,
      NULL);
  add("valid plain, block_tables entries not looked up = -1", 0, 7, 5, 0, D_UNUSED_BT, -1,
      0, 0, OK, 0, NULL);
  add("valid plain, block_tables entries not looked up = INT64_MAX", 0, 7, 5, 0,
      D_UNUSED_BT, -1, 0, 1, OK, 0, NULL);
  add("valid spec, block_tables entries not looked up = -1", 1, 5, 5, 2, D_UNUSED_BT, -1,
      0, 0, OK, 0, NULL);
  add("valid plain, positions and block ids beyond 2^31 (17 rows)", 0, 17, 17, 0,
      D_BIG_VALUES, -1, 0, 0, OK, 0, NULL);
  add("valid plain, positions and block ids beyond 2^31 (17 rows, 13 queries)", 0, 17, 13,
      0, D_BIG_VALUES, -1, 0, 0, OK, 0, NULL);
  add("valid plain, 2500 rows", 0, 2500, 2500, 0, TH_D_NONE, -1, 0, 0, OK, 0, NULL);
  add("valid plain, 2500 rows, 2100 queries", 0, 2500, 2100, 0, TH_D_NONE, -1, 0, 0, OK,
      0, NULL);
  add("valid spec, 2500 rows", 1, 2500, 2500, 1, TH_D_NONE, -1, 0, 0, OK, 0, NULL);
  add("valid spec, seq_lens input negative (not read in spec mode)", 1, 5, 5, 2,
      D_SPEC_SEQ_GARBAGE, -1, 0, 0, OK, 0, NULL);

  /* phase 1: pointers */
  for (int spec = 0; spec <= 1; spec++)
    for (int k = 0; k < T_SPEC; k++) {
      snprintf(nm, sizeof nm, "%s: %s NULL", spec ? "spec" : "plain", tname[k]);
      add(nm, spec, spec ? 5 : 7, 5, 2, TH_D_NULL, k, 0, 0, NP, 1, tname[k]);
    }
  add("workspace_size pointer NULL", 0, 7, 5, 0, D_NULL_WS, -1, 0, 0, NP, 1,
      "workspace_size");
  add("plan pointer NULL", 0, 7, 5, 0, D_NULL_PLAN, -1, 0, 0, NP, 1, "plan");
  for (int k = 0; k < T_COUNT; k++) {
    int spec = k >= T_SPEC || k == T_SAMP;
    snprintf(nm, sizeof nm, "%s: %s data NULL with elements", spec ? "spec" : "plain",
             tname[k]);
    add(nm, spec, spec ? 5 : 7, 5, 2, TH_D_DATA_NULL, k, 0, 0, NP, 1, tname[k]);
  }
  /* dtype */
  for (int k = 0; k < T_COUNT; k++)
    for (int d = 0; d < 3; d++) {
      int spec = k >= T_SPEC || (k + d) % 2;
      snprintf(nm, sizeof nm, "%s: %s dtype %s", spec ? "spec" : "plain", tname[k],
               bad_dt_name[d]);
      add(nm, spec, spec ? 5 : 7, 5, 2, TH_D_DTYPE, k, bad_dt[d], 0, DT, 1, tname[k]);
    }
  /* rank */
  for (int k = 0; k < T_COUNT; k++) {
    int spec = k >= T_SPEC || k % 2;
    int two_d = k == T_SAMP || k == T_BT || k == T_SPEC;
    int64_t ranks[2] = {0, two_d ? 3 : 2};
    if (k == T_BT || k == T_SPEC) ranks[0] = 1;
    for (int i = 0; i < 2; i++) {
      snprintf(nm, sizeof nm, "%s: %s rank %" PRId64, spec ? "spec" : "plain", tname[k],
               ranks[i]);
      add(nm, spec, spec ? 5 : 7, 5, 2, ranks[i] == 2 ? D_RANK_PAIR : TH_D_RANK, k,
          ranks[i], 0, SH, 1, tname[k]);
    }
  }
  add("spec: sampled_token_ids rank 1", 1, 5, 5, 2, TH_D_RANK, T_SAMP, 1, 0, SH, 1,
      "sampled_token_ids");
  /* shapes */
  for (int spec = 0; spec <= 1; spec++)
    for (int k = 0; k < T_COUNT; k++) {
      if (!spec && k >= T_SPEC) continue;
      for (int d = -1; d <= 1; d += 2) {
        snprintf(nm, sizeof nm, "%s: %s shape[0] %+d", spec ? "spec" : "plain", tname[k],
                 d);
        add(nm, spec, spec ? 5 : 7, 5, 2, TH_D_EXTENT_ADD, k, 0, d, SH, 1, tname[k]);
      }
    }
  add("plain: sampled_token_ids shape[1]=2", 0, 7, 5, 0, TH_D_EXTENT_ADD, T_SAMP, 1, 1,
      SH, 1, "sampled_token_ids");
  add("spec: sampled_token_ids shape[1]=T+1", 1, 5, 5, 2, TH_D_EXTENT_ADD, T_SAMP, 1, 1,
      SH, 1, "sampled_token_ids");
  add("spec: sampled_token_ids shape[1]=T-1", 1, 5, 5, 2, TH_D_EXTENT_ADD, T_SAMP, 1, -1,
      SH, 1, "sampled_token_ids");
  add("spec: spec_token shape[1]+1 (outputs no longer num_seqs*T)", 1, 5, 5, 2,
      TH_D_EXTENT_ADD, T_SPEC, 1, 1, SH, 1, NULL);
  /* strides */
  for (int k = 0; k < T_COUNT; k++) {
    int spec = k >= T_SPEC || k % 2;
    int dims = (k == T_BT || k == T_SPEC) ? 2 : 1;
    for (int d = 0; d < dims; d++) {
      snprintf(nm, sizeof nm, "%s: %s strides[%d] = -1", spec ? "spec" : "plain",
               tname[k], d);
      add(nm, spec, spec ? 5 : 7, 5, 2, TH_D_STRIDE, k, d, -1, SH, 1, tname[k]);
    }
  }
  /* attributes */
  add("plain: num_seqs = -1", 0, 7, 5, 0, D_NUM_SEQS, -1, -1, 0, AT, 1, "num_seqs");
  add("spec: num_seqs = -1", 1, 5, 5, 2, D_NUM_SEQS, -1, -1, 0, AT, 1, "num_seqs");
  add("plain: num_queries = -1", 0, 7, 5, 0, D_NUM_QUERIES, -1, -1, 0, AT, 1,
      "num_queries");
  add("plain: num_queries = num_seqs + 1", 0, 7, 8, 0, TH_D_NONE, -1, 0, 0, AT, 1,
      "num_queries");
  add("plain: block_size = 0", 0, 7, 5, 0, D_BLOCK_SIZE, -1, 0, 0, AT, 1, "block_size");
  add("plain: block_size = -1", 0, 7, 5, 0, D_BLOCK_SIZE, -1, -1, 0, AT, 1, "block_size");
  add("spec: block_size = 0", 1, 5, 5, 2, D_BLOCK_SIZE, -1, 0, 0, AT, 1, "block_size");
  add("spec: block_size = -1", 1, 5, 5, 2, D_BLOCK_SIZE, -1, -1, 0, AT, 1, "block_size");
  add("only spec_token given", 0, 7, 7, 0, D_ONLY, T_SPEC, 0, 0, AT, 1,
      "spec_token|accepted_num");
  add("only accepted_num given", 0, 7, 7, 0, D_ONLY, T_ACC, 0, 0, AT, 1,
      "spec_token|accepted_num");
  add("spec: num_queries = num_seqs - 1", 1, 5, 5, 2, D_NUM_QUERIES, -1, 4, 0, AT, 1,
      "num_queries");

  /* phase 2: values */
  const char *oor = "block_tables|max_blocks|seq_lens";
  add("plain: seq_lens[0] = -1", 0, 7, 5, 0, V_SEQ, -1, 0, -1, VA, 2, "seq_lens");
  add("plain: seq_lens[6] = -1 (last row)", 0, 7, 7, 0, V_SEQ, -1, 6, -1, VA, 2,
      "seq_lens");
  add("plain: seq_lens[2] = max_blocks*block_size", 0, 7, 5, 0, V_SEQ, -1, 2, 64, VA, 2,
      oor);
  add("plain: seq_lens[4] = 2^40", 0, 7, 5, 0, V_SEQ, -1, 4, INT64_C(1) << 40, VA, 2,
      oor);
  add("plain: seq_lens[6] = 64 (last row, no padding)", 0, 7, 7, 0, V_SEQ, -1, 6, 64, VA,
      2, oor);
  add("plain, 2500 rows: seq_lens[2400] = 64 (third 1024-row chunk)", 0, 2500, 2500, 0,
      V_SEQ, -1, 2400, 64, VA, 2, oor);
  add("plain, 2500 rows: seq_lens[2499] = -1", 0, 2500, 2500, 0, V_SEQ, -1, 2499, -1, VA,
      2, "seq_lens");
  add("plain, 2500 rows: looked-up block id of row 1500 = -1", 0, 2500, 2500, 0,
      V_BLK_LOOKUP, -1, 1500, -1, VA, 2, "block_tables");
  add("spec, 2500 rows: accepted_num[2499] = -1", 1, 2500, 2500, 1, V_ACC, -1, 2499, -1,
      VA, 2, "accepted_num");
  add("plain: looked-up block id of row 1 = -1", 0, 7, 5, 0, V_BLK_LOOKUP, -1, 1, -1, VA,
      2, "block_tables");
  add("plain: looked-up block id of row 4 = INT64_MIN", 0, 7, 5, 0, V_BLK_LOOKUP, -1, 4,
      INT64_MIN, VA, 2, "block_tables");
  add("plain: i32 slot_mapping overflow (row 2)", 0, 7, 5, 0, V_SLOT_I32, -1, 2, 0, VA, 2,
      "slot_mapping");
  add("plain: i32 seq_lens overflow (row 1)", 0, 7, 5, 0, V_SEQ_I32, -1, 1, 0, VA, 2,
      "seq_lens");
  add("plain: i32 input_positions overflow (row 3)", 0, 7, 5, 0, V_POS_I32, -1, 3, 0, VA,
      2, "input_positions");
  add("plain: i32 input_tokens overflow (row 0)", 0, 7, 5, 0, V_TOK_I32, -1, 0, 0, VA, 2,
      "input_tokens");
  add("plain: int64 overflow of block id * block_size (row 0)", 0, 7, 5, 0, V_I64_SLOT,
      -1, 0, 0, VA, 2, "slot_mapping|block_tables|overflow");
  add("valid plain: slot = INT64_MAX - 1 (block_size 3, block id INT64_MAX/3)", 0, 7, 5,
      0, V_SLOT_EDGE, -1, 2, 0, OK, 0, NULL);
  add("valid plain: slot = INT64_MAX (block_size 1, block id INT64_MAX)", 0, 7, 5, 0,
      V_SLOT_EDGE, -1, 3, 1, OK, 0, NULL);
  add("plain: slot = INT64_MAX + 1 (block_size 3, block id INT64_MAX/3)", 0, 7, 5, 0,
      V_SLOT_EDGE, -1, 2, 2, VA, 2, "slot_mapping|block_tables|overflow");
  add("plain: int64 overflow of seq_lens + 1 (row 2)", 0, 7, 5, 0, V_I64_SEQ, -1, 2, 0,
      VA, 2, "seq_lens|overflow");
  add("spec: sampled row 0 starts with -1", 1, 5, 5, 2, V_SAMP0, -1, 0, 0, VA, 2,
      "sampled_token_ids");
  add("spec: sampled row 3 starts with -1", 1, 5, 5, 2, V_SAMP0, -1, 3, 0, VA, 2,
      "sampled_token_ids");
  add("spec: accepted_num[2] = -1", 1, 5, 5, 2, V_ACC, -1, 2, -1, VA, 2, "accepted_num");
  add("spec: accepted_num[4] = 100 (block out of range)", 1, 5, 5, 2, V_ACC, -1, 4, 100,
      VA, 2, "block_tables|max_blocks|input_positions|accepted_num");
  add("spec: input_positions[4] = -1", 1, 5, 5, 2, V_POS, -1, 4, -1, VA, 2,
      "input_positions");
  add("spec: input_positions[14] = 62 (block out of range)", 1, 5, 5, 2, V_POS, -1, 14,
      62, VA, 2, "block_tables|max_blocks|input_positions");
  add("spec: negative block ids in row 1", 1, 5, 5, 2, V_BLK_ROW, -1, 1, -5, VA, 2,
      "block_tables");
  add("spec: i32 slot_mapping overflow (row 3)", 1, 5, 5, 2, V_SLOT_I32, -1, 3, 0, VA, 2,
      "slot_mapping");
  add("spec: i32 seq_lens overflow (row 0)", 1, 5, 5, 2, V_SEQ_I32_SPEC, -1, 0, 0, VA, 2,
      "seq_lens");
  add("spec: i32 input_positions overflow (row 2)", 1, 5, 5, 2, V_POS_I32_SPEC, -1, 2, 0,
      VA, 2, "input_positions");
  add("spec: i32 input_tokens overflow (spec_token row 1)", 1, 5, 5, 2, V_TOK_I32, -1, 1,
      0, VA, 2, "input_tokens");
  add("spec: int64 overflow of block id * block_size (row 4)", 1, 5, 5, 2, V_I64_SLOT, -1,
      4, 0, VA, 2, "slot_mapping|block_tables|overflow");
  add("spec: int64 overflow of position + accepted + 1", 1, 5, 5, 2, V_POS, -1, 3,
      INT64_MAX - 1, VA, 2, "input_positions|accepted_num|overflow");
}

static void run_row(const void *row) {
  const err_row *r = row;
  static int sentinel;
  as_case c;
  fx_init(&c, r->spec, r->ns, r->nq, r->S);
  apply_pre(&c, r);
  if (r->phase != 1) {
    /* the table and the reference must agree on valid inputs and value errors */
    llmk_status want = case_expect(&c);
    TU_CHECK(want == r->expect, "%s: reference predicts %d, table says %d", r->name,
             (int)want, (int)r->expect);
  }
  tset s, e;
  tset_build(&s, &c, 7);
  tset_copy(&e, &s);
  apply_post(&s, &c, r);
  size_t ws = 12345;
  llmk_plan *plan = (llmk_plan *)(void *)&sentinel;
  th_reset_error();
  llmk_status st = call_p1(&s, c.ns, c.nq, c.bs, r->defect == D_NULL_WS ? NULL : &ws,
                           r->defect == D_NULL_PLAN ? NULL : &plan);
  if (r->phase == 1) {
    th_check_refused(r->name, st, r->expect, r->defect == D_NULL_PLAN ? NULL : &plan,
                     r->defect == D_NULL_WS ? NULL : &ws, "advance_step", r->msg);
    if (st == LLMK_SUCCESS) llmk_plan_destroy(plan); /* never run a bad descriptor's */
  } else {
    int accepted = st == LLMK_SUCCESS && plan;
    st = th_check_run(r->name, st, plan, ws, llmk_advance_step, r->expect, "advance_step",
                      r->msg);
    /* the row must be named; rows 0 and 1 are too common as digits to tell */
    if (accepted && r->expect != LLMK_SUCCESS && st != LLMK_SUCCESS && !r->spec &&
        r->a1 >= 2) {
      char rowno[24];
      snprintf(rowno, sizeof rowno, "%" PRId64, r->a1);
      TU_CHECK(strstr(llmk_last_error(), rowno) != NULL,
               "%s: message '%s' names no row %s", r->name, llmk_last_error(), rowno);
    }
    if (accepted && r->expect == LLMK_SUCCESS) tset_store_out(&e, &c);
    if (st != r->expect) { /* already reported; only the guards are worth a look */
      for (int k = 0; k < T_COUNT; k++)
        if (s.built[k])
          TU_CHECK(tu_buf_check(&s.x[k].buf), "%s: %s guards", r->name, tname[k]);
      tset_free(&s);
      tset_free(&e);
      case_free(&c);
      return;
    }
  }
  tset_same(&s, &e, &c, r->name);
  tset_free(&s);
  tset_free(&e);
  case_free(&c);
}

static void test_errors(void) {
  build_rows();
  th_table_run(&rows, "error table", run_row);
}

/* --------------------------------------------------------------- lifecycle */

static void test_lifecycle(void) {
  static int sentinel;
  for (int spec = 0; spec <= 1; spec++) {
    const char *mode = spec ? "spec" : "plain";
    as_case c;
    fx_init(&c, spec, spec ? 5 : 7, 5, 2);
    err_row mixed = {.defect = D_MIXED_LAYOUT, .a1 = spec};
    apply_pre(&c, &mixed);
    TU_CHECK(case_expect(&c) == LLMK_SUCCESS, "%s lifecycle base invalid", mode);

    /* repeatable: 3 runs = 3 reference steps */
    {
      tset s, e;
      tset_build(&s, &c, 21);
      tset_copy(&e, &s);
      size_t ws = 0;
      llmk_plan *plan = NULL;
      TU_CHECK(call_p1(&s, c.ns, c.nq, c.bs, &ws, &plan) == LLMK_SUCCESS, "%s: phase 1",
               mode);
      TU_CHECK(llmk_plan_set_repeatable(plan) == LLMK_SUCCESS, "%s: set_repeatable",
               mode);
      as_case step = c; /* shares arrays; advanced in place, c is rebuilt below */
      for (int run = 0; run < 3; run++) {
        llmk_status st = run_plan(plan, ws, NULL);
        TU_CHECK(st == LLMK_SUCCESS, "%s: repeatable run %d: %d ('%s')", mode, run,
                 (int)st, llmk_last_error());
        if (run > 0) {
          case_advance(&step);
          TU_CHECK(case_expect(&step) == LLMK_SUCCESS, "%s: reference step %d", mode,
                   run);
        }
      }
      tset_store_out(&e, &step);
      char label[64];
      snprintf(label, sizeof label, "%s: repeatable plan run 3 times", mode);
      tset_same(&s, &e, &step, label);
      TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS, "%s: destroy repeatable plan",
               mode);
      tset_free(&s);
      tset_free(&e);
      for (int k = 0; k < T_COUNT; k++) {
        c.v[k] = step.v[k];
        c.out[k] = step.out[k];
      }
    }
    case_free(&c);
    fx_init(&c, spec, spec ? 5 : 7, 5, 2);
    TU_CHECK(case_expect(&c) == LLMK_SUCCESS, "%s lifecycle base invalid", mode);

    /* non-repeatable: the second run of the same pointer is detected */
    {
      tset s, e;
      tset_build(&s, &c, 22);
      tset_copy(&e, &s);
      size_t ws = 0;
      llmk_plan *plan = NULL;
      TU_CHECK(call_p1(&s, c.ns, c.nq, c.bs, &ws, &plan) == LLMK_SUCCESS, "%s: phase 1",
               mode);
      TU_CHECK(run_plan(plan, ws, NULL) == LLMK_SUCCESS, "%s: first run ('%s')", mode,
               llmk_last_error());
      tset_store_out(&e, &c);
      llmk_status st = run_plan(plan, ws, NULL);
      TU_CHECK(st == LLMK_ERROR_INVALID_PLAN, "%s: second run of a consumed plan: %d",
               mode, (int)st);
      char label[64];
      snprintf(label, sizeof label, "%s: consumed plan run again", mode);
      tset_same(&s, &e, &c, label);
      tset_free(&s);
      tset_free(&e);
    }

    /* a plan destroyed without running */
    {
      tset s;
      tset_build(&s, &c, 23);
      size_t ws = 0;
      llmk_plan *plan = NULL;
      TU_CHECK(call_p1(&s, c.ns, c.nq, c.bs, &ws, &plan) == LLMK_SUCCESS, "%s: phase 1",
               mode);
      TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS, "%s: destroy unrun plan", mode);
      tset_free(&s);
    }

    /* workspace smaller than required */
    {
      tset s, e;
      tset_build(&s, &c, 24);
      tset_copy(&e, &s);
      size_t ws = 0;
      llmk_plan *plan = (llmk_plan *)(void *)&sentinel;
      TU_CHECK(call_p1(&s, c.ns, c.nq, c.bs, &ws, &plan) == LLMK_SUCCESS, "%s: phase 1",
               mode);
      if (ws == 0) {
        printf("%s: workspace size is 0: WORKSPACE_TOO_SMALL case skipped\n", mode);
        TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS, "%s: destroy", mode);
      } else {
        th_check_ws_too_small(llmk_advance_step, plan, ws, mode);
        tset_same(&s, &e, &c, "workspace too small");
      }
      tset_free(&s);
      tset_free(&e);
    }
    case_free(&c);
  }
  th_check_null_plan(llmk_advance_step, "advance_step");
}

/* ------------------------------------------------------------ flat lookup */

/* A layout of any rank over `shape`: 0 contiguous, 1 padded, 2 dims reversed in memory
 * (dim 0 innermost: flat order differs from memory order), 3 a random dim order with
 * element strides 1..3 and padding; inputs may broadcast one dim (stride 0). */
static void lay_any(layout *l, llmk_dtype dt, int rank, const int64_t *shape, int input) {
  memset(l, 0, sizeof *l);
  l->dtype = dt;
  l->rank = rank;
  int order[3] = {0, 1, 2}; /* order[0]: the innermost dim */
  int kind = (int)tu_rand_range(0, 3);
  for (int k = 0; k < rank; k++) {
    l->shape[k] = shape[k];
    order[k] = kind == 2 ? k : rank - 1 - k;
  }
  if (kind == 3)
    for (int k = rank - 1; k > 0; k--) {
      int j = (int)tu_rand_range(0, k), t = order[k];
      order[k] = order[j];
      order[j] = t;
    }
  int64_t acc = 1;
  for (int i = 0; i < rank; i++) {
    int d = order[i];
    int64_t st = acc * (kind == 3 ? tu_rand_range(1, 3) : 1);
    l->strides[d] = st;
    acc = st * max64(shape[d], 1) + (kind == 1 || kind == 3 ? tu_rand_range(0, 3) : 0);
  }
  if (input && tu_rand_range(0, 7) == 0) l->strides[tu_rand_range(0, rank - 1)] = 0;
}

/* dim 0 = rows, rank 1..3, the other dims 1..3. */
static void lay_rows(layout *l, llmk_dtype dt, int64_t nrows, int input) {
  int64_t shape[3] = {nrows, tu_rand_range(1, 3), tu_rand_range(1, 3)};
  lay_any(l, dt, (int)tu_rand_range(1, 3), shape, input);
}

static const int64_t flat_ns[] = {0, 1, 2, 3, 5, 7, 16, 17, 100, 1024, 2500, 1, 2, 3, 7};
#define FLAT_NS_COUNT ((int)(sizeof flat_ns / sizeof flat_ns[0]))

static void gen_flat_case(as_case *c, int idx) {
  memset(c, 0, sizeof *c);
  c->flat = 1;
  c->ns = flat_ns[idx % FLAT_NS_COUNT];
  int r = (int)tu_rand_range(0, 3);
  c->nq = r == 0 ? 0 : r == 1 ? c->ns : tu_rand_range(0, c->ns);
  int big = tu_rand_range(0, 9) == 0;
  static const int64_t bs_list[] = {1, 2, 16, 128};
  c->bs = big ? INT64_C(1) << tu_rand_range(16, 40) : bs_list[tu_rand_range(0, 3)];
  for (int k = 0; k < T_SPEC; k++) {
    c->has[k] = c->pass[k] = 1;
    lay_rows(&c->L[k], rand_dt(), k == T_SAMP ? c->nq : c->ns, !is_output[k]);
  }
  case_alloc(c);
  const int64_t numel = lay_numel(&c->L[T_BT]), cap = numel * c->bs;
  for (int k = 0; k < T_SPEC; k++)
    if (is_output[k])
      for (int64_t i = 0; i < lay_numel(&c->L[k]); i++)
        c->v[k][i] = tu_rand_range(-1000000, 1000000);
  llmk_dtype btd = c->L[T_BT].dtype;
  for (int64_t i = 0; i < numel; i++)
    c->v[T_BT][i] = big ? clamp_dt(tu_rand_range(0, INT64_C(1) << 40), btd)
                        : tu_rand_range(0, 100000);
  for (int64_t i = 0; i < lay_numel(&c->L[T_SAMP]); i++)
    c->v[T_SAMP][i] = rand_token(big, c->L[T_SAMP].dtype);
  llmk_dtype sd = c->L[T_SEQ].dtype;
  for (int64_t q = 0; q < c->nq; q++)
    c->v[T_SEQ][q] = rand_pos(min64(cap - 1, dt_max(sd)), c->bs);
  if (tu_rand_range(0, 9) == 0 && c->nq > 0) { /* one value defect */
    int64_t q = tu_rand_range(0, c->nq - 1);
    switch (tu_rand_range(0, 2)) {
      case 0:
        c->v[T_SEQ][q] = -tu_rand_range(1, 5);
        break;
      case 1:
        c->v[T_SEQ][q] = clamp_dt(cap + tu_rand_range(0, 3 * c->bs), sd);
        break;
      default:
        c->v[T_BT][c->v[T_SEQ][q] / c->bs] = -tu_rand_range(1, 1000);
    }
  }
  case_settle(c);
}

#define FLAT_CASES 150

static void test_flat_random(void) {
  static const int threads[3] = {0, 1, 2};
  th_sweep sw;
  th_sweep_init(&sw, threads, 3);
  int n_err = 0, by_rank[4] = {0};
  for (int i = 0; i < FLAT_CASES; i++) {
    as_case c;
    gen_flat_case(&c, i);
    n_err += c.expect != LLMK_SUCCESS;
    by_rank[c.L[T_BT].rank]++;
    char label[160];
    snprintf(label, sizeof label,
             "flat case %d (ns=%" PRId64 " nq=%" PRId64 " bs=%" PRId64
             " table rank %d numel %" PRId64 ")",
             i, c.ns, c.nq, c.bs, c.L[T_BT].rank, lay_numel(&c.L[T_BT]));
    sweep_case w;
    memset(&w, 0, sizeof w);
    w.c = &c;
    w.seed = 5000 + (uint64_t)i;
    th_sweep_run(&sw, 1, NULL, label, sweep_one, &w);
    if (w.have) tset_free(&w.last);
    case_free(&c);
  }
  printf(
      "flat random cases: %d (%d expected INVALID_VALUE; tables of rank 1/2/3: "
      "%d/%d/%d), every isa x ctx NULL, 1 thread, 2 threads\n",
      FLAT_CASES, n_err, by_rank[1], by_rank[2], by_rank[3]);
  th_sweep_free(&sw);
}

/* The flat base call: 4 rows, 3 queries, bs 16, block_tables [4, 2, 3] (numel 24,
 * row_len 6); row 2's position 100 looks up flat[6], beyond its own row of 6. */
static void flat_fx(as_case *c) {
  memset(c, 0, sizeof *c);
  c->flat = 1;
  c->ns = 4;
  c->nq = 3;
  c->bs = 16;
  int64_t samp[2] = {3, 1}, bt[3] = {4, 2, 3};
  for (int k = 0; k < T_SPEC; k++) {
    c->has[k] = c->pass[k] = 1;
    lay_make(&c->L[k], LLMK_I64, 1, 4, 0, 0);
  }
  c->L[T_SAMP].rank = 2;
  memcpy(c->L[T_SAMP].shape, samp, sizeof samp);
  th_contiguous_strides(2, samp, c->L[T_SAMP].strides);
  c->L[T_BT].rank = 3;
  memcpy(c->L[T_BT].shape, bt, sizeof bt);
  th_contiguous_strides(3, bt, c->L[T_BT].strides);
  case_alloc(c);
  static const int64_t seq[4] = {5, 40, 100, 9};
  for (int64_t q = 0; q < 4; q++) {
    c->v[T_TOK][q] = 900 + q;
    c->v[T_POS][q] = 800 + q;
    c->v[T_SLOT][q] = 700 + q;
    c->v[T_SEQ][q] = seq[q];
  }
  for (int64_t q = 0; q < 3; q++) c->v[T_SAMP][q] = 1000 + q;
  for (int64_t i = 0; i < 24; i++) c->v[T_BT][i] = 10 * i + 1;
}

typedef struct flat_row {
  const char *name;
  int defect, tensor;
  int64_t a1, a2;
  llmk_status expect;
  int phase; /* 1, or 2 (0: must succeed) */
  const char *msg;
} flat_row;

#define FR1(n, d, k, a1, a2, st, m) \
  { n, d, k, a1, a2, LLMK_ERROR_##st, 1, m }
#define FR1T(n, d, a1, a2, st)                                                 \
  FR1(n " input_tokens", d, T_TOK, a1, a2, st, "input_tokens"),                \
      FR1(n " sampled_token_ids", d, T_SAMP, a1, a2, st, "sampled_token_ids"), \
      FR1(n " input_positions", d, T_POS, a1, a2, st, "input_positions"),      \
      FR1(n " seq_lens", d, T_SEQ, a1, a2, st, "seq_lens"),                    \
      FR1(n " slot_mapping", d, T_SLOT, a1, a2, st, "slot_mapping"),           \
      FR1(n " block_tables", d, T_BT, a1, a2, st, "block_tables")

static const flat_row flat_rows[] = {
    FR1T("flat rank 0", TH_D_RANK, 0, 0, INVALID_SHAPE),
    FR1T("flat dim 0 + 1", TH_D_EXTENT_ADD, 0, 1, INVALID_SHAPE),
    FR1T("flat fewer elements than rows", D_FEW, 0, 0, INVALID_SHAPE),
    FR1T("flat NULL", TH_D_NULL, 0, 0, NULL_POINTER),
    FR1T("flat data NULL", TH_D_DATA_NULL, 0, 0, NULL_POINTER),
    FR1T("flat f32", TH_D_DTYPE, LLMK_F32, 0, INVALID_DTYPE),
    FR1T("flat negative stride", TH_D_STRIDE, 0, -1, INVALID_SHAPE),
    FR1("flat NULL workspace_size", D_NULL_WS, -1, 0, 0, NULL_POINTER, "workspace_size"),
    FR1("flat NULL plan", D_NULL_PLAN, -1, 0, 0, NULL_POINTER, "plan"),
    FR1("flat num_seqs -1", D_NUM_SEQS, -1, -1, 0, INVALID_ATTRIBUTE, "num_seqs"),
    FR1("flat num_queries -1", D_NUM_QUERIES, -1, -1, 0, INVALID_ATTRIBUTE,
        "num_queries"),
    FR1("flat num_queries > num_seqs", D_NUM_QUERIES, -1, 5, 0, INVALID_ATTRIBUTE,
        "num_queries"),
    FR1("flat block_size 0", D_BLOCK_SIZE, -1, 0, 0, INVALID_ATTRIBUTE, "block_size"),
    {"flat valid (row 2 beyond its own row)", TH_D_NONE, -1, 0, 0, LLMK_SUCCESS, 0, NULL},
    {"flat seq_lens[2] < 0", F_NEG_SEQ, T_SEQ, -1, 0, LLMK_ERROR_INVALID_VALUE, 2,
     "seq_lens"},
    {"flat seq_lens[2] INT64_MAX", F_SEQ_MAX, T_SEQ, 0, 0, LLMK_ERROR_INVALID_VALUE, 2,
     "seq_lens"},
    {"flat pos / block_size == numel", F_BEYOND, T_SEQ, 24 * 16, 0,
     LLMK_ERROR_INVALID_VALUE, 2, "block_tables|numel"},
    {"flat pos / block_size > numel", F_BEYOND, T_SEQ, 1000 * 16, 0,
     LLMK_ERROR_INVALID_VALUE, 2, "block_tables|numel"},
    {"flat negative block id", F_NEG_BLOCK, T_BT, -5, 0, LLMK_ERROR_INVALID_VALUE, 2,
     "block_tables|block"},
    {"flat slot overflows (block + row offset)", F_SLOT_OVF, T_BT, INT64_MAX / 16 - 1, 0,
     LLMK_ERROR_INVALID_VALUE, 2, "slot_mapping|overflow"},
    {"flat slot_mapping i32 does not fit", F_SLOT_I32, T_SLOT, INT64_C(1) << 28, 0,
     LLMK_ERROR_INVALID_VALUE, 2, "slot_mapping"},
    {"flat input_tokens i32 does not fit", F_TOK_I32, T_TOK, INT64_C(1) << 40, 0,
     LLMK_ERROR_INVALID_VALUE, 2, "input_tokens"},
    {"flat seq_lens i32 + 1 does not fit", F_SEQ_I32, T_SEQ, INT32_MAX, 0,
     LLMK_ERROR_INVALID_VALUE, 2, "seq_lens"},
    {"flat input_positions i32 does not fit", F_POS_I32, T_POS, INT64_C(1) << 40, 0,
     LLMK_ERROR_INVALID_VALUE, 2, "input_positions"},
};

/* Value defects, before the tensors are built (row 2, a query). */
static void flat_pre(as_case *c, const flat_row *r) {
  switch (r->defect) {
    case F_NEG_SEQ:
    case F_BEYOND:
      c->v[T_SEQ][2] = r->a1;
      break;
    case F_SEQ_MAX:
      c->v[T_SEQ][2] = INT64_MAX;
      break;
    case F_NEG_BLOCK:
    case F_SLOT_OVF:
      c->v[T_BT][c->v[T_SEQ][2] / c->bs] = r->a1;
      break;
    case F_SLOT_I32:
      c->L[T_SLOT].dtype = LLMK_I32;
      c->v[T_BT][c->v[T_SEQ][2] / c->bs] = r->a1;
      break;
    case F_TOK_I32:
      c->L[T_TOK].dtype = LLMK_I32;
      c->v[T_SAMP][2] = r->a1;
      break;
    case F_SEQ_I32: /* a block size that keeps INT32_MAX / bs inside the table */
      c->L[T_SEQ].dtype = LLMK_I32;
      c->bs = INT64_C(1) << 28;
      c->v[T_SEQ][2] = r->a1;
      break;
    case F_POS_I32: /* the position fits i64 seq_lens, not an i32 input_positions */
      c->L[T_POS].dtype = LLMK_I32;
      c->bs = INT64_C(1) << 36;
      c->v[T_SEQ][2] = r->a1;
      break;
    default:
      break;
  }
}

static void flat_row_run(const void *row) {
  static int sentinel;
  const flat_row *r = row;
  as_case c;
  flat_fx(&c);
  flat_pre(&c, r);
  if (r->phase != 1) {
    llmk_status want = case_expect(&c);
    TU_CHECK(want == r->expect, "%s: reference predicts %d, table says %d", r->name,
             (int)want, (int)r->expect);
  }
  tset s, e;
  tset_build(&s, &c, 31);
  tset_copy(&e, &s);
  apply_post(
      &s, &c,
      &(err_row){.defect = r->defect, .tensor = r->tensor, .a1 = r->a1, .a2 = r->a2});
  th_snap snap = {0};
  for (int k = 0; k < T_SPEC; k++) th_snap_add(&snap, &s.x[k].buf, tname[k]);
  size_t ws = 12345;
  llmk_plan *plan = (llmk_plan *)(void *)&sentinel;
  th_reset_error();
  llmk_status st = call_p1(&s, c.ns, c.nq, c.bs, r->defect == D_NULL_WS ? NULL : &ws,
                           r->defect == D_NULL_PLAN ? NULL : &plan);
  if (r->phase == 1) {
    th_check_refused(r->name, st, r->expect, r->defect == D_NULL_PLAN ? NULL : &plan,
                     r->defect == D_NULL_WS ? NULL : &ws, "advance_step", r->msg);
    if (st == LLMK_SUCCESS) llmk_plan_destroy(plan);
    th_snap_unchanged(&snap, r->name);
  } else {
    int accepted = st == LLMK_SUCCESS && plan;
    th_check_run(r->name, st, plan, ws, llmk_advance_step, r->expect, "advance_step",
                 r->msg);
    if (accepted && r->expect != LLMK_SUCCESS) {
      th_snap_unchanged(&snap, r->name);
    } else if (accepted) {
      tset_store_out(&e, &c);
      tset_same(&s, &e, &c, r->name);
    }
  }
  th_snap_free(&snap);
  tset_free(&s);
  tset_free(&e);
  case_free(&c);
}

/* The formula by hand: a rank-1 table (row_len 1) and a padding row. */
static void test_flat_sample(void) {
  as_case c = {0};
  c.flat = 1;
  c.ns = 3;
  c.nq = 2;
  c.bs = 4;
  for (int k = 0; k < T_SPEC; k++) {
    c.has[k] = c.pass[k] = 1;
    lay_make(&c.L[k], k == T_SAMP || k == T_SLOT ? LLMK_I32 : LLMK_I64,
             k == T_SAMP ? 2 : 1, k == T_SAMP ? 2 : 3, 1, k == T_SAMP ? 4 : 1);
  }
  case_alloc(&c);
  static const int64_t bt[3] = {10, 20, 30}, seq[3] = {5, 9, 7}, samp[2] = {77, 88};
  static const int64_t etok[3] = {77, 88, 0}, epos[3] = {5, 9, 0}, eseq[3] = {6, 10, 7},
                       eslot[3] = {20 * 4 + 1, (30 + 1) * 4 + 1, -1};
  for (int q = 0; q < 3; q++) {
    c.v[T_BT][q] = bt[q];
    c.v[T_SEQ][q] = seq[q];
    c.v[T_TOK][q] = c.v[T_POS][q] = c.v[T_SLOT][q] = 55;
  }
  for (int q = 0; q < 2; q++) c.v[T_SAMP][q] = samp[q];
  TU_CHECK(case_expect(&c) == LLMK_SUCCESS, "flat sample: reference refuses");
  TU_CHECK(same_vals(c.out[T_TOK], etok, 3) && same_vals(c.out[T_POS], epos, 3) &&
               same_vals(c.out[T_SEQ], eseq, 3) && same_vals(c.out[T_SLOT], eslot, 3),
           "flat sample: the reference disagrees with the formula");
  c.expect = LLMK_SUCCESS;
  run_case(&c, 41, NULL, "flat sample (rank-1 table, padding row)");
  case_free(&c);
}

static void test_flat(void) {
  test_flat_sample();
  th_run_rows("flat error table", flat_rows,
              (int)(sizeof flat_rows / sizeof flat_rows[0]), sizeof flat_rows[0],
              flat_row_run);
  test_flat_random();
}

/* ------------------------------------------------------------ regressions */

static void reg_desc(llmk_tensor *t, int rank, const int64_t *shape) {
  static const int64_t one[2] = {1, 1};
  if (llmk_tensor_init(t, LLMK_I64, rank, shape, one, NULL) != LLMK_SUCCESS)
    th_die("llmk_tensor_init rejected a regression layout");
}

/* Finding 10: spec_token.shape[1] = S = INT64_MAX made S + 1 overflow (signed UB) before
 * num_seqs * (S + 1) was checked; num_seqs 0 keeps every tensor empty. */
static void test_regressions(void) {
  const char *label = "speculative, S = INT64_MAX";
  llmk_tensor tok, sampled, pos, lens, slots, tables, spec, acc;
  reg_desc(&tok, 1, (int64_t[]){0});
  reg_desc(&sampled, 2, (int64_t[]){0, 1});
  reg_desc(&pos, 1, (int64_t[]){0});
  reg_desc(&lens, 1, (int64_t[]){0});
  reg_desc(&slots, 1, (int64_t[]){0});
  reg_desc(&tables, 2, (int64_t[]){0, 1});
  reg_desc(&spec, 2, (int64_t[]){0, INT64_MAX});
  reg_desc(&acc, 1, (int64_t[]){0});
  size_t ws = 1;
  llmk_plan *plan = NULL;
  th_reset_error();
  llmk_status st = llmk_advance_step_get_workspace_size(
      &tok, &sampled, &pos, &lens, &slots, &tables, &spec, &acc, 0, 0, 4, &ws, &plan);
  th_check_refused(label, st, LLMK_ERROR_INVALID_SHAPE, &plan, &ws, "advance_step",
                   "spec_token");
  if (st == LLMK_SUCCESS) llmk_plan_destroy(plan);
  /* S = INT64_MAX - 1 (S + 1 fits; num_seqs 0: len 0): a valid empty call */
  reg_desc(&spec, 2, (int64_t[]){0, INT64_MAX - 1});
  reg_desc(&sampled, 2, (int64_t[]){0, INT64_MAX});
  st = llmk_advance_step_get_workspace_size(&tok, &sampled, &pos, &lens, &slots, &tables,
                                            &spec, &acc, 0, 0, 4, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS, "speculative, S = INT64_MAX - 1: phase 1 %d ('%s')",
           (int)st, llmk_last_error());
  if (st == LLMK_SUCCESS) {
    st = llmk_advance_step(NULL, 0, plan, NULL);
    TU_CHECK(st == LLMK_SUCCESS, "speculative, S = INT64_MAX - 1: phase 2 %d ('%s')",
             (int)st, llmk_last_error());
  }
}

int main(void) {
  double t0 = tu_now();
  tu_seed(20240601);
  test_regressions();
  test_samples();
  double t1 = tu_now();
  test_errors();
  double t2 = tu_now();
  test_lifecycle();
  test_random_and_determinism();
  test_flat();
  double t3 = tu_now();
  printf("time %.2f s (samples %.2f, error table %.2f, lifecycle + random %.2f)\n",
         t3 - t0, t1 - t0, t2 - t1, t3 - t2);
  return tu_finish("test_advance_step");
}
