/* SPDX-License-Identifier: Apache-2.0 */
/* CANN's own test tables for aclnnAdvanceStep / aclnnAdvanceStepV2 (ops-nn
 * optim/advance_step/tests), replayed through the aclnn layer:
 *   tiling UT     test_advance_step_tiling.cpp: 12 cases, each an aclnn call with the
 *                 case's shapes, dtypes and attributes (V1 for the 6-input case, V2 for
 *                 the 8-input ones); refused cases are CANN's 561002 (the tiling), or
 *                 161002 for a dtype (CANN's doc: dtypes are checked before the tiling);
 *   infershape UT test_advance_step_infershape.cpp: x1 [16, 1] INT64 accepted, and the
 *                 in-place outputs keep x1's shape and dtype;
 *   kernel UT     test_advance_step.cpp + gen_data.py: the plain case (16 sequences, 8
 *                 queries, block size 8, values in [0, 10)) and the speculative case
 *                 (16 sequences, 2 draft tokens, block size 128, a [16, 10000] table);
 *   ST            atk_aclnnAdvanceStep.json (201 cases) and atk_aclnnAdvanceStepV2.json
 *                 (100 cases): each case's shapes and value ranges, inputs drawn
 *                 deterministically in those ranges (a splitmix64 stream per case and
 *                 tensor), the result against a golden computed here from CANN's formula
 *                 (its executors' torch code: the flat table lookup plus the row offset
 * in plain mode, the per-row lookup and the last accepted token in V2). Every accepted
 * case is compared with the golden, all blocks, byte for byte; every refused case checks
 * the status, a NULL executor, a zero workspace size, a message naming the argument and
 * that no block changed.
 *
 * A documented difference: in plain mode CANN's kernel pads only every 40th padding row
 * (its loop steps by the core count), where the layer pads every row, as vLLM and the
 * native op do. Cases whose CANN golden carries that are counted as "listed": their rows
 * not affected by it must equal CANN's golden (transcribed for the V1 ST, recomputed
 * from CANN's formula for the kernel UT), and the affected rows the layer's padding.
 *
 * The V2 ST's block tables are [numSeqs, 10000] INT64 (up to 794 MB a case, 42 GB in
 * all); by default the cases of at most 96 MiB run, LLMK_REPLAY_ALL=1 runs all 100.
 * Each table prints "passed / listed / total" (and how many cases ran). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn_tspec.h"
#include "aclnnop/aclnn_advance_step.h"
#include "aclnnop/aclnn_advance_step_v2.h"

enum { TOK, SAMP, POS, LENS, SLOT, TAB, SPEC, ACC, NT };
static const char *const NAMES[NT] = {"inputTokens", "sampledTokenIds", "inputPositions",
                                      "seqLens",     "slotMapping",     "blockTables",
                                      "specToken",   "acceptedNum"};

#define CANN_CORES 40 /* the core count of CANN's UTs and its ST executor */

/* ------------------------------------------------------------------ cases */

typedef struct shape {
  int rank; /* -1: the tensor is NULL (absent) */
  int64_t d[3];
} shape;

typedef struct rcase {
  const char *name;
  int version; /* 1: aclnnAdvanceStep (6 tensors), 2: aclnnAdvanceStepV2 (8) */
  int64_t n, nq, bs;
  shape sh[NT];
  int float_at;           /* this tensor is FLOAT (a dtype case); -1: none */
  int64_t lo[NT], hi[NT]; /* values drawn in [lo, hi] */
  aclnnStatus want;
  const char *word; /* a refusal's message names this */
  uint64_t seed;
} rcase;

static shape S1(int64_t a) {
  shape s = {1, {a, 0, 0}};
  return s;
}
static shape S2(int64_t a, int64_t b) {
  shape s = {2, {a, b, 0}};
  return s;
}
static shape S3(int64_t a, int64_t b, int64_t c) {
  shape s = {3, {a, b, c}};
  return s;
}
static const shape NONE = {-1, {0, 0, 0}};

static void ranges(rcase *c, int64_t lo, int64_t hi) {
  for (int i = 0; i < NT; i++) c->lo[i] = lo, c->hi[i] = hi;
}

/* The speculative shapes of CANN's tiling UT: tensors of numSeqs * (1 + specNum),
 * sampled [numSeqs, 1 + specNum], table [numSeqs, maxBlocks], specToken
 * [numSeqs, specNum], acceptedNum [numSeqs]; values in the V2 ST's [0, 100]. */
static rcase spec_case(const char *name, int64_t n, int64_t s, int64_t mb, int64_t bs) {
  rcase c;
  memset(&c, 0, sizeof c);
  c.name = name;
  c.version = 2;
  c.n = n, c.nq = n, c.bs = bs;
  int64_t len = n * (1 + s);
  c.sh[TOK] = c.sh[POS] = c.sh[LENS] = c.sh[SLOT] = S1(len);
  c.sh[SAMP] = S2(n, 1 + s);
  c.sh[TAB] = S2(n, mb);
  c.sh[SPEC] = S2(n, s);
  c.sh[ACC] = S1(n);
  c.float_at = -1;
  ranges(&c, 0, 100);
  c.want = ACLNN_SUCCESS;
  return c;
}

/* -------------------------------------------------------------- the data */

static uint64_t mix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

typedef struct blocks {
  int64_t elems[NT];
  size_t bytes[NT];
  int64_t *host[NT]; /* INT64 values in row-major order (the FLOAT tensor: raw bytes) */
  void *dev[NT];
  aclTensor *t[NT];
} blocks;

static int64_t numel(const shape *s) {
  int64_t n = 1;
  for (int d = 0; d < s->rank; d++) n *= s->d[d];
  return n;
}

static void make_blocks(const rcase *c, blocks *b) {
  memset(b, 0, sizeof *b);
  int nt = c->version == 1 ? SPEC : NT;
  for (int i = 0; i < nt; i++) {
    if (c->sh[i].rank < 0) continue;
    b->elems[i] = numel(&c->sh[i]);
    size_t es = i == c->float_at ? 4 : 8;
    b->bytes[i] = (size_t)(b->elems[i] ? b->elems[i] : 1) * es;
    b->host[i] = malloc(b->bytes[i] < 8 ? 8 : b->bytes[i]);
    uint64_t x = c->seed * 0x100000001b3ull + (uint64_t)i;
    uint64_t span = (uint64_t)(c->hi[i] - c->lo[i]) + 1;
    for (int64_t k = 0; k < b->elems[i]; k++) {
      int64_t v = c->lo[i] + (int64_t)(mix(&x) % span);
      if (es == 8)
        b->host[i][k] = v;
      else
        ((float *)b->host[i])[k] = (float)v;
    }
    b->dev[i] = dev_copy(b->host[i], b->bytes[i]);
    int64_t strides[3], st = 1;
    for (int d = c->sh[i].rank - 1; d >= 0; d--) strides[d] = st, st *= c->sh[i].d[d];
    b->t[i] = aclCreateTensor(
        c->sh[i].d, (uint64_t)c->sh[i].rank, i == c->float_at ? ACL_FLOAT : ACL_INT64,
        strides, 0, ACL_FORMAT_ND, c->sh[i].d, (uint64_t)c->sh[i].rank, b->dev[i]);
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

/* Device block i equals want (bytes[i] bytes); read back in chunks (the V2 ST's tables
 * reach 794 MB). */
static bool dev_equals(const blocks *b, int i, const void *want) {
  enum { CHUNK = 1 << 20 };
  static unsigned char d[CHUNK];
  for (size_t at = 0; at < b->bytes[i]; at += CHUNK) {
    size_t n = b->bytes[i] - at < CHUNK ? b->bytes[i] - at : CHUNK;
    aclrtMemcpy(d, n, (unsigned char *)b->dev[i] + at, n, ACL_MEMCPY_DEVICE_TO_HOST);
    if (memcmp(d, (const unsigned char *)want + at, n) != 0) return false;
  }
  return true;
}

static int64_t *dev_read(const blocks *b, int i) {
  int64_t *d = malloc(b->bytes[i]);
  aclrtMemcpy(d, b->bytes[i], b->dev[i], b->bytes[i], ACL_MEMCPY_DEVICE_TO_HOST);
  return d;
}

/* ----------------------------------------------------------- the goldens */

/* CANN's plain formula (its doc, kernel and ST executor) on the host copies g[]:
 * the flat table, rowStride = its element count / numSeqs. pad_every: the padding
 * rows written are numQueries + m * pad_every (1: every row, the layer's; 40: CANN's
 * kernel); queries_cap: queries at or past it are not updated (CANN's kernel: its core
 * count; the layer: none). */
static void golden_plain(const rcase *c, int64_t *g[NT], const int64_t elems[NT],
                         int64_t pad_every, int64_t queries_cap) {
  int64_t stride = elems[TAB] / c->n;
  for (int64_t q = 0; q < c->nq && q < queries_cap; q++) {
    int64_t pos = g[LENS][q];
    g[TOK][q] = g[SAMP][q];
    g[POS][q] = pos;
    g[LENS][q] = pos + 1;
    g[SLOT][q] = (g[TAB][pos / c->bs] + stride * q) * c->bs + pos % c->bs;
  }
  for (int64_t q = c->nq; q < c->n; q += pad_every)
    g[TOK][q] = 0, g[POS][q] = 0, g[SLOT][q] = -1;
}

/* CANN's V2 formula (its ST executor): positions advance by acceptedNum + 1, seqLens =
 * positions + 1, the per-row lookup, and the row's last token found as the first
 * minimum of the row with -1 appended, minus one. */
static void golden_spec(const rcase *c, int64_t *g[NT]) {
  int64_t S = c->sh[SPEC].d[1], T = S + 1, mb = c->sh[TAB].d[1];
  for (int64_t i = 0; i < c->n; i++) {
    for (int64_t j = 0; j < T; j++) {
      int64_t k = i * T + j, pos = g[POS][k] + g[ACC][i] + 1;
      g[POS][k] = pos;
      g[LENS][k] = pos + 1;
      g[SLOT][k] = g[TAB][i * mb + pos / c->bs] * c->bs + pos % c->bs;
    }
    int64_t m = T, mv = -1; /* the appended -1 */
    for (int64_t j = T - 1; j >= 0; j--)
      if (g[SAMP][i * T + j] <= mv) mv = g[SAMP][i * T + j], m = j;
    g[TOK][i * T] = g[SAMP][i * T + m - 1];
    for (int64_t s = 0; s < S; s++) g[TOK][i * T + 1 + s] = g[SPEC][i * S + s];
  }
}

static bool spec_mode(const rcase *c) {
  return c->version == 2 && c->sh[SPEC].rank >= 0 && numel(&c->sh[SPEC]) > 0 &&
         c->sh[ACC].rank >= 0 && numel(&c->sh[ACC]) > 0;
}

/* ------------------------------------------------------------- the runner */

typedef struct tally {
  const char *table;
  int passed, listed, total, ran;
} tally;

static void tally_print(const tally *t) {
  printf("%-44s passed %3d / listed %3d / total %3d", t->table, t->passed, t->listed,
         t->total);
  if (t->ran != t->total) printf("  (ran %d; LLMK_REPLAY_ALL=1 runs all)", t->ran);
  printf("\n");
}

/* CANN's golden rows that the layer's differ from (CANN's kernel padding), or NULL. */
typedef struct quirk {
  const int64_t *cann[4]; /* tokens, positions, seqLens, slots as CANN's table has them
                           * (NULL: recompute from CANN's formula with its padding) */
} quirk;

/* Runs one case; returns 1 if it behaved as expected. affected: rows where CANN's
 * golden (with its kernel's padding) differs from the layer's. */
static int run_case(const rcase *c, aclrtStream stream, const quirk *qk, int *affected) {
  long failures_before = tu_failures;
  blocks b;
  make_blocks(c, &b);
  uint64_t ws = 7;
  aclOpExecutor *ex = (aclOpExecutor *)&ws;
  aclnnStatus st;
  if (c->version == 1)
    st = aclnnAdvanceStepGetWorkspaceSize(b.t[TOK], b.t[SAMP], b.t[POS], b.t[LENS],
                                          b.t[SLOT], b.t[TAB], c->n, c->nq, c->bs, &ws,
                                          &ex);
  else
    st = aclnnAdvanceStepV2GetWorkspaceSize(b.t[TOK], b.t[SAMP], b.t[POS], b.t[LENS],
                                            b.t[SLOT], b.t[TAB], b.t[SPEC], b.t[ACC],
                                            c->n, c->nq, c->bs, &ws, &ex);
  TU_CHECK(st == c->want, "%s: status %d, want %d (%s)", c->name, (int)st, (int)c->want,
           aclGetRecentErrMsg());
  int nt = c->version == 1 ? SPEC : NT;
  if (c->want != ACLNN_SUCCESS || st != ACLNN_SUCCESS) {
    if (st != ACLNN_SUCCESS) {
      TU_CHECK(ex == NULL && ws == 0, "%s: refused with an executor or a size", c->name);
      const char *msg = aclGetRecentErrMsg();
      TU_CHECK(msg &&
                   strstr(msg, c->version == 1 ? "aclnnAdvanceStep:"
                                               : "aclnnAdvanceStepV2:") &&
                   (!c->word || strstr(msg, c->word)),
               "%s: message \"%s\" should name %s", c->name, msg ? msg : "(null)",
               c->word ? c->word : "the op");
    } else {
      aclDestroyAclOpExecutor(ex);
    }
    for (int i = 0; i < nt; i++)
      if (b.dev[i])
        TU_CHECK(dev_equals(&b, i, b.host[i]), "%s: %s written by a refused call",
                 c->name, NAMES[i]);
    free_blocks(&b);
    return tu_failures == failures_before;
  }
  TU_CHECK(ws == 0, "%s: workspace %llu", c->name, (unsigned long long)ws);
  st = c->version == 1 ? aclnnAdvanceStep(NULL, ws, ex, stream)
                       : aclnnAdvanceStepV2(NULL, ws, ex, stream);
  TU_CHECK(st == ACLNN_SUCCESS, "%s: phase 2 status %d (%s)", c->name, (int)st,
           aclGetRecentErrMsg());

  /* the golden, on copies of the written blocks (the others: the host blocks) */
  int64_t *g[NT] = {0};
  static const bool written[NT] = {true, false, true, true, true, false, false, false};
  for (int i = 0; i < nt; i++)
    if (b.host[i] && written[i]) {
      g[i] = malloc(b.bytes[i]);
      memcpy(g[i], b.host[i], b.bytes[i]);
    } else {
      g[i] = b.host[i];
    }
  bool spec = spec_mode(c);
  if (spec)
    golden_spec(c, g);
  else
    golden_plain(c, g, b.elems, 1, INT64_MAX);
  for (int i = 0; i < nt; i++)
    if (g[i])
      TU_CHECK(dev_equals(&b, i, g[i]), "%s: %s differs from the golden", c->name,
               NAMES[i]);

  /* CANN's own golden, with its kernel's padding */
  *affected = 0;
  if (!spec && qk) {
    int64_t *cg[NT] = {0};
    for (int i = 0; i < SPEC; i++) {
      cg[i] = malloc(b.bytes[i]);
      memcpy(cg[i], b.host[i], b.bytes[i]);
    }
    golden_plain(c, cg, b.elems, CANN_CORES, CANN_CORES);
    static const int outs[4] = {TOK, POS, LENS, SLOT};
    for (int o = 0; o < 4; o++)
      if (qk->cann[o]) /* CANN's transcribed table agrees with CANN's formula */
        for (int64_t q = 0; q < c->n; q++)
          TU_CHECK(qk->cann[o][q] == cg[outs[o]][q],
                   "%s: CANN's table %s[%lld] = %lld, its formula gives %lld", c->name,
                   NAMES[outs[o]], (long long)q, (long long)qk->cann[o][q],
                   (long long)cg[outs[o]][q]);
    int64_t *d[4];
    for (int o = 0; o < 4; o++) d[o] = dev_read(&b, outs[o]);
    for (int64_t q = 0; q < c->n; q++) {
      bool differs = false;
      for (int o = 0; o < 4; o++) differs |= cg[outs[o]][q] != g[outs[o]][q];
      if (!differs) {
        for (int o = 0; o < 4; o++)
          TU_CHECK(d[o][q] == cg[outs[o]][q],
                   "%s: row %lld (not padded by CANN's kernel "
                   "either) %s %lld, CANN %lld",
                   c->name, (long long)q, NAMES[outs[o]], (long long)d[o][q],
                   (long long)cg[outs[o]][q]);
      } else {
        (*affected)++;
        TU_CHECK(q >= c->nq && d[0][q] == 0 && d[1][q] == 0 && d[3][q] == -1 &&
                     d[2][q] == b.host[LENS][q],
                 "%s: row %lld is not the layer's padding", c->name, (long long)q);
      }
    }
    for (int o = 0; o < 4; o++) free(d[o]);
    for (int i = 0; i < SPEC; i++) free(cg[i]);
  }
  for (int i = 0; i < nt; i++)
    if (written[i]) free(g[i]);
  free_blocks(&b);
  return tu_failures == failures_before;
}

/* ---------------------------------------------------------------- tables */

static void table_tiling(aclrtStream stream) {
  tally t = {"tiling UT (test_advance_step_tiling.cpp)", 0, 0, 12, 0};
  rcase cs[12];
  int n = 0;
  cs[n] = spec_case("test_000_AdvanceStepTiling_2", 100, 3, 1000, 100);
  cs[n++].seed = 1000;
  /* specNum 0: an empty specToken is absent, plain mode, numSeqs == numQueries */
  cs[n] = spec_case("test_003_AdvanceStepTiling_error_spec_num", 100, 0, 1000, 100);
  cs[n].want = ACLNN_ERR_INNER_TILING_ERROR, cs[n++].word = "numQueries";
  cs[n] = spec_case("test_004_AdvanceStepTiling_error_num_seqs", 0, 3, 1000, 100);
  cs[n].want = ACLNN_ERR_INNER_TILING_ERROR, cs[n++].word = "numSeqs";
  cs[n] =
      spec_case("test_005_AdvanceStepTiling_error_input_token_shape", 200, 3, 1000, 100);
  cs[n].sh[TOK] = S2(200, 4);
  cs[n].want = ACLNN_ERR_INNER_TILING_ERROR, cs[n++].word = "inputTokens";
  cs[n] = spec_case("test_006_..._error_sampled_token_ids_shape", 200, 3, 1000, 100);
  cs[n].sh[SAMP] = S3(200, 4, 2);
  cs[n].want = ACLNN_ERR_INNER_TILING_ERROR, cs[n++].word = "sampledTokenIds";
  cs[n] = spec_case("test_007_AdvanceStepTiling_input_postions_shape", 200, 3, 1000, 100);
  cs[n].sh[POS] = S2(200, 4);
  cs[n].want = ACLNN_ERR_INNER_TILING_ERROR, cs[n++].word = "inputPositions";
  cs[n] = spec_case("test_008_AdvanceStepTiling_block_tables_shape", 200, 3, 1000, 100);
  cs[n].sh[TAB] = S1(800);
  cs[n].want = ACLNN_ERR_INNER_TILING_ERROR, cs[n++].word = "blockTables";
  /* specToken [200, 4]: the other tensors then have the wrong length, inputTokens first
   */
  cs[n] = spec_case("test_008_AdvanceStepTiling_spec_token_shape", 200, 3, 1000, 100);
  cs[n].sh[SPEC] = S2(200, 4);
  cs[n].want = ACLNN_ERR_INNER_TILING_ERROR, cs[n++].word = "inputTokens";
  cs[n] = spec_case("test_09_..._error_accepted_num_shape", 200, 3, 1000, 100);
  cs[n].sh[ACC] = S2(200, 2);
  cs[n].want = ACLNN_ERR_INNER_TILING_ERROR, cs[n++].word = "acceptedNum";
  /* dtypes: CANN's tiling refuses them too; through aclnn its doc's 161002 comes first */
  cs[n] = spec_case("test_010_..._error_input_tokens_dtype", 200, 3, 1000, 100);
  cs[n].float_at = TOK;
  cs[n].want = ACLNN_ERR_PARAM_INVALID, cs[n++].word = "inputTokens";
  cs[n] = spec_case("test_011_..._error_slot_mapping_dtype", 200, 3, 1000, 100);
  cs[n].float_at = SLOT;
  cs[n].want = ACLNN_ERR_PARAM_INVALID, cs[n++].word = "slotMapping";
  /* V1: [8, 1] tensors, sampled [4, 1], numSeqs 8, numQueries 4, blockSize 2 (no data
   * in the UT: values in [0, 7], every lookup inside the 8-entry table) */
  rcase v1;
  memset(&v1, 0, sizeof v1);
  v1.name = "AdvanceStepTiling_01";
  v1.version = 1;
  v1.n = 8, v1.nq = 4, v1.bs = 2;
  for (int i = 0; i < SPEC; i++) v1.sh[i] = S2(i == SAMP ? 4 : 8, 1);
  v1.sh[SPEC] = v1.sh[ACC] = NONE;
  v1.float_at = -1;
  ranges(&v1, 0, 7);
  v1.want = ACLNN_SUCCESS;
  cs[n++] = v1;
  for (int i = 0; i < n; i++) {
    if (!cs[i].seed) cs[i].seed = 1000 + (uint64_t)i;
    int affected = 0;
    t.ran++;
    t.passed += run_case(&cs[i], stream, NULL, &affected);
  }
  tally_print(&t);
}

static void table_infershape(aclrtStream stream) {
  tally t = {"infershape UT (test_advance_step_infershape)", 0, 0, 1, 1};
  /* x1 [16, 1] INT64; the rest as in the kernel UT (16 sequences, 8 queries) */
  rcase c;
  memset(&c, 0, sizeof c);
  c.name = "AdvanceStep_infershape_case_0";
  c.version = 1;
  c.n = 16, c.nq = 8, c.bs = 8;
  for (int i = 0; i < SPEC; i++) c.sh[i] = S2(i == SAMP ? 8 : 16, 1);
  c.sh[SPEC] = c.sh[ACC] = NONE;
  c.float_at = -1;
  ranges(&c, 0, 9);
  c.want = ACLNN_SUCCESS;
  c.seed = 2000;
  int affected = 0, ok = run_case(&c, stream, NULL, &affected);
  /* InferShape gives the four outputs x1's shape and dtype; here they are x1-shaped
   * INT64 tensors written in place, which run_case compared with the golden. */
  t.passed += ok;
  tally_print(&t);
}

static void table_kernel(aclrtStream stream) {
  tally t = {"kernel UT (test_advance_step.cpp)", 0, 0, 2, 2};
  /* test_advance_step_int_0: gen_data.py '(16, 1)' '(8, 1)': every block of 16 values
   * in [0, 10) (sampled 8), the table [16, 1]; numSeqs 16, numQueries 8, blockSize 8.
   * CANN's golden pads row 8 only (8 padding rows, 40 cores): listed. */
  rcase c;
  memset(&c, 0, sizeof c);
  c.name = "test_advance_step_int_0";
  c.version = 1;
  c.n = 16, c.nq = 8, c.bs = 8;
  for (int i = 0; i < SPEC; i++) c.sh[i] = S1(i == SAMP ? 8 : 16);
  c.sh[SAMP] = S2(8, 1);
  c.sh[TAB] = S2(16, 1);
  c.sh[SPEC] = c.sh[ACC] = NONE;
  c.float_at = -1;
  ranges(&c, 0, 9);
  c.want = ACLNN_SUCCESS;
  c.seed = 3000;
  quirk qk = {{NULL, NULL, NULL, NULL}};
  int affected = 0;
  int ok = run_case(&c, stream, &qk, &affected);
  TU_CHECK(affected == 7, "kernel UT: %d rows affected by CANN's padding, expected 7",
           affected);
  if (ok && affected == 7) {
    printf(
        "  test_advance_step_int_0 listed: CANN's kernel leaves rows 9..15 unpadded; "
        "the layer pads them, rows 0..8 equal CANN's golden\n");
    t.listed++;
  }
  /* test_advance_step_int_2: speculative, 16 sequences, specNum 2, blockSize 128, the
   * tiling's table stride 10000; the UT gives no data and checks none: values in the
   * V2 ST's range [0, 100]. */
  rcase s = spec_case("test_advance_step_int_2", 16, 2, 10000, 128);
  s.seed = 3001;
  t.passed += run_case(&s, stream, NULL, &affected);
  tally_print(&t);
}

static void table_st_v1(aclrtStream stream) {
  tally t = {"ST atk_aclnnAdvanceStep.json", 0, 0, 201, 0};
  /* All 201 cases are alike: inputTokens, inputPositions, seqLens, slotMapping [8] of 1,
   * sampledTokenIds [4, 1] of 2, blockTables [8, 1] of 1, numSeqs 8, numQueries 4,
   * blockSize 4. The executor's golden (its fixed output): */
  static const int64_t tok[8] = {2, 2, 2, 2, 0, 1, 1, 1};
  static const int64_t pos[8] = {1, 1, 1, 1, 0, 1, 1, 1};
  static const int64_t lens[8] = {2, 2, 2, 2, 1, 1, 1, 1};
  static const int64_t slot[8] = {5, 9, 13, 17, -1, 1, 1, 1};
  quirk qk = {{tok, pos, lens, slot}};
  for (int id = 0; id < 201; id++) {
    rcase c;
    memset(&c, 0, sizeof c);
    c.name = "atk_aclnnAdvanceStep";
    c.version = 1;
    c.n = 8, c.nq = 4, c.bs = 4;
    for (int i = 0; i < SPEC; i++) c.sh[i] = S1(8);
    c.sh[SAMP] = S2(4, 1);
    c.sh[TAB] = S2(8, 1);
    c.sh[SPEC] = c.sh[ACC] = NONE;
    c.float_at = -1;
    ranges(&c, 1, 1);
    c.lo[SAMP] = c.hi[SAMP] = 2;
    c.want = ACLNN_SUCCESS;
    c.seed = 4000 + (uint64_t)id;
    int affected = 0;
    int ok = run_case(&c, stream, &qk, &affected);
    TU_CHECK(affected == 3, "ST V1 case %d: %d rows affected, expected 3", id, affected);
    t.ran++;
    t.listed += ok && affected == 3;
  }
  if (t.listed == t.ran)
    printf(
        "  every case listed: CANN's golden leaves rows 5..7 unpadded (tokens, positions "
        "and slots 1); the layer pads them, rows 0..4 equal CANN's golden\n");
  tally_print(&t);
}

static const struct {
  int64_t n, s;
} V2_ST[100] = {
#include "replay_advance_step_v2_st.inc"
};

static void table_st_v2(aclrtStream stream) {
  tally t = {"ST atk_aclnnAdvanceStepV2.json", 0, 0, 100, 0};
  const char *all = getenv("LLMK_REPLAY_ALL");
  bool run_all = all && strcmp(all, "1") == 0;
  for (int id = 0; id < 100; id++) {
    /* every case: blockTables [numSeqs, 10000], blockSize 8, numQueries = numSeqs, all
     * values in [0, 100] */
    if (!run_all && V2_ST[id].n * 10000 * 8 > ((int64_t)96 << 20)) continue;
    char name[64];
    snprintf(name, sizeof name, "atk_aclnnAdvanceStepV2 id %d", id);
    rcase c = spec_case(name, V2_ST[id].n, V2_ST[id].s, 10000, 8);
    c.seed = 5000 + (uint64_t)id;
    int affected = 0;
    t.ran++;
    t.passed += run_case(&c, stream, NULL, &affected);
  }
  tally_print(&t);
}

int main(void) {
  acl_test t;
  acl_test_begin(&t, 20260806, 0);
  table_tiling(t.stream);
  table_infershape(t.stream);
  table_kernel(t.stream);
  table_st_v1(t.stream);
  table_st_v2(t.stream);
  return acl_test_end(&t, "test_aclnn_replay_advance_step");
}
