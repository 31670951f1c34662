/* SPDX-License-Identifier: Apache-2.0 */
/* CANN's own test tables for the fused causal conv1d entry points, replayed through the
 * aclnn layer. CANN (ops-transformer, attention/fused_causal_conv1d and
 * attention/inplace_fused_causal_conv1d) has, for these ops, only the tiling UT of
 * tests/ut/op_host (no infershape or op_api UT, no ST case files; aclnnInplace...V2 has
 * none); each of its cases is transcribed below as shapes, dtypes, attributes and
 * CANN's verdict (tiling succeeds or fails). A case runs both phases on index values
 * drawn for its shapes within CANN's documented value rules (sequence lengths up to
 * maxQueryLen, distinct cache lines, APC block indices from numComputedTokens and
 * blockSize, numAcceptedTokens in [1, min(L, C-1)]) and small-integer data (exact in
 * every sum), and is checked against a golden computed here from CANN's formula
 * (aclnnFusedCausalConv1d.md: cache read, concatenation, tail-aligned cache update,
 * APC block fill, K = 3 depthwise conv, Pangu V2 reset, residual), not by the library:
 * y (or x in place) and convStates byte for byte, x untouched for the out entry. A
 * case CANN's tiling refuses must be refused here with 561002 and nothing written.
 * Per table: passed / listed (a case whose verdict contradicts CANN's code or doc, kept
 * with its reason in docs/aclnn.md) / total. */
#include "aclnn_tspec.h"
#include "aclnnop/aclnn_fused_causal_conv1d.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d.h"

enum { X, W, CS, QSL, CI, ISM, BIAS, NACC, NCT, FIRST, LAST, ISI, Y, NT };
enum { FP, BF };
enum { REFUSED, PASSES };
enum { ACT, PAD, RUN, MQL, RES, BSZ, MODE };

/* One UT case: x's rank and dims, convStates [lines, C, dim], the lengths of the 1-D
 * tensors (0 = absent; weight is [3, dim] and bias absent in every case), cacheIndices'
 * rank and dims, the attributes in prototype order and CANN's verdict. */
typedef struct ut_case {
  const char *name;
  int bf, xr;
  int64_t x[3], cs[2], qsl;
  int cir;
  int64_t ci[2], ism, nacc, nct, first, last, isi;
  int64_t attr[7];
  int ok;
} ut_case;

/* clang-format off */
/* tests/ut/op_host/test_fused_causal_conv1d_tiling.cpp (BH template, then BSH). */
static const ut_case FUSED_TILING[] = {
    {"bh_3d_bf16_b4_s1_d512", BF, 3, {4, 1, 512}, {4, 2}, 0, 1, {4, 0}, 4, 4, 0, 0, 0, 0, {0, -1, 0, 1, 0, 128, 0}, PASSES},
    {"bh_3d_bf16_b1_s4_d1024", BF, 3, {1, 4, 1024}, {1, 5}, 0, 1, {1, 0}, 1, 1, 0, 0, 0, 0, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_fp16_b1_s4_d512", FP, 2, {4, 512, 0}, {2, 5}, 2, 1, {1, 0}, 1, 0, 0, 0, 0, 0, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_fp16_b32_s128_d512", FP, 2, {128, 512, 0}, {64, 5}, 33, 1, {32, 0}, 32, 0, 0, 0, 0, 0, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_hasNAT_fp16_b4_s16_d512", FP, 2, {16, 512, 0}, {8, 7}, 5, 1, {4, 0}, 4, 4, 0, 0, 0, 0, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_apc_fp16_b8_s32_d512", FP, 2, {32, 512, 0}, {100, 5}, 9, 2, {8, 11}, 8, 0, 8, 8, 8, 8, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_apc_hasNAT_fp16_b6_s48_d768", FP, 2, {48, 768, 0}, {80, 7}, 7, 2, {6, 11}, 6, 6, 6, 6, 6, 6, {0, -1, 0, 8, 0, 128, 0}, PASSES},
    {"bh_2d_conv1_fp16_b4_s16_d512", FP, 2, {16, 512, 0}, {8, 7}, 5, 1, {4, 0}, 4, 0, 4, 0, 0, 0, {0, -1, 0, 4, 0, 128, 1}, PASSES},
    {"bh_2d_residual_fp16_b4_s16_d512", FP, 2, {16, 512, 0}, {8, 5}, 5, 1, {4, 0}, 4, 0, 0, 0, 0, 0, {0, -1, 0, 4, 1, 128, 0}, PASSES},
    {"bsh_noNAT_noapc_fp16_b2_s256_d512", FP, 2, {256, 512, 0}, {4, 2}, 3, 1, {2, 0}, 2, 0, 0, 0, 0, 0, {0, -1, 0, 256, 0, 128, 0}, PASSES},
    {"bsh_noNAT_noapc_fp16_b1_s64_d256", FP, 2, {64, 256, 0}, {2, 2}, 2, 1, {1, 0}, 1, 0, 0, 0, 0, 0, {0, -1, 0, 64, 0, 128, 0}, PASSES},
    {"bsh_noNAT_apc_fp16_b12_s200_d1024", FP, 2, {200, 1024, 0}, {200, 2}, 13, 2, {12, 11}, 12, 0, 12, 12, 12, 12, {0, -1, 0, 200, 0, 128, 0}, PASSES},
    {"bsh_hasNAT_apc_conv1_fp16_b58_s243_d2592", FP, 2, {243, 2592, 0}, {700, 3}, 59, 2, {58, 11}, 58, 58, 58, 58, 58, 58, {0, -1, 0, 15, 0, 86, 1}, PASSES},
    {"bsh_noNAT_noapc_conv1_fp16_b58_s504_d3296", FP, 2, {504, 3296, 0}, {700, 7}, 59, 1, {58, 0}, 58, 0, 58, 0, 0, 0, {0, -1, 0, 27, 0, 234, 1}, PASSES},
    {"bsh_noNAT_noapc_residual_fp16_b4_s128_d1024", FP, 2, {128, 1024, 0}, {8, 2}, 5, 1, {4, 0}, 4, 0, 0, 0, 0, 0, {0, -1, 0, 128, 1, 128, 0}, PASSES},
    {"bsh_noNAT_noapc_bf16_b4_s128_d512", BF, 2, {128, 512, 0}, {8, 2}, 5, 1, {4, 0}, 4, 0, 0, 0, 0, 0, {0, -1, 0, 128, 0, 128, 0}, PASSES},
};

/* tests/ut/op_host/test_inplace_fused_causal_conv1d_tiling.cpp: the same cases (x is
 * the output) and two of its own ("inplace"). */
static const ut_case INPLACE_TILING[] = {
    {"bh_3d_bf16_b4_s1_d512", BF, 3, {4, 1, 512}, {4, 2}, 0, 1, {4, 0}, 4, 4, 0, 0, 0, 0, {0, -1, 0, 1, 0, 128, 0}, PASSES},
    {"bh_3d_bf16_b1_s4_d1024", BF, 3, {1, 4, 1024}, {1, 5}, 0, 1, {1, 0}, 1, 1, 0, 0, 0, 0, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_fp16_b1_s4_d512", FP, 2, {4, 512, 0}, {2, 5}, 2, 1, {1, 0}, 1, 0, 0, 0, 0, 0, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_fp16_b32_s128_d512", FP, 2, {128, 512, 0}, {64, 5}, 33, 1, {32, 0}, 32, 0, 0, 0, 0, 0, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_hasNAT_fp16_b4_s16_d512", FP, 2, {16, 512, 0}, {8, 7}, 5, 1, {4, 0}, 4, 4, 0, 0, 0, 0, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_apc_fp16_b8_s32_d512", FP, 2, {32, 512, 0}, {100, 5}, 9, 2, {8, 11}, 8, 0, 8, 8, 8, 8, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_apc_hasNAT_fp16_b6_s48_d768", FP, 2, {48, 768, 0}, {80, 7}, 7, 2, {6, 11}, 6, 6, 6, 6, 6, 6, {0, -1, 0, 8, 0, 128, 0}, PASSES},
    {"bh_2d_inplace_fp16_b4_s16_d512", FP, 2, {16, 512, 0}, {8, 5}, 5, 1, {4, 0}, 4, 0, 0, 0, 0, 0, {0, -1, 0, 4, 0, 128, 0}, PASSES},
    {"bh_2d_conv1_fp16_b4_s16_d512", FP, 2, {16, 512, 0}, {8, 7}, 5, 1, {4, 0}, 4, 0, 4, 0, 0, 0, {0, -1, 0, 4, 0, 128, 1}, PASSES},
    {"bh_2d_residual_fp16_b4_s16_d512", FP, 2, {16, 512, 0}, {8, 5}, 5, 1, {4, 0}, 4, 0, 0, 0, 0, 0, {0, -1, 0, 4, 1, 128, 0}, PASSES},
    {"bsh_noNAT_noapc_fp16_b2_s256_d512", FP, 2, {256, 512, 0}, {4, 2}, 3, 1, {2, 0}, 2, 0, 0, 0, 0, 0, {0, -1, 0, 256, 0, 128, 0}, PASSES},
    {"bsh_noNAT_noapc_fp16_b1_s64_d256", FP, 2, {64, 256, 0}, {2, 2}, 2, 1, {1, 0}, 1, 0, 0, 0, 0, 0, {0, -1, 0, 64, 0, 128, 0}, PASSES},
    {"bsh_noNAT_apc_fp16_b12_s200_d1024", FP, 2, {200, 1024, 0}, {200, 2}, 13, 2, {12, 11}, 12, 0, 12, 12, 12, 12, {0, -1, 0, 200, 0, 128, 0}, PASSES},
    {"bsh_hasNAT_apc_conv1_fp16_b58_s243_d2592", FP, 2, {243, 2592, 0}, {700, 3}, 59, 2, {58, 11}, 58, 58, 58, 58, 58, 58, {0, -1, 0, 15, 0, 86, 1}, PASSES},
    {"bsh_noNAT_noapc_conv1_fp16_b58_s504_d3296", FP, 2, {504, 3296, 0}, {700, 7}, 59, 1, {58, 0}, 58, 0, 58, 0, 0, 0, {0, -1, 0, 27, 0, 234, 1}, PASSES},
    {"bsh_noNAT_noapc_inplace_fp16_b12_s300_d512", FP, 2, {300, 512, 0}, {24, 2}, 13, 1, {12, 0}, 12, 0, 0, 0, 0, 0, {0, -1, 0, 300, 0, 128, 0}, PASSES},
    {"bsh_noNAT_noapc_residual_fp16_b4_s128_d1024", FP, 2, {128, 1024, 0}, {8, 2}, 5, 1, {4, 0}, 4, 0, 0, 0, 0, 0, {0, -1, 0, 128, 1, 128, 0}, PASSES},
    {"bsh_noNAT_noapc_bf16_b4_s128_d512", BF, 2, {128, 512, 0}, {8, 2}, 5, 1, {4, 0}, 4, 0, 0, 0, 0, 0, {0, -1, 0, 128, 0, 128, 0}, PASSES},
};

/* clang-format on */

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

/* Cases whose verdict contradicts CANN's code or doc: none (docs/aclnn.md). */
static const char *const LISTED[] = {NULL};

static bool listed(const char *name) {
  for (int i = 0; LISTED[i]; i++)
    if (!strcmp(LISTED[i], name)) return true;
  return false;
}

/* ------------------------------------------------------------ half helpers */
static float h2f(bool bf, uint16_t h) {
  uint32_t u;
  if (bf) {
    u = (uint32_t)h << 16;
  } else {
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) { /* the data here are small integers: no subnormals but zero */
      u = s;
    } else {
      u = s | ((e - 15 + 127) << 23) | (m << 13);
    }
  }
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Exact for the small integers of these tests. */
static uint16_t f2h(bool bf, float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (bf) return (uint16_t)(u >> 16);
  if (f == 0) return (uint16_t)((u >> 16) & 0x8000);
  uint32_t s = (u >> 31) << 15, e = ((u >> 23) & 0xff) - 127 + 15, m = (u >> 13) & 0x3ff;
  return (uint16_t)(s | (e << 10) | m);
}

static float rd(bool bf, const unsigned char *blk, int64_t i) {
  uint16_t h;
  memcpy(&h, blk + i * 2, 2);
  return h2f(bf, h);
}

static void wr(bool bf, unsigned char *blk, int64_t i, float f) {
  uint16_t h = f2h(bf, f);
  memcpy(blk + i * 2, &h, 2);
}

/* ------------------------------------------------------------ one case */
typedef struct run {
  tspec t[NT];
  int64_t iv[NT][MAXV];
  int64_t batch, dim, C, lines, len[256], start[256];
} run;

static void upload(tspec *t) {
  aclrtMemcpy(t->dev, t->bytes, t->host, t->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
}

/* Index values for the case's shapes (see the file comment). */
static void draw_indices(const ut_case *u, run *r) {
  int64_t B = u->attr[BSZ], mql = u->attr[MQL], b;
  bool apc = u->cir == 2;
  if (u->xr == 3) {
    for (b = 0; b < r->batch; b++) r->len[b] = u->x[1], r->start[b] = b * u->x[1];
  } else { /* a random composition of cuSeqLen, each part in [1, mql] */
    int64_t T = u->x[0], cap = mql < T ? mql : T;
    for (b = 0; b < r->batch; b++) r->len[b] = T / r->batch + (b < T % r->batch);
    for (int k = 0; k < 4 * r->batch; k++) {
      int64_t i = tu_rand_range(0, r->batch - 1), j = tu_rand_range(0, r->batch - 1);
      int64_t m = tu_rand_range(0, 3);
      if (i != j && r->len[i] - m >= 1 && r->len[j] + m <= cap)
        r->len[i] -= m, r->len[j] += m;
    }
    r->iv[QSL][0] = 0;
    for (b = 0; b < r->batch; b++) {
      r->start[b] = r->iv[QSL][b];
      r->iv[QSL][b + 1] = r->start[b] + r->len[b];
    }
  }
  /* distinct lines: a prefix of a random permutation */
  int64_t *perm = malloc((size_t)r->lines * sizeof *perm);
  for (int64_t i = 0; i < r->lines; i++) perm[i] = i;
  for (int64_t i = r->lines - 1; i > 0; i--) {
    int64_t j = tu_rand_range(0, i), v = perm[i];
    perm[i] = perm[j], perm[j] = v;
  }
  int64_t per = apc ? u->ci[1] : 1;
  for (int64_t i = 0; i < r->batch * per; i++) r->iv[CI][i] = perm[i];
  free(perm);
  for (b = 0; b < r->batch; b++) {
    int64_t L = r->len[b];
    r->iv[ISM][b] = tu_rand_range(0, 2);
    if (u->nacc) r->iv[NACC][b] = tu_rand_range(1, L < r->C - 1 ? L : r->C - 1);
    int64_t nct = 0;
    /* sequences 0, 1, 2: a first chunk, a reset of 1 row (convMode 1), a block
     * boundary crossed (APC); the others at random */
    switch (b < 3 ? b : tu_rand_range(0, 3)) {
      case 0:
        nct = 0;
        break;
      case 1:
        nct = b == 1 ? 1 : tu_rand_range(1, 2);
        break;
      case 2: /* just before a block boundary, or on one */
        nct = tu_rand_range(1, 8) * (B > 1 ? B : 2) -
              tu_rand_range(L > 1, L > 1 ? L - 1 : 0);
        break;
      default:
        nct = tu_rand_range(0, 8 * (B > 1 ? B : 2));
        break;
    }
    if (nct < 0) nct = 0;
    if (apc) {
      while ((nct + L - 1) / B >= u->ci[1]) nct -= B;
      if (nct < 0) nct = 0;
      int64_t first = nct / B, last = (nct + L - 1) / B;
      r->iv[FIRST][b] = first;
      r->iv[LAST][b] = last;
      /* the block holding the last computed token */
      r->iv[ISI][b] = nct > 0 && nct % B == 0 ? first - 1 : first;
    }
    r->iv[NCT][b] = nct;
  }
}

/* CANN's formula (aclnnFusedCausalConv1d.md, steps 1 to 8), on the host blocks: ey is
 * y's (or x's, in place) expected block, ecs convStates'. */
static void golden(const ut_case *u, const run *r, bool bf, unsigned char *ey,
                   const tspec *yt, unsigned char *ecs) {
  const int64_t K = 3, C = r->C, dim = r->dim, B = u->attr[BSZ];
  const tspec *x = &r->t[X], *w = &r->t[W], *cs = &r->t[CS];
  bool apc = u->cir == 2 && u->first && u->last && u->isi;
  int64_t maxnb = apc ? u->ci[1] : 1;
  float *pad = malloc((size_t)(C + r->len[0] + 300) * sizeof(float));
  for (int64_t b = 0; b < r->batch; b++) {
    int64_t L = r->len[b], t0 = r->start[b];
    int64_t rl = apc                ? r->iv[CI][b * maxnb + r->iv[ISI][b]]
                 : r->t[CI].present ? r->iv[CI][b]
                                    : b;
    int64_t wl = apc ? r->iv[CI][b * maxnb + r->iv[LAST][b]] : rl;
    if (rl == u->attr[PAD]) continue;
    bool zero = u->nct && r->iv[NCT][b] == 0;
    int64_t offset = zero ? 0 : u->nacc ? r->iv[NACC][b] - 1 : C - (K - 1);
    int64_t H = offset + K - 1, Len = H + L, M = Len < C ? Len : C;
    float *pp = realloc(pad, (size_t)Len * sizeof(float));
    pad = pp;
    for (int64_t d = 0; d < dim; d++) {
      for (int64_t i = 0; i < Len; i++) {
        int64_t xi =
            u->xr == 3 ? (b * r->len[0] + i - H) * dim + d : (t0 + i - H) * dim + d;
        pad[i] = i >= H ? rd(bf, x->host, xi)
                 : zero ? 0.0f
                        : rd(bf, cs->host, (rl * C + i) * dim + d);
      }
      for (int64_t i = 0; i < M; i++)
        wr(bf, ecs, (wl * C + C - M + i) * dim + d, pad[Len - M + i]);
      const float *xp = pad + offset; /* x' */
      if (apc) {
        int64_t nct = r->iv[NCT][b], done = B - nct % B;
        int64_t seo = ((L - done) % B + B) % B;
        int64_t last_full = seo == 0 ? L - seo - B : L - seo;
        int64_t n = r->iv[LAST][b] - r->iv[FIRST][b];
        for (int64_t c = 0; c < n; c++) {
          int64_t bdy = last_full - (n - c - 1) * B;
          int64_t line = r->iv[CI][b * maxnb + r->iv[FIRST][b] + c];
          for (int64_t j = 0; j < K - 1; j++)
            wr(bf, ecs, (line * C + C - (K - 1) + j) * dim + d, xp[bdy + j]);
        }
      }
      int64_t reset = 0;
      if (u->attr[MODE] == 1 && u->nct) {
        reset = K - 1 - r->iv[NCT][b];
        if (reset < 0) reset = 0;
        if (reset > L) reset = L;
      }
      for (int64_t i = 0; i < L; i++) {
        /* the sum of the K products, the first one its start (a -0 product stays) */
        float acc = rd(bf, w->host, d) * xp[i];
        for (int64_t k = 1; k < K; k++) acc += rd(bf, w->host, k * dim + d) * xp[i + k];
        if (i < reset) acc = 0;
        if (u->attr[RES]) acc += xp[i + K - 1];
        int64_t yi = yt->rank == 3 ? b * yt->strides[0] + i * yt->strides[1] + d
                                   : (t0 + i) * yt->strides[0] + d;
        wr(bf, ey, yi, acc);
      }
    }
  }
  free(pad);
}

static aclnnStatus call(const ut_case *u, run *r, bool inplace, aclrtStream s) {
  aclTensor *t[NT];
  for (int i = 0; i < NT; i++) t[i] = r->t[i].present ? r->t[i].t : NULL;
  const int64_t *a = u->attr;
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = inplace
                       ? aclnnInplaceFusedCausalConv1dGetWorkspaceSize(
                             t[X], t[W], t[CS], t[QSL], t[CI], t[ISM], t[BIAS], t[NACC],
                             t[NCT], t[FIRST], t[LAST], t[ISI], a[ACT], a[PAD], a[RUN],
                             a[MQL], a[RES], a[BSZ], a[MODE], &ws, &ex)
                       : aclnnFusedCausalConv1dGetWorkspaceSize(
                             t[X], t[W], t[CS], t[QSL], t[CI], t[ISM], t[BIAS], t[NACC],
                             t[NCT], t[FIRST], t[LAST], t[ISI], a[ACT], a[PAD], a[RUN],
                             a[MQL], a[RES], a[BSZ], a[MODE], t[Y], &ws, &ex);
  if (st) return st;
  void *wsp = NULL;
  if (ws) aclrtMalloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  st = inplace ? aclnnInplaceFusedCausalConv1d(wsp, ws, ex, s)
               : aclnnFusedCausalConv1d(wsp, ws, ex, s);
  if (wsp) aclrtFree(wsp);
  return st;
}

/* The first element of a device block that differs from want (for the failure text). */
static void first_diff(const char *what, const tspec *t, const unsigned char *want,
                       bool bf) {
  unsigned char *got = malloc(t->bytes);
  aclrtMemcpy(got, t->bytes, t->dev, t->bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  for (size_t i = 0; i < t->bytes / 2; i++)
    if (memcmp(got + 2 * i, want + 2 * i, 2)) {
      fprintf(stderr, "  %s[%zu]: %g, golden %g\n", what, i,
              (double)rd(bf, got, (int64_t)i), (double)rd(bf, want, (int64_t)i));
      break;
    }
  free(got);
}

/* One case through one entry: true when it behaved as CANN's table says. */
static bool replay(const ut_case *u, bool inplace, aclrtStream s) {
  run *r = calloc(1, sizeof *r);
  aclDataType dt = u->bf ? ACL_BF16 : ACL_FLOAT16;
  bool bf = u->bf;
  r->dim = u->x[u->xr - 1];
  r->batch = u->xr == 3 ? u->x[0] : u->qsl - 1;
  r->lines = u->cs[0], r->C = u->cs[1];
  for (int i = QSL; i <= ISI; i++) r->t[i].ivals = r->iv[i];
  spec(&r->t[X], dt, u->xr, u->x[0], u->x[1], u->x[2], 0);
  spec(&r->t[W], dt, 2, 3, r->dim, 0, 0);
  spec(&r->t[CS], dt, 3, r->lines, r->C, r->dim, 0);
  if (u->qsl) spec(&r->t[QSL], ACL_INT32, 1, u->qsl, 0, 0, 0);
  if (u->cir) spec(&r->t[CI], ACL_INT32, u->cir, u->ci[0], u->ci[1], 0, 0);
  const int per[] = {ISM, NACC, NCT, FIRST, LAST, ISI};
  const int64_t lens[] = {u->ism, u->nacc, u->nct, u->first, u->last, u->isi};
  for (int k = 0; k < 6; k++)
    if (lens[k]) spec(&r->t[per[k]], ACL_INT32, 1, lens[k], 0, 0, 0);
  if (!inplace) spec(&r->t[Y], dt, u->xr, u->x[0], u->x[1], u->x[2], 0);
  draw_indices(u, r);
  for (int i = 0; i < NT; i++) build(&r->t[i]);
  /* small integers in x, weight and convStates; y a pattern of its own */
  const int data[] = {X, W, CS, Y};
  for (int k = 0; k < 4; k++) {
    tspec *t = &r->t[data[k]];
    if (!t->present) continue;
    for (size_t i = 0; i < t->bytes / 2; i++)
      wr(bf, t->host, (int64_t)i, (float)(data[k] == Y ? 5 : tu_rand_range(-8, 8)));
    upload(t);
  }
  tspec *yt = inplace ? &r->t[X] : &r->t[Y];
  unsigned char *ey = malloc(yt->bytes), *ecs = malloc(r->t[CS].bytes);
  memcpy(ey, yt->host, yt->bytes);
  memcpy(ecs, r->t[CS].host, r->t[CS].bytes);
  golden(u, r, bf, ey, yt, ecs);
  aclnnStatus st = call(u, r, inplace, s);
  bool pass;
  if (u->ok) {
    pass = st == ACLNN_SUCCESS && dev_is(yt, ey) && dev_is(&r->t[CS], ecs) &&
           (inplace || dev_is(&r->t[X], r->t[X].host));
  } else {
    pass = st == ACLNN_ERR_INNER_TILING_ERROR && dev_is(&r->t[X], r->t[X].host) &&
           dev_is(&r->t[CS], r->t[CS].host) && (inplace || dev_is(yt, yt->host));
  }
  if (!pass && st == ACLNN_SUCCESS) {
    first_diff(inplace ? "x" : "y", yt, ey, bf);
    first_diff("convStates", &r->t[CS], ecs, bf);
  }
  TU_CHECK(pass, "%s %s: status %d (CANN: %s)%s%s", inplace ? "inplace" : "fused",
           u->name, (int)st, u->ok ? "success" : "tiling error", st ? ": " : "",
           st ? aclGetRecentErrMsg() : "");
  free(ey);
  free(ecs);
  for (int i = 0; i < NT; i++) unbuild(&r->t[i]);
  free(r);
  return pass;
}

static void table(const char *name, const ut_case *cases, int n, bool inplace,
                  aclrtStream s) {
  int passed = 0, nlisted = 0;
  for (int i = 0; i < n; i++) {
    if (listed(cases[i].name)) nlisted++;
    if (replay(&cases[i], inplace, s)) passed++;
  }
  printf("%s: %d passed / %d listed / %d total\n", name, passed, nlisted, n);
}

int main(void) {
  acl_test t;
  acl_test_begin(&t, 20260701, 2);
  table("aclnnFusedCausalConv1d, test_fused_causal_conv1d_tiling.cpp", FUSED_TILING,
        COUNT(FUSED_TILING), false, t.stream);
  table("aclnnInplaceFusedCausalConv1d, test_inplace_fused_causal_conv1d_tiling.cpp",
        INPLACE_TILING, COUNT(INPLACE_TILING), true, t.stream);
  return acl_test_end(&t, "test_aclnn_replay_fused_causal_conv1d");
}
