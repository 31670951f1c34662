/* Kernel tables: one per op, one instance per ISA. An op picks the table of the ISA
 * in force when its plan is created and stores the pointer in the plan. */
#ifndef LLMK_DISPATCH_H
#define LLMK_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llmk/types.h"

typedef struct llmk__cpu_info {
  bool avx2, fma, f16c;
  bool avx512f, avx512bw, avx512vl, avx512dq, avx512bf16, avx512fp16;
} llmk__cpu_info;

const llmk__cpu_info *llmk__cpu(void);
/* The CPUs this process may run on. */
int llmk__cpu_count(void);
/* The size of the last cache level (from sysfs, else sysconf, else 32 MiB), found once. */
size_t llmk__last_cache_bytes(void);

/* ------------------------------------------------------------- conversions */
typedef void (*llmk__cvt_to_f32_fn)(float *dst, const void *src, size_t n);
typedef void (*llmk__cvt_from_f32_fn)(void *dst, const float *src, size_t n);

typedef struct llmk__convert_kernels {
  llmk_isa isa;
  llmk__cvt_to_f32_fn f16_to_f32, bf16_to_f32, e4m3_to_f32, e5m2_to_f32;
  llmk__cvt_from_f32_fn f32_to_f16, f32_to_bf16, f32_to_e4m3, f32_to_e5m2;
} llmk__convert_kernels;

extern const llmk__convert_kernels llmk__convert_kernels_scalar;
#if defined(LLMK_HAVE_AVX2)
extern const llmk__convert_kernels llmk__convert_kernels_avx2;
#endif
#if defined(LLMK_HAVE_AVX512)
extern const llmk__convert_kernels llmk__convert_kernels_avx512;
#endif
const llmk__convert_kernels *llmk__convert_kernels_for(llmk_isa isa);

/* ------------------------------------------------------------ advance_step */
struct llmk__advance_step_args;
typedef struct llmk__advance_step_kernels {
  llmk_isa isa;
  /* Checks every value rule, then, only if all hold, writes the outputs. Returns
   * LLMK_SUCCESS or the error (message set, nothing written). */
  llmk_status (*execute)(const struct llmk__advance_step_args *a);
} llmk__advance_step_kernels;

extern const llmk__advance_step_kernels llmk__advance_step_kernels_scalar;
#if defined(LLMK_HAVE_AVX512)
extern const llmk__advance_step_kernels llmk__advance_step_kernels_avx512;
#endif
const llmk__advance_step_kernels *llmk__advance_step_kernels_for(llmk_isa isa);

#endif
