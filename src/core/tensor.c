/* SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

llmk_status llmk_tensor_init(llmk_tensor *t, llmk_dtype dtype, int rank,
                             const int64_t *shape, const int64_t *strides, void *data) {
  static const char op[] = "tensor_init";
  if (!t) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "t is NULL");
  if (rank < 0 || rank > LLMK_MAX_RANK)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "rank=%d outside [0, %d]", rank,
                       LLMK_MAX_RANK);
  if (rank > 0 && !shape)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "shape is NULL with rank=%d", rank);
  if (llmk_dtype_size(dtype) == 0)
    return llmk__error(LLMK_ERROR_INVALID_DTYPE, op, "dtype=%d is not a dtype",
                       (int)dtype);
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "shape[%d]=%" PRId64 " is negative", i, shape[i]);
    if (strides && strides[i] < 0)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "strides[%d]=%" PRId64 " is negative", i, strides[i]);
  }
  memset(t, 0, sizeof *t);
  t->dtype = dtype;
  t->rank = rank;
  t->data = data;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; i--) {
    t->shape[i] = shape[i];
    t->strides[i] = strides ? strides[i] : stride;
    if (!strides && shape[i] > 1) {
      if (__builtin_mul_overflow(stride, shape[i], &stride))
        return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "element count overflows");
    }
  }
  return LLMK_SUCCESS;
}

int64_t llmk_tensor_numel(const llmk_tensor *t) {
  if (!t || t->rank < 0 || t->rank > LLMK_MAX_RANK) return 0;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i] <= 0) return 0;
    if (__builtin_mul_overflow(n, t->shape[i], &n)) return INT64_MAX;
  }
  return n;
}

llmk_status llmk__check_tensor(const char *op, const char *name, const llmk_tensor *t) {
  if (!t) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "%s is NULL", name);
  if (llmk_dtype_size(t->dtype) == 0)
    return llmk__error(LLMK_ERROR_INVALID_DTYPE, op, "%s.dtype=%d is not a dtype", name,
                       (int)t->dtype);
  if (t->rank < 0 || t->rank > LLMK_MAX_RANK)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "%s.rank=%d outside [0, %d]", name,
                       (int)t->rank, LLMK_MAX_RANK);
  bool empty = false;
  int64_t last = 0; /* element offset of the last element */
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i] < 0)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "%s.shape[%d]=%" PRId64 " is negative", name, i, t->shape[i]);
    if (t->strides[i] < 0)
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                         "%s.strides[%d]=%" PRId64 " is negative", name, i,
                         t->strides[i]);
    if (t->shape[i] == 0) empty = true;
  }
  if (empty) return LLMK_SUCCESS;
  for (int i = 0; i < t->rank; i++) {
    int64_t term;
    if (__builtin_mul_overflow(t->shape[i] - 1, t->strides[i], &term) ||
        __builtin_add_overflow(last, term, &last))
      return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "%s: extent overflows int64",
                         name);
  }
  int64_t bytes;
  if (__builtin_add_overflow(last, 1, &bytes) ||
      __builtin_mul_overflow(bytes, (int64_t)llmk_dtype_size(t->dtype), &bytes) ||
      (uint64_t)bytes > (uint64_t)(SIZE_MAX / 2))
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "%s: byte extent overflows", name);
  if (!t->data) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "%s.data is NULL", name);
  size_t esz = llmk_dtype_size(t->dtype);
  if ((uintptr_t)t->data % esz)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "%s.data=%p is not aligned to its element size (%zu bytes)", name,
                       t->data, esz);
  if ((uintptr_t)t->data > UINTPTR_MAX - (uintptr_t)bytes)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                       "%s: data=%p + %" PRId64 " bytes wraps the address space", name,
                       t->data, bytes);
  return LLMK_SUCCESS;
}

llmk_status llmk__check_dtype(const char *op, const char *name, const llmk_tensor *t,
                              uint32_t allowed_mask) {
  if ((unsigned)t->dtype < 32 && (allowed_mask & LLMK__DT(t->dtype))) return LLMK_SUCCESS;
  char list[160] = "";
  size_t len = 0;
  for (int d = 1; d < LLMK_DTYPE_COUNT_; d++) {
    if (!(allowed_mask & LLMK__DT(d))) continue;
    int n = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                     llmk_dtype_name((llmk_dtype)d));
    if (n < 0 || (size_t)n >= sizeof list - len) break;
    len += (size_t)n;
  }
  return llmk__error(LLMK_ERROR_INVALID_DTYPE, op, "%s.dtype=%s must be one of {%s}",
                     name, llmk_dtype_name(t->dtype), list);
}

llmk_status llmk__check_rank(const char *op, const char *name, const llmk_tensor *t,
                             int rank) {
  if (t->rank == rank) return LLMK_SUCCESS;
  return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "%s.rank=%d must be %d", name,
                     (int)t->rank, rank);
}

llmk_status llmk__check_dim(const char *op, const char *name, const llmk_tensor *t,
                            int dim, int64_t expected, const char *what) {
  if (t->shape[dim] == expected) return LLMK_SUCCESS;
  return llmk__error(LLMK_ERROR_INVALID_SHAPE, op,
                     "%s.shape[%d]=%" PRId64 " must equal %s=%" PRId64, name, dim,
                     t->shape[dim], what, expected);
}

size_t llmk__tensor_span_bytes(const llmk_tensor *t) {
  int64_t last = 0;
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i] == 0) return 0;
    last += (t->shape[i] - 1) * t->strides[i];
  }
  return (size_t)(last + 1) * llmk_dtype_size(t->dtype);
}
