/* SPDX-License-Identifier: Apache-2.0 */
/* One element of f32, f16 or bf16 widened to f32 or rounded from it, by dtype. */
#ifndef LLMK_CONVERT_ELEM_H
#define LLMK_CONVERT_ELEM_H

#include <stdbool.h>

#include "kernels/convert/convert-scalar.h"
#include "llmk/types.h"

static inline float llmk__load_f32(const void *p, llmk_dtype dt) {
  if (dt == LLMK_F32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  memcpy(&h, p, 2);
  return dt == LLMK_F16 ? llmk__f16_to_f32(h) : llmk__bf16_to_f32(h);
}

static inline void llmk__store_f32(void *p, llmk_dtype dt, float f) {
  if (dt == LLMK_F32) {
    memcpy(p, &f, 4);
    return;
  }
  uint16_t h = dt == LLMK_F16 ? llmk__f32_to_f16(f) : llmk__f32_to_bf16(f);
  memcpy(p, &h, 2);
}

static inline uint8_t llmk__f32_to_fp8(float f, bool e5m2) {
  return e5m2 ? llmk__f32_to_e5m2(f) : llmk__f32_to_e4m3(f);
}

static inline float llmk__fp8_to_f32(uint8_t v, bool e5m2) {
  return e5m2 ? llmk__e5m2_to_f32(v) : llmk__e4m3_to_f32(v);
}

#endif
