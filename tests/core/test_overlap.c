/* core/overlap: llmk__tensors_overlap and llmk__tensor_self_overlaps against the byte
 * sets of the views, enumerated one element at a time, on random views into one buffer
 * (zero, equal, nested, interleaved and overlapping strides, every dtype size), and the
 * layouts the ops meet (K and V caches interleaved in one allocation). */
#include <string.h>

#include "core/overlap.h"
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
 * the same as [2, nb, ...]: disjoint; a value cache shifted by one element: overlapping. */
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

int main(void) {
  tu_seed(20261204);
  test_kv_layouts();
  test_random();
  return tu_finish("test_overlap");
}
