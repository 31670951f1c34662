/* scatter_pa_kv_cache and gather_pa_kv_cache: phase 1 (validate, plan) and phase 2.
 *
 * Each layout is reduced, at plan time, to a list of runs per token: (offset in the
 * token's [H, D] row, offset from the slot's base in the cache, length, the two element
 * strides, head). A run with unit strides on both sides is one memcpy or one SIMD
 * conversion; NHD with contiguous heads is a single run per token. */
#include "kernels/kv_cache/kv_cache.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "core/op.h"
#include "core/view.h"
#include "dispatch/dispatch.h"
#include "kernels/convert/convert-elem.h"
#include "llmk/kv_cache.h"

static const char scatter_op[] = "scatter_pa_kv_cache";
static const char gather_op[] = "gather_pa_kv_cache";

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

typedef struct kv_run {
  int64_t tok_off, cache_off, len, tok_stride, cache_stride;
  int64_t head;
} kv_run;

enum { MODE_COPY, MODE_QUANT, MODE_DEQUANT };

/* One of K and V. "tok" is the token side ([T, H, D]: key/value for scatter, the
 * outputs for gather); "cache" the paged side. */
typedef struct kv_side {
  bool present;
  char *tok, *cache;
  int64_t tok_s0;             /* token stride */
  int64_t cache_sb, cache_so; /* block and in-block offset strides */
  llmk_dtype tok_dt, cache_dt;
  size_t tok_esz, cache_esz;
  int mode;
  bool e5m2;
  const char *scale; /* f32 */
  int64_t scale_n, scale_stride;
  int64_t H, D;
  kv_run *runs;
  int64_t nruns;
  bool group;     /* see move_group() */
  bool unit_copy; /* a bit copy whose runs all have unit strides on both sides */
} kv_side;

typedef struct kv_plan {
  const char *op;
  bool gather;
  kv_side side[2];
  int64_t T, num_blocks, block_size;
  llmk__view slots;        /* scatter: [T] */
  llmk__view tables, lens; /* gather: [B, max_blocks], [B] */
  int64_t B, max_blocks;
  const llmk__kv_kernels *kern;
} kv_plan;

/* ------------------------------------------------------------------- runs */

/* Writes the runs of one side into `out` (when not NULL) and returns their number.
 * ts1/ts2: the token tensor's head and dim strides; cs: the cache's strides. */
static int64_t build_runs(llmk_kv_layout layout, bool is_key, const int64_t *cs,
                          int64_t ts1, int64_t ts2, int64_t H, int64_t D, int64_t x_or_ld,
                          bool per_head, kv_run *out) {
  int64_t n = 0;
#define EMIT(tok, cache, l, tst, cst, hh)                                          \
  do {                                                                             \
    kv_run r_ = {(tok), (cache), (l), (tst), (cst), (hh)};                         \
    if (out && n > 0) {                                                            \
      kv_run *p_ = &out[n - 1];                                                    \
      if ((!per_head || p_->head == r_.head) && p_->tok_stride == r_.tok_stride && \
          p_->cache_stride == r_.cache_stride &&                                   \
          r_.tok_off == p_->tok_off + p_->len * p_->tok_stride &&                  \
          r_.cache_off == p_->cache_off + p_->len * p_->cache_stride) {            \
        p_->len += r_.len;                                                         \
        break;                                                                     \
      }                                                                            \
    }                                                                              \
    if (out) out[n] = r_;                                                          \
    n++;                                                                           \
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

typedef struct side_args {
  const llmk_tensor *tok, *cache, *scale;
  const char *tok_name, *cache_name, *scale_name;
} side_args;

static int64_t cache_rank(llmk_kv_layout layout, bool is_key) {
  return layout == LLMK_KV_XSPLIT && is_key ? 5 : 4;
}

/* dtype rules of one side; sets mode */
static llmk_status check_side_dtypes(const char *op, bool gather, const side_args *s,
                                     kv_side *k) {
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
    k->mode = MODE_COPY;
  } else if (!gather && (floats & LLMK__DT(src->dtype)) && (fp8 & LLMK__DT(dst->dtype))) {
    k->mode = MODE_QUANT;
  } else if (gather && (fp8 & LLMK__DT(src->dtype)) && (floats & LLMK__DT(dst->dtype))) {
    k->mode = MODE_DEQUANT;
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
                                     const side_args *s, int64_t T, const char *T_name,
                                     int64_t H, int64_t *nb, int64_t *bs, kv_side *k) {
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
    if ((H * D) % unit)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "H*D=%" PRId64 " of %s must be a multiple of ld=%" PRId64
                         " for NZ",
                         H * D, s->tok_name, unit);
    LLMK__TRY(llmk__check_dim(op, s->cache_name, cache, 1, H * D / unit, "H*D/ld"));
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

/* The common phase 1 of both ops, after the op-specific NULL checks. */
static llmk_status plan_kv(const char *op, bool gather, side_args sides[2],
                           llmk_kv_layout layout, const llmk_tensor *index_a,
                           const char *index_a_name, const llmk_tensor *index_b,
                           const char *index_b_name, size_t *workspace_size,
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
  if (has_v) {
    if (sides[1].tok->dtype != sides[0].tok->dtype)
      return llmk__error(LLMK_ERROR_INVALID_DTYPE, op,
                         "%s.dtype=%s must equal %s.dtype=%s", sides[1].tok_name,
                         llmk_dtype_name(sides[1].tok->dtype), sides[0].tok_name,
                         llmk_dtype_name(sides[0].tok->dtype));
  }
  const uint32_t idx = LLMK__INTS;
  LLMK__TRY(llmk__check_dtype(op, index_a_name, index_a, idx));
  if (index_b) LLMK__TRY(llmk__check_dtype(op, index_b_name, index_b, idx));
  /* attributes */
  if ((unsigned)layout > LLMK_KV_NZ)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "layout=%d is not a layout (blocks 0, xsplit 1, nz 2)",
                       (int)layout);
  for (int i = 0; i < 2; i++) {
    if (i == 1 && !has_v) break;
    bool convert = p.side[i].mode != MODE_COPY;
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
    LLMK__TRY(llmk__check_dim(op, index_b_name, index_b, 0, index_a->shape[0],
                              "block_tables.shape[0]"));
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
  int64_t num_slots;
  if (__builtin_mul_overflow(nb, bs, &num_slots))
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "num_blocks * block_size overflows");

  p.T = T;
  p.num_blocks = nb;
  p.block_size = bs;
  if (gather) {
    p.tables = llmk__view_of(index_a);
    p.lens = llmk__view_of(index_b);
    p.B = index_a->shape[0];
    p.max_blocks = index_a->shape[1];
  } else {
    p.slots = llmk__view_of(index_a);
  }
  /* runs */
  int64_t counts[2] = {0, 0}, units[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    if (i == 1 && !has_v) break;
    kv_side *k = &p.side[i];
    k->tok = sides[i].tok->data;
    k->cache = sides[i].cache->data;
    k->scale = sides[i].scale ? sides[i].scale->data : NULL;
    units[i] = layout_unit(layout, i == 0, sides[i].cache);
    counts[i] =
        build_runs(layout, i == 0, sides[i].cache->strides, sides[i].tok->strides[1],
                   sides[i].tok->strides[2], k->H, k->D, units[i], k->scale_n > 1, NULL);
  }
  size_t payload = sizeof p + (size_t)(counts[0] + counts[1]) * sizeof(kv_run);
  size_t ws = 0;
  if (gather)
    ws = 16 + (size_t)(p.B + 1) * sizeof(int64_t);
  else if (T > 1) {
    size_t cap = 16;
    while (cap < (size_t)T * 2) cap *= 2;
    ws = 16 + cap * 2 * sizeof(int64_t) + (size_t)T;
  }
  p.kern = llmk__kv_kernels_for(llmk_get_isa());
  llmk_plan *out;
  LLMK__TRY(llmk__plan_create(op, gather ? LLMK__OP_GATHER_KV : LLMK__OP_SCATTER_KV,
                              payload, ws, &out));
  kv_plan *pp = llmk__plan_payload(out);
  *pp = p;
  kv_run *runs = (kv_run *)(void *)(pp + 1);
  for (int i = 0; i < 2; i++) {
    if (i == 1 && !has_v) break;
    kv_side *k = &pp->side[i];
    k->runs = runs;
    k->nruns =
        build_runs(layout, i == 0, sides[i].cache->strides, sides[i].tok->strides[1],
                   sides[i].tok->strides[2], k->H, k->D, units[i], k->scale_n > 1, runs);
    /* grouping pays where a token's row is split into pieces and consecutive slots
     * sit within one cache line of each other */
    k->group = (k->nruns > 1 || (k->nruns == 1 && k->runs[0].cache_stride != 1)) &&
               k->cache_so * (int64_t)k->cache_esz <= 64;
    k->unit_copy = k->mode == MODE_COPY;
    for (int64_t r = 0; r < k->nruns; r++)
      if (k->runs[r].len > 1 &&
          (k->runs[r].tok_stride != 1 || k->runs[r].cache_stride != 1))
        k->unit_copy = false;
    runs += counts[i];
  }
  *workspace_size = ws;
  *plan = out;
  return LLMK_SUCCESS;
}

llmk_status llmk_scatter_pa_kv_cache_get_workspace_size(
    const llmk_tensor *key, const llmk_tensor *value, const llmk_tensor *key_cache,
    const llmk_tensor *value_cache, const llmk_tensor *slot_mapping,
    const llmk_tensor *k_scale, const llmk_tensor *v_scale, llmk_kv_layout layout,
    size_t *workspace_size, llmk_plan **plan) {
  const char *op = scatter_op;
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  if (!key) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key is NULL");
  if (!key_cache) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key_cache is NULL");
  if (!slot_mapping)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "slot_mapping is NULL");
  if (value && !value_cache)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op,
                       "value_cache is NULL but value is given");
  if (!value && value_cache)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "value_cache is given but value is NULL (K-only: pass neither)");
  if (!value && v_scale)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op, "v_scale given without value");
  side_args sides[2] = {{key, key_cache, k_scale, "key", "key_cache", "k_scale"},
                        {value, value_cache, v_scale, "value", "value_cache", "v_scale"}};
  return plan_kv(op, false, sides, layout, slot_mapping, "slot_mapping", NULL, NULL,
                 workspace_size, plan);
}

llmk_status llmk_gather_pa_kv_cache_get_workspace_size(
    const llmk_tensor *key_cache, const llmk_tensor *value_cache,
    const llmk_tensor *block_tables, const llmk_tensor *seq_lens,
    const llmk_tensor *k_scale, const llmk_tensor *v_scale, const llmk_tensor *key_out,
    const llmk_tensor *value_out, llmk_kv_layout layout, size_t *workspace_size,
    llmk_plan **plan) {
  const char *op = gather_op;
  LLMK__TRY(llmk__phase1_begin(op, workspace_size, plan));
  if (!key_cache) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key_cache is NULL");
  if (!key_out) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "key_out is NULL");
  if (!block_tables)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "block_tables is NULL");
  if (!seq_lens) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "seq_lens is NULL");
  if (value_cache && !value_out)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op,
                       "value_out is NULL but value_cache is given");
  if (!value_cache && value_out)
    return llmk__error(
        LLMK_ERROR_INVALID_ATTRIBUTE, op,
        "value_out is given but value_cache is NULL (K-only: pass neither)");
  if (!value_cache && v_scale)
    return llmk__error(LLMK_ERROR_INVALID_ATTRIBUTE, op,
                       "v_scale given without value_cache");
  side_args sides[2] = {
      {key_out, key_cache, k_scale, "key_out", "key_cache", "k_scale"},
      {value_out, value_cache, v_scale, "value_out", "value_cache", "v_scale"}};
  return plan_kv(op, true, sides, layout, block_tables, "block_tables", seq_lens,
                 "seq_lens", workspace_size, plan);
}

/* ------------------------------------------------------------------ runs */

static float scale_of(const kv_side *k, int64_t head) {
  float s;
  memcpy(&s, k->scale + (k->scale_n > 1 ? head * k->scale_stride : 0) * 4, 4);
  return s;
}

static void copy_strided(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n,
                         size_t esz) {
  /* typed loops: a memcpy of a variable element size would be a call per element */
  if (esz == 2) {
    uint16_t *d = (uint16_t *)(void *)dst;
    const uint16_t *s = (const uint16_t *)(const void *)src;
    for (int64_t i = 0; i < n; i++) d[i * ds] = s[i * ss];
  } else if (esz == 1) {
    for (int64_t i = 0; i < n; i++) dst[i * ds] = src[i * ss];
  } else {
    uint32_t *d = (uint32_t *)(void *)dst;
    const uint32_t *s = (const uint32_t *)(const void *)src;
    for (int64_t i = 0; i < n; i++) d[i * ds] = s[i * ss];
  }
}

/* Element i of a run that is strided on one side, by mode. */
static inline void move_elem(const kv_plan *p, const kv_side *k, const kv_run *run,
                             char *t, char *c, int64_t i, int64_t ci, float s) {
  char *te = t + (size_t)(i * run->tok_stride) * k->tok_esz;
  char *ce = c + (size_t)ci * k->cache_esz;
  if (k->mode == MODE_COPY) {
    if (p->gather)
      memcpy(te, ce, k->tok_esz);
    else
      memcpy(ce, te, k->tok_esz);
  } else if (k->mode == MODE_QUANT) {
    *(uint8_t *)ce = llmk__f32_to_fp8(llmk__load_f32(te, k->tok_dt) / s, k->e5m2);
  } else {
    llmk__store_f32(te, k->tok_dt, llmk__fp8_to_f32(*(const uint8_t *)ce, k->e5m2) * s);
  }
}

/* One run of one token: t and c point at the run's first element on each side. */
static void move_run(const kv_plan *p, const kv_side *k, const kv_run *run, char *t,
                     char *c, bool stream) {
  bool unit = (run->tok_stride == 1 && run->cache_stride == 1) || run->len == 1;
  float s = k->mode == MODE_COPY ? 1.0f : scale_of(k, run->head);
  if (k->mode == MODE_COPY) {
    char *dst = p->gather ? t : c;
    const char *src = p->gather ? c : t;
    if (unit) {
      size_t bytes = (size_t)run->len * k->tok_esz;
      if (bytes == 16)
        memcpy(dst, src, 16); /* x-split runs: inline, no call */
      else if (bytes == 32)
        memcpy(dst, src, 32);
      else
        p->kern->copy(dst, src, bytes, stream);
    } else if (p->gather) {
      copy_strided(t, run->tok_stride, c, run->cache_stride, run->len, k->tok_esz);
    } else {
      copy_strided(c, run->cache_stride, t, run->tok_stride, run->len, k->tok_esz);
    }
  } else if (unit && k->mode == MODE_QUANT) {
    p->kern->quant((uint8_t *)c, t, k->tok_dt, k->e5m2, (size_t)run->len, s);
  } else if (unit) {
    p->kern->dequant(t, k->tok_dt, (const uint8_t *)c, k->e5m2, (size_t)run->len, s);
  } else {
    for (int64_t i = 0; i < run->len; i++)
      move_elem(p, k, run, t, c, i, i * run->cache_stride, s);
  }
}

/* A bit copy of one unit-stride run; the 16- and 32-byte pieces of x-split and NZ are
 * inlined. */
static inline void copy_piece(const kv_plan *p, char *dst, const char *src, size_t bytes,
                              bool stream) {
  if (bytes == 16)
    memcpy(dst, src, 16);
  else if (bytes == 32)
    memcpy(dst, src, 32);
  else
    p->kern->copy(dst, src, bytes, stream);
}

/* Moves one token's row between its [H, D] tensor and its cache slot. */
static void move_token(const kv_plan *p, const kv_side *k, char *tok, char *cache,
                       bool stream) {
  if (k->unit_copy) {
    for (int64_t r = 0; r < k->nruns; r++) {
      const kv_run *run = &k->runs[r];
      char *t = tok + (size_t)run->tok_off * k->tok_esz;
      char *c = cache + (size_t)run->cache_off * k->cache_esz;
      copy_piece(p, p->gather ? t : c, p->gather ? c : t, (size_t)run->len * k->tok_esz,
                 stream);
    }
    return;
  }
  for (int64_t r = 0; r < k->nruns; r++) {
    const kv_run *run = &k->runs[r];
    move_run(p, k, run, tok + (size_t)run->tok_off * k->tok_esz,
             cache + (size_t)run->cache_off * k->cache_esz, stream);
  }
}

/* Tokens t0..t0+g-1 to (or from) the consecutive slots of one block starting at `cache`.
 * Used where a token's row is cut into pieces and consecutive slots share cache lines
 * (x-split, NZ): the move is a small transpose, done in tiles of about one cache line
 * on each side, so that every line is read and written once (rows 2 KiB apart would
 * otherwise evict each other from the few L1 sets they map to). */
static void move_group(const kv_plan *p, const kv_side *k, int64_t t0, int64_t g,
                       char *cache, bool stream) {
  size_t tstep = (size_t)k->tok_s0 * k->tok_esz,
         cstep = (size_t)k->cache_so * k->cache_esz;
  char *tok0 = k->tok + (size_t)(t0 * k->tok_s0) * k->tok_esz;
  int64_t r0 = 0;
  while (r0 < k->nruns) {
    const kv_run *run = &k->runs[r0];
    if (run->cache_stride == 1 || run->len == 1) {
      /* pieces: all consecutive unit runs, TJ tokens at a time, TJ pieces filling one
       * destination line; the token rows are read front to back */
      size_t rb = (size_t)run->len * k->cache_esz;
      int64_t tj = rb >= 64 ? 1 : (int64_t)(64 / rb), r1 = r0;
      while (r1 < k->nruns && (k->runs[r1].cache_stride == 1 || k->runs[r1].len == 1))
        r1++;
      for (int64_t j0 = 0; j0 < g; j0 += tj)
        for (int64_t r = r0; r < r1; r++)
          for (int64_t j = j0; j < g && j < j0 + tj; j++) {
            char *t = tok0 + j * tstep + (size_t)k->runs[r].tok_off * k->tok_esz;
            char *c = cache + (size_t)k->runs[r].cache_off * k->cache_esz + j * cstep;
            if (k->mode == MODE_COPY &&
                (k->runs[r].tok_stride == 1 || k->runs[r].len == 1))
              copy_piece(p, p->gather ? t : c, p->gather ? c : t,
                         (size_t)k->runs[r].len * k->tok_esz, stream);
            else
              move_run(p, k, &k->runs[r], t, c, stream);
          }
      r0 = r1;
      continue;
    }
    /* a run strided on the cache side (x-split value [nb, H, D, bs]): elements in tiles
     * of 32 along the run x 8 tokens */
    char *c = cache + (size_t)run->cache_off * k->cache_esz;
    char *t = tok0 + (size_t)run->tok_off * k->tok_esz;
    float s = k->mode == MODE_COPY ? 1.0f : scale_of(k, run->head);
    bool copy16 = k->mode == MODE_COPY && k->tok_esz == 2;
    for (int64_t i0 = 0; i0 < run->len; i0 += 32)
      for (int64_t j0 = 0; j0 < g; j0 += 8)
        for (int64_t i = i0; i < run->len && i < i0 + 32; i++) {
          char *ce = c + (size_t)(i * run->cache_stride) * k->cache_esz;
          char *te = t + (size_t)(i * run->tok_stride) * k->tok_esz;
          for (int64_t j = j0; j < g && j < j0 + 8; j++) {
            if (copy16 && p->gather)
              memcpy(te + j * tstep, ce + j * cstep, 2);
            else if (copy16)
              memcpy(ce + j * cstep, te + j * tstep, 2);
            else
              move_elem(p, k, run, t + j * tstep, c, i,
                        i * run->cache_stride + j * k->cache_so, s);
          }
        }
    r0++;
  }
}

static char *cache_row(const kv_side *k, const kv_plan *p, int64_t slot) {
  int64_t b = slot / p->block_size, o = slot % p->block_size;
  return k->cache + (size_t)(b * k->cache_sb + o * k->cache_so) * k->cache_esz;
}

/* Tokens t..t+g-1 to (or from) slots slot..slot+g-1, all in one block. */
static void move_slots(const kv_plan *p, int64_t t, int64_t g, int64_t slot,
                       bool stream) {
  for (int i = 0; i < 2; i++) {
    const kv_side *k = &p->side[i];
    if (!k->present) continue;
    if (g > 1 && k->group) {
      move_group(p, k, t, g, cache_row(k, p, slot), stream);
      continue;
    }
    for (int64_t j = 0; j < g; j++)
      move_token(p, k, k->tok + (size_t)((t + j) * k->tok_s0) * k->tok_esz,
                 cache_row(k, p, slot + j), stream);
  }
}

#define KV_GROUP_MAX 64

/* Touches the cache lines of a slot's runs ahead of use: random slots are bound by
 * memory latency (and TLB misses), which a few rows of look-ahead overlap. */
static void prefetch_slot(const kv_plan *p, int64_t slot, bool write) {
  for (int i = 0; i < 2; i++) {
    const kv_side *k = &p->side[i];
    if (!k->present) continue;
    const char *row = cache_row(k, p, slot);
    for (int64_t r = 0; r < k->nruns && r < 64; r++) {
      const kv_run *run = &k->runs[r];
      const char *c = row + (size_t)run->cache_off * k->cache_esz;
      size_t bytes = (size_t)((run->len - 1) * run->cache_stride + 1) * k->cache_esz;
      for (size_t off = 0; off < bytes; off += 64) {
        if (write)
          __builtin_prefetch(c + off, 1, 3);
        else
          __builtin_prefetch(c + off, 0, 3);
      }
    }
  }
}

/* Written bytes above which copies bypass the caches: the data would not fit in them
 * anyway, and non-temporal stores save the read of every destination line. */
#define KV_STREAM_BYTES ((int64_t)16 << 20)

static bool use_streaming(const kv_plan *p) {
  int64_t bytes = 0;
  for (int i = 0; i < 2; i++)
    if (p->side[i].present)
      bytes += p->T * p->side[i].H * p->side[i].D *
               (int64_t)(p->gather ? p->side[i].tok_esz : p->side[i].cache_esz);
  return bytes >= KV_STREAM_BYTES;
}

#define KV_PREFETCH_AHEAD 4

static llmk_status check_scales(const kv_plan *p) {
  for (int i = 0; i < 2; i++) {
    const kv_side *k = &p->side[i];
    if (!k->present || !k->scale) continue;
    for (int64_t h = 0; h < k->scale_n; h++) {
      float s = scale_of(k, h);
      if (!(s > 0.0f) || !isfinite(s))
        return llmk__error(LLMK_ERROR_INVALID_VALUE, p->op,
                           "%s[%" PRId64 "]=%g must be finite and > 0",
                           i ? "v_scale" : "k_scale", h, (double)s);
    }
  }
  return LLMK_SUCCESS;
}

/* Tokens per thread so that a task moves at least this many bytes: below it, waking a
 * second thread costs more than it saves. */
#define KV_BYTES_PER_TASK (256 * 1024)

static int64_t token_grain(const kv_plan *p) {
  int64_t bytes = 0;
  for (int i = 0; i < 2; i++)
    if (p->side[i].present)
      bytes += p->side[i].H * p->side[i].D *
               (int64_t)(p->side[i].tok_esz + p->side[i].cache_esz);
  if (bytes <= 0) bytes = 1;
  int64_t g = KV_BYTES_PER_TASK / bytes;
  return g < 1 ? 1 : g;
}

static int parts_for(llmk_context *ctx, int64_t n, int64_t grain) {
  return llmk__parallel_tasks(ctx, (n + grain - 1) / grain);
}

static void *align16(void *p) {
  return (void *)(((uintptr_t)p + 15) & ~(uintptr_t)15);
}

/* ---------------------------------------------------------------- scatter */

typedef struct scatter_job {
  const kv_plan *p;
  const unsigned char *skip; /* NULL: every token writes */
  bool stream;
} scatter_job;

static void scatter_range(void *arg, int64_t t0, int64_t t1) {
  const scatter_job *j = arg;
  const kv_plan *p = j->p;
  bool grouping = p->side[0].group || p->side[1].group;
  for (int64_t t = t0; t < t1;) {
    if (!j->stream && t + KV_PREFETCH_AHEAD < t1) {
      int64_t ps = llmk__view_get(&p->slots, t + KV_PREFETCH_AHEAD, 0);
      if (ps >= 0) prefetch_slot(p, ps, true);
    }
    int64_t s = llmk__view_get(&p->slots, t, 0);
    if (s < 0 || (j->skip && j->skip[t])) {
      t++;
      continue;
    }
    int64_t g = 1;
    if (grouping) {
      int64_t room = p->block_size - s % p->block_size;
      while (g < KV_GROUP_MAX && g < room && t + g < t1 &&
             llmk__view_get(&p->slots, t + g, 0) == s + g && !(j->skip && j->skip[t + g]))
        g++;
    }
    move_slots(p, t, g, s, j->stream);
    t += g;
  }
  if (j->stream) p->kern->fence();
}

/* Marks every token whose slot a later token also writes, so that tokens can be split
 * over threads and the last one still wins. */
static unsigned char *mark_overwritten(const kv_plan *p, void *workspace) {
  int64_t T = p->T;
  size_t cap = 16;
  while (cap < (size_t)T * 2) cap *= 2;
  int64_t *table = align16(workspace); /* cap pairs (slot, token) */
  unsigned char *skip = (unsigned char *)(table + 2 * cap);
  for (size_t i = 0; i < cap; i++) table[2 * i] = -1;
  memset(skip, 0, (size_t)T);
  for (int64_t t = 0; t < T; t++) {
    int64_t s = llmk__view_get(&p->slots, t, 0);
    if (s < 0) continue;
    uint64_t h = (uint64_t)s * 0x9e3779b97f4a7c15ull;
    for (size_t i = (size_t)(h >> 32) & (cap - 1);; i = (i + 1) & (cap - 1)) {
      if (table[2 * i] == -1) {
        table[2 * i] = s;
        table[2 * i + 1] = t;
        break;
      }
      if (table[2 * i] == s) {
        skip[table[2 * i + 1]] = 1;
        table[2 * i + 1] = t;
        break;
      }
    }
  }
  return skip;
}

static llmk_status run_scatter(const void *payload, void *workspace, llmk_context *ctx) {
  const kv_plan *p = payload;
  llmk_status st = LLMK_SUCCESS;
  st = check_scales(p);
  int64_t num_slots = p->num_blocks * p->block_size;
  for (int64_t t = 0; st == LLMK_SUCCESS && t < p->T; t++) {
    int64_t s = llmk__view_get(&p->slots, t, 0);
    if (s >= num_slots)
      st = llmk__error(LLMK_ERROR_INVALID_VALUE, scatter_op,
                       "slot_mapping[%" PRId64 "]=%" PRId64
                       " is out of range: num_blocks*block_size=%" PRId64
                       " (negative slots are skipped)",
                       t, s, num_slots);
  }
  if (st == LLMK_SUCCESS) {
    int64_t grain = token_grain(p);
    scatter_job job = {p, NULL, use_streaming(p)};
    if (parts_for(ctx, p->T, grain) > 1) job.skip = mark_overwritten(p, workspace);
    llmk__parallel_for(ctx, p->T, grain, scatter_range, &job);
  }
  return st;
}

llmk_status llmk_scatter_pa_kv_cache(void *workspace, size_t workspace_size,
                                     llmk_plan *plan, llmk_context *ctx) {
  return llmk__plan_run(scatter_op, LLMK__OP_SCATTER_KV, plan, workspace, workspace_size,
                        ctx, run_scatter);
}

/* ----------------------------------------------------------------- gather */

typedef struct gather_job {
  const kv_plan *p;
  const int64_t *start; /* [B + 1]: first output token of each sequence */
  bool stream;
} gather_job;

static void gather_range(void *arg, int64_t t0, int64_t t1) {
  const gather_job *j = arg;
  const kv_plan *p = j->p;
  /* the sequence holding t0: the last i with start[i] <= t0 */
  int64_t lo = 0, hi = p->B;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (j->start[mid] <= t0)
      lo = mid;
    else
      hi = mid;
  }
  int64_t i = lo, pos = t0 - j->start[i];
  bool grouping = p->side[0].group || p->side[1].group;
  for (int64_t t = t0; t < t1;) {
    while (t >= j->start[i + 1]) { /* next non-empty sequence */
      i++;
      pos = 0;
    }
    int64_t o = pos % p->block_size, g = 1;
    if (grouping) {
      g = p->block_size - o;
      if (g > j->start[i + 1] - t) g = j->start[i + 1] - t;
      if (g > t1 - t) g = t1 - t;
      if (g > KV_GROUP_MAX) g = KV_GROUP_MAX;
    }
    int64_t blk = llmk__view_get(&p->tables, i, pos / p->block_size);
    move_slots(p, t, g, blk * p->block_size + o, j->stream);
    t += g;
    pos += g;
  }
  if (j->stream) p->kern->fence();
}

static llmk_status run_gather(const void *payload, void *workspace, llmk_context *ctx) {
  const kv_plan *p = payload;
  llmk_status st = LLMK_SUCCESS;
  int64_t *start = align16(workspace);
  st = check_scales(p);
  int64_t total = 0;
  for (int64_t i = 0; st == LLMK_SUCCESS && i < p->B; i++) {
    int64_t len = llmk__view_get(&p->lens, i, 0);
    if (len < 0) {
      st = llmk__error(LLMK_ERROR_INVALID_VALUE, gather_op,
                       "seq_lens[%" PRId64 "]=%" PRId64 " is negative", i, len);
      break;
    }
    int64_t blocks =
        len == 0 ? 0 : (p->block_size == 0 ? INT64_MAX : (len - 1) / p->block_size + 1);
    if (blocks > p->max_blocks) {
      st = llmk__error(LLMK_ERROR_INVALID_VALUE, gather_op,
                       "seq_lens[%" PRId64 "]=%" PRId64 " needs %s%" PRId64
                       " blocks of %" PRId64 ", but max_blocks=%" PRId64,
                       i, len, blocks == INT64_MAX ? "more than " : "",
                       blocks == INT64_MAX ? p->max_blocks : blocks, p->block_size,
                       p->max_blocks);
      break;
    }
    for (int64_t b = 0; b < blocks; b++) {
      int64_t id = llmk__view_get(&p->tables, i, b);
      if (id < 0 || id >= p->num_blocks) {
        st = llmk__error(LLMK_ERROR_INVALID_VALUE, gather_op,
                         "block_tables[%" PRId64 "][%" PRId64 "]=%" PRId64
                         " is outside [0, num_blocks=%" PRId64 ")",
                         i, b, id, p->num_blocks);
        break;
      }
    }
    start[i] = total;
    if (st == LLMK_SUCCESS && __builtin_add_overflow(total, len, &total))
      st = llmk__error(LLMK_ERROR_INVALID_VALUE, gather_op, "sum(seq_lens) overflows");
  }
  if (st == LLMK_SUCCESS && total != p->T)
    st = llmk__error(LLMK_ERROR_INVALID_VALUE, gather_op,
                     "sum(seq_lens)=%" PRId64 " must equal key_out.shape[0]=%" PRId64,
                     total, p->T);
  if (st == LLMK_SUCCESS) {
    start[p->B] = total;
    gather_job job = {p, start, use_streaming(p)};
    llmk__parallel_for(ctx, p->T, token_grain(p), gather_range, &job);
  }
  return st;
}

llmk_status llmk_gather_pa_kv_cache(void *workspace, size_t workspace_size,
                                    llmk_plan *plan, llmk_context *ctx) {
  return llmk__plan_run(gather_op, LLMK__OP_GATHER_KV, plan, workspace, workspace_size,
                        ctx, run_gather);
}
