/* SPDX-License-Identifier: Apache-2.0 */
/* What scatter_pa_kv_cache and gather_pa_kv_cache share: validation and plan.
 *
 * Each layout is reduced, at plan time, to a list of runs per token: (offset in the
 * token's [H, D] row, offset from the slot's base in the cache, length, the two element
 * strides, head). A run with unit strides on both sides is one memcpy or one SIMD
 * conversion; NHD with contiguous heads is a single run per token. */
#include "ops/kv_cache/kv_cache.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/op.h"
#include "core/overlap.h"
#include "dispatch/dispatch.h"

const char llmk__scatter_op[] = "scatter_pa_kv_cache";
const char llmk__gather_op[] = "gather_pa_kv_cache";

const char *llmk_kv_layout_name(llmk_kv_layout layout) {
  switch (layout) {
    case LLMK_KV_BLOCKS:
      return "blocks";
    case LLMK_KV_XSPLIT:
      return "xsplit";
    case LLMK_KV_NZ:
      return "nz";
  }
  return "invalid";
}

/* ------------------------------------------------------------------- runs */

/* Whether `off` is where a run from `start` of `len` elements `stride` apart would
 * place its next element (false when that place is past int64: a stride that only an
 * extent of 1 allows can be anything). */
static bool run_continues(int64_t start, int64_t len, int64_t stride, int64_t off) {
  int64_t next;
  return !__builtin_mul_overflow(len, stride, &next) &&
         !__builtin_add_overflow(start, next, &next) && next == off;
}

/* The most runs build_runs() writes for one side: 1 per head (blocks, x-split value),
 * D/x per head (x-split key), at most D/ld + 2 per head (NZ); -1 when that overflows.
 * Rows without elements (H or D 0) have none. */
static int64_t max_runs(llmk_kv_layout layout, bool is_key, int64_t H, int64_t D,
                        int64_t x_or_ld) {
  if (H <= 0 || D <= 0) return 0;
  int64_t per_head = layout == LLMK_KV_BLOCKS             ? 1
                     : layout == LLMK_KV_XSPLIT && is_key ? D / x_or_ld
                     : layout == LLMK_KV_XSPLIT           ? 1
                                                          : D / x_or_ld + 2;
  int64_t n;
  return __builtin_mul_overflow(H, per_head, &n) ? -1 : n;
}

/* Writes the runs of one side into `out` (at most `cap`, see max_runs()) and returns
 * their number. ts1/ts2: the token tensor's head and dim strides; cs: the cache's
 * strides. A row without elements (H or D 0) has no runs. */
static int64_t build_runs(llmk_kv_layout layout, bool is_key, const int64_t *cs,
                          int64_t ts1, int64_t ts2, int64_t H, int64_t D, int64_t x_or_ld,
                          bool per_head, llmk__kv_run *out, int64_t cap) {
  int64_t n = 0;
  if (H <= 0 || D <= 0 || cap <= 0) return 0;
#define EMIT(tok, cache, l, tst, cst, hh)                                          \
  do {                                                                             \
    llmk__kv_run r_ = {(tok), (cache), (l), (tst), (cst), (hh)};                   \
    if (n > 0) {                                                                   \
      llmk__kv_run *p_ = &out[n - 1];                                              \
      if ((!per_head || p_->head == r_.head) && p_->tok_stride == r_.tok_stride && \
          p_->cache_stride == r_.cache_stride &&                                   \
          run_continues(p_->tok_off, p_->len, p_->tok_stride, r_.tok_off) &&       \
          run_continues(p_->cache_off, p_->len, p_->cache_stride, r_.cache_off)) { \
        p_->len += r_.len;                                                         \
        break;                                                                     \
      }                                                                            \
    }                                                                              \
    if (n < cap) out[n++] = r_;                                                    \
  } while (0)
  for (int64_t h = 0; h < H; h++) {
    if (layout == LLMK_KV_BLOCKS) { /* [nb, bs, H, D] */
      EMIT(h * ts1, h * cs[2], D, ts2, cs[3], h);
    } else if (layout == LLMK_KV_XSPLIT && is_key) { /* [nb, H, D/x, bs, x] */
      for (int64_t c = 0; c < D / x_or_ld; c++)
        EMIT(h * ts1 + c * x_or_ld * ts2, h * cs[1] + c * cs[2], x_or_ld, ts2, cs[4], h);
    } else if (layout == LLMK_KV_XSPLIT) { /* [nb, H, D, bs] */
      EMIT(h * ts1, h * cs[1], D, ts2, cs[2], h);
    } else { /* NZ: [nb, H*D/ld, bs, ld] */
      int64_t ld = x_or_ld;
      for (int64_t hd = h * D; hd < (h + 1) * D;) {
        int64_t l = hd % ld, len = ld - l < (h + 1) * D - hd ? ld - l : (h + 1) * D - hd;
        EMIT(h * ts1 + (hd - h * D) * ts2, (hd / ld) * cs[1] + l * cs[3], len, ts2, cs[3],
             h);
        hd += len;
      }
    }
  }
#undef EMIT
  return n;
}

/* ------------------------------------------------------------ validation */

static int64_t cache_rank(llmk_kv_layout layout, bool is_key) {
  return layout == LLMK_KV_XSPLIT && is_key ? 5 : 4;
}

/* dtype rules of one side; sets mode */
static llmk_status check_side_dtypes(const char *op, bool gather,
                                     const llmk__kv_side_args *s, llmk__kv_side *k) {
  const llmk_tensor *src = gather ? s->cache : s->tok, *dst = gather ? s->tok : s->cache;
  const char *src_name = gather ? s->cache_name : s->tok_name;
  const char *dst_name = gather ? s->tok_name : s->cache_name;
  const uint32_t floats = LLMK__FLOATS, fp8 = LLMK__FP8;
  size_t esz = llmk_dtype_size(src->dtype);
  if (esz != 1 && esz != 2 && esz != 4)
    return llmk__error(LLMK_ERROR_INVALID_DTYPE, op,
                       "%s.dtype=%s: elements must be 1, 2 or 4 bytes", src_name,
                       llmk_dtype_name(src->dtype));
  if (src->dtype == dst->dtype) {
    k->mode = LLMK__KV_COPY;
  } else if (!gather && (floats & LLMK__DT(src->dtype)) && (fp8 & LLMK__DT(dst->dtype))) {
    k->mode = LLMK__KV_QUANT;
  } else if (gather && (fp8 & LLMK__DT(src->dtype)) && (floats & LLMK__DT(dst->dtype))) {
    k->mode = LLMK__KV_DEQUANT;
  } else {
    return llmk__error(LLMK_ERROR_INVALID_DTYPE, op,
                       "%s.dtype=%s with %s.dtype=%s: the dtypes must be equal, or %s",
                       dst_name, llmk_dtype_name(dst->dtype), src_name,
                       llmk_dtype_name(src->dtype),
                       gather ? "an fp8 cache read into f32, f16 or bf16"
                              : "an f32, f16 or bf16 source written into an fp8 cache");
  }
  if (s->scale)
    LLMK__TRY(llmk__check_dtype(op, s->scale_name, s->scale, LLMK__DT(LLMK_F32)));
  return LLMK_SUCCESS;
}

/* shapes of one side; H, D from the token tensor. nb/bs: in = the key side's (or -1 to
 * set them) */
static llmk_status check_side_shapes(const char *op, llmk_kv_layout layout, bool is_key,
                                     const llmk__kv_side_args *s, int64_t T,
                                     const char *T_name, int64_t H, int64_t *nb,
                                     int64_t *bs, llmk__kv_side *k) {
  const llmk_tensor *tok = s->tok, *cache = s->cache;
  LLMK__TRY(llmk__check_rank(op, s->tok_name, tok, 3));
  if (T >= 0) LLMK__TRY(llmk__check_dim(op, s->tok_name, tok, 0, T, T_name));
  if (H >= 0) LLMK__TRY(llmk__check_dim(op, s->tok_name, tok, 1, H, "key's H"));
  int64_t D = tok->shape[2];
  H = tok->shape[1];
  LLMK__TRY(llmk__check_rank(op, s->cache_name, cache, (int)cache_rank(layout, is_key)));
  size_t cesz = llmk_dtype_size(cache->dtype);
  int64_t unit = 0, nb_dim = 0, bs_dim = 1;
  if (layout == LLMK_KV_BLOCKS) {
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 2, H, "H"));
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 3, D, "D"));
  } else if (layout == LLMK_KV_XSPLIT && is_key) {
    unit = (int64_t)(16 / cesz);
    if (D % unit)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "%s.shape[2]=D=%" PRId64 " must be a multiple of x=%" PRId64
                         " for an x-split key cache",
                         s->tok_name, D, unit);
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 1, H, "H"));
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 2, D / unit, "D/x"));
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 4, unit,
                              "x (16 bytes / element size)"));
    bs_dim = 3;
  } else if (layout == LLMK_KV_XSPLIT) {
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 1, H, "H"));
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 2, D, "D"));
    bs_dim = 3;
  } else {
    unit = (int64_t)(32 / cesz);
    int64_t hd;
    if (__builtin_mul_overflow(H, D, &hd))
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "H*D of %s overflows int64 (H=%" PRId64 ", D=%" PRId64 ")",
                         s->tok_name, H, D);
    if (hd % unit)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "H*D=%" PRId64 " of %s must be a multiple of ld=%" PRId64
                         " for NZ",
                         hd, s->tok_name, unit);
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 1, hd / unit, "H*D/ld"));
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 3, unit,
                              "ld (32 bytes / element size)"));
    bs_dim = 2;
  }
  if (*nb < 0) {
    *nb = cache->shape[nb_dim];
    *bs = cache->shape[bs_dim];
  } else {
    LLMK__TRY(
        llmk__check_dim(op, s->cache_name, cache, nb_dim, *nb, "key cache's num_blocks"));
    LLMK__TRY(
        llmk__check_dim(op, s->cache_name, cache, bs_dim, *bs, "key cache's block_size"));
  }
  if (s->scale) {
    const llmk_tensor *sc = s->scale;
    bool ok =
        sc->rank == 0 || (sc->rank == 1 && (sc->shape[0] == 1 || sc->shape[0] == H));
    if (!ok)
      return llmk__error(
          LLMK_ERROR_INVALID_SHAPE, op,
          "%s must have shape [], [1] or [H=%" PRId64 "] (rank %d%s%" PRId64 ")",
          s->scale_name, H, (int)sc->rank, sc->rank >= 1 ? ", shape[0]=" : "",
          sc->rank >= 1 ? sc->shape[0] : 0);
    k->scale_n = sc->rank == 0 ? 1 : sc->shape[0];
    k->scale_stride = k->scale_n > 1 ? sc->strides[0] : 0;
  }
  k->H = H;
  k->D = D;
  k->tok_s0 = tok->strides[0];
  k->cache_sb = cache->strides[nb_dim];
  k->cache_so = cache->strides[bs_dim];
  k->tok_dt = tok->dtype;
  k->cache_dt = cache->dtype;
  k->tok_esz = llmk_dtype_size(tok->dtype);
  k->cache_esz = cesz;
  k->e5m2 = cache->dtype == LLMK_FP8_E5M2;
  k->present = true;
  (void)unit;
  return LLMK_SUCCESS;
}

static int64_t layout_unit(llmk_kv_layout layout, bool is_key, const llmk_tensor *cache) {
  size_t cesz = llmk_dtype_size(cache->dtype);
  if (layout == LLMK_KV_XSPLIT && is_key) return (int64_t)(16 / cesz);
  if (layout == LLMK_KV_NZ) return (int64_t)(32 / cesz);
  return 0;
}

/* The plan's payload (the plan, then counts[i] runs per side) and the workspace:
 * scatter's duplicate table when more than one token moves (16 + 16 * cap + T bytes,
 * cap the power of two >= max(16, 2T)), gather's start offsets (16 + 8 * (B + 1)).
 * INVALID_SHAPE when one of them overflows. */
static llmk_status plan_sizes(const kv_plan *p, const llmk__kv_side_args sides[2],
                              const int64_t counts[2], size_t *payload, size_t *ws) {
  const char *op = p->op;
  for (int i = 0; i < 2; i++)
    if (counts[i] < 0)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "%s: the runs of a row (H=%" PRId64 ", D=%" PRId64
                         ") overflow int64",
                         sides[i].tok_name, p->side[i].H, p->side[i].D);
  size_t runs, bytes;
  if (__builtin_add_overflow((uint64_t)counts[0], (uint64_t)counts[1], &runs) ||
      __builtin_mul_overflow(runs, sizeof(llmk__kv_run), &bytes) ||
      __builtin_add_overflow(bytes, sizeof *p, payload))
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "the run lists of %s (H=%" PRId64 ", D=%" PRId64
                       ") overflow size_t",
                       sides[0].tok_name, p->side[0].H, p->side[0].D);
  *ws = 0;
  if (p->gather) {
    size_t starts;
    if (p->B == INT64_MAX ||
        __builtin_mul_overflow((size_t)p->B + 1, sizeof(int64_t), &starts) ||
        __builtin_add_overflow(starts, (size_t)16, ws))
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "block_tables.shape[0]=B=%" PRId64
                         ": the workspace (16 + 8 * (B+1) bytes) overflows size_t",
                         p->B);
  } else if (p->T > 1 && runs > 0) {
    size_t cap = 16, twice, table;
    bool ovf = __builtin_mul_overflow((size_t)p->T, (size_t)2, &twice);
    while (!ovf && cap < twice) ovf = __builtin_mul_overflow(cap, (size_t)2, &cap);
    if (ovf || __builtin_mul_overflow(cap, 2 * sizeof(int64_t), &table) ||
        __builtin_add_overflow(table, (size_t)16 + (size_t)p->T, ws))
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "T=%" PRId64
                         ": the workspace's duplicate table (16 * next_pow2(2T) + T "
                         "bytes) overflows size_t",
                         p->T);
  }
  return LLMK_SUCCESS;
}

/* The common phase 1 of both ops, after the op-specific NULL checks. */
llmk_status llmk__kv_plan(const char *op, bool gather, llmk__kv_side_args sides[2],
                          llmk_kv_layout layout, const llmk_tensor *index_a,
                          const char *index_a_name, const llmk_tensor *index_b,
                          const char *index_b_name, const llmk_tensor *index_c,
                          const char *index_c_name, bool cumsum, size_t *workspace_size,
                          llmk_plan **plan) {
  kv_plan p;
  memset(&p, 0, sizeof p);
  p.op = op;
  p.gather = gather;
  bool has_v = sides[1].tok != NULL;
  /* dtypes */
  for (int i = 0; i < 2; i++) {
    if (i == 1 && !has_v) break;
    LLMK__TRY(check_side_dtypes(op, gather, &sides[i], &p.side[i]));
  }
  /* scatter: each side (source, cache, scale) follows its own dtype rule, so key and
   * value may differ (CANN's PA_NZ: an i8 key beside an f16 value); gather's outputs
   * share one dtype */
  if (has_v && gather) {
    if (sides[1].tok->dtype != sides[0].tok->dtype)
      return llmk__error(LLMK_ERROR_INVALID_DTYPE, op,
                         "%s.dtype=%s must equal %s.dtype=%s", sides[1].tok_name,
                         llmk_dtype_name(sides[1].tok->dtype), sides[0].tok_name,
                         llmk_dtype_name(sides[0].tok->dtype));
  }
  const uint32_t idx = LLMK__INTS;
  LLMK__TRY(llmk__check_dtype(op, index_a_name, index_a, idx));
  if (index_b) LLMK__TRY(llmk__check_dtype(op, index_b_name, index_b, idx));
  if (index_c) LLMK__TRY(llmk__check_dtype(op, index_c_name, index_c, idx));
  /* attributes */
  if ((unsigned)layout > LLMK_KV_NZ)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "layout=%d is not a layout (blocks 0, xsplit 1, nz 2)",
                       (int)layout);
  for (int i = 0; i < 2; i++) {
    if (i == 1 && !has_v) break;
    bool convert = p.side[i].mode != LLMK__KV_COPY;
    if (convert && !sides[i].scale)
      return llmk__error(LLMK_ERROR_NULL_POINTER, op,
                         "%s is required: %s converts between %s and %s",
                         sides[i].scale_name, op, llmk_dtype_name(sides[i].tok->dtype),
                         llmk_dtype_name(sides[i].cache->dtype));
    if (!convert && sides[i].scale)
      return llmk__error(
          LLMK_ERROR_INVALID_ATTRIBUTE, op,
          "%s given, but %s and %s share dtype %s (a bit copy takes no scale)",
          sides[i].scale_name, sides[i].tok_name, sides[i].cache_name,
          llmk_dtype_name(sides[i].cache->dtype));
  }
  /* ranks and shapes */
  int64_t nb = -1, bs = -1;
  if (gather) {
    LLMK__TRY(llmk__check_rank(op, index_a_name, index_a, 2)); /* block_tables */
    LLMK__TRY(llmk__check_rank(op, index_b_name, index_b, 1)); /* seq_lens */
    int64_t B = index_a->shape[0];
    if (cumsum && B == INT64_MAX)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "block_tables.shape[0]=%" PRId64 ": B + 1 overflows", B);
    LLMK__TRY(llmk__check_dim(
        op, index_b_name, index_b, 0, cumsum ? B + 1 : B,
        cumsum ? "block_tables.shape[0] + 1 (cumulative)" : "block_tables.shape[0]"));
    if (index_c) {
      LLMK__TRY(llmk__check_rank(op, index_c_name, index_c, 1));
      LLMK__TRY(
          llmk__check_dim(op, index_c_name, index_c, 0, B, "block_tables.shape[0]"));
    }
  } else {
    LLMK__TRY(llmk__check_rank(op, index_a_name, index_a, 1)); /* slot_mapping */
  }
  LLMK__TRY(llmk__check_rank(op, sides[0].tok_name, sides[0].tok, 3));
  int64_t T = sides[0].tok->shape[0];
  if (!gather) LLMK__TRY(llmk__check_dim(op, index_a_name, index_a, 0, T, "T"));
  LLMK__TRY(
      check_side_shapes(op, layout, true, &sides[0], -1, "", -1, &nb, &bs, &p.side[0]));
  if (has_v)
    LLMK__TRY(check_side_shapes(op, layout, false, &sides[1], T,
                                gather ? "key_out.shape[0]" : "T", p.side[0].H, &nb, &bs,
                                &p.side[1]));
  /* strides, spans, data */
  for (int i = 0; i < 2; i++) {
    if (i == 1 && !has_v) break;
    LLMK__TRY(llmk__check_tensor(op, sides[i].tok_name, sides[i].tok));
    LLMK__TRY(llmk__check_tensor(op, sides[i].cache_name, sides[i].cache));
    if (sides[i].scale)
      LLMK__TRY(llmk__check_tensor(op, sides[i].scale_name, sides[i].scale));
  }
  LLMK__TRY(llmk__check_tensor(op, index_a_name, index_a));
  if (index_b) LLMK__TRY(llmk__check_tensor(op, index_b_name, index_b));
  if (index_c) LLMK__TRY(llmk__check_tensor(op, index_c_name, index_c));
  /* written: the caches (scatter) or the outputs (gather); nothing in place */
  llmk__tref refs[9] = {{index_a, index_a_name, false},
                        {index_b, index_b_name, false},
                        {index_c, index_c_name, false}};
  for (int i = 0; i < 2 && (i == 0 || has_v); i++) {
    refs[3 + 3 * i] = (llmk__tref){sides[i].tok, sides[i].tok_name, gather};
    refs[4 + 3 * i] = (llmk__tref){sides[i].cache, sides[i].cache_name, !gather};
    refs[5 + 3 * i] = (llmk__tref){sides[i].scale, sides[i].scale_name, false};
  }
  LLMK__TRY(llmk__check_overlaps(op, refs, 9, NULL, 0));
  int64_t num_slots;
  if (__builtin_mul_overflow(nb, bs, &num_slots))
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "num_blocks * block_size overflows");

  p.T = T;
  p.num_blocks = nb;
  p.block_size = bs;
  p.num_slots = num_slots;
  if (gather) {
    p.tables = llmk__view_of(index_a);
    p.lens = llmk__view_of(index_b);
    if (index_c) p.offs = llmk__view_of(index_c);
    p.has_offs = index_c != NULL;
    p.cumsum = cumsum;
    p.B = index_a->shape[0];
    p.max_blocks = index_a->shape[1];
  } else {
    p.slots = llmk__view_of(index_a);
  }
  /* runs: none where no token row can reach a slot (T 0, an empty cache) */
  int64_t counts[2] = {0, 0}, units[2] = {0, 0};
  bool moves = T > 0 && num_slots > 0;
  for (int i = 0; i < 2; i++) {
    if (i == 1 && !has_v) break;
    llmk__kv_side *k = &p.side[i];
    k->tok = sides[i].tok->data;
    k->cache = sides[i].cache->data;
    k->scale = sides[i].scale ? sides[i].scale->data : NULL;
    units[i] = layout_unit(layout, i == 0, sides[i].cache);
    counts[i] = moves ? max_runs(layout, i == 0, k->H, k->D, units[i]) : 0;
  }
  size_t payload = 0, ws = 0;
  LLMK__TRY(plan_sizes(&p, sides, counts, &payload, &ws));
  p.kern = llmk__kv_kernels_for(llmk_get_isa());
  llmk_plan *out;
  LLMK__TRY(llmk__plan_create(op, gather ? LLMK__OP_GATHER_KV : LLMK__OP_SCATTER_KV,
                              payload, ws, &out));
  kv_plan *pp = llmk__plan_payload(out);
  *pp = p;
  llmk__kv_run *runs = (llmk__kv_run *)(void *)(pp + 1);
  for (int i = 0; i < 2; i++) {
    if (i == 1 && !has_v) break;
    llmk__kv_side *k = &pp->side[i];
    k->gather = gather;
    k->kern = pp->kern;
    k->runs = runs;
    k->nruns = build_runs(layout, i == 0, sides[i].cache->strides,
                          sides[i].tok->strides[1], sides[i].tok->strides[2], k->H, k->D,
                          units[i], k->scale_n > 1, runs, counts[i]);
    /* grouping pays where a token's row is split into pieces and consecutive slots
     * sit within one cache line of each other */
    k->group =
        (k->nruns > 1 || (k->nruns == 1 && k->runs[0].cache_stride != 1)) &&
        k->cache_so <= 64 / (int64_t)k->cache_esz; /* (no product: so may be huge) */
    k->unit_copy = k->mode == LLMK__KV_COPY;
    for (int64_t r = 0; r < k->nruns; r++)
      if (k->runs[r].len > 1 &&
          (k->runs[r].tok_stride != 1 || k->runs[r].cache_stride != 1))
        k->unit_copy = false;
    runs += counts[i];
  }
  pp->rows = !gather;
  for (int i = 0; i < 2; i++) {
    llmk__kv_side *k = &pp->side[i];
    if (!k->present || k->nruns == 0) continue;
    int64_t sb;
    if (!k->unit_copy || k->nruns != 1 || k->runs[0].tok_off != 0 ||
        k->runs[0].cache_off != 0 || __builtin_mul_overflow(bs, k->cache_so, &sb) ||
        sb != k->cache_sb)
      pp->rows = false;
    k->row_bytes = (size_t)k->runs[0].len * k->tok_esz;
  }
  *workspace_size = ws;
  *plan = out;
  return LLMK_SUCCESS;
}

llmk_status llmk__kv_check_scales(const kv_plan *p) {
  for (int i = 0; i < 2; i++) {
    const llmk__kv_side *k = &p->side[i];
    if (!k->present || !k->scale) continue;
    for (int64_t h = 0; h < k->scale_n; h++) {
      float s = llmk__kv_scale_of(k, h);
      if (!(s > 0.0f) || !isfinite(s))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                           "%s[%" PRId64 "]=%g must be finite and > 0",
                           i ? "v_scale" : "k_scale", h, (double)s);
    }
  }
  return LLMK_SUCCESS;
}
