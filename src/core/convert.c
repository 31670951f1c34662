/* SPDX-License-Identifier: Apache-2.0 */
#include "llmk/convert.h"

#include <string.h>

#include "core/internal.h"
#include "dispatch/dispatch.h"
#include "kernels/convert/convert-scalar.h"
#include "kernels/convert/convert.h"

float llmk_f16_to_f32(uint16_t h) {
  return llmk__f16_to_f32(h);
}
uint16_t llmk_f32_to_f16(float f) {
  return llmk__f32_to_f16(f);
}
float llmk_bf16_to_f32(uint16_t b) {
  return llmk__bf16_to_f32(b);
}
uint16_t llmk_f32_to_bf16(float f) {
  return llmk__f32_to_bf16(f);
}
float llmk_fp8_e4m3fn_to_f32(uint8_t v) {
  return llmk__e4m3_to_f32(v);
}
uint8_t llmk_f32_to_fp8_e4m3fn(float f) {
  return llmk__f32_to_e4m3(f);
}
float llmk_fp8_e5m2_to_f32(uint8_t v) {
  return llmk__e5m2_to_f32(v);
}
uint8_t llmk_f32_to_fp8_e5m2(float f) {
  return llmk__f32_to_e5m2(f);
}

llmk_status llmk_convert(void *dst, llmk_dtype dst_dtype, const void *src,
                         llmk_dtype src_dtype, size_t n) {
  static const char op[] = "convert";
  const llmk__convert_kernels *k = llmk__convert_kernels_for(llmk_get_isa());
  llmk__cvt_to_f32_fn to = NULL;
  llmk__cvt_from_f32_fn from = NULL;
  if (n > 0 && !dst)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "dst is NULL with n=%zu", n);
  if (n > 0 && !src)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "src is NULL with n=%zu", n);
  if (dst_dtype == LLMK_F32) {
    switch (src_dtype) {
      case LLMK_F16:
        to = k->f16_to_f32;
        break;
      case LLMK_BF16:
        to = k->bf16_to_f32;
        break;
      case LLMK_FP8_E4M3FN:
        to = k->e4m3_to_f32;
        break;
      case LLMK_FP8_E5M2:
        to = k->e5m2_to_f32;
        break;
      case LLMK_F32:
        break;
      default:
        goto bad;
    }
  } else if (src_dtype == LLMK_F32) {
    switch (dst_dtype) {
      case LLMK_F16:
        from = k->f32_to_f16;
        break;
      case LLMK_BF16:
        from = k->f32_to_bf16;
        break;
      case LLMK_FP8_E4M3FN:
        from = k->f32_to_e4m3;
        break;
      case LLMK_FP8_E5M2:
        from = k->f32_to_e5m2;
        break;
      default:
        goto bad;
    }
  } else {
    goto bad;
  }
  if (n == 0) return LLMK_SUCCESS;
  if (n > SIZE_MAX / 8)
    return llmk__error(LLMK_ERROR_INVALID_SHAPE, op, "n=%zu is too large", n);
  if (to)
    to(dst, src, n);
  else if (from)
    from(dst, src, n);
  else if (dst != src)
    memmove(dst, src, n * 4);
  return LLMK_SUCCESS;
bad:
  return llmk__error(
      LLMK_ERROR_INVALID_DTYPE, op,
      "no conversion from %s to %s (one side must be f32, the other a float type)",
      llmk_dtype_name(src_dtype), llmk_dtype_name(dst_dtype));
}
