/* SPDX-License-Identifier: Apache-2.0 */
/* Element conversions (f32 <-> f16, bf16, fp8 e4m3fn, fp8 e5m2) against the reference
 * in tests/ref/convert_ref.c, and the bulk llmk_convert against the per-element
 * functions on every ISA the machine supports. */
#include <float.h>
#include <math.h>

#include "convert_ref.h"
#include "llmk/convert.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* Random sample counts are divided by this under ASan to keep the run short. */
static long rand_scale = 1;

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Failures are counted per category (conversion and ISA) and only the first few of
 * each are printed, so that one broken conversion cannot hide the others behind the
 * harness's global print limit. */
#define CAT_DECODE 0  /* + format */
#define CAT_ENC 4     /* + format, non-NaN inputs */
#define CAT_ENC_NAN 8 /* + format, NaN inputs */
#define CAT_BULK 12   /* + pair * TU_NUM_ISAS + isa */
#define CAT_COUNT (CAT_BULK + 9 * TU_NUM_ISAS)
#define CAT_PRINT 3
static long cat_fail[CAT_COUNT];
static char cat_name[CAT_COUNT][48];
/* unprinted failures, added to the harness counts only at the end so that they do
 * not use up its print limit */
static long cat_silent;

#define CAT_CHECK(cat, cond, ...)             \
  do {                                        \
    if (cond) {                               \
      tu_checks++;                            \
    } else if (cat_fail[cat]++ < CAT_PRINT) { \
      TU_CHECK(cond, __VA_ARGS__);            \
    } else {                                  \
      cat_silent++;                           \
    }                                         \
  } while (0)

static void cat_summary(void) {
  tu_checks += cat_silent;
  tu_failures += cat_silent;
  for (int c = 0; c < CAT_COUNT; c++)
    if (cat_fail[c])
      fprintf(stderr, "FAILURES %s: %ld (first %d printed)\n", cat_name[c], cat_fail[c],
              CAT_PRINT);
}

/* ------------------------------------------------- per-format adapters */

static float dec_f16(uint32_t v) {
  return llmk_f16_to_f32((uint16_t)v);
}
static float dec_bf16(uint32_t v) {
  return llmk_bf16_to_f32((uint16_t)v);
}
static float dec_e4m3(uint32_t v) {
  return llmk_fp8_e4m3fn_to_f32((uint8_t)v);
}
static float dec_e5m2(uint32_t v) {
  return llmk_fp8_e5m2_to_f32((uint8_t)v);
}
static uint32_t enc_f16(float f) {
  return llmk_f32_to_f16(f);
}
static uint32_t enc_bf16(float f) {
  return llmk_f32_to_bf16(f);
}
static uint32_t enc_e4m3(float f) {
  return llmk_f32_to_fp8_e4m3fn(f);
}
static uint32_t enc_e5m2(float f) {
  return llmk_f32_to_fp8_e5m2(f);
}

typedef struct fmt_info {
  ref_fmt ref;
  llmk_dtype dtype;
  const char *name;
  size_t size;
  float (*dec)(uint32_t);
  uint32_t (*enc)(float);
} fmt_info;

static const fmt_info fmts[4] = {
    {REF_F16, LLMK_F16, "f16", 2, dec_f16, enc_f16},
    {REF_BF16, LLMK_BF16, "bf16", 2, dec_bf16, enc_bf16},
    {REF_FP8_E4M3FN, LLMK_FP8_E4M3FN, "fp8_e4m3fn", 1, dec_e4m3, enc_e4m3},
    {REF_FP8_E5M2, LLMK_FP8_E5M2, "fp8_e5m2", 1, dec_e5m2, enc_e5m2},
};

/* ------------------------------------------------------------ decoding */

static void test_decode(void) {
  for (int k = 0; k < 4; k++) {
    const fmt_info *fi = &fmts[k];
    uint32_t ncodes = 1u << ref_fmt_bits(fi->ref);
    int w = ref_fmt_bits(fi->ref) / 4;
    for (uint32_t c = 0; c < ncodes; c++) {
      float got = fi->dec(c);
      double exp = ref_decode(fi->ref, c);
      uint32_t g = f2u(got);
      if (isnan(exp) && fi->ref == REF_BF16) {
        /* bf16 widening is the plain shift: the NaN's bits are kept exactly */
        CAT_CHECK(CAT_DECODE + k, g == (c << 16),
                  "bf16->f32 in=0x%04x got=0x%08x expected=0x%08x", c, g, c << 16);
      } else if (isnan(exp)) {
        CAT_CHECK(CAT_DECODE + k,
                  isnan(got) && !!signbit(got) == !!signbit(exp) && (g & 0x00400000u),
                  "%s->f32 in=0x%0*x got=0x%08x expected a quiet NaN of sign %d",
                  fi->name, w, c, g, !!signbit(exp));
      } else {
        /* every narrow value is exact in f32, so compare bits (sign of zero too) */
        uint32_t e = f2u((float)exp);
        CAT_CHECK(CAT_DECODE + k, g == e && (double)got == exp,
                  "%s->f32 in=0x%0*x got=0x%08x expected=0x%08x", fi->name, w, c, g, e);
      }
    }
  }
  /* the NaN codes the reference knows, so the tables above cannot be vacuous */
  TU_CHECK(ref_is_nan(REF_FP8_E4M3FN, 0x7F) && ref_is_nan(REF_FP8_E4M3FN, 0xFF) &&
               !ref_is_nan(REF_FP8_E4M3FN, 0x7E) &&
               ref_decode(REF_FP8_E4M3FN, 0x7E) == 448.0,
           "reference e4m3fn definition");
  TU_CHECK(ref_max(REF_F16) == 65504.0 && ref_max(REF_FP8_E5M2) == 57344.0 &&
               ref_max(REF_FP8_E4M3FN) == 448.0 &&
               ref_min_subnormal(REF_F16) == 0x1p-24 &&
               ref_min_subnormal(REF_FP8_E4M3FN) == 0x1p-9 &&
               ref_min_subnormal(REF_FP8_E5M2) == 0x1p-16 &&
               ref_max(REF_BF16) == (double)u2f(0x7F7F0000u),
           "reference format constants");
}

/* ------------------------------------------------------------ encoding */

static long enc_checks;

static void check_enc(const fmt_info *fi, float x) {
  uint32_t got = fi->enc(x);
  int w = ref_fmt_bits(fi->ref) / 4;
  enc_checks++;
  if (isnan(x)) {
    int sign_ok = !!(got & ref_sign_mask(fi->ref)) == !!signbit(x);
    CAT_CHECK(CAT_ENC_NAN + (int)(fi - fmts), ref_is_quiet_nan(fi->ref, got) && sign_ok,
              "f32->%s in=0x%08x got=0x%0*x expected a quiet NaN of sign %d", fi->name,
              f2u(x), w, got, !!signbit(x));
    return;
  }
  uint32_t exp = ref_encode(fi->ref, x);
  CAT_CHECK(CAT_ENC + (int)(fi - fmts), got == exp,
            "f32->%s in=0x%08x (%a) got=0x%0*x expected=0x%0*x", fi->name, f2u(x),
            (double)x, w, got, w, exp);
}

/* x, its f32 neighbours, and the same with the other sign */
static void check_enc_near(const fmt_info *fi, float x) {
  float v[3] = {x, nextafterf(x, INFINITY), nextafterf(x, -INFINITY)};
  for (int i = 0; i < 3; i++) {
    check_enc(fi, v[i]);
    check_enc(fi, -v[i]);
  }
}

/* an exact double as f32 when representable (all midpoints here are) */
static void check_enc_near_d(const fmt_info *fi, double x) {
  float f = (float)x;
  TU_CHECK((double)f == x, "%s: test point %a not exact in f32", fi->name, x);
  check_enc_near(fi, f);
}

static void test_encode_values(const fmt_info *fi) {
  size_t n = ref_value_count(fi->ref);
  double max = ref_max(fi->ref);
  /* past max, the successor is the virtual max + ulp(max), so max's midpoint is
   * the overflow (f16/bf16) or saturation (fp8) boundary */
  double virt_next = max + (max - ref_value_at(fi->ref, n - 2));
  for (size_t i = 0; i < n; i++) {
    double v = ref_value_at(fi->ref, i);
    double nx = i + 1 < n ? ref_value_at(fi->ref, i + 1) : virt_next;
    check_enc_near_d(fi, v);
    check_enc_near_d(fi, v + (nx - v) / 2);
  }
  /* bf16's 2^128 is beyond f32; the inf inputs are covered elsewhere */
  if (virt_next <= FLT_MAX) check_enc_near_d(fi, virt_next);
  if (2 * virt_next <= FLT_MAX) check_enc_near_d(fi, 2 * virt_next);
}

static void test_encode_specials(void) {
  static const double f16_pts[] = {65504,   65520,   65536,   65472,   65488,   100000,
                                   0x1p-24, 0x1p-25, 0x3p-25, 0x1p-26, 0x1p-14, 0x1p-15};
  static const double e4m3_pts[] = {448,    464,     480,     512,     416,    432,   1e6,
                                    0x1p-9, 0x1p-10, 0x3p-10, 0x1p-11, 0x1p-6, 0x1p-7};
  static const double e5m2_pts[] = {57344,   61440,   65536,   49152,   53248,   1e6,
                                    0x1p-16, 0x1p-17, 0x3p-17, 0x1p-18, 0x1p-14, 0x1p-15};
  static const uint32_t bf16_pts[] = {0x7F7F0000u, 0x7F7F8000u, 0x7F7E8000u, 0x7F800000u,
                                      0x7F7FFFFFu, 0x00010000u, 0x00008000u, 0x00018000u,
                                      0x00004000u, 0x00800000u, 0x00400000u};
  /* f32 patterns every target sees: zeros, inf, f32 subnormals and extremes */
  static const uint32_t common_bits[] = {
      0x00000000u, 0x00000001u, 0x00000002u, 0x00000003u, 0x00007FFFu, 0x00008000u,
      0x00008001u, 0x0000FFFFu, 0x00400000u, 0x007FFFFFu, 0x00800000u, 0x00800001u,
      0x7F7FFFFFu, 0x7F800000u, 0x3F800000u, 0x3F801000u, 0x3F802000u, 0x3F803000u,
      0x3F808000u, 0x3F818000u, 0x3F7FFFFFu};
  /* quiet, signalling, payload in the bits a truncating conversion keeps or drops */
  static const uint32_t nan_bits[] = {0x7FC00000u, 0x7F800001u, 0x7FBFFFFFu, 0x7FFFFFFFu,
                                      0x7F802000u, 0x7F810000u, 0x7FA00000u, 0x7F800100u,
                                      0x7FC00001u, 0x7FE00000u, 0x7F900000u, 0x7F801FFFu};
  for (int k = 0; k < 4; k++) {
    const fmt_info *fi = &fmts[k];
    for (size_t i = 0; i < sizeof common_bits / sizeof *common_bits; i++)
      check_enc_near(fi, u2f(common_bits[i]));
    for (size_t i = 0; i < sizeof nan_bits / sizeof *nan_bits; i++) {
      check_enc(fi, u2f(nan_bits[i]));
      check_enc(fi, u2f(nan_bits[i] | 0x80000000u));
    }
    check_enc(fi, INFINITY);
    check_enc(fi, -INFINITY);
    check_enc(fi, FLT_MAX);
    check_enc(fi, -FLT_MAX);
    /* straddling the smallest subnormal s and s/2 (the tie to zero), and 3s/2 */
    double s = ref_min_subnormal(fi->ref);
    check_enc_near_d(fi, s);
    check_enc_near_d(fi, s / 2);
    check_enc_near_d(fi, s / 4);
    check_enc_near_d(fi, 3 * s / 2);
  }
  for (size_t i = 0; i < sizeof f16_pts / sizeof *f16_pts; i++)
    check_enc_near_d(&fmts[0], f16_pts[i]);
  for (size_t i = 0; i < sizeof bf16_pts / sizeof *bf16_pts; i++)
    check_enc_near(&fmts[1], u2f(bf16_pts[i]));
  for (size_t i = 0; i < sizeof e4m3_pts / sizeof *e4m3_pts; i++)
    check_enc_near_d(&fmts[2], e4m3_pts[i]);
  for (size_t i = 0; i < sizeof e5m2_pts / sizeof *e5m2_pts; i++)
    check_enc_near_d(&fmts[3], e5m2_pts[i]);
  /* all f32 subnormals are below every target's smallest subnormal except bf16's */
  for (int i = 0; i < 20000; i++) {
    float x = u2f((uint32_t)tu_rand_range(1, 0x007FFFFF) |
                  (tu_rand_u64() & 1 ? 0x80000000u : 0));
    for (int k = 0; k < 4; k++) check_enc(&fmts[k], x);
  }
}

/* A float whose binade lies in [smallest subnormal / 4, 2 * max] of the target, with
 * uniform mantissa bits and sign. */
static float rand_in_range(const fmt_info *fi) {
  int elo = ilogb(ref_min_subnormal(fi->ref)) - 2;
  int ehi = ilogb(ref_max(fi->ref)) + 1;
  if (ehi > 127) ehi = 127;
  int e = (int)tu_rand_range(elo, ehi);
  uint64_t r = tu_rand_u64();
  double m = (double)(0x800000u | (uint32_t)(r & 0x7FFFFF));
  float x = (float)ldexp(m, e - 23); /* rounds to an f32 subnormal below 2^-126 */
  return (r >> 32) & 1 ? -x : x;
}

static void test_encode_random(void) {
  long nbits = 2000000 / rand_scale, nrange = 1000000 / rand_scale;
  for (long i = 0; i < nbits; i++) {
    float x = u2f((uint32_t)tu_rand_u64());
    for (int k = 0; k < 4; k++) check_enc(&fmts[k], x);
  }
  for (int k = 0; k < 4; k++)
    for (long i = 0; i < nrange; i++) check_enc(&fmts[k], rand_in_range(&fmts[k]));
  printf(
      "encode: %ld random f32 bit patterns x 4 targets, %ld in-range values per target\n",
      nbits, nrange);
}

/* ---------------------------------------------------------------- bulk */

#define POOL_N 8192

typedef struct pair {
  llmk_dtype dst, src;
  const fmt_info *narrow; /* NULL for f32 -> f32 */
} pair;

static unsigned char *pool_f32;       /* POOL_N f32 inputs */
static unsigned char *pool_narrow[4]; /* POOL_N codes of each format */

static void put(unsigned char *p, size_t size, size_t i, uint32_t v) {
  if (size == 4)
    memcpy(p + 4 * i, &v, 4);
  else if (size == 2) {
    uint16_t h = (uint16_t)v;
    memcpy(p + 2 * i, &h, 2);
  } else
    p[i] = (unsigned char)v;
}
static uint32_t get(const unsigned char *p, size_t size, size_t i) {
  uint32_t v = 0;
  if (size == 4)
    memcpy(&v, p + 4 * i, 4);
  else if (size == 2) {
    uint16_t h;
    memcpy(&h, p + 2 * i, 2);
    v = h;
  } else
    v = p[i];
  return v;
}

static void make_pools(void) {
  static const uint32_t specials[] = {
      0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu, 0x7FFFFFFFu,
      0xFFFFFFFFu, 0x7F802000u, 0x7FC00001u, 0x7FA5A5A5u, 0x7F800000u, 0xFF800000u,
      0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00400000u, 0x7F7FFFFFu,
      0x477FE000u, 0x477FF000u, 0x43E00000u, 0x43E80000u, 0x43F00000u, 0x47600000u,
      0x47700000u, 0x7F7F8000u, 0x33800000u, 0x33000000u, 0x3B000000u, 0x3A800000u};
  size_t nsp = sizeof specials / sizeof *specials;
  pool_f32 = malloc(4 * POOL_N);
  for (size_t i = 0; i < POOL_N; i++) {
    uint32_t v;
    int kind = (int)(tu_rand_u64() % 8);
    if (kind == 0)
      v = specials[tu_rand_u64() % nsp];
    else if (kind <= 2)
      v = (uint32_t)tu_rand_u64();
    else if (kind == 3)
      v = 0x7F800000u | (uint32_t)tu_rand_range(1, 0x7FFFFF) |
          (tu_rand_u64() & 1 ? 0x80000000u : 0); /* NaN payloads */
    else if (kind == 4) { /* a tie between two neighbours of a random target */
      const fmt_info *fi = &fmts[tu_rand_u64() % 4];
      size_t n = ref_value_count(fi->ref), j = (size_t)tu_rand_range(0, (int64_t)n - 2);
      double mid = (ref_value_at(fi->ref, j) + ref_value_at(fi->ref, j + 1)) / 2;
      v = f2u((float)mid) | (tu_rand_u64() & 1 ? 0x80000000u : 0);
    } else
      v = f2u(rand_in_range(&fmts[kind - 5 + (tu_rand_u64() & 1)]));
    put(pool_f32, 4, i, v);
  }
  for (int k = 0; k < 4; k++) {
    size_t size = fmts[k].size;
    uint32_t mask = (1u << ref_fmt_bits(fmts[k].ref)) - 1;
    pool_narrow[k] = malloc(size * POOL_N);
    for (size_t i = 0; i < POOL_N; i++) {
      uint32_t v = (uint32_t)tu_rand_u64() & mask;
      /* fp8: sweep every code; 16-bit: bias toward the exponent-all-ones and zero
       * exponent codes (inf, NaN payloads, subnormals) */
      if (size == 1 && i < 1024)
        v = (uint32_t)i & mask;
      else if (size == 2 && i % 4 == 1)
        v |= fmts[k].ref == REF_F16 ? 0x7C00u : 0x7F80u;
      else if (size == 2 && i % 4 == 2)
        v &= fmts[k].ref == REF_F16 ? 0x83FFu : 0x807Fu;
      put(pool_narrow[k], size, i, v);
    }
  }
}

/* what the per-element functions give for element value v of the source */
static uint32_t expect_elem(const pair *p, uint32_t v) {
  if (!p->narrow) return v;
  if (p->src == LLMK_F32) return p->narrow->enc(u2f(v));
  return f2u(p->narrow->dec(v));
}

static long bulk_calls;

static void bulk_case(const pair *p, int pi, llmk_isa isa, size_t n, size_t soff,
                      size_t doff) {
  size_t ssz = llmk_dtype_size(p->src), dsz = llmk_dtype_size(p->dst);
  const unsigned char *pool =
      p->src == LLMK_F32 ? pool_f32 : pool_narrow[p->narrow - fmts];
  size_t start = (size_t)tu_rand_range(0, (int64_t)(POOL_N - n));
  /* exact-size source so that ASan sees any read past the end */
  size_t sbytes = (soff + n) * ssz;
  unsigned char *src = malloc(sbytes ? sbytes : 1);
  memset(src, 0xEE, soff * ssz);
  memcpy(src + soff * ssz, pool + start * ssz, n * ssz);
  /* dst: doff prefix elements of a fill pattern, then n elements; tu_buf guards after */
  tu_buf d = tu_buf_alloc((doff + n) * dsz);
  unsigned char *dst = d.data;
  memset(dst, 0x5A, (doff + n) * dsz);

  llmk_status st = llmk_convert(dst + doff * dsz, p->dst, src + soff * ssz, p->src, n);
  bulk_calls++;
  TU_CHECK(st == LLMK_SUCCESS, "[%s] convert %s->%s n=%zu: status %d (%s)",
           llmk_isa_name(isa), llmk_dtype_name(p->src), llmk_dtype_name(p->dst), n,
           (int)st, llmk_last_error());

  size_t bad = 0, first = 0;
  uint32_t fin = 0, fgot = 0, fexp = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t in = get(src + soff * ssz, ssz, i);
    uint32_t got = get(dst + doff * dsz, dsz, i), exp = expect_elem(p, in);
    if (got != exp && bad++ == 0) {
      first = i;
      fin = in;
      fgot = got;
      fexp = exp;
    }
  }
  int cat = CAT_BULK + pi * TU_NUM_ISAS + (int)isa;
  CAT_CHECK(
      cat, bad == 0,
      "[%s] convert %s->%s n=%zu src_off=%zu dst_off=%zu: %zu mismatches, first at %zu: "
      "in=0x%0*x got=0x%0*x expected=0x%0*x",
      llmk_isa_name(isa), llmk_dtype_name(p->src), llmk_dtype_name(p->dst), n, soff, doff,
      bad, first, (int)(2 * ssz), fin, (int)(2 * dsz), fgot, (int)(2 * dsz), fexp);
  int prefix_ok = 1;
  for (size_t i = 0; i < doff * dsz; i++) prefix_ok &= dst[i] == 0x5A;
  CAT_CHECK(
      cat, prefix_ok && tu_buf_check(&d),
      "[%s] convert %s->%s n=%zu src_off=%zu dst_off=%zu wrote outside its %zu elements",
      llmk_isa_name(isa), llmk_dtype_name(p->src), llmk_dtype_name(p->dst), n, soff, doff,
      n);
  tu_buf_free(&d);
  free(src);
}

/* dst == src is allowed for equal element sizes: only f32 -> f32 qualifies */
static void bulk_inplace(llmk_isa isa) {
  size_t n = 1000;
  tu_buf b = tu_buf_alloc(4 * n);
  memcpy(b.data, pool_f32 + 4 * 17, 4 * n);
  llmk_status st = llmk_convert(b.data, LLMK_F32, b.data, LLMK_F32, n);
  TU_CHECK(st == LLMK_SUCCESS && memcmp(b.data, pool_f32 + 4 * 17, 4 * n) == 0 &&
               tu_buf_check(&b),
           "[%s] in-place f32->f32 n=%zu: status %d or data/guards changed",
           llmk_isa_name(isa), n, (int)st);
  tu_buf_free(&b);
}

static void test_bulk(void) {
  static const size_t lens[] = {0,  1,  2,  3,  7,  8,  15,   16,  17,
                                31, 32, 33, 63, 64, 65, 1000, 4097};
  pair pairs[9];
  int np = 0;
  pairs[np++] = (pair){LLMK_F32, LLMK_F32, NULL};
  for (int k = 0; k < 4; k++) {
    pairs[np++] = (pair){fmts[k].dtype, LLMK_F32, &fmts[k]};
    pairs[np++] = (pair){LLMK_F32, fmts[k].dtype, &fmts[k]};
  }
  make_pools();
  for (int p = 0; p < np; p++)
    for (int isa = 0; isa < TU_NUM_ISAS; isa++)
      snprintf(cat_name[CAT_BULK + p * TU_NUM_ISAS + isa], sizeof cat_name[0],
               "bulk %s->%s [%s]", llmk_dtype_name(pairs[p].src),
               llmk_dtype_name(pairs[p].dst), llmk_isa_name((llmk_isa)isa));

  llmk_isa saved = llmk_get_isa(), native = llmk_get_native_isa(), top = native;
  const char *env = getenv("LLMK_ISA");
  if (env && *env && saved < native) {
    /* the environment cap cannot be lifted by llmk_set_max_isa */
    printf("bulk: LLMK_ISA=%s caps the ISA at %s (native %s)\n", env,
           llmk_isa_name(saved), llmk_isa_name(native));
    top = saved;
  }
  char tested[64] = "";
  for (int isa = LLMK_ISA_SCALAR; isa <= (int)top; isa++) {
    if (!TU_ISA_HERE(isa)) continue;
    llmk_isa now = llmk_set_max_isa((llmk_isa)isa);
    TU_CHECK(now == (llmk_isa)isa && llmk_get_isa() == (llmk_isa)isa,
             "llmk_set_max_isa(%s) gave %s, llmk_get_isa() %s",
             llmk_isa_name((llmk_isa)isa), llmk_isa_name(now),
             llmk_isa_name(llmk_get_isa()));
    if (llmk_get_isa() != (llmk_isa)isa) continue;
    for (int p = 0; p < np; p++)
      for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
        for (size_t soff = 0; soff < 4; soff++)
          for (size_t doff = 0; doff < 4; doff++)
            bulk_case(&pairs[p], p, (llmk_isa)isa, lens[l], soff, doff);
    bulk_inplace((llmk_isa)isa);
    if (*tested) strcat(tested, " ");
    strcat(tested, llmk_isa_name((llmk_isa)isa));
  }
  llmk_set_max_isa(saved);
  TU_CHECK(llmk_get_isa() == saved, "ISA not restored: %s, was %s",
           llmk_isa_name(llmk_get_isa()), llmk_isa_name(saved));
  printf("bulk: ISAs tested: %s (native %s, cpu: %s); %ld calls\n", tested,
         llmk_isa_name(native), llmk_cpu_features(), bulk_calls);
  free(pool_f32);
  for (int k = 0; k < 4; k++) free(pool_narrow[k]);
}

/* -------------------------------------------------------------- errors */

static void expect_error(const char *what, llmk_status st, llmk_status want) {
  TU_CHECK(st == want, "%s: status %d (%s), expected %d (%s)", what, (int)st,
           llmk_status_string(st), (int)want, llmk_status_string(want));
  if (want != LLMK_SUCCESS) {
    const char *msg = llmk_last_error();
    TU_CHECK(msg && *msg, "%s: llmk_last_error() empty", what);
  }
}

static void test_errors(void) {
  float src[4] = {1, 2, 3, 4};
  unsigned char dst[16], orig[16];
  memset(orig, 0x77, sizeof orig);

  expect_error("dst NULL", llmk_convert(NULL, LLMK_F16, src, LLMK_F32, 4),
               LLMK_ERROR_NULL_POINTER);
  expect_error("src NULL", llmk_convert(dst, LLMK_F16, NULL, LLMK_F32, 4),
               LLMK_ERROR_NULL_POINTER);
  expect_error("src NULL f32", llmk_convert(dst, LLMK_F32, NULL, LLMK_F32, 1),
               LLMK_ERROR_NULL_POINTER);
  expect_error("both NULL n=0", llmk_convert(NULL, LLMK_F16, NULL, LLMK_F32, 0),
               LLMK_SUCCESS);
  expect_error("both NULL n=0 fp8", llmk_convert(NULL, LLMK_F32, NULL, LLMK_FP8_E5M2, 0),
               LLMK_SUCCESS);

  static const struct {
    llmk_dtype d, s;
  } bad[] = {{LLMK_BF16, LLMK_F16},
             {LLMK_F32, LLMK_I32},
             {LLMK_I8, LLMK_F32},
             {LLMK_F16, LLMK_F16},
             {LLMK_FP8_E4M3FN, LLMK_FP8_E5M2},
             {LLMK_F32, LLMK_U8},
             {LLMK_I64, LLMK_F32},
             {LLMK_F32, LLMK_DTYPE_INVALID},
             {LLMK_DTYPE_INVALID, LLMK_F32},
             {LLMK_F32, LLMK_DTYPE_COUNT_},
             {(llmk_dtype)99, LLMK_F32}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char what[96];
    memset(dst, 0x77, sizeof dst);
    snprintf(what, sizeof what, "convert %s(%d)->%s(%d)", llmk_dtype_name(bad[i].s),
             (int)bad[i].s, llmk_dtype_name(bad[i].d), (int)bad[i].d);
    expect_error(what, llmk_convert(dst, bad[i].d, src, bad[i].s, 2),
                 LLMK_ERROR_INVALID_DTYPE);
    TU_CHECK(memcmp(dst, orig, sizeof dst) == 0, "%s: dst written on error", what);
  }
}

int main(void) {
  tu_seed(20240601);
  for (int k = 0; k < 4; k++) {
    snprintf(cat_name[CAT_DECODE + k], sizeof cat_name[0], "%s->f32", fmts[k].name);
    snprintf(cat_name[CAT_ENC + k], sizeof cat_name[0], "f32->%s", fmts[k].name);
    snprintf(cat_name[CAT_ENC_NAN + k], sizeof cat_name[0], "f32->%s (NaN inputs)",
             fmts[k].name);
  }
  if (UNDER_ASAN) {
    rand_scale = 4;
    printf("AddressSanitizer build: random sample counts divided by %ld\n", rand_scale);
  }
  test_decode();
  for (int k = 0; k < 4; k++) test_encode_values(&fmts[k]);
  test_encode_specials();
  printf("encode: %ld boundary/special checks\n", enc_checks);
  test_encode_random();
  test_bulk();
  test_errors();
  cat_summary();
  return tu_finish("test_convert");
}
