/* The top-k/top-p kernel tables of every ISA this CPU runs give the scalar table's
 * results bit for bit, on random rows with special values and every tail length. */
#include <math.h>

#include "dispatch/dispatch.h"
#include "kernels/top_k_top_p/tkp.h"
#include "llmk/llmk.h"
#include "test_util.h"

static float rand_value(void) {
  switch (tu_rand_range(0, 15)) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0f;
    case 4: return 0x1p-140f * (float)tu_rand_range(1, 100);
    case 5: return (float)tu_rand_range(-3, 3); /* ties */
    default: return (float)((tu_rand_unit() - 0.5) * 40.0);
  }
}

static void check_isa(const llmk__tkp_kernels *k, const char *name) {
  const llmk__tkp_kernels *s = &llmk__tkp_kernels_scalar;
  enum { N = 1100 };
  static float x[N], xs[N];
  static uint32_t ka[N], kb[N], oa[N], ob[N], da[N], db[N];
  static uint16_t ha[N], hb[N], ba[N], bb[N];
  static uint64_t ma[N], mb[N];
  for (int rep = 0; rep < 300; rep++) {
    size_t n = rep < 100 ? (size_t)rep : (size_t)tu_rand_range(0, N);
    bool finite = rep % 3 == 0; /* masses need rows without NaN / +inf */
    for (size_t i = 0; i < n; i++) {
      x[i] = rand_value();
      if (finite && !(x[i] < INFINITY)) x[i] = -INFINITY;
    }
    uint32_t maxa = s->keys(x, n, ka), maxb = k->keys(x, n, kb);
    TU_CHECK(maxa == maxb && !memcmp(ka, kb, n * 4), "%s keys n=%zu", name, n);
    if (k->widen_keys)
      for (int dt = 0; dt < 2; dt++) {
        llmk_dtype d = dt ? LLMK_BF16 : LLMK_F16;
        static uint16_t h[N];
        static float ra[N], rb[N];
        for (size_t i = 0; i < n; i++) h[i] = (uint16_t)tu_rand_u64();
        llmk_convert(ra, LLMK_F32, h, d, n);
        uint32_t mk = s->keys(ra, n, oa);
        uint32_t mw = k->widen_keys(h, d, rb, ob, n);
        TU_CHECK(mk == mw && !memcmp(ra, rb, n * 4) && !memcmp(oa, ob, n * 4),
                 "%s widen_keys %s n=%zu", name, dt ? "bf16" : "f16", n);
      }
    uint32_t t = n ? ka[tu_rand_range(0, (int64_t)n - 1)] : 0x80000000u;
    size_t cap = (size_t)tu_rand_range(0, (int64_t)n + 1);
    size_t ca = s->gather_ge(ka, n, t, oa, cap), cb = k->gather_ge(ka, n, t, ob, cap);
    TU_CHECK(ca == cb && !memcmp(oa, ob, (ca < cap ? ca : cap) * 4), "%s gather_ge n=%zu", name, n);
    for (int esz = 2; esz <= 4; esz += 2)
      for (int inp = 0; inp < 2; inp++) {
        memcpy(da, x, n * 4);
        memcpy(db, x, n * 4);
        memcpy(xs, x, n * 4);
        uint32_t ninf = esz == 4 ? 0xff800000u : 0xff80u;
        size_t kpa = s->select(ka, n, t, inp ? (void *)da : (void *)xs, da, (size_t)esz, ninf, inp);
        size_t kpb = k->select(ka, n, t, inp ? (void *)db : (void *)xs, db, (size_t)esz, ninf, inp);
        TU_CHECK(kpa == kpb && !memcmp(da, db, n * 4), "%s select esz=%d in_place=%d n=%zu", name,
                 esz, inp, n);
      }
    size_t nth = (size_t)tu_rand_range(1, 4);
    TU_CHECK(s->count_eq(ka, n, t) == k->count_eq(ka, n, t) &&
                 s->find_eq(ka, n, t, nth) == k->find_eq(ka, n, t, nth),
             "%s count_eq / find_eq n=%zu", name, n);
    if (!finite) continue;
    float max = -INFINITY;
    for (size_t i = 0; i < n; i++) max = x[i] > max ? x[i] : max;
    if (!(max > -INFINITY)) continue;
    uint32_t min_key = n ? ka[tu_rand_range(0, (int64_t)n - 1)] : 0;
    if (rep % 2) min_key = 0;
    float lo = max - 30.0f, scale = 2048.0f / 30.0f;
    for (int with_bins = 0; with_bins < 2; with_bins++) {
      uint64_t tla = 5, tha = 7, tlb = 5, thb = 7;
      s->masses(x, ka, n, max, min_key, lo, scale, ma, with_bins ? ba : NULL, &tla, &tha);
      k->masses(x, ka, n, max, min_key, lo, scale, mb, with_bins ? bb : NULL, &tlb, &thb);
      TU_CHECK(tla == tlb && tha == thb && !memcmp(ma, mb, n * 8) &&
                   (!with_bins || !memcmp(ba, bb, n * 2)),
               "%s masses bins=%d n=%zu", name, with_bins, n);
    }
    if (n) {
      uint16_t bin = ba[tu_rand_range(0, (int64_t)n - 1)];
      static float gxa[N], gxb[N];
      size_t gcap = (size_t)tu_rand_range(0, (int64_t)n);
      size_t ga = s->gather_bin(ba, x, ka, n, bin, gxa, oa, gcap);
      size_t gb = k->gather_bin(ba, x, ka, n, bin, gxb, ob, gcap);
      size_t gm = ga < gcap ? ga : gcap;
      TU_CHECK(ga == gb && !memcmp(gxa, gxb, gm * 4) && !memcmp(oa, ob, gm * 4),
               "%s gather_bin n=%zu", name, n);
    }
    uint64_t outa[6] = {1, 2, 3, 4, 5, 6}, outb[6] = {1, 2, 3, 4, 5, 6};
    s->mass_above(x, ka, n, max, min_key, t, outa);
    k->mass_above(x, ka, n, max, min_key, t, outb);
    TU_CHECK(!memcmp(outa, outb, sizeof outa), "%s mass_above n=%zu", name, n);
    (void)ha;
    (void)hb;
  }
}

int main(void) {
  tu_seed(77);
  llmk_isa native = llmk_get_native_isa();
  for (int isa = LLMK_ISA_SCALAR + 1; isa <= (int)native; isa++) {
    const llmk__tkp_kernels *k = llmk__tkp_kernels_for((llmk_isa)isa);
    if (k->isa == LLMK_ISA_SCALAR) continue;
    printf("checking %s against scalar\n", llmk_isa_name(k->isa));
    check_isa(k, llmk_isa_name(k->isa));
  }
  return tu_finish("test_tkp_kernels");
}
