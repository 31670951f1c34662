/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnScatterPaKvCache's compressed scenarios (scatterMode "Alibi", "Rope", "Omni";
 * CANN's scenarios 4 and 5 on an Atlas A2): random cases of every mode and dtype whose
 * device caches must equal a golden computed by
 * tests/ref/scatter_pa_kv_cache_compress_ref.c (written from CANN's description of the
 * scenarios) byte for byte; the base shapes of CANN's tiling UT and the status table
 * of docs/aclnn.md, with the caches byte-identical after every refusal. */
#include "aclnn_tspec.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "scatter_pa_kv_cache_compress_ref.h"

enum { KEY, KC, SLOT, VAL, VC, CL, CO, SL, NS };

static const char *const MODES[4] = {NULL, "Alibi", "Rope", "Omni"};

typedef struct cz_case {
  tspec t[NS];
  int mode;
  const char *cache_mode, *scatter_mode;
  int64_t B, H, Dk, Dv, nb, bs, N;
  int64_t slots[64], lens[64], offs[64], seqs[16];
} cz_case;

static acl_test g_t;

static aclnnStatus phase1(cz_case *c, uint64_t *ws, aclOpExecutor **ex) {
  aclTensor *t[NS];
  for (int i = 0; i < NS; i++) t[i] = c->t[i].present ? c->t[i].t : NULL;
  char cm[16] = "", sm[16] = "";
  if (c->cache_mode) strcpy(cm, c->cache_mode);
  if (c->scatter_mode) strcpy(sm, c->scatter_mode);
  return aclnnScatterPaKvCacheGetWorkspaceSize(
      t[KEY], t[KC], t[SLOT], t[VAL], t[VC], t[CL], t[CO], t[SL],
      c->cache_mode ? cm : NULL, c->scatter_mode ? sm : NULL, NULL, NULL, ws, ex);
}

static aclnnStatus call(cz_case *c) {
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  aclnnStatus st = phase1(c, &ws, &ex);
  if (st) return st;
  void *w = NULL;
  if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  st = aclnnScatterPaKvCache(w, ws, ex, g_t.stream);
  if (w) aclrtFree(w);
  aclrtSynchronizeStream(g_t.stream);
  return st;
}

static void build_all(cz_case *c) {
  for (int i = 0; i < NS; i++) build(&c->t[i]);
}

static void free_all(cz_case *c) {
  for (int i = 0; i < NS; i++) unbuild(&c->t[i]);
}

/* A valid case of `mode`: B sequences of H heads, disjoint slot runs in random order,
 * some padding pairs, offsets -1, 0, L and inside (Rope, Omni). */
static void gen(cz_case *c, int mode, aclDataType dt, aclDataType it) {
  memset(c, 0, sizeof *c);
  c->mode = mode;
  c->scatter_mode = MODES[mode];
  c->cache_mode = tu_rand_range(0, 1) ? "Norm" : "";
  c->B = tu_rand_range(1, 4);
  c->H = tu_rand_range(1, 4);
  c->Dk = 16 * tu_rand_range(1, 4);
  c->Dv = tu_rand_range(0, 3) ? c->Dk : 16 * tu_rand_range(1, 4);
  c->bs = tu_rand_range(1, 16);
  int64_t n[64];
  for (int64_t b = 0; b < c->B; b++) {
    c->seqs[b] = tu_rand_range(0, 6) == 0 ? 0 : tu_rand_range(1, 10);
    c->N += c->seqs[b];
  }
  for (int64_t i = 0; i < c->B * c->H; i++) {
    int64_t L = c->seqs[i / c->H];
    if (mode == CZREF_ALIBI) {
      c->lens[i] = tu_rand_range(0, L);
      n[i] = c->lens[i];
      continue;
    }
    int64_t pick = tu_rand_range(0, 5);
    int64_t o = pick == 0 ? -1 : pick == 1 ? L : tu_rand_range(0, L);
    int64_t w = o >= 0 && o < L ? tu_rand_range(0, L - o) : tu_rand_range(0, L);
    c->offs[i] = o;
    c->lens[i] = w;
    int comp = !(o == -1 || w == 0 || o == L);
    n[i] = comp ? L - w + (mode == CZREF_ROPE) : L;
  }
  int64_t at = tu_rand_range(0, 2);
  for (int64_t i = c->B * c->H - 1; i >= 0; i--) {
    c->slots[i] = at;
    at += n[i] + tu_rand_range(0, 1);
  }
  c->nb = at / c->bs + 1;
  if (c->nb * c->bs < c->N) c->nb = c->N / c->bs + 1; /* the tiling's room check */
  for (int64_t i = 0; i < c->B * c->H; i++)
    if (tu_rand_range(0, 9) == 0) c->slots[i] = -1;
  spec(&c->t[KEY], dt, 3, c->N, c->H, c->Dk, tu_rand_range(0, 1) * 16);
  spec(&c->t[VAL], dt, 3, c->N, c->H, c->Dv, 0);
  spec4(&c->t[KC], dt, c->nb, c->bs, 1, c->Dk);
  spec4(&c->t[VC], dt, c->nb, c->bs, 1, c->Dv);
  int64_t BH = c->B * c->H;
  spec(&c->t[SLOT], it, 1, BH, 0, 0, 0);
  c->t[SLOT].ivals = c->slots;
  spec(&c->t[CL], it, 1, BH, 0, 0, 0);
  c->t[CL].ivals = c->lens;
  spec(&c->t[SL], it, 1, c->B, 0, 0, 0);
  c->t[SL].ivals = c->seqs;
  spec(&c->t[CO], it, 1, BH, 0, 0, 0);
  c->t[CO].ivals = c->offs;
  /* Alibi: CANN checks the offsets' dtype, then ignores them; sometimes pass them */
  if (mode == CZREF_ALIBI && tu_rand_range(0, 1)) c->t[CO].present = false;
}

/* The golden: CANN's formula over the host copies (build() copied them to `ref`). */
static int golden(cz_case *c) {
  llmk_tensor d[NS];
  for (int i = 0; i < NS; i++)
    if (c->t[i].present) ndesc(&c->t[i], &d[i]);
  return czref_scatter(c->mode, &d[KEY], &d[VAL], &d[KC], &d[VC], &d[SLOT], &d[CL],
                       c->mode == CZREF_ALIBI ? NULL : &d[CO], &d[SL]);
}

static void test_values(void) {
  const aclDataType dts[3] = {ACL_FLOAT16, ACL_BF16, ACL_INT8};
  for (int mode = 1; mode <= 3; mode++)
    for (int r = 0; r < 60; r++) {
      cz_case c;
      aclDataType dt = dts[tu_rand_range(
          0, mode == CZREF_ALIBI ? 2 : 1)]; /* CANN: Rope and Omni f16/bf16 */
      gen(&c, mode, dt, tu_rand_range(0, 1) ? ACL_INT64 : ACL_INT32);
      build_all(&c);
      EQ(call(&c), ACLNN_SUCCESS);
      TU_CHECK(golden(&c) == 0, "%s #%d: golden refused", MODES[mode], r);
      TU_CHECK(dev_is(&c.t[KC], c.t[KC].ref) && dev_is(&c.t[VC], c.t[VC].ref),
               "%s #%d dt %d: caches differ from the golden", MODES[mode], r, (int)dt);
      free_all(&c);
    }
}

/* CANN's scenario 4 / 5 shapes (its doc): key [num_tokens, num_head, k_head_size],
 * caches [num_blocks, block_size, 1, k_head_size], slotMapping and compressLens
 * [batch * num_head], seqLens [batch]; by hand for one Rope and one Omni pair. */
static void test_by_hand(void) {
  cz_case c;
  gen(&c, CZREF_ROPE, ACL_FLOAT16, ACL_INT32);
  c.B = 1, c.H = 1, c.N = 4, c.bs = 4, c.nb = 2, c.Dk = c.Dv = 16;
  c.seqs[0] = 4, c.lens[0] = 2, c.offs[0] = 1, c.slots[0] = 3;
  spec(&c.t[KEY], ACL_FLOAT16, 3, 4, 1, 16, 0);
  spec(&c.t[VAL], ACL_FLOAT16, 3, 4, 1, 16, 0);
  spec4(&c.t[KC], ACL_FLOAT16, 2, 4, 1, 16);
  spec4(&c.t[VC], ACL_FLOAT16, 2, 4, 1, 16);
  spec(&c.t[SLOT], ACL_INT32, 1, 1, 0, 0, 0);
  spec(&c.t[CL], ACL_INT32, 1, 1, 0, 0, 0);
  spec(&c.t[CO], ACL_INT32, 1, 1, 0, 0, 0);
  spec(&c.t[SL], ACL_INT32, 1, 1, 0, 0, 0);
  build_all(&c);
  /* key rows: token t all (t + 1) * 0.5 in f16; the mean of tokens 1, 2 is 1.25 */
  uint16_t *k = (uint16_t *)(void *)c.t[KEY].host;
  for (int t = 0; t < 4; t++)
    for (int d = 0; d < 16; d++) k[t * 16 + d] = llmk_f32_to_f16((float)(t + 1) * 0.5f);
  aclrtMemcpy(c.t[KEY].dev, c.t[KEY].bytes, k, c.t[KEY].bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  unsigned char *before = malloc(c.t[KC].bytes);
  memcpy(before, c.t[KC].host, c.t[KC].bytes);
  EQ(call(&c), ACLNN_SUCCESS);
  unsigned char *got = malloc(c.t[KC].bytes);
  aclrtMemcpy(got, c.t[KC].bytes, c.t[KC].dev, c.t[KC].bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  const float want[3] = {0.5f, 1.25f, 2.0f}; /* slots 3, 4, 5 */
  for (int j = 0; j < 3; j++)
    for (int d = 0; d < 16; d++) {
      uint16_t h;
      memcpy(&h, got + ((3 + j) * 16 + d) * 2, 2);
      TU_CHECK(h == llmk_f32_to_f16(want[j]), "rope by hand: slot %d", 3 + j);
    }
  TU_CHECK(memcmp(got, before, 3 * 32) == 0 &&
               memcmp(got + 6 * 32, before + 6 * 32, c.t[KC].bytes - 6 * 32) == 0,
           "rope by hand: other slots changed");
  free(got);
  free(before);
  free_all(&c);
}

/* The base shapes of CANN's tiling UT for the compressed modes (its cases themselves are
 * replayed by test_aclnn_replay_scatter_pa_kv_cache): key/value [102, 1, 128] f16,
 * caches [306, 128, 1, 128], index tensors [102] INT32, "Alibi"; with valid values
 * (every sequence 1 token, nothing compressed) the call succeeds and matches the
 * golden. */
static void test_ut_base(void) {
  cz_case c;
  memset(&c, 0, sizeof c);
  c.mode = CZREF_ALIBI;
  c.cache_mode = "Norm";
  c.scatter_mode = "Alibi";
  spec(&c.t[KEY], ACL_FLOAT16, 3, 102, 1, 128, 0);
  spec(&c.t[VAL], ACL_FLOAT16, 3, 102, 1, 128, 0);
  spec4(&c.t[KC], ACL_FLOAT16, 306, 128, 1, 128);
  spec4(&c.t[VC], ACL_FLOAT16, 306, 128, 1, 128);
  for (int k = SLOT; k < NS; k++)
    if (k == SLOT || k >= CL) spec(&c.t[k], ACL_INT32, 1, 102, 0, 0, 0);
  int64_t ones[102], zeros[102], slots[102];
  for (int i = 0; i < 102; i++) ones[i] = 1, zeros[i] = 0, slots[i] = 3 * i;
  c.t[SL].ivals = ones;
  c.t[CL].ivals = ones;
  c.t[CO].ivals = zeros;
  c.t[SLOT].ivals = slots;
  build_all(&c);
  aclnnStatus st = call(&c);
  TU_CHECK(st == ACLNN_SUCCESS, "UT base: %d (%s)", (int)st, aclGetRecentErrMsg());
  TU_CHECK(golden(&c) == 0, "UT base: golden");
  TU_CHECK(dev_is(&c.t[KC], c.t[KC].ref) && dev_is(&c.t[VC], c.t[VC].ref),
           "UT base: caches differ from the golden");
  free_all(&c);
}

/* The status table of docs/aclnn.md for the compressed modes. */
static void test_errors(void) {
  for (int r = 0; r < 26; r++) {
    cz_case c;
    int mode = r % 3 == 0 ? CZREF_ALIBI : r % 3 == 1 ? CZREF_ROPE : CZREF_OMNI;
    if (r == 18 || r == 24) mode = CZREF_OMNI;
    if (r == 25) mode = CZREF_ALIBI;
    /* some tokens: with none, CANN's op_api answers success before any check */
    do gen(&c, mode, ACL_FLOAT16, ACL_INT32);
    while (c.N == 0);
    c.t[CO].present = true;
    aclnnStatus want = ACLNN_ERR_INNER_TILING_ERROR;
    switch (r) {
      case 0:
        c.t[CL].dt = ACL_INT64;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 1:
        c.t[CO].dt = ACL_INT64;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 2:
        c.t[SL].dt = ACL_INT64;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 3:
        c.t[CO].dt = ACL_INT64;
        want = ACLNN_ERR_PARAM_INVALID;
        break; /* Alibi */
      case 4:  /* Rope on INT8 */
        c.t[KEY].dt = c.t[VAL].dt = c.t[KC].dt = c.t[VC].dt = ACL_INT8;
        break;
      case 5:
        c.t[VAL].present = c.t[VC].present = false;
        break; /* K only */
      case 6:
        c.t[CL].present = false;
        break;
      case 7:
        c.t[SL].present = false;
        break;
      case 8:
        c.t[CO].present = false;
        break; /* Omni without offsets */
      case 9:
        spec(&c.t[SL], ACL_INT32, 2, c.B, 1, 0, 0);
        c.t[SL].ivals = c.seqs;
        break;
      case 10:
        spec4(&c.t[KEY], ACL_FLOAT16, c.N, c.H, 1, c.Dk);
        break; /* 4-D key */
      case 11:
        spec4(&c.t[SLOT], ACL_INT32, 1, 1, c.B, c.H);
        c.t[SLOT].ivals = c.slots;
        break;
      case 12:
        spec4(&c.t[KC], ACL_FLOAT16, c.nb, c.bs, 1, c.Dk + 16);
        break;
      case 13:
        spec(&c.t[VAL], ACL_FLOAT16, 3, c.N, c.H + 1, c.Dv, 0);
        break;
      case 14:
        spec4(&c.t[VC], ACL_FLOAT16, c.nb + 1, c.bs, 1, c.Dv);
        break;
      case 15: /* no room for the tokens: numBlocks * blockSize < N */
        c.seqs[0] += 40, c.N += 40;
        spec(&c.t[KEY], ACL_FLOAT16, 3, c.N, c.H, c.Dk, 0);
        spec(&c.t[VAL], ACL_FLOAT16, 3, c.N, c.H, c.Dv, 0);
        spec4(&c.t[KC], ACL_FLOAT16, 1, 2, 1, c.Dk);
        spec4(&c.t[VC], ACL_FLOAT16, 1, 2, 1, c.Dv);
        break;
      case 16:
        c.t[KC].fmt = ACL_FORMAT_FRACTAL_NZ;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 17: /* native shapes: slotMapping not [B * H] */
        spec(&c.t[SLOT], ACL_INT32, 1, c.B * c.H + 1, 0, 0, 0);
        c.t[SLOT].ivals = c.slots;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 18: /* compressSeqOffset not [B * H] (CANN's tiling reads seqLens' rank) */
        spec(&c.t[CO], ACL_INT32, 2, c.B, c.H, 0, 0);
        c.t[CO].ivals = c.offs;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 19: /* PA_NZ does not read the compress tensors (CANN's tiling ignores them):
                  the compressed caches then fail its PA_NZ shape checks */
        c.cache_mode = "PA_NZ";
        want = ACLNN_ERR_INNER_TILING_ERROR;
        break;
      /* phase 2 (161002, nothing written) */
      case 20:
        c.seqs[0] = -1;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 21:
        c.seqs[c.B - 1] += 1;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 22:
        c.lens[0] = -1;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 23:
        c.slots[0] = c.nb * c.bs;
        want = ACLNN_ERR_PARAM_INVALID;
        break;
      case 24:
        c.offs[0] = c.seqs[0] + 1;
        want = ACLNN_ERR_PARAM_INVALID;
        break; /* Omni */
      case 25:
        c.lens[0] = c.seqs[0] + 1;
        want = ACLNN_ERR_PARAM_INVALID;
        break; /* Alibi */
    }
    if (r == 19) c.t[CO].present = c.t[CL].present = true;
    build_all(&c);
    aclnnStatus st = call(&c);
    TU_CHECK(st == want, "error row %d (%s): %d, want %d (%s)", r, MODES[mode], (int)st,
             (int)want, aclGetRecentErrMsg());
    TU_CHECK(dev_is(&c.t[KC], c.t[KC].host) && dev_is(&c.t[VC], c.t[VC].host),
             "error row %d: caches written", r);
    free_all(&c);
  }
}

int main(void) {
  acl_test_begin(&g_t, 20260521, 0);
  test_by_hand();
  test_values();
  test_ut_base();
  test_errors();
  return acl_test_end(&g_t, "test_aclnn_scatter_pa_kv_cache_compress");
}
