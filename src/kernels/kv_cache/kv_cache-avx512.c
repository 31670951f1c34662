/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "kernels/convert/convert-avx512.h"
#include "kernels/kv_cache/kv_cache.h"

static void quant_avx512(uint8_t *dst, const void *src, llmk_dtype dt, bool e5m2,
                         size_t n, float scale) {
  const char *s = src;
  size_t esz = dt == LLMK_F32 ? 4 : 2;
  const __m512 vs = _mm512_set1_ps(scale);
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = llmk__mask16(n - i);
    __m512 x = _mm512_div_ps(llmk__avx512_load_f32(s + i * esz, dt, m), vs);
    _mm_mask_storeu_epi8(
        dst + i, m,
        e5m2 ? llmk__avx512_f32_to_fp8(x, true) : llmk__avx512_f32_to_fp8(x, false));
  }
}

static void dequant_avx512(void *dst, llmk_dtype dt, const uint8_t *src, bool e5m2,
                           size_t n, float scale) {
  char *d = dst;
  size_t esz = dt == LLMK_F32 ? 4 : 2;
  const __m512 vs = _mm512_set1_ps(scale);
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = llmk__mask16(n - i);
    __m128i b = _mm_maskz_loadu_epi8(m, src + i);
    __m512 f = e5m2 ? llmk__avx512_e5m2_to_f32(b) : llmk__avx512_e4m3_to_f32(b);
    llmk__avx512_store_f32(d + i * esz, dt, m, _mm512_mul_ps(f, vs));
  }
}

/* Non-temporal stores for whole 64-byte lines of the destination, plain copies for
 * the partial lines at both ends. */
static void copy_avx512(void *dst, const void *src, size_t bytes, bool stream) {
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
    _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));
  }
  memcpy(d + i, s + i, bytes - i);
}

static void fence_avx512(void) {
  _mm_sfence();
}

const llmk__kv_kernels llmk__kv_kernels_avx512 = {.isa = LLMK_ISA_AVX512,
                                                  .quant = quant_avx512,
                                                  .dequant = dequant_avx512,
                                                  .copy = copy_avx512,
                                                  .fence = fence_avx512};
