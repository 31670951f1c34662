/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p (+ min-p, kept counts), the with-sorted variant, and sampling.
 *
 * Per row, without sorting: the row is widened once into an f32 buffer; the k-th
 * largest value is found by radix selection (11, 11 and 10 bits of order-preserving
 * keys); the top-p boundary by the same selection over probability mass instead of
 * counts, masses being exp(x - max) in exact 64-bit fixed point. The boundary is a value
 * v and a count c: entries below v are masked, and so are the c lowest-index entries
 * equal to v, which is what the stable ascending sort of the reference does. */

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "core/op.h"
#include "core/overlap.h"
#include "dispatch/dispatch.h"
#include "llmk/top_k_top_p.h"
#include "ops/apply_top_k_top_p/internal.h"

/* ---------------------------------------------------------------- scratch */

static size_t worker_bytes(int64_t V) {
  size_t b = (size_t)V * 10 + CHUNK * (8 + 2) + (HBINS + 1) * 4 + MLO_BYTES +
             CAND_CAP * (4 + 4 + 8 + 16) + (size_t)V + 64;
  return (b + 63) / 64 * 64;
}

static scratch scratch_at(void *base) {
  scratch s;
  char *p = base;
  s.mass = (uint64_t *)(void *)p;
  p += CHUNK * 8;
  s.mlo = (uint64_t *)(void *)p;
  p += (HBINS + 1) * 8;
  s.mhi = (uint64_t *)(void *)p;
  p += MLO_BYTES - (HBINS + 1) * 8;
  s.cmass = (uint64_t *)(void *)p;
  p += CAND_CAP * 8;
  s.count = (uint32_t *)(void *)p;
  p += (HBINS + 1) * 4;
  s.bins = (uint16_t *)(void *)p;
  p += CHUNK * 2;
  s.ckey = (uint32_t *)(void *)p;
  p += CAND_CAP * 4;
  s.cidx = (uint32_t *)(void *)p;
  p += CAND_CAP * 4;
  s.sx = (float *)(void *)p;
  p += CAND_CAP * 4;
  s.bx = (float *)(void *)p;
  p += CAND_CAP * 4;
  s.sk = (uint32_t *)(void *)p;
  p += CAND_CAP * 4;
  s.bk = (uint32_t *)(void *)p;
  p += CAND_CAP * 4;
  s.row = (float *)(void *)p;
  s.keys = NULL; /* set by the callers: they follow the row */
  s.seen = NULL;
  return s;
}

/* ------------------------------------------------------------------ phase 1 */

typedef struct arg {
  const llmk_tensor *t;
  const char *name;
} arg;

static llmk_status check_vec(const char *op, arg a, int64_t B, uint32_t dtypes) {
  LLMK__TRY(llmk__check_dtype(op, a.name, a.t, dtypes));
  LLMK__TRY(llmk__check_rank(op, a.name, a.t, 1));
  return llmk__check_dim(op, a.name, a.t, 0, B, "B");
}

static llmk_status check_mat(const char *op, arg a, int64_t B, int64_t V,
                             uint32_t dtypes) {
  LLMK__TRY(llmk__check_dtype(op, a.name, a.t, dtypes));
  LLMK__TRY(llmk__check_rank(op, a.name, a.t, 2));
  LLMK__TRY(llmk__check_dim(op, a.name, a.t, 0, B, "B"));
  return llmk__check_dim(op, a.name, a.t, 1, V, "V");
}

/* All four entry points: `values` is logits (or sorted_value); the others as named. */
static llmk_status plan_tkp(const char *op, int mode, arg values, arg p, arg k, arg min_p,
                            arg out, arg kept, arg logits2, arg si, arg temperature,
                            arg seed, arg offset, arg ids, size_t *workspace_size,
                            llmk_plan **plan) {
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  if (!values.t)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "%s is NULL", values.name);
  if (mode == MODE_SORTED && !si.t)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "sorted_indices is NULL");
  if (mode == MODE_SAMPLE) {
    if (!seed.t) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "seed is NULL");
    if (!ids.t) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "token_ids is NULL");
  } else {
    if (!out.t) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "out is NULL");
    if (!p.t && !k.t && !min_p.t)
      return llmk__error(LLMK_ERROR_NULL_POINTER, op,
                         "p and k are both NULL: nothing to apply");
  }
  /* dtypes */
  LLMK__TRY(llmk__check_dtype(op, values.name, values.t, LLMK__FLOATS));
  llmk_dtype dt = values.t->dtype;
  uint32_t pdt = LLMK__DT(dt) | LLMK__DT(LLMK_F32);
  if (p.t) LLMK__TRY(llmk__check_dtype(op, p.name, p.t, pdt));
  if (min_p.t) LLMK__TRY(llmk__check_dtype(op, min_p.name, min_p.t, pdt));
  if (k.t) LLMK__TRY(llmk__check_dtype(op, k.name, k.t, LLMK__INTS));
  if (out.t) LLMK__TRY(llmk__check_dtype(op, out.name, out.t, LLMK__DT(dt)));
  if (kept.t) LLMK__TRY(llmk__check_dtype(op, kept.name, kept.t, LLMK__INTS));
  if (logits2.t) LLMK__TRY(llmk__check_dtype(op, logits2.name, logits2.t, LLMK__DT(dt)));
  if (si.t) LLMK__TRY(llmk__check_dtype(op, si.name, si.t, LLMK__INTS));
  if (temperature.t)
    LLMK__TRY(llmk__check_dtype(op, temperature.name, temperature.t, LLMK__DT(LLMK_F32)));
  if (seed.t) LLMK__TRY(llmk__check_dtype(op, seed.name, seed.t, LLMK__DT(LLMK_I64)));
  if (offset.t)
    LLMK__TRY(llmk__check_dtype(op, offset.name, offset.t, LLMK__DT(LLMK_I64)));
  if (ids.t) LLMK__TRY(llmk__check_dtype(op, ids.name, ids.t, LLMK__INTS));
  /* shapes */
  LLMK__TRY(llmk__check_rank(op, values.name, values.t, 2));
  int64_t B = values.t->shape[0], V = values.t->shape[1];
  const arg vecs[] = {p, k, min_p, kept, temperature, seed, offset, ids};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
    if (vecs[i].t) LLMK__TRY(check_vec(op, vecs[i], B, 1u << vecs[i].t->dtype));
  const arg mats[] = {out, logits2, si};
  for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
    if (mats[i].t) LLMK__TRY(check_mat(op, mats[i], B, V, 1u << mats[i].t->dtype));
  /* strides, spans, data */
  const arg all[] = {values,  p,  k,           min_p, out,    kept,
                     logits2, si, temperature, seed,  offset, ids};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i].t) LLMK__TRY(llmk__check_tensor(op, all[i].name, all[i].t));
  /* written: out, kept, token_ids; out may be the logits themselves (the same view) */
  llmk__tref refs[sizeof all / sizeof all[0]];
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    refs[i] = (llmk__tref){all[i].t, all[i].name, i == 4 || i == 5 || i == 11};
  const arg *src = mode == MODE_SORTED ? &logits2 : &values;
  const int in_place[1][2] = {{4, mode == MODE_SORTED ? 6 : 0}};
  LLMK__TRY(llmk__check_overlaps(op, refs, (int)(sizeof all / sizeof all[0]), in_place,
                                 llmk__same_view(out.t, src->t) ? 1 : 0));

  tkp_plan pl;
  memset(&pl, 0, sizeof pl);
  pl.op = op;
  pl.mode = mode;
  pl.B = B;
  pl.V = V;
  pl.logits = llmk__view_of(mode == MODE_SORTED ? logits2.t : values.t);
  pl.sv = mode == MODE_SORTED ? llmk__view_of(values.t) : (llmk__view){0};
  pl.si = llmk__view_of(si.t);
  pl.p = llmk__view_of(p.t);
  pl.k = llmk__view_of(k.t);
  pl.min_p = llmk__view_of(min_p.t);
  pl.out = llmk__view_of(out.t);
  pl.kept = llmk__view_of(kept.t);
  pl.temperature = llmk__view_of(temperature.t);
  pl.seed = llmk__view_of(seed.t);
  pl.offset = llmk__view_of(offset.t);
  pl.ids = llmk__view_of(ids.t);
  int cpus = llmk__plan_tasks();
  int64_t w = B < cpus ? B : cpus;
  if (B < cpus && V >= SPLIT_MIN_V && mode != MODE_SORTED)
    w = cpus; /* room to split rows */
  pl.workers = (int)(w < 1 ? 1 : w);
  /* per worker: the row as f32, its keys and bins (about 11 bytes an entry) and fixed
   * tables; a V this large cannot be given a workspace (the logits may be a broadcast
   * view of any extent, as sampling writes only token_ids) */
  if ((uint64_t)V > (SIZE_MAX / 4 - (size_t)(1 << 20)) / 16 / (size_t)pl.workers)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "V=%" PRId64 " is too large: its workspace would overflow", V);
  pl.worker_bytes = worker_bytes(V);
  pl.stream = (double)B * (double)V * (double)llmk_dtype_size(dt) >=
              (double)llmk__last_cache_bytes() / 2;
  pl.kern = llmk__tkp_kernels_for(llmk_get_isa());
  pl.cvt = llmk__convert_kernels_for(llmk_get_isa());
  size_t ws = B == 0 || V == 0 ? 0 : 64 + (size_t)pl.workers * pl.worker_bytes;
  llmk_plan *out_plan;
  LLMK__TRY(llmk__plan_create(op, LLMK__OP_TOP_K_TOP_P, sizeof pl, ws, &out_plan));
  *(tkp_plan *)llmk__plan_payload(out_plan) = pl;
  *workspace_size = ws;
  *plan = out_plan;
  return LLMK_SUCCESS;
}

static const arg none = {NULL, NULL};

llmk_status llmk_apply_top_k_top_p_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p, const llmk_tensor *k,
    const llmk_tensor *out, size_t *workspace_size, llmk_plan **plan) {
  return plan_tkp("apply_top_k_top_p", MODE_FILTER, (arg){logits, "logits"},
                  (arg){p, "p"}, (arg){k, "k"}, none, (arg){out, "out"}, none, none, none,
                  none, none, none, none, workspace_size, plan);
}

llmk_status llmk_apply_top_k_top_p_min_p_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p, const llmk_tensor *k,
    const llmk_tensor *min_p, const llmk_tensor *out, const llmk_tensor *kept,
    size_t *workspace_size, llmk_plan **plan) {
  return plan_tkp("apply_top_k_top_p", MODE_FILTER, (arg){logits, "logits"},
                  (arg){p, "p"}, (arg){k, "k"}, (arg){min_p, "min_p"}, (arg){out, "out"},
                  (arg){kept, "kept"}, none, none, none, none, none, none, workspace_size,
                  plan);
}

llmk_status llmk_apply_top_k_top_p_with_sorted_get_workspace_size(
    const llmk_tensor *sorted_value, const llmk_tensor *sorted_indices,
    const llmk_tensor *p, const llmk_tensor *k, const llmk_tensor *logits,
    const llmk_tensor *out, size_t *workspace_size, llmk_plan **plan) {
  return plan_tkp("apply_top_k_top_p_with_sorted", MODE_SORTED,
                  (arg){sorted_value, "sorted_value"}, (arg){p, "p"}, (arg){k, "k"}, none,
                  (arg){out, "out"}, none, (arg){logits, "logits"},
                  (arg){sorted_indices, "sorted_indices"}, none, none, none, none,
                  workspace_size, plan);
}

llmk_status llmk_sample_top_k_top_p_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p, const llmk_tensor *k,
    const llmk_tensor *min_p, const llmk_tensor *temperature, const llmk_tensor *seed,
    const llmk_tensor *offset, const llmk_tensor *token_ids, size_t *workspace_size,
    llmk_plan **plan) {
  return plan_tkp("sample_top_k_top_p", MODE_SAMPLE, (arg){logits, "logits"},
                  (arg){p, "p"}, (arg){k, "k"}, (arg){min_p, "min_p"}, none, none, none,
                  none, (arg){temperature, "temperature"}, (arg){seed, "seed"},
                  (arg){offset, "offset"}, (arg){token_ids, "token_ids"}, workspace_size,
                  plan);
}

llmk_status llmk_sample_top_k_top_p_ex_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p, const llmk_tensor *k,
    const llmk_tensor *q, const llmk_sample_ex_options *options,
    const llmk_tensor *token_ids, const llmk_tensor *filtered, size_t *workspace_size,
    llmk_plan **plan) {
  const char *op = "sample_top_k_top_p_ex";
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  if (!logits) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "logits is NULL");
  if (!options) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "options is NULL");
  if (!token_ids) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "token_ids is NULL");
  LLMK__TRY(llmk__check_dtype(op, "logits", logits, LLMK__FLOATS));
  llmk_dtype dt = logits->dtype;
  if (p) LLMK__TRY(llmk__check_dtype(op, "p", p, LLMK__DT(dt) | LLMK__DT(LLMK_F32)));
  if (k) LLMK__TRY(llmk__check_dtype(op, "k", k, LLMK__INTS));
  if (q) LLMK__TRY(llmk__check_dtype(op, "q", q, LLMK__DT(LLMK_F32)));
  LLMK__TRY(llmk__check_dtype(op, "token_ids", token_ids, LLMK__INTS));
  if (filtered)
    LLMK__TRY(llmk__check_dtype(op, "filtered", filtered, LLMK__DT(LLMK_F32)));
  LLMK__TRY(llmk__check_rank(op, "logits", logits, 2));
  int64_t B = logits->shape[0], V = logits->shape[1];
  const arg vecs[] = {{p, "p"}, {k, "k"}, {token_ids, "token_ids"}};
  for (size_t i = 0; i < 3; i++)
    if (vecs[i].t) LLMK__TRY(check_vec(op, vecs[i], B, 1u << vecs[i].t->dtype));
  const arg mats[] = {{q, "q"}, {filtered, "filtered"}};
  for (size_t i = 0; i < 2; i++)
    if (mats[i].t) LLMK__TRY(check_mat(op, mats[i], B, V, 1u << mats[i].t->dtype));
  const arg all[] = {
      {logits, "logits"},    {p, "p"}, {k, "k"}, {q, "q"}, {token_ids, "token_ids"},
      {filtered, "filtered"}};
  enum { N_ALL = sizeof all / sizeof all[0] };
  llmk__tref refs[N_ALL];
  for (int i = 0; i < N_ALL; i++) {
    if (all[i].t) LLMK__TRY(llmk__check_tensor(op, all[i].name, all[i].t));
    refs[i] = (llmk__tref){all[i].t, all[i].name, i >= 4};
  }
  LLMK__TRY(llmk__check_overlaps(op, refs, N_ALL, NULL, 0));
  int cpus = llmk__plan_tasks();
  int64_t w = B < cpus ? B : cpus;
  if ((uint64_t)V > (SIZE_MAX / 4 - (size_t)(1 << 20)) / 16 / (size_t)(w < 1 ? 1 : w))
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "V=%" PRId64 " is too large: its workspace would overflow", V);
  tkp_plan pl;
  memset(&pl, 0, sizeof pl);
  pl.op = op;
  pl.mode = MODE_SAMPLE_EX;
  pl.B = B;
  pl.V = V;
  pl.logits = llmk__view_of(logits);
  pl.p = llmk__view_of(p);
  pl.k = llmk__view_of(k);
  pl.q = llmk__view_of(q);
  pl.ids = llmk__view_of(token_ids);
  pl.filtered = llmk__view_of(filtered);
  pl.eps = (float)options->eps;
  pl.fill = options->fill;
  pl.k_max = options->k_max;
  pl.q_by_rank = options->q_by_rank != 0;
  pl.resoftmax = options->resoftmax_top_p != 0;
  pl.workers = (int)(w < 1 ? 1 : w);
  pl.worker_bytes = llmk__tkp_sample_ex_bytes(V);
  size_t ws = B == 0 || V == 0 ? 0 : 64 + (size_t)pl.workers * pl.worker_bytes;
  llmk_plan *out_plan;
  LLMK__TRY(llmk__plan_create(op, LLMK__OP_TOP_K_TOP_P, sizeof pl, ws, &out_plan));
  *(tkp_plan *)llmk__plan_payload(out_plan) = pl;
  *workspace_size = ws;
  *plan = out_plan;
  return LLMK_SUCCESS;
}

/* The options as this build knows them: a shorter struct is refused, a longer one (a
 * newer header) accepted only when the fields this build does not know are all 0. */
static llmk_status read_ex2_options(const char *op, const llmk_sample_ex2_options *o,
                                    llmk_sample_ex2_options *out) {
  if (o->struct_size < LLMK_SAMPLE_EX2_OPTIONS_V1_SIZE)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "options->struct_size=%zu is below %zu (the first version's size)",
                       o->struct_size, (size_t)LLMK_SAMPLE_EX2_OPTIONS_V1_SIZE);
  const unsigned char *b = (const unsigned char *)o;
  for (size_t i = sizeof *out; i < o->struct_size; i++)
    if (b[i])
      return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                         "options->struct_size=%zu: byte %zu is set, a field this "
                         "build (%zu bytes) does not know",
                         o->struct_size, i, sizeof *out);
  memset(out, 0, sizeof *out);
  memcpy(out, o, o->struct_size < sizeof *out ? o->struct_size : sizeof *out);
  return LLMK_SUCCESS;
}

llmk_status llmk_sample_top_k_top_p_ex2_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p, const llmk_tensor *k,
    const llmk_tensor *min_p, const llmk_tensor *q,
    const llmk_sample_ex2_options *options, const llmk_tensor *token_ids,
    const llmk_tensor *filtered, const llmk_tensor *kept_values,
    const llmk_tensor *kept_index, size_t *workspace_size, llmk_plan **plan) {
  const char *op = "sample_top_k_top_p_ex2";
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  if (!logits) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "logits is NULL");
  if (!options) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "options is NULL");
  llmk_sample_ex2_options o;
  LLMK__TRY(read_ex2_options(op, options, &o));
  LLMK__TRY(llmk__check_dtype(op, "logits", logits, LLMK__FLOATS));
  llmk_dtype dt = logits->dtype;
  const uint32_t pdt = LLMK__DT(dt) | LLMK__DT(LLMK_F32);
  if (p) LLMK__TRY(llmk__check_dtype(op, "p", p, pdt));
  if (k) LLMK__TRY(llmk__check_dtype(op, "k", k, LLMK__INTS));
  if (min_p) LLMK__TRY(llmk__check_dtype(op, "min_p", min_p, pdt));
  if (q) LLMK__TRY(llmk__check_dtype(op, "q", q, LLMK__DT(LLMK_F32)));
  if (token_ids) LLMK__TRY(llmk__check_dtype(op, "token_ids", token_ids, LLMK__INTS));
  if (filtered)
    LLMK__TRY(llmk__check_dtype(op, "filtered", filtered, LLMK__DT(LLMK_F32)));
  if (kept_values)
    LLMK__TRY(llmk__check_dtype(op, "kept_values", kept_values, LLMK__DT(LLMK_F32)));
  if (kept_index) LLMK__TRY(llmk__check_dtype(op, "kept_index", kept_index, LLMK__INTS));
  LLMK__TRY(llmk__check_rank(op, "logits", logits, 2));
  int64_t B = logits->shape[0], V = logits->shape[1];
  const arg vecs[] = {{p, "p"}, {k, "k"}, {min_p, "min_p"}, {token_ids, "token_ids"}};
  for (size_t i = 0; i < 4; i++)
    if (vecs[i].t) LLMK__TRY(check_vec(op, vecs[i], B, 1u << vecs[i].t->dtype));
  const arg mats[] = {{q, "q"},
                      {filtered, "filtered"},
                      {kept_values, "kept_values"},
                      {kept_index, "kept_index"}};
  for (size_t i = 0; i < 4; i++)
    if (mats[i].t) LLMK__TRY(check_mat(op, mats[i], B, V, 1u << mats[i].t->dtype));
  const arg all[] = {{logits, "logits"},
                     {p, "p"},
                     {k, "k"},
                     {min_p, "min_p"},
                     {q, "q"},
                     {token_ids, "token_ids"},
                     {filtered, "filtered"},
                     {kept_values, "kept_values"},
                     {kept_index, "kept_index"}};
  enum { N_ALL = sizeof all / sizeof all[0], FIRST_OUT = 5 };
  llmk__tref refs[N_ALL];
  for (int i = 0; i < N_ALL; i++) {
    if (all[i].t) LLMK__TRY(llmk__check_tensor(op, all[i].name, all[i].t));
    refs[i] = (llmk__tref){all[i].t, all[i].name, i >= FIRST_OUT};
  }
  LLMK__TRY(llmk__check_overlaps(op, refs, N_ALL, NULL, 0));
  int cpus = llmk__plan_tasks();
  int64_t w = B < cpus ? B : cpus;
  if ((uint64_t)V > (SIZE_MAX / 4 - (size_t)(1 << 20)) / 16 / (size_t)(w < 1 ? 1 : w))
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "V=%" PRId64 " is too large: its workspace would overflow", V);
  tkp_plan pl;
  memset(&pl, 0, sizeof pl);
  pl.op = op;
  pl.mode = MODE_SAMPLE_EX;
  pl.v2 = true;
  pl.B = B;
  pl.V = V;
  pl.logits = llmk__view_of(logits);
  pl.p = llmk__view_of(p);
  pl.k = llmk__view_of(k);
  pl.min_p = llmk__view_of(min_p);
  pl.q = llmk__view_of(q);
  pl.ids = llmk__view_of(token_ids);
  pl.filtered = llmk__view_of(filtered);
  pl.kvals = llmk__view_of(kept_values);
  pl.kidx = llmk__view_of(kept_index);
  pl.eps = (float)o.eps;
  pl.fill = o.fill;
  pl.k_max = o.k_max;
  pl.input_is_logits = o.input_is_logits != 0;
  pl.workers = (int)(w < 1 ? 1 : w);
  pl.worker_bytes = llmk__tkp_sample_ex_bytes(V);
  size_t ws = B == 0 || V == 0 ? 0 : 64 + (size_t)pl.workers * pl.worker_bytes;
  llmk_plan *out_plan;
  LLMK__TRY(llmk__plan_create(op, LLMK__OP_TOP_K_TOP_P, sizeof pl, ws, &out_plan));
  *(tkp_plan *)llmk__plan_payload(out_plan) = pl;
  *workspace_size = ws;
  *plan = out_plan;
  return LLMK_SUCCESS;
}

/* ------------------------------------------------------------------ phase 2 */

static llmk_status check_values(const tkp_plan *pl, void *ws) {
  const char *op = pl->op;
  for (int64_t r = 0; r < pl->B; r++) {
    if (pl->p.data) {
      float v = llmk__view_get_f(&pl->p, r, 0);
      if (!(v >= 0.0f && v <= 1.0f))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "p[%" PRId64 "]=%g must be in [0, 1]", r, (double)v);
    }
    if (pl->min_p.data) {
      float v = llmk__view_get_f(&pl->min_p, r, 0);
      if (!(v >= 0.0f && v <= 1.0f))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "min_p[%" PRId64 "]=%g must be in [0, 1]", r, (double)v);
    }
    if (pl->temperature.data) {
      float v = llmk__view_get_f(&pl->temperature, r, 0);
      if (!(v >= 0.0f) || isinf(v))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                           "temperature[%" PRId64 "]=%g must be finite and >= 0", r,
                           (double)v);
    }
  }
  if (pl->mode == MODE_SORTED && pl->V > 0) {
    uint8_t *seen = (uint8_t *)ws;
    for (int64_t r = 0; r < pl->B; r++) {
      /* ascending (in the keys' order: -0 == +0, NaN on top): the masses take the last
       * entry as the row's largest */
      uint32_t prev = 0;
      for (int64_t j = 0; j < pl->V; j++) {
        float v = llmk__view_get_f(&pl->sv, r, j);
        uint32_t key = llmk__key_of(v);
        if (key < prev)
          return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                             "sorted_value[%" PRId64 "][%" PRId64
                             "]=%g is below the entry before it: rows must be ascending",
                             r, j, (double)v);
        prev = key;
      }
      memset(seen, 0, (size_t)pl->V);
      for (int64_t j = 0; j < pl->V; j++) {
        int64_t idx = llmk__view_get(&pl->si, r, j);
        if (idx < 0 || idx >= pl->V || seen[idx])
          return llmk__error(LLMK_ERROR_INVALID_VALUE, op,
                             "sorted_indices[%" PRId64 "][%" PRId64 "]=%" PRId64 " is %s",
                             r, j, idx,
                             idx < 0 || idx >= pl->V ? "outside [0, V)" : "repeated");
        seen[idx] = 1;
      }
    }
  }
  return LLMK_SUCCESS;
}

static void worker_task(void *job_arg, int w, int nth) {
  tkp_job *j = job_arg;
  const tkp_plan *pl = j->pl;
  (void)nth;
  if (pl->mode == MODE_SAMPLE_EX) {
    for (int64_t r = atomic_fetch_add(&j->next, 1); r < pl->B;
         r = atomic_fetch_add(&j->next, 1))
      (pl->v2 ? llmk__tkp_sample_ex2_one : llmk__tkp_sample_ex_one)(
          pl, j->ws + (size_t)w * pl->worker_bytes, r);
    return;
  }
  scratch s = scratch_at(j->ws + (size_t)w * pl->worker_bytes);
  s.keys = (uint32_t *)(void *)(s.row + pl->V);
  s.rowbins = (uint16_t *)(void *)(s.keys + pl->V);
  if (pl->mode == MODE_FILTER) {
    llmk__tkp_filter_rows(pl, j, &s);
    return;
  }
  for (int64_t r = atomic_fetch_add(&j->next, 1); r < pl->B;
       r = atomic_fetch_add(&j->next, 1)) {
    if (r + 1 < pl->B && pl->k.data && pl->mode != MODE_SORTED)
      llmk__tkp_prefetch_sample(&pl->logits, r + 1, pl->V);
    if (pl->mode == MODE_SAMPLE)
      llmk__tkp_sample_one(pl, NULL, &s, r);
    else
      llmk__tkp_sorted_one(pl, &s, r);
  }
}

int64_t llmk__tkp_split_min_v_k = (int64_t)1 << 18;

static llmk_status run(const void *payload, void *workspace, llmk_context *ctx) {
  const tkp_plan *pl = payload;
  llmk_status st = LLMK_SUCCESS;
  char *ws = (char *)(((uintptr_t)workspace + 63) & ~(uintptr_t)63);
  if (pl->B > 0 && pl->V > 0) {
    st = pl->mode == MODE_SAMPLE_EX ? LLMK_SUCCESS : check_values(pl, ws);
    if (st == LLMK_SUCCESS) {
      if (pl->V == 1 && pl->mode != MODE_SAMPLE && pl->mode != MODE_SAMPLE_EX) {
        /* one entry: the largest, always kept */
        for (int64_t r = 0; r < pl->B; r++) {
          const llmk__view *src =
              pl->mode == MODE_SORTED && !pl->logits.data ? &pl->sv : &pl->logits;
          memmove((char *)llmk__view_at(&pl->out, r, 0), llmk__view_at(src, r, 0),
                  llmk_dtype_size(pl->out.dtype));
          if (pl->kept.data) llmk__view_set(&pl->kept, r, 1);
        }
      } else if (pl->mode != MODE_SORTED && pl->mode != MODE_SAMPLE_EX &&
                 pl->V >= (pl->k.data ? llmk__tkp_split_min_v_k : SPLIT_MIN_V) &&
                 pl->B < llmk__parallel_tasks(ctx, pl->workers) && pl->workers > 1) {
        /* fewer rows than threads: each row split over a team of threads */
        scratch ps[MAX_PARTS];
        int parts = llmk__parallel_tasks(ctx, pl->workers);
        for (int w = 0; w < parts; w++) {
          ps[w] = scratch_at(ws + (size_t)w * pl->worker_bytes);
          ps[w].keys = (uint32_t *)(void *)(ps[w].row + pl->V);
          ps[w].rowbins = (uint16_t *)(void *)(ps[w].keys + pl->V);
        }
        team tm = {ctx, parts, ps};
        for (int64_t r = 0; r < pl->B; r++) {
          if (pl->mode == MODE_FILTER)
            llmk__tkp_filter_one(pl, &tm, &ps[0], r);
          else
            llmk__tkp_sample_one(pl, &tm, &ps[0], r);
        }
      } else {
        tkp_job job = {pl, ws, 0};
        /* no more tasks than rows: an idle task still costs its thread's wake-up */
        llmk__parallel_run(ctx, pl->B < pl->workers ? pl->B : pl->workers, worker_task,
                           &job);
      }
    }
  }
  return st;
}

llmk_status llmk_apply_top_k_top_p(void *workspace, size_t workspace_size,
                                   llmk_plan *plan, llmk_context *ctx) {
  return llmk__plan_run("apply_top_k_top_p", LLMK__OP_TOP_K_TOP_P, plan, workspace,
                        workspace_size, ctx, run);
}
