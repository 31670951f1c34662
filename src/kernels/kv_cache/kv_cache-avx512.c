/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "kernels/convert/convert-avx512.h"
#include "kernels/kv_cache/kv_cache.h"

/* bf16 -> fp8 of x / 2^e, 32 lanes of 16 bits, for e in [-100, 126]: x / 2^e is exact
 * in f32 (or below 2^-126, where every fp8 result is 0; bf16 subnormals, below 2^-126
 * before scaling, stay below 2^-26 after), so the f32 conversion's rounding of the
 * mantissa is bf16's 7 bits rounded to M, the exponent rebiased by the integer e:
 * target normals by the integer rounding, target subnormals by rounding the mantissa
 * with its hidden bit right by the exponent's distance, saturation by a min (and of
 * inf), then NaN and the sign: llmk__f32_to_fp8(f32(x) / 2^e), bit for bit (checked for
 * every bf16 value and every such e, both formats). */
static inline __m256i bf16_pow2_to_fp8(__m512i v, int e, bool e5m2) {
  const int M = e5m2 ? 2 : 3, drop = 7 - M, bias = e5m2 ? 15 : 7;
  const short sat = e5m2 ? 0x7b : 0x7e;
  __m512i u = _mm512_and_si512(v, _mm512_set1_epi16(0x7fff));
  /* target normals: round away `drop` bits, then exponent 127 + e -> bias */
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi16(u, drop), _mm512_set1_epi16(1));
  __m512i r =
      _mm512_srli_epi16(_mm512_add_epi16(_mm512_add_epi16(u, lsb),
                                         _mm512_set1_epi16((1 << (drop - 1)) - 1)),
                        drop);
  r = _mm512_sub_epi16(r, _mm512_set1_epi16((short)((127 - bias + e) * (1 << M))));
  r = _mm512_min_epi16(r, _mm512_set1_epi16(sat));
  /* target subnormals (|x / 2^e| below 2^(1 - bias)), steps of 2^(1 - bias - M):
   * (128 + m) >> sh to nearest even, sh = 8 - bias - M - (exponent - 127 - e), at most 9
   * (the result is 0 from 9 on) */
  __mmask32 sub =
      _mm512_cmplt_epu16_mask(u, _mm512_set1_epi16((short)((128 - bias + e) << 7)));
  if (sub) {
    __m512i x = _mm512_srli_epi16(u, 7);
    __m512i sh = _mm512_sub_epi16(_mm512_set1_epi16((short)(135 - bias - M + e)), x);
    sh = _mm512_min_epu16(sh, _mm512_set1_epi16(9));
    __m512i m = _mm512_or_si512(_mm512_and_si512(u, _mm512_set1_epi16(0x7f)),
                                _mm512_set1_epi16(0x80));
    __m512i half =
        _mm512_sub_epi16(_mm512_sllv_epi16(_mm512_set1_epi16(1),
                                           _mm512_sub_epi16(sh, _mm512_set1_epi16(1))),
                         _mm512_set1_epi16(1));
    __m512i mlsb = _mm512_and_si512(_mm512_srlv_epi16(m, sh), _mm512_set1_epi16(1));
    __m512i q = _mm512_srlv_epi16(_mm512_add_epi16(_mm512_add_epi16(m, half), mlsb), sh);
    r = _mm512_mask_mov_epi16(r, sub, q);
  }
  /* inf stays inf, whatever e: saturated */
  r = _mm512_mask_mov_epi16(r, _mm512_cmpeq_epi16_mask(u, _mm512_set1_epi16(0x7f80)),
                            _mm512_set1_epi16(sat));
  __m512i nan_code = e5m2 ? _mm512_or_si512(_mm512_set1_epi16(0x7e),
                                            _mm512_and_si512(_mm512_srli_epi16(u, 5),
                                                             _mm512_set1_epi16(1)))
                          : _mm512_set1_epi16(0x7f);
  r = _mm512_mask_mov_epi16(r, _mm512_cmpgt_epu16_mask(u, _mm512_set1_epi16(0x7f80)),
                            nan_code);
  r = _mm512_ternarylogic_epi32(r, _mm512_srli_epi16(v, 8), _mm512_set1_epi16(0x80),
                                0xf8);
  return _mm512_cvtepi16_epi8(r);
}

/* The same from f16 (exponent bias 15, 10 mantissa bits), for e in [-100, 100] (so
 * that x / 2^e stays a normal f32 or zero). f16 subnormals go the subnormal way with
 * their own mantissa, which is exact where e >= bias - 15 (they then stay below the
 * target's normals); below that bound the caller converts a vector holding one through
 * f32 (*f32 set). */
static inline __m256i f16_pow2_to_fp8(__m512i v, int e, bool e5m2, bool *f32) {
  const int M = e5m2 ? 2 : 3, drop = 10 - M, bias = e5m2 ? 15 : 7;
  const short sat = e5m2 ? 0x7b : 0x7e;
  __m512i u = _mm512_and_si512(v, _mm512_set1_epi16(0x7fff));
  __m512i x = _mm512_srli_epi16(u, 10);
  __mmask32 x0 = _mm512_cmpeq_epi16_mask(x, _mm512_setzero_si512()); /* 0, subnormal */
  __mmask32 fsub = x0 & _mm512_cmpneq_epi16_mask(u, _mm512_setzero_si512());
  *f32 = fsub && e < bias - 15;
  if (*f32) return _mm256_setzero_si256();
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi16(u, drop), _mm512_set1_epi16(1));
  __m512i r =
      _mm512_srli_epi16(_mm512_add_epi16(_mm512_add_epi16(u, lsb),
                                         _mm512_set1_epi16((1 << (drop - 1)) - 1)),
                        drop);
  r = _mm512_sub_epi16(r, _mm512_set1_epi16((short)((15 - bias + e) * (1 << M))));
  r = _mm512_min_epi16(r, _mm512_set1_epi16(sat));
  /* target subnormals: |x / 2^e| below 2^(1 - bias), f16 subnormals among them */
  int t = 16 - bias + e;
  __mmask32 sub = t <= 0 ? x0
                  : t >= 31
                      ? _mm512_cmplt_epu16_mask(u, _mm512_set1_epi16(0x7c00))
                      : _mm512_cmplt_epu16_mask(u, _mm512_set1_epi16((short)(t << 10)));
  if (sub) {
    /* x = mant * 2^(max(exp, 1) - 25); code = mant >> sh to nearest even, sh in [1, 12]
     */
    __m512i xe = _mm512_max_epu16(x, _mm512_set1_epi16(1));
    __m512i m = _mm512_and_si512(u, _mm512_set1_epi16(0x3ff));
    m = _mm512_or_si512(
        m, _mm512_maskz_mov_epi16(_mm512_cmpneq_epi16_mask(x, _mm512_setzero_si512()),
                                  _mm512_set1_epi16(0x400)));
    __m512i sh = _mm512_sub_epi16(_mm512_set1_epi16((short)(26 - bias - M + e)), xe);
    sh = _mm512_min_epi16(_mm512_max_epi16(sh, _mm512_set1_epi16(1)),
                          _mm512_set1_epi16(12)); /* zeros may have sh <= 0 */
    __m512i half =
        _mm512_sub_epi16(_mm512_sllv_epi16(_mm512_set1_epi16(1),
                                           _mm512_sub_epi16(sh, _mm512_set1_epi16(1))),
                         _mm512_set1_epi16(1));
    __m512i mlsb = _mm512_and_si512(_mm512_srlv_epi16(m, sh), _mm512_set1_epi16(1));
    __m512i q = _mm512_srlv_epi16(_mm512_add_epi16(_mm512_add_epi16(m, half), mlsb), sh);
    r = _mm512_mask_mov_epi16(r, sub, q);
  }
  r = _mm512_mask_mov_epi16(r, _mm512_cmpeq_epi16_mask(u, _mm512_set1_epi16(0x7c00)),
                            _mm512_set1_epi16(sat));
  __m512i nan_code = e5m2 ? _mm512_or_si512(_mm512_set1_epi16(0x7e),
                                            _mm512_and_si512(_mm512_srli_epi16(u, 8),
                                                             _mm512_set1_epi16(1)))
                          : _mm512_set1_epi16(0x7f);
  r = _mm512_mask_mov_epi16(r, _mm512_cmpgt_epu16_mask(u, _mm512_set1_epi16(0x7c00)),
                            nan_code);
  r = _mm512_ternarylogic_epi32(r, _mm512_srli_epi16(v, 8), _mm512_set1_epi16(0x80),
                                0xf8);
  return _mm512_cvtepi16_epi8(r);
}

static void quant_avx512(uint8_t *dst, const void *src, llmk_dtype dt, bool e5m2,
                         size_t n, float scale) {
  const char *s = src;
  size_t esz = dt == LLMK_F32 ? 4 : 2;
  /* x / 2^e is x * 2^-e, the same rounding of the same value (both factors normal) */
  const bool pow2 = llmk__is_pow2_scale(scale);
  if (pow2 && dt == LLMK_BF16) {
    uint32_t b;
    memcpy(&b, &scale, 4);
    int e = (int)(b >> 23) - 127;
    if (e >= -100) {
      size_t i = 0;
      for (; i < n; i += 32) {
        __mmask32 m = n - i >= 32 ? 0xffffffffu : (__mmask32)((1u << (n - i)) - 1);
        __m512i v = _mm512_maskz_loadu_epi16(m, s + i * 2);
        _mm256_mask_storeu_epi8(
            dst + i, m,
            e5m2 ? bf16_pow2_to_fp8(v, e, true) : bf16_pow2_to_fp8(v, e, false));
      }
      return;
    }
  }
  const __m512 vs = _mm512_set1_ps(pow2 ? 1.0f / scale : scale);
  if (pow2 && dt == LLMK_F16) {
    uint32_t b;
    memcpy(&b, &scale, 4);
    int e = (int)(b >> 23) - 127;
    if (e >= -100 && e <= 100) {
      for (size_t i = 0; i < n; i += 32) {
        __mmask32 m = n - i >= 32 ? 0xffffffffu : (__mmask32)((1u << (n - i)) - 1);
        __m512i v = _mm512_maskz_loadu_epi16(m, s + i * 2);
        bool f32;
        __m256i q =
            e5m2 ? f16_pow2_to_fp8(v, e, true, &f32) : f16_pow2_to_fp8(v, e, false, &f32);
        if (!f32) {
          _mm256_mask_storeu_epi8(dst + i, m, q);
          continue;
        }
        for (size_t h = i; h < i + 32 && h < n; h += 16) { /* an f16 subnormal: via f32 */
          __mmask16 mh = llmk__mask16(n - h);
          __m512 x = _mm512_mul_ps(llmk__avx512_load_f32(s + h * 2, dt, mh), vs);
          _mm_mask_storeu_epi8(dst + h, mh,
                               e5m2 ? llmk__avx512_f32_to_fp8(x, true)
                                    : llmk__avx512_f32_to_fp8(x, false));
        }
      }
      return;
    }
  }
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = llmk__mask16(n - i);
    __m512 v = llmk__avx512_load_f32(s + i * esz, dt, m);
    __m512 x = pow2 ? _mm512_mul_ps(v, vs) : _mm512_div_ps(v, vs);
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

/* Blocks of 32 dst rows x 8 dst columns: eight 64-byte loads (32 elements of 8 src rows),
 * an 8 x 8 transpose of 16-bit elements within each 128-bit lane (three rounds of
 * unpacks), and 32 stores of 16 bytes (8 elements of one dst row). No gathers, and no
 * limit on the strides. The edges element by element. */
#define T16_STORE(L, k)                                                     \
  _mm_storeu_si128((__m128i *)(void *)(d + (size_t)(8 * (L) + (k)) * drow), \
                   _mm512_extracti32x4_epi32(c[k], L))
#define T16_STORE_LANE(L) \
  do {                    \
    T16_STORE(L, 0);      \
    T16_STORE(L, 1);      \
    T16_STORE(L, 2);      \
    T16_STORE(L, 3);      \
    T16_STORE(L, 4);      \
    T16_STORE(L, 5);      \
    T16_STORE(L, 6);      \
    T16_STORE(L, 7);      \
  } while (0)

static void transpose16_narrow(char *dst, size_t drow, const char *src, size_t srow,
                               int64_t rows, int64_t cols) {
  int64_t i0 = 0;
  for (; i0 + 32 <= rows; i0 += 32) {
    int64_t j0 = 0;
    for (; j0 + 8 <= cols; j0 += 8) {
      const char *sp = src + (size_t)j0 * srow + (size_t)i0 * 2;
      __m512i r[8], a[8], b[8], c[8];
      for (int q = 0; q < 8; q++)
        r[q] = _mm512_loadu_si512((const void *)(sp + (size_t)q * srow));
      for (int q = 0; q < 4; q++) { /* pairs of rows, elements 0-3 and 4-7 of a lane */
        a[2 * q] = _mm512_unpacklo_epi16(r[2 * q], r[2 * q + 1]);
        a[2 * q + 1] = _mm512_unpackhi_epi16(r[2 * q], r[2 * q + 1]);
      }
      for (int q = 0; q < 2; q++) { /* four rows: elements (0,1) (2,3) (4,5) (6,7) */
        b[4 * q] = _mm512_unpacklo_epi32(a[4 * q], a[4 * q + 2]);
        b[4 * q + 1] = _mm512_unpackhi_epi32(a[4 * q], a[4 * q + 2]);
        b[4 * q + 2] = _mm512_unpacklo_epi32(a[4 * q + 1], a[4 * q + 3]);
        b[4 * q + 3] = _mm512_unpackhi_epi32(a[4 * q + 1], a[4 * q + 3]);
      }
      for (int q = 0; q < 4; q++) { /* eight rows: c[k] lane L = element 8L + k */
        c[2 * q] = _mm512_unpacklo_epi64(b[q], b[q + 4]);
        c[2 * q + 1] = _mm512_unpackhi_epi64(b[q], b[q + 4]);
      }
      char *d = dst + (size_t)i0 * drow + (size_t)j0 * 2;
      T16_STORE_LANE(0);
      T16_STORE_LANE(1);
      T16_STORE_LANE(2);
      T16_STORE_LANE(3);
    }
    for (int64_t i = i0; i < i0 + 32; i++)
      for (int64_t j = j0; j < cols; j++)
        memcpy(dst + (size_t)i * drow + j * 2, src + (size_t)j * srow + i * 2, 2);
  }
  for (int64_t i = i0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy(dst + (size_t)i * drow + j * 2, src + (size_t)j * srow + i * 2, 2);
}
#undef T16_STORE_LANE
#undef T16_STORE

/* 4 x 4 blocks of 16-byte elements: four 64-byte loads, a 4 x 4 transpose of their
 * 128-bit lanes, four 64-byte stores; the edges element by element. */
/* A 64-byte store, non-temporal when nt (o then 64-byte aligned). */
static inline void store64(char *o, __m512i v, bool nt) {
  if (nt)
    _mm512_stream_si512((void *)o, v);
  else
    _mm512_storeu_si512(o, v);
}

/* Whether every 64-byte store of a transpose to dst (rows drow bytes apart, stores at
 * multiples of 64 bytes from a row's start) can be non-temporal: streaming asked, and
 * all of them aligned. */
static inline bool nt_ok(const char *dst, size_t drow, bool stream) {
  return stream && ((uintptr_t)dst & 63) == 0 && drow % 64 == 0;
}

/* 16-bit elements in blocks of 8 dst rows x 32 dst columns: lane L of register q holds
 * 8 elements of src row 8L + q (four 16-byte loads), so that the in-lane 8 x 8 transpose
 * leaves dst row k's 32 elements, one whole 64-byte store, in register k. Columns past
 * the last multiple of 32 go to transpose16_narrow, rows past the last multiple of 8
 * element by element. */
static void transpose16_avx512(char *dst, size_t drow, const char *src, size_t srow,
                               int64_t rows, int64_t cols, bool stream) {
  const bool nt = nt_ok(dst, drow, stream);
  const int64_t jm = cols / 32 * 32;
  int64_t i0 = 0;
  if (jm > 0) {
    for (; i0 + 8 <= rows; i0 += 8)
      for (int64_t j0 = 0; j0 < jm; j0 += 32) {
        const char *sp = src + (size_t)j0 * srow + (size_t)i0 * 2;
        __m512i r[8], a[8], b[8], c[8];
        for (int q = 0; q < 8; q++) {
          const char *p = sp + (size_t)q * srow;
          __m512i v =
              _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(const void *)p));
          v = _mm512_inserti32x4(
              v, _mm_loadu_si128((const __m128i *)(const void *)(p + 8 * srow)), 1);
          v = _mm512_inserti32x4(
              v, _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * srow)), 2);
          r[q] = _mm512_inserti32x4(
              v, _mm_loadu_si128((const __m128i *)(const void *)(p + 24 * srow)), 3);
        }
        for (int q = 0; q < 4; q++) {
          a[2 * q] = _mm512_unpacklo_epi16(r[2 * q], r[2 * q + 1]);
          a[2 * q + 1] = _mm512_unpackhi_epi16(r[2 * q], r[2 * q + 1]);
        }
        for (int q = 0; q < 2; q++) {
          b[4 * q] = _mm512_unpacklo_epi32(a[4 * q], a[4 * q + 2]);
          b[4 * q + 1] = _mm512_unpackhi_epi32(a[4 * q], a[4 * q + 2]);
          b[4 * q + 2] = _mm512_unpacklo_epi32(a[4 * q + 1], a[4 * q + 3]);
          b[4 * q + 3] = _mm512_unpackhi_epi32(a[4 * q + 1], a[4 * q + 3]);
        }
        for (int q = 0; q < 4; q++) {
          c[2 * q] = _mm512_unpacklo_epi64(b[q], b[q + 4]);
          c[2 * q + 1] = _mm512_unpackhi_epi64(b[q], b[q + 4]);
        }
        char *d = dst + (size_t)i0 * drow + (size_t)j0 * 2;
        for (int k = 0; k < 8; k++) store64(d + (size_t)k * drow, c[k], nt);
      }
    for (int64_t i = i0; i < rows; i++)
      for (int64_t j = 0; j < jm; j++)
        memcpy(dst + (size_t)i * drow + j * 2, src + (size_t)j * srow + i * 2, 2);
  }
  if (jm < cols)
    transpose16_narrow(dst + (size_t)jm * 2, drow, src + (size_t)jm * srow, srow, rows,
                       cols - jm);
}

static void transpose128_avx512(char *dst, size_t drow, const char *src, size_t srow,
                                int64_t rows, int64_t cols, bool stream) {
  const bool nt = nt_ok(dst, drow, stream);
  int64_t i0 = 0;
  for (; i0 + 4 <= rows; i0 += 4) {
    int64_t j0 = 0;
    for (; j0 + 4 <= cols; j0 += 4) {
      const char *s = src + (size_t)j0 * srow + (size_t)i0 * 16;
      __m512i a = _mm512_loadu_si512(s), b = _mm512_loadu_si512(s + srow),
              c = _mm512_loadu_si512(s + 2 * srow), d = _mm512_loadu_si512(s + 3 * srow);
      /* t0 = a0 a1 b0 b1, t1 = a2 a3 b2 b3, t2 = c0 c1 d0 d1, t3 = c2 c3 d2 d3 */
      __m512i t0 = _mm512_shuffle_i64x2(a, b, 0x44),
              t1 = _mm512_shuffle_i64x2(a, b, 0xee),
              t2 = _mm512_shuffle_i64x2(c, d, 0x44),
              t3 = _mm512_shuffle_i64x2(c, d, 0xee);
      char *o = dst + (size_t)i0 * drow + (size_t)j0 * 16;
      store64(o, _mm512_shuffle_i64x2(t0, t2, 0x88), nt);            /* a0 b0 c0 d0 */
      store64(o + drow, _mm512_shuffle_i64x2(t0, t2, 0xdd), nt);     /* a1 b1 c1 d1 */
      store64(o + 2 * drow, _mm512_shuffle_i64x2(t1, t3, 0x88), nt); /* a2 ... */
      store64(o + 3 * drow, _mm512_shuffle_i64x2(t1, t3, 0xdd), nt);
    }
    for (int64_t i = i0; i < i0 + 4; i++)
      for (int64_t j = j0; j < cols; j++)
        memcpy(dst + (size_t)i * drow + (size_t)j * 16,
               src + (size_t)j * srow + (size_t)i * 16, 16);
  }
  for (int64_t i = i0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy(dst + (size_t)i * drow + (size_t)j * 16,
             src + (size_t)j * srow + (size_t)i * 16, 16);
}

/* 2 x 2 blocks of 32-byte elements: two 64-byte loads, two 256-bit lane shuffles, two
 * 64-byte stores; the edges element by element. */
static void transpose256_avx512(char *dst, size_t drow, const char *src, size_t srow,
                                int64_t rows, int64_t cols, bool stream) {
  const bool nt = nt_ok(dst, drow, stream);
  int64_t i0 = 0;
  for (; i0 + 2 <= rows; i0 += 2) {
    int64_t j0 = 0;
    for (; j0 + 2 <= cols; j0 += 2) {
      const char *s = src + (size_t)j0 * srow + (size_t)i0 * 32;
      __m512i a = _mm512_loadu_si512(s), b = _mm512_loadu_si512(s + srow);
      char *o = dst + (size_t)i0 * drow + (size_t)j0 * 32;
      store64(o, _mm512_shuffle_i64x2(a, b, 0x44), nt);        /* a0 b0 */
      store64(o + drow, _mm512_shuffle_i64x2(a, b, 0xee), nt); /* a1 b1 */
    }
    for (int64_t i = i0; i < i0 + 2; i++)
      for (int64_t j = j0; j < cols; j++)
        memcpy(dst + (size_t)i * drow + (size_t)j * 32,
               src + (size_t)j * srow + (size_t)i * 32, 32);
  }
  for (int64_t i = i0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy(dst + (size_t)i * drow + (size_t)j * 32,
             src + (size_t)j * srow + (size_t)i * 32, 32);
}

const llmk__kv_kernels llmk__kv_kernels_avx512 = {.isa = LLMK_ISA_AVX512,
                                                  .transpose16 = transpose16_avx512,
                                                  .transpose128 = transpose128_avx512,
                                                  .transpose256 = transpose256_avx512,
                                                  .quant = quant_avx512,
                                                  .dequant = dequant_avx512,
                                                  .copy = copy_avx512,
                                                  .fence = fence_avx512};
