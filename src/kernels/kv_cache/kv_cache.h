/* SPDX-License-Identifier: Apache-2.0 */
/* KV cache kernels: contiguous runs of quantization into fp8, dequantization out of it
 * and bit copies (per ISA); and the movers that apply them to a token's runs (scalar
 * code, kv_cache-move.c). */
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
  /* 16-bit elements: dst row i, element j = src row j, element i, for i < rows, j < cols
   * (rows of dst and src any number of bytes apart); NULL: the movers' own loops */
  void (*transpose16)(char *dst, size_t dst_row, const char *src, size_t src_row,
                      int64_t rows, int64_t cols, bool stream);
  /* the same with elements of 16 bytes (x-split keys: a token's 16-byte pieces to the
   * rows of their (head, piece)), and of 32 bytes (NZ: a token's 32-byte pieces to the
   * rows of their fractal); for all three, with `stream`, whole 64-byte lines of dst may
   * be written with non-temporal stores (then the caller calls fence() when done) */
  void (*transpose128)(char *dst, size_t dst_row, const char *src, size_t src_row,
                       int64_t rows, int64_t cols, bool stream);
  void (*transpose256)(char *dst, size_t dst_row, const char *src, size_t src_row,
                       int64_t rows, int64_t cols, bool stream);
} llmk__kv_kernels;

/* Whether scale is 2^e with e in [-126, 126]: then dividing by it is multiplying by
 * 1 / scale, bit for bit (1 / scale is exact and normal, so also under DAZ). */
static inline bool llmk__is_pow2_scale(float scale) {
  uint32_t u;
  __builtin_memcpy(&u, &scale, 4);
  uint32_t e = u >> 23 & 0xff;
  return (u & 0x807fffffu) == 0 && e >= 1 && e <= 253;
}

#define LLMK__KV_VARIANTS(X) \
  LLMK__IF_NEON(X(kv, neon)) \
  LLMK__IF_AVX512(X(kv, avx512)) LLMK__IF_AVX2(X(kv, avx2)) X(kv, scalar)
LLMK__KERNEL_LIST(kv, LLMK__KV_VARIANTS)

/* ------------------------------------------------------------------ movers */

typedef struct llmk__kv_run {
  int64_t tok_off, cache_off, len, tok_stride, cache_stride;
  int64_t head;
} llmk__kv_run;

enum { LLMK__KV_COPY, LLMK__KV_QUANT, LLMK__KV_DEQUANT }; /* llmk__kv_side.mode */

/* One of K and V. "tok" is the token side ([T, H, D]: key/value for scatter, the
 * outputs for gather); "cache" the paged side. */
typedef struct llmk__kv_side {
  bool present;
  bool gather; /* cache -> tok (else tok -> cache) */
  const struct llmk__kv_kernels *kern;
  char *tok, *cache;
  int64_t tok_s0;             /* token stride */
  int64_t cache_sb, cache_so; /* block and in-block offset strides */
  llmk_dtype tok_dt, cache_dt;
  size_t tok_esz, cache_esz;
  int mode;
  bool e5m2;
  const char *scale; /* f32 */
  int64_t scale_n, scale_stride;
  int64_t H, D;
  llmk__kv_run *runs;
  int64_t nruns;
  bool group;       /* see move_group() */
  bool unit_copy;   /* a bit copy whose runs all have unit strides on both sides */
  size_t row_bytes; /* kv_plan.rows: bytes per token */
} llmk__kv_side;

float llmk__kv_scale_of(const llmk__kv_side *k, int64_t head);
/* Moves one token's row between its [H, D] tensor row `tok` and its cache slot `cache`,
 * run by run: bit copies and contiguous (de)quantization through k->kern, strided runs
 * element by element. With stream, the caller calls k->kern->fence() when done. */
void llmk__kv_move_token(const llmk__kv_side *k, char *tok, char *cache, bool stream);
/* Tokens t0..t0+g-1 of k->tok to (or from) g consecutive slots from `cache`, in one
 * block: for layouts that cut a row into pieces (x-split, NZ), in tiles of about a cache
 * line. */
void llmk__kv_move_group(const llmk__kv_side *k, int64_t t0, int64_t g, char *cache,
                         bool stream);

#endif
