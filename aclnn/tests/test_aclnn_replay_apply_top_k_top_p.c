/* SPDX-License-Identifier: Apache-2.0 */
/* CANN's own test tables for aclnnApplyTopKTopP (ops-nn
 * index/apply_top_k_top_p_with_sorted/tests), replayed through the aclnn layer:
 *   op_api UT  test_aclnn_apply_top_k_top_p.cpp: 28 cases, the status of each; the
 *              accepted ones also run, on data in the UT's value ranges;
 *   tiling UT  test_apply_top_k_top_p_with_sorted_tiling.cpp: 11 cases of the internal
 *              ApplyTopKTopPWithSorted (sorted values and indices), each replayed as the
 *              aclnnApplyTopKTopP call that gives it those shapes (logits = the sorted
 *              values' shape), except the two whose sorted indices disagree with the
 *              values, which no aclnnApplyTopKTopP call can produce (its op_api sorts):
 *              those go to the native with-sorted entry, the op behind the internal one;
 *   kernel UT  test_apply_top_k_top_p_with_sorted.cpp + gen_data.py: [4, 152064] FLOAT,
 *              logits in [0, 1), p in [0, 1), k in [10, 30); the case without logits
 *              (tiling key 0) also through the native with-sorted entry;
 *   ST         atk_aclnnApplyTopKTopP.json: 210 cases, logits in [-5, 5], p in [0, 1],
 *              k in [1, V - 1], FLOAT16/BFLOAT16/FLOAT; every case is "is_boundary", so
 *              rows 0..3 take the ranges' ends (p 0 and 1, k 1 and V - 1, logits -5 and
 *              5), the other rows uniform values (a splitmix64 stream per case).
 * Accepted cases are compared bit for bit with a golden computed from CANN's formula
 * (its doc and ST executor: stable ascending sort, top-k at s[V - k], softmax, cumulative
 * sum from the smallest, mask c <= 1 - p in f32, the largest kept) by
 * tests/ref/apply_top_k_top_p_ref.c. Where f32 rounding decides an entry (a cumulative
 * sum within 64 ulp of 1 - p) an implementation may differ from the reference
 * (docs/spec top_k_top_p.md): such a row's p is drawn again (counted and printed).
 * Refused cases check the status, a NULL executor, a zero workspace size, a message
 * naming the argument and that no block changed.
 *
 * Where CANN's UT contradicts its op_api code, the code is followed and the case counted
 * as "listed" (docs/aclnn.md, aclnnApplyTopKTopP): p or k NULL alone is accepted (the UT
 * says 161001; the code refuses only logits or out NULL); p or k of shape [0] beside 4
 * rows is 161002 (the UT says success; the code compares dim 0 with logits' first). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn_tspec.h"
#include "aclnnop/aclnn_apply_top_k_top_p.h"
#include "apply_top_k_top_p_ref.h"
#include "convert_ref.h"

enum { L, P, K, O, NT };
static const char *const NAMES[NT] = {"logits", "p", "k", "out"};

typedef struct tdesc {
  int rank; /* -1: NULL */
  int64_t d[3];
  aclDataType dt;
  aclFormat fmt;
} tdesc;

typedef struct tk_case {
  const char *name;
  tdesc t[NT];
  double llo, lhi, plo, phi; /* logits in [llo, lhi), p in [plo, phi] */
  int64_t klo, khi;          /* k in [klo, khi] */
  bool boundary;             /* rows 0..3 take the ranges' ends */
  aclnnStatus want;
  const char *word; /* a refusal's message names this */
  uint64_t seed;
} tk_case;

static tdesc D1(aclDataType dt, int64_t a) {
  tdesc t = {1, {a, 0, 0}, dt, ACL_FORMAT_ND};
  return t;
}
static tdesc D2(aclDataType dt, int64_t a, int64_t b) {
  tdesc t = {2, {a, b, 0}, dt, ACL_FORMAT_ND};
  return t;
}
static tdesc D3(aclDataType dt, int64_t a, int64_t b, int64_t c) {
  tdesc t = {3, {a, b, c}, dt, ACL_FORMAT_ND};
  return t;
}
static const tdesc NONE = {-1, {0, 0, 0}, ACL_FLOAT, ACL_FORMAT_ND};

/* logits [b, v], p [b], k [b], out [b, v] of dtype dt (k INT32). */
static tk_case base_case(const char *name, aclDataType dt, int64_t b, int64_t v) {
  tk_case c;
  memset(&c, 0, sizeof c);
  c.name = name;
  c.t[L] = D2(dt, b, v);
  c.t[P] = D1(dt, b);
  c.t[K] = D1(ACL_INT32, b);
  c.t[O] = D2(dt, b, v);
  c.want = ACLNN_SUCCESS;
  return c;
}

/* --------------------------------------------------------------- values */

static uint64_t mix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double unit(uint64_t *x) { /* [0, 1) */
  return (double)(mix(x) >> 11) * 0x1.0p-53;
}

static size_t esize(aclDataType dt) {
  return dt == ACL_FLOAT16 || dt == ACL_BF16 ? 2 : dt == ACL_INT64 ? 8 : 4;
}

/* f as the dtype's bits (nearest, ties to even) */
static void put(aclDataType dt, void *base, int64_t i, float f) {
  if (dt == ACL_FLOAT) {
    ((float *)base)[i] = f;
  } else {
    uint16_t h = (uint16_t)ref_encode(dt == ACL_BF16 ? REF_BF16 : REF_F16, f);
    ((uint16_t *)base)[i] = h;
  }
}
static float get(aclDataType dt, const void *base, int64_t i) {
  if (dt == ACL_FLOAT) return ((const float *)base)[i];
  uint16_t h = ((const uint16_t *)base)[i];
  return (float)ref_decode(dt == ACL_BF16 ? REF_BF16 : REF_F16, h);
}
static bool is_float(aclDataType dt) {
  return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16;
}

/* ------------------------------------------------------------ the runner */

typedef struct blocks {
  int64_t elems[NT];
  size_t bytes[NT];
  unsigned char *host[NT];
  void *dev[NT];
  aclTensor *t[NT];
} blocks;

static int64_t numel(const tdesc *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++) n *= t->d[d];
  return n;
}

/* The host values: logits, p, k in their ranges (rows 0..3 at the ends when asked); out
 * filled with a byte pattern (to see what a call writes). */
static void fill(const tk_case *c, blocks *b) {
  uint64_t x = c->seed * 0x100000001b3ull;
  for (int i = 0; i < NT; i++) {
    if (c->t[i].rank < 0) continue;
    b->elems[i] = numel(&c->t[i]);
    b->bytes[i] = (size_t)(b->elems[i] ? b->elems[i] : 1) * esize(c->t[i].dt);
    b->host[i] = malloc(b->bytes[i]);
    if (i == O || !(is_float(c->t[i].dt) || (i == K && c->t[i].dt == ACL_INT32))) {
      for (size_t k = 0; k < b->bytes[i]; k++) b->host[i][k] = (unsigned char)(mix(&x));
      continue;
    }
    for (int64_t k = 0; k < b->elems[i]; k++) {
      if (i == L)
        put(c->t[i].dt, b->host[i], k, (float)(c->llo + (c->lhi - c->llo) * unit(&x)));
      else if (i == P)
        put(c->t[i].dt, b->host[i], k, (float)(c->plo + (c->phi - c->plo) * unit(&x)));
      else
        ((int32_t *)(void *)b->host[i])[k] =
            (int32_t)(c->klo + (int64_t)(mix(&x) % (uint64_t)(c->khi - c->klo + 1)));
    }
  }
  if (c->boundary && c->t[L].rank == 2) {
    /* rows 0..3: (p, k) at (lo, lo), (hi, hi), (lo, hi), (hi, lo); row 0 holds both
     * logit ends */
    static const bool p_hi[4] = {false, true, false, true},
                      k_hi[4] = {false, true, true, false};
    int64_t B = c->t[L].d[0], V = c->t[L].d[1];
    for (int64_t r = 0; r < B && r < 4; r++) {
      if (c->t[P].rank >= 0)
        put(c->t[P].dt, b->host[P], r, (float)(p_hi[r] ? c->phi : c->plo));
      if (c->t[K].rank >= 0)
        ((int32_t *)(void *)b->host[K])[r] = (int32_t)(k_hi[r] ? c->khi : c->klo);
    }
    if (V >= 2) {
      put(c->t[L].dt, b->host[L], 0, (float)c->llo);
      put(c->t[L].dt, b->host[L], 1, (float)c->lhi);
    }
  }
}

static void to_device(const tk_case *c, blocks *b) {
  for (int i = 0; i < NT; i++) {
    if (c->t[i].rank < 0) continue;
    b->dev[i] = dev_copy(b->host[i], b->bytes[i]);
    int64_t strides[3], st = 1;
    for (int d = c->t[i].rank - 1; d >= 0; d--) strides[d] = st, st *= c->t[i].d[d];
    b->t[i] = aclCreateTensor(c->t[i].d, (uint64_t)c->t[i].rank, c->t[i].dt, strides, 0,
                              c->t[i].fmt, c->t[i].d, (uint64_t)c->t[i].rank, b->dev[i]);
  }
}

static void free_blocks(blocks *b) {
  for (int i = 0; i < NT; i++) {
    aclDestroyTensor(b->t[i]);
    if (b->dev[i]) aclrtFree(b->dev[i]);
    free(b->host[i]);
  }
  memset(b, 0, sizeof *b);
}

static bool dev_equals(const blocks *b, int i, const void *want) {
  unsigned char *d = malloc(b->bytes[i]);
  aclrtMemcpy(d, b->bytes[i], b->dev[i], b->bytes[i], ACL_MEMCPY_DEVICE_TO_HOST);
  bool ok = memcmp(d, want, b->bytes[i]) == 0;
  free(d);
  return ok;
}

static long redrawn_rows; /* rows whose p was drawn again (top-p boundary too close) */

/* The expected out block from CANN's formula (the reference), drawing a row's p again
 * while its top-p boundary lies within 64 ulp of 1 - p. Returns false if no p would do.
 */
static bool golden(const tk_case *c, blocks *b, unsigned char *want) {
  int64_t B = c->t[L].d[0], V = c->t[L].d[1];
  aclDataType dt = c->t[L].dt;
  size_t es = esize(dt);
  memcpy(want, b->host[O], b->bytes[O]);
  if (B == 0 || V == 0) return true; /* empty: nothing written */
  float *x = malloc((size_t)V * sizeof *x);
  unsigned char *keep = malloc((size_t)V);
  uint64_t redraw = c->seed * 0x9e3779b97f4a7c15ull + 12345;
  bool ok = true;
  for (int64_t r = 0; r < B && ok; r++) {
    for (int64_t j = 0; j < V; j++) x[j] = get(dt, b->host[L], r * V + j);
    tkp_ref_args a = {0, 0, 0.0f, 0, 0.0f};
    if (c->t[K].rank >= 0) a.k = ((const int32_t *)(const void *)b->host[K])[r];
    a.has_p = c->t[P].rank >= 0;
    tkp_ref_info in;
    for (int tries = 0;; tries++) {
      if (a.has_p) a.p = get(dt, b->host[P], r);
      tkp_ref_row(x, V, &a, keep, &in);
      if (!a.has_p || in.margin_p >= 64.0) break;
      if (tries == 50) {
        ok = false;
        break;
      }
      redrawn_rows += tries == 0;
      put(dt, b->host[P], r, (float)(c->plo + (c->phi - c->plo) * unit(&redraw)));
    }
    for (int64_t j = 0; j < V; j++) {
      unsigned char *o = want + (size_t)(r * V + j) * es;
      if (keep[j]) {
        memcpy(o, b->host[L] + (size_t)(r * V + j) * es, es);
      } else if (es == 4) {
        uint32_t ninf = 0xff800000u;
        memcpy(o, &ninf, 4);
      } else {
        uint16_t ninf = dt == ACL_BF16 ? 0xff80 : 0xfc00;
        memcpy(o, &ninf, 2);
      }
    }
  }
  free(x);
  free(keep);
  return ok;
}

/* Runs one case; returns 1 if it behaved as expected. */
static int run_case(const tk_case *c, aclrtStream stream) {
  long failures_before = tu_failures;
  blocks b;
  memset(&b, 0, sizeof b);
  fill(c, &b);
  unsigned char *want = NULL;
  bool run = c->want == ACLNN_SUCCESS;
  if (run) {
    want = malloc(b.bytes[O]);
    TU_CHECK(golden(c, &b, want), "%s: no p away from the rounding boundary", c->name);
  }
  to_device(c, &b);
  uint64_t ws = 7;
  aclOpExecutor *ex = (aclOpExecutor *)&ws;
  aclnnStatus st =
      aclnnApplyTopKTopPGetWorkspaceSize(b.t[L], b.t[P], b.t[K], b.t[O], &ws, &ex);
  TU_CHECK(st == c->want, "%s: status %d, want %d (%s)", c->name, (int)st, (int)c->want,
           aclGetRecentErrMsg());
  if (!run || st != ACLNN_SUCCESS) {
    if (st != ACLNN_SUCCESS) {
      TU_CHECK(ex == NULL && ws == 0, "%s: refused with an executor or a size", c->name);
      const char *msg = aclGetRecentErrMsg();
      TU_CHECK(
          msg && strstr(msg, "aclnnApplyTopKTopP:") && (!c->word || strstr(msg, c->word)),
          "%s: message \"%s\" should name \"%s\"", c->name, msg ? msg : "(null)",
          c->word ? c->word : "the op");
    } else {
      aclDestroyAclOpExecutor(ex);
    }
    for (int i = 0; i < NT; i++)
      if (b.dev[i])
        TU_CHECK(dev_equals(&b, i, b.host[i]), "%s: %s written by a refused call",
                 c->name, NAMES[i]);
  } else {
    void *w = NULL;
    if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
    st = aclnnApplyTopKTopP(w, ws, ex, stream);
    TU_CHECK(st == ACLNN_SUCCESS, "%s: phase 2 status %d (%s)", c->name, (int)st,
             aclGetRecentErrMsg());
    if (w) aclrtFree(w);
    TU_CHECK(dev_equals(&b, O, want), "%s: out differs from the golden", c->name);
    for (int i = 0; i < O; i++)
      if (b.dev[i])
        TU_CHECK(dev_equals(&b, i, b.host[i]), "%s: input %s changed", c->name, NAMES[i]);
  }
  free(want);
  free_blocks(&b);
  return tu_failures == failures_before;
}

/* The native with-sorted entry (the op behind CANN's internal ApplyTopKTopPWithSorted):
 * sorted values [B, V] ascending, indices i32 [B, Vi], p, k, no logits. want_ok: accepted
 * and equal to the golden; else refused in phase 1 with LLMK_ERROR_INVALID_SHAPE. */
static int run_with_sorted(const char *name, int64_t B, int64_t V, int irank, int64_t Vi,
                           uint64_t seed, bool want_ok) {
  long failures_before = tu_failures;
  tk_case c = base_case(name, ACL_FLOAT, B, V);
  c.llo = 0, c.lhi = 1, c.plo = 0, c.phi = 1, c.klo = 10, c.khi = 29;
  c.seed = seed;
  blocks b;
  memset(&b, 0, sizeof b);
  fill(&c, &b);
  unsigned char *want = malloc(b.bytes[O]);
  TU_CHECK(golden(&c, &b, want), "%s: no p away from the rounding boundary", name);
  const float *lg = (const float *)(const void *)b.host[L];
  float *sv = malloc((size_t)(B * V) * sizeof *sv);
  int64_t ni = irank == 1 ? B : B * Vi;
  int32_t *si = calloc((size_t)ni, sizeof *si);
  int64_t *order = malloc((size_t)V * sizeof *order);
  for (int64_t r = 0; r < B; r++) {
    tkp_ref_argsort(lg + r * V, V, order);
    for (int64_t j = 0; j < V; j++) {
      sv[r * V + j] = lg[r * V + order[j]];
      if (irank == 2 && j < Vi) si[r * Vi + j] = (int32_t)order[j];
    }
  }
  float *out = malloc(b.bytes[O]);
  memcpy(out, b.host[O], b.bytes[O]);
  llmk_tensor tv, ti, tp, tkk, to;
  int64_t sh_v[2] = {B, V}, sh_i[2] = {B, Vi}, sh_b[1] = {B};
  llmk_tensor_init(&tv, LLMK_F32, 2, sh_v, NULL, sv);
  llmk_tensor_init(&ti, LLMK_I32, irank, irank == 1 ? sh_b : sh_i, NULL, si);
  llmk_tensor_init(&tp, LLMK_F32, 1, sh_b, NULL, b.host[P]);
  llmk_tensor_init(&tkk, LLMK_I32, 1, sh_b, NULL, b.host[K]);
  llmk_tensor_init(&to, LLMK_F32, 2, sh_v, NULL, out);
  size_t ws = 7;
  llmk_plan *plan = (llmk_plan *)&ws;
  llmk_status st = llmk_apply_top_k_top_p_with_sorted_get_workspace_size(
      &tv, &ti, &tp, &tkk, NULL, &to, &ws, &plan);
  if (want_ok) {
    TU_CHECK(st == LLMK_SUCCESS, "%s: native status %d (%s)", name, (int)st,
             llmk_last_error());
    void *w = malloc(ws ? ws : 1);
    if (st == LLMK_SUCCESS) {
      st = llmk_apply_top_k_top_p(w, ws, plan, NULL);
      TU_CHECK(st == LLMK_SUCCESS, "%s: native phase 2 %d (%s)", name, (int)st,
               llmk_last_error());
    }
    free(w);
    TU_CHECK(memcmp(out, want, b.bytes[O]) == 0,
             "%s: native with-sorted differs from the golden", name);
  } else {
    TU_CHECK(st == LLMK_ERROR_INVALID_SHAPE && plan == NULL && ws == 0,
             "%s: native status %d, want INVALID_SHAPE (%s)", name, (int)st,
             llmk_last_error());
    TU_CHECK(memcmp(out, b.host[O], b.bytes[O]) == 0, "%s: out written", name);
  }
  free(sv);
  free(si);
  free(order);
  free(out);
  free(want);
  free_blocks(&b);
  return tu_failures == failures_before;
}

/* ---------------------------------------------------------------- tables */

typedef struct tally {
  const char *table;
  int passed, listed, total;
} tally;

static void tally_print(const tally *t) {
  printf("%-46s passed %3d / listed %3d / total %3d\n", t->table, t->passed, t->listed,
         t->total);
}

/* A case of the op_api UT: [4, 1024] FLOAT unless changed; logits in [-1, 1], p in
 * [0, 1], k in [1, 10] (its ValueRange). */
static tk_case ut(const char *name) {
  tk_case c = base_case(name, ACL_FLOAT, 4, 1024);
  c.llo = -1, c.lhi = 1, c.plo = 0, c.phi = 1, c.klo = 1, c.khi = 10;
  return c;
}

static void table_op_api(aclrtStream stream) {
  tally t = {"op_api UT (test_aclnn_apply_top_k_top_p.cpp)", 0, 0, 28};
  tk_case cs[28];
  bool listed[28] = {false};
  int n = 0;
  cs[n] = ut("l2_apply_top_k_top_p_test_empty_success");
  cs[n].t[L] = D2(ACL_FLOAT, 4, 0), cs[n++].t[O] = D2(ACL_FLOAT, 4, 0);
  /* UT: success; the op_api compares p's dim 0 (0) with logits' (4) first: 161002 */
  cs[n] = ut("l2_apply_top_k_top_p_test_p_empty_success");
  cs[n].t[P] = D1(ACL_FLOAT, 0), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n].word = "p shape";
  listed[n++] = true;
  cs[n] = ut("l2_apply_top_k_top_p_test_k_empty_success");
  cs[n].t[K] = D1(ACL_INT32, 0), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n].word = "k shape";
  listed[n++] = true;
  cs[n++] = ut("l2_apply_top_k_top_p_test_fp32_success");
  cs[n] = ut("l2_apply_top_k_top_p_test_fp16_success");
  cs[n].t[L].dt = cs[n].t[P].dt = cs[n].t[O].dt = ACL_FLOAT16, n++;
  cs[n] = ut("ascend910B2_l2_apply_top_k_top_p_test_bf16_success");
  cs[n].t[L].dt = cs[n].t[P].dt = cs[n].t[O].dt = ACL_BF16, n++;
  cs[n] = ut("l2_apply_top_k_top_p_test_fp16_last_dim_1_success");
  cs[n].t[L] = D2(ACL_FLOAT16, 4, 1), cs[n].t[O] = D2(ACL_FLOAT16, 4, 1);
  cs[n].t[P].dt = ACL_FLOAT16, cs[n].klo = cs[n].khi = 1, n++;
  cs[n] = ut("l2_apply_top_k_top_p_test_logits_dtype_invalid");
  cs[n].t[L].dt = ACL_INT32, cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "logits dtype";
  cs[n] = ut("l2_apply_top_k_top_p_test_p_dtype_invalid");
  cs[n].t[P].dt = ACL_INT32, cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "p dtype";
  cs[n] = ut("l2_apply_top_k_top_p_test_k_dtype_invalid");
  cs[n].t[K].dt = ACL_FLOAT, cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "k dtype";
  cs[n] = ut("l2_apply_top_k_top_p_test_out_dtype_invalid");
  cs[n].t[O].dt = ACL_INT32, cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "out dtype";
  cs[n] = ut("l2_apply_top_k_top_p_test_p_logits_dtype_not_equal");
  cs[n].t[P].dt = ACL_FLOAT16, cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "p dtype";
  cs[n] = ut("l2_apply_top_k_top_p_test_out_logits_dtype_not_equal");
  cs[n].t[O].dt = ACL_FLOAT16, cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "out dtype";
  cs[n] = ut("l2_apply_top_k_top_p_test_logits_nullptr");
  cs[n].t[L] = NONE, cs[n].want = ACLNN_ERR_PARAM_NULLPTR, cs[n++].word = "logits";
  /* UT: 161001; the op_api refuses only logits or out NULL: top-k alone runs */
  cs[n] = ut("l2_apply_top_k_top_p_test_p_nullptr");
  cs[n].t[P] = NONE, listed[n++] = true;
  cs[n] = ut("l2_apply_top_k_top_p_test_k_nullptr");
  cs[n].t[K] = NONE, listed[n++] = true;
  cs[n] = ut("l2_apply_top_k_top_p_test_output_nullptr");
  cs[n].t[O] = NONE, cs[n].want = ACLNN_ERR_PARAM_NULLPTR, cs[n++].word = "out";
  cs[n] = ut("l2_apply_top_k_top_p_test_logits_shape_invalid");
  cs[n].t[L] = D3(ACL_FLOAT, 4, 1024, 1), cs[n].want = ACLNN_ERR_PARAM_INVALID;
  cs[n++].word = "logits has 3 dims";
  cs[n] = ut("l2_apply_top_k_top_p_test_p_shape_invalid");
  cs[n].t[P] = D2(ACL_FLOAT, 4, 1), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "p has 2";
  cs[n] = ut("l2_apply_top_k_top_p_test_k_shape_invalid");
  cs[n].t[K] = D2(ACL_INT32, 4, 1), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "k has 2";
  cs[n] = ut("l2_apply_top_k_top_p_test_out_shape_invalid");
  cs[n].t[O] = D3(ACL_FLOAT, 4, 1024, 1), cs[n].want = ACLNN_ERR_PARAM_INVALID;
  cs[n++].word = "out";
  cs[n] = ut("l2_apply_top_k_top_p_test_out_logits_shape_invalid");
  cs[n].t[O] = D2(ACL_FLOAT, 1, 1024), cs[n].want = ACLNN_ERR_PARAM_INVALID;
  cs[n++].word = "out shape";
  cs[n] = ut("l2_apply_top_k_top_p_test_p_logits_shape_invalid");
  cs[n].t[P] = D1(ACL_FLOAT, 2), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "p shape";
  cs[n] = ut("l2_apply_top_k_top_p_test_k_logits_shape_invalid");
  cs[n].t[K] = D1(ACL_INT32, 2), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "k shape";
  static const char *const fmt_names[NT] = {
      "l2_apply_top_k_top_p_test_logits_format_invalid",
      "l2_apply_top_k_top_p_test_p_format_invalid",
      "l2_apply_top_k_top_p_test_k_format_invalid",
      "l2_apply_top_k_top_p_test_out_format_invalid"};
  static const char *const fmt_words[NT] = {"logits: format", "p: format", "k: format",
                                            "out: format"};
  for (int i = 0; i < NT; i++) {
    cs[n] = ut(fmt_names[i]);
    cs[n].t[i].fmt = ACL_FORMAT_UNDEFINED, cs[n].want = ACLNN_ERR_PARAM_INVALID;
    cs[n++].word = fmt_words[i];
  }
  for (int i = 0; i < n; i++) {
    cs[i].seed = 100 + (uint64_t)i;
    int ok = run_case(&cs[i], stream);
    if (listed[i]) {
      t.listed += ok;
      if (ok)
        printf("  %s listed: %d as CANN's op_api code gives\n", cs[i].name,
               (int)cs[i].want);
    } else {
      t.passed += ok;
    }
  }
  TU_CHECK(n == t.total, "%d op_api cases", n);
  tally_print(&t);
}

static void table_tiling(aclrtStream stream) {
  tally t = {"tiling UT (..._with_sorted_tiling.cpp)", 0, 0, 11};
  /* no data in the UT: the kernel UT's ranges (logits [0, 1), p [0, 1), k [10, 30)) */
  static const aclDataType dts[3] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
  static const char *const ok_names[3] = {
      "test_case_float32_succ", "test_case_float16_succ", "test_case_bfloat16_succ"};
  tk_case cs[11];
  int n = 0;
  for (int i = 0; i < 3; i++) cs[n++] = base_case(ok_names[i], dts[i], 4, 152064);
  cs[n] = base_case("test_case_sorted_value_one_dim_failed", ACL_FLOAT, 4, 152064);
  cs[n].t[L] = D1(ACL_FLOAT, 4), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "logits";
  cs[n] = base_case("test_case_p_two_dim_failed", ACL_FLOAT, 4, 152064);
  cs[n].t[P] = D2(ACL_FLOAT, 4, 1), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "p has";
  cs[n] = base_case("test_case_k_two_dim_failed", ACL_FLOAT, 4, 152064);
  cs[n].t[K] = D2(ACL_INT32, 4, 1), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "k has";
  cs[n] = base_case("test_case_p_shape_invalid_failed", ACL_FLOAT, 4, 152064);
  cs[n].t[P] = D1(ACL_FLOAT, 3), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "p shape";
  cs[n] = base_case("test_case_k_shape_invalid_failed", ACL_FLOAT, 4, 152064);
  cs[n].t[K] = D1(ACL_INT32, 3), cs[n].want = ACLNN_ERR_PARAM_INVALID,
  cs[n++].word = "k shape";
  cs[n] = base_case("test_case_float32_topP_succ", ACL_FLOAT, 4, 152064);
  cs[n++].t[K] = NONE; /* k's shape {}: absent */
  for (int i = 0; i < n; i++) {
    cs[i].llo = 0, cs[i].lhi = 1, cs[i].plo = 0, cs[i].phi = 1, cs[i].klo = 10,
    cs[i].khi = 29;
    cs[i].seed = 200 + (uint64_t)i;
    t.passed += run_case(&cs[i], stream);
  }
  /* sorted indices that disagree with the values: the native with-sorted entry */
  t.passed += run_with_sorted("test_case_sorted_indices_one_dim_failed", 4, 152064, 1, 4,
                              220, false);
  t.passed += run_with_sorted(
      "test_case_sorted_value_shape_not_equal_sorted_indices_shape_failed", 4, 152061, 2,
      152064, 221, false);
  printf(
      "  2 cases (sorted indices of another shape) through the native with-sorted "
      "entry\n");
  tally_print(&t);
}

static void table_kernel(aclrtStream stream) {
  tally t = {"kernel UT (test_apply_top_k_top_p_with_sorted)", 0, 0, 2};
  /* gen_data.py 4 152064 fp32: logits uniform [0, 1), p uniform [0, 1), k in [10, 30) */
  tk_case c = base_case("test_case_4_152064_fp32", ACL_FLOAT, 4, 152064);
  c.llo = 0, c.lhi = 1, c.plo = 0, c.phi = 1, c.klo = 10, c.khi = 29, c.seed = 300;
  /* tiling key 0 (no logits): the internal op's form, also through the native entry */
  int ok = run_case(&c, stream);
  ok &= run_with_sorted("test_case_4_152064_fp32 (with sorted)", 4, 152064, 2, 152064,
                        300, true);
  t.passed += ok;
  c.name = "test_case_4_152064_fp32_opt", c.seed = 301;
  t.passed += run_case(&c, stream);
  tally_print(&t);
}

static const struct {
  char dt;
  int64_t b, v;
} TK_ST[210] = {
#include "replay_apply_top_k_top_p_st.inc"
};

static void table_st(aclrtStream stream) {
  tally t = {"ST atk_aclnnApplyTopKTopP.json", 0, 0, 210};
  long redrawn_before = redrawn_rows;
  for (int id = 0; id < 210; id++) {
    char name[64];
    snprintf(name, sizeof name, "atk_aclnnApplyTopKTopP id %d", id);
    aclDataType dt = TK_ST[id].dt == 'F'   ? ACL_FLOAT
                     : TK_ST[id].dt == 'H' ? ACL_FLOAT16
                                           : ACL_BF16;
    tk_case c = base_case(name, dt, TK_ST[id].b, TK_ST[id].v);
    c.llo = -5, c.lhi = 5, c.plo = 0, c.phi = 1, c.klo = 1, c.khi = TK_ST[id].v - 1;
    c.boundary = true;
    c.seed = 400 + (uint64_t)id;
    t.passed += run_case(&c, stream);
  }
  printf(
      "  %ld of the ST's rows had p drawn again (top-p boundary within 64 ulp of 1 - "
      "p)\n",
      redrawn_rows - redrawn_before);
  tally_print(&t);
}

int main(void) {
  acl_test t;
  acl_test_begin(&t, 20260806, 0);
  table_op_api(t.stream);
  table_tiling(t.stream);
  table_kernel(t.stream);
  table_st(t.stream);
  printf("%ld rows in all had p drawn again\n", redrawn_rows);
  return acl_test_end(&t, "test_aclnn_replay_apply_top_k_top_p");
}
