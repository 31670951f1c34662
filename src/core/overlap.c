/* SPDX-License-Identifier: Apache-2.0 */
/* Memory overlap of strided tensors (core/overlap.h).
 *
 * A tensor's bytes are a set of chunks: after dropping extent-1 and stride-0 dims (they
 * add no bytes) and merging dims that continue each other, the innermost dim's elements
 * are one contiguous chunk when its stride is the element size, else each element is a
 * chunk. A view is "nested" when, outermost first, each stride is at least the span of
 * the dims inside it: its chunks are then disjoint and in address order, and the first
 * chunk ending after a byte x is found in O(rank). Two views overlap iff some chunk of
 * one meets the other; that is decided by a walk over one view's chunks that prunes every
 * sub-block outside the other's span, with a shortcut for two views of one structure at
 * different offsets (K and V caches interleaved in one allocation). */
#include "core/overlap.h"

#include <stdlib.h>

/* llmk_dtype_size without the call through the PLT (the checks run on every phase 1) */
static inline uint64_t esize(llmk_dtype dt) {
  static const uint8_t size[LLMK_DTYPE_COUNT_] = {
      [LLMK_F32] = 4, [LLMK_F16] = 2,        [LLMK_BF16] = 2,
      [LLMK_I8] = 1,  [LLMK_U8] = 1,         [LLMK_I32] = 4,
      [LLMK_I64] = 8, [LLMK_FP8_E4M3FN] = 1, [LLMK_FP8_E5M2] = 1};
  return (unsigned)dt < LLMK_DTYPE_COUNT_ ? size[dt] : 0;
}

typedef struct form {
  uintptr_t base;
  int rank; /* dims, outermost first, each with extent > 1 */
  int64_t n[LLMK_MAX_RANK];
  uint64_t s[LLMK_MAX_RANK]; /* byte strides, strictly decreasing when nested */
  uint64_t chunk;            /* bytes of one chunk (the innermost run) */
  uint64_t span;             /* bytes from base to the end of the last chunk */
  bool nested;
} form;

/* Bytes of t's data pointer is base; every size below was checked by llmk__check_tensor
 * not to overflow the span. */
static void form_of(const llmk_tensor *t, form *f) {
  uint64_t esz = esize(t->dtype);
  int64_t n[LLMK_MAX_RANK];
  uint64_t s[LLMK_MAX_RANK];
  int r = 0;
  for (int d = 0; d < t->rank; d++)
    if (t->shape[d] > 1 && t->strides[d] != 0) {
      n[r] = t->shape[d];
      s[r] = (uint64_t)t->strides[d] * esz;
      r++;
    }
  /* sort by stride, largest first (insertion sort: rank <= 8) */
  for (int i = 1; i < r; i++)
    for (int j = i; j > 0 && s[j] > s[j - 1]; j--) {
      uint64_t ts = s[j];
      s[j] = s[j - 1];
      s[j - 1] = ts;
      int64_t tn = n[j];
      n[j] = n[j - 1];
      n[j - 1] = tn;
    }
  /* merge a dim into the one inside it when it continues it (built innermost first) */
  int64_t mn[LLMK_MAX_RANK];
  uint64_t ms[LLMK_MAX_RANK];
  int m = 0;
  for (int i = r - 1; i >= 0; i--) {
    if (m > 0 && s[i] == ms[m - 1] * (uint64_t)mn[m - 1]) {
      mn[m - 1] *= n[i];
    } else {
      mn[m] = n[i];
      ms[m] = s[i];
      m++;
    }
  }
  f->rank = m;
  for (int i = 0; i < m; i++) {
    f->n[i] = mn[m - 1 - i];
    f->s[i] = ms[m - 1 - i];
  }
  f->chunk = esz;
  if (f->rank > 0 && f->s[f->rank - 1] == esz) {
    f->chunk = esz * (uint64_t)f->n[f->rank - 1];
    f->rank--;
  }
  f->base = (uintptr_t)t->data;
  uint64_t span = f->chunk;
  f->nested = true;
  for (int i = f->rank - 1; i >= 0; i--) {
    if (f->s[i] < span) f->nested = false;
    span += (uint64_t)(f->n[i] - 1) * f->s[i];
  }
  f->span = span;
}

/* The start (offset from the block's base) of the first chunk of dims [d, rank) whose end
 * is after offset x, or UINT64_MAX if none; f nested. */
static uint64_t first_end_after(const form *f, int d, uint64_t x) {
  if (d == f->rank) return x < f->chunk ? 0 : UINT64_MAX;
  uint64_t i = x / f->s[d];
  if (i >= (uint64_t)f->n[d]) i = (uint64_t)f->n[d] - 1;
  uint64_t r = first_end_after(f, d + 1, x - i * f->s[d]);
  if (r != UINT64_MAX) return i * f->s[d] + r;
  return i + 1 < (uint64_t)f->n[d] ? (i + 1) * f->s[d] : UINT64_MAX;
}

/* Whether bytes [lo, hi) (absolute) meet a chunk of g. */
static bool range_meets(const form *g, uintptr_t lo, uintptr_t hi) {
  if (hi <= g->base || lo >= g->base + g->span) return false;
  uint64_t x = lo > g->base ? (uint64_t)(lo - g->base) : 0;
  uint64_t c = first_end_after(g, 0, x);
  return c != UINT64_MAX && g->base + c < hi;
}

/* The walk over f's chunks, pruned to g's span; *work bounds the steps. Returns 1 on
 * overlap, 0 none, -1 the work ran out. */
static int walk(const form *f, int d, uintptr_t base, const form *g, int64_t *work) {
  if (--*work < 0) return -1;
  if (d == f->rank) return range_meets(g, base, base + f->chunk);
  uint64_t inner = f->chunk;
  for (int k = f->rank - 1; k > d; k--) inner += (uint64_t)(f->n[k] - 1) * f->s[k];
  /* sub-blocks i with [base + i*s, base + i*s + inner) meeting [g->base, g->base + span)
   */
  uintptr_t glo = g->base, ghi = g->base + g->span;
  uint64_t s = f->s[d];
  int64_t i0 = 0, i1 = f->n[d] - 1;
  if (glo >= base + inner) i0 = (int64_t)((glo - base - inner) / s) + 1;
  if (ghi <= base) return 0;
  if ((uint64_t)(ghi - base - 1) / s < (uint64_t)i1) i1 = (int64_t)((ghi - base - 1) / s);
  for (int64_t i = i0; i <= i1; i++) {
    int r = walk(f, d + 1, base + (uint64_t)i * s, g, work);
    if (r) return r;
  }
  return 0;
}

/* Two nested views of one structure at offsets delta apart: they meet iff some
 * sum of d_k * s_k, |d_k| < n_k, is within a chunk of delta; with nested strides only
 * the two nearest multiples need trying at each dim. */
static bool same_form_meet(const form *f, int d, int64_t delta) {
  if (d == f->rank) return delta > -(int64_t)f->chunk && delta < (int64_t)f->chunk;
  int64_t s = (int64_t)f->s[d], q = delta / s;
  for (int64_t c = q - 1; c <= q + 1; c++) {
    if (c <= -f->n[d] || c >= f->n[d]) continue;
    if (same_form_meet(f, d + 1, delta - c * s)) return true;
  }
  return false;
}

static bool same_form(const form *a, const form *b) {
  if (a->rank != b->rank || a->chunk != b->chunk) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->n[i] != b->n[i] || a->s[i] != b->s[i]) return false;
  return true;
}

#define OVERLAP_WORK ((int64_t)1 << 20)

/* The first dim from which f's dims nest (f->rank when only the chunk does). */
static int nest_from(const form *f) {
  uint64_t span = f->chunk;
  int k = f->rank;
  for (int i = f->rank - 1; i >= 0 && f->s[i] >= span; i--) {
    span += (uint64_t)(f->n[i] - 1) * f->s[i];
    k = i;
  }
  return k;
}

/* The nested view of dims [k, rank) of f at the sub-block of index number idx of the
 * dims before k. */
static void sub_form(const form *f, int k, int64_t idx, form *g) {
  uintptr_t base = f->base;
  for (int d = k - 1; d >= 0; d--) {
    base += (uint64_t)(idx % f->n[d]) * f->s[d];
    idx /= f->n[d];
  }
  g->base = base;
  g->rank = f->rank - k;
  g->chunk = f->chunk;
  g->nested = true;
  uint64_t span = f->chunk;
  for (int i = 0; i < g->rank; i++) {
    g->n[i] = f->n[k + i];
    g->s[i] = f->s[k + i];
  }
  for (int i = g->rank - 1; i >= 0; i--) span += (uint64_t)(g->n[i] - 1) * g->s[i];
  g->span = span;
}

/* Two nested views: 1 overlap, 0 none, -1 the work ran out. */
static int nested_meet(const form *a, const form *b, int64_t *work) {
  if (a->base + a->span <= b->base || b->base + b->span <= a->base) return 0;
  if (same_form(a, b)) return same_form_meet(a, 0, (int64_t)(b->base - a->base));
  return walk(a, 0, a->base, b, work);
}

llmk__overlap llmk__tensors_overlap(const llmk_tensor *a, const llmk_tensor *b) {
  if (llmk_tensor_numel(a) == 0 || llmk_tensor_numel(b) == 0) return LLMK__DISJOINT;
  uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
  uintptr_t a1 = a0 + llmk__tensor_span_bytes(a), b1 = b0 + llmk__tensor_span_bytes(b);
  if (a1 <= b0 || b1 <= a0) return LLMK__DISJOINT;
  form fa, fb;
  form_of(a, &fa);
  form_of(b, &fb);
  int64_t work = OVERLAP_WORK;
  if (fa.nested && fb.nested) {
    int r = nested_meet(&fa, &fb, &work);
    return r == 0 ? LLMK__DISJOINT : r == 1 ? LLMK__OVERLAP : LLMK__UNDECIDED;
  }
  /* views whose outer dims do not nest: each nested sub-view of one against each of
   * the other */
  int ka = nest_from(&fa), kb = nest_from(&fb);
  int64_t na = 1, nb = 1;
  for (int d = 0; d < ka; d++)
    if (__builtin_mul_overflow(na, fa.n[d], &na)) return LLMK__UNDECIDED;
  for (int d = 0; d < kb; d++)
    if (__builtin_mul_overflow(nb, fb.n[d], &nb)) return LLMK__UNDECIDED;
  if (na > OVERLAP_WORK / nb) return LLMK__UNDECIDED;
  for (int64_t i = 0; i < na; i++) {
    form sa;
    sub_form(&fa, ka, i, &sa);
    for (int64_t j = 0; j < nb; j++) {
      form sb;
      sub_form(&fb, kb, j, &sb);
      int r = nested_meet(&sa, &sb, &work);
      if (r) return r == 1 ? LLMK__OVERLAP : LLMK__UNDECIDED;
    }
  }
  return LLMK__DISJOINT;
}

bool llmk__tensor_self_overlaps(const llmk_tensor *t) {
  /* the common case first: the dims nest in their own order (row-major, padded rows) */
  uint64_t esz = esize(t->dtype), span = esz;
  bool in_order = true;
  int64_t numel = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->shape[d] == 0) return false;
    numel *= t->shape[d] > 1 ? 2 : 1; /* only whether it exceeds 1 matters */
    if (t->shape[d] == 1) continue;
    uint64_t sb = (uint64_t)t->strides[d] * esz;
    if (sb < span) in_order = false;
    span += (uint64_t)(t->shape[d] - 1) * sb;
  }
  if (numel <= 1 || in_order) return false;
  for (int d = 0; d < t->rank; d++)
    if (t->shape[d] > 1 && t->strides[d] == 0) return true;
  form f;
  form_of(t, &f);
  return !f.nested;
}

bool llmk__same_view(const llmk_tensor *a, const llmk_tensor *b) {
  if (!a || !b || a->data != b->data || a->dtype != b->dtype || a->rank != b->rank)
    return false;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d] || (a->shape[d] > 1 && a->strides[d] != b->strides[d]))
      return false;
  return true;
}

llmk_status llmk__check_overlaps(const char *op, const llmk__tref *ts, int n,
                                 const int (*allowed)[2], int n_allowed) {
  enum { MAX_REFS = 16 };
  uintptr_t lo[MAX_REFS], hi[MAX_REFS];
  if (n > MAX_REFS) return llmk__error(LLMK_ERROR_INTERNAL, op, "too many tensors");
  for (int i = 0; i < n; i++) { /* byte spans, once; empty: none */
    lo[i] = hi[i] = 0;
    const llmk_tensor *t = ts[i].t;
    if (!t) continue;
    uint64_t last = 0;
    bool empty = false;
    for (int d = 0; d < t->rank; d++) {
      empty |= t->shape[d] == 0;
      last += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
    }
    if (empty) continue;
    lo[i] = (uintptr_t)t->data;
    hi[i] = lo[i] + (last + 1) * esize(t->dtype);
  }
  for (int i = 0; i < n; i++) {
    if (!ts[i].written || lo[i] == hi[i]) continue;
    if (llmk__tensor_self_overlaps(ts[i].t))
      return llmk__error(LLMK_ERROR_OVERLAP, op,
                         "%s is written but its elements share memory (a zero or "
                         "overlapping stride)",
                         ts[i].name);
    for (int j = 0; j < n; j++) {
      if (j == i || lo[j] == hi[j] || (ts[j].written && j < i)) continue;
      if (hi[i] <= lo[j] || hi[j] <= lo[i]) continue; /* the common case */
      bool ok = false;
      for (int k = 0; k < n_allowed && !ok; k++)
        ok = (allowed[k][0] == i && allowed[k][1] == j) ||
             (allowed[k][0] == j && allowed[k][1] == i);
      if (ok) continue;
      llmk__overlap o = llmk__tensors_overlap(ts[i].t, ts[j].t);
      if (o != LLMK__DISJOINT)
        return llmk__error(LLMK_ERROR_OVERLAP, op,
                           "%s (written) %s %s: a written tensor may not share memory "
                           "with another tensor",
                           ts[i].name,
                           o == LLMK__OVERLAP ? "overlaps"
                                              : "may overlap (too many "
                                                "pieces to decide)",
                           ts[j].name);
    }
  }
  return LLMK_SUCCESS;
}
