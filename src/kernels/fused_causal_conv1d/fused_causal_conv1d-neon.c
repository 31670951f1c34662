/* SPDX-License-Identifier: Apache-2.0 */
/* NEON (aarch64): llmk__conv1d_cols on groups of G x 4 channels, operation for
 * operation; the window and the taps stay in registers while the tokens stream by. */
#include "kernels/common/exp-neon.h"
#include "kernels/convert/convert-neon.h"
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"

#define INLINE static inline __attribute__((always_inline))

/* NaN lanes as LLMK__CONV_NAN (fused_causal_conv1d.h); a compare and a select cost less
 * than a test across the lanes would */
INLINE float32x4_t canon_nan(float32x4_t y) {
  return vbslq_f32(vceqq_f32(y, y), y, vdupq_n_f32(LLMK__CONV_NAN));
}

/* bf16 rounding of canonical values: the one NaN left rounds to the bf16 NaN that
 * llmk__f32_to_bf16 gives it, so the NaN select of llmk__neon_bf16_bits is not needed */
INLINE uint32x4_t bf16_round(float32x4_t x) {
  uint32x4_t u = vreinterpretq_u32_f32(x);
  uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
  return vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7fff)), lsb);
}

/* 8 bf16 values with one store: the high halves of the rounded lanes */
INLINE void store_bf16x2(void *dst, float32x4_t a, float32x4_t b) {
  uint16x8_t v = vuzp2q_u16(vreinterpretq_u16_u32(bf16_round(canon_nan(a))),
                            vreinterpretq_u16_u32(bf16_round(canon_nan(b))));
  vst1q_u8((uint8_t *)dst, vreinterpretq_u8_u16(v));
}

INLINE void group(const llmk__conv1d_seq *a, size_t c, int64_t i0, int64_t i1,
                  const int K, const int G, const llmk_dtype dt, const bool plain) {
  const size_t esz = dt == LLMK_F32 ? 4 : 2;
  const bool silu = !plain && (a->flags & LLMK__CONV_SILU);
  const bool resid = !plain && (a->flags & LLMK__CONV_RESID);
  const float *bias = plain ? NULL : a->bias;
  float32x4_t w[4][4], b[4], h[3][4];
  _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
    _Pragma("GCC unroll 4") for (int k = 0; k < K; k++) w[k][g] =
        vld1q_f32(a->w + (size_t)k * a->wstride + c + 4 * g);
    b[g] = bias ? vld1q_f32(bias + c + 4 * g) : vdupq_n_f32(0.0f);
    _Pragma("GCC unroll 4") for (int r = 0; r < K - 1; r++) h[r][g] =
        i0 == 0 ? llmk__neon_load_f32(a->hist + r * a->hstride + (c + 4 * g) * esz, dt)
                : vld1q_f32(a->wbuf + (size_t)r * a->n + c + 4 * g);
  }
  const char *const x0 = a->x + c * esz;
  char *const y0 = a->y + c * esz;
  const ptrdiff_t xs = a->xstride, ys = a->ystride;
  const int64_t reset = a->reset;
  for (int64_t i = i0; i < i1; i++) {
    const char *row = x0 + i * xs;
    char *out = y0 + i * ys;
    float32x4_t y[4], xv[4];
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
      float32x4_t xi = llmk__neon_load_f32(row + 4 * g * esz, dt);
      float32x4_t acc = vmulq_f32(w[0][g], h[0][g]);
      _Pragma("GCC unroll 4") for (int k = 1; k < K - 1; k++) acc =
          vaddq_f32(acc, vmulq_f32(w[k][g], h[k][g]));
      acc = vaddq_f32(acc, vmulq_f32(w[K - 1][g], xi));
      if (bias) acc = vaddq_f32(acc, b[g]);
      y[g] = acc;
      xv[g] = xi;
      _Pragma("GCC unroll 4") for (int k = 0; k + 2 < K; k++) h[k][g] = h[k + 1][g];
      h[K - 2][g] = xi;
    }
    if (silu) llmk__neon_silu_n(y, G);
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
      if (!plain && i < reset) y[g] = vdupq_n_f32(0.0f);
      if (resid) y[g] = vaddq_f32(xv[g], y[g]);
    }
    if (dt == LLMK_BF16 && G % 2 == 0) {
      _Pragma("GCC unroll 4") for (int g = 0; g < G; g += 2)
          store_bf16x2(out + 4 * g * esz, y[g], y[g + 1]);
    } else {
      _Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
          llmk__neon_store_f32(out + 4 * g * esz, dt, canon_nan(y[g]));
    }
  }
  if (i1 < a->L)
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
        _Pragma("GCC unroll 4") for (int r = 0; r < K - 1; r++)
            vst1q_f32(a->wbuf + (size_t)r * a->n + c + 4 * g, h[r][g]);
}

/* 16 channels at a time only without bias, SiLU and reset: with them, the taps, the
 * window and the exp's temporaries of 16 channels overflow the 32 vector registers */
INLINE void seq_k_dt(const llmk__conv1d_seq *a, const int K, const llmk_dtype dt) {
  for (int64_t i0 = 0; i0 < a->L; i0 += LLMK__CONV_TILE) {
    int64_t i1 = a->L - i0 < LLMK__CONV_TILE ? a->L : i0 + LLMK__CONV_TILE;
    size_t c = 0;
    if (!a->bias && !a->flags && a->reset <= i0) {
      for (; c + 16 <= a->n; c += 16) group(a, c, i0, i1, K, 4, dt, true);
      for (; c + 8 <= a->n; c += 8) group(a, c, i0, i1, K, 2, dt, true);
    } else {
      for (; c + 8 <= a->n; c += 8) group(a, c, i0, i1, K, 2, dt, false);
    }
    for (; c + 4 <= a->n; c += 4) group(a, c, i0, i1, K, 1, dt, false);
    if (c < a->n) llmk__conv1d_cols(a, c, a->n, i0, i1);
  }
}

LLMK__CONV1D_SEQ_OF(neon)

const llmk__conv1d_kernels llmk__conv1d_kernels_neon = {.isa = LLMK_ISA_NEON,
                                                        .seq = llmk__conv1d_seq_neon};
