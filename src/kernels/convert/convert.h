/* SPDX-License-Identifier: Apache-2.0 */
/* The conversion kernels: contiguous runs between f32 and f16 / bf16 / fp8. */
#ifndef LLMK_KERNELS_CONVERT_H
#define LLMK_KERNELS_CONVERT_H

#include <stddef.h>

#include "dispatch/dispatch.h"
#include "llmk/types.h"

typedef void (*llmk__cvt_to_f32_fn)(float *dst, const void *src, size_t n);
typedef void (*llmk__cvt_from_f32_fn)(void *dst, const float *src, size_t n);

typedef struct llmk__convert_kernels {
  llmk_isa isa;
  llmk__cvt_to_f32_fn f16_to_f32, bf16_to_f32, e4m3_to_f32, e5m2_to_f32;
  llmk__cvt_from_f32_fn f32_to_f16, f32_to_bf16, f32_to_e4m3, f32_to_e5m2;
} llmk__convert_kernels;

#define LLMK__CONVERT_VARIANTS(X) \
  LLMK__IF_NEON(X(convert, neon)) \
  LLMK__IF_AVX512(X(convert, avx512)) LLMK__IF_AVX2(X(convert, avx2)) X(convert, scalar)
LLMK__KERNEL_LIST(convert, LLMK__CONVERT_VARIANTS)

#endif
