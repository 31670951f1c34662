/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnGatherPaKvCache from C: results through aclnn equal, bit for bit, a golden
 * computed here from CANN's formula (docs and kernels of its ops-transformer repository:
 * for sequence i, rows from seqLens[i] (cumulative) or the sum of the lengths before
 * it, block-table columns from seqOffset[i] / blockSize), not from the library's
 * kernels: both cacheModes, both seqLens forms, with and without seqOffset, FLOAT16,
 * BFLOAT16 and INT8; rows below a cumulative seqLens[0] stay as they were. Then the
 * error table of CANN's doc and tiling with CANN's numeric codes, checking that keyRef
 * and valueRef are byte-identical after every rejection. CANN's own UT tables are
 * replayed by test_aclnn_replay_gather_pa_kv_cache. */
#include "aclnn_tspec.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"

enum { KC, VC, BT, SL, KR, VR, SO, NG };

typedef struct gc_case {
  tspec t[NG];
  const char *cache_mode;
  bool cumsum, null_mode, null_ws, null_ex;
  bool nz;
  int64_t B, nb, bs, H, Dk, Dv, mb, T, lead;
  int64_t lens[16], offs[16];
  int64_t bt_iv[MAXV], sl_iv[32], so_iv[32];
} gc_case;

static void gc_free(gc_case *c) {
  for (int i = 0; i < NG; i++) unbuild(&c->t[i]);
  free(c);
}

static aclnnStatus gc_phase1(gc_case *c, uint64_t *ws, aclOpExecutor **ex) {
  aclTensor *t[NG];
  for (int i = 0; i < NG; i++) t[i] = c->t[i].present ? c->t[i].t : NULL;
  char mode[16] = "";
  if (c->cache_mode) strcpy(mode, c->cache_mode);
  return aclnnGatherPaKvCacheGetWorkspaceSize(
      t[KC], t[VC], t[BT], t[SL], t[KR], t[VR], t[SO], c->null_mode ? NULL : mode,
      c->cumsum, c->null_ws ? NULL : ws, c->null_ex ? NULL : ex);
}

static aclnnStatus gc_call(gc_case *c, aclrtStream s) {
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = gc_phase1(c, &ws, &ex);
  if (st) return st;
  void *w = NULL;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  st = aclnnGatherPaKvCache(w, ws, ex, s);
  if (w) aclrtFree(w);
  return st;
}

/* Index values from lens / offs / lead (bt_iv is filled by the caller). */
static void gc_index_values(gc_case *c) {
  int64_t total = c->cumsum ? c->lead : 0;
  for (int64_t i = 0; i < c->B; i++) {
    if (c->cumsum)
      c->sl_iv[i] = total;
    else
      c->sl_iv[i] = c->lens[i];
    c->so_iv[i] = c->offs[i];
    total += c->lens[i];
  }
  if (c->cumsum) c->sl_iv[c->B] = total;
  c->T = total;
}

/* The specs of a case: caches by mode, keyRef/valueRef [T, H, D] ("Norm") or [T, H*D]
 * ("PA_NZ") with a padded row one time in two, the index tensors INT32. */
static void gc_specs(gc_case *c, aclDataType dt, bool with_offs, int64_t pad) {
  int64_t ld = 32 / (int64_t)dt_size(dt);
  int64_t D[2] = {c->Dk, c->Dv};
  for (int k = 0; k < 2; k++) {
    if (c->nz) {
      spec4(&c->t[KC + k], dt, c->nb, c->H * D[k] / ld, c->bs, ld);
      spec(&c->t[KR + k], dt, 2, c->T, c->H * D[k], 0, pad);
    } else {
      spec4(&c->t[KC + k], dt, c->nb, c->bs, c->H, D[k]);
      spec(&c->t[KR + k], dt, 3, c->T, c->H, D[k], pad);
    }
  }
  spec(&c->t[BT], ACL_INT32, 2, c->B, c->mb, 0, 0);
  c->t[BT].ivals = c->bt_iv;
  spec(&c->t[SL], ACL_INT32, 1, c->B + (c->cumsum ? 1 : 0), 0, 0, 0);
  c->t[SL].ivals = c->sl_iv;
  if (with_offs) {
    spec(&c->t[SO], ACL_INT32, 1, c->B, 0, 0, 0);
    c->t[SO].ivals = c->so_iv;
  }
}

static void gc_build(gc_case *c) {
  for (int i = 0; i < NG; i++) build(&c->t[i]);
}

/* The golden of output k (0 keyRef, 1 valueRef), from CANN's formula on the host
 * copies: for sequence i, start = seqLens[i] (cumulative) or the sum of seqLens[0..i),
 * len = seqLens[i+1] - seqLens[i] or seqLens[i], first = seqOffset[i] / blockSize (0
 * without it); position p < len reads block b = blockTables[i][first + p / blockSize],
 * slot o = p % blockSize, and element j of the token row (h * D + d) comes from
 *   Norm  [numBlocks, blockSize, H, D]:       (b, o, h, d)
 *   PA_NZ [numBlocks, H*D/ld, blockSize, ld]: (b, j / ld, o, j % ld), ld = 32 bytes /
 *         element size;
 * it goes to keyRef row start + p (element (h, d) or j). Every other byte keeps its
 * value. Returns a malloc'd copy of the output's block. */
static unsigned char *gc_golden(const gc_case *c, int k) {
  const tspec *ca = &c->t[KC + k], *r = &c->t[KR + k];
  const size_t es = dt_size(ca->dt);
  unsigned char *out = malloc(r->bytes);
  memcpy(out, r->host, r->bytes);
  const int64_t D = k ? c->Dv : c->Dk, HD = c->H * D, ld = 32 / (int64_t)es;
  const int64_t *cs = ca->strides, *rs = r->strides;
  const int32_t *bt = (const int32_t *)(const void *)c->t[BT].host;
  const int64_t mb = c->t[BT].dims[1];
  int64_t start = 0;
  for (int64_t i = 0; i < c->B; i++) {
    int64_t len;
    if (c->cumsum) {
      start = c->sl_iv[i];
      len = c->sl_iv[i + 1] - c->sl_iv[i];
    } else {
      len = c->sl_iv[i];
    }
    int64_t first = c->t[SO].present ? c->so_iv[i] / c->bs : 0;
    for (int64_t p = 0; p < len; p++) {
      int64_t b = bt[i * mb + first + p / c->bs], o = p % c->bs;
      for (int64_t j = 0; j < HD; j++) {
        int64_t h = j / D, d = j % D, from, to;
        if (c->nz) {
          from = b * cs[0] + j / ld * cs[1] + o * cs[2] + j % ld * cs[3];
          to = (start + p) * rs[0] + j * rs[1];
        } else {
          from = b * cs[0] + o * cs[1] + h * cs[2] + d * cs[3];
          to = (start + p) * rs[0] + h * rs[1] + d * rs[2];
        }
        memcpy(out + to * (int64_t)es, ca->host + from * (int64_t)es, es);
      }
    }
    if (!c->cumsum) start += len;
  }
  return out;
}

static int gc_as_golden(gc_case *c) {
  int ok = 1;
  for (int k = 0; k < 2; k++) {
    unsigned char *g = gc_golden(c, k);
    ok &= dev_is(&c->t[KR + k], g);
    free(g);
  }
  return ok;
}

static int gc_unchanged(gc_case *c) {
  return dev_is(&c->t[KR], c->t[KR].host) && dev_is(&c->t[VR], c->t[VR].host);
}

/* A random valid case: every sequence's blocks fit the table from its first column. */
static gc_case *gc_random(bool nz, aclDataType dt, bool cumsum, bool with_offs) {
  gc_case *c = calloc(1, sizeof *c);
  c->nz = nz;
  c->cache_mode = nz ? "PA_NZ" : "Norm";
  c->cumsum = cumsum;
  int64_t ld = 32 / (int64_t)dt_size(dt);
  c->B = tu_rand_range(1, 6);
  c->nb = tu_rand_range(1, 8);
  c->bs = nz ? tu_rand_range(1, 17) : tu_rand_range(1, 9);
  c->mb = tu_rand_range(1, 8);
  c->H = tu_rand_range(1, 3);
  c->Dk = nz ? ld * tu_rand_range(1, 2) : tu_rand_range(1, 9);
  c->Dv = nz ? ld * tu_rand_range(1, 2) : tu_rand_range(1, 9);
  if (nz && c->H > 1 && tu_rand_range(0, 1)) /* H*D a multiple of ld, D not */
    c->Dk = c->Dv = ld / c->H > 0 && ld % c->H == 0 ? ld / c->H : c->Dk;
  c->lead = cumsum && tu_rand_range(0, 2) == 0 ? tu_rand_range(1, 3) : 0;
  for (int64_t i = 0; i < c->B; i++) {
    int64_t first = with_offs ? tu_rand_range(0, c->mb - 1) : 0;
    c->offs[i] = first * c->bs + tu_rand_range(0, c->bs - 1);
    int64_t room = (c->mb - first) * c->bs;
    c->lens[i] = tu_rand_range(0, room < 12 ? room : 12);
  }
  if (!with_offs)
    for (int64_t i = 0; i < c->B; i++) c->offs[i] = 0;
  for (int64_t i = 0; i < c->B * c->mb; i++) c->bt_iv[i] = tu_rand_range(0, c->nb - 1);
  gc_index_values(c);
  if (c->T == 0) { /* CANN takes no empty keyRef: one token more */
    c->lens[0] = 1;
    gc_index_values(c);
  }
  gc_specs(c, dt, with_offs, tu_rand_range(0, 1) ? ld : 0);
  if (nz && tu_rand_range(0, 1)) /* CANN's 910_95 form; its A2 sample passes ND */
    c->t[KC].fmt = c->t[VC].fmt = ACL_FORMAT_FRACTAL_NZ;
  gc_build(c);
  return c;
}

static void test_gather_values(aclrtStream s) {
  static const aclDataType dts[3] = {ACL_FLOAT16, ACL_BF16, ACL_INT8};
  int n = 0;
  for (int rep = 0; rep < 6; rep++)
    for (int nz = 0; nz < 2; nz++)
      for (int d = 0; d < 3; d++)
        for (int cs = 0; cs < 2; cs++)
          for (int of = 0; of < 2; of++) {
            gc_case *c = gc_random(nz, dts[d], cs, of);
            aclnnStatus st = gc_call(c, s);
            TU_CHECK(st == ACLNN_SUCCESS && gc_as_golden(c),
                     "values: %s dt %d cumsum %d offset %d B %lld bs %lld (rep %d): "
                     "status %d ('%s') or outputs differ from the golden",
                     c->cache_mode, (int)dts[d], cs, of, (long long)c->B,
                     (long long)c->bs, rep, (int)st, aclGetRecentErrMsg());
            gc_free(c);
            n++;
          }
  printf("values: %d cases\n", n);
}

/* CANN's sample (docs/aclnnGatherPaKvCache.md): Norm, f16 caches of the bits 0x0001,
 * blockTables all 1, seqLens all 3, seqOffset all 2: every row of key and value is 1. */
static void test_gather_sample(aclrtStream s) {
  gc_case *c = calloc(1, sizeof *c);
  c->cache_mode = "Norm";
  c->B = 4, c->nb = 2, c->bs = 2, c->H = 32, c->Dk = 2, c->Dv = 4, c->mb = 6;
  for (int i = 0; i < 4; i++) c->lens[i] = 3, c->offs[i] = 2;
  for (int i = 0; i < 24; i++) c->bt_iv[i] = 1;
  gc_index_values(c);
  gc_specs(c, ACL_FLOAT16, true, 0);
  gc_build(c);
  /* the caches: all 0x0001 */
  for (int k = 0; k < 2; k++) {
    tspec *t = &c->t[KC + k];
    for (size_t i = 0; i < t->bytes / 2; i++) ((uint16_t *)(void *)t->host)[i] = 1;
    aclrtMemcpy(t->dev, t->bytes, t->host, t->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  }
  EQ(gc_call(c, s), ACLNN_SUCCESS);
  int ok = 1;
  for (int k = 0; k < 2; k++) {
    tspec *r = &c->t[KR + k];
    uint16_t *g = malloc(r->bytes);
    for (size_t i = 0; i < r->bytes / 2; i++) g[i] = 1;
    ok &= dev_is(r, (const unsigned char *)g);
    free(g);
  }
  TU_CHECK(ok, "CANN's sample: key and value are not all 1");
  gc_free(c);
}

/* The base of every error row: Norm f16, B 2, lens 3 and 2, block size 2, 4 blocks,
 * tables [[0, 1, 2, 3], [3, 2, 1, 0]], seqOffset 2 and 3 (column 1 each); T 5. */
static gc_case *gc_base(bool nz, bool cumsum) {
  gc_case *c = calloc(1, sizeof *c);
  c->nz = nz;
  c->cache_mode = nz ? "PA_NZ" : "Norm";
  c->cumsum = cumsum;
  c->B = 2, c->nb = 4, c->bs = 2, c->H = 2, c->Dk = nz ? 8 : 3, c->Dv = nz ? 8 : 5;
  c->mb = 4;
  c->lens[0] = 3, c->lens[1] = 2, c->offs[0] = 2, c->offs[1] = 3;
  const int64_t bt[8] = {0, 1, 2, 3, 3, 2, 1, 0};
  memcpy(c->bt_iv, bt, sizeof bt);
  gc_index_values(c);
  gc_specs(c, ACL_FLOAT16, true, 0);
  return c;
}

typedef struct err_row {
  const char *name;
  aclnnStatus want;
  bool nz, cumsum;
  int what;
  int64_t a, b;
} err_row;

/* what: 0 tensor a absent; 1 cacheMode NULL; 2 workspaceSize NULL; 3 executor NULL;
 * 4 tensor a dtype b; 5 tensor a rank b (trailing 1s, or the last dims merged);
 * 6 cacheMode string #a; 7 tensor a dim b = 0 (values re-fitted); 8 tensor a dim
 * (b >> 4) += (b & 15) (extent grows); 9 tensor a format FRACTAL_NZ; 10 seqLens[a] =
 * b; 11 seqOffset[a] = b; 12 blockTables flat [a] = b; 13 tensor a dim (b >> 4) -=
 * (b & 15); 14 keyRef a view of keyCache's block (a written tensor over a read one) */
static const char *const MODES[] = {"ND", "", "norm", "PA_NZ ", "NZ"};

static void apply_row(gc_case *c, const err_row *r) {
  tspec *t = &c->t[r->a >= 0 && r->a < NG ? r->a : 0];
  switch (r->what) {
    case 0:
      c->t[r->a].present = false;
      break;
    case 1:
      c->null_mode = true;
      break;
    case 2:
      c->null_ws = true;
      break;
    case 3:
      c->null_ex = true;
      break;
    case 4:
      t->dt = (aclDataType)r->b;
      break;
    case 5:
      if (r->b > t->rank) {
        for (int i = t->rank; i < r->b; i++) t->dims[i] = 1, t->strides[i] = 1;
      } else {
        int64_t n = 1;
        for (int i = r->b - 1; i < t->rank; i++) n *= t->dims[i];
        t->dims[r->b - 1] = n;
        t->strides[r->b - 1] = 1;
      }
      t->rank = (int)r->b;
      break;
    case 6:
      c->cache_mode = MODES[r->b];
      break;
    case 7:
      t->dims[r->b] = 0;
      break;
    case 8:
      t->dims[r->b >> 4] += r->b & 15;
      if ((r->b >> 4) == 0 && t->rank > 1) break;
      break;
    case 9:
      t->fmt = ACL_FORMAT_FRACTAL_NZ;
      break;
    case 10:
      c->sl_iv[r->a] = r->b;
      break;
    case 11:
      c->so_iv[r->a] = r->b;
      break;
    case 12:
      c->bt_iv[r->a] = r->b;
      break;
    case 13:
      t->dims[r->b >> 4] -= r->b & 15;
      break;
  }
}

/* Contiguous strides again after a shape change (a grown extent needs them). */
static void restride(tspec *t) {
  int64_t st = 1;
  for (int i = t->rank - 1; i >= 0; i--) t->strides[i] = st, st *= t->dims[i];
}

static void test_gather_errors(aclrtStream s) {
  const aclnnStatus NUL = ACLNN_ERR_PARAM_NULLPTR, INV = ACLNN_ERR_PARAM_INVALID,
                    TIL = ACLNN_ERR_INNER_TILING_ERROR;
  static err_row rows[] = {
      /* 161001: NULL inputs (CANN's doc) */
      {"keyCache NULL", 0, 0, 0, 0, KC, 0},
      {"valueCache NULL", 0, 0, 0, 0, VC, 0},
      {"blockTables NULL", 0, 0, 0, 0, BT, 0},
      {"seqLens NULL", 0, 0, 0, 0, SL, 0},
      {"keyRef NULL", 0, 0, 0, 0, KR, 0},
      {"valueRef NULL", 0, 0, 0, 0, VR, 0},
      {"cacheMode NULL", 0, 0, 0, 1, 0, 0},
      {"workspaceSize NULL", 0, 0, 0, 2, 0, 0},
      {"executor NULL", 0, 0, 0, 3, 0, 0},
      /* 161002: dtypes outside the Atlas A2 list, or not one dtype */
      {"keyCache FLOAT", 1, 0, 0, 4, KC, ACL_FLOAT},
      {"valueCache INT32", 1, 0, 0, 4, VC, ACL_INT32},
      {"keyRef BF16 beside FLOAT16", 1, 0, 0, 4, KR, ACL_BF16},
      {"valueRef INT8 beside FLOAT16", 1, 0, 0, 4, VR, ACL_INT8},
      {"valueCache BF16 beside FLOAT16", 1, 0, 0, 4, VC, ACL_BF16},
      {"blockTables INT64 (Atlas A2: INT32)", 1, 0, 0, 4, BT, ACL_INT64},
      {"seqLens INT64", 1, 0, 0, 4, SL, ACL_INT64},
      {"seqOffset INT64", 1, 0, 0, 4, SO, ACL_INT64},
      {"blockTables FLOAT16", 1, 0, 0, 4, BT, ACL_FLOAT16},
      {"PA_NZ keyCache FLOAT", 1, 1, 0, 4, KC, ACL_FLOAT},
      /* 161002: ranks */
      {"keyCache 3-D", 1, 0, 0, 5, KC, 3},
      {"valueCache 3-D", 1, 0, 0, 5, VC, 3},
      {"blockTables 1-D", 1, 0, 0, 5, BT, 1},
      {"seqLens 2-D", 1, 0, 0, 5, SL, 2},
      {"seqOffset 2-D", 1, 0, 0, 5, SO, 2},
      {"Norm keyRef 2-D (shape inference)", 4, 0, 0, 5, KR, 2},
      {"Norm valueRef 4-D", 1, 0, 0, 5, VR, 4},
      {"PA_NZ keyRef 3-D (shape inference)", 4, 1, 0, 5, KR, 3},
      /* 561103: CANN's shape inference fails on the mode (its op_api maps a failed
       * l0 op to 561103; these were 561002) */
      {"cacheMode \"ND\"", 4, 0, 0, 6, 0, 0},
      {"cacheMode \"\"", 4, 0, 0, 6, 0, 1},
      {"cacheMode \"norm\"", 4, 0, 0, 6, 0, 2},
      {"cacheMode \"PA_NZ \"", 4, 1, 0, 6, 0, 3},
      /* 561002: the tiling's sizes */
      {"batch 0 (seqLens [2] disagrees: shape inference)", 4, 0, 0, 7, BT, 0},
      {"blockTables width 0", 2, 0, 0, 7, BT, 1},
      /* success, nothing written: an empty cache or output, before any check (CANN's
       * op_api code; these were 561002 before) */
      {"blockSize 0", 3, 0, 0, 7, KC, 1},
      {"PA_NZ blockSize 0", 3, 1, 0, 7, KC, 2},
      {"numBlocks 0", 3, 0, 0, 7, KC, 0},
      {"keyRef head size 0", 3, 0, 0, 7, KR, 2},
      {"valueRef heads 0", 3, 0, 0, 7, VR, 1},
      {"PA_NZ keyRef token size 0", 3, 1, 0, 7, KR, 1},
      /* 161002: shapes that disagree, formats */
      {"seqLens [B + 1], not cumulative", 4, 0, 0, 8, SL, 0x01},
      {"seqLens [B], cumulative", 4, 0, 1, 13, SL, 0x01},
      {"seqOffset [B + 1]", 1, 0, 0, 8, SO, 0x01},
      {"keyRef heads + 1", 1, 0, 0, 8, KR, 0x11},
      {"valueRef head size + 1", 1, 0, 0, 8, VR, 0x21},
      {"valueRef T + 1", 1, 0, 0, 8, VR, 0x01},
      {"valueCache blockSize + 1", 1, 0, 0, 8, VC, 0x11},
      {"valueCache numBlocks + 1", 1, 0, 0, 8, VC, 0x01},
      {"keyCache heads + 1", 1, 0, 0, 8, KC, 0x21},
      {"PA_NZ keyRef token size + 16", 1, 1, 0, 8, KR, 0x1f},
      {"PA_NZ keyCache last dim + 1 (not 32 bytes)", 1, 1, 0, 8, KC, 0x31},
      {"keyRef FRACTAL_NZ", 1, 0, 0, 9, KR, 0},
      {"Norm keyCache FRACTAL_NZ", 1, 0, 0, 9, KC, 0},
      {"blockTables FRACTAL_NZ", 1, 0, 0, 9, BT, 0},
      {"keyRef over keyCache", 1, 0, 0, 14, 0, 0},
      /* 161002 in phase 2, nothing written: the index values */
      {"seqLens add up to T + 1", 1, 0, 0, 10, 1, 3},
      {"seqLens add up to T - 1", 1, 0, 0, 10, 1, 1},
      {"seqLens negative", 1, 0, 0, 10, 0, -1},
      {"cumulative seqLens decrease", 1, 0, 1, 10, 1, 6},
      {"cumulative seqLens[0] negative", 1, 0, 1, 10, 0, -1},
      {"cumulative seqLens[B] != T", 1, 0, 1, 10, 2, 4},
      {"seqOffset negative", 1, 0, 0, 11, 0, -1},
      {"seqOffset past the table", 1, 0, 0, 11, 1, 8},
      {"seqOffset: one column too many", 1, 0, 0, 11, 0, 6},
      {"block id = numBlocks", 1, 0, 0, 12, 2, 4},
      {"block id negative", 1, 0, 0, 12, 5, -1},
      {"PA_NZ block id = numBlocks", 1, 1, 0, 12, 1, 4},
      {"PA_NZ cumulative seqLens decrease", 1, 1, 1, 10, 1, 6},
  };
  const aclnnStatus codes[5] = {NUL, INV, TIL, ACLNN_SUCCESS, ACLNN_ERR_INNER_NULLPTR};
  int n = (int)(sizeof rows / sizeof rows[0]);
  for (int i = 0; i < n; i++) {
    const err_row *r = &rows[i];
    gc_case *c = gc_base(r->nz, r->cumsum);
    apply_row(c, r);
    if (r->what == 8 || r->what == 13) restride(&c->t[r->a]);
    gc_build(c);
    if (r->what == 14) {
      tspec *k = &c->t[KR];
      aclDestroyTensor(k->t);
      k->t = aclCreateTensor(k->dims, 3, k->dt, k->strides, 0, ACL_FORMAT_ND, k->dims, 3,
                             c->t[KC].dev);
    }
    aclnnStatus st = gc_call(c, s);
    TU_CHECK(st == codes[r->want], "%s: status %d, want %d ('%s')", r->name, (int)st,
             (int)codes[r->want], aclGetRecentErrMsg());
    if (r->what == 14)
      TU_CHECK(strstr(aclGetRecentErrMsg(), "overlap") != NULL,
               "%s: not refused as an overlap ('%s')", r->name, aclGetRecentErrMsg());
    TU_CHECK(r->what == 14 ? dev_is(&c->t[KC], c->t[KC].host) : gc_unchanged(c),
             "%s: an output written", r->name);
    gc_free(c);
  }
  /* the bases themselves are accepted, every form */
  for (int m = 0; m < 4; m++) {
    gc_case *c = gc_base(m & 1, m >> 1);
    gc_build(c);
    EQ(gc_call(c, s), ACLNN_SUCCESS);
    TU_CHECK(gc_as_golden(c), "base %d: outputs differ from the golden", m);
    gc_free(c);
  }
  printf("errors: %d rows\n", n);
}

int main(void) {
  acl_test t;
  acl_test_begin(&t, 20261205, 2);
  test_gather_sample(t.stream);
  test_gather_values(t.stream);
  test_gather_errors(t.stream);
  return acl_test_end(&t, "test_aclnn_gather_pa_kv_cache");
}
