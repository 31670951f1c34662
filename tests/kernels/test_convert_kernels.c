/* SPDX-License-Identifier: Apache-2.0 */
/* Every function of every table of llmk__convert_kernel_list that this CPU runs gives the
 * scalar table's bytes, bit for bit: to f32 from every f16 / bf16 source pattern (2^16)
 * and every e4m3 / e5m2 pattern (2^8); from f32 on a sample of f32 bit patterns holding
 * every special class (zeros, infinities, quiet and signalling NaNs with payloads,
 * subnormals, the largest values, the rounding midpoints of each target format and their
 * neighbours, the overflow thresholds) and random bits. Each runs over the whole sample
 * at several source / destination offsets and over every short length, with the bytes
 * around the destination compared too (nothing written outside [0, n)) and guard zones
 * checked. */
#include <math.h>

#include "kernel_list.h"
#include "kernels/convert/convert.h"
#include "test_util.h"

static const llmk__convert_kernels *const S = &llmk__convert_kernels_scalar;

#define SLACK 128 /* bytes before and after a destination run, compared */

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* One call of fn (to f32) on both tables: src of n elements of esz bytes starting at
 * element soff of `src`, dst at byte doff past SLACK; the whole buffers compared. */
typedef void (*run_fn)(const llmk__convert_kernels *t, int which, void *dst,
                       const void *src, size_t n);

static void run_to(const llmk__convert_kernels *t, int which, void *dst, const void *src,
                   size_t n) {
  llmk__cvt_to_f32_fn f[4] = {t->f16_to_f32, t->bf16_to_f32, t->e4m3_to_f32,
                              t->e5m2_to_f32};
  f[which](dst, src, n);
}

static void run_from(const llmk__convert_kernels *t, int which, void *dst,
                     const void *src, size_t n) {
  llmk__cvt_from_f32_fn f[4] = {t->f32_to_f16, t->f32_to_bf16, t->f32_to_e4m3,
                                t->f32_to_e5m2};
  f[which](dst, src, n);
}

static const char *const to_names[4] = {"f16_to_f32", "bf16_to_f32", "e4m3_to_f32",
                                        "e5m2_to_f32"};
static const char *const from_names[4] = {"f32_to_f16", "f32_to_bf16", "f32_to_e4m3",
                                          "f32_to_e5m2"};

static tu_buf da, db; /* destinations, scalar and variant */

/* src: element `start` of the sample (esz bytes each), n elements; dst n * desz bytes at
 * byte offset doff, a multiple of desz (element-aligned, as tensors are, but at any
 * position in a vector or cache line) */
static void compare(const llmk__convert_kernels *k, run_fn run, int which,
                    const char *name, const void *sample, size_t esz, size_t start,
                    size_t n, size_t desz, size_t doff) {
  const size_t bytes = 2 * SLACK + doff + n * desz;
  if (bytes > da.size) {
    fprintf(stderr, "internal: run of %zu bytes too long\n", bytes);
    exit(2);
  }
  unsigned char *pa = da.data, *pb = db.data;
  memset(pa, 0xcd, bytes);
  memset(pb, 0xcd, bytes);
  const void *src = (const char *)sample + start * esz;
  run(S, which, pa + SLACK + doff, src, n);
  run(k, which, pb + SLACK + doff, src, n);
  size_t first = bytes;
  for (size_t i = 0; i < bytes && first == bytes; i++)
    if (pa[i] != pb[i]) first = i;
  bool outside = false; /* the scalar one writes only [0, n) */
  for (size_t i = 0; i < SLACK + doff; i++) outside = outside || pa[i] != 0xcd;
  for (size_t i = SLACK + doff + n * desz; i < bytes; i++)
    outside = outside || pa[i] != 0xcd;
  if (first == bytes) {
    TU_CHECK(!outside && tu_buf_check(&da) && tu_buf_check(&db),
             "%s %s n=%zu start=%zu doff=%zu: wrote outside its run",
             llmk_isa_name(k->isa), name, n, start, doff);
    return;
  }
  /* the element of the first difference (-1: before the run) */
  long e = first < SLACK + doff ? -1 : (long)((first - SLACK - doff) / desz);
  char srcbits[32] = "(outside the run)";
  if (e >= 0 && (size_t)e < n) {
    const unsigned char *s = (const unsigned char *)src + (size_t)e * esz;
    uint32_t v = 0;
    memcpy(&v, s, esz);
    snprintf(srcbits, sizeof srcbits, "0x%0*x", (int)(2 * esz), (unsigned)v);
  }
  uint32_t va = 0, vb = 0;
  size_t at = (size_t)((long)(SLACK + doff) + e * (long)desz);
  if (at + desz <= bytes) {
    memcpy(&va, pa + at, desz);
    memcpy(&vb, pb + at, desz);
  }
  TU_CHECK(false,
           "%s %s n=%zu start=%zu doff=%zu: element %ld (source bits %s): scalar 0x%0*x, "
           "%s 0x%0*x",
           llmk_isa_name(k->isa), name, n, start, doff, e, srcbits, (int)(2 * desz),
           (unsigned)va, llmk_isa_name(k->isa), (int)(2 * desz), (unsigned)vb);
}

/* every length 0..130 at a few starts and offsets, then the whole sample and long runs
 * at each of several offsets */
static void sweep(const llmk__convert_kernels *k, run_fn run, int which, const char *name,
                  const void *sample, size_t esz, size_t count, size_t desz) {
  for (size_t n = 0; n <= 130 && n <= count; n++) {
    size_t start = (size_t)tu_rand_range(0, (int64_t)(count - n));
    size_t doff = (size_t)tu_rand_range(0, 17) * desz;
    compare(k, run, which, name, sample, esz, start, n, desz, doff);
    compare(k, run, which, name, sample, esz, n % 7, n, desz, 0);
  }
  for (size_t off = 0; off < 5; off++) {
    size_t n = count - off;
    compare(k, run, which, name, sample, esz, off, n, desz, off * desz);
    compare(k, run, which, name, sample, esz, off, n, desz, (off * 3 + 1) % 16 * desz);
  }
  for (int r = 0; r < 40; r++) {
    size_t n = (size_t)tu_rand_range(0, (int64_t)(count < 5000 ? count : 5000));
    size_t start = (size_t)tu_rand_range(0, (int64_t)(count - n));
    compare(k, run, which, name, sample, esz, start, n, desz,
            (size_t)tu_rand_range(0, 17) * desz);
  }
}

/* the f32 sample for the from_f32 direction */
static float *from_sample;
static size_t from_count, from_cap;

static void add(uint32_t u) {
  if (from_count == from_cap) {
    fprintf(stderr, "internal: from_f32 sample over %zu\n", from_cap);
    exit(2);
  }
  memcpy(&from_sample[from_count++], &u, 4);
}

/* u and its neighbours up to 2 ulps away (same sign), and their negations */
static void add_near(uint32_t u) {
  for (int d = -2; d <= 2; d++) {
    uint32_t v = u + (uint32_t)d;
    if ((v ^ u) & 0x80000000u) continue;
    add(v);
    add(v ^ 0x80000000u);
  }
}

static void build_from_sample(size_t cap) {
  from_sample = malloc(cap * sizeof(float));
  if (!from_sample) exit(2);
  from_count = 0;
  from_cap = cap;
  /* special classes */
  static const uint32_t specials[] = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, /* zeros, infinities */
      0x7fc00000u, 0xffc00000u, 0x7fffffffu, 0xffffffffu, /* quiet NaNs */
      0x7f800001u, 0xff800001u, 0x7fa00000u, 0x7fbfffffu, /* signalling NaNs */
      0x7fc00001u, 0x7fe12345u, 0x7f80ffffu, 0x7f812000u, /* payloads */
      0x00000001u, 0x007fffffu, 0x00400000u, 0x00800000u, /* subnormals, min normal */
      0x7f7fffffu, 0x7f7f0000u, 0x7f7f8000u, 0x3f800000u, /* largest, 1 */
      0x477fe000u, 0x477ff000u, 0x47800000u,              /* f16 max, overflow */
      0x43e00000u, 0x43f00000u, 0x43e80000u,              /* e4m3 448, 480, 464 */
      0x47600000u, 0x47700000u, 0x47800000u,              /* e5m2 57344, 61440 */
      0x33800000u, 0x33000000u, 0x38800000u,              /* f16 subnormal edges */
      0x3b000000u, 0x3a800000u, 0x37800000u, 0x37000000u, /* fp8 subnormal edges */
  };
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) add_near(specials[i]);
  /* bf16: every upper half with lower halves at and around the midpoint, and 0 */
  for (uint32_t h = 0; h < 65536; h++) {
    uint32_t u = h << 16;
    add(u);
    add(u | 0x7fffu);
    add(u | 0x8000u);
    add(u | 0x8001u);
    add(u | (uint32_t)(tu_rand_u64() & 0xffffu));
  }
  /* f16: every value and the midpoint to the next one, with neighbours */
  {
    static float v16[65536];
    uint16_t h[65536];
    for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    S->f16_to_f32(v16, h, 65536);
    for (uint32_t i = 0; i < 0x7c00u; i++) { /* positive finite */
      float a = v16[i], b = v16[i + 1];
      add_near(bits_of(a));
      add_near(bits_of((float)(((double)a + (double)b) / 2)));
    }
  }
  /* fp8: the same for every e4m3 / e5m2 value, and a step past the largest */
  for (int e5 = 0; e5 < 2; e5++) {
    float v8[256];
    uint8_t b8[256];
    for (int i = 0; i < 256; i++) b8[i] = (uint8_t)i;
    (e5 ? S->e5m2_to_f32 : S->e4m3_to_f32)(v8, b8, 256);
    int top = e5 ? 0x7b : 0x7e; /* largest finite */
    for (int i = 0; i <= top; i++) {
      float a = v8[i], b = i < top ? v8[i + 1] : a + (a - v8[i - 1]);
      add_near(bits_of(a));
      add_near(bits_of((float)(((double)a + (double)b) / 2)));
      add_near(bits_of(b));
    }
  }
  /* every exponent with random significands, then random bits */
  for (uint32_t e = 0; e < 256; e++)
    for (int r = 0; r < 8; r++) {
      uint32_t u = e << 23 | (uint32_t)(tu_rand_u64() & 0x7fffffu);
      add(u);
      add(u | 0x80000000u);
    }
  while (from_count < cap) add((uint32_t)tu_rand_u64());
  /* shuffled, so that every class meets every lane and tail position */
  for (size_t i = from_count - 1; i > 0; i--) {
    size_t j = (size_t)tu_rand_range(0, (int64_t)i);
    float t = from_sample[i];
    from_sample[i] = from_sample[j];
    from_sample[j] = t;
  }
}

static uint16_t src16[65536];
static uint8_t src8[256 * 8]; /* every byte, 8 times over, shuffled after the first 256 */

static void check_table(const void *table) {
  const llmk__convert_kernels *k = table;
  for (int w = 0; w < 4; w++) {
    if (w < 2)
      sweep(k, run_to, w, to_names[w], src16, 2, 65536, 4);
    else
      sweep(k, run_to, w, to_names[w], src8, 1, sizeof src8, 4);
  }
  for (int w = 0; w < 4; w++)
    sweep(k, run_from, w, from_names[w], from_sample, 4, from_count, w < 2 ? 2 : 1);
  /* the to_f32 results are what the scalar functions make of each pattern: NaN in, NaN
   * out, so that the table compared against is itself sane */
  static float out[65536];
  for (int w = 0; w < 2; w++) {
    run_to(k, w, out, src16, 65536);
    bool ok = true;
    for (uint32_t i = 0; i < 65536; i++) {
      uint32_t h = src16[i];
      bool nan16 = w ? (h & 0x7fffu) > 0x7f80u : (h & 0x7fffu) > 0x7c00u;
      ok = ok && (isnan(out[i]) == nan16);
    }
    TU_CHECK(ok, "%s %s: NaN in is not NaN out", llmk_isa_name(k->isa), to_names[w]);
  }
}

int main(void) {
  tu_seed(0xc0417e);
  for (uint32_t i = 0; i < 65536; i++) src16[i] = (uint16_t)i;
  for (size_t i = 0; i < sizeof src8; i++) src8[i] = (uint8_t)i;
  for (size_t i = sizeof src8 - 1; i >= 256; i--) {
    size_t j = (size_t)tu_rand_range(256, (int64_t)i);
    uint8_t t = src8[i];
    src8[i] = src8[j];
    src8[j] = t;
  }
  build_from_sample((size_t)1 << 21);
  printf("from_f32 sample: %zu f32 patterns\n", from_count);
  size_t cap = 2 * SLACK + 128 + from_count * 4;
  da = tu_buf_alloc(cap);
  db = tu_buf_alloc(cap);
  kl_each(&llmk__convert_kernel_list, check_table);
  tu_buf_free(&da);
  tu_buf_free(&db);
  free(from_sample);
  return tu_finish("test_convert_kernels");
}
