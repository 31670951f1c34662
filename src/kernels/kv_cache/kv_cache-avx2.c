/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "kernels/convert/convert-avx2.h"
#include "kernels/convert/convert-elem.h"
#include "kernels/kv_cache/kv_cache.h"

static void quant_avx2(uint8_t *dst, const void *src, llmk_dtype dt, bool e5m2, size_t n,
                       float scale) {
  const char *s = src;
  size_t esz = dt == LLMK_F32 ? 4 : 2, i = 0;
  const __m256 vs = _mm256_set1_ps(scale);
  if (e5m2) {
    for (; i + 8 <= n; i += 8)
      _mm_storel_epi64(
          (__m128i *)(void *)(dst + i),
          llmk__avx2_f32_to_fp8(_mm256_div_ps(llmk__avx2_load_f32(s + i * esz, dt), vs),
                                true));
  } else {
    for (; i + 8 <= n; i += 8)
      _mm_storel_epi64(
          (__m128i *)(void *)(dst + i),
          llmk__avx2_f32_to_fp8(_mm256_div_ps(llmk__avx2_load_f32(s + i * esz, dt), vs),
                                false));
  }
  for (; i < n; i++)
    dst[i] = llmk__f32_to_fp8(llmk__load_f32(s + i * esz, dt) / scale, e5m2);
}

static void dequant_avx2(void *dst, llmk_dtype dt, const uint8_t *src, bool e5m2,
                         size_t n, float scale) {
  char *d = dst;
  size_t esz = dt == LLMK_F32 ? 4 : 2, i = 0;
  const __m256 vs = _mm256_set1_ps(scale);
  for (; i + 8 <= n; i += 8) {
    __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(src + i));
    __m256 f = e5m2 ? llmk__avx2_e5m2_to_f32(b) : llmk__avx2_e4m3_to_f32(b);
    llmk__avx2_store_f32(d + i * esz, dt, _mm256_mul_ps(f, vs));
  }
  for (; i < n; i++)
    llmk__store_f32(d + i * esz, dt, llmk__fp8_to_f32(src[i], e5m2) * scale);
}

/* Non-temporal stores for whole 64-byte lines of the destination, plain copies for
 * the partial lines at both ends. */
static void copy_avx2(void *dst, const void *src, size_t bytes, bool stream) {
  if (!stream || bytes < 256) {
    memcpy(dst, src, bytes);
    return;
  }
  char *d = dst;
  const char *s = src;
  size_t head = (64 - ((uintptr_t)d & 63)) & 63;
  memcpy(d, s, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 32));
    _mm256_stream_si256((__m256i *)(void *)(d + i), a);
    _mm256_stream_si256((__m256i *)(void *)(d + i + 32), b);
  }
  memcpy(d + i, s + i, bytes - i);
}

static void fence_avx2(void) {
  _mm_sfence();
}

const llmk__kv_kernels llmk__kv_kernels_avx2 = {.isa = LLMK_ISA_AVX2,
                                                .quant = quant_avx2,
                                                .dequant = dequant_avx2,
                                                .copy = copy_avx2,
                                                .fence = fence_avx2};
