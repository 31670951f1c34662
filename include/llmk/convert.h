/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Element conversions between f32 and the narrow float types.
 *
 * f32 -> narrow: round to nearest, ties to even; NaN stays NaN (sign kept, quiet).
 *   f16 / bf16: values beyond the largest finite value round to infinity as IEEE does.
 *   fp8 e4m3fn / e5m2: saturating: every value whose magnitude is at least the largest
 *   finite value, infinities included, becomes +-448 (e4m3fn) or +-57344 (e5m2).
 *   Subnormals of every type are produced and read exactly (no flush to zero).
 * narrow -> f32: exact. f16 and fp8 NaNs give a quiet f32 NaN of the same sign (as
 *   F16C does); bf16 -> f32 is the plain 16-bit shift, so a NaN keeps its payload and
 *   a signalling NaN stays signalling (as PyTorch and every bf16 library do).
 * The bulk functions give the same bits as the per-element ones on every ISA.
 */
#ifndef LLMK_CONVERT_H
#define LLMK_CONVERT_H

#include "llmk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

LLMK_API float llmk_f16_to_f32(uint16_t h);
LLMK_API uint16_t llmk_f32_to_f16(float f);
LLMK_API float llmk_bf16_to_f32(uint16_t b);
LLMK_API uint16_t llmk_f32_to_bf16(float f);
LLMK_API float llmk_fp8_e4m3fn_to_f32(uint8_t v);
LLMK_API uint8_t llmk_f32_to_fp8_e4m3fn(float f);
LLMK_API float llmk_fp8_e5m2_to_f32(uint8_t v);
LLMK_API uint8_t llmk_f32_to_fp8_e5m2(float f);

/* Converts n contiguous elements, src of src_dtype to dst of dst_dtype, with the
 * ISA in force (llmk_get_isa()). One side must be LLMK_F32 and the other one of
 * f32, f16, bf16, fp8_e4m3fn, fp8_e5m2. The buffers must not overlap unless
 * dst == src with equal element sizes.
 * Returns LLMK_ERROR_NULL_POINTER (dst or src NULL with n > 0) or
 * LLMK_ERROR_INVALID_DTYPE. */
LLMK_API llmk_status llmk_convert(void *dst, llmk_dtype dst_dtype, const void *src,
                                  llmk_dtype src_dtype, size_t n);

#ifdef __cplusplus
}
#endif

#endif
