/* SPDX-License-Identifier: Apache-2.0 */
/* fused_causal_conv1d: phase 1 (validate, plan); phase 2 is values.c and run.c.
 *
 * The run is split into items (sequence, block of channels); items touch disjoint x
 * rows and cache lines (phase 2 rejects lines written twice or written by one sequence
 * and read by another), so any split gives the same bytes. Within an item: the K-1
 * history rows of the conv are copied aside first, then the state line and the APC
 * fill lines are written from the history and the original x rows, and last the conv
 * streams over the tokens, keeping the last K originals as f32 in a ring. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/op.h"
#include "core/overlap.h"
#include "ops/fused_causal_conv1d/internal.h"

const char llmk__fcc_op[] = "fused_causal_conv1d";
#define op llmk__fcc_op

/* Rows of a [n0, n1, row] view must not overlap: one stride nests the other. */
static bool rows_disjoint(int64_t n0, int64_t s0, int64_t n1, int64_t s1, int64_t row) {
  if (n0 <= 1) return n1 <= 1 || s1 >= row;
  if (n1 <= 1) return s0 >= row;
  return (s1 >= row && s0 >= (n1 - 1) * s1 + row) ||
         (s0 >= row && s1 >= (n0 - 1) * s0 + row);
}

typedef struct named {
  const llmk_tensor *t;
  const char *name;
} named;

static llmk_status check_vec(const named *a, int64_t n, const char *what) {
  LLMK__TRY(llmk__check_rank(op, a->name, a->t, 1));
  return llmk__check_dim(op, a->name, a->t, 0, n, what);
}

/* v2: any channel strides (the rows checks below then apply to unit ones only; a
 * written tensor's self-overlap is refused by the overlap check). */
static llmk_status validate(const named *t, int64_t pad_slot_id, int64_t max_query_len,
                            int64_t residual, int64_t block_size, int64_t conv_mode,
                            llmk_activation activation, bool v2, conv_plan *p) {
  enum { X, WEIGHT, CS, QSL, CI, NACC, NCT, FIRST, LAST, INIT, BIAS, N };
  /* 1. required tensors */
  for (int i = 0; i < 3; i++)
    if (!t[i].t) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "%s is NULL", t[i].name);
  const llmk_tensor *x = t[X].t, *w = t[WEIGHT].t, *cs = t[CS].t;
  if (x->rank == 2 && !t[QSL].t)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op,
                       "query_start_loc is NULL but x is 2-D ([T, dim] needs it)");
  /* 2. dtypes */
  LLMK__TRY(llmk__check_dtype(op, "x", x, LLMK__FLOATS));
  llmk_dtype dt = x->dtype;
  uint32_t xw = LLMK__DT(dt) | LLMK__DT(LLMK_F32);
  LLMK__TRY(llmk__check_dtype(op, "weight", w, xw));
  LLMK__TRY(llmk__check_dtype(op, "conv_states", cs, LLMK__DT(dt)));
  if (t[BIAS].t) LLMK__TRY(llmk__check_dtype(op, "bias", t[BIAS].t, xw));
  for (int i = QSL; i <= INIT; i++)
    if (t[i].t) LLMK__TRY(llmk__check_dtype(op, t[i].name, t[i].t, LLMK__INTS));
  /* 3. ranks and shapes */
  if (x->rank != 2 && x->rank != 3)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "x.rank=%d must be 2 ([T, dim]) or 3 ([batch, S, dim])",
                       (int)x->rank);
  if (x->rank == 3 && t[QSL].t)
    return llmk__error(
        LLMK_ERROR_INVALID_SHAPE, op,
        "query_start_loc must be NULL with a 3-D x (sequences of S tokens)");
  int64_t dim = x->shape[x->rank - 1], batch;
  if (x->rank == 2) {
    LLMK__TRY(llmk__check_rank(op, "query_start_loc", t[QSL].t, 1));
    if (t[QSL].t->shape[0] < 1)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "query_start_loc.shape[0]=0 must be batch+1 >= 1");
    batch = t[QSL].t->shape[0] - 1;
  } else {
    batch = x->shape[0];
  }
  LLMK__TRY(llmk__check_rank(op, "weight", w, 2));
  if (w->shape[0] < 2 || w->shape[0] > 4)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "weight.shape[0]=%" PRId64 " (K) must be in [2, 4]", w->shape[0]);
  int K = (int)w->shape[0];
  LLMK__TRY(llmk__check_dim(op, "weight", w, 1, dim, "dim"));
  LLMK__TRY(llmk__check_rank(op, "conv_states", cs, 3));
  LLMK__TRY(llmk__check_dim(op, "conv_states", cs, 2, dim, "dim"));
  if (cs->shape[1] < K - 1)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "conv_states.shape[1]=%" PRId64 " must be >= K-1=%d", cs->shape[1],
                       K - 1);
  bool apc = t[FIRST].t || t[LAST].t || t[INIT].t;
  bool apc_part = apc && !(t[FIRST].t && t[LAST].t && t[INIT].t); /* an attribute error */
  if (t[CI].t && !apc_part) {
    int want = apc ? 2 : 1;
    if (t[CI].t->rank != want)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "cache_indices.rank=%d must be %d (%s)", (int)t[CI].t->rank,
                         want,
                         apc ? "[batch, max_blocks] with prefix caching" : "[batch]");
    LLMK__TRY(llmk__check_dim(op, "cache_indices", t[CI].t, 0, batch, "batch"));
  }
  for (int i = NACC; i <= INIT; i++)
    if (t[i].t) LLMK__TRY(check_vec(&t[i], batch, "batch"));
  if (t[BIAS].t) LLMK__TRY(check_vec(&t[BIAS], dim, "dim"));
  /* 4. strides, extents and data */
  for (int i = 0; i < N; i++)
    if (t[i].t) LLMK__TRY(llmk__check_tensor(op, t[i].name, t[i].t));
  const named *unit[3] = {&t[X], &t[WEIGHT], &t[CS]};
  for (int i = 0; i < 3; i++) {
    const llmk_tensor *u = unit[i]->t;
    if (!v2 && dim > 1 && u->strides[u->rank - 1] != 1)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "%s.strides[%d]=%" PRId64 " must be 1 (channels contiguous)",
                         unit[i]->name, (int)u->rank - 1, u->strides[u->rank - 1]);
  }
  /* (with dim 0 x has no rows, and its strides need not fit the arithmetic) */
  bool xunit = dim <= 1 || x->strides[x->rank - 1] == 1;
  bool csunit = dim <= 1 || cs->strides[2] == 1;
  bool xok = dim <= 0 || !xunit ||
             (x->rank == 2 ? rows_disjoint(1, 0, x->shape[0], x->strides[0], dim)
                           : rows_disjoint(x->shape[0], x->strides[0], x->shape[1],
                                           x->strides[1], dim));
  if (dim > 0 && !xok)
    return llmk__error(
        LLMK_ERROR_INVALID_SHAPE, op,
        "x's strides make token rows overlap (in/out rows must be distinct)");
  if (dim > 0 && csunit &&
      !rows_disjoint(cs->shape[0], cs->strides[0], cs->shape[1], cs->strides[1], dim))
    return llmk__error(
        LLMK_ERROR_INVALID_SHAPE, op,
        "conv_states' strides make rows overlap (in/out rows must be distinct)");
  /* 5. attributes */
  if (max_query_len != -1 && max_query_len < 1)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "max_query_len=%" PRId64 " must be -1 (unknown) or >= 1",
                       max_query_len);
  if (residual != 0 && residual != 1)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "residual_connection=%" PRId64 " must be 0 or 1", residual);
  if (block_size != 0 && block_size < 2)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "block_size=%" PRId64 " must be 0 or >= 2", block_size);
  if (conv_mode != 0 && conv_mode != 1)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "conv_mode=%" PRId64 " must be 0 or 1", conv_mode);
  if (activation != LLMK_ACTIVATION_NONE && activation != LLMK_ACTIVATION_SILU)
    return llmk__error(
        LLMK_ERROR_INVALID_ATTRIBUTE, op,
        "activation=%d must be LLMK_ACTIVATION_NONE or LLMK_ACTIVATION_SILU",
        (int)activation);
  if (apc) {
    for (int i = FIRST; i <= INIT; i++)
      if (!t[i].t)
        return llmk__error(
            LLMK_ERROR_INVALID_ATTRIBUTE, op,
            "%s is NULL: prefix caching needs all of "
            "block_idx_first_scheduled_token, block_idx_last_scheduled_token "
            "and initial_state_idx",
            t[i].name);
    if (!t[CI].t)
      return llmk__error(
          LLMK_ERROR_INVALID_ATTRIBUTE, op,
          "cache_indices is NULL: prefix caching needs [batch, max_blocks]");
    if (block_size < 2)
      return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                         "block_size=%" PRId64 " must be >= 2 with prefix caching",
                         block_size);
    if (!t[NCT].t)
      return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                         "num_computed_tokens is NULL: prefix caching needs it");
  }
  if (conv_mode == 1 && !t[NCT].t)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "num_computed_tokens is NULL: conv_mode 1 needs it");

  memset(p, 0, sizeof *p);
  p->dt = dt;
  p->wdt = w->dtype;
  p->bdt = t[BIAS].t ? t[BIAS].t->dtype : LLMK_F32;
  p->esz = llmk_dtype_size(dt);
  p->K = K;
  p->dim = dim;
  p->C = cs->shape[1];
  p->lines = cs->shape[0];
  p->batch = batch;
  p->x3 = x->rank == 3;
  p->S = p->x3 ? x->shape[1] : 0;
  p->noop = batch == 0 || dim == 0 || (p->x3 && p->S == 0);
  /* T of a 3-D x is only a count (the 2-D checks use it); an empty one may overflow */
  if (!p->x3)
    p->T = x->shape[0];
  else if (__builtin_mul_overflow(batch, p->S, &p->T))
    p->T = INT64_MAX;
  p->x = x->data;
  p->xs0 = x->strides[0];
  p->xs1 = x->rank == 3 ? x->strides[1] : 0;
  p->cs = cs->data;
  p->cs0 = cs->strides[0];
  p->cs1 = cs->strides[1];
  p->w = w->data;
  p->ws0 = w->strides[0];
  p->bias = t[BIAS].t ? t[BIAS].t->data : NULL;
  p->bs0 = t[BIAS].t ? t[BIAS].t->strides[0] : 0;
  p->xsd = dim > 1 ? x->strides[x->rank - 1] : 1;
  p->csd = dim > 1 ? cs->strides[2] : 1;
  p->wsd = dim > 1 ? w->strides[1] : 1;
  p->ysd = p->xsd;
  p->qsl = llmk__view_of(t[QSL].t);
  p->ci = llmk__view_of(t[CI].t);
  p->nacc = llmk__view_of(t[NACC].t);
  p->nct = llmk__view_of(t[NCT].t);
  p->first = llmk__view_of(t[FIRST].t);
  p->last = llmk__view_of(t[LAST].t);
  p->init = llmk__view_of(t[INIT].t);
  p->has_ci = t[CI].t != NULL;
  p->has_nacc = t[NACC].t != NULL;
  p->has_nct = t[NCT].t != NULL;
  p->apc = apc;
  p->max_blocks = apc ? t[CI].t->shape[1] : 0;
  p->pad = pad_slot_id;
  p->max_query_len = max_query_len;
  p->block_size = block_size;
  p->conv_mode = (int)conv_mode;
  p->flags = (residual ? LLMK__CONV_RESID : 0u) |
             (activation == LLMK_ACTIVATION_SILU ? LLMK__CONV_SILU : 0u);
  return LLMK_SUCCESS;
}

/* *ws += align64(a * b * c); false when that overflows size_t */
static bool ws_add(size_t *ws, size_t a, size_t b, size_t c) {
  size_t n;
  return !__builtin_mul_overflow(a, b, &n) && !__builtin_mul_overflow(n, c, &n) &&
         !__builtin_add_overflow(n, (size_t)63, &n) &&
         !__builtin_add_overflow(*ws, n & ~(size_t)63, ws);
}

/* workspace: [bitmap of written lines][f32 weight][f32 bias][seq_info][cost prefix]
 * [per part: the history rows set aside (x's dtype) and the f32 window between tiles];
 * none for a call with nothing to do. INVALID_SHAPE when its size overflows size_t. */
static llmk_status plan_workspace(conv_plan *p) {
  p->max_parts = llmk__plan_tasks();
  p->ws_size = 0;
  if (p->noop) return LLMK_SUCCESS;
  size_t ws = 0, K1 = (size_t)(p->K - 1), dim = (size_t)p->dim, s1 = 0, s2 = 0;
  bool ok = ws_add(&ws, (size_t)p->lines / 8 + ((size_t)p->lines % 8 != 0), 1, 1);
  p->off_w = ws;
  if (p->wdt != LLMK_F32 || p->wsd != 1) ok = ok && ws_add(&ws, (size_t)p->K, dim, 4);
  p->off_b = ws;
  if (p->bias && (p->bdt != LLMK_F32 || p->bs0 != 1)) ok = ok && ws_add(&ws, dim, 4, 1);
  p->off_seq = ws;
  ok = ok && ws_add(&ws, (size_t)p->batch, sizeof(seq_info), 1);
  p->off_prefix = ws;
  ok = ok && ws_add(&ws, (size_t)p->batch + 1, sizeof(int64_t), 1);
  ok = ok && ws_add(&s1, K1, dim, p->esz) && ws_add(&s1, K1, dim, 4);
  p->scratch_bytes = s1;
  p->off_scratch = ws;
  ok = ok && ws_add(&s2, (size_t)p->max_parts, s1, 1) &&
       !__builtin_add_overflow(ws, s2, &ws) && !__builtin_add_overflow(ws, 64, &ws);
  if (!ok)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "the workspace for batch=%" PRId64 ", dim=%" PRId64
                       ", num_lines=%" PRId64 " (K=%d) overflows size_t",
                       p->batch, p->dim, p->lines, p->K);
  p->ws_size = ws;
  return LLMK_SUCCESS;
}

/* y given and not x's own view: y must be x's dtype and shape, channels contiguous. */
static llmk_status check_y(const llmk_tensor *x, const llmk_tensor *y, bool v2) {
  LLMK__TRY(llmk__check_dtype(op, "y", y, LLMK__DT(x->dtype)));
  if (y->rank != x->rank)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "y.rank=%d must be x.rank=%d",
                       (int)y->rank, (int)x->rank);
  for (int i = 0; i < x->rank; i++) {
    char what[24]; /* "x.shape[" + any int + "]" */
    snprintf(what, sizeof what, "x.shape[%d]", i);
    LLMK__TRY(llmk__check_dim(op, "y", y, i, x->shape[i], what));
  }
  LLMK__TRY(llmk__check_tensor(op, "y", y));
  int64_t dim = x->shape[x->rank - 1];
  if (!v2 && dim > 1 && y->strides[y->rank - 1] != 1)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "y.strides[%d]=%" PRId64 " must be 1 (channels contiguous)",
                       (int)y->rank - 1, y->strides[y->rank - 1]);
  return LLMK_SUCCESS;
}

/* The options as this library knows them; opts NULL: all zero. */
typedef struct v2_opts {
  bool v2;
  llmk_conv_state_align align;
  const llmk_tensor *his, *csl, *y;
} v2_opts;

static llmk_status read_opts(const llmk_causal_conv1d_options *o, v2_opts *v) {
  /* the first version's members end at y */
  const size_t v1 = offsetof(llmk_causal_conv1d_options, y) + sizeof(o->y);
  memset(v, 0, sizeof *v);
  v->v2 = true;
  if (!o) return LLMK_SUCCESS;
  if (o->struct_size < v1)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "opts->struct_size=%zu must be >= %zu (set it to "
                       "sizeof(llmk_causal_conv1d_options))",
                       o->struct_size, v1);
  /* a newer caller's members must be unset: this library cannot honour them */
  for (size_t i = sizeof *o; i < o->struct_size; i++)
    if (((const unsigned char *)o)[i] != 0)
      return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                         "opts byte %zu (past the %zu bytes of options this library "
                         "knows) is %u, must be 0",
                         i, sizeof *o, (unsigned)((const unsigned char *)o)[i]);
  if (o->state_align != LLMK_CONV_STATE_TAIL && o->state_align != LLMK_CONV_STATE_HEAD)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "opts->state_align=%d must be LLMK_CONV_STATE_TAIL (0) or "
                       "LLMK_CONV_STATE_HEAD (1)",
                       (int)o->state_align);
  v->align = o->state_align;
  v->his = o->has_initial_state;
  v->csl = o->cache_seqlens;
  v->y = o->y;
  return LLMK_SUCCESS;
}

/* has_initial_state and cache_seqlens: after validate (batch known). */
static llmk_status check_opts(const v2_opts *v, const named *t, conv_plan *p) {
  const llmk_tensor *iv[2] = {v->his, v->csl};
  static const char *const nm[2] = {"has_initial_state", "cache_seqlens"};
  const uint32_t dts[2] = {LLMK__INTS | LLMK__DT(LLMK_U8) | LLMK__DT(LLMK_I8),
                           LLMK__INTS};
  for (int i = 0; i < 2; i++) {
    if (!iv[i]) continue;
    LLMK__TRY(llmk__check_dtype(op, nm[i], iv[i], dts[i]));
    LLMK__TRY(llmk__check_rank(op, nm[i], iv[i], 1));
    LLMK__TRY(llmk__check_dim(op, nm[i], iv[i], 0, p->batch, "batch"));
    LLMK__TRY(llmk__check_tensor(op, nm[i], iv[i]));
  }
  if (v->csl && t[5].t)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "cache_seqlens and num_accepted_tokens are both given: a ring "
                       "state has no speculative offset");
  if (v->csl && p->apc)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "cache_seqlens with prefix caching is not supported");
  p->head = v->align == LLMK_CONV_STATE_HEAD;
  p->ring = v->csl != NULL;
  p->has_his = v->his != NULL;
  p->his = llmk__view_of(v->his);
  p->csl = llmk__view_of(v->csl);
  return LLMK_SUCCESS;
}

static llmk_status plan_op(const named *t, const v2_opts *v, int64_t pad_slot_id,
                           int64_t max_query_len, int64_t residual_connection,
                           int64_t block_size, int64_t conv_mode,
                           llmk_activation activation, size_t *workspace_size,
                           llmk_plan **plan) {
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  conv_plan p;
  LLMK__TRY(validate(t, pad_slot_id, max_query_len, residual_connection, block_size,
                     conv_mode, activation, v->v2, &p));
  LLMK__TRY(check_opts(v, t, &p));
  const llmk_tensor *x = t[0].t, *y = v->y;
  if (y && llmk__same_view(y, x)) y = NULL; /* x's own view: in place */
  if (y) LLMK__TRY(check_y(x, y, v->v2));
  p.y = y ? y->data : p.x;
  p.ys0 = y ? y->strides[0] : p.xs0;
  p.ys1 = y ? (y->rank == 3 ? y->strides[1] : 0) : p.xs1;
  if (y && p.dim > 1) p.ysd = y->strides[y->rank - 1];
  p.general = p.head || p.ring || p.xsd != 1 || p.ysd != 1 || p.csd != 1 || p.wsd != 1;
  /* written: conv_states, and x (in place) or y, each only as itself */
  llmk__tref refs[14];
  for (int i = 0; i < 11; i++)
    refs[i] = (llmk__tref){t[i].t, t[i].name, (i == 0 && !y) || i == 2};
  refs[11] = (llmk__tref){y, "y", true};
  refs[12] = (llmk__tref){v->his, "has_initial_state", false};
  refs[13] = (llmk__tref){v->csl, "cache_seqlens", false};
  LLMK__TRY(plan_workspace(&p));
  LLMK__TRY(llmk__check_overlaps(op, refs, 14, NULL, 0));
  p.kern = llmk__conv1d_kernels_for(llmk_get_isa());
  p.cvt = llmk__convert_kernels_for(llmk_get_isa());
  llmk_plan *out;
  LLMK__TRY(llmk__plan_create(op, LLMK__OP_CAUSAL_CONV1D, sizeof p, p.ws_size, &out));
  *(conv_plan *)llmk__plan_payload(out) = p;
  *workspace_size = p.ws_size;
  *plan = out;
  return LLMK_SUCCESS;
}

#define NAMED_TENSORS                                                       \
  const named t[11] = {                                                     \
      {x, "x"},                                                             \
      {weight, "weight"},                                                   \
      {conv_states, "conv_states"},                                         \
      {query_start_loc, "query_start_loc"},                                 \
      {cache_indices, "cache_indices"},                                     \
      {num_accepted_tokens, "num_accepted_tokens"},                         \
      {num_computed_tokens, "num_computed_tokens"},                         \
      {block_idx_first_scheduled_token, "block_idx_first_scheduled_token"}, \
      {block_idx_last_scheduled_token, "block_idx_last_scheduled_token"},   \
      {initial_state_idx, "initial_state_idx"},                             \
      {bias, "bias"}}

llmk_status llmk_fused_causal_conv1d_get_workspace_size(
    const llmk_tensor *x, const llmk_tensor *weight, const llmk_tensor *conv_states,
    const llmk_tensor *query_start_loc, const llmk_tensor *cache_indices,
    const llmk_tensor *num_accepted_tokens, const llmk_tensor *num_computed_tokens,
    const llmk_tensor *block_idx_first_scheduled_token,
    const llmk_tensor *block_idx_last_scheduled_token,
    const llmk_tensor *initial_state_idx, const llmk_tensor *bias, int64_t pad_slot_id,
    int64_t max_query_len, int64_t residual_connection, int64_t block_size,
    int64_t conv_mode, llmk_activation activation, size_t *workspace_size,
    llmk_plan **plan) {
  return llmk_fused_causal_conv1d_out_get_workspace_size(
      x, weight, conv_states, query_start_loc, cache_indices, num_accepted_tokens,
      num_computed_tokens, block_idx_first_scheduled_token,
      block_idx_last_scheduled_token, initial_state_idx, bias, pad_slot_id, max_query_len,
      residual_connection, block_size, conv_mode, activation, NULL, workspace_size, plan);
}

llmk_status llmk_fused_causal_conv1d_out_get_workspace_size(
    const llmk_tensor *x, const llmk_tensor *weight, const llmk_tensor *conv_states,
    const llmk_tensor *query_start_loc, const llmk_tensor *cache_indices,
    const llmk_tensor *num_accepted_tokens, const llmk_tensor *num_computed_tokens,
    const llmk_tensor *block_idx_first_scheduled_token,
    const llmk_tensor *block_idx_last_scheduled_token,
    const llmk_tensor *initial_state_idx, const llmk_tensor *bias, int64_t pad_slot_id,
    int64_t max_query_len, int64_t residual_connection, int64_t block_size,
    int64_t conv_mode, llmk_activation activation, const llmk_tensor *y,
    size_t *workspace_size, llmk_plan **plan) {
  NAMED_TENSORS;
  v2_opts v = {.y = y};
  return plan_op(&t[0], &v, pad_slot_id, max_query_len, residual_connection, block_size,
                 conv_mode, activation, workspace_size, plan);
}

llmk_status llmk_fused_causal_conv1d_v2_get_workspace_size(
    const llmk_tensor *x, const llmk_tensor *weight, const llmk_tensor *conv_states,
    const llmk_tensor *query_start_loc, const llmk_tensor *cache_indices,
    const llmk_tensor *num_accepted_tokens, const llmk_tensor *num_computed_tokens,
    const llmk_tensor *block_idx_first_scheduled_token,
    const llmk_tensor *block_idx_last_scheduled_token,
    const llmk_tensor *initial_state_idx, const llmk_tensor *bias, int64_t pad_slot_id,
    int64_t max_query_len, int64_t residual_connection, int64_t block_size,
    int64_t conv_mode, llmk_activation activation, const llmk_causal_conv1d_options *opts,
    size_t *workspace_size, llmk_plan **plan) {
  NAMED_TENSORS;
  v2_opts v;
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  LLMK__TRY(read_opts(opts, &v));
  return plan_op(&t[0], &v, pad_slot_id, max_query_len, residual_connection, block_size,
                 conv_mode, activation, workspace_size, plan);
}
