/* fused_causal_conv1d: phase 1 (validate, plan) and phase 2 (check values, run).
 *
 * The run is split into items (sequence, block of channels); items touch disjoint x
 * rows and cache lines (phase 2 rejects lines written twice or written by one sequence
 * and read by another), so any split gives the same bytes. Within an item: the K-1
 * history rows of the conv are copied aside first, then the state line and the APC
 * fill lines are written from the history and the original x rows, and last the conv
 * streams over the tokens, keeping the last K originals as f32 in a ring. */
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"

#include <inttypes.h>
#include <string.h>

#include "core/internal.h"
#include "core/op.h"
#include "core/view.h"
#include "dispatch/dispatch.h"
#include "kernels/convert/convert.h"
#include "llmk/causal_conv1d.h"

static const char op[] = "fused_causal_conv1d";

#define PARALLEL_MIN 65536 /* bytes moved below which the call stays on one thread */

typedef struct seq_info {
  int64_t base;   /* element offset of token 0 in x */
  int64_t L;      /* tokens */
  int64_t R, W;   /* lines read and written; W < 0: not written */
  int64_t offset; /* history offset (step 2) */
  int64_t hn;     /* history rows: offset + K-1 */
  int64_t first, nfill, last_full;
  int64_t reset; /* conv_mode 1: rows [0, reset) are zeroed */
  int64_t cost;
  bool skip, zero_hist;
} seq_info;

typedef struct conv_plan {
  llmk_dtype dt, wdt, bdt;
  size_t esz;
  int K;
  int64_t dim, C, lines, batch, T, S; /* S: tokens per sequence of a 3-D x, else 0 */
  char *x;
  int64_t xs0, xs1;
  char *cs;
  int64_t cs0, cs1;
  const char *w, *bias;
  int64_t ws0, bs0;
  llmk__view qsl, ci, nacc, nct, first, last, init;
  bool has_ci, has_nacc, has_nct, apc;
  int64_t max_blocks, pad, max_query_len, block_size;
  int conv_mode;
  unsigned flags;
  int max_parts;
  size_t off_w, off_b, off_seq, off_prefix, off_scratch, scratch_bytes, ws_size;
  const llmk__conv1d_kernels *kern;
  const llmk__convert_kernels *cvt;
} conv_plan;

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

static llmk_status validate(const named *t, int64_t pad_slot_id, int64_t max_query_len,
                            int64_t residual, int64_t block_size, int64_t conv_mode,
                            llmk_activation activation, conv_plan *p) {
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
    if (dim > 1 && u->strides[u->rank - 1] != 1)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "%s.strides[%d]=%" PRId64 " must be 1 (channels contiguous)",
                         unit[i]->name, (int)u->rank - 1, u->strides[u->rank - 1]);
  }
  bool xok = x->rank == 2 ? rows_disjoint(1, 0, x->shape[0], x->strides[0], dim)
                          : rows_disjoint(x->shape[0], x->strides[0], x->shape[1],
                                          x->strides[1], dim);
  if (dim > 0 && !xok)
    return llmk__error(
        LLMK_ERROR_INVALID_SHAPE, op,
        "x's strides make token rows overlap (in/out rows must be distinct)");
  if (dim > 0 &&
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
  p->T = x->rank == 2 ? x->shape[0] : batch * x->shape[1];
  p->S = x->rank == 3 ? x->shape[1] : 0;
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

static size_t align64(size_t n) {
  return (n + 63) & ~(size_t)63;
}

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
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  const named t[11] = {
      {x, "x"},
      {weight, "weight"},
      {conv_states, "conv_states"},
      {query_start_loc, "query_start_loc"},
      {cache_indices, "cache_indices"},
      {num_accepted_tokens, "num_accepted_tokens"},
      {num_computed_tokens, "num_computed_tokens"},
      {block_idx_first_scheduled_token, "block_idx_first_scheduled_token"},
      {block_idx_last_scheduled_token, "block_idx_last_scheduled_token"},
      {initial_state_idx, "initial_state_idx"},
      {bias, "bias"}};
  conv_plan p;
  LLMK__TRY(validate(t, pad_slot_id, max_query_len, residual_connection, block_size,
                     conv_mode, activation, &p));
  /* workspace: [bitmap of written lines][f32 weight][f32 bias][seq_info][cost prefix] */
  size_t ws = align64(((size_t)p.lines + 7) / 8);
  p.off_w = ws;
  if (p.wdt != LLMK_F32) ws += align64((size_t)p.K * (size_t)p.dim * 4);
  p.off_b = ws;
  if (p.bias && (p.bdt != LLMK_F32 || p.bs0 != 1)) ws += align64((size_t)p.dim * 4);
  p.off_seq = ws;
  ws += align64((size_t)p.batch * sizeof(seq_info));
  p.off_prefix = ws;
  ws += align64(((size_t)p.batch + 1) * sizeof(int64_t));
  /* per part: the history rows set aside (x's dtype) and the f32 window between tiles */
  p.max_parts = llmk__plan_tasks();
  p.scratch_bytes = align64((size_t)(p.K - 1) * (size_t)p.dim * p.esz) +
                    align64((size_t)(p.K - 1) * (size_t)p.dim * 4);
  p.off_scratch = ws;
  ws += (size_t)p.max_parts * p.scratch_bytes;
  p.ws_size = p.batch == 0 ? 0 : ws + 64;
  p.kern = llmk__conv1d_kernels_for(llmk_get_isa());
  p.cvt = llmk__convert_kernels_for(llmk_get_isa());
  llmk_plan *out;
  LLMK__TRY(llmk__plan_create(op, LLMK__OP_CAUSAL_CONV1D, sizeof p, p.ws_size, &out));
  *(conv_plan *)llmk__plan_payload(out) = p;
  *workspace_size = p.ws_size;
  *plan = out;
  return LLMK_SUCCESS;
}

/* ------------------------------------------------------------------ phase 2 */

static inline int64_t mod_pos(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

static bool line_ok(const conv_plan *p, int64_t line) {
  return line == p->pad || (line >= 0 && line < p->lines);
}

static int64_t fill_line(const conv_plan *p, const seq_info *s, int64_t b, int64_t c) {
  return llmk__view_get(&p->ci, b, s->first + c);
}

/* Every value rule, in batch order, before anything is written; fills seq_info. */
static llmk_status check_values(const conv_plan *p, uint8_t *written, seq_info *si,
                                int64_t *prefix) {
  const int K = p->K;
  memset(written, 0, ((size_t)p->lines + 7) / 8);
  if (!p->S) {
    int64_t q0 = llmk__view_get(&p->qsl, 0, 0);
    if (q0 != 0)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "query_start_loc[0]=%" PRId64 " must be 0", q0);
  }
  for (int64_t b = 0; b < p->batch; b++) {
    seq_info *s = &si[b];
    memset(s, 0, sizeof *s);
    if (p->S) {
      s->base = b * p->xs0;
      s->L = p->S;
    } else {
      int64_t q0 = llmk__view_get(&p->qsl, b, 0), q1 = llmk__view_get(&p->qsl, b + 1, 0);
      if (q1 <= q0)
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "query_start_loc[%" PRId64 "]=%" PRId64
                           " must be greater than query_start_loc[%" PRId64 "]=%" PRId64,
                           b + 1, q1, b, q0);
      if (q1 > p->T || (b + 1 == p->batch && q1 != p->T))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "query_start_loc[%" PRId64 "]=%" PRId64 " %s T=%" PRId64,
                           b + 1, q1, q1 > p->T ? "exceeds" : "must equal", p->T);
      s->base = q0 * p->xs0;
      s->L = q1 - q0;
    }
    if (p->max_query_len > 0 && s->L > p->max_query_len)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "sequence %" PRId64 " has %" PRId64
                         " tokens, more than max_query_len=%" PRId64,
                         b, s->L, p->max_query_len);
    int64_t nct = p->has_nct ? llmk__view_get(&p->nct, b, 0) : -1;
    if (p->has_nct && nct < 0)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "num_computed_tokens[%" PRId64 "]=%" PRId64 " must be >= 0", b,
                         nct);
    int64_t first = 0, last = 0, init = 0;
    if (p->apc) {
      const llmk__view *iv[3] = {&p->first, &p->last, &p->init};
      static const char *const nm[3] = {"block_idx_first_scheduled_token",
                                        "block_idx_last_scheduled_token",
                                        "initial_state_idx"};
      int64_t v[3];
      for (int i = 0; i < 3; i++) {
        v[i] = llmk__view_get(iv[i], b, 0);
        if (v[i] < 0 || v[i] >= p->max_blocks)
          return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                             "%s[%" PRId64 "]=%" PRId64
                             " must be in [0, max_blocks=%" PRId64 ")",
                             nm[i], b, v[i], p->max_blocks);
      }
      first = v[0], last = v[1], init = v[2];
      if (init > last || first > last)
        return llmk__error(
            LLMK_ERROR_INVALID_VALUE, op,
            "sequence %" PRId64 ": %s=%" PRId64
            " must be <= "
            "block_idx_last_scheduled_token=%" PRId64,
            b, init > last ? "initial_state_idx" : "block_idx_first_scheduled_token",
            init > last ? init : first, last);
      s->R = llmk__view_get(&p->ci, b, init);
      s->W = llmk__view_get(&p->ci, b, last);
    } else {
      s->R = s->W = p->has_ci ? llmk__view_get(&p->ci, b, 0) : b;
    }
    const char *ci_name = p->has_ci ? "cache_indices" : "line (batch index)";
    if (!line_ok(p, s->R))
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "%s: sequence %" PRId64 " reads line %" PRId64
                         ", outside [0, %" PRId64 ") and not pad_slot_id=%" PRId64,
                         ci_name, b, s->R, p->lines, p->pad);
    if (s->R == p->pad) {
      s->skip = true;
      s->cost = 1;
      continue;
    }
    if (!line_ok(p, s->W))
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "cache_indices: sequence %" PRId64 " writes line %" PRId64
                         ", outside [0, %" PRId64 ") and not pad_slot_id=%" PRId64,
                         b, s->W, p->lines, p->pad);
    if (p->has_nct && nct == 0) {
      s->zero_hist = true;
      s->offset = 0;
    } else if (p->has_nacc) {
      int64_t na = llmk__view_get(&p->nacc, b, 0);
      if (na > p->C - K + 2)
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "num_accepted_tokens[%" PRId64 "]=%" PRId64
                           " must be <= C-K+2=%" PRId64 " (history past the cache line)",
                           b, na, p->C - K + 2);
      s->offset = na > 1 ? na - 1 : 0;
    } else {
      s->offset = p->C - (K - 1);
    }
    s->hn = s->offset + K - 1;
    if (p->conv_mode == 1) {
      int64_t r = K - 1 - nct;
      s->reset = r < 0 ? 0 : (r > s->L ? s->L : r);
    }
    if (s->W == p->pad) s->W = -1;
    if (p->apc && last > first) {
      int64_t B = p->block_size, L = s->L;
      int64_t seo = mod_pos(L - (B - mod_pos(nct, B)), B);
      s->last_full = L - seo - (seo == 0 ? B : 0);
      s->first = first;
      s->nfill = last - first;
      int64_t bdy0 = s->last_full - (s->nfill - 1) * B;
      if (bdy0 < 0)
        return llmk__error(
            LLMK_ERROR_INVALID_VALUE, op,
            "sequence %" PRId64 ": %" PRId64 " block boundaries (first=%" PRId64
            ", last=%" PRId64 ") do not fit a chunk of %" PRId64
            " tokens with num_computed_tokens=%" PRId64 " and block_size=%" PRId64,
            b, s->nfill, first, last, L, nct, B);
      for (int64_t c = 0; c < s->nfill; c++) {
        int64_t f = fill_line(p, s, b, c);
        if (!line_ok(p, f))
          return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                             "cache_indices[%" PRId64 "][%" PRId64 "]=%" PRId64
                             " (a block to fill) is outside [0, %" PRId64
                             ") and not pad_slot_id=%" PRId64,
                             b, first + c, f, p->lines, p->pad);
      }
    }
    int64_t len = s->hn + s->L, M = p->C < len ? p->C : len;
    s->cost = 2 * s->L + M + K + s->nfill * (K - 1);
  }
  /* lines written twice, then lines read by one sequence and written by another */
  for (int64_t b = 0; b < p->batch; b++) {
    const seq_info *s = &si[b];
    if (s->skip) continue;
    for (int64_t c = -1; c < s->nfill; c++) {
      int64_t l = c < 0 ? s->W : fill_line(p, s, b, c);
      if (l < 0 || l == p->pad) continue;
      if (written[l >> 3] & (1u << (l & 7)))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "cache_indices: line %" PRId64
                           " is written twice (again by sequence %" PRId64
                           "); written lines must be distinct",
                           l, b);
      written[l >> 3] |= (uint8_t)(1u << (l & 7));
    }
  }
  for (int64_t b = 0; b < p->batch; b++) {
    const seq_info *s = &si[b];
    if (s->skip || s->zero_hist || !(written[s->R >> 3] & (1u << (s->R & 7)))) continue;
    bool own = s->R == s->W;
    for (int64_t c = 0; c < s->nfill && !own; c++) own = fill_line(p, s, b, c) == s->R;
    if (!own)
      return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                         "cache_indices: sequence %" PRId64 " reads line %" PRId64
                         ", which another sequence writes",
                         b, s->R);
  }
  prefix[0] = 0;
  for (int64_t b = 0; b < p->batch; b++) prefix[b + 1] = prefix[b] + si[b].cost;
  return LLMK_SUCCESS;
}

typedef struct conv_job {
  const conv_plan *p;
  const seq_info *si;
  const int64_t *prefix;
  const float *w, *bias;
  int64_t wstride;
  int parts;
  int64_t nblk, wblk; /* channel blocks per sequence and their width */
  char *scratch;
} conv_job;

static inline char *xrow(const conv_plan *p, const seq_info *s, int64_t i, int64_t d0) {
  int64_t ts = p->S ? p->xs1 : p->xs0;
  return p->x + (size_t)(s->base + i * ts + d0) * p->esz;
}

static inline char *lrow(const conv_plan *p, int64_t line, int64_t r, int64_t d0) {
  return p->cs + (size_t)(line * p->cs0 + r * p->cs1 + d0) * p->esz;
}

/* Channels [d0, d0+n) of sequence b, steps 2-9. */
static void run_cols(const conv_job *j, const seq_info *s, int64_t b, int64_t d0,
                     size_t n, char *scratch) {
  const conv_plan *p = j->p;
  const int K = p->K;
  const int64_t C = p->C;
  const size_t rb = n * p->esz;
  char *snap = scratch;
  /* 1. the conv's history rows xp[0, K-1) = padded[offset, offset+K-1), set aside */
  for (int r = 0; r < K - 1; r++) {
    if (s->zero_hist)
      memset(snap + r * rb, 0, rb);
    else
      memcpy(snap + r * rb, lrow(p, s->R, s->offset + r, d0), rb);
  }
  /* 2. state: conv_states[W][C-M+i] = padded[Len-M+i]; within one line the rows move
   * towards lower indices when Len >= C, so the copy order follows the shift */
  if (s->W >= 0) {
    int64_t len = s->hn + s->L, M = C < len ? C : len;
    bool up = len >= C;
    for (int64_t k = 0; k < M; k++) {
      int64_t i = up ? k : M - 1 - k, dst = C - M + i, src = len - M + i;
      char *d = lrow(p, s->W, dst, d0);
      if (src >= s->hn)
        memcpy(d, xrow(p, s, src - s->hn, d0), rb);
      else if (s->zero_hist)
        memset(d, 0, rb);
      else if (!(s->R == s->W && src == dst))
        memcpy(d, lrow(p, s->R, src, d0), rb);
    }
  }
  /* 3. APC: the K-1 tokens ending at each block boundary crossed */
  for (int64_t c = 0; c < s->nfill; c++) {
    int64_t f = fill_line(p, s, b, c);
    if (f == p->pad) continue;
    int64_t bdy = s->last_full - (s->nfill - 1 - c) * p->block_size;
    for (int r = 0; r < K - 1; r++) {
      int64_t q = bdy + r;
      const void *src =
          q < K - 1 ? (const void *)(snap + q * rb) : xrow(p, s, q - (K - 1), d0);
      memcpy(lrow(p, f, C - (K - 1) + r, d0), src, rb);
    }
  }
  /* 4. the conv over the chunk */
  llmk__conv1d_seq q = {
      .x = xrow(p, s, 0, d0),
      .xstride = (ptrdiff_t)((p->S ? p->xs1 : p->xs0) * (int64_t)p->esz),
      .L = s->L,
      .hist = (const char *)snap,
      .hstride = (ptrdiff_t)rb,
      .w = j->w + d0,
      .wstride = (size_t)j->wstride,
      .bias = j->bias ? j->bias + d0 : NULL,
      .dt = p->dt,
      .K = K,
      .flags = p->flags,
      .reset = s->reset,
      .n = n,
      .wbuf = (float *)(void *)(scratch + align64((size_t)(K - 1) * rb))};
  p->kern->seq(&q);
}

/* Short chunks go in slices of DECODE_SLICE channels, so that the rows set aside and
 * those the state copies read are still in L1 when the conv reads them; long ones in
 * whole item rows, which keeps each token row's reads contiguous. */
#define DECODE_SLICE 512

static void run_item(const conv_job *j, int64_t b, int64_t blk, char *scratch) {
  const seq_info *s = &j->si[b];
  if (s->skip) return;
  const int64_t d0 = blk * j->wblk,
                n = j->p->dim - d0 < j->wblk ? j->p->dim - d0 : j->wblk;
  const int64_t slice = s->L <= LLMK__CONV_TILE ? DECODE_SLICE : n;
  for (int64_t c = 0; c < n; c += slice)
    run_cols(j, s, b, d0 + c, (size_t)(n - c < slice ? n - c : slice), scratch);
}

/* First item whose cumulative cost start is >= t (items: sequence-major, nblk each). */
static int64_t first_item(const conv_job *j, int64_t t) {
  const int64_t nb = j->nblk, *pre = j->prefix, B = j->p->batch;
  if (t <= 0) return 0;
  if (t >= pre[B] * nb) return B * nb;
  int64_t lo = 0, hi = B; /* largest b with pre[b]*nb <= t */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (pre[mid] * nb <= t)
      lo = mid;
    else
      hi = mid;
  }
  int64_t cost = pre[lo + 1] - pre[lo], rem = t - pre[lo] * nb;
  int64_t k = (rem + cost - 1) / cost;
  return k >= nb ? (lo + 1) * nb : lo * nb + k;
}

/* Part ith of nth: the items whose cumulative cost starts in the ith nth of the total. */
static void run_part(void *arg, int ith, int nth) {
  const conv_job *j = arg;
  const int64_t total = j->prefix[j->p->batch] * j->nblk;
  int64_t a = first_item(j, total / nth * ith + total % nth * ith / nth);
  int64_t e =
      ith + 1 == nth
          ? j->p->batch * j->nblk
          : first_item(j, total / nth * (ith + 1) + total % nth * (ith + 1) / nth);
  char *scratch = j->scratch + (size_t)ith * j->p->scratch_bytes;
  for (int64_t it = a; it < e; it++) run_item(j, it / j->nblk, it % j->nblk, scratch);
}

static llmk_status run(const void *payload, void *workspace, llmk_context *ctx) {
  const conv_plan *p = payload;
  llmk_status st = LLMK_SUCCESS;
  if (p->batch > 0) {
    char *ws = (char *)(((uintptr_t)workspace + 63) & ~(uintptr_t)63);
    seq_info *si = (seq_info *)(void *)(ws + p->off_seq);
    int64_t *prefix = (int64_t *)(void *)(ws + p->off_prefix);
    st = check_values(p, (uint8_t *)ws, si, prefix);
    if (st == LLMK_SUCCESS && p->dim > 0) {
      conv_job j = {p, si, prefix, (const float *)(const void *)p->w, NULL, p->ws0, 1,
                    1, 0,  NULL};
      if (p->wdt != LLMK_F32) {
        float *w = (float *)(void *)(ws + p->off_w);
        for (int k = 0; k < p->K; k++) {
          const void *src = p->w + (size_t)(k * p->ws0) * 2;
          if (p->wdt == LLMK_F16)
            p->cvt->f16_to_f32(w + k * p->dim, src, (size_t)p->dim);
          else
            p->cvt->bf16_to_f32(w + k * p->dim, src, (size_t)p->dim);
        }
        j.w = w;
        j.wstride = p->dim;
      }
      if (p->bias && (p->bdt != LLMK_F32 || p->bs0 != 1)) {
        float *bb = (float *)(void *)(ws + p->off_b);
        size_t besz = llmk_dtype_size(p->bdt);
        for (int64_t d = 0; d < p->dim; d++)
          bb[d] = llmk__load_f32(p->bias + (size_t)(d * p->bs0) * besz, p->bdt);
        j.bias = bb;
      } else if (p->bias) {
        j.bias = (const float *)(const void *)p->bias;
      }
      int64_t bytes = prefix[p->batch] * p->dim * (int64_t)p->esz;
      int parts = bytes < PARALLEL_MIN ? 1 : llmk__parallel_tasks(ctx, p->max_parts);
      /* whole rows per item unless there are too few sequences to go round */
      int64_t nblk = (4 * (int64_t)parts + p->batch - 1) / p->batch, cap = p->dim / 256;
      if (parts == 1 || nblk < 1) nblk = 1;
      if (nblk > cap) nblk = cap > 1 ? cap : 1;
      j.wblk = ((p->dim + nblk - 1) / nblk + 15) & ~(int64_t)15;
      j.nblk = (p->dim + j.wblk - 1) / j.wblk;
      if (parts > p->batch * j.nblk) parts = (int)(p->batch * j.nblk);
      j.parts = parts;
      j.scratch = ws + p->off_scratch;
      llmk__parallel_run(ctx, j.parts, run_part, &j);
    }
  }
  return st;
}

llmk_status llmk_fused_causal_conv1d(void *workspace, size_t workspace_size,
                                     llmk_plan *plan, llmk_context *ctx) {
  return llmk__plan_run(op, LLMK__OP_CAUSAL_CONV1D, plan, workspace, workspace_size, ctx,
                        run);
}
