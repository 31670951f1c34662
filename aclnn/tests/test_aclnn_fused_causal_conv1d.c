/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnInplaceFusedCausalConv1d (+ V2) from C: results through aclnn equal the native
 * API's (llmk_fused_causal_conv1d) bit for bit on random inputs; the executor lifecycle
 * (single use, repeatable, re-pointed addresses); the error table with CANN's numeric
 * codes, checking that x and convStates are byte-identical after every rejection. */
#include "aclnn_tspec.h"
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

int main(void) {
  acl_test t;
  acl_test_begin(&t, 20260510, 2);
  test_conv_samples(t.stream);
  test_conv_random(t.stream, t.ctx);
  test_conv_lifecycle(t.stream, t.ctx);
  test_conv_apc_switch(t.stream);
  test_conv_errors(t.stream);
  return acl_test_end(&t, "test_aclnn_fused_causal_conv1d");
}
