/* SPDX-License-Identifier: Apache-2.0 */
#include "kernels/convert/convert-scalar.h"

#include "dispatch/dispatch.h"
#include "kernels/convert/convert.h"

#define LLMK__CVT_TO_F32(name, T, fn)                       \
  static void name(float *dst, const void *src, size_t n) { \
    const T *s = src;                                       \
    for (size_t i = 0; i < n; i++) dst[i] = fn(s[i]);       \
  }
#define LLMK__CVT_FROM_F32(name, T, fn)                     \
  static void name(void *dst, const float *src, size_t n) { \
    T *d = dst;                                             \
    for (size_t i = 0; i < n; i++) d[i] = fn(src[i]);       \
  }

LLMK__CVT_TO_F32(f16_f32_scalar, uint16_t, llmk__f16_to_f32)
LLMK__CVT_TO_F32(bf16_f32_scalar, uint16_t, llmk__bf16_to_f32)
LLMK__CVT_TO_F32(e4m3_f32_scalar, uint8_t, llmk__e4m3_to_f32)
LLMK__CVT_TO_F32(e5m2_f32_scalar, uint8_t, llmk__e5m2_to_f32)
LLMK__CVT_FROM_F32(f32_f16_scalar, uint16_t, llmk__f32_to_f16)
LLMK__CVT_FROM_F32(f32_bf16_scalar, uint16_t, llmk__f32_to_bf16)
LLMK__CVT_FROM_F32(f32_e4m3_scalar, uint8_t, llmk__f32_to_e4m3)
LLMK__CVT_FROM_F32(f32_e5m2_scalar, uint8_t, llmk__f32_to_e5m2)

const llmk__convert_kernels llmk__convert_kernels_scalar = {
    .isa = LLMK_ISA_SCALAR,
    .f16_to_f32 = f16_f32_scalar,
    .bf16_to_f32 = bf16_f32_scalar,
    .e4m3_to_f32 = e4m3_f32_scalar,
    .e5m2_to_f32 = e5m2_f32_scalar,
    .f32_to_f16 = f32_f16_scalar,
    .f32_to_bf16 = f32_bf16_scalar,
    .f32_to_e4m3 = f32_e4m3_scalar,
    .f32_to_e5m2 = f32_e5m2_scalar,
};
