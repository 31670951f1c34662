/* SPDX-License-Identifier: Apache-2.0 */
/*
 * llmk aclnn layer: aclTensor and the other aclnn argument objects, and executors.
 * CANN's names and signatures; usable from C++ (as CANN's header) and also from C.
 *
 * Objects are created here and destroyed by the caller; every aclDestroy* accepts NULL
 * and returns 0. An object may be destroyed as soon as the phase-1 call that took it
 * returned: executors keep their own copies.
 *
 * Executors (aclOpExecutor): made by aclnn<Op>GetWorkspaceSize, run by aclnn<Op>.
 * A run consumes (frees) an executor unless aclSetAclOpExecutorRepeatable() was called;
 * running a consumed or destroyed executor is detected and gives ACLNN_ERR_INNER_NULLPTR
 * without touching freed memory. A repeatable executor runs any number of times, its
 * tensors can be re-pointed with aclSet*TensorAddr, and the caller destroys it.
 */
#ifndef LLMK_ACLNN_ACL_META_H
#define LLMK_ACLNN_ACL_META_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "acl/acl_base.h"
#include "aclnn/opdev/op_errno.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t aclnnStatus;

#ifndef ACLNN_META
#ifdef __cplusplus
constexpr aclnnStatus OK = 0;
#else
static const aclnnStatus OK = 0;
#endif
#endif

typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclScalarList aclScalarList;

/* ------------------------------------------------------------------- tensors */
/* A view of viewDimsNum dims over tensorData: element (i0, i1, ...) lives at
 *   (char *)tensorData + (offset + sum(i_d * stride[d])) * element size.
 * stride NULL means contiguous (row-major). Dims, strides and storage dims are copied.
 * tensorData may be NULL (set it later with aclSetRawTensorAddr or aclSet*TensorAddr).
 * Returns NULL for NULL viewDims (or storageDims) with a non-zero count, more than 25
 * dims, a negative dim, or an allocation failure. */
ACL_FUNC_VISIBILITY aclTensor *aclCreateTensor(const int64_t *viewDims,
                                               uint64_t viewDimsNum, aclDataType dataType,
                                               const int64_t *stride, int64_t offset,
                                               aclFormat format,
                                               const int64_t *storageDims,
                                               uint64_t storageDimsNum, void *tensorData);
/* Re-initializes an existing tensor with the rules of aclCreateTensor. */
ACL_FUNC_VISIBILITY aclnnStatus aclInitTensor(
    aclTensor *tensor, const int64_t *viewDims, uint64_t viewDimsNum,
    aclDataType dataType, const int64_t *stride, int64_t offset, aclFormat format,
    const int64_t *storageDims, uint64_t storageDimsNum, void *tensorDataAddr);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor *tensor);

/* Getters. The arrays are allocated with new[]: the caller frees them with delete[]
 * (from C, they may not be freed; prefer the C++ API). */
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewShape(const aclTensor *tensor,
                                                int64_t **viewDims,
                                                uint64_t *viewDimsNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetStorageShape(const aclTensor *tensor,
                                                   int64_t **storageDims,
                                                   uint64_t *storageDimsNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewStrides(const aclTensor *tensor,
                                                  int64_t **stridesValue,
                                                  uint64_t *stridesNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewOffset(const aclTensor *tensor,
                                                 int64_t *offset);
ACL_FUNC_VISIBILITY aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format);
ACL_FUNC_VISIBILITY aclnnStatus aclGetDataType(const aclTensor *tensor,
                                               aclDataType *dataType);
/* The storage address (tensorData), not including the view offset. */
ACL_FUNC_VISIBILITY aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr);

/* ------------------------------------------------------- scalars and arrays */
/* The value is copied (aclDataTypeSize(dataType) bytes; 1 to 8). NULL value: NULL. */
ACL_FUNC_VISIBILITY aclScalar *aclCreateScalar(void *value, aclDataType dataType);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalar(const aclScalar *scalar);
/* Values are copied; NULL with a non-zero size gives NULL. */
ACL_FUNC_VISIBILITY aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyIntArray(const aclIntArray *array);
ACL_FUNC_VISIBILITY aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyFloatArray(const aclFloatArray *array);
ACL_FUNC_VISIBILITY aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclGetIntArraySize(const aclIntArray *array,
                                                   uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetFloatArraySize(const aclFloatArray *array,
                                                     uint64_t *size);
ACL_FUNC_VISIBILITY aclnnStatus aclGetBoolArraySize(const aclBoolArray *array,
                                                    uint64_t *size);
/* A list holds the tensor pointers (not copies); the tensors themselves are destroyed
 * with the list, as in CANN. */
ACL_FUNC_VISIBILITY aclTensorList *aclCreateTensorList(const aclTensor *const *value,
                                                       uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensorList(const aclTensorList *array);
ACL_FUNC_VISIBILITY aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList,
                                                     uint64_t *size);
ACL_FUNC_VISIBILITY aclScalarList *aclCreateScalarList(const aclScalar *const *value,
                                                       uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalarList(const aclScalarList *array);
ACL_FUNC_VISIBILITY aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList,
                                                     uint64_t *size);

/* ----------------------------------------------------------------- executors */
/* ACLNN_ERR_INNER_NULLPTR for NULL or an executor that is not live. */
ACL_FUNC_VISIBILITY aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);
/* Re-point tensor `index` of a repeatable executor: the index-th input tensor of the
 * op (prototype order, absent optional tensors counted), the index-th output, or for
 * aclSetTensorAddr the index-th of inputs followed by outputs. `addr` is the new
 * storage address (the view offset given at phase 1 still applies); `tensor`, the
 * caller's aclTensor, gets the same address. The next run uses it.
 * ACLNN_ERR_INNER_NULLPTR: executor or tensor NULL, or not live;
 * ACLNN_ERR_PARAM_INVALID: index out of range, the tensor was NULL at phase 1, or the
 * executor is not repeatable. */
ACL_FUNC_VISIBILITY aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor,
                                                      const size_t index,
                                                      aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor,
                                                       const size_t index,
                                                       aclTensor *tensor, void *addr);
ACL_FUNC_VISIBILITY aclnnStatus aclSetTensorAddr(aclOpExecutor *executor,
                                                 const size_t index, aclTensor *tensor,
                                                 void *addr);

#ifdef __cplusplus
}
#endif

#endif
