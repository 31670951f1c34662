/* SPDX-License-Identifier: Apache-2.0 */
/*
 * llmk core types: dtypes, status codes, tensors, contexts, plans.
 *
 * Every operator follows one shape (see docs/api.md):
 *
 *   size_t ws; llmk_plan *plan;
 *   st = llmk_<op>_get_workspace_size(tensors..., attributes..., &ws, &plan);
 *   st = llmk_<op>(workspace, ws, plan, ctx);     // consumes plan unless repeatable
 *
 * Phase 1 validates everything that needs no tensor data and touches no data.
 * Phase 2 checks the tensor values the op depends on (indices, slots, ...) before
 * it writes anything, then runs.
 */
#ifndef LLMK_TYPES_H
#define LLMK_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "llmk/version.h"

#if defined(_WIN32)
#define LLMK_API
#elif defined(LLMK_BUILDING)
#define LLMK_API __attribute__((visibility("default")))
#else
#define LLMK_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- status */

/* Status codes. Values are stable; new codes are only ever appended. */
#define LLMK_STATUS_LIST(X)                                                      \
  X(LLMK_SUCCESS, 0, "success")                                                  \
  X(LLMK_ERROR_NULL_POINTER, 1, "a required pointer argument is NULL")           \
  X(LLMK_ERROR_INVALID_DTYPE, 2, "dtype not supported or dtypes disagree")       \
  X(LLMK_ERROR_INVALID_SHAPE, 3, "rank, shape or strides not allowed")           \
  X(LLMK_ERROR_INVALID_ATTRIBUTE, 4, "scalar attribute out of range")            \
  X(LLMK_ERROR_INVALID_VALUE, 5, "a tensor value (index, slot, ...) is invalid") \
  X(LLMK_ERROR_WORKSPACE_TOO_SMALL, 6, "workspace smaller than required")        \
  X(LLMK_ERROR_INVALID_PLAN, 7, "plan is NULL, consumed, or of another op")      \
  X(LLMK_ERROR_OUT_OF_MEMORY, 8, "out of memory")                                \
  X(LLMK_ERROR_UNSUPPORTED, 9, "valid but not supported by this build or CPU")   \
  X(LLMK_ERROR_INTERNAL, 10, "internal error")                                   \
  X(LLMK_ERROR_OVERLAP, 11, "a written tensor shares memory with another tensor")

typedef enum llmk_status {
#define LLMK_X_ENUM(name, value, text) name = value,
  LLMK_STATUS_LIST(LLMK_X_ENUM)
#undef LLMK_X_ENUM
} llmk_status;

/* A static description of a status ("unknown status" for other values). */
LLMK_API const char *llmk_status_string(llmk_status status);

/* The message of the most recent failed llmk call on the calling thread: the op,
 * the argument and the values, e.g.
 *   "advance_step: seq_lens.shape[0]=3 must equal num_seqs=4".
 * "" if no call on this thread has failed. The pointer stays valid until the next
 * llmk call on this thread. */
LLMK_API const char *llmk_last_error(void);

/* ----------------------------------------------------------------- dtypes */

typedef enum llmk_dtype {
  LLMK_DTYPE_INVALID = 0,
  LLMK_F32 = 1,
  LLMK_F16 = 2,  /* IEEE binary16 */
  LLMK_BF16 = 3, /* bfloat16 */
  LLMK_I8 = 4,
  LLMK_U8 = 5,
  LLMK_I32 = 6,
  LLMK_I64 = 7,
  LLMK_FP8_E4M3FN = 8,   /* 1-4-3, bias 7, no infinities, NaN = S.1111.111, max 448 */
  LLMK_FP8_E5M2 = 9,     /* 1-5-2, bias 15, IEEE-like, max finite 57344 */
  LLMK_DTYPE_COUNT_ = 10 /* not a dtype */
} llmk_dtype;

/* Element size in bytes; 0 for an invalid dtype. */
LLMK_API size_t llmk_dtype_size(llmk_dtype dtype);
/* "f32", "f16", "bf16", "i8", "u8", "i32", "i64", "fp8_e4m3fn", "fp8_e5m2";
 * "invalid" otherwise. */
LLMK_API const char *llmk_dtype_name(llmk_dtype dtype);

/* ---------------------------------------------------------------- tensors */

#define LLMK_MAX_RANK 8

/* A caller-owned tensor descriptor; llmk never frees `data`.
 * Element (i0, ..., i{rank-1}) lives at
 *   (char *)data + (i0*strides[0] + ... ) * llmk_dtype_size(dtype).
 * Shapes and strides are in elements. A rank-0 tensor is a scalar. */
typedef struct llmk_tensor {
  llmk_dtype dtype;
  int32_t rank;
  int64_t shape[LLMK_MAX_RANK];
  int64_t strides[LLMK_MAX_RANK];
  void *data;
} llmk_tensor;

/* Fills *t. strides == NULL means contiguous (row-major). Unused trailing entries of
 * shape/strides are zeroed.
 * Returns LLMK_ERROR_NULL_POINTER (t NULL, or shape NULL with rank > 0),
 * LLMK_ERROR_INVALID_DTYPE, or LLMK_ERROR_INVALID_SHAPE (rank outside
 * [0, LLMK_MAX_RANK], a negative extent or stride). */
LLMK_API llmk_status llmk_tensor_init(llmk_tensor *t, llmk_dtype dtype, int rank,
                                      const int64_t *shape, const int64_t *strides,
                                      void *data);

/* Number of elements (product of the shape; 1 for rank 0). */
LLMK_API int64_t llmk_tensor_numel(const llmk_tensor *t);

/* ------------------------------------------------------------ CPU / ISA */

typedef enum llmk_isa {
  LLMK_ISA_SCALAR = 0, /* portable C */
  LLMK_ISA_AVX2 = 1,   /* x86-64: AVX2 + FMA + F16C */
  LLMK_ISA_AVX512 = 2, /* x86-64: AVX-512 F + BW + VL (BF16 / FP16 used where present) */
  LLMK_ISA_NEON = 3    /* aarch64: Advanced SIMD (every aarch64 CPU) */
} llmk_isa;

/* The ISA in force: the best one this CPU and build support, capped by the current
 * cap. Each architecture's ISAs are ordered (x86-64: scalar < avx2 < avx512; aarch64:
 * scalar < neon); a cap that names another architecture's ISA caps to scalar. The cap
 * starts as the environment variable LLMK_ISA=scalar|avx2|avx512|neon (read once;
 * absent or unknown = no cap) and is replaced by each llmk_set_max_isa() call. Plans
 * store the kernels of the ISA in force when they are created. */
LLMK_API llmk_isa llmk_get_isa(void);
/* The best ISA of CPU and build, ignoring every override. */
LLMK_API llmk_isa llmk_get_native_isa(void);
/* Replaces the cap (LLMK_ISA's value included) for plans created from now on
 * (process-wide; intended for tests and benchmarks). A cap above the native ISA has
 * no effect. Returns the ISA in force afterwards. */
LLMK_API llmk_isa llmk_set_max_isa(llmk_isa max_isa);
/* "scalar", "avx2", "avx512", "neon". */
LLMK_API const char *llmk_isa_name(llmk_isa isa);
/* Space-separated CPU features detected, e.g. "avx2 fma f16c avx512f ..." (x86) or
 * "asimd fp16 bf16 sve" (aarch64, from the auxiliary vector). */
LLMK_API const char *llmk_cpu_features(void);

/* ---------------------------------------------------------------- context */

/* Execution context: how many threads a run may use. Runs with a NULL context use
 * the calling thread only. A context may be used by one run at a time. */
typedef struct llmk_context llmk_context;

/* num_threads <= 0: the environment variable LLMK_NUM_THREADS if set to a positive
 * number; else, in builds on OpenMP, the first value of OMP_NUM_THREADS if set; else
 * the number of CPUs the process may run on (its affinity mask, e.g. under taskset;
 * online CPUs where the platform has no affinity). `llmk info` says which rule chose
 * the number. At most 256 threads (a larger number means
 * 256). The calling thread is one of them. A run on more threads than the machine
 * has CPUs splits its work over at most as many parts as there are CPUs.
 * Returns LLMK_ERROR_NULL_POINTER or LLMK_ERROR_OUT_OF_MEMORY on failure
 * (*ctx = NULL then). */
LLMK_API llmk_status llmk_context_create(int num_threads, llmk_context **ctx);
/* NULL-safe. */
LLMK_API void llmk_context_destroy(llmk_context *ctx);
/* Threads the context uses; 1 for NULL. */
LLMK_API int llmk_context_num_threads(const llmk_context *ctx);
/* "openmp" or "pthreads": the threading runtime this build uses. */
LLMK_API const char *llmk_threading_runtime(void);

/* ------------------------------------------------------------------ plans */

/* A validated, ready-to-run operator call, made by llmk_<op>_get_workspace_size().
 * It records tensor descriptors (data pointers included), attributes and the
 * kernels of the ISA in force. A run consumes (frees) it unless it was made
 * repeatable: after llmk_<op>(..., plan, ...) returns, whatever it returned, a
 * non-repeatable plan pointer must not be used again. Running or destroying a
 * consumed plan is detected where possible and gives LLMK_ERROR_INVALID_PLAN. */
typedef struct llmk_plan llmk_plan;

/* Keeps the plan alive across runs; the caller then destroys it.
 * LLMK_ERROR_INVALID_PLAN for NULL or a plan that is not live. */
LLMK_API llmk_status llmk_plan_set_repeatable(llmk_plan *plan);
/* Frees a plan that has not been consumed. NULL is a no-op returning LLMK_SUCCESS;
 * a pointer that is not a live plan gives LLMK_ERROR_INVALID_PLAN. */
LLMK_API llmk_status llmk_plan_destroy(llmk_plan *plan);

/* MAJOR * 10000 + MINOR * 100 + PATCH of the library actually linked. */
LLMK_API unsigned llmk_version(void);
LLMK_API const char *llmk_version_string(void);

#ifdef __cplusplus
}
#endif

#endif
