/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnScatterPaKvCache from C: results through aclnn equal, bit for bit, both the
 * native API's (llmk_scatter_pa_kv_cache) and a golden computed here from CANN's layout
 * formulas, on random inputs of every mode (Norm, Nct, scatterMode NHSD, PA_NZ with an
 * ignored scatterMode and key/value of different dtypes) and on fixed cases of the
 * modes' edges; the executor lifecycle (single use, repeatable, re-pointed addresses);
 * the error table with CANN's numeric codes, checking that the caches are
 * byte-identical after every rejection. */
#include "aclnn_tspec.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d.h" /* a destroyed executor, another op */
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"

/* ====================================================== scatter kv cache */
enum { KEY, KC, SLOT, VAL, VC, CL, CO, SL, NS };

typedef struct sc_case {
  tspec t[NS];
  const char *cache_mode, *scatter_mode;
  int64_t nct_strides[2], nct_offsets[2];
  bool use_arrays;
  bool fused; /* key/value built as "Nct" views of a fused buffer (see sc_random) */
  int64_t T, H, Dk, Dv, nb, bs;
  int64_t iv[MAXV];
} sc_case;

static void sc_build(sc_case *c) {
  for (int i = 0; i < NS; i++) build(&c->t[i]);
}
static void sc_free(sc_case *c) {
  for (int i = 0; i < NS; i++) unbuild(&c->t[i]);
  free(c);
}

static aclnnStatus sc_phase1(sc_case *c, uint64_t *ws, aclOpExecutor **ex) {
  aclTensor *t[NS];
  for (int i = 0; i < NS; i++) t[i] = c->t[i].present ? c->t[i].t : NULL;
  aclIntArray *st = c->use_arrays ? aclCreateIntArray(c->nct_strides, 2) : NULL;
  aclIntArray *of = c->use_arrays ? aclCreateIntArray(c->nct_offsets, 2) : NULL;
  char cm[16] = "", sm[16] = "";
  if (c->cache_mode) strcpy(cm, c->cache_mode);
  if (c->scatter_mode) strcpy(sm, c->scatter_mode);
  aclnnStatus r = aclnnScatterPaKvCacheGetWorkspaceSize(
      t[KEY], t[KC], t[SLOT], t[VAL], t[VC], t[CL], t[CO], t[SL],
      c->cache_mode ? cm : NULL, c->scatter_mode ? sm : NULL, st, of, ws, ex);
  aclDestroyIntArray(st);
  aclDestroyIntArray(of);
  return r;
}

static aclnnStatus sc_call(sc_case *c, aclrtStream s) {
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = sc_phase1(c, &ws, &ex);
  if (st) return st;
  void *w = NULL;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  st = aclnnScatterPaKvCache(w, ws, ex, s);
  if (w) aclrtFree(w);
  return st;
}

/* The layout CANN's tiling picks (0 Norm, 1 NHSD, 2 PA_NZ) and whether the "Nct"
 * strides apply: PA_NZ reads no scatterMode; NHSD is a scatterMode of cacheMode Norm. */
static int sc_layout(const sc_case *c, bool *nct) {
  bool nz = c->cache_mode && !strcmp(c->cache_mode, "PA_NZ");
  *nct = !nz && c->scatter_mode && !strcmp(c->scatter_mode, "Nct");
  return nz ? 2 : c->scatter_mode && !strcmp(c->scatter_mode, "NHSD") ? 1 : 0;
}

/* Row stride and first element of key (k 0) or value (1) as the call reads them: the
 * "Nct" arrays, else the aclTensor's own view (for fused cases: T contiguous rows at the
 * block's start; see sc_random). */
static void sc_rows(const sc_case *c, int k, int64_t *stride, int64_t *first) {
  bool nct;
  sc_layout(c, &nct);
  const tspec *t = &c->t[k ? VAL : KEY];
  *stride = nct ? c->nct_strides[k] : c->fused ? t->dims[1] * t->dims[2] : t->strides[0];
  *first = nct ? c->nct_offsets[k] : 0;
}

/* The native API on the ref copies, with the view each mode stands for: NHSD is the
 * blocks layout with HND strides; Nct re-strides key/value rows. */
static llmk_status sc_native(sc_case *c, llmk_context *ctx) {
  llmk_tensor d[NS];
  const llmk_tensor *p[NS];
  for (int i = 0; i < NS; i++) p[i] = ndesc(&c->t[i], &d[i]);
  bool nct;
  int mode = sc_layout(c, &nct);
  if (mode == 1)
    for (int k = KC; k <= VC; k += VC - KC) {
      if (!p[k]) continue;
      int64_t t1 = d[k].shape[1], s1 = d[k].strides[1];
      d[k].shape[1] = d[k].shape[2], d[k].strides[1] = d[k].strides[2];
      d[k].shape[2] = t1, d[k].strides[2] = s1;
    }
  if (nct || c->fused)
    for (int k = 0; k < 2; k++) {
      int i = k ? VAL : KEY;
      if (!p[i]) continue;
      int64_t stride, first;
      sc_rows(c, k, &stride, &first);
      d[i].shape[0] = c->T;
      d[i].strides[0] = stride;
      d[i].data = (char *)d[i].data + first * (int64_t)dt_size(c->t[i].dt);
    }
  llmk_kv_layout layout = mode == 2 ? LLMK_KV_NZ : LLMK_KV_BLOCKS;
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st = llmk_scatter_pa_kv_cache_get_workspace_size(
      p[KEY], p[VAL], p[KC], p[VC], p[SLOT], NULL, NULL, layout, &ws, &plan);
  if (st == LLMK_SUCCESS) {
    void *w = ws ? malloc(ws) : NULL;
    st = llmk_scatter_pa_kv_cache(w, ws, plan, ctx);
    free(w);
  }
  llmk_plan_destroy(plan);
  return st;
}

/* The golden of cache k (0 key, 1 value), from CANN's formulas on the host copies (not
 * from the library): for token t < c->T with s = slotMapping[t] >= 0 (negative: padding),
 * b = s / blockSize, o = s % blockSize, element (h, d) of the token's row goes to
 *   Norm  [numBlocks, blockSize, H, D]:     (b, o, h, d)
 *   NHSD  [numBlocks, H, blockSize, D]:     (b, h, o, d)
 *   PA_NZ [numBlocks, H*D/ld, blockSize, ld]: (b, (h*D+d) / ld, o, (h*D+d) % ld),
 *         ld = 32 bytes / element size;
 * every other byte keeps its value. Returns a malloc'd copy of the cache's block. */
static unsigned char *sc_golden(const sc_case *c, int k) {
  bool nct;
  int mode = sc_layout(c, &nct);
  const tspec *src = &c->t[k ? VAL : KEY], *ca = &c->t[k ? VC : KC];
  const size_t es = dt_size(src->dt);
  unsigned char *out = malloc(ca->bytes);
  memcpy(out, ca->host, ca->bytes);
  const int64_t H = src->dims[1], D = src->dims[2], ld = 32 / (int64_t)es;
  const int64_t bs = ca->dims[mode == 0 ? 1 : 2];
  const int64_t *cs = ca->strides;
  int64_t row, first;
  sc_rows(c, k, &row, &first);
  for (int64_t t = 0; t < c->T; t++) {
    int64_t sl = c->iv[t];
    if (sl < 0) continue;
    int64_t b = sl / bs, o = sl % bs;
    for (int64_t h = 0; h < H; h++)
      for (int64_t d = 0; d < D; d++) {
        int64_t from = first + t * row + h * src->strides[1] + d * src->strides[2], to;
        if (mode == 0)
          to = b * cs[0] + o * cs[1] + h * cs[2] + d * cs[3];
        else if (mode == 1)
          to = b * cs[0] + h * cs[1] + o * cs[2] + d * cs[3];
        else
          to =
              b * cs[0] + (h * D + d) / ld * cs[1] + o * cs[2] + (h * D + d) % ld * cs[3];
        memcpy(out + to * (int64_t)es, src->host + from * (int64_t)es, es);
      }
  }
  return out;
}

/* The device caches equal the golden. */
static int sc_as_golden(sc_case *c) {
  int ok = 1;
  for (int k = 0; k < 2; k++) {
    if (!c->t[k ? VC : KC].present || !c->t[k ? VAL : KEY].present) continue;
    unsigned char *g = sc_golden(c, k);
    ok &= dev_is(&c->t[k ? VC : KC], g);
    free(g);
  }
  return ok;
}

static int sc_unchanged(sc_case *c) {
  return dev_is(&c->t[KC], c->t[KC].host) && dev_is(&c->t[VC], c->t[VC].host);
}
static int sc_as_native(sc_case *c) {
  return dev_is(&c->t[KC], c->t[KC].ref) && dev_is(&c->t[VC], c->t[VC].ref);
}

/* mode 0 Norm (cacheMode NULL, "" or "Norm"), 1 scatterMode "NHSD" (cacheMode the
 * same), 2 PA_NZ (scatterMode anything: not read; key and value of different dtypes one
 * time in two); nct: key/value are "Nct" views of fused buffers ("Nct" given except in
 * PA_NZ, where the call reads the tensors' own views). K only: Norm only. */
static sc_case *sc_random(int mode, bool nct, bool k_only) {
  static char *const norm_modes[3] = {NULL, "", "Norm"};
  static char *const none_modes[3] = {NULL, "", "None"};
  static char *const nz_scatter[6] = {NULL, "", "None", "Nct", "NHSD", "Alibi"};
  sc_case *c = calloc(1, sizeof *c);
  aclDataType dts[3] = {ACL_FLOAT16, ACL_BF16, ACL_INT8};
  aclDataType dt = dts[tu_rand_range(0, 2)], dtv = dt;
  /* PA_NZ: an INT8 value only beside an INT8 key */
  if (mode == 2 && !k_only && tu_rand_range(0, 1))
    dtv = dt == ACL_INT8 ? dts[tu_rand_range(0, 2)] : dts[tu_rand_range(0, 1)];
  aclDataType dtk[2] = {dt, dtv};
  int64_t ldk[2] = {32 / (int64_t)dt_size(dt), 32 / (int64_t)dt_size(dtv)};
  c->T = tu_rand_range(1, 40), c->H = tu_rand_range(1, 4);
  c->Dk = ldk[0] * tu_rand_range(1, 4), c->Dv = k_only ? 0 : ldk[1] * tu_rand_range(1, 4);
  c->bs = mode == 2 ? 16 * tu_rand_range(1, 2) : tu_rand_range(1, 17);
  /* numBlocks * blockSize >= T (CANN's tiling refuses fewer slots than tokens) */
  c->nb = (c->T + c->bs - 1) / c->bs + tu_rand_range(0, 3);
  c->cache_mode = mode == 2 ? "PA_NZ" : norm_modes[tu_rand_range(0, 2)];
  c->scatter_mode = mode == 1   ? "NHSD"
                    : mode == 2 ? (nct ? "Nct" : nz_scatter[tu_rand_range(0, 5)])
                    : nct       ? "Nct"
                                : none_modes[tu_rand_range(0, 2)];
  c->fused = nct;
  int64_t D[2] = {c->Dk, c->Dv};
  for (int k = 0; k < (k_only ? 1 : 2); k++) {
    int ti = k ? VAL : KEY, ci = k ? VC : KC;
    int64_t ld = ldk[k];
    if (nct) { /* a fused buffer: rows of stride >= H*D, starting at an offset */
      c->nct_strides[k] = c->H * D[k] + tu_rand_range(0, 3) * ld;
      c->nct_offsets[k] = tu_rand_range(0, 5);
      spec(&c->t[ti], dtk[k], 3, c->T, c->H, D[k], 0);
      /* the tensor's own view covers the whole fused buffer, with one spare row for
       * the offset */
      c->t[ti].strides[0] = c->nct_strides[k];
      c->t[ti].dims[0] = c->T + 1;
    } else {
      spec(&c->t[ti], dtk[k], 3, c->T, c->H, D[k], tu_rand_range(0, 1) ? ld : 0);
    }
    if (mode == 2)
      spec4(&c->t[ci], dtk[k], c->nb, c->H * D[k] / ld, c->bs, ld);
    else if (mode == 1)
      spec4(&c->t[ci], dtk[k], c->nb, c->H, c->bs, D[k]);
    else
      spec4(&c->t[ci], dtk[k], c->nb, c->bs, c->H, D[k]);
  }
  c->use_arrays = nct || tu_rand_range(0, 1);
  if (!nct && c->use_arrays) c->nct_strides[0] = c->nct_strides[1] = 1; /* ignored */
  spec(&c->t[SLOT], tu_rand_range(0, 1) ? ACL_INT64 : ACL_INT32, 1, c->T, 0, 0, 0);
  c->t[SLOT].ivals = c->iv;
  /* distinct slots, some padding */
  int64_t n = c->nb * c->bs;
  int64_t *perm = malloc((size_t)n * sizeof *perm);
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = tu_rand_range(0, i), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  for (int64_t t = 0; t < c->T; t++)
    c->iv[t] = t < n && tu_rand_range(0, 7) ? perm[t] : -1;
  free(perm);
  sc_build(c);
  if (nct) { /* the Nct tensors: the first T rows of the fused view */
    for (int k = 0; k < (k_only ? 1 : 2); k++) {
      tspec *t = &c->t[k ? VAL : KEY];
      aclDestroyTensor(t->t);
      int64_t dims[3] = {c->T, c->H, D[k]}, contiguous[3] = {c->H * D[k], D[k], 1};
      /* CANN's Nct key is [T, H, D]; its row stride and offset come from the arrays */
      t->t =
          aclCreateTensor(dims, 3, dtk[k], contiguous, 0, ACL_FORMAT_ND, dims, 3, t->dev);
    }
  }
  return c;
}

static void test_scatter_random(aclrtStream s, llmk_context *ctx) {
  for (int it = 0; it < 150; it++) {
    int mode = it % 3;
    bool nct = (it / 3) % 2 == 1, k_only = mode == 0 && (it / 6) % 4 == 3;
    sc_case *c = sc_random(mode, nct, k_only);
    EQ(sc_native(c, ctx), LLMK_SUCCESS);
    EQ(sc_call(c, s), ACLNN_SUCCESS);
    TU_CHECK(sc_as_native(c), "random scatter case %d (mode %d, nct %d, k only %d)", it,
             mode, (int)nct, (int)k_only);
    TU_CHECK(sc_as_golden(c),
             "random scatter case %d (mode %d, nct %d, k only %d): golden", it, mode,
             (int)nct, (int)k_only);
    sc_free(c);
  }
}

/* compressLens / compressSeqOffset / seqLens beside Norm (None, Nct) are not read, as
 * CANN's tiling ignores them: the call succeeds and writes the golden. */
static void test_scatter_ignored(aclrtStream s) {
  for (int it = 0; it < 4; it++) {
    sc_case *c = sc_random(0, it % 2 == 1, false);
    const int ix[3] = {CL, CO, SL};
    for (int k = 0; k < 3; k++) {
      if (it == 3 && k != 1) continue;
      spec(&c->t[ix[k]], c->t[SLOT].dt, 1, 3 + k, 0, 0, 0);
      build(&c->t[ix[k]]);
    }
    EQ(sc_call(c, s), ACLNN_SUCCESS);
    TU_CHECK(sc_as_golden(c), "scatter with ignored compress tensors, case %d", it);
    sc_free(c);
  }
}

/* The PA_NZ example, with the expected cache computed from the layout formula. */
static void test_scatter_sample(aclrtStream s) {
  sc_case *c = calloc(1, sizeof *c);
  c->cache_mode = "PA_NZ", c->scatter_mode = "None", c->use_arrays = true;
  c->nct_strides[0] = c->nct_strides[1] = 1;
  spec(&c->t[KEY], ACL_FLOAT16, 3, 2, 2, 32, 0);
  spec(&c->t[VAL], ACL_FLOAT16, 3, 2, 2, 32, 0);
  spec4(&c->t[KC], ACL_FLOAT16, 1, 4, 32, 16);
  spec4(&c->t[VC], ACL_FLOAT16, 1, 4, 32, 16);
  spec(&c->t[SLOT], ACL_INT32, 1, 2, 0, 0, 0);
  c->t[SLOT].ivals = c->iv;
  c->iv[0] = 0, c->iv[1] = 1;
  sc_build(c);
  int ids[4] = {KEY, VAL, KC, VC};
  for (int k = 0; k < 4; k++) {
    tspec *t = &c->t[ids[k]];
    for (size_t i = 0; i < t->bytes / 2; i++)
      ((uint16_t *)(void *)t->host)[i] = k < 2 ? 0 : 1;
    aclrtMemcpy(t->dev, t->bytes, t->host, t->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  }
  EQ(sc_call(c, s), ACLNN_SUCCESS);
  for (int k = 2; k < 4; k++) {
    uint16_t *h = (uint16_t *)(void *)c->t[ids[k]].host;
    for (int tok = 0; tok < 2; tok++)
      for (int ch = 0; ch < 64; ch++) h[(ch / 16) * 512 + tok * 16 + ch % 16] = 0;
  }
  TU_CHECK(sc_unchanged(c), "the PA_NZ example");
  uint16_t *h = (uint16_t *)(void *)c->t[KC].host;
  TU_CHECK(
      h[0] == 0 && h[31] == 0 && h[32] == 1 && h[512] == 0 && h[543] == 0 && h[544] == 1,
      "NZ positions");
  sc_free(c);
}

static void test_scatter_lifecycle(aclrtStream s, llmk_context *ctx) {
  sc_case *c = sc_random(0, false, false);
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  EQ(sc_phase1(c, &ws, &ex), ACLNN_SUCCESS);
  EQ(sc_native(c, ctx), LLMK_SUCCESS);
  void *w = NULL;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  EQ(aclnnScatterPaKvCache(w, ws, ex, s), ACLNN_SUCCESS);
  TU_CHECK(sc_as_native(c), "single use");
  EQ(aclnnScatterPaKvCache(w, ws, ex, s), ACLNN_ERR_INNER_NULLPTR);
  EQ(sc_phase1(c, &ws, &ex), ACLNN_SUCCESS);
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  EQ(aclnnScatterPaKvCache(w, ws, ex, s), ACLNN_ERR_INNER_NULLPTR);
  EQ(aclnnInplaceFusedCausalConv1d(w, ws, ex, s), ACLNN_ERR_INNER_NULLPTR);
  /* repeatable; a small workspace */
  EQ(sc_phase1(c, &ws, &ex), ACLNN_SUCCESS);
  EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  for (int r = 0; r < 3; r++) {
    EQ(aclnnScatterPaKvCache(w, ws, ex, s), ACLNN_SUCCESS);
    TU_CHECK(sc_as_native(c), "repeatable run %d", r);
  }
  if (ws) {
    EQ(aclnnScatterPaKvCache(w, ws - 1, ex, s), ACLNN_ERR_PARAM_INVALID);
  }
  /* re-point key (0) and both caches (1, 4) */
  tspec k2 = c->t[KEY], kc2 = c->t[KC], vc2 = c->t[VC];
  build(&k2);
  build(&kc2);
  build(&vc2);
  aclDestroyTensor(k2.t);
  aclDestroyTensor(kc2.t);
  aclDestroyTensor(vc2.t);
  k2.t = kc2.t = vc2.t = NULL;
  EQ(aclSetInputTensorAddr(ex, 0, c->t[KEY].t, k2.dev), ACLNN_SUCCESS);
  EQ(aclSetInputTensorAddr(ex, 1, c->t[KC].t, kc2.dev), ACLNN_SUCCESS);
  EQ(aclSetTensorAddr(ex, 4, c->t[VC].t, vc2.dev), ACLNN_SUCCESS);
  EQ(aclSetInputTensorAddr(ex, 5, c->t[KEY].t, k2.dev),
     ACLNN_ERR_PARAM_INVALID); /* absent */
  EQ(aclSetInputTensorAddr(ex, 8, c->t[KEY].t, k2.dev), ACLNN_ERR_PARAM_INVALID);
  unsigned char *keep[3] = {c->t[KEY].ref, c->t[KC].ref, c->t[VC].ref};
  c->t[KEY].ref = k2.ref, c->t[KC].ref = kc2.ref, c->t[VC].ref = vc2.ref;
  EQ(sc_native(c, ctx), LLMK_SUCCESS);
  c->t[KEY].ref = keep[0], c->t[KC].ref = keep[1], c->t[VC].ref = keep[2];
  EQ(aclnnScatterPaKvCache(w, ws, ex, s), ACLNN_SUCCESS);
  TU_CHECK(dev_is(&kc2, kc2.ref) && dev_is(&vc2, vc2.ref), "re-pointed run");
  TU_CHECK(sc_as_native(c), "a re-pointed run wrote the old caches");
  aclrtFree(kc2.dev);
  kc2.dev = NULL;
  EQ(aclnnScatterPaKvCache(w, ws, ex, s), ACLNN_ERR_PARAM_INVALID);
  TU_CHECK(dev_is(&vc2, vc2.ref), "a run with a freed block wrote");
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  unbuild(&k2);
  unbuild(&kc2);
  unbuild(&vc2);
  if (w) aclrtFree(w);
  sc_free(c);
}

/* The error table: one change to a Norm case (f16, T 4, H 2, D 16, 2 blocks of 4).
 * Rows 32.. are CANN's checks this layer took on later: ranks outside CANN's op_api
 * lists (161002), modes and limits of its tiling (561002). */
static void test_scatter_errors(aclrtStream s) {
  enum { NROWS = 55 };
  for (int row = 0; row < NROWS; row++) {
    sc_case *c = calloc(1, sizeof *c);
    c->cache_mode = "Norm", c->scatter_mode = "None";
    spec(&c->t[KEY], ACL_FLOAT16, 3, 4, 2, 16, 0);
    spec(&c->t[VAL], ACL_FLOAT16, 3, 4, 2, 16, 0);
    spec4(&c->t[KC], ACL_FLOAT16, 2, 4, 2, 16);
    spec4(&c->t[VC], ACL_FLOAT16, 2, 4, 2, 16);
    spec(&c->t[SLOT], ACL_INT32, 1, 4, 0, 0, 0);
    c->t[SLOT].ivals = c->iv;
    c->iv[0] = 0, c->iv[1] = 5, c->iv[2] = 2, c->iv[3] = 7;
    aclnnStatus want = ACLNN_ERR_PARAM_INVALID;
    const aclnnStatus TILING = ACLNN_ERR_INNER_TILING_ERROR;
    bool null_ws = false, null_ex = false;
    int five = -1;          /* KEY or VAL: replaced by a 5-D view of its block */
    const char *msg = NULL; /* in the message (rows 32..) */
    switch (row) {
      case 0:
        c->t[KEY].present = false;
        want = ACLNN_ERR_INNER_NULLPTR;
        break;
      case 1:
        c->t[KC].present = false;
        want = ACLNN_ERR_INNER_NULLPTR;
        break;
      case 2:
        c->t[SLOT].present = false;
        want = ACLNN_ERR_INNER_NULLPTR;
        break;
      case 3:
        c->t[VC].present = false;
        want = ACLNN_ERR_INNER_NULLPTR;
        break;
      /* rows 4-6, 15-18, 29: CANN's op_api code, not its doc: NULL outputs 561103;
       * ranks and shapes past the op_api's key/value ranks are its tiling's (561002) */
      case 4:
        null_ws = true;
        want = ACLNN_ERR_INNER_NULLPTR;
        break;
      case 5:
        null_ex = true;
        want = ACLNN_ERR_INNER_NULLPTR;
        break;
      case 6:
        c->t[VAL].present = false;
        want = TILING;
        break; /* valueCache without value */
      case 7:
        c->t[KEY].dt = c->t[VAL].dt = c->t[KC].dt = c->t[VC].dt = ACL_FLOAT;
        break;
      case 8:
        c->t[KC].dt = ACL_BF16;
        break;
      case 9:
        c->t[VAL].dt = ACL_BF16;
        break;
      case 10:
        c->t[VC].dt = ACL_INT8;
        break;
      case 11:
        c->t[SLOT].dt = ACL_INT16;
        break;
      case 12:
        spec4(&c->t[KEY], ACL_FLOAT16, 4, 1, 2, 16);
        want = ACLNN_ERR_INNER_TILING_ERROR;
        break;
      case 13: /* CANN's op_api: key 3-D or 4-D, else 161002 */
        spec(&c->t[KEY], ACL_FLOAT16, 2, 4, 32, 0, 0);
        break;
      case 14: /* value 0-D, 3-D or 4-D, else 161002 */
        spec(&c->t[VAL], ACL_FLOAT16, 2, 4, 32, 0, 0);
        break;
      case 15:
        spec(&c->t[KC], ACL_FLOAT16, 3, 8, 2, 16, 0);
        want = TILING;
        break;
      case 16:
        spec4(&c->t[KC], ACL_FLOAT16, 2, 4, 2, 32);
        want = TILING;
        break; /* D differs */
      case 17:
        spec(&c->t[VAL], ACL_FLOAT16, 3, 3, 2, 16, 0);
        want = TILING;
        break;
      case 18:
        spec(&c->t[SLOT], ACL_INT32, 2, 2, 2, 0, 0);
        want = TILING;
        break;
      case 19: /* CANN's tiling refuses an unknown cacheMode */
        c->cache_mode = "PA";
        want = TILING;
        break;
      case 20:
        c->scatter_mode = "Alibi"; /* without compressLensOptional: CANN's tiling */
        want = TILING;
        break;
      case 21:
        c->scatter_mode = "Rope"; /* without compressLensOptional: CANN's tiling */
        want = TILING;
        break;
      case 22:
        c->scatter_mode = "Omni"; /* without compressLensOptional: CANN's tiling */
        want = TILING;
        break;
      case 23: /* and an unknown scatterMode (case-sensitive) */
        c->scatter_mode = "nct";
        want = TILING;
        break;
      /* the compress tensors must have slotMapping's dtype in every mode (CANN's
       * op_api); outside the compressed modes they are not read (test_scatter_ignored) */
      case 24:
        spec(&c->t[CL], ACL_INT64, 1, 4, 0, 0, 0);
        break;
      case 25:
        spec(&c->t[SL], ACL_INT64, 1, 1, 0, 0, 0);
        break;
      case 26:
        c->scatter_mode = "Nct";
        break; /* no arrays */
      case 27:
        c->scatter_mode = "Nct", c->use_arrays = true;
        break; /* stride 0 */
      case 28:
        c->t[KC].fmt = ACL_FORMAT_FRACTAL_NZ;
        break; /* NZ format in Norm mode */
      case 29:
        c->cache_mode = "PA_NZ";
        want = TILING;
        break; /* [2, 4, 2, 16] is not NZ for D 16: H*D/ld */
      /* phase 2: a slot out of range (nothing written) */
      case 30:
        c->iv[3] = 8;
        break;
      case 31:
        c->iv[0] = 1000000;
        c->t[SLOT].dt = ACL_INT64;
        break;
      /* "NHSD" is a scatterMode: as a cacheMode, CANN's tiling refuses it */
      case 32:
        msg = "cacheMode \"NHSD\"";
        c->cache_mode = "NHSD";
        want = TILING;
        break;
      case 33:
        msg = "cacheMode \"NHSD\"";
        c->cache_mode = "NHSD", c->scatter_mode = "NHSD";
        want = TILING;
        break;
      case 34:
        msg = "scatterMode \"nhsd\"";
        c->scatter_mode = "nhsd";
        want = TILING;
        break;
      /* ranks: 5-D key or value, CANN's op_api (161002); a 4-D value, its tiling */
      case 35:
        msg = "key has 5 dims";
        five = KEY;
        break;
      case 36:
        msg = "value has 5 dims";
        five = VAL;
        break;
      case 37:
        msg = "value has 4 dims";
        spec4(&c->t[VAL], ACL_FLOAT16, 4, 1, 2, 16);
        want = TILING;
        break;
      /* numBlocks * blockSize < T (every slot valid: tokens 1 and 3 are padding) */
      case 38: /* Norm */
      case 39: /* Nct */
      case 40: /* NHSD */
      case 41: /* PA_NZ */
      case 42: /* K only */
        c->iv[0] = 0, c->iv[1] = -1, c->iv[2] = 1, c->iv[3] = -1;
        msg = "is smaller than the 4 tokens";
        if (row == 41)
          c->cache_mode = "PA_NZ", spec4(&c->t[KC], ACL_FLOAT16, 1, 2, 2, 16);
        else
          spec4(&c->t[KC], ACL_FLOAT16, 1, 2, 2, 16); /* Norm [1, 2, 2, 16]; NHSD too */
        c->t[VC] = c->t[KC];
        if (row == 39) {
          c->scatter_mode = "Nct", c->use_arrays = true;
          c->nct_strides[0] = c->nct_strides[1] = 32;
        }
        if (row == 40) c->scatter_mode = "NHSD";
        if (row == 42) c->t[VAL].present = c->t[VC].present = false;
        want = TILING;
        break;
      /* K only: CANN's tiling has it for Norm with None or Nct alone */
      case 43:
        msg = "scatterMode \"NHSD\" needs value";
        c->scatter_mode = "NHSD";
        spec4(&c->t[KC], ACL_FLOAT16, 2, 2, 4, 16);
        c->t[VAL].present = c->t[VC].present = false;
        want = TILING;
        break;
      case 44:
        msg = "cacheMode \"PA_NZ\" needs value";
        c->cache_mode = "PA_NZ";
        spec4(&c->t[KC], ACL_FLOAT16, 2, 2, 4, 16);
        c->t[VAL].present = c->t[VC].present = false;
        want = TILING;
        break;
      /* NHSD's limits */
      case 45: /* head size 8 f16 = 16 bytes, not a multiple of 32 */
        msg = "multiples of 32 bytes";
        c->scatter_mode = "NHSD";
        spec(&c->t[KEY], ACL_FLOAT16, 3, 4, 2, 8, 0);
        spec(&c->t[VAL], ACL_FLOAT16, 3, 4, 2, 8, 0);
        spec4(&c->t[KC], ACL_FLOAT16, 2, 2, 4, 8);
        c->t[VC] = c->t[KC];
        want = TILING;
        break;
      case 46: /* 4096 heads */
      case 47: /* one token's key and value: 2 * 48912 * 2 = 195648 bytes > 195584 */
      case 48: /* blockSize 87840 * head size 48896 > UINT32_MAX (blocks of stride 0) */
      {
        int64_t H = row == 46 ? 4096 : 1, D = row == 46 ? 16 : row == 47 ? 48912 : 48896;
        int64_t bs = row == 48 ? 87840 : 1;
        c->scatter_mode = "NHSD";
        spec(&c->t[KEY], ACL_FLOAT16, 3, 1, H, D, 0);
        c->t[VAL] = c->t[KEY];
        spec4(&c->t[KC], ACL_FLOAT16, 1, H, bs, D);
        if (row == 48) c->t[KC].strides[2] = 0;
        msg = row == 46 ? "4096 heads" : row == 47 ? "195648 bytes" : "UINT32_MAX";
        c->t[VC] = c->t[KC];
        spec(&c->t[SLOT], ACL_INT32, 1, 1, 0, 0, 0);
        c->iv[0] = 0;
        want = TILING;
        break;
      }
      /* dtypes: key and value differ only in PA_NZ (op_api, 161002); an INT8 value
       * needs an INT8 key (tiling, 561002) */
      case 49:
        msg = "value dtype";
        c->t[VAL].dt = c->t[VC].dt = ACL_BF16;
        break;
      case 50:
        msg = "value dtype";
        c->scatter_mode = "NHSD";
        spec4(&c->t[KC], ACL_FLOAT16, 2, 2, 4, 16);
        c->t[VC] = c->t[KC];
        c->t[VAL].dt = c->t[VC].dt = ACL_BF16;
        break;
      case 51:
        msg = "value dtype";
        c->t[KEY].dt = c->t[KC].dt = ACL_INT8;
        break;
      case 52: /* PA_NZ: an f16 key beside an INT8 value */
        msg = "INT8 value needs an INT8 key";
        c->cache_mode = "PA_NZ";
        spec4(&c->t[KC], ACL_FLOAT16, 2, 2, 4, 16);
        spec4(&c->t[VC], ACL_INT8, 2, 1, 4, 32);
        c->t[VAL].dt = ACL_INT8;
        want = TILING;
        break;
      case 53: /* PA_NZ: the INT8 value's cache FLOAT16 (op_api, 161002) */
        msg = "valueCacheRef dtype";
        c->cache_mode = "PA_NZ";
        c->t[KEY].dt = ACL_INT8;
        spec4(&c->t[KC], ACL_INT8, 2, 1, 4, 32);
        spec4(&c->t[VC], ACL_FLOAT16, 2, 2, 4, 16);
        c->t[VAL].dt = ACL_INT8;
        break;
      case 54: /* cacheMode "" is Norm: an NZ-shaped cache is still refused */
        msg = "format";
        c->cache_mode = "";
        c->t[KC].fmt = ACL_FORMAT_FRACTAL_NZ;
        break;
    }
    sc_build(c);
    if (five >= 0) {
      tspec *t = &c->t[five];
      int64_t dims[5] = {t->dims[0], t->dims[1], 1, 1, t->dims[2]},
              st[5] = {t->strides[0], t->strides[1], 1, 1, t->strides[2]};
      aclDestroyTensor(t->t);
      t->t = aclCreateTensor(dims, 5, t->dt, st, 0, ACL_FORMAT_ND, dims, 5, t->dev);
    }
    uint64_t ws = 7;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = sc_phase1(c, null_ws ? NULL : &ws, null_ex ? NULL : &ex);
    if (st == ACLNN_SUCCESS) {
      void *w = NULL;
      if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
      st = aclnnScatterPaKvCache(w, ws, ex, s);
      if (w) aclrtFree(w);
    }
    EQ(st, want);
    if (st != want) fprintf(stderr, "  scatter error row %d\n", row);
    if (msg)
      TU_CHECK(strstr(aclGetRecentErrMsg(), msg) != NULL, "row %d: message '%s'", row,
               aclGetRecentErrMsg());
    TU_CHECK(sc_unchanged(c), "scatter error row %d wrote", row);
    TU_CHECK(strlen(aclGetRecentErrMsg()) > 0, "scatter error row %d: no message", row);
    sc_free(c);
  }
  /* K only with 0-D value/valueCache (CANN's scenario 6) */
  sc_case *c = sc_random(0, false, true);
  tspec v0 = {0}, vc0 = {0};
  spec(&v0, c->t[KEY].dt, 1, 1, 0, 0, 0);
  v0.rank = 0;
  vc0 = v0;
  build(&v0);
  build(&vc0);
  aclTensor *keep_v = c->t[VAL].t, *keep_vc = c->t[VC].t;
  bool pv = c->t[VAL].present, pvc = c->t[VC].present;
  c->t[VAL].t = v0.t, c->t[VC].t = vc0.t;
  c->t[VAL].present = c->t[VC].present = true;
  uint64_t ws;
  aclOpExecutor *ex;
  EQ(sc_phase1(c, &ws, &ex), ACLNN_SUCCESS);
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  c->t[VAL].t = keep_v, c->t[VC].t = keep_vc;
  c->t[VAL].present = pv, c->t[VC].present = pvc;
  unbuild(&v0);
  unbuild(&vc0);
  sc_free(c);
}

/* A fixed case: contiguous tensors of dtypes dk (key) and dv (value; K only: 0), the
 * caches in the layout the modes select, slots nb*bs-1, nb*bs-2, .. with every fifth
 * token padding. */
static sc_case *sc_make(const char *cm, const char *sm, aclDataType dk, aclDataType dv,
                        int64_t T, int64_t H, int64_t Dk, int64_t Dv, int64_t nb,
                        int64_t bs) {
  sc_case *c = calloc(1, sizeof *c);
  c->cache_mode = cm, c->scatter_mode = sm;
  c->T = T, c->H = H, c->Dk = Dk, c->Dv = Dv, c->nb = nb, c->bs = bs;
  bool nct;
  int mode = sc_layout(c, &nct);
  aclDataType dt[2] = {dk, dv};
  int64_t D[2] = {Dk, Dv};
  for (int k = 0; k < (dv ? 2 : 1); k++) {
    int64_t ld = 32 / (int64_t)dt_size(dt[k]);
    spec(&c->t[k ? VAL : KEY], dt[k], 3, T, H, D[k], 0);
    if (mode == 2)
      spec4(&c->t[k ? VC : KC], dt[k], nb, H * D[k] / ld, bs, ld);
    else if (mode == 1)
      spec4(&c->t[k ? VC : KC], dt[k], nb, H, bs, D[k]);
    else
      spec4(&c->t[k ? VC : KC], dt[k], nb, bs, H, D[k]);
  }
  if (nct) { /* the rows as the tensors give them */
    c->use_arrays = true;
    c->nct_strides[0] = H * Dk, c->nct_strides[1] = H * Dv;
  }
  spec(&c->t[SLOT], ACL_INT64, 1, T, 0, 0, 0);
  c->t[SLOT].ivals = c->iv;
  for (int64_t t = 0; t < T; t++) c->iv[t] = t % 5 == 4 ? -1 : nb * bs - 1 - t;
  sc_build(c);
  return c;
}

/* The modes' accepted edges, each against the golden: "" for cacheMode (Norm) and
 * scatterMode (None); scatterMode "NHSD"; PA_NZ with scatterMode not read (an "Nct"
 * without arrays, or with arrays that would re-stride), and key/value of different
 * dtypes; numBlocks * blockSize == T in every mode; NHSD's unified-buffer limit. */
static void test_scatter_modes(aclrtStream s) {
  const aclDataType F16 = ACL_FLOAT16, BF16 = ACL_BF16, I8 = ACL_INT8;
  static const struct {
    const char *cm, *sm;
    aclDataType dk, dv;
    int64_t T, H, Dk, Dv, nb, bs;
    bool arrays; /* pass strides {1, 1} and offsets {3, 3} */
  } cases[] = {
      {"", "", F16, F16, 7, 2, 16, 32, 3, 4, false},
      {NULL, "", BF16, BF16, 7, 2, 16, 16, 3, 4, false},
      {"", NULL, I8, I8, 7, 1, 32, 64, 2, 5, false},
      {"Norm", "NHSD", F16, F16, 9, 3, 16, 32, 2, 8, false},
      {"", "NHSD", I8, I8, 9, 2, 32, 64, 3, 4, false},
      {NULL, "NHSD", BF16, BF16, 5, 1, 48, 16, 1, 5, false},
      {"PA_NZ", "Nct", F16, F16, 6, 2, 16, 16, 2, 16, false},
      {"PA_NZ", "Nct", BF16, BF16, 6, 2, 16, 16, 2, 16, true},
      {"PA_NZ", "Alibi", F16, F16, 6, 2, 16, 16, 2, 16, false},
      {"PA_NZ", "bogus", F16, F16, 6, 2, 16, 16, 2, 16, false},
      {"PA_NZ", NULL, I8, F16, 8, 2, 32, 16, 2, 16, false},
      {"PA_NZ", "None", I8, BF16, 8, 3, 32, 48, 1, 16, false},
      {"PA_NZ", "", F16, BF16, 8, 1, 32, 16, 1, 32, false},
      {"PA_NZ", "NHSD", BF16, F16, 8, 2, 16, 32, 1, 16, false},
      /* numBlocks * blockSize == T */
      {"Norm", "None", F16, F16, 12, 2, 16, 16, 3, 4, false},
      {"Norm", "Nct", F16, F16, 12, 2, 16, 16, 3, 4, false},
      {"Norm", "NHSD", F16, F16, 12, 2, 16, 16, 3, 4, false},
      {"PA_NZ", "None", I8, F16, 32, 1, 32, 16, 2, 16, false},
      {"Norm", "None", F16, 0, 12, 2, 16, 0, 3, 4, false},
      /* NHSD: one token's key and value at exactly 195584 bytes */
      {"Norm", "NHSD", F16, F16, 1, 1, 48896, 48896, 1, 1, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sc_case *c = sc_make(cases[i].cm, cases[i].sm, cases[i].dk, cases[i].dv, cases[i].T,
                         cases[i].H, cases[i].Dk, cases[i].Dv, cases[i].nb, cases[i].bs);
    if (cases[i].arrays) {
      c->use_arrays = true;
      c->nct_strides[0] = c->nct_strides[1] = 1;
      c->nct_offsets[0] = c->nct_offsets[1] = 3;
    }
    EQ(sc_call(c, s), ACLNN_SUCCESS);
    TU_CHECK(sc_as_golden(c), "mode case %zu (cacheMode %s, scatterMode %s)", i,
             cases[i].cm ? cases[i].cm : "NULL", cases[i].sm ? cases[i].sm : "NULL");
    sc_free(c);
  }
}

/* Finding 2 of the fuzzing: slotMapping, key and keyCacheRef as views at the start of
 * one aclrtMalloc block. The scatter would re-read slots after writing cache rows over
 * them; phase 1 refuses the overlap (161002) and nothing is written. */
static void test_scatter_overlap(aclrtStream s) {
  void *dev = NULL;
  EQ(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  unsigned char host[4096], after[4096];
  for (int i = 0; i < 4096; i++) host[i] = (unsigned char)(i * 7);
  aclrtMemcpy(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE);
  int64_t kd[3] = {2, 1, 16}, ks[3] = {16, 16, 1}, cd[4] = {4, 4, 1, 16},
          cst[4] = {64, 16, 16, 1}, sd[1] = {2}, ss[1] = {1}, all[1] = {2048};
  aclTensor *key = aclCreateTensor(kd, 3, ACL_FLOAT16, ks, 0, ACL_FORMAT_ND, all, 1, dev);
  aclTensor *kc = aclCreateTensor(cd, 4, ACL_FLOAT16, cst, 0, ACL_FORMAT_ND, all, 1, dev);
  aclTensor *slot = aclCreateTensor(sd, 1, ACL_INT32, ss, 0, ACL_FORMAT_ND, all, 1, dev);
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  char norm[] = "Norm", none[] = "None";
  EQ(aclnnScatterPaKvCacheGetWorkspaceSize(key, kc, slot, NULL, NULL, NULL, NULL, NULL,
                                           norm, none, NULL, NULL, &ws, &ex),
     ACLNN_ERR_PARAM_INVALID);
  TU_CHECK(ex == NULL, "an executor for overlapping tensors");
  TU_CHECK(strstr(aclGetRecentErrMsg(), "overlap") != NULL, "message: %s",
           aclGetRecentErrMsg());
  if (ex) EQ(aclnnScatterPaKvCache(NULL, ws, ex, s), ACLNN_SUCCESS);
  aclrtMemcpy(after, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST);
  TU_CHECK(!memcmp(host, after, 4096), "memory written");
  /* handle misuse (class e): a tensor destroyed twice, or used after destroy, is refused
   * without reading its memory */
  EQ(aclDestroyTensor(key), ACLNN_SUCCESS);
  EQ(aclDestroyTensor(key), ACLNN_ERR_PARAM_INVALID);
  TU_CHECK(strstr(aclGetRecentErrMsg(), "not a live aclTensor") != NULL, "message: %s",
           aclGetRecentErrMsg());
  EQ(aclnnScatterPaKvCacheGetWorkspaceSize(key, kc, slot, NULL, NULL, NULL, NULL, NULL,
                                           norm, none, NULL, NULL, &ws, &ex),
     ACLNN_ERR_PARAM_INVALID);
  TU_CHECK(strstr(aclGetRecentErrMsg(), "key is not a live aclTensor") != NULL,
           "message: %s", aclGetRecentErrMsg());
  aclDestroyTensor(kc);
  aclDestroyTensor(slot);
  aclrtFree(dev);
}

int main(void) {
  acl_test t;
  acl_test_begin(&t, 20260510, 2);
  test_scatter_sample(t.stream);
  test_scatter_random(t.stream, t.ctx);
  test_scatter_ignored(t.stream);
  test_scatter_lifecycle(t.stream, t.ctx);
  test_scatter_modes(t.stream);
  test_scatter_errors(t.stream);
  test_scatter_overlap(t.stream);
  return acl_test_end(&t, "test_aclnn_scatter_pa_kv_cache");
}
