/* SPDX-License-Identifier: Apache-2.0 */
/* Strided views of tensors of up to two dims, the way every op reads its index and
 * value tensors once phase 1 has checked them, and the fast divider by a fixed value. */
#ifndef LLMK_CORE_VIEW_H
#define LLMK_CORE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/convert/convert-elem.h"
#include "llmk/types.h"

/* Element (i, j) is at data + (i * s0 + j * s1) * size of dtype; s0 and s1 are the
 * strides of dims 0 and 1 in elements (0 for a dim the tensor does not have). */
typedef struct llmk__view {
  char *data;
  llmk_dtype dtype;
  bool is64; /* an integer view of i64 (else i32) */
  int64_t s0, s1;
} llmk__view;

/* The view of t (all zero for NULL). */
static inline llmk__view llmk__view_of(const llmk_tensor *t) {
  llmk__view v = {0};
  if (!t) return v;
  v.data = (char *)t->data;
  v.dtype = t->dtype;
  v.is64 = t->dtype == LLMK_I64;
  v.s0 = t->rank > 0 ? t->strides[0] : 0;
  v.s1 = t->rank > 1 ? t->strides[1] : 0;
  return v;
}

static inline char *llmk__view_at(const llmk__view *v, int64_t i, int64_t j) {
  return v->data + (size_t)(i * v->s0 + j * v->s1) * llmk_dtype_size(v->dtype);
}

/* An i32 or i64 view's element (i, j). */
static inline int64_t llmk__view_get(const llmk__view *v, int64_t i, int64_t j) {
  int64_t off = i * v->s0 + j * v->s1;
  return v->is64 ? ((const int64_t *)(const void *)v->data)[off]
                 : ((const int32_t *)(const void *)v->data)[off];
}

/* Element i of an i32 or i64 view (dim 0); an i32 view keeps the low 32 bits. */
static inline void llmk__view_set(const llmk__view *v, int64_t i, int64_t value) {
  int64_t off = i * v->s0;
  if (v->is64)
    ((int64_t *)(void *)v->data)[off] = value;
  else
    ((int32_t *)(void *)v->data)[off] = (int32_t)value;
}

/* Whether value fits the view's integer dtype. */
static inline bool llmk__view_fits(const llmk__view *v, int64_t value) {
  return v->is64 || (value >= INT32_MIN && value <= INT32_MAX);
}

/* A floating view's element (i, j) as f32. */
static inline float llmk__view_get_f(const llmk__view *v, int64_t i, int64_t j) {
  return llmk__load_f32(llmk__view_at(v, i, j), v->dtype);
}

/* Element k (in row-major order) of an i32 or i64 tensor of any rank; k < its numel. */
static inline char *llmk__flat_at(const llmk_tensor *t, int64_t k) {
  int64_t off = 0;
  for (int d = t->rank - 1; d > 0; d--) {
    off += (k % t->shape[d]) * t->strides[d];
    k /= t->shape[d];
  }
  off += k * t->strides[0];
  return (char *)t->data + (size_t)off * llmk_dtype_size(t->dtype);
}

static inline int64_t llmk__flat_get(const llmk_tensor *t, int64_t k) {
  llmk__view v = {llmk__flat_at(t, k), t->dtype, t->dtype == LLMK_I64, 0, 0};
  return llmk__view_get(&v, 0, 0);
}

static inline void llmk__flat_set(const llmk_tensor *t, int64_t k, int64_t value) {
  llmk__view v = {llmk__flat_at(t, k), t->dtype, t->dtype == LLMK_I64, 0, 0};
  llmk__view_set(&v, 0, value);
}

/* Division of non-negative int64 values by a fixed positive divisor without a divide
 * instruction: a shift for powers of two, else q = (n * m) >> (63 + l) with
 * m = ceil(2^(63+l) / d), l = ceil(log2 d), exact for every n < 2^63. */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 llmk__u128;
#endif

typedef struct llmk__divider {
  uint64_t d, m;
  int shift; /* log2(d) for a power of two, else 63 + l */
  bool pow2;
} llmk__divider;

static inline llmk__divider llmk__divider_make(int64_t d) {
  llmk__divider v = {(uint64_t)d, 0, 0, (d & (d - 1)) == 0};
  int l = 0;
  while (((uint64_t)1 << l) < v.d) l++;
  if (v.pow2) {
    v.shift = l;
  } else {
#if defined(__SIZEOF_INT128__)
    llmk__u128 num = (llmk__u128)1 << (63 + l);
    v.m = (uint64_t)((num + v.d - 1) / v.d);
#endif
    v.shift = 63 + l;
  }
  return v;
}

static inline int64_t llmk__div(const llmk__divider *v, int64_t n) {
  if (v->pow2) return (int64_t)((uint64_t)n >> v->shift);
#if defined(__SIZEOF_INT128__)
  return (int64_t)(((llmk__u128)(uint64_t)n * v->m) >> v->shift);
#else
  return (int64_t)((uint64_t)n / v->d);
#endif
}

#endif
