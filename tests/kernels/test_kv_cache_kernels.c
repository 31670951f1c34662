/* SPDX-License-Identifier: Apache-2.0 */
/* Every table of llmk__kv_kernel_list that this CPU runs gives the scalar table's bytes,
 * bit for bit: quant (f32 / f16 / bf16 -> e4m3 / e5m2, divided by a scale), dequant
 * (e4m3 / e5m2 -> f32 / f16 / bf16, times a scale) and copy (plain and streaming, then
 * fence). Sources hold every special class (zeros, infinities, NaNs, subnormals, huge
 * values, the fp8 values and rounding midpoints times the scale); scales are the
 * positive finite ones the ops accept, subnormal and huge included; runs have every
 * length up to 160 and long ones, at misaligned starts, with the bytes around the
 * destination compared too and guard zones checked. */
#include <float.h>
#include <math.h>

#include "kernel_list.h"
#include "kernels/convert/convert-elem.h"
#include "kernels/kv_cache/kv_cache.h"
#include "test_util.h"

static const llmk__kv_kernels *const S = &llmk__kv_kernels_scalar;

#define SLACK 128
#define MAXN 20000

static tu_buf da, db;
static unsigned char *pa, *pb;

static const llmk_dtype dtypes[3] = {LLMK_F32, LLMK_F16, LLMK_BF16};

static void fill_dst(size_t bytes) {
  memset(pa, 0xcd, bytes);
  memset(pb, 0xcd, bytes);
}

/* pa (scalar) and pb (variant) after one call on a run at byte `at` of `len` bytes:
 * the same bytes everywhere, the scalar one untouched outside the run */
static void verdict(const llmk__kv_kernels *k, size_t bytes, size_t at, size_t len,
                    size_t esz, const void *src, size_t sesz, const char *what) {
  size_t first = bytes;
  for (size_t i = 0; i < bytes && first == bytes; i++)
    if (pa[i] != pb[i]) first = i;
  bool outside = false;
  for (size_t i = 0; i < at; i++) outside = outside || pa[i] != 0xcd;
  for (size_t i = at + len; i < bytes; i++) outside = outside || pa[i] != 0xcd;
  bool guards = tu_buf_check(&da) && tu_buf_check(&db);
  if (first == bytes) {
    TU_CHECK(!outside && guards, "%s %s: written outside the run", llmk_isa_name(k->isa),
             what);
    return;
  }
  long e = first < at ? -1 : (long)((first - at) / esz);
  uint32_t va = 0, vb = 0, vs = 0;
  if (e >= 0 && (size_t)e * esz + esz <= len) {
    memcpy(&va, pa + at + (size_t)e * esz, esz);
    memcpy(&vb, pb + at + (size_t)e * esz, esz);
    if (src) memcpy(&vs, (const char *)src + (size_t)e * sesz, sesz);
  } else {
    va = pa[first];
    vb = pb[first];
  }
  TU_CHECK(false, "%s %s: element %ld (source bits 0x%0*x): scalar 0x%0*x, %s 0x%0*x",
           llmk_isa_name(k->isa), what, e, (int)(2 * sesz), (unsigned)vs, (int)(2 * esz),
           (unsigned)va, llmk_isa_name(k->isa), (int)(2 * esz), (unsigned)vb);
}

static float f32_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float scales[24];
static int nscales;

static float fp8v[2][256]; /* every fp8 value, e4m3 and e5m2 */

/* a source value for quant at scale s */
static float quant_value(float s) {
  int e5 = (int)tu_rand_range(0, 1);
  uint8_t b = (uint8_t)tu_rand_u64();
  switch (tu_rand_range(0, 11)) {
    case 0: {
      static const uint32_t sp[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                    0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x00000001u,
                                    0x807fffffu, 0x7f7fffffu, 0xff7fffffu, 0x00800000u};
      return f32_of(sp[tu_rand_range(0, (int64_t)(sizeof sp / sizeof sp[0]) - 1)]);
    }
    case 1:
    case 2: /* an fp8 value times the scale */
      return fp8v[e5][b] * s;
    case 3:
    case 4: { /* a midpoint between neighbouring fp8 values, times the scale */
      float a = fp8v[e5][b & 0x7e], c = fp8v[e5][(b & 0x7e) + 1];
      float m = (float)(((double)a + (double)c) / 2) * s;
      if (b & 0x80) m = -m;
      uint32_t u;
      memcpy(&u, &m, 4);
      u += (uint32_t)tu_rand_range(-1, 1);
      return f32_of(u);
    }
    case 5: /* past the largest values */
      return (float)((tu_rand_unit() - 0.5) * 2.0 * 70000.0) * s;
    case 6:
      return f32_of((uint32_t)tu_rand_u64());
    default:
      return (float)((tu_rand_unit() - 0.5) * 1000.0) * s;
  }
}

static void check_quant(const llmk__kv_kernels *k) {
  static float xf[MAXN];
  static uint16_t x16[MAXN];
  for (int si = 0; si < nscales; si++) {
    float s = scales[si];
    for (int di = 0; di < 3; di++) {
      llmk_dtype dt = dtypes[di];
      size_t esz = llmk_dtype_size(dt);
      for (int rep = 0; rep < 60; rep++) {
        size_t n = rep < 40   ? (size_t)tu_rand_range(0, 160)
                   : rep < 58 ? (size_t)tu_rand_range(0, 2000)
                              : (size_t)tu_rand_range(MAXN - 64, MAXN - 8);
        size_t soff = (size_t)tu_rand_range(0, 7), doff = (size_t)tu_rand_range(0, 70);
        for (size_t i = 0; i < n + soff; i++) {
          float v = quant_value(s);
          if (dt == LLMK_F32)
            xf[i] = v;
          else if (tu_rand_range(0, 7) == 0)
            x16[i] = (uint16_t)tu_rand_u64();
          else
            llmk__store_f32(&x16[i], dt, v);
        }
        const void *src =
            dt == LLMK_F32 ? (const void *)(xf + soff) : (const void *)(x16 + soff);
        for (int e5 = 0; e5 < 2; e5++) {
          size_t bytes = 2 * SLACK + doff + n;
          fill_dst(bytes);
          S->quant(pa + SLACK + doff, src, dt, e5, n, s);
          k->quant(pb + SLACK + doff, src, dt, e5, n, s);
          char what[96];
          snprintf(what, sizeof what, "quant %s->%s n=%zu scale=%a soff=%zu doff=%zu",
                   llmk_dtype_name(dt), e5 ? "e5m2" : "e4m3", n, (double)s, soff, doff);
          verdict(k, bytes, SLACK + doff, n, 1, src, esz, what);
        }
      }
    }
  }
}

static void check_dequant(const llmk__kv_kernels *k) {
  static uint8_t q[MAXN + 8];
  for (int si = 0; si < nscales; si++) {
    float s = scales[si];
    for (int di = 0; di < 3; di++) {
      llmk_dtype dt = dtypes[di];
      size_t esz = llmk_dtype_size(dt);
      for (int rep = 0; rep < 40; rep++) {
        /* every byte at least once in the long runs (rep 0: 0..255 in order) */
        size_t n = rep == 0   ? 256
                   : rep < 30 ? (size_t)tu_rand_range(0, 160)
                   : rep < 38 ? (size_t)tu_rand_range(0, 2000)
                              : (size_t)tu_rand_range(MAXN - 64, MAXN);
        size_t soff = rep == 0 ? 0 : (size_t)tu_rand_range(0, 7);
        size_t doff = rep == 0 ? 0 : (size_t)tu_rand_range(0, 35) * esz; /* aligned */
        for (size_t i = 0; i < n + soff; i++)
          q[i] = rep == 0 ? (uint8_t)i : (uint8_t)(i < 256 ? i * 167 : tu_rand_u64());
        for (int e5 = 0; e5 < 2; e5++) {
          size_t bytes = 2 * SLACK + doff + n * esz;
          fill_dst(bytes);
          S->dequant(pa + SLACK + doff, dt, q + soff, e5, n, s);
          k->dequant(pb + SLACK + doff, dt, q + soff, e5, n, s);
          char what[96];
          snprintf(what, sizeof what, "dequant %s->%s n=%zu scale=%a soff=%zu doff=%zu",
                   e5 ? "e5m2" : "e4m3", llmk_dtype_name(dt), n, (double)s, soff, doff);
          verdict(k, bytes, SLACK + doff, n * esz, esz, q + soff, 1, what);
        }
      }
    }
  }
}

static void check_copy(const llmk__kv_kernels *k) {
  enum { BIG = 300000 };
  static unsigned char src[BIG + 128];
  for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)tu_rand_u64();
  for (int rep = 0; rep < 700; rep++) {
    size_t n = rep < 320   ? (size_t)rep
               : rep < 600 ? (size_t)tu_rand_range(0, 5000)
                           : (size_t)tu_rand_range(0, BIG);
    size_t soff = (size_t)tu_rand_range(0, 127), doff = (size_t)tu_rand_range(0, 127);
    if (rep % 5 == 0) doff = (64 - SLACK % 64) % 64; /* destination line-aligned */
    for (int stream = 0; stream < 2; stream++) {
      size_t bytes = 2 * SLACK + doff + n;
      fill_dst(bytes);
      S->copy(pa + SLACK + doff, src + soff, n, stream);
      S->fence();
      k->copy(pb + SLACK + doff, src + soff, n, stream);
      k->fence();
      char what[96];
      snprintf(what, sizeof what, "copy bytes=%zu stream=%d soff=%zu doff=%zu", n, stream,
               soff, doff);
      TU_CHECK(!memcmp(pa + SLACK + doff, src + soff, n), "scalar %s: not a copy", what);
      verdict(k, bytes, SLACK + doff, n, 1, src + soff, 1, what);
    }
  }
}

static void check_table(const void *table) {
  const llmk__kv_kernels *k = table;
  check_quant(k);
  check_dequant(k);
  check_copy(k);
}

int main(void) {
  tu_seed(0x6b76);
  for (int e5 = 0; e5 < 2; e5++)
    for (int i = 0; i < 256; i++) fp8v[e5][i] = llmk__fp8_to_f32((uint8_t)i, e5);
  static const float fixed[] = {1.0f, 0.5f, 2.0f, 0.1f, 3.0f, FLT_MIN, FLT_TRUE_MIN,
                                1e-40f, FLT_MAX, 3e38f, 1e-20f, 1e20f, 1.0f / 448.0f,
                                0.0078125f,
                                /* powers of two at the AVX-512 bf16 path's ends */
                                0x1p-100f, 0x1p-101f, 0x1p100f, 0x1p126f};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    scales[nscales++] = fixed[i];
  while (nscales < 20) scales[nscales++] = (float)exp((tu_rand_unit() - 0.5) * 20.0);
  size_t cap = 2 * SLACK + 256 + 300000 + 4 * MAXN;
  da = tu_buf_alloc(cap);
  db = tu_buf_alloc(cap);
  pa = da.data;
  pb = db.data;
  kl_each(&llmk__kv_kernel_list, check_table);
  tu_buf_free(&da);
  tu_buf_free(&db);
  return tu_finish("test_kv_cache_kernels");
}
