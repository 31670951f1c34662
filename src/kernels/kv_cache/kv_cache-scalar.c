/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "kernels/convert/convert-elem.h"
#include "kernels/kv_cache/kv_cache.h"

static void quant_scalar(uint8_t *dst, const void *src, llmk_dtype dt, bool e5m2,
                         size_t n, float scale) {
  const char *s = src;
  size_t esz = dt == LLMK_F32 ? 4 : 2;
  for (size_t i = 0; i < n; i++)
    dst[i] = llmk__f32_to_fp8(llmk__load_f32(s + i * esz, dt) / scale, e5m2);
}

static void dequant_scalar(void *dst, llmk_dtype dt, const uint8_t *src, bool e5m2,
                           size_t n, float scale) {
  char *d = dst;
  size_t esz = dt == LLMK_F32 ? 4 : 2;
  for (size_t i = 0; i < n; i++)
    llmk__store_f32(d + i * esz, dt, llmk__fp8_to_f32(src[i], e5m2) * scale);
}

static void copy_scalar(void *dst, const void *src, size_t bytes, bool stream) {
  (void)stream;
  memcpy(dst, src, bytes);
}

static void fence_scalar(void) {}

const llmk__kv_kernels llmk__kv_kernels_scalar = {.isa = LLMK_ISA_SCALAR,
                                                  .quant = quant_scalar,
                                                  .dequant = dequant_scalar,
                                                  .copy = copy_scalar,
                                                  .fence = fence_scalar};
