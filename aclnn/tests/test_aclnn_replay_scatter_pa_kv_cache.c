/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnScatterPaKvCache judged by CANN's own tests (ops-transformer,
 * attention/scatter_pa_kv_cache/tests/ut): every case of its tiling UT, its infershape
 * UT and its kernel UT, replayed through the aclnn entry points.
 *   tiling UT: the case's shapes, dtypes and attributes; CANN's tiling fails on each, so
 *     the expected status is the code of whichever of CANN's stages refuses first: its
 *     op_api's rank and dtype checks (161002), else its tiling (561002); every cache is
 *     byte-identical afterwards. The cases named "nhsd" pass scatter_mode "Nct" (so
 *     they are replayed as given) and are replayed once more as "NHSD", their evident
 *     intent.
 *   infershape UT: the caches keep their shapes (they are written in place); its dtype
 *     FLOAT is refused by CANN's op_api on an Atlas A2 (161002, listed in docs/aclnn.md),
 *     so the shapes are replayed in FLOAT16 too, values against the golden.
 *   kernel UT: gen_data.py's inputs (key and value uniform in [-5, 5) in FLOAT16, slots a
 *     sample without repeats of the numBlocks * blockSize slots, caches zero) in PA_NZ,
 *     caches against do_golden's formula written here: token t's key row of H * D
 *     elements goes, ld = 32 bytes of elements at a time, to cache[s / bs][k][s % bs][:].
 * Prints passed / listed / total per table. */
#include <math.h>

#include "aclnn_tspec.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"

enum { KEY, KC, SLOT, VAL, VC, CL, CO, SL, NS };

static acl_test g_t;

typedef struct shape {
  int rank; /* 0: absent */
  int64_t d[5];
  aclDataType dt;
} shape;

typedef struct ut_case {
  const char *name;
  shape s[NS];
  const char *cache_mode, *scatter_mode;
  aclnnStatus want;
} ut_case;

typedef struct tally {
  int passed, listed, total;
} tally;

/* A tensor of any rank up to 5 (tspec has 4): contiguous, random contents. */
typedef struct tens {
  shape s;
  void *dev;
  unsigned char *host;
  size_t bytes;
  aclTensor *t;
} tens;

static void tens_make(tens *x, const shape *s, const int64_t *ivals) {
  memset(x, 0, sizeof *x);
  x->s = *s;
  if (!s->rank) return;
  int64_t st[5], n = 1;
  for (int i = s->rank - 1; i >= 0; i--) st[i] = n, n *= s->d[i];
  size_t es = dt_size(s->dt);
  x->bytes = (size_t)(n ? n : 1) * es;
  x->host = malloc(x->bytes);
  for (size_t i = 0; i < x->bytes; i++) x->host[i] = (unsigned char)tu_rand_u64();
  if (ivals)
    for (int64_t i = 0; i < n; i++) {
      if (es == 8) memcpy(x->host + i * 8, &ivals[i], 8);
      if (es == 4) {
        int32_t v = (int32_t)ivals[i];
        memcpy(x->host + i * 4, &v, 4);
      }
    }
  x->dev = dev_copy(x->host, x->bytes);
  x->t = aclCreateTensor(s->d, (uint64_t)s->rank, s->dt, st, 0, ACL_FORMAT_ND, s->d,
                         (uint64_t)s->rank, x->dev);
}

static void tens_free(tens *x) {
  if (x->t) aclDestroyTensor(x->t);
  if (x->dev) aclrtFree(x->dev);
  free(x->host);
  memset(x, 0, sizeof *x);
}

static bool tens_unchanged(const tens *x) {
  if (!x->s.rank) return true;
  unsigned char *d = malloc(x->bytes);
  aclrtMemcpy(d, x->bytes, x->dev, x->bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  bool ok = memcmp(d, x->host, x->bytes) == 0;
  free(d);
  return ok;
}

/* Phase 1 and, when accepted, phase 2 of one call; strides {1, 1} and offsets {0, 0}
 * as every UT case passes them. */
static aclnnStatus call(tens *t, const char *cache_mode, const char *scatter_mode) {
  aclTensor *a[NS];
  for (int i = 0; i < NS; i++) a[i] = t[i].t;
  char cm[16], sm[16];
  strcpy(cm, cache_mode);
  strcpy(sm, scatter_mode);
  const int64_t ones[2] = {1, 1}, zeros[2] = {0, 0};
  aclIntArray *strides = aclCreateIntArray(ones, 2),
              *offsets = aclCreateIntArray(zeros, 2);
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = aclnnScatterPaKvCacheGetWorkspaceSize(a[KEY], a[KC], a[SLOT], a[VAL],
                                                         a[VC], a[CL], a[CO], a[SL], cm,
                                                         sm, strides, offsets, &ws, &ex);
  if (st == ACLNN_SUCCESS) {
    void *w = NULL;
    if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    st = aclnnScatterPaKvCache(w, ws, ex, g_t.stream);
    aclrtSynchronizeStream(g_t.stream);
    if (w) aclrtFree(w);
  } else {
    TU_CHECK(ex == NULL && ws == 0, "executor or workspace size set on refusal");
  }
  aclDestroyIntArray(strides);
  aclDestroyIntArray(offsets);
  return st;
}

static void tally_print(const char *table, const tally *t) {
  printf("%s: %d passed, %d listed (docs/aclnn.md), %d total\n", table, t->passed,
         t->listed, t->total);
}

/* ------------------------------------------------------------ tiling UT */
#define F16 ACL_FLOAT16
#define I32 ACL_INT32
#define S3(a, b, c, t) \
  { 3, {a, b, c}, t }
#define S4(a, b, c, d, t) \
  { 4, {a, b, c, d}, t }
#define S1(a, t) \
  { 1, {a}, t }
#define S2(a, b, t) \
  { 2, {a, b}, t }
#define KEY0 S3(102, 1, 128, F16)
#define C0 S4(306, 128, 1, 128, F16)
#define SLOT0 S1(102, I32)
#define P561 ACLNN_ERR_INNER_TILING_ERROR
#define P161 ACLNN_ERR_PARAM_INVALID

/* The cases of test_scatter_pa_kv_cache_tiling.cpp, in its order: key, keyCache,
 * slotMapping, value, valueCache[, compressLens, compressSeqOffset, seqLens]. */
static const ut_case TILING[] = {
    {"tiling_error_key_wrong_dim",
     {S2(102, 128, F16), C0, SLOT0, KEY0, C0},
     "Norm",
     "None",
     P161},
    {"tiling_error_key_cache_wrong_dim",
     {KEY0, S3(306, 128, 128, F16), SLOT0, KEY0, C0},
     "Norm",
     "None",
     P561},
    {"tiling_error_slot_mapping_wrong_dim",
     {KEY0, C0, S2(102, 1, I32), KEY0, C0},
     "Norm",
     "None",
     P561},
    {"tiling_error_dtype_mismatch",
     {KEY0, S4(306, 128, 1, 128, ACL_FLOAT), SLOT0, KEY0, C0},
     "Norm",
     "None",
     P161},
    {"tiling_error_unsupported_dtype",
     {S3(102, 1, 128, ACL_COMPLEX64), S4(306, 128, 1, 128, ACL_COMPLEX64), SLOT0,
      S3(102, 1, 128, ACL_COMPLEX64), S4(306, 128, 1, 128, ACL_COMPLEX64)},
     "Norm",
     "None",
     P161},
    {"tiling_error_value_wrong_dim",
     {KEY0, C0, SLOT0, S2(102, 128, F16), C0},
     "Norm",
     "None",
     P161},
    {"tiling_error_value_cache_wrong_dim",
     {KEY0, C0, SLOT0, KEY0, S3(306, 128, 128, F16)},
     "Norm",
     "None",
     P561},
    {"tiling_error_key_dim_num_5d",
     {{5, {102, 1, 1, 1, 128}, F16}, C0, SLOT0, KEY0, C0},
     "Norm",
     "None",
     P161},
    {"tiling_error_key_value_dim0_mismatch",
     {KEY0, C0, SLOT0, S3(64, 1, 128, F16), C0},
     "Norm",
     "None",
     P561},
    {"tiling_error_key_value_dim1_mismatch",
     {KEY0, C0, SLOT0, S3(102, 2, 128, F16), C0},
     "Norm",
     "None",
     P561},
    {"tiling_error_key_value_cache_dim0_mismatch",
     {KEY0, C0, SLOT0, KEY0, S4(200, 128, 1, 128, F16)},
     "Norm",
     "None",
     P561},
    {"tiling_error_key_value_cache_dim2_mismatch",
     {KEY0, C0, SLOT0, KEY0, S4(306, 128, 2, 128, F16)},
     "Norm",
     "None",
     P561},
    {"tiling_error_value_dtype_mismatch",
     {KEY0, C0, SLOT0, S3(102, 1, 128, ACL_FLOAT), S4(306, 128, 1, 128, ACL_FLOAT)},
     "Norm",
     "None",
     P161},
    {"tiling_error_nz_key_cache_3d",
     {KEY0, S3(306, 128, 128, F16), SLOT0, KEY0, C0},
     "PA_NZ",
     "None",
     P561},
    {"tiling_error_nz_k_head_size_not_aligned",
     {S3(102, 1, 100, F16), S4(306, 128, 1, 100, F16), SLOT0, S3(102, 1, 100, F16),
      S4(306, 128, 1, 100, F16)},
     "PA_NZ",
     "None",
     P561},
    {"tiling_error_key_value_dim_num_mismatch",
     {KEY0, C0, SLOT0, S4(102, 1, 1, 128, F16), C0},
     "Norm",
     "None",
     P561},
    {"tiling_error_norm_vhead_size_mismatch",
     {KEY0, C0, SLOT0, KEY0, S4(306, 128, 1, 64, F16)},
     "Norm",
     "None",
     P561},
    {"tiling_error_norm_kc_vc_dim1_mismatch",
     {KEY0, C0, SLOT0, KEY0, S4(306, 64, 1, 128, F16)},
     "Norm",
     "None",
     P561},
    {"tiling_error_nhsd_khead_not_aligned",
     {KEY0, S4(306, 1, 128, 100, F16), SLOT0, KEY0, S4(306, 1, 128, 100, F16)},
     "Norm",
     "Nct",
     P561},
    {"tiling_error_nhsd_numblocks_too_small",
     {KEY0, S4(2, 1, 16, 128, F16), SLOT0, KEY0, S4(2, 1, 16, 128, F16)},
     "Norm",
     "Nct",
     P561},
    {"tiling_error_nhsd_numhead_mismatch",
     {KEY0, S4(306, 2, 128, 128, F16), SLOT0, KEY0, S4(306, 2, 128, 128, F16)},
     "Norm",
     "Nct",
     P561},
    {"tiling_error_nhsd_kc_vc_dim2_mismatch",
     {KEY0, S4(306, 1, 128, 128, F16), SLOT0, KEY0, S4(306, 1, 64, 128, F16)},
     "Norm",
     "Nct",
     P561},
    {"tiling_error_nhsd_kv_dim0_mismatch",
     {KEY0, S4(306, 1, 128, 128, F16), SLOT0, S3(64, 1, 128, F16),
      S4(306, 1, 128, 128, F16)},
     "Norm",
     "Nct",
     P561},
    {"tiling_error_nhsd_kv_dim1_mismatch",
     {KEY0, S4(306, 1, 128, 128, F16), SLOT0, S3(102, 2, 128, F16),
      S4(306, 1, 128, 128, F16)},
     "Norm",
     "Nct",
     P561},
    {"tiling_error_nhsd_khead_kc_dim3_mismatch",
     {KEY0, S4(306, 1, 128, 64, F16), SLOT0, KEY0, S4(306, 1, 128, 64, F16)},
     "Norm",
     "Nct",
     P561},
    {"tiling_error_nhsd_vhead_vc_dim3_mismatch",
     {KEY0, S4(306, 1, 128, 128, F16), SLOT0, KEY0, S4(306, 1, 128, 64, F16)},
     "Norm",
     "Nct",
     P561},
    {"tiling_error_nhsd_kc_vc_dim0_mismatch",
     {KEY0, S4(306, 1, 128, 128, F16), SLOT0, KEY0, S4(200, 1, 128, 128, F16)},
     "Norm",
     "Nct",
     P561},
    {"tiling_error_compress_kc_dim2_not_1",
     {KEY0, S4(306, 128, 2, 128, F16), SLOT0, KEY0, S4(306, 128, 2, 128, F16), SLOT0,
      SLOT0, SLOT0},
     "Norm",
     "Alibi",
     P561},
    {"tiling_error_compress_lens_2d",
     {KEY0, C0, SLOT0, KEY0, C0, S2(10, 10, I32), SLOT0, SLOT0},
     "Norm",
     "Alibi",
     P561},
    {"tiling_error_seq_lens_2d",
     {KEY0, C0, SLOT0, KEY0, C0, SLOT0, SLOT0, S2(10, 10, I32)},
     "Norm",
     "Alibi",
     P561},
    /* K only: the UT gives key, keyCache and slotMapping */
    {"tiling_error_siso_khead_kc_dim3_mismatch",
     {KEY0, S4(306, 128, 1, 64, F16), SLOT0},
     "Norm",
     "None",
     P561},
    {"tiling_error_siso_numblocks_too_small",
     {KEY0, S4(2, 8, 1, 128, F16), SLOT0},
     "Norm",
     "None",
     P561},
    {"tiling_error_nz_kv_dim0_mismatch_dual",
     {KEY0, S4(306, 8, 128, 16, F16), SLOT0, S3(64, 1, 128, F16),
      S4(306, 8, 128, 16, F16)},
     "PA_NZ",
     "None",
     P561},
    {"tiling_error_nz_kv_dim1_mismatch",
     {KEY0, S4(306, 8, 128, 16, F16), SLOT0, S3(102, 2, 128, F16),
      S4(306, 8, 128, 16, F16)},
     "PA_NZ",
     "None",
     P561},
    {"tiling_error_nz_kc_vc_dim1_mismatch",
     {KEY0, S4(306, 8, 128, 16, F16), SLOT0, KEY0, S4(306, 4, 128, 16, F16)},
     "PA_NZ",
     "None",
     P561},
};

/* One refused case: its status, and no tensor written. */
static bool run_refused(const ut_case *c, const char *scatter_mode) {
  long f0 = tu_failures;
  int64_t slots[102];
  for (int i = 0; i < 102; i++) slots[i] = 3 * i;
  tens t[NS];
  for (int i = 0; i < NS; i++)
    tens_make(&t[i], &c->s[i], i == SLOT && c->s[i].d[0] == 102 ? slots : NULL);
  aclnnStatus st = call(t, c->cache_mode, scatter_mode);
  TU_CHECK(st == c->want, "%s (scatterMode %s): status %d, want %d (%s)", c->name,
           scatter_mode, (int)st, (int)c->want, aclGetRecentErrMsg());
  for (int i = 0; i < NS; i++)
    TU_CHECK(tens_unchanged(&t[i]), "%s: tensor %d written", c->name, i);
  if (st != ACLNN_SUCCESS) {
    const char *msg = aclGetRecentErrMsg();
    TU_CHECK(msg && strstr(msg, "aclnnScatterPaKvCache"), "%s: message '%s'", c->name,
             msg ? msg : "(null)");
  }
  for (int i = 0; i < NS; i++) tens_free(&t[i]);
  return tu_failures == f0;
}

static void test_tiling_ut(void) {
  tally t = {0}, nhsd = {0};
  int n = (int)(sizeof TILING / sizeof TILING[0]);
  for (int i = 0; i < n; i++) {
    const ut_case *c = &TILING[i];
    t.total++;
    t.passed += run_refused(c, c->scatter_mode);
    if (strstr(c->name, "_nhsd_")) { /* as "NHSD": every one of them fails there too */
      nhsd.total++;
      nhsd.passed += run_refused(c, "NHSD");
    }
  }
  TU_CHECK(t.total == 35, "tiling UT: %d cases transcribed, CANN has 35", t.total);
  tally_print("tiling UT", &t);
  tally_print("tiling UT, the nhsd cases as scatterMode \"NHSD\"", &nhsd);
}

/* ------------------------------------------------------------ goldens */
/* Norm: cache[s / bs][s % bs][h][d] = src[t][h][d] for each slot s >= 0. */
static void golden_norm(const tens *src, tens *cache, const int64_t *slots, int64_t T) {
  int64_t H = src->s.d[1], D = src->s.d[2], bs = cache->s.d[1];
  size_t row = (size_t)(H * D) * dt_size(src->s.dt);
  for (int64_t t = 0; t < T; t++) {
    if (slots[t] < 0) continue;
    int64_t b = slots[t] / bs, o = slots[t] % bs;
    memcpy(cache->host + (size_t)(b * bs + o) * row, src->host + (size_t)t * row, row);
  }
}

/* PA_NZ (gen_data.py's do_golden): cache [nb, H * D / ld, bs, ld]. */
static void golden_nz(const tens *src, tens *cache, const int64_t *slots, int64_t T) {
  size_t es = dt_size(src->s.dt);
  int64_t HD = src->s.d[1] * src->s.d[2], ld = 32 / (int64_t)es;
  int64_t nk = cache->s.d[1], bs = cache->s.d[2];
  for (int64_t t = 0; t < T; t++) {
    if (slots[t] < 0) continue;
    int64_t b = slots[t] / bs, o = slots[t] % bs;
    for (int64_t k = 0; k < HD / ld; k++)
      memcpy(cache->host + (size_t)(((b * nk + k) * bs + o) * ld) * es,
             src->host + (size_t)(t * HD + k * ld) * es, (size_t)ld * es);
  }
}

static bool caches_are_golden(const tens *t) {
  return tens_unchanged(&t[KC]) && tens_unchanged(&t[VC]);
}

/* numBlocks * blockSize slots, T of them drawn without repeats (random.sample). */
static void sample_slots(int64_t *slots, int64_t T, int64_t nslots) {
  int64_t *all = malloc((size_t)nslots * sizeof *all);
  for (int64_t i = 0; i < nslots; i++) all[i] = i;
  for (int64_t i = 0; i < T; i++) {
    int64_t j = i + tu_rand_range(0, nslots - 1 - i);
    int64_t x = all[i];
    all[i] = all[j], all[j] = x;
    slots[i] = all[i];
  }
  free(all);
}

/* ------------------------------------------------------------ infershape UT */
/* scatter_pa_kv_cache_infershape_0: key/value [102, 1, 128], caches [306, 128, 1, 128],
 * slotMapping [102] INT32, compress tensors present with no dims (not read in "Norm"
 * here: left out), Norm / None, DT_FLOAT; the caches keep their shapes. */
static void test_infershape_ut(void) {
  tally t = {0};
  t.total = 1;
  long f0 = tu_failures;
  const aclDataType dts[2] = {ACL_FLOAT, ACL_FLOAT16};
  for (int k = 0; k < 2; k++) {
    aclDataType dt = dts[k];
    shape s[NS] = {S3(102, 1, 128, dt), S4(306, 128, 1, 128, dt), SLOT0,
                   S3(102, 1, 128, dt), S4(306, 128, 1, 128, dt)};
    int64_t slots[102];
    sample_slots(slots, 102, 306 * 128);
    tens x[NS];
    for (int i = 0; i < NS; i++) tens_make(&x[i], &s[i], i == SLOT ? slots : NULL);
    aclnnStatus st = call(x, "Norm", "None");
    if (dt == ACL_FLOAT) {
      /* listed: CANN's op_api on an Atlas A2 takes FLOAT16, BFLOAT16, INT8 only */
      TU_CHECK(st == ACLNN_ERR_PARAM_INVALID, "infershape_0 FLOAT: %d (%s)", (int)st,
               aclGetRecentErrMsg());
      TU_CHECK(caches_are_golden(x), "infershape_0 FLOAT: caches written");
    } else {
      TU_CHECK(st == ACLNN_SUCCESS, "infershape_0 FLOAT16: %d (%s)", (int)st,
               aclGetRecentErrMsg());
      golden_norm(&x[KEY], &x[KC], slots, 102);
      golden_norm(&x[VAL], &x[VC], slots, 102);
      /* the inferred shapes are the caches' own: they are written in place */
      TU_CHECK(caches_are_golden(x), "infershape_0 FLOAT16: caches differ from golden");
    }
    for (int i = 0; i < NS; i++) tens_free(&x[i]);
  }
  if (tu_failures == f0) t.listed = 1;
  tally_print("infershape UT", &t);
}

/* ------------------------------------------------------------ kernel UT */
/* test_case_nz_full_load_001/002, test_case_nz_not_full_load_001/002: gen_data.py's
 * T 256, H 1, Dk 512, Dv 64, bs 16, nb 20, FLOAT16, slotMapping INT32 / INT64; PA_NZ
 * caches [20, H * D / 16, 16, 16] of zeros (the tiling key picks the kernel's loading
 * scheme, one result). */
static void test_kernel_ut(void) {
  static const struct {
    const char *name;
    aclDataType it;
  } K[4] = {{"test_case_nz_full_load_001 (full_load1)", ACL_INT32},
            {"test_case_nz_full_load_002 (full_load2)", ACL_INT64},
            {"test_case_nz_not_full_load_001", ACL_INT32},
            {"test_case_nz_not_full_load_002", ACL_INT64}};
  tally t = {0};
  const int64_t T = 256, H = 1, Dk = 512, Dv = 64, bs = 16, nb = 20, ld = 16;
  for (int k = 0; k < 4; k++) {
    long f0 = tu_failures;
    t.total++;
    int64_t slots[256];
    sample_slots(slots, T, nb * bs);
    shape s[NS] = {S3(T, H, Dk, F16), S4(nb, H * Dk / ld, bs, ld, F16), S1(T, K[k].it),
                   S3(T, H, Dv, F16), S4(nb, H * Dv / ld, bs, ld, F16)};
    tens x[NS];
    for (int i = 0; i < NS; i++) tens_make(&x[i], &s[i], i == SLOT ? slots : NULL);
    for (int i = KEY; i <= VC; i++) {
      if (i == SLOT) continue;
      uint16_t *h = (uint16_t *)(void *)x[i].host;
      for (size_t e = 0; e < x[i].bytes / 2; e++)
        h[e] = i == KC || i == VC ? 0
                                  : llmk_f32_to_f16((float)(tu_rand_unit() * 10.0 - 5.0));
      aclrtMemcpy(x[i].dev, x[i].bytes, x[i].host, x[i].bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    }
    aclnnStatus st = call(x, "PA_NZ", "None");
    TU_CHECK(st == ACLNN_SUCCESS, "%s: %d (%s)", K[k].name, (int)st,
             aclGetRecentErrMsg());
    golden_nz(&x[KEY], &x[KC], slots, T);
    golden_nz(&x[VAL], &x[VC], slots, T);
    TU_CHECK(caches_are_golden(x), "%s: caches differ from do_golden", K[k].name);
    for (int i = 0; i < NS; i++) tens_free(&x[i]);
    t.passed += tu_failures == f0;
  }
  tally_print("kernel UT", &t);
}

/* CANN's op_api: an empty key (and value) is a successful no-op before any other check
 * (not a UT case; the fix this replay came with): workspace 0, nothing written, even
 * with a FLOAT key and 2-D slots. */
static void test_empty(void) {
  shape s[NS] = {S3(0, 1, 128, ACL_FLOAT), S4(4, 16, 1, 128, ACL_FLOAT), S2(0, 1, I32),
                 S3(0, 1, 128, ACL_FLOAT), S4(4, 16, 1, 128, ACL_FLOAT)};
  tens x[NS];
  for (int i = 0; i < NS; i++) tens_make(&x[i], &s[i], NULL);
  char cm[8] = "Norm", sm[8] = "None";
  uint64_t ws = 1;
  aclOpExecutor *ex = NULL;
  EQ(aclnnScatterPaKvCacheGetWorkspaceSize(x[KEY].t, x[KC].t, x[SLOT].t, x[VAL].t,
                                           x[VC].t, NULL, NULL, NULL, cm, sm, NULL, NULL,
                                           &ws, &ex),
     ACLNN_SUCCESS);
  EQ(ws, 0);
  EQ(aclnnScatterPaKvCache(NULL, 0, ex, g_t.stream), ACLNN_SUCCESS);
  TU_CHECK(caches_are_golden(x), "empty: caches written");
  for (int i = 0; i < NS; i++) tens_free(&x[i]);
}

int main(void) {
  acl_test_begin(&g_t, 20261206, 0);
  test_tiling_ut();
  test_infershape_ut();
  test_kernel_ut();
  test_empty();
  return acl_test_end(&g_t, "test_aclnn_replay_scatter_pa_kv_cache");
}
