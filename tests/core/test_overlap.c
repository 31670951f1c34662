/* SPDX-License-Identifier: Apache-2.0 */
/* core/overlap: llmk__tensors_overlap and llmk__tensor_self_overlaps against the byte
 * sets of the views, enumerated one element at a time, on random views into one buffer
 * (zero, equal, nested, interleaved and overlapping strides, every dtype size), and the
 * layouts the ops meet (K and V caches interleaved in one allocation). */
#include <string.h>

#include "core/overlap.h"
#include "llmk/llmk.h"
#include "test_util.h"

enum { BUF = 4096 };
static unsigned char mark[BUF];

static void elem_bytes(const llmk_tensor *t, unsigned char *set, int *self) {
  size_t esz = llmk_dtype_size(t->dtype);
  int64_t n = llmk_tensor_numel(t);
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0, r = k;
    for (int d = t->rank - 1; d >= 0; d--) {
      off += (r % t->shape[d]) * t->strides[d];
      r /= t->shape[d];
    }
    size_t b = (size_t)((unsigned char *)t->data - mark) + (size_t)off * esz;
    for (size_t j = 0; j < esz; j++) {
      if (set[b + j]) *self = 1;
      set[b + j] = 1;
    }
  }
}

static const llmk_dtype dts[4] = {LLMK_FP8_E4M3FN, LLMK_F16, LLMK_F32, LLMK_I64};

/* A random view inside mark[]: rank 0..4, extents 0..5, strides 0..9 elements, or a
 * nested contiguous-like layout with a random permutation and gaps. */
static void rand_view(llmk_tensor *t) {
retry:;
  llmk_dtype dt = dts[tu_rand_range(0, 3)];
  size_t esz = llmk_dtype_size(dt);
  int rank = (int)tu_rand_range(0, 4);
  int64_t shape[4], strides[4];
  bool nested = tu_rand_range(0, 1);
  int64_t s = tu_rand_range(1, 2);
  for (int d = rank - 1; d >= 0; d--) {
    shape[d] = tu_rand_range(0, 5) == 0 ? tu_rand_range(0, 1) : tu_rand_range(1, 5);
    if (nested) {
      strides[d] = s;
      s = s * (shape[d] > 0 ? shape[d] : 1) + tu_rand_range(0, 2);
    } else {
      strides[d] = tu_rand_range(0, 9);
    }
  }
  if (nested && rank > 1 && tu_rand_range(0, 1)) { /* a permutation of the dims */
    int a = (int)tu_rand_range(0, rank - 1), b = (int)tu_rand_range(0, rank - 1);
    int64_t x = shape[a];
    shape[a] = shape[b];
    shape[b] = x;
    x = strides[a];
    strides[a] = strides[b];
    strides[b] = x;
  }
  int64_t last = 0;
  for (int d = 0; d < rank; d++)
    if (shape[d] > 0) last += (shape[d] - 1) * strides[d];
  size_t span = (size_t)(last + 1) * esz;
  if (span > BUF / 2) goto retry;
  size_t room = BUF / 2 - span;
  size_t off = (size_t)tu_rand_range(0, (int64_t)(room / esz)) * esz;
  llmk_tensor_init(t, dt, rank, shape, strides, mark + off);
}

static void test_random(void) {
  static unsigned char sa[BUF], sb[BUF];
  for (int it = 0; it < 200000; it++) {
    llmk_tensor a, b;
    rand_view(&a);
    rand_view(&b);
    memset(sa, 0, sizeof sa);
    memset(sb, 0, sizeof sb);
    int self_a = 0, self_b = 0;
    elem_bytes(&a, sa, &self_a);
    elem_bytes(&b, sb, &self_b);
    int meet = 0;
    for (int i = 0; i < BUF && !meet; i++) meet = sa[i] && sb[i];
    llmk__overlap o = llmk__tensors_overlap(&a, &b);
    TU_CHECK(o != LLMK__UNDECIDED, "iteration %d: undecided", it);
    TU_CHECK((o == LLMK__OVERLAP) == meet, "iteration %d: overlap %d, bytes say %d", it,
             (int)o, meet);
    /* self: a true self-overlap is always reported; a report without one only for
     * strides that do not nest */
    bool so = llmk__tensor_self_overlaps(&a);
    TU_CHECK(!self_a || so, "iteration %d: self-overlap missed", it);
    if (so && !self_a) {
      bool zero = false;
      for (int d = 0; d < a.rank; d++) zero |= a.shape[d] > 1 && a.strides[d] == 0;
      TU_CHECK(!zero, "iteration %d: zero stride without a self-overlap", it);
    }
  }
}

/* K and V caches [nb, bs, H, D] interleaved in one [nb, 2, bs, H, D] allocation, and
 * the same as [2, nb, ...]: disjoint; a value cache shifted by one element: overlapping.
 */
static void test_kv_layouts(void) {
  static uint16_t kv[2 * 64 * 16 * 2 * 8];
  int64_t shape[4] = {64, 16, 2, 8}, il[4] = {2 * 16 * 2 * 8, 2 * 8, 8, 1};
  llmk_tensor k, v;
  llmk_tensor_init(&k, LLMK_BF16, 4, shape, il, kv);
  llmk_tensor_init(&v, LLMK_BF16, 4, shape, il, kv + 16 * 2 * 8);
  TU_CHECK(llmk__tensors_overlap(&k, &v) == LLMK__DISJOINT, "%s", "interleaved K/V");
  llmk_tensor_init(&v, LLMK_BF16, 4, shape, il, kv + 16 * 2 * 8 - 1);
  TU_CHECK(llmk__tensors_overlap(&k, &v) == LLMK__OVERLAP, "%s", "shifted V");
  llmk_tensor_init(&k, LLMK_BF16, 4, shape, NULL, kv);
  llmk_tensor_init(&v, LLMK_BF16, 4, shape, NULL, kv + 64 * 16 * 2 * 8);
  TU_CHECK(llmk__tensors_overlap(&k, &v) == LLMK__DISJOINT, "%s", "[2, nb, ...]");
  TU_CHECK(!llmk__tensor_self_overlaps(&k), "%s", "contiguous");
  /* a stride-0 written vector, a broadcast read one */
  int64_t n4[1] = {4}, s0[1] = {0};
  llmk_tensor p;
  llmk_tensor_init(&p, LLMK_I64, 1, n4, s0, kv);
  TU_CHECK(llmk__tensor_self_overlaps(&p), "%s", "stride 0");
  /* the check: the written tensor named, allowed pairs skipped */
  llmk__tref ts[3] = {{&k, "key_cache", true}, {&k, "key", false}, {&v, "value", false}};
  TU_CHECK(llmk__check_overlaps("t", ts, 3, NULL, 0) == LLMK_ERROR_OVERLAP, "%s",
           llmk_last_error());
  TU_CHECK(strstr(llmk_last_error(), "key_cache") && strstr(llmk_last_error(), "key"),
           "%s", llmk_last_error());
  const int allow[1][2] = {{0, 1}};
  TU_CHECK(llmk__check_overlaps("t", ts, 3, allow, 1) == LLMK_SUCCESS, "%s",
           llmk_last_error());
}

/* Phase 1 refused with LLMK_ERROR_OVERLAP, no plan, and the buffer unchanged. */
static void expect_overlap(const char *what, llmk_status st, llmk_plan *plan,
                           const void *buf, const void *copy, size_t n) {
  TU_CHECK(st == LLMK_ERROR_OVERLAP, "%s: status %d (%s)", what, (int)st,
           llmk_last_error());
  TU_CHECK(plan == NULL, "%s: a plan", what);
  TU_CHECK(!memcmp(buf, copy, n), "%s: memory written", what);
  llmk_plan_destroy(plan);
}

/* Findings 1, 3 and 4 of the fuzzing: an index tensor inside a written one (its values
 * would change after phase 2 checked them), a written vector with stride 0; and the
 * in-place pairs the docs allow, which must pass. */
static void test_ops(void) {
  static float arena[4096], copy[4096];
  for (int i = 0; i < 4096; i++) arena[i] = (float)(i % 7);
  memcpy(copy, arena, sizeof arena);
  size_t ws;
  llmk_plan *plan;
  /* 1. scatter: slot_mapping inside key_cache */
  {
    int64_t ks[3] = {4, 1, 8}, cs[4] = {2, 4, 1, 8}, ss[1] = {4};
    llmk_tensor key, cache, slots;
    llmk_tensor_init(&key, LLMK_F32, 3, ks, NULL, arena + 1024);
    llmk_tensor_init(&cache, LLMK_F32, 4, cs, NULL, arena);
    llmk_tensor_init(&slots, LLMK_I64, 1, ss, NULL, arena + 8);
    plan = NULL;
    llmk_status st = llmk_scatter_pa_kv_cache_get_workspace_size(
        &key, NULL, &cache, NULL, &slots, NULL, NULL, LLMK_KV_BLOCKS, &ws, &plan);
    expect_overlap("scatter slot_mapping in key_cache", st, plan, arena, copy,
                   sizeof arena);
    TU_CHECK(strstr(llmk_last_error(), "key_cache") &&
                 strstr(llmk_last_error(), "slot_mapping"),
             "%s", llmk_last_error());
  }
  /* 3. gather: value_out over block_tables */
  {
    int64_t cs[4] = {2, 4, 1, 8}, bt[2] = {1, 2}, sl[1] = {1}, os[3] = {1, 1, 8};
    llmk_tensor kc, vc, tab, lens, ko, vo;
    llmk_tensor_init(&kc, LLMK_F32, 4, cs, NULL, arena);
    llmk_tensor_init(&vc, LLMK_F32, 4, cs, NULL, arena + 64);
    llmk_tensor_init(&tab, LLMK_I32, 2, bt, NULL, arena + 512);
    llmk_tensor_init(&lens, LLMK_I32, 1, sl, NULL, arena + 520);
    llmk_tensor_init(&ko, LLMK_F32, 3, os, NULL, arena + 600);
    llmk_tensor_init(&vo, LLMK_F32, 3, os, NULL, arena + 508);
    plan = NULL;
    llmk_status st = llmk_gather_pa_kv_cache_get_workspace_size(
        &kc, &vc, &tab, &lens, NULL, NULL, &ko, &vo, LLMK_KV_BLOCKS, &ws, &plan);
    expect_overlap("gather value_out over block_tables", st, plan, arena, copy,
                   sizeof arena);
  }
  /* 4. advance_step, speculative: input_positions with stride 0 */
  {
    int64_t n4[1] = {4}, z[1] = {0}, n2[1] = {2}, s22[2] = {2, 2}, s21[2] = {2, 1},
            bt[2] = {2, 4};
    int64_t *a = (int64_t *)(void *)(arena + 2048);
    llmk_tensor tok, samp, pos, lens, slot, tab, spec, acc;
    llmk_tensor_init(&tok, LLMK_I64, 1, n4, NULL, a);
    llmk_tensor_init(&samp, LLMK_I64, 2, s22, NULL, a + 8);
    llmk_tensor_init(&pos, LLMK_I64, 1, n4, z, a + 16);
    llmk_tensor_init(&lens, LLMK_I64, 1, n4, NULL, a + 24);
    llmk_tensor_init(&slot, LLMK_I64, 1, n4, NULL, a + 32);
    llmk_tensor_init(&tab, LLMK_I64, 2, bt, NULL, a + 40);
    llmk_tensor_init(&spec, LLMK_I64, 2, s21, NULL, a + 56);
    llmk_tensor_init(&acc, LLMK_I64, 1, n2, NULL, a + 64);
    plan = NULL;
    llmk_status st = llmk_advance_step_get_workspace_size(
        &tok, &samp, &pos, &lens, &slot, &tab, &spec, &acc, 2, 2, 16, &ws, &plan);
    expect_overlap("advance_step positions stride 0", st, plan, arena, copy,
                   sizeof arena);
    TU_CHECK(strstr(llmk_last_error(), "input_positions"), "%s", llmk_last_error());
  }
  /* top-k/top-p: out == logits is in place (allowed); out one element off is not */
  {
    int64_t sh[2] = {2, 64}, b2[1] = {2};
    llmk_tensor logits, out, k;
    int32_t kv[2] = {3, 3};
    llmk_tensor_init(&logits, LLMK_F32, 2, sh, NULL, arena);
    llmk_tensor_init(&k, LLMK_I32, 1, b2, NULL, kv);
    llmk_tensor_init(&out, LLMK_F32, 2, sh, NULL, arena + 1);
    plan = NULL;
    llmk_status st =
        llmk_apply_top_k_top_p_get_workspace_size(&logits, NULL, &k, &out, &ws, &plan);
    expect_overlap("top-k out one element off logits", st, plan, arena, copy,
                   sizeof arena);
    out = logits;
    st = llmk_apply_top_k_top_p_get_workspace_size(&logits, NULL, &k, &out, &ws, &plan);
    TU_CHECK(st == LLMK_SUCCESS, "in place: %s", llmk_last_error());
    llmk_plan_destroy(plan);
  }
  /* conv: conv_states over x */
  {
    int64_t xs[3] = {2, 1, 8}, wsh[2] = {4, 8}, cs[3] = {2, 3, 8}, ci[1] = {2};
    int32_t idx[2] = {0, 1};
    llmk_tensor x, w, st_, cind;
    llmk_tensor_init(&x, LLMK_F32, 3, xs, NULL, arena + 3000);
    llmk_tensor_init(&w, LLMK_F32, 2, wsh, NULL, arena + 3100);
    llmk_tensor_init(&st_, LLMK_F32, 3, cs, NULL, arena + 2990);
    llmk_tensor_init(&cind, LLMK_I32, 1, ci, NULL, idx);
    plan = NULL;
    llmk_status st = llmk_fused_causal_conv1d_get_workspace_size(
        &x, &w, &st_, NULL, &cind, NULL, NULL, NULL, NULL, NULL, NULL, -1, -1, 0, 0, 0,
        LLMK_ACTIVATION_NONE, &ws, &plan);
    expect_overlap("conv conv_states over x", st, plan, arena, copy, sizeof arena);
  }
}

int main(void) {
  tu_seed(20261204);
  test_kv_layouts();
  test_ops();
  test_random();
  return tu_finish("test_overlap");
}
