/* aclnnInplaceFusedCausalConv1d (+ V2) and aclnnScatterPaKvCache from C: results through
 * aclnn equal the native API's (llmk_fused_causal_conv1d, llmk_scatter_pa_kv_cache) bit
 * for bit on random inputs; the executor lifecycle (single use, repeatable, re-pointed
 * addresses); the error tables with CANN's numeric codes, checking that x, convStates
 * and the caches are byte-identical after every rejection. */
#include <llmk/llmk.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d_v2.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "test_util.h"

#define EQ(a, b)                                                                  \
  TU_CHECK((long long)(a) == (long long)(b), "%lld != %lld (%s)", (long long)(a), \
           (long long)(b), aclGetRecentErrMsg())

/* ------------------------------------------------------------ tensor specs */
#define MAXV 4096
typedef struct tspec {
  bool present;
  aclDataType dt;
  aclFormat fmt;
  int rank;
  int64_t dims[4], strides[4];
  int64_t
      *ivals;   /* index tensors: values in row-major view order (NULL: random floats) */
  size_t bytes; /* block size */
  unsigned char *host; /* the expected block contents */
  unsigned char *ref;  /* the native API's copy */
  void *dev;
  aclTensor *t;
} tspec;

static size_t dt_size(aclDataType dt) {
  switch (dt) {
    case ACL_INT8:
    case ACL_UINT8:
      return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
      return 2;
    case ACL_INT64:
      return 8;
    default:
      return 4;
  }
}

static llmk_dtype native_dt(aclDataType dt) {
  switch (dt) {
    case ACL_FLOAT16:
      return LLMK_F16;
    case ACL_BF16:
      return LLMK_BF16;
    case ACL_FLOAT:
      return LLMK_F32;
    case ACL_INT8:
      return LLMK_I8;
    case ACL_INT32:
      return LLMK_I32;
    case ACL_INT64:
      return LLMK_I64;
    default:
      return LLMK_DTYPE_INVALID;
  }
}

/* Contiguous, with `pad` extra elements per row of dim rank-2 (0: none). */
static void spec(tspec *s, aclDataType dt, int rank, int64_t d0, int64_t d1, int64_t d2,
                 int64_t pad) {
  int64_t d[4] = {d0, d1, d2, 0};
  s->present = true;
  s->dt = dt;
  s->fmt = ACL_FORMAT_ND;
  s->rank = rank;
  int64_t st = 1;
  for (int i = rank - 1; i >= 0; i--) {
    s->dims[i] = d[i];
    s->strides[i] = st;
    st *= d[i] + (i == rank - 1 && rank >= 2 ? pad : 0);
  }
}

static void spec4(tspec *s, aclDataType dt, int64_t d0, int64_t d1, int64_t d2,
                  int64_t d3) {
  spec(s, dt, 3, d1, d2, d3, 0);
  s->rank = 4;
  for (int i = 2; i >= 0; i--)
    s->dims[i + 1] = s->dims[i], s->strides[i + 1] = s->strides[i];
  s->dims[0] = d0;
  s->strides[0] = d1 * d2 * d3;
}

static uint16_t rand_half(aclDataType dt) {
  float f = (float)(tu_rand_unit() * 4.0 - 2.0);
  return dt == ACL_BF16 ? llmk_f32_to_bf16(f) : llmk_f32_to_f16(f);
}

/* Allocates the block (the view's span), fills it, copies it to device memory. */
static void build(tspec *s) {
  if (!s->present) return;
  size_t es = dt_size(s->dt);
  int64_t last = 0, n = 1;
  for (int i = 0; i < s->rank; i++)
    last += (s->dims[i] - 1) * s->strides[i], n *= s->dims[i];
  s->bytes = (size_t)(n ? last + 1 : 1) * es;
  s->host = malloc(s->bytes);
  for (size_t i = 0; i < s->bytes / es; i++) {
    if (es == 2) {
      uint16_t h = rand_half(s->dt == ACL_BF16 ? ACL_BF16 : ACL_FLOAT16);
      memcpy(s->host + i * 2, &h, 2);
    } else {
      for (size_t b = 0; b < es; b++) s->host[i * es + b] = (unsigned char)tu_rand_u64();
    }
  }
  if (s->ivals) {
    for (int64_t k = 0; k < n; k++) {
      int64_t off = 0, r = k;
      for (int i = s->rank - 1; i >= 0; i--)
        off += (r % s->dims[i]) * s->strides[i], r /= s->dims[i];
      int64_t v = s->ivals[k];
      if (es == 8)
        memcpy(s->host + off * 8, &v, 8);
      else if (es == 4) {
        int32_t w = (int32_t)v;
        memcpy(s->host + off * 4, &w, 4);
      } else if (es == 2) {
        int16_t w = (int16_t)v;
        memcpy(s->host + off * 2, &w, 2);
      } else {
        int8_t w = (int8_t)v;
        memcpy(s->host + off, &w, 1);
      }
    }
  }
  s->ref = malloc(s->bytes);
  memcpy(s->ref, s->host, s->bytes);
  aclrtMalloc(&s->dev, s->bytes, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMemcpy(s->dev, s->bytes, s->host, s->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  s->t = aclCreateTensor(s->dims, (uint64_t)s->rank, s->dt, s->strides, 0, s->fmt,
                         s->dims, (uint64_t)s->rank, s->dev);
}

static void unbuild(tspec *s) {
  aclDestroyTensor(s->t);
  if (s->dev) aclrtFree(s->dev);
  free(s->host);
  free(s->ref);
  s->t = NULL, s->dev = NULL, s->host = s->ref = NULL;
}

/* The device block equals `want` (host or ref). */
static int dev_is(const tspec *s, const unsigned char *want) {
  if (!s->present) return 1;
  unsigned char *d = malloc(s->bytes);
  aclrtMemcpy(d, s->bytes, s->dev, s->bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  int ok = memcmp(d, want, s->bytes) == 0;
  free(d);
  return ok;
}

/* The native descriptor of s over its `ref` copy (or over `data`). */
static const llmk_tensor *ndesc(const tspec *s, llmk_tensor *out) {
  if (!s->present) return NULL;
  llmk_tensor_init(out, native_dt(s->dt), s->rank, s->dims, s->strides, s->ref);
  return out;
}

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
    for (size_t i = 0; i < x->bytes / 2; i++) ((uint16_t *)x->host)[i] = 0x3C00;
    for (size_t i = 0; i < w->bytes / 2; i++)
      ((uint16_t *)w->host)[i] = i < 64 ? 0x3C00 : 0;
    memset(cs->host, 0, cs->bytes);
    aclrtMemcpy(x->dev, x->bytes, x->host, x->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(w->dev, w->bytes, w->host, w->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(cs->dev, cs->bytes, cs->host, cs->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    EQ(conv_call(c, s), ACLNN_SUCCESS);
    /* expected, from the spec: each sequence's rows 0,0,1,1,...; line rows */
    int64_t lens[4] = {5, 3, 7, 4}, lines[4] = {0, 3, 1, 5}, C = v ? 2 : 8, row = 0;
    uint16_t *xe = (uint16_t *)x->host, *ce = (uint16_t *)cs->host;
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
      case 33: /* APC in part */
        spec(&c->t[LAST], ACL_INT32, 1, 4, 0, 0, 0);
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

/* ====================================================== scatter kv cache */
enum { KEY, KC, SLOT, VAL, VC, CL, CO, SL, NS };

typedef struct sc_case {
  tspec t[NS];
  const char *cache_mode, *scatter_mode;
  int64_t nct_strides[2], nct_offsets[2];
  bool use_arrays;
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

/* The native API on the ref copies, with the view each mode stands for: NHSD is the
 * blocks layout with HND strides; Nct re-strides key/value rows. */
static llmk_status sc_native(sc_case *c, llmk_context *ctx) {
  llmk_tensor d[NS];
  const llmk_tensor *p[NS];
  for (int i = 0; i < NS; i++) p[i] = ndesc(&c->t[i], &d[i]);
  bool nhsd = c->cache_mode && !strcmp(c->cache_mode, "NHSD");
  bool nct = c->scatter_mode && !strcmp(c->scatter_mode, "Nct");
  if (nhsd)
    for (int k = KC; k <= VC; k += VC - KC) {
      if (!p[k]) continue;
      int64_t t1 = d[k].shape[1], s1 = d[k].strides[1];
      d[k].shape[1] = d[k].shape[2], d[k].strides[1] = d[k].strides[2];
      d[k].shape[2] = t1, d[k].strides[2] = s1;
    }
  if (nct)
    for (int k = 0; k < 2; k++) {
      int i = k ? VAL : KEY;
      if (!p[i]) continue;
      d[i].shape[0] = c->T;
      d[i].strides[0] = c->nct_strides[k];
      d[i].data = (char *)d[i].data + c->nct_offsets[k] * (int64_t)dt_size(c->t[i].dt);
    }
  llmk_kv_layout layout =
      c->cache_mode && !strcmp(c->cache_mode, "PA_NZ") ? LLMK_KV_NZ : LLMK_KV_BLOCKS;
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

static int sc_unchanged(sc_case *c) {
  return dev_is(&c->t[KC], c->t[KC].host) && dev_is(&c->t[VC], c->t[VC].host);
}
static int sc_as_native(sc_case *c) {
  return dev_is(&c->t[KC], c->t[KC].ref) && dev_is(&c->t[VC], c->t[VC].ref);
}

/* mode 0 Norm (NULL or "Norm"), 1 NHSD, 2 PA_NZ; nct: "Nct" key/value rows. */
static sc_case *sc_random(int mode, bool nct, bool k_only) {
  sc_case *c = calloc(1, sizeof *c);
  aclDataType dts[3] = {ACL_FLOAT16, ACL_BF16, ACL_INT8};
  aclDataType dt = dts[tu_rand_range(0, 2)];
  int64_t ld = 32 / (int64_t)dt_size(dt);
  c->T = tu_rand_range(1, 40), c->H = tu_rand_range(1, 4);
  c->Dk = ld * tu_rand_range(1, 4), c->Dv = k_only ? 0 : ld * tu_rand_range(1, 4);
  c->nb = tu_rand_range(1, 6),
  c->bs = mode == 2 ? 16 * tu_rand_range(1, 2) : tu_rand_range(1, 17);
  c->cache_mode = mode == 0   ? (tu_rand_range(0, 1) ? "Norm" : NULL)
                  : mode == 1 ? "NHSD"
                              : "PA_NZ";
  c->scatter_mode = nct ? "Nct" : (tu_rand_range(0, 1) ? "None" : NULL);
  int64_t D[2] = {c->Dk, c->Dv};
  for (int k = 0; k < (k_only ? 1 : 2); k++) {
    int ti = k ? VAL : KEY, ci = k ? VC : KC;
    if (nct) { /* a fused buffer: rows of stride >= H*D, starting at an offset */
      c->nct_strides[k] = c->H * D[k] + tu_rand_range(0, 3) * ld;
      c->nct_offsets[k] = tu_rand_range(0, 5);
      spec(&c->t[ti], dt, 3, c->T, c->H, D[k], 0);
      /* the tensor's own view covers the whole fused buffer */
      c->t[ti].strides[0] = c->nct_strides[k];
      c->t[ti].dims[0] = c->T;
      c->t[ti].dims[2] = D[k];
      /* room for the offset: one spare row */
      c->t[ti].dims[0] = c->T + 1;
    } else {
      spec(&c->t[ti], dt, 3, c->T, c->H, D[k], tu_rand_range(0, 1) ? ld : 0);
    }
    if (mode == 2)
      spec4(&c->t[ci], dt, c->nb, c->H * D[k] / ld, c->bs, ld);
    else if (mode == 1)
      spec4(&c->t[ci], dt, c->nb, c->H, c->bs, D[k]);
    else
      spec4(&c->t[ci], dt, c->nb, c->bs, c->H, D[k]);
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
      t->t = aclCreateTensor(dims, 3, dt, contiguous, 0, ACL_FORMAT_ND, dims, 3, t->dev);
    }
  }
  return c;
}

static void test_scatter_random(aclrtStream s, llmk_context *ctx) {
  for (int it = 0; it < 120; it++) {
    int mode = it % 3;
    bool nct = (it / 3) % 2 == 1, k_only = (it / 6) % 4 == 3;
    sc_case *c = sc_random(mode, nct, k_only);
    EQ(sc_native(c, ctx), LLMK_SUCCESS);
    EQ(sc_call(c, s), ACLNN_SUCCESS);
    TU_CHECK(sc_as_native(c), "random scatter case %d (mode %d, nct %d, k only %d)", it,
             mode, (int)nct, (int)k_only);
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
    for (size_t i = 0; i < t->bytes / 2; i++) ((uint16_t *)t->host)[i] = k < 2 ? 0 : 1;
    aclrtMemcpy(t->dev, t->bytes, t->host, t->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  }
  EQ(sc_call(c, s), ACLNN_SUCCESS);
  for (int k = 2; k < 4; k++) {
    uint16_t *h = (uint16_t *)c->t[ids[k]].host;
    for (int tok = 0; tok < 2; tok++)
      for (int ch = 0; ch < 64; ch++) h[(ch / 16) * 512 + tok * 16 + ch % 16] = 0;
  }
  TU_CHECK(sc_unchanged(c), "the PA_NZ example");
  uint16_t *h = (uint16_t *)c->t[KC].host;
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

/* The error table: one change to a Norm case (f16, T 4, H 2, D 16, 2 blocks of 4). */
static void test_scatter_errors(aclrtStream s) {
  enum { NROWS = 32 };
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
    bool null_ws = false, null_ex = false;
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
      case 4:
        null_ws = true;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 5:
        null_ex = true;
        want = ACLNN_ERR_PARAM_NULLPTR;
        break;
      case 6:
        c->t[VAL].present = false;
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
      case 13:
        spec(&c->t[KEY], ACL_FLOAT16, 2, 4, 32, 0, 0);
        want = ACLNN_ERR_INNER_TILING_ERROR;
        break;
      case 14:
        spec(&c->t[VAL], ACL_FLOAT16, 2, 4, 32, 0, 0);
        want = ACLNN_ERR_INNER_TILING_ERROR;
        break;
      case 15:
        spec(&c->t[KC], ACL_FLOAT16, 3, 8, 2, 16, 0);
        break;
      case 16:
        spec4(&c->t[KC], ACL_FLOAT16, 2, 4, 2, 32);
        break; /* D differs */
      case 17:
        spec(&c->t[VAL], ACL_FLOAT16, 3, 3, 2, 16, 0);
        break;
      case 18:
        spec(&c->t[SLOT], ACL_INT32, 2, 2, 2, 0, 0);
        break;
      case 19:
        c->cache_mode = "PA";
        break;
      case 20:
        c->scatter_mode = "Alibi";
        want = ACLNN_ERR_INNER;
        break;
      case 21:
        c->scatter_mode = "Rope";
        want = ACLNN_ERR_INNER;
        break;
      case 22:
        c->scatter_mode = "Omni";
        want = ACLNN_ERR_INNER;
        break;
      case 23:
        c->scatter_mode = "nct";
        break;
      case 24:
        spec(&c->t[CL], ACL_INT32, 1, 4, 0, 0, 0);
        want = ACLNN_ERR_INNER;
        break;
      case 25:
        spec(&c->t[SL], ACL_INT32, 1, 1, 0, 0, 0);
        want = ACLNN_ERR_INNER;
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
        break; /* [2, 4, 2, 16] is not NZ for D 16: H*D/ld */
      /* phase 2: a slot out of range (nothing written) */
      case 30:
        c->iv[3] = 8;
        break;
      case 31:
        c->iv[0] = 1000000;
        c->t[SLOT].dt = ACL_INT64;
        break;
    }
    sc_build(c);
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
    TU_CHECK(sc_unchanged(c), "scatter error row %d wrote", row);
    TU_CHECK(strlen(aclGetRecentErrMsg()) > 0, "scatter error row %d: no message", row);
    sc_free(c);
  }
  /* K only with 0-D value/valueCache (CANN's scenario 6) and NHSD accepted */
  sc_case *c = sc_random(1, false, true);
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

int main(void) {
  tu_seed(20260510);
  EQ(aclInit(NULL), ACL_SUCCESS);
  aclrtStream s = NULL;
  EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  llmk_context *ctx = NULL;
  llmk_context_create(2, &ctx);
  test_conv_samples(s);
  test_conv_random(s, ctx);
  test_conv_lifecycle(s, ctx);
  test_conv_errors(s);
  test_scatter_sample(s);
  test_scatter_random(s, ctx);
  test_scatter_lifecycle(s, ctx);
  test_scatter_errors(s);
  llmk_context_destroy(ctx);
  aclrtDestroyStream(s);
  aclFinalize();
  return tu_finish("test_conv_scatter_aclnn");
}
