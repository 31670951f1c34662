/* SPDX-License-Identifier: Apache-2.0 */
// aclTensor, aclScalar, the arrays and lists, and their getters. C++ because CANN's
// getters hand out arrays that the caller frees with delete[].
#include <pthread.h>

#include <cstddef>
#include <cstring>
#include <new>

#include "acl_internal.h"

struct aclScalar {
  aclDataType dtype;
  unsigned char value[16];
};
struct aclIntArray {
  uint64_t size;
  int64_t *values;
};
struct aclFloatArray {
  uint64_t size;
  float *values;
};
struct aclBoolArray {
  uint64_t size;
  bool *values;
};
struct aclTensorList {
  uint64_t size;
  aclTensor **tensors;
};
struct aclScalarList {
  uint64_t size;
  aclScalar **scalars;
};

namespace {

aclnnStatus fail_null(const char *where, const char *what) {
  return acl__fail(ACLNN_ERR_PARAM_NULLPTR, where, "%s is NULL", what);
}

// Fills t (already allocated) with the rules of aclCreateTensor.
aclnnStatus fill_tensor(const char *where, aclTensor *t, const int64_t *viewDims,
                        uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride,
                        int64_t offset, aclFormat format, const int64_t *storageDims,
                        uint64_t storageDimsNum, void *tensorData) {
  if (viewDimsNum && !viewDims) return fail_null(where, "viewDims with viewDimsNum > 0");
  if (storageDimsNum && !storageDims)
    return fail_null(where, "storageDims with storageDimsNum > 0");
  if (viewDimsNum > ACL__MAX_DIMS || storageDimsNum > ACL__MAX_DIMS)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, where, "more than %d dims", ACL__MAX_DIMS);
  for (uint64_t i = 0; i < viewDimsNum; i++)
    if (viewDims[i] < 0)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, where, "viewDims[%llu]=%lld is negative",
                       (unsigned long long)i, (long long)viewDims[i]);
  t->magic = ACL__TENSOR_MAGIC;
  t->dtype = dataType;
  t->format = format;
  t->view_rank = viewDimsNum;
  t->storage_rank = storageDimsNum;
  for (uint64_t i = 0; i < viewDimsNum; i++) t->view_dims[i] = viewDims[i];
  if (stride) {
    for (uint64_t i = 0; i < viewDimsNum; i++) t->strides[i] = stride[i];
  } else {
    int64_t s = 1;
    for (uint64_t i = viewDimsNum; i-- > 0;) {
      t->strides[i] = s;
      if (__builtin_mul_overflow(s, viewDims[i] > 0 ? viewDims[i] : 1, &s))
        return acl__fail(ACLNN_ERR_PARAM_INVALID, where,
                         "the view has too many elements");
    }
  }
  for (uint64_t i = 0; i < storageDimsNum; i++) t->storage_dims[i] = storageDims[i];
  t->offset = offset;
  t->data = tensorData;
  return ACLNN_SUCCESS;
}

template <typename T>
aclnnStatus copy_out(const char *where, const T *src, uint64_t n, T **dst,
                     uint64_t *num) {
  T *a = new (std::nothrow) T[n ? n : 1];
  if (!a) return acl__fail(ACLNN_ERR_INNER, where, "out of memory");
  for (uint64_t i = 0; i < n; i++) a[i] = src[i];
  *dst = a;
  *num = n;
  return ACLNN_SUCCESS;
}

/* A creator's out-of-memory: the message aclGetRecentErrMsg() gives, and NULL. */
static std::nullptr_t oom(const char *where) {
  acl__fail(ACLNN_ERR_INNER, where, "out of memory");
  return nullptr;
}

template <typename A, typename T>
A *make_array(const T *value, uint64_t size) {
  if (size && !value) {
    acl__fail(ACLNN_ERR_PARAM_NULLPTR, "aclCreate*Array", "value is NULL with size > 0");
    return nullptr;
  }
  A *a = new (std::nothrow) A;
  if (!a) return oom("aclCreate*Array");
  a->size = size;
  a->values = new (std::nothrow) T[size ? size : 1];
  if (!a->values) {
    delete a;
    return oom("aclCreate*Array");
  }
  for (uint64_t i = 0; i < size; i++) a->values[i] = value[i];
  return a;
}

template <typename A>
aclnnStatus destroy_array(const A *a) {
  if (a) {
    delete[] a->values;
    delete a;
  }
  return ACLNN_SUCCESS;
}

template <typename A>
aclnnStatus array_size(const char *where, const A *a, uint64_t *size) {
  if (!a) return fail_null(where, "array");
  if (!size) return fail_null(where, "size");
  *size = a->size;
  return ACLNN_SUCCESS;
}

/* The live tensors: a destroyed (or never created) tensor is recognised without reading
 * its memory. A freed address may be reused by a later tensor; that is not detectable. */
pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
llmk__ptrset live_tensors;

}  // namespace

extern "C" {

bool acl__tensor_live(const aclTensor *t) {
  pthread_mutex_lock(&live_lock);
  bool live = llmk__ptrset_contains(&live_tensors, t);
  pthread_mutex_unlock(&live_lock);
  return live;
}

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                           aclDataType dataType, const int64_t *stride, int64_t offset,
                           aclFormat format, const int64_t *storageDims,
                           uint64_t storageDimsNum, void *tensorData) {
  aclTensor *t = new (std::nothrow) aclTensor();
  if (!t) return oom("aclCreateTensor");
  if (fill_tensor("aclCreateTensor", t, viewDims, viewDimsNum, dataType, stride, offset,
                  format, storageDims, storageDimsNum, tensorData) != ACLNN_SUCCESS) {
    delete t;
    return nullptr;
  }
  pthread_mutex_lock(&live_lock);
  bool ok = llmk__ptrset_insert(&live_tensors, t);
  pthread_mutex_unlock(&live_lock);
  if (!ok) {
    delete t;
    return oom("aclCreateTensor");
  }
  return t;
}

aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims,
                          uint64_t viewDimsNum, aclDataType dataType,
                          const int64_t *stride, int64_t offset, aclFormat format,
                          const int64_t *storageDims, uint64_t storageDimsNum,
                          void *tensorDataAddr) {
  if (!tensor) return fail_null("aclInitTensor", "tensor");
  aclTensor tmp = aclTensor();
  aclnnStatus st =
      fill_tensor("aclInitTensor", &tmp, viewDims, viewDimsNum, dataType, stride, offset,
                  format, storageDims, storageDimsNum, tensorDataAddr);
  if (st == ACLNN_SUCCESS) *tensor = tmp;
  return st;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor) {
  if (!tensor) return ACLNN_SUCCESS;
  pthread_mutex_lock(&live_lock);
  bool live = llmk__ptrset_remove(&live_tensors, tensor);
  pthread_mutex_unlock(&live_lock);
  if (!live)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyTensor",
                     "%p is not a live aclTensor (destroyed twice?)",
                     (const void *)tensor);
  const_cast<aclTensor *>(tensor)->magic = 0;
  delete tensor;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims,
                            uint64_t *viewDimsNum) {
  if (!tensor || !viewDims || !viewDimsNum)
    return fail_null("aclGetViewShape", "an argument");
  return copy_out("aclGetViewShape", tensor->view_dims, tensor->view_rank, viewDims,
                  viewDimsNum);
}

aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                               uint64_t *storageDimsNum) {
  if (!tensor || !storageDims || !storageDimsNum)
    return fail_null("aclGetStorageShape", "an argument");
  return copy_out("aclGetStorageShape", tensor->storage_dims, tensor->storage_rank,
                  storageDims, storageDimsNum);
}

aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                              uint64_t *stridesNum) {
  if (!tensor || !stridesValue || !stridesNum)
    return fail_null("aclGetViewStrides", "an argument");
  return copy_out("aclGetViewStrides", tensor->strides, tensor->view_rank, stridesValue,
                  stridesNum);
}

aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset) {
  if (!tensor || !offset) return fail_null("aclGetViewOffset", "an argument");
  *offset = tensor->offset;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format) {
  if (!tensor || !format) return fail_null("aclGetFormat", "an argument");
  *format = tensor->format;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType) {
  if (!tensor || !dataType) return fail_null("aclGetDataType", "an argument");
  *dataType = tensor->dtype;
  return ACLNN_SUCCESS;
}

aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr) {
  if (!tensor) return fail_null("aclSetRawTensorAddr", "tensor");
  tensor->data = addr;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr) {
  if (!tensor || !addr) return fail_null("aclGetRawTensorAddr", "an argument");
  *addr = tensor->data;
  return ACLNN_SUCCESS;
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType) {
  size_t n = aclDataTypeSize(dataType);
  if (!value || n == 0 || n > sizeof(aclScalar().value)) {
    acl__fail(ACLNN_ERR_PARAM_INVALID, "aclCreateScalar",
              "value NULL or dataType=%d unusable", (int)dataType);
    return nullptr;
  }
  aclScalar *s = new (std::nothrow) aclScalar();
  if (!s) return oom("aclCreateScalar");
  s->dtype = dataType;
  std::memcpy(s->value, value, n);
  return s;
}

aclnnStatus aclDestroyScalar(const aclScalar *scalar) {
  delete scalar;
  return ACLNN_SUCCESS;
}

aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size) {
  return make_array<aclIntArray>(value, size);
}
aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size) {
  return make_array<aclFloatArray>(value, size);
}
aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size) {
  return make_array<aclBoolArray>(value, size);
}
aclnnStatus aclDestroyIntArray(const aclIntArray *array) {
  return destroy_array(array);
}
aclnnStatus aclDestroyFloatArray(const aclFloatArray *array) {
  return destroy_array(array);
}
aclnnStatus aclDestroyBoolArray(const aclBoolArray *array) {
  return destroy_array(array);
}
aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size) {
  return array_size("aclGetIntArraySize", array, size);
}
aclnnStatus aclGetFloatArraySize(const aclFloatArray *array, uint64_t *size) {
  return array_size("aclGetFloatArraySize", array, size);
}
aclnnStatus aclGetBoolArraySize(const aclBoolArray *array, uint64_t *size) {
  return array_size("aclGetBoolArraySize", array, size);
}

aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size) {
  if (size && !value) {
    acl__fail(ACLNN_ERR_PARAM_NULLPTR, "aclCreateTensorList",
              "value is NULL with size > 0");
    return nullptr;
  }
  aclTensorList *l = new (std::nothrow) aclTensorList();
  if (!l) return oom("aclCreateTensorList");
  l->size = size;
  l->tensors = new (std::nothrow) aclTensor *[size ? size : 1];
  if (!l->tensors) {
    delete l;
    return oom("aclCreateTensorList");
  }
  for (uint64_t i = 0; i < size; i++) l->tensors[i] = const_cast<aclTensor *>(value[i]);
  return l;
}

aclnnStatus aclDestroyTensorList(const aclTensorList *array) {
  if (array) {
    for (uint64_t i = 0; i < array->size; i++) aclDestroyTensor(array->tensors[i]);
    delete[] array->tensors;
    delete array;
  }
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size) {
  return array_size("aclGetTensorListSize", tensorList, size);
}

aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size) {
  if (size && !value) {
    acl__fail(ACLNN_ERR_PARAM_NULLPTR, "aclCreateScalarList",
              "value is NULL with size > 0");
    return nullptr;
  }
  aclScalarList *l = new (std::nothrow) aclScalarList();
  if (!l) return oom("aclCreateScalarList");
  l->size = size;
  l->scalars = new (std::nothrow) aclScalar *[size ? size : 1];
  if (!l->scalars) {
    delete l;
    return oom("aclCreateScalarList");
  }
  for (uint64_t i = 0; i < size; i++) l->scalars[i] = const_cast<aclScalar *>(value[i]);
  return l;
}

aclnnStatus aclDestroyScalarList(const aclScalarList *array) {
  if (array) {
    for (uint64_t i = 0; i < array->size; i++) aclDestroyScalar(array->scalars[i]);
    delete[] array->scalars;
    delete array;
  }
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size) {
  return array_size("aclGetScalarListSize", scalarList, size);
}

aclnnStatus aclnnInit(const char *configPath) {
  (void)configPath;
  return ACLNN_SUCCESS;
}

aclnnStatus aclnnFinalize(void) {
  return ACLNN_SUCCESS;
}

}  // extern "C"
