/* SPDX-License-Identifier: Apache-2.0 */
/* NEON KV cache kernels (aarch64): fp8 quantization and dequantization 8 elements at a
 * time; bit copies are memcpy (glibc's aarch64 copy is already vectorized, and A64 has
 * no non-temporal store that skips the cache for whole lines as x86's does). */
#include <string.h>

#include "kernels/convert/convert-elem.h"
#include "kernels/convert/convert-neon.h"
#include "kernels/kv_cache/kv_cache.h"

static void quant_neon(uint8_t *dst, const void *src, llmk_dtype dt, bool e5m2, size_t n,
                       float scale) {
  const char *s = src;
  size_t esz = dt == LLMK_F32 ? 4 : 2, i = 0;
  const float32x4_t vs = vdupq_n_f32(scale);
  for (; i + 8 <= n; i += 8) {
    uint32x4_t lo =
        llmk__neon_f32_to_fp8(vdivq_f32(llmk__neon_load_f32(s + i * esz, dt), vs), e5m2);
    uint32x4_t hi = llmk__neon_f32_to_fp8(
        vdivq_f32(llmk__neon_load_f32(s + (i + 4) * esz, dt), vs), e5m2);
    vst1_u8(dst + i, llmk__neon_narrow_u8x8(lo, hi));
  }
  for (; i < n; i++)
    dst[i] = llmk__f32_to_fp8(llmk__load_f32(s + i * esz, dt) / scale, e5m2);
}

static void dequant_neon(void *dst, llmk_dtype dt, const uint8_t *src, bool e5m2,
                         size_t n, float scale) {
  char *d = dst;
  size_t esz = dt == LLMK_F32 ? 4 : 2, i = 0;
  const float32x4_t vs = vdupq_n_f32(scale);
  for (; i + 4 <= n; i += 4) {
    uint32x4_t b = llmk__neon_widen_u8x4(src + i);
    float32x4_t f = e5m2 ? llmk__neon_e5m2_to_f32(b) : llmk__neon_e4m3_to_f32(b);
    llmk__neon_store_f32(d + i * esz, dt, vmulq_f32(f, vs));
  }
  for (; i < n; i++)
    llmk__store_f32(d + i * esz, dt, llmk__fp8_to_f32(src[i], e5m2) * scale);
}

static void copy_neon(void *dst, const void *src, size_t bytes, bool stream) {
  (void)stream;
  memcpy(dst, src, bytes);
}

static void fence_neon(void) {}

const llmk__kv_kernels llmk__kv_kernels_neon = {.isa = LLMK_ISA_NEON,
                                                .quant = quant_neon,
                                                .dequant = dequant_neon,
                                                .copy = copy_neon,
                                                .fence = fence_neon};
