/* SPDX-License-Identifier: Apache-2.0 */
/* Private API of the aclnn layer, shared by its C and C++ sources. Symbols are
 * prefixed acl__ and not exported (the library exports acl* and aclnn* only). */
#ifndef LLMK_ACL_INTERNAL_H
#define LLMK_ACL_INTERNAL_H

#include <llmk/llmk.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "core/ptrset.h" /* the live handles, as llmk keeps its live plans */

#if defined(__GNUC__)
#define ACL__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ACL__PRINTF(f, a)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------- errors */
/* Records "<where>: <message>" as this thread's aclGetRecentErrMsg() and returns code. */
int acl__fail(int code, const char *where, const char *fmt, ...) ACL__PRINTF(3, 4);
/* Records llmk_last_error() (the native message) and returns code. */
int acl__fail_native(int code);

/* ------------------------------------------------------------------ tensors */
#define ACL__MAX_DIMS 25
#define ACL__TENSOR_MAGIC 0x736e5441u
/* Whether t was made by aclCreateTensor and not destroyed since. */
bool acl__tensor_live(const aclTensor *t);

struct aclTensor {
  uint32_t magic;
  aclDataType dtype;
  aclFormat format;
  uint64_t view_rank, storage_rank;
  int64_t view_dims[ACL__MAX_DIMS];
  int64_t strides[ACL__MAX_DIMS]; /* elements */
  int64_t storage_dims[ACL__MAX_DIMS];
  int64_t offset; /* elements from data to the view's first element */
  void *data;     /* storage address */
};

/* The native dtype of an acl dtype; LLMK_DTYPE_INVALID if it has none. */
llmk_dtype acl__native_dtype(aclDataType dtype);
/* ND-like formats (ND, NCHW, NHWC, NCDHW, NDHWC, HWCN, NC, NCL); private layouts
 * (NZ, NC1HWC0, FRACTAL_Z, ...) are not. */
bool acl__format_is_nd(aclFormat format);

/* ------------------------------------------------------------------- memory */
/* If p lies inside a block allocated by aclrtMalloc/aclrtMallocHost, stores the
 * bytes from p to the block's end in *room and returns true. */
bool acl__mem_room(const void *p, size_t *room);

/* ------------------------------------------------------------------ streams */
/* Validates stream (NULL = the default stream), locks it for one run and gives its
 * llmk context (NULL = calling thread only). On success, call acl__stream_release. */
aclError acl__stream_acquire(aclrtStream stream, llmk_context **ctx, void **token);
void acl__stream_release(void *token);

/* ---------------------------------------------------------------- executors */
/*
 * How an entry point is built (one file per op in src/ops/):
 *   phase 1: check CANN's rules for the op (NULLs, dtypes, ranks, shapes, attributes),
 *            then acl__executor_create(op, tensors, attrs, ...), which converts each
 *            aclTensor to an llmk_tensor (strides, offset, data, allocation bounds),
 *            calls op->plan (the native phase 1) and registers the executor;
 *   phase 2: acl__executor_run(op, ...).
 * The executor keeps the native descriptors, not the aclTensors. Re-pointing a tensor
 * (aclSet*TensorAddr) patches the descriptor and marks the executor dirty; the next run
 * destroys the native plan and makes a new one from the descriptors (native plans copy
 * data pointers at phase 1), so the new addresses go through the native checks again.
 */
#define ACL__MAX_SLOTS 16
#define ACL__MAX_ATTRS 256

typedef struct acl__op {
  const char *name; /* "aclnnApplyTopKTopP" */
  int num_inputs;   /* tensor arguments in prototype order: inputs, then outputs */
  int num_outputs;
  /* Native phase 1. t[i] is NULL for an absent optional tensor. */
  llmk_status (*plan)(const llmk_tensor *const *t, const void *attrs,
                      size_t *workspace_size, llmk_plan **plan);
  /* Native phase 2. */
  llmk_status (*run)(void *workspace, size_t workspace_size, llmk_plan *plan,
                     llmk_context *ctx);
  /* Native status -> CANN status (acl__map_status unless the op's CANN code differs). */
  aclnnStatus (*map)(llmk_status status);
} acl__op;

/* NULL_POINTER -> 161001; dtype, shape, attribute, value, workspace -> 161002;
 * INVALID_PLAN -> 561103; out of memory, unsupported, internal -> 561000. */
aclnnStatus acl__map_status(llmk_status status);

/* tensors: num_inputs + num_outputs entries (NULL = absent); attrs: attr_size bytes
 * (<= ACL__MAX_ATTRS) copied into the executor and given to op->plan. */
aclnnStatus acl__executor_create(const acl__op *op, const aclTensor *const *tensors,
                                 const void *attrs, size_t attr_size,
                                 uint64_t *workspace_size, aclOpExecutor **executor);
aclnnStatus acl__executor_run(const acl__op *op, void *workspace, uint64_t workspace_size,
                              aclOpExecutor *executor, aclrtStream stream);
/* The plan and run of an entry point's no-op (CANN answers some empty calls with success
 * and nothing to do): an acl__op {name, n, m, acl__noop_plan, acl__noop_run, map} with
 * all tensors NULL gives an executor of workspace 0 that writes nothing. */
llmk_status acl__noop_plan(const llmk_tensor *const *t, const void *attrs,
                           size_t *workspace_size, llmk_plan **plan);
llmk_status acl__noop_run(void *workspace, size_t workspace_size, llmk_plan *plan,
                          llmk_context *ctx);

#ifdef __cplusplus
}
#endif

#endif
