/* SPDX-License-Identifier: Apache-2.0 */
/* Every table of llmk__conv1d_kernel_list that this CPU runs gives the scalar table's
 * bytes, bit for bit, for `seq` (llmk__conv1d_seq: one sequence over a block of channels,
 * the window carried between tiles of LLMK__CONV_TILE tokens in wbuf): x of f32, f16 and
 * bf16, K = 2..4, with and without bias, with and without SiLU and the residual, reset
 * before, inside and past the chunk; L across the tile boundaries, n channels across the
 * vector widths (4, 8, 16, 32), token rows with gaps, misaligned x, history, taps and
 * bias, values with NaN, infinities, -0, subnormals and huge ones. Each variant runs on
 * its own copy of x (and its own wbuf); the whole x buffer, gaps included, is compared,
 * and the guard zones around x and wbuf and the inputs that are read only are checked. */
#include <inttypes.h>
#include <math.h>

#include "kernel_list.h"
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"
#include "test_util.h"

static const llmk__conv1d_kernels *const S = &llmk__conv1d_kernels_scalar;

static const llmk_dtype dtypes[3] = {LLMK_F32, LLMK_F16, LLMK_BF16};

static float f32_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* special: 0 moderate values only; 1 also infinities, -0, subnormals, huge values and
 * random bits, but no NaN; 2 NaNs too (of both signs, with payloads) */
static float rand_value(int special, float range) {
  int64_t c = special ? tu_rand_range(0, 40) : 40;
  if (c == 0 && special == 2)
    return f32_of(0x7fc00000u ^ (uint32_t)(tu_rand_u64() & 0x803fffffu));
  if (c == 0) return INFINITY;
  if (c < TU_SPECIALS)
    return tu_special_f32((int)c); /* infinities, -0, subnormals, +0, huge */
  if (c == 7) {
    float v = f32_of((uint32_t)tu_rand_u64());
    return special == 2 || v == v ? v : 1.0f;
  }
  if (c == 8) /* large enough for SiLU's exp to over- or underflow */
    return (float)((tu_rand_unit() - 0.5) * 400.0);
  return (float)((tu_rand_unit() - 0.5) * 2.0 * range);
}

static bool is_nan(const unsigned char *p, llmk_dtype dt) {
  uint32_t v = 0;
  if (dt == LLMK_F32) {
    memcpy(&v, p, 4);
    return (v & 0x7fffffffu) > 0x7f800000u;
  }
  memcpy(&v, p, 2);
  return dt == LLMK_F16 ? (v & 0x7fffu) > 0x7c00u : (v & 0x7fffu) > 0x7f80u;
}

/* NaN results whose sign or payload differ (see nan_policy in main) */
static long nan_diffs;
static bool strict_nan;
static char nan_first[400];

typedef struct conv_case {
  llmk_dtype dt;
  int K;
  bool bias;
  int special;
  unsigned flags;
  int64_t L, reset;
  size_t n, xgap, hgap, wgap, xoff, woff;
} conv_case;

static void fill_x(void *p, llmk_dtype dt, size_t count, int special) {
  for (size_t i = 0; i < count; i++) {
    uint16_t h = (uint16_t)tu_rand_u64(); /* any 16-bit pattern (NaN ones in mode 2) */
    if (dt != LLMK_F32 && special && tu_rand_range(0, 15) == 0 &&
        (special == 2 || !is_nan((const unsigned char *)&h, dt)))
      ((uint16_t *)p)[i] = h;
    else
      llmk__store_f32((char *)p + i * llmk_dtype_size(dt), dt, rand_value(special, 4.0f));
  }
}

/* The same call with a separate output of its own stride (rows further apart, another
 * alignment): the output rows must hold the in-place run's bytes (xin, in place from
 * x0) exactly, x must keep x0's bytes, and nothing around the output rows is written. */
static void check_separate(const llmk__conv1d_kernels *k, const conv_case *c,
                           const llmk__conv1d_seq *q0, const unsigned char *x0,
                           const unsigned char *xin, ptrdiff_t xstride) {
  const size_t esz = llmk_dtype_size(c->dt), n = c->n;
  const size_t xbytes = c->xoff * esz + (size_t)c->L * (size_t)xstride + 64;
  const ptrdiff_t ystride = (ptrdiff_t)((n + c->xgap + 3) * esz);
  const size_t yoff = (c->xoff + 1) * esz;
  const size_t ybytes = yoff + (size_t)c->L * (size_t)ystride + 64;
  tu_buf xs = tu_buf_alloc(xbytes), ys = tu_buf_alloc(ybytes),
         wbuf = tu_buf_alloc((size_t)(c->K - 1) * n * 4);
  memcpy(xs.data, x0, xbytes);
  memset(ys.data, 0x5a, ybytes);
  memset(wbuf.data, 0xff, (size_t)(c->K - 1) * n * 4);
  llmk__conv1d_seq q = *q0;
  q.x = (const char *)xs.data + c->xoff * esz;
  q.y = (char *)ys.data + yoff;
  q.ystride = ystride;
  q.wbuf = wbuf.data;
  k->seq(&q);
  const unsigned char *y = ys.data;
  bool same = true, around = true;
  for (int64_t i = 0; i < c->L && same; i++)
    same = !memcmp(y + yoff + (size_t)i * (size_t)ystride,
                   xin + c->xoff * esz + (size_t)i * (size_t)xstride, n * esz);
  for (size_t i = 0; i < ybytes && around; i++) {
    bool inside = i >= yoff && (i - yoff) / (size_t)ystride < (size_t)c->L &&
                  (i - yoff) % (size_t)ystride < n * esz;
    around = inside || y[i] == 0x5a;
  }
  TU_CHECK(same && around && !memcmp(xs.data, x0, xbytes) && tu_buf_check(&xs) &&
               tu_buf_check(&ys) && tu_buf_check(&wbuf),
           "%s seq %s K=%d L=%" PRId64 " n=%zu separate output: %s",
           llmk_isa_name(k->isa), llmk_dtype_name(c->dt), c->K, c->L, n,
           !same     ? "rows differ from the in-place run"
           : !around ? "written outside the output rows"
                     : "x or a guard written");
  tu_buf_free(&xs);
  tu_buf_free(&ys);
  tu_buf_free(&wbuf);
}

static void run_case(const llmk__conv1d_kernels *k, const conv_case *c) {
  const size_t esz = llmk_dtype_size(c->dt), n = c->n;
  const int K = c->K;
  const ptrdiff_t xstride = (ptrdiff_t)((n + c->xgap) * esz);
  const size_t xbytes = c->xoff * esz + (size_t)c->L * (size_t)xstride + 64;
  const ptrdiff_t hstride = (ptrdiff_t)((n + c->hgap) * esz);
  const size_t hbytes = (size_t)(K - 1) * (size_t)hstride + 8;
  const size_t wstride = n + c->wgap;
  const size_t wcount = c->woff + (size_t)K * wstride + 8;
  const size_t wbytes = (size_t)(K - 1) * n * 4;
  tu_buf x0 = tu_buf_alloc(xbytes), xa = tu_buf_alloc(xbytes), xb = tu_buf_alloc(xbytes);
  tu_buf hist = tu_buf_alloc(hbytes), w = tu_buf_alloc(wcount * 4),
         bias = tu_buf_alloc((c->woff + n + 8) * 4);
  tu_buf wa = tu_buf_alloc(wbytes), wb = tu_buf_alloc(wbytes);
  fill_x(x0.data, c->dt, xbytes / esz, c->special);
  fill_x(hist.data, c->dt, hbytes / esz, c->special);
  float *wf = w.data, *bf = bias.data;
  for (size_t i = 0; i < wcount; i++) wf[i] = rand_value(c->special, 1.5f);
  for (size_t i = 0; i < c->woff + n + 8; i++) bf[i] = rand_value(c->special, 1.0f);
  memcpy(xa.data, x0.data, xbytes);
  memcpy(xb.data, x0.data, xbytes);
  memset(wa.data, 0xff, wbytes); /* NaN: never read before written */
  memset(wb.data, 0xff, wbytes);
  unsigned char *hcopy = malloc(hbytes + 1);
  float *wcopy = malloc(wcount * 4 + 4);
  if (!hcopy || !wcopy) exit(2);
  memcpy(hcopy, hist.data, hbytes);
  memcpy(wcopy, wf, wcount * 4);
  llmk__conv1d_seq q = {.x = (char *)xa.data + c->xoff * esz,
                        .xstride = xstride,
                        .y = (char *)xa.data + c->xoff * esz,
                        .ystride = xstride,
                        .L = c->L,
                        .hist = hist.data,
                        .hstride = hstride,
                        .w = wf + c->woff,
                        .wstride = wstride,
                        .bias = c->bias ? bf + c->woff : NULL,
                        .dt = c->dt,
                        .K = K,
                        .flags = c->flags,
                        .reset = c->reset,
                        .n = n,
                        .wbuf = wa.data};
  S->seq(&q);
  q.x = q.y = (char *)xb.data + c->xoff * esz;
  q.wbuf = wb.data;
  k->seq(&q);
  check_separate(k, c, &q, x0.data, xb.data, xstride);
  const unsigned char *a = xa.data, *b = xb.data, *o = x0.data;
  /* the first byte that differs other than within two NaNs of x's dtype */
  size_t first = xbytes, first_nan = xbytes;
  for (size_t i = 0; i < xbytes && first == xbytes; i++) {
    if (a[i] == b[i]) continue;
    size_t at = i < c->xoff * esz ? i : i - (i - c->xoff * esz) % esz;
    if (at + esz <= xbytes && is_nan(a + at, c->dt) && is_nan(b + at, c->dt)) {
      if (first_nan == xbytes) first_nan = at;
      i = at + esz - 1;
      continue;
    }
    first = i;
  }
  char what[200];
  snprintf(what, sizeof what,
           "%s seq %s K=%d bias=%d silu=%d resid=%d L=%" PRId64 " reset=%" PRId64
           " n=%zu xgap=%zu hgap=%zu wgap=%zu xoff=%zu woff=%zu special=%d",
           llmk_isa_name(k->isa), llmk_dtype_name(c->dt), K, c->bias,
           !!(c->flags & LLMK__CONV_SILU), !!(c->flags & LLMK__CONV_RESID), c->L,
           c->reset, n, c->xgap, c->hgap, c->wgap, c->xoff, c->woff, c->special);
  if (first == xbytes && first_nan < xbytes) {
    nan_diffs++;
    if (!nan_first[0] || strict_nan) {
      size_t pos = first_nan - c->xoff * esz;
      uint32_t va = 0, vb = 0;
      memcpy(&va, a + first_nan, esz);
      memcpy(&vb, b + first_nan, esz);
      snprintf(nan_first, sizeof nan_first,
               "%s: token %zu channel %zu: scalar NaN 0x%0*x, %s NaN 0x%0*x", what,
               pos / (size_t)xstride, pos % (size_t)xstride / esz, (int)(2 * esz),
               (unsigned)va, llmk_isa_name(k->isa), (int)(2 * esz), (unsigned)vb);
    }
    if (strict_nan) TU_CHECK(false, "%s", nan_first);
  }
  if (first < xbytes) {
    size_t pos = first >= c->xoff * esz ? first - c->xoff * esz : 0;
    int64_t tok = xstride ? (int64_t)(pos / (size_t)xstride) : 0;
    size_t ch = xstride ? pos % (size_t)xstride / esz : 0;
    uint32_t va = 0, vb = 0, vo = 0;
    size_t at = first < c->xoff * esz ? first : first - pos % esz;
    memcpy(&va, a + at, esz);
    memcpy(&vb, b + at, esz);
    memcpy(&vo, o + at, esz);
    TU_CHECK(false,
             "%s: token %" PRId64
             " channel %zu%s (x was 0x%0*x): scalar 0x%0*x, %s 0x%0*x",
             what, tok, ch, ch >= n ? " (in a gap between rows)" : "", (int)(2 * esz),
             (unsigned)vo, (int)(2 * esz), (unsigned)va, llmk_isa_name(k->isa),
             (int)(2 * esz), (unsigned)vb);
  } else {
    /* nothing outside the rows' n channels written (by either: they are the same) */
    bool gaps = true;
    for (size_t i = 0; i < xbytes && gaps; i++) {
      bool inside = false;
      if (i >= c->xoff * esz && xstride > 0) {
        size_t pos = i - c->xoff * esz;
        inside = pos / (size_t)xstride < (size_t)c->L && pos % (size_t)xstride < n * esz;
      }
      gaps = inside || a[i] == o[i];
    }
    TU_CHECK(gaps && tu_buf_check(&xa) && tu_buf_check(&xb) && tu_buf_check(&wa) &&
                 tu_buf_check(&wb) && !memcmp(hcopy, hist.data, hbytes) &&
                 !memcmp(wcopy, wf, wcount * 4),
             "%s: written outside the rows, the wbuf or into read-only inputs", what);
  }
  free(hcopy);
  free(wcopy);
  tu_buf *all[] = {&x0, &xa, &xb, &hist, &w, &bias, &wa, &wb};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tu_buf_free(all[i]);
}

static const int64_t Ls[] = {0,  1,  2,  3,  5,  8,  15, 16, 17, 18,
                             31, 32, 33, 47, 48, 49, 64, 65, 100};
static const size_t ns[] = {0,  1,  2,  3,  4,  5,  7,  8,   9,   12,  15,
                            16, 17, 20, 23, 24, 28, 31, 32,  33,  40,  47,
                            48, 63, 64, 65, 72, 96, 97, 127, 128, 129, 200};

static void check_table(const void *table) {
  const llmk__conv1d_kernels *k = table;
  const int64_t nL = (int64_t)(sizeof Ls / sizeof Ls[0]);
  const int64_t nn = (int64_t)(sizeof ns / sizeof ns[0]);
  for (int di = 0; di < 3; di++)
    for (int K = 2; K <= 4; K++)
      for (int bias = 0; bias < 2; bias++)
        for (unsigned flags = 0; flags < 4; flags++)
          for (int rep = 0; rep < 48; rep++) {
            conv_case c = {0};
            c.dt = dtypes[di];
            c.K = K;
            c.bias = bias;
            c.flags = flags;
            c.special = rep % 3; /* none, no NaN, NaN too */
            c.L = Ls[tu_rand_range(0, nL - 1)];
            c.n = ns[tu_rand_range(0, nn - 1)];
            if (rep % 12 == 11) c.n = (size_t)tu_rand_range(0, 600);
            switch (rep % 4) { /* reset: none, inside the first tile or later, past L */
              case 0:
                c.reset = 0;
                break;
              case 1:
                c.reset = tu_rand_range(0, c.L);
                break;
              case 2:
                c.reset = tu_rand_range(LLMK__CONV_TILE - 1, LLMK__CONV_TILE + 2);
                break;
              default:
                c.reset = c.L + tu_rand_range(0, 3);
            }
            if (tu_rand_range(0, 1)) {
              c.xgap = (size_t)tu_rand_range(0, 9);
              c.hgap = (size_t)tu_rand_range(0, 9);
              c.wgap = (size_t)tu_rand_range(0, 9);
              c.xoff = (size_t)tu_rand_range(0, 15);
              c.woff = (size_t)tu_rand_range(0, 15);
            }
            run_case(k, &c);
          }
}

#if defined(__aarch64__)
#include "kernels/common/exp-neon.h"

/* exp-neon.h against exp.h, the exp and SiLU of every 67th float in [-104, -0]: a
 * rounding that differs deep in the exp's polynomial changes few results, too few for
 * the cases above to meet one (the specials are theirs). */
static void check_neon_silu(void) {
  const uint32_t step = 67, b1 = 0xC2D00000u; /* -0 .. -104 */
  long diffs = 0;
  uint32_t first = 0;
  for (uint32_t b = 0x80000000u; b <= b1 - 3 * step; b += 4 * step) {
    float x[4], e[4], s[4];
    for (int i = 0; i < 4; i++) x[i] = f32_of(b + (uint32_t)i * step);
    float32x4_t v = vld1q_f32(x);
    vst1q_f32(e, llmk__neon_exp_nonpos(v));
    vst1q_f32(s, llmk__neon_silu(v));
    for (int i = 0; i < 4; i++) {
      float se = llmk__exp_nonpos(x[i]), ss = llmk__silu(x[i]);
      if ((memcmp(&e[i], &se, 4) || memcmp(&s[i], &ss, 4)) && !diffs++)
        memcpy(&first, &x[i], 4);
    }
  }
  printf("fused_causal_conv1d: checking the NEON exp and SiLU against exp.h\n");
  TU_CHECK(diffs == 0,
           "NEON exp or SiLU differ from exp.h at %ld floats, the first 0x%08x", diffs,
           (unsigned)first);
}
#endif

int main(void) {
  tu_seed(0xc0171d);
  /* every NaN result is the one canonical NaN (fused_causal_conv1d.h), so every bit of
   * every result must agree, NaN inputs included (LLMK_TEST_STRICT_NAN=0: count NaN
   * differences without failing, to look at them) */
  const char *env = getenv("LLMK_TEST_STRICT_NAN");
  strict_nan = !(env && *env == '0');
#if defined(__aarch64__)
  check_neon_silu();
#endif
  kl_each(&llmk__conv1d_kernel_list, check_table);
  if (nan_diffs)
    printf(
        "note: %ld runs with NaN inputs gave NaN results of other sign or payload than "
        "scalar%s; the first: %s\n",
        nan_diffs, strict_nan ? " (failures: LLMK_TEST_STRICT_NAN)" : "", nan_first);
  return tu_finish("test_fused_causal_conv1d_kernels");
}
