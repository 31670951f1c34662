/* SPDX-License-Identifier: Apache-2.0 */
#include "convert_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct fmt_def {
  const char *name;
  int exp_bits, mant_bits, bias;
  int ieee; /* 1: exponent all ones = inf / NaN; 0: "fn" (only S.1..1.1..1 is NaN) */
  int saturate;
} fmt_def;

static const fmt_def defs[REF_FMT_COUNT] = {
    {"f16", 5, 10, 15, 1, 0},
    {"bf16", 8, 7, 127, 1, 0},
    {"fp8_e4m3fn", 4, 3, 7, 0, 1},
    {"fp8_e5m2", 5, 2, 15, 1, 1},
};

const char *ref_fmt_name(ref_fmt fmt) {
  return defs[fmt].name;
}
int ref_fmt_bits(ref_fmt fmt) {
  return 1 + defs[fmt].exp_bits + defs[fmt].mant_bits;
}
uint32_t ref_sign_mask(ref_fmt fmt) {
  return 1u << (ref_fmt_bits(fmt) - 1);
}

typedef struct fields {
  uint32_t s, e, m;
} fields;

static fields split(ref_fmt fmt, uint32_t bits) {
  const fmt_def *d = &defs[fmt];
  fields f;
  f.m = bits & ((1u << d->mant_bits) - 1);
  f.e = (bits >> d->mant_bits) & ((1u << d->exp_bits) - 1);
  f.s = (bits >> (d->mant_bits + d->exp_bits)) & 1;
  return f;
}

int ref_is_nan(ref_fmt fmt, uint32_t bits) {
  const fmt_def *d = &defs[fmt];
  fields f = split(fmt, bits);
  uint32_t emax = (1u << d->exp_bits) - 1, mmax = (1u << d->mant_bits) - 1;
  if (d->ieee) return f.e == emax && f.m != 0;
  return f.e == emax && f.m == mmax;
}

int ref_is_quiet_nan(ref_fmt fmt, uint32_t bits) {
  const fmt_def *d = &defs[fmt];
  if (!ref_is_nan(fmt, bits)) return 0;
  return (split(fmt, bits).m >> (d->mant_bits - 1)) & 1;
}

double ref_decode(ref_fmt fmt, uint32_t bits) {
  const fmt_def *d = &defs[fmt];
  fields f = split(fmt, bits);
  uint32_t emax = (1u << d->exp_bits) - 1;
  double sign = f.s ? -1.0 : 1.0;
  if (ref_is_nan(fmt, bits)) return copysign(NAN, sign);
  if (d->ieee && f.e == emax) return sign * INFINITY;
  if (f.e == 0) /* subnormal: 2^(1-bias) * m / 2^M */
    return sign * ldexp((double)f.m, 1 - d->bias - d->mant_bits);
  /* normal: 2^(e-bias) * (1 + m / 2^M) */
  return sign *
         ldexp((double)((1u << d->mant_bits) + f.m), (int)f.e - d->bias - d->mant_bits);
}

/* Sorted non-negative finite values. Built by decoding every positive-sign code and
 * checked to be strictly increasing, rather than assuming code order = value order. */
#define REF_MAX_VALUES 32768
typedef struct table {
  int built;
  size_t n;
  double val[REF_MAX_VALUES];
  uint32_t code[REF_MAX_VALUES];
} table;
static table tables[REF_FMT_COUNT];

static const table *get_table(ref_fmt fmt) {
  table *t = &tables[fmt];
  if (t->built) return t;
  uint32_t ncodes = 1u << (ref_fmt_bits(fmt) - 1);
  t->n = 0;
  for (uint32_t c = 0; c < ncodes; c++) {
    double v = ref_decode(fmt, c);
    if (!isfinite(v)) continue;
    if (t->n > 0 && !(v > t->val[t->n - 1])) {
      fprintf(stderr, "convert_ref: %s values not increasing at code 0x%x\n",
              defs[fmt].name, c);
      abort();
    }
    t->val[t->n] = v;
    t->code[t->n] = c;
    t->n++;
  }
  t->built = 1;
  return t;
}

size_t ref_value_count(ref_fmt fmt) {
  return get_table(fmt)->n;
}
double ref_value_at(ref_fmt fmt, size_t i) {
  return get_table(fmt)->val[i];
}
uint32_t ref_code_at(ref_fmt fmt, size_t i) {
  return get_table(fmt)->code[i];
}
double ref_max(ref_fmt fmt) {
  const table *t = get_table(fmt);
  return t->val[t->n - 1];
}
double ref_min_subnormal(ref_fmt fmt) {
  return get_table(fmt)->val[1];
}

/* Nearest of two neighbours by distance in double (exact here: a lies between lo and
 * hi, all with short significands); a tie takes the code whose mantissa LSB is 0. */
static uint32_t pick(double a, double lo, uint32_t clo, double hi, uint32_t chi) {
  double dlo = a - lo, dhi = hi - a;
  if (dlo < dhi) return clo;
  if (dhi < dlo) return chi;
  return (clo & 1) ? chi : clo;
}

uint32_t ref_encode(ref_fmt fmt, float f) {
  const fmt_def *d = &defs[fmt];
  const table *t = get_table(fmt);
  double x = (double)f;
  uint32_t sign = signbit(x) ? ref_sign_mask(fmt) : 0;
  uint32_t emax = (1u << d->exp_bits) - 1;
  if (isnan(x)) {
    /* e4m3fn's only NaN is all ones; IEEE-like: exponent all ones, top mantissa bit */
    uint32_t nan = d->ieee ? (emax << d->mant_bits) | (1u << (d->mant_bits - 1))
                           : (emax << d->mant_bits) | ((1u << d->mant_bits) - 1);
    return sign | nan;
  }
  double a = fabs(x);
  double max = t->val[t->n - 1];
  uint32_t cmax = t->code[t->n - 1];
  if (a > max) {
    if (d->saturate) return sign | cmax;
    /* IEEE: round as if the exponent were unbounded; the value after max would be
     * max + ulp(max) = 2^(emax_unbiased+1), whose code is inf (even mantissa), so a
     * result at or beyond that becomes inf. */
    uint32_t cinf = emax << d->mant_bits;
    double next = max + (max - t->val[t->n - 2]);
    if (a >= next) return sign | cinf;
    return sign | pick(a, max, cmax, next, cinf);
  }
  /* largest i with val[i] <= a */
  size_t lo = 0, hi = t->n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    if (t->val[mid] <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  if (t->val[lo] == a) return sign | t->code[lo];
  return sign | pick(a, t->val[lo], t->code[lo], t->val[lo + 1], t->code[lo + 1]);
}
