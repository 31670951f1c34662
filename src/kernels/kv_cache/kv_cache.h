/* KV cache kernels: contiguous runs of quantization into fp8 and dequantization out of
 * it. Bit copies use memcpy; strided runs use the scalar element code in the op. */
#ifndef LLMK_KERNELS_KV_CACHE_H
#define LLMK_KERNELS_KV_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dispatch/dispatch.h"
#include "llmk/types.h"

typedef struct llmk__kv_kernels {
  llmk_isa isa;
  /* dst[i] = fp8(f32(src[i]) / scale), src of f32, f16 or bf16 */
  void (*quant)(uint8_t *dst, const void *src, llmk_dtype src_dtype, bool e5m2, size_t n,
                float scale);
  /* dst[i] = dst_dtype(f32(fp8 src[i]) * scale), dst of f32, f16 or bf16 */
  void (*dequant)(void *dst, llmk_dtype dst_dtype, const uint8_t *src, bool e5m2,
                  size_t n, float scale);
  /* memcpy; with `stream`, full 64-byte lines are written with non-temporal stores
   * (for copies far larger than the caches) and the caller calls fence() when done */
  void (*copy)(void *dst, const void *src, size_t bytes, bool stream);
  void (*fence)(void);
} llmk__kv_kernels;

#define LLMK__KV_VARIANTS(X) \
  LLMK__IF_AVX512(X(kv, avx512)) LLMK__IF_AVX2(X(kv, avx2)) X(kv, scalar)
LLMK__KERNEL_LIST(kv, LLMK__KV_VARIANTS)

#endif
