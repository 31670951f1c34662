/* SPDX-License-Identifier: Apache-2.0 */
/* scatter_pa_kv_cache_compressed (alibi, rope, omni): random cases against
 * tests/ref/scatter_pa_kv_cache_compress_ref.c (every dtype a mode takes, strided and
 * fused sources, padded caches, i32 and i64 indices, padding pairs, K only, offsets -1,
 * 0 and L, empty sequences), pairs that write one slot (the later wins), the statuses
 * of phase 1 and phase 2 (nothing written on a refusal), for thread counts 1 and 2.
 * Whole cache buffers are compared, gaps included. */
#include "convert_ref.h"
#include "llmk/llmk.h"
#include "ref_util.h"
#include "scatter_pa_kv_cache_compress_ref.h"
#include "test_util.h"

enum { KEY, VAL, KC, VC, SLOT, LENS, OFFS, SEQS, NT };

typedef struct cz_case {
  int mode;
  llmk_dtype dt, it;
  int64_t B, H, Dk, Dv, nb, bs, N;
  int kv;    /* value given */
  int fused; /* key and value are views of one [N, H, Dk + Dv + 3] buffer */
  int64_t cpad;
  int64_t seq[8], lens[32], offs[32], slots[32];
} cz_case;

typedef struct cz_set {
  llmk_tensor t[NT];
  void *buf[NT];
  size_t bytes[NT];
  int has[NT];
} cz_set;

static size_t esz(llmk_dtype d) {
  return ref_dtype_size(d);
}

static void *fill_alloc(size_t n, uint64_t seed) {
  unsigned char *p = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = (unsigned char)(seed >> 56);
  }
  return p;
}

/* floats in [-4, 4) so that means are not dominated by NaN/inf patterns */
static void fill_floats(void *p, size_t n, llmk_dtype dt, uint64_t seed) {
  size_t e = esz(dt);
  for (size_t i = 0; i < n / e; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    float f = (float)((double)(seed >> 11) * 0x1p-53 * 8.0 - 4.0);
    uint32_t b;
    memcpy(&b, &f, 4);
    if (dt == LLMK_F32)
      memcpy((char *)p + i * 4, &b, 4);
    else if (dt == LLMK_BF16)
      ref_store_bits(p, (int64_t)i, 2, b >> 16);
    else
      ref_store_bits(p, (int64_t)i, 2, ref_encode(REF_F16, f));
  }
}

static void idx_tensor(cz_set *s, int k, llmk_dtype it, int64_t n, const int64_t *v) {
  size_t e = esz(it);
  s->bytes[k] = (size_t)n * e;
  s->buf[k] = malloc(s->bytes[k] ? s->bytes[k] : 1);
  for (int64_t i = 0; i < n; i++) ref_store_bits(s->buf[k], i, e, (uint64_t)v[i]);
  llmk_tensor_init(&s->t[k], it, 1, &n, NULL, s->buf[k]);
  s->has[k] = 1;
}

static void build(cz_set *s, const cz_case *c) {
  memset(s, 0, sizeof *s);
  size_t e = esz(c->dt);
  int64_t W = c->Dk + c->Dv + 3;
  if (c->fused && c->kv) {
    s->bytes[KEY] = (size_t)(c->N * c->H * W) * e;
    s->buf[KEY] = fill_alloc(s->bytes[KEY], 1);
    int64_t ks[3] = {c->H * W, W, 1}, sh[3] = {c->N, c->H, c->Dk};
    llmk_tensor_init(&s->t[KEY], c->dt, 3, sh, ks, s->buf[KEY]);
    int64_t vsh[3] = {c->N, c->H, c->Dv};
    llmk_tensor_init(&s->t[VAL], c->dt, 3, vsh, ks,
                     (char *)s->buf[KEY] + (c->Dk + 2) * e);
  } else {
    for (int k = KEY; k <= VAL; k++) {
      if (k == VAL && !c->kv) break;
      int64_t D = k == KEY ? c->Dk : c->Dv;
      s->bytes[k] = (size_t)(c->N * c->H * D) * e;
      s->buf[k] = fill_alloc(s->bytes[k], 2 + (uint64_t)k);
      int64_t sh[3] = {c->N, c->H, D};
      llmk_tensor_init(&s->t[k], c->dt, 3, sh, NULL, s->buf[k]);
    }
  }
  if (c->mode == CZREF_ROPE)
    for (int k = KEY; k <= VAL; k++)
      if (s->buf[k]) fill_floats(s->buf[k], s->bytes[k], c->dt, 11 + (uint64_t)k);
  s->has[KEY] = 1;
  s->has[VAL] = c->kv;
  for (int k = KC; k <= VC; k++) {
    if (k == VC && !c->kv) break;
    int64_t D = k == KC ? c->Dk : c->Dv;
    int64_t row = D + c->cpad;
    int64_t sh[4] = {c->nb, c->bs, 1, D}, st[4] = {c->bs * row, row, D, 1};
    s->bytes[k] = (size_t)(c->nb * c->bs * row) * e;
    s->buf[k] = fill_alloc(s->bytes[k], 7 + (uint64_t)k);
    llmk_tensor_init(&s->t[k], c->dt, 4, sh, st, s->buf[k]);
    s->has[k] = 1;
  }
  int64_t BH = c->B * c->H;
  idx_tensor(s, SLOT, c->it, BH, c->slots);
  idx_tensor(s, LENS, c->it, BH, c->lens);
  if (c->mode != CZREF_ALIBI) idx_tensor(s, OFFS, c->it, BH, c->offs);
  idx_tensor(s, SEQS, c->it, c->B, c->seq);
}

static void set_free(cz_set *s) {
  for (int k = 0; k < NT; k++) free(s->buf[k]);
}

static const llmk_tensor *T(cz_set *s, int k) {
  return s->has[k] ? &s->t[k] : NULL;
}

static llmk_status p1(cz_set *s, int mode, size_t *ws, llmk_plan **plan) {
  return llmk_scatter_pa_kv_cache_compressed_get_workspace_size(
      T(s, KEY), T(s, VAL), T(s, KC), T(s, VC), T(s, SLOT), T(s, LENS), T(s, OFFS),
      T(s, SEQS), (llmk_kv_compress)mode, ws, plan);
}

static int caches_same(const cz_set *a, const cz_set *b) {
  for (int k = KC; k <= VC; k++)
    if (a->buf[k] && memcmp(a->buf[k], b->buf[k], a->bytes[k])) return 0;
  return 1;
}

static llmk_context *g_ctx2;

/* Runs the case with ctx NULL and 2 threads; expects `want` (phase 2) and the
 * reference's caches, or unchanged caches when refused. */
static void run_case(const cz_case *c, llmk_status want, const char *label) {
  for (int th = 0; th < 2; th++) {
    cz_set got, ref;
    build(&got, c);
    build(&ref, c);
    size_t ws = 99;
    llmk_plan *plan = NULL;
    llmk_status st = p1(&got, c->mode, &ws, &plan);
    TU_CHECK(st == LLMK_SUCCESS, "%s: phase 1 %s: %s", label, llmk_status_string(st),
             llmk_last_error());
    if (st != LLMK_SUCCESS) {
      set_free(&got);
      set_free(&ref);
      return;
    }
    void *w = malloc(ws ? ws : 1);
    st = llmk_scatter_pa_kv_cache(w, ws, plan, th ? g_ctx2 : NULL);
    free(w);
    TU_CHECK(st == want, "%s: phase 2 %s, want %s: %s", label, llmk_status_string(st),
             llmk_status_string(want), llmk_last_error());
    int r = czref_scatter(c->mode, &ref.t[KEY], c->kv ? &ref.t[VAL] : NULL, &ref.t[KC],
                          c->kv ? &ref.t[VC] : NULL, &ref.t[SLOT], &ref.t[LENS],
                          c->mode == CZREF_ALIBI ? NULL : &ref.t[OFFS], &ref.t[SEQS]);
    TU_CHECK((r == 0) == (want == LLMK_SUCCESS), "%s: reference says %d", label, r);
    if (r != 0 && want == LLMK_SUCCESS)
      for (int64_t i = 0; i < c->B * c->H; i++)
        fprintf(stderr,
                "  pair %" PRId64 ": L %" PRId64 " s %" PRId64 " w %" PRId64 " o %" PRId64
                "\n",
                i, c->seq[i / c->H], c->slots[i], c->lens[i], c->offs[i]);
    TU_CHECK(caches_same(&got, &ref), "%s: caches differ from the reference (th %d)",
             label, th);
    set_free(&got);
    set_free(&ref);
  }
}

static const llmk_dtype DTS[] = {LLMK_F16, LLMK_BF16, LLMK_F32, LLMK_I8};

/* A random valid case; slots are disjoint runs in a shuffled order, or overlapping
 * when `dup`. */
static void gen_case(cz_case *c, int mode, int dup) {
  memset(c, 0, sizeof *c);
  c->mode = mode;
  c->dt = DTS[tu_rand_range(0, mode == CZREF_ROPE ? 2 : 3)];
  c->it = tu_rand_range(0, 1) ? LLMK_I64 : LLMK_I32;
  c->B = tu_rand_range(1, 4);
  c->H = tu_rand_range(1, 4);
  c->Dk = tu_rand_range(1, 40);
  c->Dv = tu_rand_range(0, 3) ? c->Dk : tu_rand_range(1, 40);
  c->kv = tu_rand_range(0, 4) != 0;
  c->fused = tu_rand_range(0, 1);
  c->cpad = tu_rand_range(0, 2);
  c->bs = tu_rand_range(1, 9);
  c->N = 0;
  for (int64_t b = 0; b < c->B; b++) {
    c->seq[b] = tu_rand_range(0, 5) == 0 ? 0 : tu_rand_range(1, 12);
    c->N += c->seq[b];
  }
  int64_t need = 0, n[32];
  for (int64_t b = 0; b < c->B; b++)
    for (int64_t h = 0; h < c->H; h++) {
      int64_t i = b * c->H + h, L = c->seq[b];
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
  int64_t BH = c->B * c->H;
  /* runs laid out in a random order of pairs, with gaps */
  int64_t order[32];
  for (int64_t i = 0; i < BH; i++) order[i] = i;
  for (int64_t i = BH - 1; i > 0; i--) {
    int64_t j = tu_rand_range(0, i), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  int64_t at = tu_rand_range(0, 1);
  for (int64_t k = 0; k < BH; k++) {
    int64_t i = order[k];
    c->slots[i] = at;
    at += n[i] + tu_rand_range(0, 1);
  }
  need = at;
  c->nb = need / c->bs + 1 + tu_rand_range(0, 1);
  for (int64_t i = 0; i < BH; i++) {
    if (tu_rand_range(0, 9) == 0) c->slots[i] = -1 - tu_rand_range(0, 5);
    if (dup) c->slots[i] = tu_rand_range(0, c->nb * c->bs - (n[i] ? n[i] : 1));
  }
}

static void test_random(void) {
  char label[160];
  for (int mode = 1; mode <= 3; mode++)
    for (int r = 0; r < 150; r++) {
      cz_case c;
      gen_case(&c, mode, r % 5 == 4);
      snprintf(label, sizeof label,
               "mode %d #%d %s B%" PRId64 " H%" PRId64 " Dk%" PRId64 " Dv%" PRId64
               " kv%d fused%d dup%d",
               mode, r, llmk_dtype_name(c.dt), c.B, c.H, c.Dk, c.Dv, c.kv, c.fused,
               r % 5 == 4);
      run_case(&c, LLMK_SUCCESS, label);
    }
}

/* CANN's picture of each scenario, by hand: B = 2, H = 2, one-element rows. */
static void test_by_hand(void) {
  int64_t sh[3] = {7, 2, 1}, csh[4] = {4, 4, 1, 1};
  int32_t key[14], kc[16], slots[4] = {0, 8, 4, 12}, seqs[2] = {4, 3};
  for (int i = 0; i < 14; i++) key[i] = 100 + i; /* token t head h: 100 + 2t + h */
  struct {
    int mode;
    int32_t lens[4], offs[4], want[16];
  } cases[] = {
      /* alibi: last w tokens of each pair */
      {1,
       {2, 4, 3, 0},
       {0},
       {104, 106, -1, -1, 108, 110, 112, -1, 101, 103, 105, 107, -1, -1, -1, -1}},
      /* omni: window [o, o + w) dropped; o = -1 or w = 0 keeps all */
      {3,
       {2, 0, 1, 2},
       {1, 0, -1, 0},
       {100, 106, -1, -1, 108, 110, 112, -1, 101, 103, 105, 107, 113, -1, -1, -1}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    for (int i = 0; i < 16; i++) kc[i] = -1;
    llmk_tensor tk, tc, ts, tl, to, tq;
    int64_t four = 4, two = 2;
    llmk_tensor_init(&tk, LLMK_I32, 3, sh, NULL, key);
    llmk_tensor_init(&tc, LLMK_I32, 4, csh, NULL, kc);
    llmk_tensor_init(&ts, LLMK_I32, 1, &four, NULL, slots);
    llmk_tensor_init(&tl, LLMK_I32, 1, &four, NULL, cases[k].lens);
    llmk_tensor_init(&to, LLMK_I32, 1, &four, NULL, cases[k].offs);
    llmk_tensor_init(&tq, LLMK_I32, 1, &two, NULL, seqs);
    size_t ws;
    llmk_plan *plan;
    llmk_status st = llmk_scatter_pa_kv_cache_compressed_get_workspace_size(
        &tk, NULL, &tc, NULL, &ts, &tl, cases[k].mode == 1 ? NULL : &to, &tq,
        (llmk_kv_compress)cases[k].mode, &ws, &plan);
    if (st == LLMK_SUCCESS) st = llmk_scatter_pa_kv_cache(NULL, 0, plan, NULL);
    TU_CHECK(st == LLMK_SUCCESS, "by hand %zu: %s", k, llmk_last_error());
    TU_CHECK(memcmp(kc, cases[k].want, sizeof kc) == 0, "by hand %zu: cache differs", k);
  }
  /* rope: f32 rows 1, 2, 4, 8 of one head; window [1, 3) -> 3 */
  float fk[4] = {1, 2, 4, 8}, fc[4] = {0, 0, 0, 0}, fwant[4] = {1, 3, 8, 0};
  int32_t s1 = 0, l1 = 2, o1 = 1, q1 = 4;
  int64_t fsh[3] = {4, 1, 1}, fcsh[4] = {1, 4, 1, 1}, one = 1;
  llmk_tensor tk, tc, ts, tl, to, tq;
  llmk_tensor_init(&tk, LLMK_F32, 3, fsh, NULL, fk);
  llmk_tensor_init(&tc, LLMK_F32, 4, fcsh, NULL, fc);
  llmk_tensor_init(&ts, LLMK_I32, 1, &one, NULL, &s1);
  llmk_tensor_init(&tl, LLMK_I32, 1, &one, NULL, &l1);
  llmk_tensor_init(&to, LLMK_I32, 1, &one, NULL, &o1);
  llmk_tensor_init(&tq, LLMK_I32, 1, &one, NULL, &q1);
  size_t ws;
  llmk_plan *plan;
  llmk_status st = llmk_scatter_pa_kv_cache_compressed_get_workspace_size(
      &tk, NULL, &tc, NULL, &ts, &tl, &to, &tq, LLMK_KV_COMPRESS_ROPE, &ws, &plan);
  if (st == LLMK_SUCCESS) st = llmk_scatter_pa_kv_cache(NULL, 0, plan, NULL);
  TU_CHECK(st == LLMK_SUCCESS && memcmp(fc, fwant, sizeof fc) == 0, "rope by hand: %s",
           llmk_last_error());
}

/* Phase 2 refusals: nothing written. */
static void test_values(void) {
  char label[96];
  for (int mode = 1; mode <= 3; mode++)
    for (int kind = 0; kind < 7; kind++) {
      cz_case c;
      int tries = 0;
      do gen_case(&c, mode, 0);
      while ((c.seq[0] < 2 || c.slots[0] < 0) && ++tries < 1000);
      int64_t L = c.seq[0];
      switch (kind) {
        case 0:
          c.seq[0] = -1;
          break; /* negative seq_lens */
        case 1:
          c.seq[c.B - 1] += 1;
          break; /* sum != N */
        case 2:
          c.lens[0] = -1;
          break; /* negative compress_lens */
        case 3:  /* slot past the cache */
          c.slots[0] = c.nb * c.bs;
          c.lens[0] = 1;
          c.offs[0] = -1;
          break;
        case 4:
          c.slots[0] = c.nb * c.bs - 1;
          c.lens[0] = L;
          c.offs[0] = -1;
          break;
        case 5: /* alibi: w > L; else o > L */
          if (mode == CZREF_ALIBI)
            c.lens[0] = L + 1;
          else
            c.offs[0] = L + 1;
          break;
        case 6: /* alibi: o < -1 ignored */
          if (mode == CZREF_ALIBI)
            c.lens[0] = L + 5;
          else {
            c.offs[0] = 1;
            c.lens[0] = L; /* o + w > L */
          }
          break;
      }
      if (kind == 4 && mode == CZREF_ALIBI && L < 2) continue;
      snprintf(label, sizeof label, "values mode %d kind %d", mode, kind);
      run_case(&c, LLMK_ERROR_INVALID_VALUE, label);
    }
}

/* Phase 1 statuses. */
static void test_phase1(void) {
  cz_case c;
  gen_case(&c, CZREF_OMNI, 0);
  c.kv = 1;
  c.fused = 0;
  c.dt = LLMK_F16;
  cz_set s;
  size_t ws;
  llmk_plan *plan;
  struct {
    const char *what;
    int field, mode;
    llmk_status want;
  } rows[] = {
      {"mode 0", -1, 0, LLMK_ERROR_INVALID_ATTRIBUTE},
      {"mode 4", -1, 4, LLMK_ERROR_INVALID_ATTRIBUTE},
      {"key NULL", KEY, 3, LLMK_ERROR_NULL_POINTER},
      {"key_cache NULL", KC, 3, LLMK_ERROR_NULL_POINTER},
      {"slot_mapping NULL", SLOT, 3, LLMK_ERROR_NULL_POINTER},
      {"compress_lens NULL", LENS, 3, LLMK_ERROR_NULL_POINTER},
      {"seq_lens NULL", SEQS, 3, LLMK_ERROR_NULL_POINTER},
      {"offsets NULL (omni)", OFFS, 3, LLMK_ERROR_NULL_POINTER},
      {"offsets NULL (rope)", OFFS, 2, LLMK_ERROR_NULL_POINTER},
      {"offsets given (alibi)", -1, 1, LLMK_ERROR_INVALID_ATTRIBUTE},
      {"value_cache NULL", VC, 3, LLMK_ERROR_NULL_POINTER},
      {"value NULL", VAL, 3, LLMK_ERROR_INVALID_ATTRIBUTE},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    build(&s, &c);
    if (rows[r].field >= 0) s.has[rows[r].field] = 0;
    llmk_status st = p1(&s, rows[r].mode, &ws, &plan);
    TU_CHECK(st == rows[r].want && !plan && ws == 0, "%s: %s", rows[r].what,
             llmk_status_string(st));
    set_free(&s);
  }
  /* shapes and dtypes */
  for (int k = 0; k < 12; k++) {
    build(&s, &c);
    llmk_status want = LLMK_ERROR_INVALID_SHAPE;
    int mode = CZREF_OMNI;
    switch (k) {
      case 0:
        s.t[KC].shape[2] = 2;
        break; /* dim 2 not 1 */
      case 1:
        s.t[KC].shape[3] += 1;
        break; /* head size */
      case 2:
        s.t[VC].shape[0] += 1;
        break; /* blocks differ */
      case 3:
        s.t[SLOT].shape[0] += 1;
        break; /* not [B*H] */
      case 4:
        s.t[LENS].shape[0] -= 1;
        break;
      case 5:
        s.t[OFFS].shape[0] += 1;
        break;
      case 6:
        s.t[VAL].shape[1] += 1;
        break; /* heads differ */
      case 7:
        s.t[KC].dtype = LLMK_BF16;
        want = LLMK_ERROR_INVALID_DTYPE;
        break;
      case 8:
        s.t[SEQS].dtype = LLMK_F32;
        want = LLMK_ERROR_INVALID_DTYPE;
        break;
      case 9: /* rope of i8 */
        s.t[KEY].dtype = s.t[KC].dtype = s.t[VAL].dtype = s.t[VC].dtype = LLMK_I8;
        mode = CZREF_ROPE;
        want = LLMK_ERROR_INVALID_DTYPE;
        break;
      case 10:
        s.t[SEQS].rank = 2;
        s.t[SEQS].shape[1] = 1;
        break; /* seq_lens 2-D */
      case 11: /* the key cache over the slots */
        s.t[SLOT].data = s.buf[KC];
        want = LLMK_ERROR_OVERLAP;
        break;
    }
    llmk_status st = p1(&s, mode, &ws, &plan);
    TU_CHECK(st == want && !plan, "phase 1 shape row %d: %s (%s)", k,
             llmk_status_string(st), llmk_last_error());
    if (st == LLMK_SUCCESS) llmk_plan_destroy(plan);
    set_free(&s);
  }
}

int main(void) {
  tu_seed(20260520);
  llmk_context_create(2, &g_ctx2);
  test_by_hand();
  test_random();
  test_values();
  test_phase1();
  llmk_context_destroy(g_ctx2);
  return tu_finish("test_scatter_pa_kv_cache_compress");
}
