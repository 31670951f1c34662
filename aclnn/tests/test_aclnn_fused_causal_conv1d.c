/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnInplaceFusedCausalConv1d (+ V2) from C: results through aclnn equal the native
 * API's (llmk_fused_causal_conv1d) bit for bit on random inputs; the executor lifecycle
 * (single use, repeatable, re-pointed addresses); the error table with CANN's numeric
 * codes, checking that x and convStates are byte-identical after every rejection.
 * aclnnFusedCausalConv1d (separate y, CANN's 22-argument form): CANN's sample, golden
 * values for both tiling templates, y equal to the in-place entry's x, its error table
 * (nothing written, y included). */
#include "aclnn_tspec.h"
#include "aclnnop/aclnn_fused_causal_conv1d.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d_v2.h"

/* ======================================================== causal conv1d */
enum { X, W, CS, QSL, CI, ISM, BIAS, NACC, NCT, FIRST, LAST, ISI, NC };

typedef struct conv_case {
  tspec t[NC];
  int64_t act, pad, run, mql, res, bs, mode, max_draft;
  int version;
  int64_t iv[NC][MAXV];
} conv_case;

static conv_case *conv_new(void) {
  conv_case *c = calloc(1, sizeof *c);
  c->pad = -1, c->max_draft = 7, c->version = 1;
  for (int i = QSL; i < NC; i++)
    if (i != BIAS) c->t[i].ivals = c->iv[i];
  return c;
}

static void conv_build(conv_case *c) {
  for (int i = 0; i < NC; i++) build(&c->t[i]);
}

static void conv_free(conv_case *c) {
  for (int i = 0; i < NC; i++) unbuild(&c->t[i]);
  free(c);
}

/* CANN's sample (C rows of state, maxQueryLen mql), small dim; not built. */
static conv_case *conv_sample(int64_t C, int64_t mql, aclDataType dt) {
  conv_case *c = conv_new();
  int64_t dim = 64, lens[4] = {5, 3, 7, 4}, lines[4] = {0, 3, 1, 5};
  spec(&c->t[X], dt, 2, 19, dim, 0, 0);
  spec(&c->t[W], dt, 2, 3, dim, 0, 0);
  spec(&c->t[CS], dt, 3, 8, C, dim, 0);
  spec(&c->t[QSL], ACL_INT32, 1, 5, 0, 0, 0);
  spec(&c->t[CI], ACL_INT32, 1, 4, 0, 0, 0);
  spec(&c->t[ISM], ACL_INT32, 1, 4, 0, 0, 0);
  spec(&c->t[BIAS], dt, 1, dim, 0, 0, 0);
  spec(&c->t[NACC], ACL_INT32, 1, 4, 0, 0, 0);
  c->iv[QSL][0] = 0;
  for (int b = 0; b < 4; b++) {
    c->iv[QSL][b + 1] = c->iv[QSL][b] + lens[b];
    c->iv[CI][b] = lines[b];
    c->iv[ISM][b] = 1;
    c->iv[NACC][b] = 0;
  }
  c->mql = mql;
  return c;
}

static aclnnStatus conv_phase1(conv_case *c, uint64_t *ws, aclOpExecutor **ex) {
  aclTensor *t[NC];
  for (int i = 0; i < NC; i++) t[i] = c->t[i].present ? c->t[i].t : NULL;
  if (c->version == 2)
    return aclnnInplaceFusedCausalConv1dV2GetWorkspaceSize(
        t[X], t[W], t[CS], t[QSL], t[CI], t[ISM], t[BIAS], t[NACC], t[NCT], t[FIRST],
        t[LAST], t[ISI], c->act, c->pad, c->run, c->mql, c->res, c->bs, c->mode,
        c->max_draft, ws, ex);
  return aclnnInplaceFusedCausalConv1dGetWorkspaceSize(
      t[X], t[W], t[CS], t[QSL], t[CI], t[ISM], t[BIAS], t[NACC], t[NCT], t[FIRST],
      t[LAST], t[ISI], c->act, c->pad, c->run, c->mql, c->res, c->bs, c->mode, ws, ex);
}

static aclnnStatus conv_phase2(conv_case *c, void *w, uint64_t ws, aclOpExecutor *ex,
                               aclrtStream s) {
  return c->version == 2 ? aclnnInplaceFusedCausalConv1dV2(w, ws, ex, s)
                         : aclnnInplaceFusedCausalConv1d(w, ws, ex, s);
}

/* Both phases; returns the first failing status (0: success). */
static aclnnStatus conv_call(conv_case *c, aclrtStream s) {
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = conv_phase1(c, &ws, &ex);
  if (st) return st;
  void *w = NULL;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  st = conv_phase2(c, w, ws, ex, s);
  if (w) aclrtFree(w);
  return st;
}

/* The native API on the ref copies: CANN's ignored inputs dropped, a 3-D x without
 * query_start_loc and max_query_len -1. */
static llmk_status conv_native(conv_case *c, llmk_context *ctx) {
  llmk_tensor d[NC];
  const llmk_tensor *p[NC];
  for (int i = 0; i < NC; i++) p[i] = ndesc(&c->t[i], &d[i]);
  bool x3 = c->t[X].rank == 3;
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st = llmk_fused_causal_conv1d_get_workspace_size(
      p[X], p[W], p[CS], x3 ? NULL : p[QSL], p[CI], p[NACC], p[NCT], p[FIRST], p[LAST],
      p[ISI], NULL, c->pad, x3 ? -1 : c->mql, c->res, c->bs, c->mode,
      LLMK_ACTIVATION_NONE, &ws, &plan);
  if (st == LLMK_SUCCESS) {
    void *w = ws ? malloc(ws) : NULL;
    st = llmk_fused_causal_conv1d(w, ws, plan, ctx);
    free(w);
  }
  llmk_plan_destroy(plan);
  return st;
}

static int conv_unchanged(conv_case *c) {
  return dev_is(&c->t[X], c->t[X].host) && dev_is(&c->t[CS], c->t[CS].host);
}
static int conv_as_native(conv_case *c) {
  return dev_is(&c->t[X], c->t[X].ref) && dev_is(&c->t[CS], c->t[CS].ref);
}

static void test_conv_samples(aclrtStream s) {
  /* newest: C = 8, maxQueryLen 7; older: C = 2, maxQueryLen 19. x all 1, w[0] = 1. */
  for (int v = 0; v < 2; v++) {
    conv_case *c = conv_sample(v ? 2 : 8, v ? 19 : 7, ACL_FLOAT16);
    conv_build(c);
    tspec *x = &c->t[X], *w = &c->t[W], *cs = &c->t[CS];
    for (size_t i = 0; i < x->bytes / 2; i++) ((uint16_t *)(void *)x->host)[i] = 0x3C00;
    for (size_t i = 0; i < w->bytes / 2; i++)
      ((uint16_t *)(void *)w->host)[i] = i < 64 ? 0x3C00 : 0;
    memset(cs->host, 0, cs->bytes);
    aclrtMemcpy(x->dev, x->bytes, x->host, x->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(w->dev, w->bytes, w->host, w->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(cs->dev, cs->bytes, cs->host, cs->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    EQ(conv_call(c, s), ACLNN_SUCCESS);
    /* expected, from the spec: each sequence's rows 0,0,1,1,...; line rows */
    int64_t lens[4] = {5, 3, 7, 4}, lines[4] = {0, 3, 1, 5}, C = v ? 2 : 8, row = 0;
    uint16_t *xe = (uint16_t *)(void *)x->host, *ce = (uint16_t *)(void *)cs->host;
    for (int b = 0; b < 4; b++) {
      for (int64_t i = 0; i < lens[b]; i++, row++)
        for (int d = 0; d < 64; d++) xe[row * 64 + d] = i < 2 ? 0 : 0x3C00;
      int64_t len = 2 + lens[b], M = len < C ? len : C;
      for (int64_t i = 0; i < M; i++) {
        int64_t src = len - M + i; /* padded row: < 2 zero history, else x = 1 */
        for (int d = 0; d < 64; d++)
          ce[(lines[b] * C + C - M + i) * 64 + d] = src < 2 ? 0 : 0x3C00;
      }
    }
    TU_CHECK(conv_unchanged(c), "conv sample C=%lld", (long long)C);
    if (!v)
      TU_CHECK(ce[0] == 0 && ce[2 * 64] == 0 && ce[3 * 64] == 0x3C00,
               "row 0 of line 0 kept");
    conv_free(c);
  }
}

/* A random valid case: kind 0 prefill (2-D, C = 2, nct sometimes), 1 decode with nacc
 * (2-D, C = 2 + m), 2 fixed batch (3-D), 3 APC. */
static conv_case *conv_random(int kind) {
  conv_case *c = conv_new();
  aclDataType dt = tu_rand_range(0, 1) ? ACL_BF16 : ACL_FLOAT16;
  int64_t dim = tu_rand_range(0, 1) ? 64 : 128, pad = tu_rand_range(0, 1) ? 16 : 0;
  int64_t batch = tu_rand_range(1, 5), m = tu_rand_range(0, 3), S = m + 1, C, T = 0;
  int64_t lines = batch * 4 + 3;
  int64_t lens[8];
  for (int b = 0; b < batch; b++)
    lens[b] = kind == 0   ? tu_rand_range(1, 20)
              : kind == 1 ? tu_rand_range(1, m + 1)
              : kind == 2 ? S
                          : tu_rand_range(1, 8);
  C = kind == 0 || kind == 3 ? 2 : kind == 1 ? 2 + m : S + 1 + tu_rand_range(0, 2);
  c->mql = 1;
  for (int b = 0; b < batch; b++) {
    T += lens[b];
    if (lens[b] > c->mql) c->mql = lens[b];
  }
  if (kind == 2) {
    spec(&c->t[X], dt, 3, batch, S, dim, pad);
    c->mql = tu_rand_range(0, 1) ? -1 : S;
  } else {
    spec(&c->t[X], dt, 2, T, dim, 0, pad);
    spec(&c->t[QSL], ACL_INT32, 1, batch + 1, 0, 0, 0);
    c->iv[QSL][0] = 0;
    for (int b = 0; b < batch; b++) c->iv[QSL][b + 1] = c->iv[QSL][b] + lens[b];
  }
  spec(&c->t[W], dt, 2, 3, dim, 0, 0);
  spec(&c->t[CS], dt, 3, lines, C, dim, tu_rand_range(0, 1) ? 32 : 0);
  /* distinct lines, one sometimes padding */
  int64_t perm[64];
  for (int i = 0; i < lines; i++) perm[i] = i;
  for (int i = lines - 1; i > 0; i--) {
    int64_t j = tu_rand_range(0, i), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  c->res = tu_rand_range(0, 1);
  if (kind == 3) {
    int64_t B = 4, mb = 4;
    c->bs = B;
    spec(&c->t[CI], ACL_INT32, 2, batch, mb, 0, 0);
    spec(&c->t[NCT], ACL_INT32, 1, batch, 0, 0, 0);
    spec(&c->t[FIRST], ACL_INT32, 1, batch, 0, 0, 0);
    spec(&c->t[LAST], ACL_INT32, 1, batch, 0, 0, 0);
    spec(&c->t[ISI], ACL_INT32, 1, batch, 0, 0, 0);
    for (int b = 0; b < batch; b++) {
      for (int j = 0; j < mb; j++) c->iv[CI][b * mb + j] = perm[b * mb + j];
      int64_t nct = tu_rand_range(0, 8);
      c->iv[NCT][b] = nct;
      c->iv[FIRST][b] = nct / B;
      c->iv[LAST][b] = (nct + lens[b] - 1) / B;
      c->iv[ISI][b] = nct > 0 ? (nct - 1) / B : nct / B;
    }
    c->mode = tu_rand_range(0, 1);
  } else {
    if (tu_rand_range(0, 3)) {
      spec(&c->t[CI], ACL_INT32, 1, batch, 0, 0, 0);
      for (int b = 0; b < batch; b++) c->iv[CI][b] = perm[b];
      if (tu_rand_range(0, 3) == 0) c->iv[CI][tu_rand_range(0, batch - 1)] = -1; /* pad */
    }
    if (kind == 1 || (kind == 2 && tu_rand_range(0, 1))) {
      spec(&c->t[NACC], ACL_INT32, 1, batch, 0, 0, 0);
      for (int b = 0; b < batch; b++) c->iv[NACC][b] = tu_rand_range(0, lens[b]);
    }
    if (kind == 0 && tu_rand_range(0, 1)) {
      spec(&c->t[NCT], ACL_INT32, 1, batch, 0, 0, 0);
      for (int b = 0; b < batch; b++)
        c->iv[NCT][b] = tu_rand_range(0, 1) * tu_rand_range(1, 9);
      c->mode = tu_rand_range(0, 1);
    }
  }
  if (tu_rand_range(0, 1)) { /* ignored inputs */
    spec(&c->t[ISM], ACL_INT32, 1, batch, 0, 0, 0);
    spec(&c->t[BIAS], dt, 1, dim, 0, 0, 0);
    c->act = tu_rand_range(0, 2);
    c->run = tu_rand_range(0, 1);
  }
  if (kind == 2 && m > 0 && tu_rand_range(0, 1)) c->version = 2;
  conv_build(c);
  return c;
}

static void test_conv_random(aclrtStream s, llmk_context *ctx) {
  int ok_runs = 0;
  for (int it = 0; it < 160; it++) {
    int kind = it % 4;
    conv_case *c = conv_random(kind);
    llmk_status nst = conv_native(c, ctx);
    aclnnStatus st = conv_call(c, s);
    if (nst == LLMK_SUCCESS) {
      EQ(st, ACLNN_SUCCESS);
      TU_CHECK(conv_as_native(c), "random conv case %d (kind %d)", it, kind);
      ok_runs++;
    } else { /* a phase-2 value error of the native op (APC): same through aclnn */
      TU_CHECK(nst == LLMK_ERROR_INVALID_VALUE, "native status %d (kind %d): %s",
               (int)nst, kind, llmk_last_error());
      EQ(st, ACLNN_ERR_PARAM_INVALID);
      TU_CHECK(conv_unchanged(c), "a failed random conv case wrote");
    }
    conv_free(c);
  }
  TU_CHECK(ok_runs >= 140, "only %d random conv cases ran", ok_runs);
}

/* Lifecycle: single use, destroyed, repeatable (each run is the native op again),
 * re-pointed x and convStates, re-pointing errors, a freed block. */
static void test_conv_lifecycle(aclrtStream s, llmk_context *ctx) {
  for (int version = 1; version <= 2; version++) {
    conv_case *c = conv_random(1);
    c->version = version;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EQ(conv_phase1(c, &ws, &ex), ACLNN_SUCCESS);
    TU_CHECK(ws > 0, "the native op's workspace");
    void *w = NULL;
    aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    EQ(conv_phase2(c, NULL, ws, ex, s),
       ACLNN_ERR_PARAM_NULLPTR); /* no workspace: consumed */
    EQ(conv_phase1(c, &ws, &ex), ACLNN_SUCCESS);
    EQ(conv_phase2(c, w, ws - 1, ex, s),
       ACLNN_ERR_PARAM_INVALID); /* too small: consumed */
    TU_CHECK(conv_unchanged(c), "a run without its workspace wrote");
    EQ(conv_phase1(c, &ws, &ex), ACLNN_SUCCESS);
    EQ(conv_native(c, ctx), LLMK_SUCCESS);
    EQ(conv_phase2(c, w, ws, ex, s), ACLNN_SUCCESS);
    TU_CHECK(conv_as_native(c), "single use");
    EQ(conv_phase2(c, w, ws, ex, s), ACLNN_ERR_INNER_NULLPTR);
    EQ(aclDestroyAclOpExecutor(ex), ACLNN_ERR_INNER_NULLPTR);
    TU_CHECK(conv_as_native(c), "a consumed executor wrote");
    /* destroyed before its run */
    EQ(conv_phase1(c, &ws, &ex), ACLNN_SUCCESS);
    EQ(aclSetInputTensorAddr(ex, 0, c->t[X].t, c->t[X].dev), ACLNN_ERR_PARAM_INVALID);
    EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
    EQ(conv_phase2(c, w, ws, ex, s), ACLNN_ERR_INNER_NULLPTR);
    TU_CHECK(conv_as_native(c), "a destroyed executor wrote");
    /* the other version's run refuses (and consumes) this version's executor */
    EQ(conv_phase1(c, &ws, &ex), ACLNN_SUCCESS);
    EQ(version == 1 ? aclnnInplaceFusedCausalConv1dV2(w, ws, ex, s)
                    : aclnnInplaceFusedCausalConv1d(w, ws, ex, s),
       ACLNN_ERR_PARAM_INVALID);
    EQ(aclDestroyAclOpExecutor(ex), ACLNN_ERR_INNER_NULLPTR);
    TU_CHECK(conv_as_native(c), "a refused executor wrote");
    /* repeatable */
    EQ(conv_phase1(c, &ws, &ex), ACLNN_SUCCESS);
    EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
    for (int r = 0; r < 3; r++) {
      EQ(conv_native(c, ctx), LLMK_SUCCESS);
      EQ(conv_phase2(c, w, ws, ex, s), ACLNN_SUCCESS);
      TU_CHECK(conv_as_native(c), "repeatable run %d", r);
    }
    /* re-point x (0) and convStates (2) to copies of other data */
    tspec x2 = c->t[X], cs2 = c->t[CS];
    build(&x2);
    build(&cs2);
    aclDestroyTensor(x2.t);
    aclDestroyTensor(cs2.t);
    x2.t = cs2.t = NULL;
    EQ(aclSetInputTensorAddr(ex, 0, c->t[X].t, x2.dev), ACLNN_SUCCESS);
    EQ(aclSetInputTensorAddr(ex, 2, c->t[CS].t, cs2.dev), ACLNN_SUCCESS);
    void *raw = NULL;
    aclGetRawTensorAddr(c->t[X].t, &raw);
    TU_CHECK(raw == x2.dev, "the aclTensor follows the new address");
    EQ(aclSetInputTensorAddr(ex, 12, c->t[X].t, x2.dev), ACLNN_ERR_PARAM_INVALID);
    EQ(aclSetInputTensorAddr(ex, NCT, c->t[X].t, x2.dev),
       ACLNN_ERR_PARAM_INVALID); /* absent */
    EQ(aclSetOutputTensorAddr(ex, 0, c->t[X].t, x2.dev),
       ACLNN_ERR_PARAM_INVALID); /* none */
    EQ(aclSetInputTensorAddr(NULL, 0, c->t[X].t, x2.dev), ACLNN_ERR_INNER_NULLPTR);
    /* native on the new data: swap the ref copies */
    unsigned char *keep_x = c->t[X].ref, *keep_cs = c->t[CS].ref;
    c->t[X].ref = x2.ref, c->t[CS].ref = cs2.ref;
    EQ(conv_native(c, ctx), LLMK_SUCCESS);
    c->t[X].ref = keep_x, c->t[CS].ref = keep_cs;
    EQ(conv_phase2(c, w, ws, ex, s), ACLNN_SUCCESS);
    TU_CHECK(dev_is(&x2, x2.ref) && dev_is(&cs2, cs2.ref), "re-pointed run");
    TU_CHECK(conv_as_native(c), "a re-pointed run wrote the old blocks");
    /* a freed block */
    aclrtFree(cs2.dev);
    cs2.dev = NULL;
    EQ(conv_phase2(c, w, ws, ex, s), ACLNN_ERR_PARAM_INVALID);
    TU_CHECK(dev_is(&x2, x2.ref), "a run with a freed block wrote");
    EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
    unbuild(&x2);
    unbuild(&cs2);
    aclrtFree(w);
    conv_free(c);
  }
}

/* ====================================================== the APC switch */

/* Element accessors over a tspec's host block (the values before the call). */
static float hf(const tspec *t, const unsigned char *blk, int64_t off) {
  uint16_t h;
  memcpy(&h, blk + off * 2, 2);
  return t->dt == ACL_BF16 ? llmk_bf16_to_f32(h) : llmk_f16_to_f32(h);
}
static void hset(const tspec *t, unsigned char *blk, int64_t off, float f) {
  uint16_t h = t->dt == ACL_BF16 ? llmk_f32_to_bf16(f) : llmk_f32_to_f16(f);
  memcpy(blk + off * 2, &h, 2);
}

/* x, weight and convStates hold small integers (exact in f16/bf16 and in every sum),
 * so the golden does not depend on the order of the additions. */
static void small_ints(conv_case *c) {
  const int which[3] = {X, W, CS};
  for (int k = 0; k < 3; k++) {
    tspec *t = &c->t[which[k]];
    for (size_t i = 0; i < t->bytes / 2; i++)
      hset(t, t->host, (int64_t)i, (float)((int64_t)(i * (k + 2) % 7) - 3));
    memcpy(t->ref, t->host, t->bytes);
    aclrtMemcpy(t->dev, t->bytes, t->host, t->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  }
}

/* The expected x and convStates blocks (ex, ecs: copies of the host blocks), from the
 * formula of shared/spec/causal_conv1d.md written out here (K = 3): lines, history,
 * padded input, tail-aligned state update, APC block fill, conv, conv_mode 1 reset,
 * residual. `apc`: the three block-index tensors are used; otherwise they are not
 * looked at (whatever they hold). */
static void conv_golden(const conv_case *c, bool apc, unsigned char *ex,
                        unsigned char *ecs) {
  enum { K = 3 };
  const tspec *x = &c->t[X], *w = &c->t[W], *cs = &c->t[CS];
  bool x3 = x->rank == 3;
  int64_t batch = x3 ? x->dims[0] : c->t[QSL].dims[0] - 1, dim = x->dims[x->rank - 1];
  int64_t C = cs->dims[1], mb = c->t[CI].rank == 2 ? c->t[CI].dims[1] : 1;
  bool has_ci = c->t[CI].present, has_nct = c->t[NCT].present,
       has_nacc = c->t[NACC].present;
  for (int64_t b = 0; b < batch; b++) {
    int64_t q0 = x3 ? 0 : c->iv[QSL][b];
    int64_t L = x3 ? x->dims[1] : c->iv[QSL][b + 1] - q0;
    int64_t R, Wl, nct = has_nct ? c->iv[NCT][b] : -1;
    int64_t first = 0, last = 0;
    if (apc) {
      first = c->iv[FIRST][b], last = c->iv[LAST][b];
      R = c->iv[CI][b * mb + c->iv[ISI][b]];
      Wl = c->iv[CI][b * mb + last];
    } else {
      R = Wl = has_ci ? c->iv[CI][b] : b;
    }
    if (R == c->pad) continue;
    int64_t offset = has_nct && nct == 0 ? 0
                     : has_nacc          ? (c->iv[NACC][b] > 1 ? c->iv[NACC][b] - 1 : 0)
                                         : C - (K - 1);
    int64_t hn = offset + K - 1, len = hn + L;
    for (int64_t d = 0; d < dim; d++) {
      float padded[64];
      for (int64_t i = 0; i < len; i++) {
        if (i < hn)
          padded[i] =
              has_nct && nct == 0
                  ? 0.0f
                  : hf(cs, cs->host,
                       R * cs->strides[0] + i * cs->strides[1] + d * cs->strides[2]);
        else {
          int64_t r = i - hn;
          int64_t off = x3 ? b * x->strides[0] + r * x->strides[1] + d * x->strides[2]
                           : (q0 + r) * x->strides[0] + d * x->strides[1];
          padded[i] = hf(x, x->host, off);
        }
      }
      const float *xp = padded + offset; /* K-1+L rows */
      int64_t M = C < len ? C : len;
      if (Wl != c->pad)
        for (int64_t i = 0; i < M; i++)
          hset(cs, ecs,
               Wl * cs->strides[0] + (C - M + i) * cs->strides[1] + d * cs->strides[2],
               padded[len - M + i]);
      if (apc && last > first) {
        int64_t B = c->bs, n = last - first;
        int64_t seo = ((L - (B - nct % B)) % B + B) % B;
        int64_t last_full = L - seo - (seo == 0 ? B : 0);
        for (int64_t ch = 0; ch < n; ch++) {
          int64_t line = c->iv[CI][b * mb + first + ch];
          if (line == c->pad) continue;
          int64_t bdy = last_full - (n - 1 - ch) * B;
          for (int64_t j = 0; j < K - 1; j++)
            hset(cs, ecs,
                 line * cs->strides[0] + (C - (K - 1) + j) * cs->strides[1] +
                     d * cs->strides[2],
                 xp[bdy + j]);
        }
      }
      int64_t reset = 0;
      if (c->mode == 1) {
        reset = K - 1 - nct;
        reset = reset < 0 ? 0 : reset > L ? L : reset;
      }
      for (int64_t i = 0; i < L; i++) {
        float y = 0.0f;
        for (int64_t k = 0; k < K; k++)
          y += hf(w, w->host, k * w->strides[0] + d * w->strides[1]) * xp[i + k];
        if (i < reset) y = 0.0f;
        int64_t off = x3 ? b * x->strides[0] + i * x->strides[1] + d * x->strides[2]
                         : (q0 + i) * x->strides[0] + d * x->strides[1];
        if (c->res) y += hf(x, x->host, off);
        hset(x, ex, off, y);
      }
    }
  }
}

/* Runs c through aclnn and compares x and convStates with the golden. */
static void conv_check_golden(conv_case *c, bool apc, aclrtStream s, const char *what) {
  small_ints(c);
  unsigned char *ex = malloc(c->t[X].bytes), *ecs = malloc(c->t[CS].bytes);
  memcpy(ex, c->t[X].host, c->t[X].bytes);
  memcpy(ecs, c->t[CS].host, c->t[CS].bytes);
  conv_golden(c, apc, ex, ecs);
  EQ(conv_call(c, s), ACLNN_SUCCESS);
  TU_CHECK(dev_is(&c->t[X], ex), "%s: x", what);
  TU_CHECK(dev_is(&c->t[CS], ecs), "%s: convStates", what);
  free(ex);
  free(ecs);
}

/* Two sequences with prefix caching: block size 4, 4 blocks each, C = 2. Sequence 0 is
 * the spec's worked example (nct 2, L 9: blocks 0..2, two fills, read line 5, written
 * line 7); sequence 1 has nct `nct1` and L 5. */
static conv_case *conv_apc_case(int64_t nct1, int version) {
  conv_case *c = conv_new();
  int64_t lens[2] = {9, 5}, nct[2] = {2, nct1}, B = 4, mb = 4;
  spec(&c->t[X], ACL_BF16, 2, 14, 64, 0, 8);
  spec(&c->t[W], ACL_BF16, 2, 3, 64, 0, 0);
  spec(&c->t[CS], ACL_BF16, 3, 16, 2, 64, 0);
  spec(&c->t[QSL], ACL_INT32, 1, 3, 0, 0, 0);
  spec(&c->t[CI], ACL_INT32, 2, 2, mb, 0, 0);
  spec(&c->t[NCT], ACL_INT32, 1, 2, 0, 0, 0);
  spec(&c->t[FIRST], ACL_INT32, 1, 2, 0, 0, 0);
  spec(&c->t[LAST], ACL_INT32, 1, 2, 0, 0, 0);
  spec(&c->t[ISI], ACL_INT32, 1, 2, 0, 0, 0);
  c->iv[QSL][0] = 0, c->iv[QSL][1] = 9, c->iv[QSL][2] = 14;
  for (int j = 0; j < 8; j++) c->iv[CI][j] = 5 + j; /* rows [5,6,7,8], [9,10,11,12] */
  for (int b = 0; b < 2; b++) {
    c->iv[NCT][b] = nct[b];
    c->iv[FIRST][b] = nct[b] / B;
    c->iv[LAST][b] = (nct[b] + lens[b] - 1) / B;
    c->iv[ISI][b] = nct[b] > 0 ? (nct[b] - 1) / B : 0;
  }
  c->bs = B, c->mql = 9, c->res = 1, c->version = version;
  return c;
}

/* APC is on exactly when blockIdxFirstScheduledToken is given (CANN's tiling): without
 * it blockIdxLastScheduledToken and initialStateIdx are ignored, whatever their values
 * and shapes, and cacheIndices keeps the non-APC rule ([batch]); with it, the other two
 * are required. */
static void test_conv_apc_switch(aclrtStream s) {
  for (int version = 1; version <= 2; version++) {
    /* the sample (2-D x, 1-D cacheIndices) with the two others only, out of range */
    conv_case *c = conv_sample(8, 7, ACL_FLOAT16);
    c->version = version;
    spec(&c->t[LAST], ACL_INT32, 1, 4, 0, 0, 0);
    spec(&c->t[ISI], ACL_INT32, 1, 3, 0, 0, 0); /* not [batch]: not checked either */
    for (int b = 0; b < 4; b++) c->iv[LAST][b] = 99, c->iv[ISI][b] = -7;
    conv_build(c);
    conv_check_golden(c, false, s, "last and initialStateIdx without first");
    conv_free(c);
    /* only blockIdxLastScheduledToken, with numComputedTokens and convMode 1 */
    c = conv_sample(8, 7, ACL_FLOAT16);
    c->version = version;
    spec(&c->t[LAST], ACL_INT32, 1, 4, 0, 0, 0);
    spec(&c->t[NCT], ACL_INT32, 1, 4, 0, 0, 0);
    for (int b = 0; b < 4; b++) c->iv[LAST][b] = 1000, c->iv[NCT][b] = b;
    c->t[NACC].present = false;
    c->mode = 1, c->res = 1;
    conv_build(c);
    conv_check_golden(c, false, s, "last alone");
    conv_free(c);
    /* 3-D x (the decode template), only initialStateIdx */
    c = conv_new();
    c->version = version;
    spec(&c->t[X], ACL_FLOAT16, 3, 3, 2, 64, 16);
    spec(&c->t[W], ACL_FLOAT16, 2, 3, 64, 0, 0);
    spec(&c->t[CS], ACL_FLOAT16, 3, 6, 3, 64, 0);
    spec(&c->t[CI], ACL_INT32, 1, 3, 0, 0, 0);
    spec(&c->t[ISI], ACL_INT32, 1, 3, 0, 0, 0);
    c->iv[CI][0] = 4, c->iv[CI][1] = -1, c->iv[CI][2] = 0; /* -1: padSlotId */
    for (int b = 0; b < 3; b++) c->iv[ISI][b] = 5;
    c->mql = -1;
    conv_build(c);
    conv_check_golden(c, false, s, "3-D x, initialStateIdx alone");
    conv_free(c);
    /* prefix caching on: the golden's APC lines and block fills */
    for (int k = 0; k < 2; k++) {
      c = conv_apc_case(k ? 0 : 4, version);
      conv_build(c);
      conv_check_golden(c, true, s, k ? "APC, nct 0" : "APC");
      conv_free(c);
    }
  }
  /* refusals (561002, nothing written): the others with a 2-D cacheIndices (the non-APC
   * rule); first without last; first without initialStateIdx */
  for (int k = 0; k < 3; k++) {
    conv_case *c = conv_apc_case(4, 1);
    if (k == 0) c->t[FIRST].present = false;
    if (k == 1) c->t[LAST].present = false;
    if (k == 2) c->t[ISI].present = false;
    conv_build(c);
    uint64_t ws = 5;
    aclOpExecutor *ex = (aclOpExecutor *)&ws;
    EQ(conv_phase1(c, &ws, &ex), ACLNN_ERR_INNER_TILING_ERROR);
    TU_CHECK(ex == NULL && ws == 0, "APC refusal %d: outputs not cleared", k);
    TU_CHECK(strlen(aclGetRecentErrMsg()) > 0, "APC refusal %d: no message", k);
    TU_CHECK(conv_unchanged(c), "APC refusal %d wrote", k);
    conv_free(c);
  }
}

/* The error table: one change to the sample (dim 64, C = 8, maxQueryLen 7) per row. */
static void test_conv_errors(aclrtStream s) {
  enum { NROWS = 52 };
  for (int row = 0; row < NROWS; row++) {
    conv_case *c = conv_sample(8, 7, ACL_FLOAT16);
    aclnnStatus want = ACLNN_ERR_INNER_TILING_ERROR;
    bool null_ws = false, null_ex = false;
    int drop = -1;
    switch (row) {
      case 0:
        drop = X;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 1:
        drop = W;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 2:
        drop = CS;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 3:
        null_ws = true;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 4:
        null_ex = true;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 5:
        c->t[X].dt = c->t[W].dt = c->t[CS].dt = c->t[BIAS].dt = ACL_FLOAT;
        break;
      case 6:
        c->t[W].dt = ACL_BF16;
        break;
      case 7:
        c->t[CS].dt = ACL_BF16;
        break;
      case 8:
        c->t[QSL].dt = ACL_INT64;
        break;
      case 9:
        c->t[CI].dt = ACL_INT64;
        break;
      case 10:
        c->t[BIAS].dt = ACL_FLOAT;
        break;
      case 11:
        c->t[ISM].dt = ACL_INT64;
        break;
      case 12:
        c->t[NACC].dt = ACL_INT64;
        break;
      case 13:
        spec(&c->t[X], ACL_FLOAT16, 1, 19 * 64, 0, 0, 0);
        break;
      case 14:
        drop = QSL;
        break;
      case 15:
        spec(&c->t[QSL], ACL_INT32, 2, 1, 5, 0, 0);
        break;
      case 16:
        spec(&c->t[QSL], ACL_INT32, 1, 1, 0, 0, 0);
        break;
      case 17:
        spec(&c->t[W], ACL_FLOAT16, 2, 4, 64, 0, 0);
        break;
      case 18:
        spec(&c->t[W], ACL_FLOAT16, 2, 3, 80, 0, 0);
        break;
      case 19:
        spec(&c->t[W], ACL_FLOAT16, 1, 3 * 64, 0, 0, 0);
        break;
      case 20:
        spec(&c->t[CS], ACL_FLOAT16, 2, 64, 64, 0, 0);
        break;
      case 21:
        spec(&c->t[CS], ACL_FLOAT16, 3, 8, 8, 80, 0);
        break;
      case 22:
        spec(&c->t[CS], ACL_FLOAT16, 3, 8, 1, 64, 0);
        break;
      case 23: /* dim 48 */
        spec(&c->t[X], ACL_FLOAT16, 2, 19, 48, 0, 0);
        spec(&c->t[W], ACL_FLOAT16, 2, 3, 48, 0, 0);
        spec(&c->t[CS], ACL_FLOAT16, 3, 8, 8, 48, 0);
        c->t[BIAS].present = false;
        break;
      case 24: /* dim 72: not a multiple of 16 */
        spec(&c->t[X], ACL_FLOAT16, 2, 19, 72, 0, 0);
        spec(&c->t[W], ACL_FLOAT16, 2, 3, 72, 0, 0);
        spec(&c->t[CS], ACL_FLOAT16, 3, 8, 8, 72, 0);
        c->t[BIAS].present = false;
        break;
      case 25: /* batch 257 */
        spec(&c->t[X], ACL_FLOAT16, 2, 257, 64, 0, 0);
        spec(&c->t[QSL], ACL_INT32, 1, 258, 0, 0, 0);
        for (int b = 0; b <= 257; b++) c->iv[QSL][b] = b;
        c->t[CI].present = c->t[ISM].present = c->t[NACC].present = false;
        break;
      case 26:
        c->mql = 0;
        break;
      case 27:
        c->mql = -1;
        break;
      case 28:
        c->mql = 4;
        break; /* decode path: 19 > 4 * 4 */
      case 29: /* 3-D x with m = 8 (V1) */
        spec(&c->t[X], ACL_FLOAT16, 3, 4, 9, 64, 0);
        spec(&c->t[CS], ACL_FLOAT16, 3, 8, 10, 64, 0);
        c->t[NACC].present = false;
        break;
      case 30: /* the same through V2 with maxDraftTokens 8: accepted */
        spec(&c->t[X], ACL_FLOAT16, 3, 4, 9, 64, 0);
        spec(&c->t[CS], ACL_FLOAT16, 3, 8, 10, 64, 0);
        c->t[NACC].present = false;
        c->version = 2, c->max_draft = 8;
        want = ACLNN_SUCCESS;
        break;
      case 31:
        c->version = 2, c->max_draft = -1;
        break;
      case 32: /* 3-D x, C < K + S - 2 */
        spec(&c->t[X], ACL_FLOAT16, 3, 4, 4, 64, 0);
        spec(&c->t[CS], ACL_FLOAT16, 3, 8, 4, 64, 0);
        break;
      case 33: /* APC in part: blockIdxFirstScheduledToken alone */
        spec(&c->t[FIRST], ACL_INT32, 1, 4, 0, 0, 0);
        break;
      case 34: /* APC with a 1-D cacheIndices */
        spec(&c->t[FIRST], ACL_INT32, 1, 4, 0, 0, 0);
        spec(&c->t[LAST], ACL_INT32, 1, 4, 0, 0, 0);
        spec(&c->t[ISI], ACL_INT32, 1, 4, 0, 0, 0);
        spec(&c->t[NCT], ACL_INT32, 1, 4, 0, 0, 0);
        c->bs = 4;
        break;
      case 35:
      case 36:
      case 37: /* APC: no nct / blockSize 0 / maxNumBlocks 1025 */
        spec(&c->t[CI], ACL_INT32, 2, 4, row == 37 ? 1025 : 2, 0, 0);
        for (int i = 0; i < 4 * (row == 37 ? 1025 : 2); i++) c->iv[CI][i % MAXV] = 0;
        if (row == 37) c->t[CI].ivals = NULL;
        spec(&c->t[FIRST], ACL_INT32, 1, 4, 0, 0, 0);
        spec(&c->t[LAST], ACL_INT32, 1, 4, 0, 0, 0);
        spec(&c->t[ISI], ACL_INT32, 1, 4, 0, 0, 0);
        if (row != 35) spec(&c->t[NCT], ACL_INT32, 1, 4, 0, 0, 0);
        c->bs = row == 36 ? 0 : 4;
        break;
      case 38:
        spec(&c->t[CI], ACL_INT32, 1, 3, 0, 0, 0);
        break;
      case 39:
        spec(&c->t[NACC], ACL_INT32, 1, 5, 0, 0, 0);
        break;
      case 40:
        c->mode = 1;
        break; /* without numComputedTokens */
      case 41:
        c->mode = 2;
        break;
      case 42:
        c->act = 3;
        break;
      case 43:
        c->run = 2;
        break;
      case 44:
        c->res = 2;
        break;
      case 45:
        c->bs = 1;
        break;
      case 46:
        c->t[X].strides[1] = 2, c->t[X].strides[0] = 128;
        break;
      case 47:
        c->t[CS].strides[2] = 2, c->t[CS].strides[1] = 128, c->t[CS].strides[0] = 1024;
        break;
      case 48:
        c->t[X].fmt = ACL_FORMAT_FRACTAL_NZ;
        break;
      /* phase 2: index values (nothing written) */
      case 49:
        c->iv[QSL][2] = 4;
        want = ACLNN_ERR_PARAM_INVALID;
        break; /* not increasing */
      case 50:
        c->iv[CI][1] = 8;
        want = ACLNN_ERR_PARAM_INVALID;
        break; /* line out of range */
      case 51:
        c->iv[CI][1] = 0;
        want = ACLNN_ERR_PARAM_INVALID;
        break; /* duplicate line */
    }
    if (drop >= 0) c->t[drop].present = false;
    conv_build(c);
    uint64_t ws = 7;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = conv_phase1(c, null_ws ? NULL : &ws, null_ex ? NULL : &ex);
    if (st == ACLNN_SUCCESS) {
      void *w = NULL;
      if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
      st = conv_phase2(c, w, ws, ex, s);
      if (w) aclrtFree(w);
    }
    EQ(st, want);
    if (st != want) fprintf(stderr, "  conv error row %d\n", row);
    if (want != ACLNN_SUCCESS) {
      TU_CHECK(conv_unchanged(c), "conv error row %d wrote", row);
      TU_CHECK(strlen(aclGetRecentErrMsg()) > 0, "conv error row %d: no message", row);
    }
    conv_free(c);
  }
  /* a negative stride (cacheIndices) or a view past its block: the layer's generic
   * checks (161002); x's token stride < 1 is CANN's (561002) */
  for (int k = 0; k < 3; k++) {
    conv_case *c = conv_sample(8, 7, ACL_FLOAT16);
    conv_build(c);
    int64_t neg[2] = {-1, 1}, xneg[2] = {-64, 1};
    int which = k == 2 ? X : CI;
    tspec *t = &c->t[which];
    aclTensor *bad = k == 0   ? aclCreateTensor(t->dims, 1, ACL_INT32, neg, 3,
                                                ACL_FORMAT_ND, t->dims, 1, t->dev)
                     : k == 1 ? aclCreateTensor(t->dims, 1, ACL_INT32, NULL, 1,
                                                ACL_FORMAT_ND, t->dims, 1, t->dev)
                              : aclCreateTensor(t->dims, 2, ACL_FLOAT16, xneg, 18 * 64,
                                                ACL_FORMAT_ND, t->dims, 2, t->dev);
    aclTensor *keep = t->t;
    t->t = bad;
    uint64_t ws;
    aclOpExecutor *ex;
    EQ(conv_phase1(c, &ws, &ex),
       k == 2 ? ACLNN_ERR_INNER_TILING_ERROR : ACLNN_ERR_PARAM_INVALID);
    t->t = keep;
    aclDestroyTensor(bad);
    TU_CHECK(conv_unchanged(c), "a bad view wrote");
    conv_free(c);
  }
}

/* ================================================ aclnnFusedCausalConv1d (y) */
/* The in-place entry's twelve inputs, in the same order, then y. */
enum { OX, OW, OCS, OQSL, OCI, OISM, OBIAS, ONACC, ONCT, OFIRST, OLAST, OISI, OY, ON };

typedef struct out_case {
  tspec t[ON];
  int64_t act, pad, run, mql, res, bs, mode;
  int64_t iv[ON][MAXV];
} out_case;

/* CANN's sample layout: batch 4, sequences lens (cuSeqLen their sum), lines 0, 3, 1,
 * 5 of 8, initialStateMode 1, 0, 2, 1; C rows of state; maxQueryLen 6 for run 1 (the
 * short-sequence template), cuSeqLen otherwise; no APC tensors; not built. */
static out_case *out_sample(int64_t run, int64_t C, int64_t dim, aclDataType dt,
                            const int64_t *lens) {
  out_case *c = calloc(1, sizeof *c);
  c->pad = -1, c->run = run;
  for (int i = OQSL; i <= OISI; i++)
    if (i != OBIAS) c->t[i].ivals = c->iv[i];
  int64_t T = 0, lines[4] = {0, 3, 1, 5}, ism[4] = {1, 0, 2, 1};
  for (int b = 0; b < 4; b++) T += lens[b];
  c->mql = run ? 6 : T;
  spec(&c->t[OX], dt, 2, T, dim, 0, 0);
  spec(&c->t[OW], dt, 2, 3, dim, 0, 0);
  spec(&c->t[OCS], dt, 3, 8, C, dim, 0);
  spec(&c->t[OQSL], ACL_INT32, 1, 5, 0, 0, 0);
  spec(&c->t[OCI], ACL_INT32, 1, 4, 0, 0, 0);
  spec(&c->t[OISM], ACL_INT32, 1, 4, 0, 0, 0);
  spec(&c->t[OBIAS], dt, 1, dim, 0, 0, 0);
  spec(&c->t[ONACC], ACL_INT32, 1, 4, 0, 0, 0);
  spec(&c->t[OY], dt, 2, T, dim, 0, 0);
  c->iv[OQSL][0] = 0;
  for (int b = 0; b < 4; b++) {
    c->iv[OQSL][b + 1] = c->iv[OQSL][b] + lens[b];
    c->iv[OCI][b] = lines[b];
    c->iv[OISM][b] = ism[b];
    c->iv[ONACC][b] = 0;
  }
  return c;
}

static const int64_t PREFILL_LENS[4] = {5, 3, 7, 4}, DECODE_LENS[4] = {5, 3, 6, 4};

static void out_build(out_case *c) {
  for (int i = 0; i < ON; i++) build(&c->t[i]);
}

static void out_free(out_case *c) {
  for (int i = 0; i < ON; i++) unbuild(&c->t[i]);
  free(c);
}

static aclnnStatus out_phase1(out_case *c, uint64_t *ws, aclOpExecutor **ex) {
  aclTensor *t[ON];
  for (int i = 0; i < ON; i++) t[i] = c->t[i].present ? c->t[i].t : NULL;
  return aclnnFusedCausalConv1dGetWorkspaceSize(
      t[OX], t[OW], t[OCS], t[OQSL], t[OCI], t[OISM], t[OBIAS], t[ONACC], t[ONCT],
      t[OFIRST], t[OLAST], t[OISI], c->act, c->pad, c->run, c->mql, c->res, c->bs,
      c->mode, t[OY], ws, ex);
}

static aclnnStatus out_call(out_case *c, aclrtStream s) {
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = out_phase1(c, &ws, &ex);
  if (st) return st;
  void *w = NULL;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  st = aclnnFusedCausalConv1d(w, ws, ex, s);
  if (w) aclrtFree(w);
  return st;
}

static int out_unchanged(out_case *c) {
  return dev_is(&c->t[OX], c->t[OX].host) && dev_is(&c->t[OCS], c->t[OCS].host) &&
         dev_is(&c->t[OY], c->t[OY].host);
}

static void out_upload(tspec *t) {
  aclrtMemcpy(t->dev, t->bytes, t->host, t->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
}

/* CANN's example for aclnnFusedCausalConv1d: fp16, dim 128, x and weight all 1,
 * convStates 0, runMode 0, residual 1. Token i of a sequence: the history rows are 0,
 * so 1 + min(i, 2) taps see a 1, and the residual adds 1: y = 2, 3, 4, 4, ... (the
 * sample prints row 0: ten 2s); x unchanged; each line gets the sequence's last two
 * rows of x (1). */
static void test_out_sample(aclrtStream s) {
  out_case *c = out_sample(0, 2, 128, ACL_FLOAT16, PREFILL_LENS);
  c->res = 1;
  out_build(c);
  tspec *x = &c->t[OX], *w = &c->t[OW], *cs = &c->t[OCS], *y = &c->t[OY];
  for (size_t i = 0; i < x->bytes / 2; i++) ((uint16_t *)(void *)x->host)[i] = 0x3C00;
  for (size_t i = 0; i < w->bytes / 2; i++) ((uint16_t *)(void *)w->host)[i] = 0x3C00;
  memset(cs->host, 0, cs->bytes);
  memset(y->host, 0, y->bytes);
  out_upload(x);
  out_upload(w);
  out_upload(cs);
  out_upload(y);
  EQ(out_call(c, s), ACLNN_SUCCESS);
  /* token i of a sequence: 1 + min(i, 2) taps see a 1, plus the residual: 2, 3, 4, 4.. */
  const uint16_t val[3] = {0x4000, 0x4200, 0x4400};
  for (int64_t t = 0, b = 0; t < 19; t++) {
    while (t >= c->iv[OQSL][b + 1]) b++;
    int64_t i = t - c->iv[OQSL][b];
    for (int d = 0; d < 128; d++)
      ((uint16_t *)(void *)y->host)[t * 128 + d] = val[i < 2 ? i : 2];
  }
  int64_t lines[4] = {0, 3, 1, 5};
  for (int b = 0; b < 4; b++)
    for (int64_t i = 0; i < 2 * 128; i++)
      ((uint16_t *)(void *)cs->host)[lines[b] * 2 * 128 + i] = 0x3C00;
  TU_CHECK(dev_is(x, x->host), "aclnnFusedCausalConv1d sample: x kept");
  TU_CHECK(dev_is(y, y->host), "aclnnFusedCausalConv1d sample: y all 2");
  TU_CHECK(dev_is(cs, cs->host), "aclnnFusedCausalConv1d sample: lines 1");
  out_free(c);
}

/* The same call through aclnnInplaceFusedCausalConv1d (on copies, x in place): its x
 * and convStates must be this entry's y and convStates, byte for byte. */
static void out_vs_inplace(out_case *c, aclrtStream s, const char *what) {
  conv_case *k = conv_new();
  int map[ON];
  for (int i = 0; i < OY; i++) map[i] = i; /* the same input order */
  for (int i = 0; i < OY; i++) {
    k->t[map[i]] = c->t[i];
    k->t[map[i]].ivals = c->t[i].ivals ? k->iv[map[i]] : NULL;
    k->t[map[i]].host = k->t[map[i]].ref = NULL; /* k's own blocks, built below */
    k->t[map[i]].dev = NULL;
    k->t[map[i]].t = NULL;
    memcpy(k->iv[map[i]], c->iv[i], sizeof c->iv[i]);
  }
  conv_build(k);
  for (int i = 0; i < OY; i++) {
    tspec *t = &k->t[map[i]];
    if (!t->present) continue;
    memcpy(t->host, c->t[i].host, t->bytes);
    out_upload(t);
  }
  k->mql = c->mql, k->bs = c->bs, k->mode = c->mode, k->run = c->run;
  k->pad = c->pad, k->res = c->res, k->act = c->act;
  EQ(conv_call(k, s), ACLNN_SUCCESS);
  void *kx = malloc(k->t[X].bytes), *kcs = malloc(k->t[CS].bytes);
  aclrtMemcpy(kx, k->t[X].bytes, k->t[X].dev, k->t[X].bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  aclrtMemcpy(kcs, k->t[CS].bytes, k->t[CS].dev, k->t[CS].bytes,
              ACL_MEMCPY_DEVICE_TO_HOST);
  TU_CHECK(dev_is(&c->t[OCS], kcs), "%s: convStates differ from the in-place entry's",
           what);
  /* y: the in-place x wherever a sequence ran (skipped ones keep y's bytes) */
  tspec *y = &c->t[OY];
  unsigned char *ey = malloc(y->bytes);
  memcpy(ey, y->host, y->bytes);
  int64_t dim = y->dims[y->rank - 1], batch = c->t[OX].rank == 3 ? y->dims[0] : 4;
  for (int64_t b = 0; b < batch; b++) {
    int64_t line = c->t[OCI].present ? c->iv[OCI][b] : b;
    if (line == c->pad) continue;
    int64_t t0 = y->rank == 3 ? 0 : c->iv[OQSL][b],
            L = y->rank == 3 ? y->dims[1] : c->iv[OQSL][b + 1] - t0;
    for (int64_t i = 0; i < L; i++) {
      int64_t off =
          y->rank == 3 ? b * y->strides[0] + i * y->strides[1] : (t0 + i) * y->strides[0];
      memcpy(ey + off * 2, (unsigned char *)kx + off * 2, (size_t)dim * 2);
    }
  }
  TU_CHECK(dev_is(y, ey), "%s: y differs from the in-place entry's x", what);
  TU_CHECK(dev_is(&c->t[OX], c->t[OX].host), "%s: x written", what);
  free(ey);
  free(kx);
  free(kcs);
  conv_free(k);
}

/* Golden values (small integers, exact in every sum) for both templates (maxQueryLen
 * cuSeqLen and 6), 2-D and 3-D x, with numAcceptedTokens, residual and a skipped
 * sequence; and the same call through the in-place entry. */
static void test_out_values(aclrtStream s) {
  for (int v = 0; v < 8; v++) {
    int64_t run = v >= 2, C = run ? 7 : 2;
    aclDataType dt = v % 2 ? ACL_BF16 : ACL_FLOAT16;
    out_case *c =
        out_sample(run, C, v == 3 ? 256 : 128, dt, run ? DECODE_LENS : PREFILL_LENS);
    c->res = v % 3 == 0;
    if (v >= 6) { /* 3-D x [4, 3, dim] (m = 2) */
      spec(&c->t[OX], dt, 3, 4, 3, 128, 0);
      spec(&c->t[OY], dt, 3, 4, 3, 128, v == 7 ? 16 : 0);
      c->t[OQSL].present = v == 6; /* ignored with a 3-D x */
    }
    if (v == 4) c->iv[OCI][2] = c->pad = 7; /* sequence 2 skipped */
    if (v == 5) c->t[OCI].present = false;  /* line b */
    if (run && v != 4)
      for (int b = 0; b < 4; b++) c->iv[ONACC][b] = b % 3;
    if (v == 2) c->t[ONACC].present = false;
    out_build(c);
    /* small integers in x, weight, convStates; y filled with a pattern */
    const int which[3] = {OX, OW, OCS};
    for (int k = 0; k < 3; k++) {
      tspec *t = &c->t[which[k]];
      for (size_t i = 0; i < t->bytes / 2; i++)
        hset(t, t->host, (int64_t)i, (float)((int64_t)(i * (k + 2) % 7) - 3));
      out_upload(t);
    }
    char what[64];
    snprintf(what, sizeof what, "aclnnFusedCausalConv1d values %d", v);
    /* golden through the in-place formula (conv_golden): x's expected block */
    conv_case *g = conv_new();
    for (int i = 0; i < OY; i++) {
      g->t[i] = c->t[i];
      memcpy(g->iv[i], c->iv[i], sizeof c->iv[i]);
    }
    g->pad = c->pad, g->res = c->res;
    unsigned char *ex = malloc(c->t[OX].bytes), *ecs = malloc(c->t[OCS].bytes);
    memcpy(ex, c->t[OX].host, c->t[OX].bytes);
    memcpy(ecs, c->t[OCS].host, c->t[OCS].bytes);
    conv_golden(g, false, ex, ecs);
    for (int i = 0; i < OY; i++) g->t[i] = (tspec){0};
    conv_free(g);
    /* the golden's x values into y's layout, sequences that ran only */
    tspec *x = &c->t[OX], *y = &c->t[OY];
    unsigned char *ey = malloc(y->bytes);
    memcpy(ey, y->host, y->bytes);
    int64_t dim = x->dims[x->rank - 1], batch = 4;
    for (int64_t b = 0; b < batch; b++) {
      int64_t line = c->t[OCI].present ? c->iv[OCI][b] : b;
      if (line == c->pad) continue;
      int64_t t0 = x->rank == 3 ? 0 : c->iv[OQSL][b],
              L = x->rank == 3 ? x->dims[1] : c->iv[OQSL][b + 1] - t0;
      for (int64_t i = 0; i < L; i++)
        for (int64_t d = 0; d < dim; d++) {
          int64_t xo = x->rank == 3 ? b * x->strides[0] + i * x->strides[1] + d
                                    : (t0 + i) * x->strides[0] + d;
          int64_t yo = y->rank == 3 ? b * y->strides[0] + i * y->strides[1] + d
                                    : (t0 + i) * y->strides[0] + d;
          memcpy(ey + yo * 2, ex + xo * 2, 2);
        }
    }
    EQ(out_call(c, s), ACLNN_SUCCESS);
    TU_CHECK(dev_is(y, ey), "%s: y", what);
    TU_CHECK(dev_is(&c->t[OCS], ecs), "%s: convStates", what);
    TU_CHECK(dev_is(x, x->host), "%s: x written", what);
    free(ey);
    free(ex);
    free(ecs);
    /* the same inputs through the in-place entry */
    if (y->strides[0] == x->strides[0] || y->rank == 2) out_vs_inplace(c, s, what);
    out_free(c);
  }
}

/* A repeatable executor of this entry: y is output 0, the inputs 0..11 in prototype
 * order. numComputedTokens 0 everywhere (first chunks): every run computes the same y
 * and the same lines, so a run with y re-pointed to a second block must give that block
 * the first run's bytes and leave the first block as it was. */
static void test_out_repoint(aclrtStream s) {
  out_case *c = out_sample(0, 2, 128, ACL_FLOAT16, PREFILL_LENS);
  spec(&c->t[ONCT], ACL_INT32, 1, 4, 0, 0, 0);
  out_build(c);
  tspec *y = &c->t[OY];
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  EQ(out_phase1(c, &ws, &ex), ACLNN_SUCCESS);
  EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  void *w = NULL;
  aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  EQ(aclnnFusedCausalConv1d(w, ws, ex, s), ACLNN_SUCCESS);
  unsigned char *y1 = malloc(y->bytes);
  aclrtMemcpy(y1, y->bytes, y->dev, y->bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  TU_CHECK(!dev_is(y, y->host), "repeatable: y not written");
  tspec y2 = *y;
  build(&y2);
  aclDestroyTensor(y2.t);
  y2.t = NULL;
  EQ(aclSetOutputTensorAddr(ex, 0, y->t, y2.dev), ACLNN_SUCCESS);
  EQ(aclSetOutputTensorAddr(ex, 1, y->t, y2.dev), ACLNN_ERR_PARAM_INVALID);
  EQ(aclSetInputTensorAddr(ex, OY, c->t[OX].t, y2.dev), ACLNN_ERR_PARAM_INVALID);
  EQ(aclSetInputTensorAddr(ex, OFIRST, c->t[OX].t, y2.dev),
     ACLNN_ERR_PARAM_INVALID); /* absent */
  EQ(aclnnFusedCausalConv1d(w, ws, ex, s), ACLNN_SUCCESS);
  TU_CHECK(dev_is(&y2, y1), "re-pointed y: not the first run's bytes");
  void *first = NULL;
  aclGetRawTensorAddr(y->t, &first);
  TU_CHECK(first == y2.dev, "y's aclTensor follows the new address");
  unsigned char *old = malloc(y->bytes);
  aclrtMemcpy(old, y->bytes, y->dev, y->bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  TU_CHECK(!memcmp(old, y1, y->bytes), "re-pointed run wrote the old y");
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  free(old);
  free(y1);
  unbuild(&y2);
  aclrtFree(w);
  out_free(c);
}

/* CANN's error table for aclnnFusedCausalConv1d (its doc: NULLs 161001, dtypes and
 * shapes; its tiling: the limits of the two templates), re-expressed: one change to
 * the sample per row; nothing written on refusal, y included. */
static void test_out_errors(aclrtStream s) {
  enum { NROWS = 48 };
  for (int row = 0; row < NROWS; row++) {
    bool dec = (row >= 26 && row < 32) || row == 40;
    out_case *c =
        out_sample(dec, dec ? 7 : 2, 128, ACL_FLOAT16, dec ? DECODE_LENS : PREFILL_LENS);
    aclnnStatus want = ACLNN_ERR_INNER_TILING_ERROR;
    bool null_ws = false, null_ex = false;
    int drop = -1;
    switch (row) {
      case 0:
        drop = OX;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 1:
        drop = OW;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 2:
        drop = OCS;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 3:
        drop = OY;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 4:
        null_ws = true;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 5:
        null_ex = true;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 6:
        for (int i = 0; i < ON; i++)
          if (c->t[i].dt == ACL_FLOAT16) c->t[i].dt = ACL_FLOAT;
        break;
      case 7:
        c->t[OW].dt = ACL_BF16;
        break;
      case 8:
        c->t[OCS].dt = ACL_BF16;
        break;
      case 9:
        c->t[OBIAS].dt = ACL_FLOAT;
        break;
      case 10:
        c->t[OY].dt = ACL_BF16;
        break;
      case 11:
        c->t[OQSL].dt = ACL_INT64;
        break;
      case 12:
        c->t[OCI].dt = ACL_INT64;
        break;
      case 13:
        c->t[OISM].dt = ACL_INT64;
        break;
      case 14:
        c->t[ONACC].dt = ACL_INT64;
        break;
      case 15:
        c->t[OY].fmt = ACL_FORMAT_FRACTAL_NZ;
        break;
      case 16:
        c->act = 3;
        break;
      case 17:
        c->run = 2;
        break;
      case 18:
        c->res = 2;
        break;
      /* long sequences (maxQueryLen 19) */
      case 19:
        spec(&c->t[OX], ACL_FLOAT16, 3, 1, 19, 128, 0);
        spec(&c->t[OY], ACL_FLOAT16, 3, 1, 19, 128, 0);
        break;
      case 20: /* C < K-1 */
        spec(&c->t[OCS], ACL_FLOAT16, 3, 8, 1, 128, 0);
        break;
      case 21: /* a 2-D cacheIndices turns APC on here: the block tensors missing */
        spec(&c->t[OCI], ACL_INT32, 2, 4, 2, 0, 0);
        c->bs = 4;
        break;
      case 22:
        drop = OQSL;
        break;
      case 23:
        spec(&c->t[OY], ACL_FLOAT16, 2, 18, 128, 0, 0);
        break;
      case 24:
        spec(&c->t[OY], ACL_FLOAT16, 3, 1, 19, 128, 0);
        break;
      case 25:
        spec(&c->t[OW], ACL_FLOAT16, 2, 4, 128, 0, 0);
        break;
      /* short sequences (maxQueryLen 6) */
      case 26: /* 3-D x, m = 8 */
        spec(&c->t[OX], ACL_FLOAT16, 3, 4, 9, 128, 0);
        spec(&c->t[OY], ACL_FLOAT16, 3, 4, 9, 128, 0);
        spec(&c->t[OCS], ACL_FLOAT16, 3, 8, 10, 128, 0);
        break;
      case 27: /* 3-D x, m = 3, C = 4 < m + 2 */
        spec(&c->t[OX], ACL_FLOAT16, 3, 4, 4, 128, 0);
        spec(&c->t[OY], ACL_FLOAT16, 3, 4, 4, 128, 0);
        spec(&c->t[OCS], ACL_FLOAT16, 3, 8, 4, 128, 0);
        break;
      case 28: /* cuSeqLen 25 > batch * 6 */
        spec(&c->t[OX], ACL_FLOAT16, 2, 25, 128, 0, 0);
        spec(&c->t[OY], ACL_FLOAT16, 2, 25, 128, 0, 0);
        break;
      case 29:
        spec(&c->t[ONACC], ACL_INT32, 1, 3, 0, 0, 0);
        break;
      case 30: /* a sequence of 7 tokens (cuSeqLen 18 <= 24): phase 2 */
        c->iv[OQSL][1] = 7, c->iv[OQSL][2] = 8;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 31:
        c->iv[OCI][1] = 8;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      /* shared limits */
      case 32:
        spec(&c->t[OX], ACL_FLOAT16, 2, 19, 48, 0, 0);
        break; /* dim 48 */
      case 33:
        spec(&c->t[OX], ACL_FLOAT16, 2, 19, 200, 0, 0);
        break;
      case 34:
        spec(&c->t[OQSL], ACL_INT32, 1, 258, 0, 0, 0);
        break; /* batch 257 */
      case 35:
        spec(&c->t[OCI], ACL_INT32, 1, 3, 0, 0, 0);
        break;
      /* phase 2: queryStartLoc order, a duplicate line (nothing written) */
      case 36:
        c->iv[OQSL][2] = 4;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 37:
        c->iv[OCI][1] = 0;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 38:
        c->iv[OQSL][4] = 18;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 39:
        spec(&c->t[OX], ACL_FLOAT16, 1, 19 * 128, 0, 0, 0);
        break;
      case 40: /* blockIdxLastScheduledToken turns APC on here: cacheIndices 1-D */
        spec(&c->t[ONCT], ACL_INT32, 1, 4, 0, 0, 0);
        spec(&c->t[OFIRST], ACL_INT32, 1, 4, 0, 0, 0);
        spec(&c->t[OLAST], ACL_INT32, 1, 4, 0, 0, 0);
        spec(&c->t[OISI], ACL_INT32, 1, 4, 0, 0, 0);
        c->bs = 4;
        break;
      case 41:
        c->mode = 1; /* without numComputedTokens */
        break;
      case 42:
        c->mode = 2;
        break;
      case 43:
        c->bs = 1;
        break;
      case 44:
        c->mql = 0;
        break;
      case 45:
        spec(&c->t[ONCT], ACL_INT32, 1, 3, 0, 0, 0);
        break;
      case 46:
        spec(&c->t[ONCT], ACL_INT64, 1, 4, 0, 0, 0);
        break;
      case 47: /* a negative numComputedTokens: phase 2 */
        spec(&c->t[ONCT], ACL_INT32, 1, 4, 0, 0, 0);
        c->iv[ONCT][2] = -1;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
    }
    if (drop >= 0) c->t[drop].present = false;
    out_build(c);
    uint64_t ws = 7;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = out_phase1(c, null_ws ? NULL : &ws, null_ex ? NULL : &ex);
    if (st == ACLNN_SUCCESS) {
      void *w = NULL;
      if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
      st = aclnnFusedCausalConv1d(w, ws, ex, s);
      if (w) aclrtFree(w);
    } else if (!null_ws && !null_ex) {
      TU_CHECK(ex == NULL && ws == 0, "out error row %d: outputs not cleared", row);
    }
    EQ(st, want);
    if (st != want)
      fprintf(stderr, "  out error row %d: %s\n", row, aclGetRecentErrMsg());
    TU_CHECK(out_unchanged(c), "out error row %d wrote", row);
    TU_CHECK(strlen(aclGetRecentErrMsg()) > 0, "out error row %d: no message", row);
    out_free(c);
  }
  /* y sharing memory: x's own view is the in-place call; a view of x one token on, of
   * convStates (20 lines: x's shape fits in its block) or of convStates from its
   * second row: 161002, nothing written */
  for (int k = 0; k < 4; k++) {
    out_case *c = out_sample(0, 2, 128, ACL_FLOAT16, PREFILL_LENS);
    if (k >= 2) spec(&c->t[OCS], ACL_FLOAT16, 3, 20, 2, 128, 0);
    if (k == 1) spec(&c->t[OX], ACL_FLOAT16, 2, 19, 128, 0, 8); /* rows 136 apart */
    out_build(c);
    tspec *x = &c->t[OX];
    /* k 1: x's rows shifted by 4 channels, inside x's block */
    int64_t dims[2] = {19, 128}, str[2] = {k == 1 ? 136 : 128, 1},
            sd[2] = {19, k == 1 ? 136 : 128};
    int64_t off = k == 1 ? 4 : k == 3 ? 256 : 0;
    aclTensor *alias = aclCreateTensor(dims, 2, ACL_FLOAT16, str, off, ACL_FORMAT_ND, sd,
                                       2, k >= 2 ? c->t[OCS].dev : x->dev);
    aclTensor *keep = c->t[OY].t;
    c->t[OY].t = alias;
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = out_phase1(c, &ws, &ex);
    if (k == 0) {
      EQ(st, ACLNN_SUCCESS);
      void *w = NULL;
      if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
      EQ(aclnnFusedCausalConv1d(w, ws, ex, s), ACLNN_SUCCESS);
      if (w) aclrtFree(w);
      TU_CHECK(!dev_is(x, x->host), "y = x: x not written in place");
    } else {
      EQ(st, ACLNN_ERR_PARAM_INVALID);
      TU_CHECK(dev_is(x, x->host) && dev_is(&c->t[OCS], c->t[OCS].host),
               "y overlap %d wrote", k);
    }
    c->t[OY].t = keep;
    aclDestroyTensor(alias);
    out_free(c);
  }
}

int main(void) {
  acl_test t;
  acl_test_begin(&t, 20260510, 2);
  test_conv_samples(t.stream);
  test_conv_random(t.stream, t.ctx);
  test_conv_lifecycle(t.stream, t.ctx);
  test_conv_apc_switch(t.stream);
  test_conv_errors(t.stream);
  test_out_sample(t.stream);
  test_out_values(t.stream);
  test_out_repoint(t.stream);
  test_out_errors(t.stream);
  return acl_test_end(&t, "test_aclnn_fused_causal_conv1d");
}
