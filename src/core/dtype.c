/* SPDX-License-Identifier: Apache-2.0 */
#include "core/internal.h"

static const struct {
  size_t size;
  const char *name;
} dtype_table[LLMK_DTYPE_COUNT_] = {
    [LLMK_DTYPE_INVALID] = {0, "invalid"},
    [LLMK_F32] = {4, "f32"},
    [LLMK_F16] = {2, "f16"},
    [LLMK_BF16] = {2, "bf16"},
    [LLMK_I8] = {1, "i8"},
    [LLMK_U8] = {1, "u8"},
    [LLMK_I32] = {4, "i32"},
    [LLMK_I64] = {8, "i64"},
    [LLMK_FP8_E4M3FN] = {1, "fp8_e4m3fn"},
    [LLMK_FP8_E5M2] = {1, "fp8_e5m2"},
};

size_t llmk_dtype_size(llmk_dtype dtype) {
  return ((unsigned)dtype < LLMK_DTYPE_COUNT_) ? dtype_table[dtype].size : 0;
}

const char *llmk_dtype_name(llmk_dtype dtype) {
  return ((unsigned)dtype < LLMK_DTYPE_COUNT_) ? dtype_table[dtype].name : "invalid";
}
