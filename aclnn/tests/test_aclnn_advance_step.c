/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnAdvanceStep / aclnnAdvanceStepV2 from C: CANN's samples, results against a
 * reference computed from CANN's formula (plain mode: the flattened block table plus the
 * row offset; speculative mode: the per-row lookup) on random inputs, the executor
 * lifecycle (single use, repeatable, re-pointed addresses) and the error table with
 * CANN's numeric codes, checking that nothing is written when a call fails. */
#include <llmk/llmk.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn_tspec.h"
#include "aclnnop/aclnn_advance_step.h"
#include "aclnnop/aclnn_advance_step_v2.h"

enum { TOK, SAMP, POS, LENS, SLOT, TAB, SPEC, ACC, NT };

/* One call's tensors: host copies (the expected state), device blocks, aclTensors. */
typedef struct tcase {
  int64_t n, nq, bs, S; /* S < 0: plain mode */
  int64_t len[NT];      /* elements of each block */
  int64_t rank[NT], dims[NT][3], strides[NT][3];
  int64_t *host[NT];
  void *dev[NT];
  aclTensor *t[NT];
  aclDataType dt[NT];
} tcase;

static void set_shape(tcase *c, int i, int64_t rank, int64_t d0, int64_t d1) {
  c->rank[i] = rank;
  c->dims[i][0] = d0;
  c->dims[i][1] = d1;
  c->strides[i][0] = rank == 2 ? d1 : 1;
  c->strides[i][1] = 1;
  c->len[i] = rank == 2 ? d0 * d1 : d0;
}

/* Makes the device blocks and tensors from c->host (which the caller filled). */
static void materialize(tcase *c) {
  int nt = c->S >= 0 ? NT : SPEC;
  for (int i = 0; i < nt; i++) {
    c->dev[i] = dev_copy(c->host[i], (size_t)c->len[i] * 8);
    if (!c->dt[i]) c->dt[i] = ACL_INT64;
    c->t[i] =
        aclCreateTensor(c->dims[i], (uint64_t)c->rank[i], c->dt[i], c->strides[i], 0,
                        ACL_FORMAT_ND, c->dims[i], (uint64_t)c->rank[i], c->dev[i]);
  }
}

static void free_case(tcase *c) {
  for (int i = 0; i < NT; i++) {
    aclDestroyTensor(c->t[i]);
    if (c->dev[i]) aclrtFree(c->dev[i]);
    free(c->host[i]);
  }
  memset(c, 0, sizeof *c);
}

static int64_t *alloc_host(tcase *c, int i) {
  c->host[i] = calloc((size_t)c->len[i], 8);
  return c->host[i];
}

/* The CANN plain sample: everything [8, 1] = 0..7, sampled [4, 1] = 0..3, bs 2. */
static void plain_sample(tcase *c) {
  memset(c, 0, sizeof *c);
  c->n = 8, c->nq = 4, c->bs = 2, c->S = -1;
  for (int i = 0; i < SPEC; i++) {
    set_shape(c, i, 2, i == SAMP ? 4 : 8, 1);
    int64_t *h = alloc_host(c, i);
    for (int64_t k = 0; k < c->len[i]; k++) h[k] = k;
  }
  materialize(c);
}

/* The CANN V2 sample (without its pointer mix-ups). */
static void spec_sample(tcase *c) {
  memset(c, 0, sizeof *c);
  c->n = 8, c->nq = 8, c->bs = 8, c->S = 1;
  int shape_of[NT][3] = {{1, 16, 0}, {2, 8, 2},    {1, 16, 0}, {1, 16, 0},
                         {1, 16, 0}, {2, 8, 1000}, {2, 8, 1},  {1, 8, 0}};
  for (int i = 0; i < NT; i++) {
    set_shape(c, i, shape_of[i][0], shape_of[i][1], shape_of[i][2]);
    int64_t *h = alloc_host(c, i);
    for (int64_t k = 0; k < c->len[i]; k++) h[k] = i == TAB ? 7 : k % 8;
  }
  materialize(c);
}

static aclnnStatus phase1(tcase *c, int version, uint64_t *ws, aclOpExecutor **ex) {
  if (version == 1)
    return aclnnAdvanceStepGetWorkspaceSize(c->t[TOK], c->t[SAMP], c->t[POS], c->t[LENS],
                                            c->t[SLOT], c->t[TAB], c->n, c->nq, c->bs, ws,
                                            ex);
  return aclnnAdvanceStepV2GetWorkspaceSize(c->t[TOK], c->t[SAMP], c->t[POS], c->t[LENS],
                                            c->t[SLOT], c->t[TAB], c->t[SPEC], c->t[ACC],
                                            c->n, c->nq, c->bs, ws, ex);
}

static aclnnStatus phase2(int version, uint64_t ws, aclOpExecutor *ex, aclrtStream s) {
  return version == 1 ? aclnnAdvanceStep(NULL, ws, ex, s)
                      : aclnnAdvanceStepV2(NULL, ws, ex, s);
}

/* Element k of tensor i of c in row-major view order (contiguous host copy layout). */
static int64_t *hat(tcase *c, int i, int64_t k) {
  if (c->rank[i] == 1) return &c->host[i][k * c->strides[i][0]];
  int64_t r = k / c->dims[i][1], col = k % c->dims[i][1];
  return &c->host[i][r * c->strides[i][0] + col * c->strides[i][1]];
}

/* The reference: applies CANN's formula to the host copies. */
static void reference(tcase *c) {
  if (c->S < 0) {
    int64_t flat_n = c->dims[TAB][0] * (c->rank[TAB] == 2 ? c->dims[TAB][1] : 1);
    int64_t stride = flat_n / c->n;
    for (int64_t q = 0; q < c->nq; q++) {
      int64_t pos = *hat(c, LENS, q);
      *hat(c, TOK, q) = *hat(c, SAMP, q);
      *hat(c, POS, q) = pos;
      *hat(c, LENS, q) = pos + 1;
      *hat(c, SLOT, q) = (*hat(c, TAB, pos / c->bs) + stride * q) * c->bs + pos % c->bs;
    }
    for (int64_t q = c->nq; q < c->n; q++)
      *hat(c, TOK, q) = 0, *hat(c, POS, q) = 0, *hat(c, SLOT, q) = -1;
    return;
  }
  int64_t T = c->S + 1, mb = c->dims[TAB][1];
  for (int64_t i = 0; i < c->n; i++) {
    for (int64_t j = 0; j < T; j++) {
      int64_t k = i * T + j, pos = *hat(c, POS, k) + *hat(c, ACC, i) + 1;
      *hat(c, POS, k) = pos;
      *hat(c, LENS, k) = pos + 1;
      *hat(c, SLOT, k) = *hat(c, TAB, i * mb + pos / c->bs) * c->bs + pos % c->bs;
    }
    int64_t f = T;
    for (int64_t j = 0; j < T; j++)
      if (*hat(c, SAMP, i * T + j) == -1) {
        f = j;
        break;
      }
    *hat(c, TOK, i * T) = *hat(c, SAMP, i * T + f - 1);
    for (int64_t s = 0; s < c->S; s++)
      *hat(c, TOK, i * T + 1 + s) = *hat(c, SPEC, i * c->S + s);
  }
}

/* Device blocks equal the host copies (whole blocks: padding too). */
static int same(tcase *c) {
  int nt = c->S >= 0 ? NT : SPEC;
  for (int i = 0; i < nt; i++) {
    size_t bytes = (size_t)c->len[i] * 8;
    int64_t *d = malloc(bytes);
    aclrtMemcpy(d, bytes, c->dev[i], bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    int ok = memcmp(d, c->host[i], bytes) == 0;
    free(d);
    if (!ok) return 0;
  }
  return 1;
}

static void test_samples(aclrtStream stream) {
  for (int version = 1; version <= 2; version++) {
    tcase c;
    plain_sample(&c);
    uint64_t ws = 1;
    aclOpExecutor *ex = NULL;
    EQ(phase1(&c, version, &ws, &ex), ACLNN_SUCCESS);
    EQ(ws, 0);
    EQ(phase2(version, ws, ex, stream), ACLNN_SUCCESS);
    int64_t want[4][8] = {{0, 1, 2, 3, 0, 0, 0, 0},
                          {0, 1, 2, 3, 0, 0, 0, 0},
                          {1, 2, 3, 4, 4, 5, 6, 7},
                          {0, 3, 6, 9, -1, -1, -1, -1}};
    int outs[4] = {TOK, POS, LENS, SLOT};
    for (int k = 0; k < 4; k++) memcpy(c.host[outs[k]], want[k], sizeof want[k]);
    TU_CHECK(same(&c), "plain sample, version %d", version);
    free_case(&c);
  }
  tcase c;
  spec_sample(&c);
  uint64_t ws = 1;
  aclOpExecutor *ex = NULL;
  EQ(phase1(&c, 2, &ws, &ex), ACLNN_SUCCESS);
  EQ(phase2(2, ws, ex, stream), ACLNN_SUCCESS);
  int64_t tok[16] = {1, 0, 3, 1, 5, 2, 7, 3, 1, 4, 3, 5, 5, 6, 7, 7};
  int64_t pos[16] = {1, 2, 4, 5, 7, 8, 10, 11, 5, 6, 8, 9, 11, 12, 14, 15};
  int64_t slot[16] = {57, 58, 60, 61, 63, 56, 58, 59, 61, 62, 56, 57, 59, 60, 62, 63};
  memcpy(c.host[TOK], tok, sizeof tok);
  memcpy(c.host[POS], pos, sizeof pos);
  memcpy(c.host[SLOT], slot, sizeof slot);
  for (int k = 0; k < 16; k++) c.host[LENS][k] = pos[k] + 1;
  TU_CHECK(same(&c), "speculative sample");
  free_case(&c);
}

/* ------------------------------------------------------------- random */

static void random_plain(tcase *c, int strided, int one_d_table) {
  memset(c, 0, sizeof *c);
  c->n = tu_rand_range(2, 300), c->nq = tu_rand_range(1, c->n - 1);
  c->bs =
      tu_rand_range(1, 4) == 1 ? tu_rand_range(1, 40) : (int64_t)1 << tu_rand_range(0, 6);
  c->S = -1;
  int64_t m = one_d_table ? 1 : tu_rand_range(1, 9);
  for (int i = 0; i < SPEC; i++) {
    int64_t rows = i == SAMP ? c->nq : c->n;
    int rank = i == SAMP || (i == TAB && !one_d_table) ? 2
               : i == TAB                              ? 1
                                                       : (int)tu_rand_range(1, 2);
    set_shape(c, i, rank, rows, i == TAB ? m : 1);
    if (strided && rank == 2) { /* padded rows */
      c->strides[i][0] = c->dims[i][1] + tu_rand_range(1, 3);
      c->len[i] = rows * c->strides[i][0];
    } else if (strided && rank == 1) {
      c->strides[i][0] = tu_rand_range(1, 3);
      c->len[i] = (rows - 1) * c->strides[i][0] + 1;
    }
    int64_t *h = alloc_host(c, i);
    for (int64_t k = 0; k < c->len[i]; k++) h[k] = tu_rand_range(-5, 1000); /* padding */
  }
  int64_t flat_n = c->n * m;
  for (int64_t k = 0; k < flat_n; k++) *hat(c, TAB, k) = tu_rand_range(0, 5000);
  for (int64_t q = 0; q < c->nq; q++)
    *hat(c, LENS, q) = tu_rand_range(0, flat_n * c->bs - 1); /* a valid flat index */
  for (int64_t q = c->nq; q < c->n; q++) *hat(c, LENS, q) = tu_rand_range(-100, 100);
  materialize(c);
}

static void random_spec(tcase *c) {
  memset(c, 0, sizeof *c);
  c->n = tu_rand_range(1, 100), c->nq = c->n, c->bs = tu_rand_range(6, 16),
  c->S = tu_rand_range(1, 4);
  int64_t T = c->S + 1, mb = tu_rand_range(1, 12), L = c->n * T;
  int64_t shape_of[NT][3] = {{1, L, 0}, {2, c->n, T},  {1, L, 0},       {1, L, 0},
                             {1, L, 0}, {2, c->n, mb}, {2, c->n, c->S}, {1, c->n, 0}};
  for (int i = 0; i < NT; i++) {
    set_shape(c, i, shape_of[i][0], shape_of[i][1], shape_of[i][2]);
    int64_t *h = alloc_host(c, i);
    for (int64_t k = 0; k < c->len[i]; k++) h[k] = tu_rand_range(0, 1000);
  }
  for (int64_t i = 0; i < c->n; i++) {
    int64_t acc = tu_rand_range(0, T - 1);
    c->host[ACC][i] = acc;
    for (int64_t j = 0; j < T; j++) {
      c->host[POS][i * T + j] =
          tu_rand_range(0, mb * c->bs - acc - 2); /* new pos in the table */
      if (j > acc) c->host[SAMP][i * T + j] = -1; /* rejected drafts */
    }
  }
  materialize(c);
}

static void attach_opt(tcase *c, int i, int64_t rank, int64_t d0, int64_t d1);
static void reshape(tcase *c, int i, int64_t rank, int64_t d0, int64_t d1);

static void test_random(aclrtStream stream) {
  for (int it = 0; it < 200; it++) {
    tcase c;
    int version = 1 + it % 2;
    random_plain(&c, it % 3 == 1, it % 7 == 3);
    if (version == 2 && it % 4 == 1) { /* no draft tokens: plain mode */
      attach_opt(&c, SPEC, 2, c.n, 0);
      if (it % 8 == 1) attach_opt(&c, ACC, 1, c.n, 0);
    }
    uint64_t ws;
    aclOpExecutor *ex = NULL;
    EQ(phase1(&c, version, &ws, &ex), ACLNN_SUCCESS);
    EQ(phase2(version, ws, ex, stream), ACLNN_SUCCESS);
    reference(&c);
    TU_CHECK(same(&c), "random plain case %d (n=%lld nq=%lld bs=%lld)", it,
             (long long)c.n, (long long)c.nq, (long long)c.bs);
    free_case(&c);
  }
  for (int it = 0; it < 100; it++) {
    tcase c;
    random_spec(&c);
    uint64_t ws;
    aclOpExecutor *ex = NULL;
    EQ(phase1(&c, 2, &ws, &ex), ACLNN_SUCCESS);
    EQ(phase2(2, ws, ex, stream), ACLNN_SUCCESS);
    reference(&c);
    TU_CHECK(same(&c), "random speculative case %d", it);
    free_case(&c);
  }
}

/* ------------------------------------------- V2 with an empty specToken */

/* Gives a plain case (c->S < 0) the optional tensor i (SPEC or ACC) of rank `rank` and
 * dims d0, d1: with elements, a block of values 0..3 (checked unchanged by opt_same);
 * empty, no block and NULL data. The case stays a plain one (reference, same). */
static void attach_opt(tcase *c, int i, int64_t rank, int64_t d0, int64_t d1) {
  set_shape(c, i, rank, d0, d1);
  int64_t *h = alloc_host(c, i);
  for (int64_t k = 0; k < c->len[i]; k++) h[k] = k % 4;
  c->dev[i] = c->len[i] ? dev_copy(h, (size_t)c->len[i] * 8) : NULL;
  c->t[i] = aclCreateTensor(c->dims[i], (uint64_t)rank, ACL_INT64, c->strides[i], 0,
                            ACL_FORMAT_ND, c->dims[i], (uint64_t)rank, c->dev[i]);
}

/* The optional blocks (inputs only) are unchanged. */
static int opt_same(tcase *c) {
  for (int i = SPEC; i < NT; i++) {
    if (!c->dev[i]) continue;
    size_t bytes = (size_t)c->len[i] * 8;
    int64_t *d = malloc(bytes);
    aclrtMemcpy(d, bytes, c->dev[i], bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    int ok = memcmp(d, c->host[i], bytes) == 0;
    free(d);
    if (!ok) return 0;
  }
  return 1;
}

/* CANN's tiling counts specToken / acceptedNum as given only when non-NULL with
 * elements, checks the shape of each one given, and runs speculative mode only when
 * both are given: an empty specToken ([numSeqs, 0], no draft tokens) means plain mode,
 * with its rules (numSeqs > numQueries, sampledTokenIds [numQueries, 1]) and its
 * flat-table formula. Accepted calls are checked against the plain-mode reference. */
static void test_empty_spec(aclrtStream stream) {
  /* {specToken rank, d0, d1, acceptedNum rank, d0} on the plain sample (n 8, nq 4);
   * rank 0: NULL */
  static const int64_t ok_cases[][5] = {
      {2, 8, 0, 1, 8}, /* empty specToken, acceptedNum given */
      {2, 8, 0, 0, 0}, /* empty specToken, acceptedNum NULL */
      {2, 8, 0, 1, 0}, /* both empty */
      {2, 0, 5, 1, 8}, /* empty in its other dim: absent too, shape unchecked */
      {0, 0, 0, 1, 8}, /* specToken NULL, acceptedNum given */
      {2, 8, 3, 0, 0}, /* specToken given, acceptedNum NULL: plain mode all the same */
      {2, 8, 3, 1, 0}, /* specToken given, acceptedNum empty */
  };
  for (size_t k = 0; k < sizeof ok_cases / sizeof ok_cases[0]; k++) {
    const int64_t *oc = ok_cases[k];
    tcase c;
    plain_sample(&c);
    if (oc[0]) attach_opt(&c, SPEC, oc[0], oc[1], oc[2]);
    if (oc[3]) attach_opt(&c, ACC, oc[3], oc[4], 0);
    uint64_t ws = 1;
    aclOpExecutor *ex = NULL;
    EQ(phase1(&c, 2, &ws, &ex), ACLNN_SUCCESS);
    EQ(ws, 0);
    EQ(phase2(2, ws, ex, stream), ACLNN_SUCCESS);
    reference(&c); /* the plain-mode formula */
    TU_CHECK(same(&c) && opt_same(&c), "empty specToken case %zu", k);
    free_case(&c);
  }
  /* the plain sample's answer, spelled out once: slots 0 3 6 9 -1 -1 -1 -1 */
  {
    tcase c;
    plain_sample(&c);
    attach_opt(&c, SPEC, 2, 8, 0);
    attach_opt(&c, ACC, 1, 8, 0);
    uint64_t ws = 1;
    aclOpExecutor *ex = NULL;
    EQ(phase1(&c, 2, &ws, &ex), ACLNN_SUCCESS);
    EQ(phase2(2, ws, ex, stream), ACLNN_SUCCESS);
    int64_t want[4][8] = {{0, 1, 2, 3, 0, 0, 0, 0},
                          {0, 1, 2, 3, 0, 0, 0, 0},
                          {1, 2, 3, 4, 4, 5, 6, 7},
                          {0, 3, 6, 9, -1, -1, -1, -1}};
    int outs[4] = {TOK, POS, LENS, SLOT};
    for (int j = 0; j < 4; j++) memcpy(c.host[outs[j]], want[j], sizeof want[j]);
    TU_CHECK(same(&c), "plain sample with an empty specToken");
    free_case(&c);
  }
  /* refusals: {nq, sampled rows, specToken rank, d0, d1, acceptedNum rank, d0, status} */
  static const int64_t bad_cases[][8] = {
      /* numSeqs == numQueries: plain mode's rule, not speculative mode with T = 1 */
      {8, 8, 2, 8, 0, 1, 8, ACLNN_ERR_INNER_TILING_ERROR},
      {8, 8, 2, 8, 0, 0, 0, ACLNN_ERR_INNER_TILING_ERROR},
      {8, 8, 2, 8, 0, 1, 0, ACLNN_ERR_INNER_TILING_ERROR},
      /* plain mode's shapes: sampledTokenIds [numQueries, 1] */
      {4, 5, 2, 8, 0, 1, 8, ACLNN_ERR_INNER_TILING_ERROR},
      /* the given optional tensor's shape */
      {4, 4, 2, 8, 0, 1, 7, ACLNN_ERR_INNER_TILING_ERROR}, /* acceptedNum [7] */
      {4, 4, 2, 8, 0, 2, 8, ACLNN_ERR_INNER_TILING_ERROR}, /* acceptedNum [8, 8] */
      {4, 4, 2, 7, 2, 1, 0, ACLNN_ERR_INNER_TILING_ERROR}, /* specToken [7, 2] */
      {4, 4, 1, 8, 0, 0, 0, ACLNN_ERR_INNER_TILING_ERROR}, /* specToken [8] */
  };
  for (size_t k = 0; k < sizeof bad_cases / sizeof bad_cases[0]; k++) {
    const int64_t *bc = bad_cases[k];
    tcase c;
    plain_sample(&c);
    c.nq = bc[0];
    if (bc[1] != 4) { /* sampledTokenIds [bc[1], 1] in a block of its own */
      aclrtFree(c.dev[SAMP]);
      free(c.host[SAMP]);
      set_shape(&c, SAMP, 2, bc[1], 1);
      int64_t *h = alloc_host(&c, SAMP);
      for (int64_t j = 0; j < c.len[SAMP]; j++) h[j] = j;
      c.dev[SAMP] = dev_copy(h, (size_t)c.len[SAMP] * 8);
      reshape(&c, SAMP, 2, bc[1], 1);
    }
    if (bc[2]) attach_opt(&c, SPEC, bc[2], bc[3], bc[4]);
    if (bc[5]) attach_opt(&c, ACC, bc[5], bc[6], bc[6]);
    uint64_t ws = 77;
    aclOpExecutor *ex = (aclOpExecutor *)&ws;
    aclnnStatus st = phase1(&c, 2, &ws, &ex);
    TU_CHECK(st == (aclnnStatus)bc[7],
             "empty specToken refusal %zu: %d, expected %lld (%s)", k, st,
             (long long)bc[7], aclGetRecentErrMsg());
    TU_CHECK(ex == NULL && ws == 0, "empty specToken refusal %zu: outputs not cleared",
             k);
    TU_CHECK(*aclGetRecentErrMsg() != 0, "empty specToken refusal %zu: no message", k);
    TU_CHECK(same(&c) && opt_same(&c), "empty specToken refusal %zu wrote", k);
    free_case(&c);
  }
}

/* ---------------------------------------------------------- lifecycle */

static void test_lifecycle(aclrtStream stream) {
  for (int version = 1; version <= 2; version++) {
    tcase c, c2;
    plain_sample(&c);
    uint64_t ws;
    aclOpExecutor *ex = NULL;
    /* single use */
    EQ(phase1(&c, version, &ws, &ex), ACLNN_SUCCESS);
    EQ(aclSetInputTensorAddr(ex, 0, c.t[TOK], c.dev[TOK]), ACLNN_ERR_PARAM_INVALID);
    EQ(phase2(version, ws, ex, stream), ACLNN_SUCCESS);
    reference(&c);
    TU_CHECK(same(&c), "single use");
    EQ(phase2(version, ws, ex, stream), ACLNN_ERR_INNER_NULLPTR);
    TU_CHECK(same(&c), "a consumed executor wrote");
    EQ(aclDestroyAclOpExecutor(ex), ACLNN_ERR_INNER_NULLPTR);
    EQ(phase2(version, ws, NULL, stream), ACLNN_ERR_INNER_NULLPTR);
    /* destroyed before its run */
    EQ(phase1(&c, version, &ws, &ex), ACLNN_SUCCESS);
    EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
    EQ(phase2(version, ws, ex, stream), ACLNN_ERR_INNER_NULLPTR);
    TU_CHECK(same(&c), "a destroyed executor wrote");
    free_case(&c);

    /* repeatable: each run advances the state again */
    plain_sample(&c);
    c.nq = 2; /* positions stay inside the 8-element table for several steps */
    reshape(&c, SAMP, 2, 2, 1);
    EQ(phase1(&c, version, &ws, &ex), ACLNN_SUCCESS);
    EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
    for (int r = 0; r < 4; r++) {
      EQ(phase2(version, ws, ex, stream), ACLNN_SUCCESS);
      reference(&c);
      TU_CHECK(same(&c), "repeatable run %d", r);
    }
    /* re-pointed: every tensor to a second set of blocks */
    plain_sample(&c2);
    c2.nq = 2;
    reshape(&c2, SAMP, 2, 2, 1);
    for (int k = 0; k < 8; k++) c2.host[LENS][k] = 7 - k; /* other data */
    aclrtMemcpy(c2.dev[LENS], 64, c2.host[LENS], 64, ACL_MEMCPY_HOST_TO_DEVICE);
    for (int i = 0; i < SPEC; i++)
      EQ(i % 2 ? aclSetInputTensorAddr(ex, (size_t)i, c.t[i], c2.dev[i])
               : aclSetTensorAddr(ex, (size_t)i, c.t[i], c2.dev[i]),
         ACLNN_SUCCESS);
    void *raw = NULL;
    aclGetRawTensorAddr(c.t[SLOT], &raw);
    TU_CHECK(raw == c2.dev[SLOT], "the aclTensor follows the new address");
    EQ(phase2(version, ws, ex, stream), ACLNN_SUCCESS);
    reference(&c2);
    TU_CHECK(same(&c2), "re-pointed run");
    TU_CHECK(same(&c), "re-pointed run wrote the old blocks");
    EQ(phase2(version, ws, ex, stream), ACLNN_SUCCESS);
    reference(&c2);
    TU_CHECK(same(&c2), "second re-pointed run");
    /* misuse: no outputs (every tensor is an input), indices out of range */
    EQ(aclSetOutputTensorAddr(ex, 0, c.t[TOK], c.dev[TOK]), ACLNN_ERR_PARAM_INVALID);
    EQ(aclSetInputTensorAddr(ex, version == 1 ? 6 : 8, c.t[TOK], c.dev[TOK]),
       ACLNN_ERR_PARAM_INVALID);
    if (version == 2) /* specToken was absent at phase 1 */
      EQ(aclSetInputTensorAddr(ex, 6, c.t[TOK], c.dev[TOK]), ACLNN_ERR_PARAM_INVALID);
    EQ(aclSetInputTensorAddr(ex, 0, c.t[TOK], (char *)c.dev[TOK] + 8),
       ACLNN_ERR_PARAM_INVALID);
    EQ(aclSetInputTensorAddr(ex, 0, NULL, c.dev[TOK]), ACLNN_ERR_INNER_NULLPTR);
    /* a freed block is detected at the run, nothing touched */
    void *extra = NULL;
    aclrtMalloc(&extra, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(extra, 64, c2.host[SLOT], 64, ACL_MEMCPY_HOST_TO_DEVICE);
    EQ(aclSetInputTensorAddr(ex, SLOT, c.t[SLOT], extra), ACLNN_SUCCESS);
    EQ(aclrtFree(extra), ACL_SUCCESS);
    EQ(phase2(version, ws, ex, stream), ACLNN_ERR_PARAM_INVALID);
    TU_CHECK(same(&c2), "a run with a freed block wrote");
    EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
    EQ(aclDestroyAclOpExecutor(ex), ACLNN_ERR_INNER_NULLPTR);
    free_case(&c);
    free_case(&c2);
  }

  /* speculative mode: repeatable and re-pointed */
  tcase s, s2;
  spec_sample(&s);
  spec_sample(&s2);
  uint64_t ws;
  aclOpExecutor *ex = NULL;
  EQ(phase1(&s, 2, &ws, &ex), ACLNN_SUCCESS);
  EQ(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
  for (int r = 0; r < 3; r++) {
    EQ(phase2(2, ws, ex, stream), ACLNN_SUCCESS);
    reference(&s);
    TU_CHECK(same(&s), "speculative repeatable run %d", r);
  }
  for (int i = 0; i < NT; i++)
    EQ(aclSetInputTensorAddr(ex, (size_t)i, s.t[i], s2.dev[i]), 0);
  EQ(phase2(2, ws, ex, stream), ACLNN_SUCCESS);
  reference(&s2);
  TU_CHECK(same(&s2) && same(&s), "speculative re-pointed run");
  EQ(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
  free_case(&s);
  free_case(&s2);
}

/* -------------------------------------------------------------- errors */

/* What an error case alters, on tensor `ti` with the arguments a, b, c. */
typedef enum mutation {
  M_KILL,            /* the tensor NULL */
  M_RETYPE,          /* dtype a */
  M_RESHAPE,         /* rank a, dims b, c (contiguous INT64) */
  M_POKE,            /* host and device element a = b */
  M_NQ,              /* numQueries a */
  M_NQ_N,            /* numQueries numSeqs + a */
  M_BS,              /* blockSize a */
  M_N,               /* numSeqs a */
  M_NZ,              /* FRACTAL_NZ format */
  M_NEG_STRIDE,      /* [8], stride -1, offset 7 */
  M_OUTSIDE,         /* [8] at offset 1 of an 8-element block */
  M_NO_DATA,         /* [8, 1] without data */
  M_EMPTY_SPEC_ACC,  /* specToken [8, 0]; acceptedNum rank a, dims b, c */
  M_EMPTY_ACC_SPEC,  /* acceptedNum [0]; specToken rank a, dims b, c */
  M_EMPTY_SPEC_TYPE, /* specToken [8, 0] of dtype a */
} mutation;

typedef struct err_case {
  const char *what;
  int version, spec; /* spec: start from the speculative sample */
  mutation m;
  int ti;
  int64_t a, b, c;
  int code1, code2; /* expected phase-1 and (if phase 1 succeeds) phase-2 codes */
} err_case;

static void kill_tensor(tcase *c, int i) {
  aclDestroyTensor(c->t[i]);
  c->t[i] = NULL;
}
static void retype(tcase *c, int i, aclDataType dt) {
  aclDestroyTensor(c->t[i]);
  c->t[i] = aclCreateTensor(c->dims[i], (uint64_t)c->rank[i], dt, c->strides[i], 0,
                            ACL_FORMAT_ND, c->dims[i], (uint64_t)c->rank[i], c->dev[i]);
}
static void retyped_reshape(tcase *c, int i, int64_t rank, int64_t d0, int64_t d1,
                            aclDataType dt) {
  int64_t dims[2] = {d0, d1};
  aclDestroyTensor(c->t[i]);
  c->t[i] = aclCreateTensor(dims, (uint64_t)rank, dt, NULL, 0, ACL_FORMAT_ND, dims,
                            (uint64_t)rank, c->dev[i]);
}
static void reshape(tcase *c, int i, int64_t rank, int64_t d0, int64_t d1) {
  retyped_reshape(c, i, rank, d0, d1, ACL_INT64);
}
static void poke(tcase *c, int i, int64_t k, int64_t v) {
  c->host[i][k] = v;
  aclrtMemcpy(c->dev[i], (size_t)c->len[i] * 8, c->host[i], (size_t)c->len[i] * 8,
              ACL_MEMCPY_HOST_TO_DEVICE);
}

static void mutate_case(tcase *c, const err_case *e) {
  const int i = e->ti;
  int64_t d[2] = {8, 1}, st[1] = {-1};
  switch (e->m) {
    case M_KILL:
      kill_tensor(c, i);
      break;
    case M_RETYPE:
      retype(c, i, (aclDataType)e->a);
      break;
    case M_RESHAPE:
      reshape(c, i, e->a, e->b, e->c);
      break;
    case M_POKE:
      poke(c, i, e->a, e->b);
      break;
    case M_NQ:
      c->nq = e->a;
      break;
    case M_NQ_N:
      c->nq = c->n + e->a;
      break;
    case M_BS:
      c->bs = e->a;
      break;
    case M_N:
      c->n = e->a;
      break;
    case M_NZ:
      aclDestroyTensor(c->t[i]);
      c->t[i] = aclCreateTensor(c->dims[i], 2, ACL_INT64, NULL, 0, ACL_FORMAT_FRACTAL_NZ,
                                c->dims[i], 2, c->dev[i]);
      break;
    case M_NEG_STRIDE:
      aclDestroyTensor(c->t[i]);
      c->t[i] = aclCreateTensor(d, 1, ACL_INT64, st, 7, ACL_FORMAT_ND, d, 1, c->dev[i]);
      break;
    case M_OUTSIDE:
      aclDestroyTensor(c->t[i]);
      c->t[i] = aclCreateTensor(d, 1, ACL_INT64, NULL, 1, ACL_FORMAT_ND, d, 1, c->dev[i]);
      break;
    case M_NO_DATA:
      aclDestroyTensor(c->t[i]);
      c->t[i] = aclCreateTensor(d, 2, ACL_INT64, NULL, 0, ACL_FORMAT_ND, d, 2, NULL);
      break;
    case M_EMPTY_SPEC_ACC:
      reshape(c, SPEC, 2, c->n, 0);
      reshape(c, ACC, e->a, e->b, e->c);
      break;
    case M_EMPTY_ACC_SPEC:
      reshape(c, ACC, 1, 0, 0);
      reshape(c, SPEC, e->a, e->b, e->c);
      break;
    case M_EMPTY_SPEC_TYPE:
      retyped_reshape(c, SPEC, 2, c->n, 0, (aclDataType)e->a);
      break;
  }
}

static const err_case ERRS[] = {
    {"inputTokens NULL", 1, 0, M_KILL, TOK, 0, 0, 0, ACLNN_ERR_PARAM_NULLPTR, 0},
    {"sampledTokenIds NULL", 1, 0, M_KILL, SAMP, 0, 0, 0, ACLNN_ERR_PARAM_NULLPTR, 0},
    {"inputPositions NULL", 2, 0, M_KILL, POS, 0, 0, 0, ACLNN_ERR_PARAM_NULLPTR, 0},
    {"seqLens NULL", 1, 0, M_KILL, LENS, 0, 0, 0, ACLNN_ERR_PARAM_NULLPTR, 0},
    {"slotMapping NULL", 2, 0, M_KILL, SLOT, 0, 0, 0, ACLNN_ERR_PARAM_NULLPTR, 0},
    {"blockTables NULL", 1, 0, M_KILL, TAB, 0, 0, 0, ACLNN_ERR_PARAM_NULLPTR, 0},
    /* one optional tensor NULL: plain mode (CANN's tiling), which refuses the
     * speculative sample's numSeqs == numQueries */
    {"specToken NULL only", 2, 1, M_KILL, SPEC, 0, 0, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"acceptedNum NULL only", 2, 1, M_KILL, ACC, 0, 0, 0, ACLNN_ERR_INNER_TILING_ERROR,
     0},
    /* an empty specToken is absent: the same */
    {"specToken [8, 0]", 2, 1, M_RESHAPE, SPEC, 2, 8, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"specToken [0, 1]", 2, 1, M_RESHAPE, SPEC, 2, 0, 1, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"acceptedNum [0]", 2, 1, M_RESHAPE, ACC, 1, 0, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    /* the optional tensor that is given keeps its shape check in plain mode */
    {"specToken [8, 0], acceptedNum length", 2, 1, M_EMPTY_SPEC_ACC, ACC, 1, 7, 0,
     ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"acceptedNum [0], specToken dim 0", 2, 1, M_EMPTY_ACC_SPEC, SPEC, 2, 7, 1,
     ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"specToken [8, 0] INT32", 2, 1, M_EMPTY_SPEC_TYPE, SPEC, ACL_INT32, 0, 0,
     ACLNN_ERR_PARAM_INVALID, 0},
    {"a tensor without data", 1, 0, M_NO_DATA, LENS, 0, 0, 0, ACLNN_ERR_PARAM_NULLPTR, 0},
    {"inputTokens INT32", 1, 0, M_RETYPE, TOK, ACL_INT32, 0, 0, ACLNN_ERR_PARAM_INVALID,
     0},
    {"sampledTokenIds INT32", 2, 0, M_RETYPE, SAMP, ACL_INT32, 0, 0,
     ACLNN_ERR_PARAM_INVALID, 0},
    {"seqLens INT32", 1, 0, M_RETYPE, LENS, ACL_INT32, 0, 0, ACLNN_ERR_PARAM_INVALID, 0},
    {"slotMapping INT32", 1, 0, M_RETYPE, SLOT, ACL_INT32, 0, 0, ACLNN_ERR_PARAM_INVALID,
     0},
    {"blockTables INT32", 1, 0, M_RETYPE, TAB, ACL_INT32, 0, 0, ACLNN_ERR_PARAM_INVALID,
     0},
    {"blockTables INT32 (speculative)", 2, 1, M_RETYPE, TAB, ACL_INT32, 0, 0,
     ACLNN_ERR_PARAM_INVALID, 0},
    {"specToken INT32", 2, 1, M_RETYPE, SPEC, ACL_INT32, 0, 0, ACLNN_ERR_PARAM_INVALID,
     0},
    {"acceptedNum INT32", 2, 1, M_RETYPE, ACC, ACL_INT32, 0, 0, ACLNN_ERR_PARAM_INVALID,
     0},
    {"inputPositions FLOAT", 1, 0, M_RETYPE, POS, ACL_FLOAT, 0, 0,
     ACLNN_ERR_PARAM_INVALID, 0},
    {"blockTables FRACTAL_NZ", 1, 0, M_NZ, TAB, 0, 0, 0, ACLNN_ERR_PARAM_INVALID, 0},
    {"negative stride", 1, 0, M_NEG_STRIDE, POS, 0, 0, 0, ACLNN_ERR_PARAM_INVALID, 0},
    {"view outside its block", 2, 0, M_OUTSIDE, SLOT, 0, 0, 0, ACLNN_ERR_PARAM_INVALID,
     0},
    {"numSeqs == numQueries", 1, 0, M_NQ_N, 0, 0, 0, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"numSeqs == numQueries (V2 plain)", 2, 0, M_NQ_N, 0, 0, 0, 0,
     ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"numQueries > numSeqs", 1, 0, M_NQ_N, 0, 1, 0, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"numQueries 0", 1, 0, M_NQ, 0, 0, 0, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"blockSize 0", 1, 0, M_BS, 0, 0, 0, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"numSeqs 0", 2, 0, M_N, 0, 0, 0, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"numSeqs 2e8", 1, 0, M_N, 0, 200000000, 0, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"inputTokens dim 0", 1, 0, M_RESHAPE, TOK, 1, 7, 0, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"blockTables dim 0", 1, 0, M_RESHAPE, TAB, 2, 4, 2, ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"sampledTokenIds dim 0", 1, 0, M_RESHAPE, SAMP, 2, 3, 1,
     ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"sampledTokenIds dim 1", 2, 0, M_RESHAPE, SAMP, 2, 4, 2,
     ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"sampledTokenIds 1-D", 1, 0, M_RESHAPE, SAMP, 1, 4, 0, ACLNN_ERR_INNER_TILING_ERROR,
     0},
    {"spec: numQueries != numSeqs", 2, 1, M_NQ, 0, 7, 0, 0, ACLNN_ERR_INNER_TILING_ERROR,
     0},
    {"spec: inputTokens length", 2, 1, M_RESHAPE, TOK, 1, 15, 0,
     ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"spec: inputTokens 2-D", 2, 1, M_RESHAPE, TOK, 2, 8, 2, ACLNN_ERR_INNER_TILING_ERROR,
     0},
    {"spec: sampledTokenIds [n, T+1]", 2, 1, M_RESHAPE, SAMP, 2, 8, 3,
     ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"spec: specToken 1-D", 2, 1, M_RESHAPE, SPEC, 1, 8, 0, ACLNN_ERR_INNER_TILING_ERROR,
     0},
    {"spec: acceptedNum length", 2, 1, M_RESHAPE, ACC, 1, 7, 0,
     ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"spec: blockTables 1-D", 2, 1, M_RESHAPE, TAB, 1, 8, 0, ACLNN_ERR_INNER_TILING_ERROR,
     0},
    {"spec: seqLens length", 2, 1, M_RESHAPE, LENS, 1, 14, 0,
     ACLNN_ERR_INNER_TILING_ERROR, 0},
    {"negative seqLens", 1, 0, M_POKE, LENS, 2, -1, 0, 0, ACLNN_ERR_PARAM_INVALID},
    {"seqLens INT64_MAX", 2, 0, M_POKE, LENS, 1, INT64_MAX, 0, 0,
     ACLNN_ERR_PARAM_INVALID},
    {"block index beyond the flat table", 1, 0, M_POKE, LENS, 3, 16, 0, 0,
     ACLNN_ERR_PARAM_INVALID}, /* block index 8 of 8 elements */
    {"block index beyond the flat table (V2)", 2, 0, M_POKE, LENS, 3, 16, 0, 0,
     ACLNN_ERR_PARAM_INVALID}, /* block index 8 of 8 elements */
    {"negative block id", 1, 0, M_POKE, TAB, 1, -3, 0, 0,
     ACLNN_ERR_PARAM_INVALID}, /* rows 2, 3 look up element 1 */
    {"slot overflow", 1, 0, M_POKE, TAB, 1, INT64_MAX / 2, 0, 0, ACLNN_ERR_PARAM_INVALID},
    {"spec: row starting with -1", 2, 1, M_POKE, SAMP, 6, -1, 0, 0,
     ACLNN_ERR_PARAM_INVALID}, /* row 3 starts with -1 */
    {"spec: position beyond max_blocks", 2, 1, M_POKE, POS, 5, 8000, 0, 0,
     ACLNN_ERR_PARAM_INVALID},
    {"spec: negative acceptedNum", 2, 1, M_POKE, ACC, 4, -2, 0, 0,
     ACLNN_ERR_PARAM_INVALID},
    {"spec: negative block id", 2, 1, M_POKE, TAB, 3001, -1, 0, 0,
     ACLNN_ERR_PARAM_INVALID}, /* row 3, block 1 */
};

static void test_errors(aclrtStream stream) {
  for (size_t k = 0; k < sizeof ERRS / sizeof ERRS[0]; k++) {
    const err_case *e = &ERRS[k];
    tcase c;
    if (e->spec)
      spec_sample(&c);
    else
      plain_sample(&c);
    mutate_case(&c, e);
    uint64_t ws = 77;
    aclOpExecutor *ex = (aclOpExecutor *)&ws;
    aclnnStatus st = phase1(&c, e->version, &ws, &ex);
    TU_CHECK(st == e->code1, "%s: phase 1 gave %d, expected %d (%s)", e->what, st,
             e->code1, aclGetRecentErrMsg());
    if (st == ACLNN_SUCCESS && e->code2) {
      st = phase2(e->version, ws, ex, stream);
      TU_CHECK(st == e->code2, "%s: phase 2 gave %d, expected %d (%s)", e->what, st,
               e->code2, aclGetRecentErrMsg());
      TU_CHECK(strstr(aclGetRecentErrMsg(), "dvance") != NULL, "%s: message %s", e->what,
               aclGetRecentErrMsg());
      EQ(phase2(e->version, ws, ex, stream),
         ACLNN_ERR_INNER_NULLPTR); /* consumed anyway */
    } else if (st != ACLNN_SUCCESS) {
      TU_CHECK(ex == NULL && ws == 0, "%s: outputs not cleared", e->what);
      TU_CHECK(*aclGetRecentErrMsg() != 0, "%s: no message", e->what);
    } else {
      aclDestroyAclOpExecutor(ex);
    }
    TU_CHECK(same(&c), "%s: something was written", e->what);
    free_case(&c);
  }
  /* NULL workspaceSize / executor */
  tcase c;
  plain_sample(&c);
  uint64_t ws;
  aclOpExecutor *ex;
  EQ(aclnnAdvanceStepGetWorkspaceSize(c.t[0], c.t[1], c.t[2], c.t[3], c.t[4], c.t[5], 8,
                                      4, 2, NULL, &ex),
     ACLNN_ERR_PARAM_NULLPTR);
  EQ(aclnnAdvanceStepV2GetWorkspaceSize(c.t[0], c.t[1], c.t[2], c.t[3], c.t[4], c.t[5],
                                        NULL, NULL, 8, 4, 2, &ws, NULL),
     ACLNN_ERR_PARAM_NULLPTR);
  /* the message names the row and the table (the native op's names, as in every
   * message of a native check) */
  poke(&c, LENS, 3, 16);
  EQ(phase1(&c, 1, &ws, &ex), ACLNN_SUCCESS);
  EQ(phase2(1, ws, ex, stream), ACLNN_ERR_PARAM_INVALID);
  TU_CHECK(strstr(aclGetRecentErrMsg(), "seq_lens[3]=16") &&
               strstr(aclGetRecentErrMsg(), "block_tables has 8 elements"),
           "message: %s", aclGetRecentErrMsg());
  /* an executor of one op is not run by the other */
  EQ(phase1(&c, 1, &ws, &ex), ACLNN_SUCCESS);
  EQ(phase2(2, ws, ex, stream), ACLNN_ERR_PARAM_INVALID);
  free_case(&c);
}

int main(void) {
  acl_test t;
  acl_test_begin(&t, 20250301, 0);
  test_samples(t.stream);
  test_samples(NULL);
  test_random(t.stream);
  test_empty_spec(t.stream);
  test_lifecycle(t.stream);
  test_errors(t.stream);
  return acl_test_end(&t, "test_aclnn_advance_step");
}
