/* SPDX-License-Identifier: Apache-2.0 */
#include "apply_top_k_top_p_ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int tkp_ref_cmp(float a, float b) {
  int na = isnan(a) != 0, nb = isnan(b) != 0;
  if (na || nb) return na - nb;
  return a < b ? -1 : a > b ? 1 : 0; /* -0.0 == +0.0 */
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fprintf(stderr, "apply_top_k_top_p_ref: out of memory\n");
    exit(2);
  }
  return q;
}

static struct {
  int64_t cap;
  int64_t *idx, *tmp;
  float *e;
  double *c;
  int c_valid;
} S;

static void grow(int64_t V) {
  if (V <= S.cap) return;
  S.cap = V;
  S.idx = xrealloc(S.idx, (size_t)V * sizeof *S.idx);
  S.tmp = xrealloc(S.tmp, (size_t)V * sizeof *S.tmp);
  S.e = xrealloc(S.e, (size_t)V * sizeof *S.e);
  S.c = xrealloc(S.c, (size_t)V * sizeof *S.c);
}

/* Bottom-up merge sort of indices; the left run wins ties, so equal values keep index
 * order. */
static void argsort_into(const float *x, int64_t V, int64_t *idx, int64_t *tmp) {
  for (int64_t i = 0; i < V; i++) idx[i] = i;
  int64_t *a = idx, *b = tmp;
  for (int64_t w = 1; w < V; w *= 2) {
    for (int64_t lo = 0; lo < V; lo += 2 * w) {
      int64_t mid = lo + w < V ? lo + w : V, hi = lo + 2 * w < V ? lo + 2 * w : V;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi)
        b[o++] = tkp_ref_cmp(x[a[j]], x[a[i]]) < 0 ? a[j++] : a[i++];
      while (i < mid) b[o++] = a[i++];
      while (j < hi) b[o++] = a[j++];
    }
    int64_t *t = a;
    a = b;
    b = t;
  }
  if (a != idx)
    for (int64_t i = 0; i < V; i++) idx[i] = a[i];
}

void tkp_ref_argsort(const float *x, int64_t V, int64_t *idx) {
  int64_t *tmp = xrealloc(NULL, (size_t)(V > 0 ? V : 1) * sizeof *tmp);
  argsort_into(x, V, idx, tmp);
  free(tmp);
}

double tkp_ref_ulp(float v) {
  double a = fabs((double)v);
  if (!(a >= FLT_MIN)) return ldexp(1.0, -149);
  int e;
  (void)frexp(a, &e); /* a in [2^(e-1), 2^e) */
  return ldexp(1.0, e - 24);
}

int64_t tkp_ref_argmax(const float *x, int64_t V) {
  int64_t best = 0;
  for (int64_t i = 1; i < V; i++)
    if (tkp_ref_cmp(x[i], x[best]) > 0) best = i;
  return best;
}

void tkp_ref_row(const float *x, int64_t V, const tkp_ref_args *a, unsigned char *keep,
                 tkp_ref_info *info) {
  tkp_ref_info inf = {0, 0, 0, 0, INFINITY, INFINITY};
  S.c_valid = 0;
  if (V <= 0) {
    if (info) *info = inf;
    return;
  }
  grow(V);
  int64_t *idx = S.idx;
  argsort_into(x, V, idx, S.tmp);
  for (int64_t i = 0; i < V; i++) keep[i] = 1;

  /* top-k: t = s[V-k]; s[s < t] = -inf */
  if (a->k >= 1 && a->k <= V - 1) {
    float t = x[idx[V - a->k]];
    /* IEEE `<`, as the reference's masked_fill(s < t) does: a NaN t masks nothing */
    for (int64_t j = 0; j < V - a->k; j++)
      if (x[idx[j]] < t) keep[idx[j]] = 0;
  }

  /* The largest entry always survives top-k; if the row holds a NaN or +inf, the
   * largest is one, and the softmax over the survivors is undefined. */
  float m = x[idx[V - 1]];
  inf.special = isnan(m) || (isinf(m) && m > 0);
  inf.no_dist = m == -INFINITY;

  if (a->has_p && !inf.special && !inf.no_dist) {
    float thr = 1.0f - a->p; /* in f32, as the spec's reference */
    double ulp = tkp_ref_ulp(thr), sum = 0.0, cum = 0.0, mass = 0.0;
    for (int64_t j = 0; j < V; j++) {
      /* masked by top-k: s = -inf, exp = 0 */
      S.e[j] = keep[idx[j]] ? expf(x[idx[j]] - m) : 0.0f;
      sum += (double)S.e[j];
    }
    for (int64_t j = 0; j < V; j++) {
      float q = (float)((double)S.e[j] / sum);
      cum += (double)q;
      mass += (double)S.e[j];
      S.c[j] = cum;
      if (j == V - 1) break;
      if (cum <= (double)thr) keep[idx[j]] = 0;
      /* no mass yet: every summation order gives exactly 0 here */
      if (mass > 0.0) {
        double d = fabs(cum - (double)thr) / ulp;
        if (d < inf.margin_p) inf.margin_p = d;
      }
    }
    S.c_valid = 1;
  }

  if (a->has_min_p && !inf.special && !inf.no_dist) {
    double ulp = tkp_ref_ulp(a->min_p);
    for (int64_t i = 0; i < V; i++) {
      if (!keep[i] || tkp_ref_cmp(x[i], m) == 0) continue; /* the max: ratio exactly 1 */
      float e = expf(x[i] - m);
      if (e < a->min_p) keep[i] = 0;
      if (e > 0.0f && a->min_p > 0.0f) {
        double d = fabs((double)e - (double)a->min_p) / ulp;
        if (d < inf.margin_min_p) inf.margin_min_p = d;
      }
    }
  }

  for (int64_t i = 0; i < V; i++)
    if (keep[i]) {
      inf.kept++;
      if (x[i] != -INFINITY) inf.kept_finite++;
    }
  if (info) *info = inf;
}

const int64_t *tkp_ref_last_order(void) {
  return S.idx;
}
const double *tkp_ref_last_cumsum(void) {
  return S.c_valid ? S.c : NULL;
}
