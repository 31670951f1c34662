/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Naive reference of apply_top_k_top_p, written from the spec's pseudo-code
 * (docs/spec top_k_top_p.md, include/llmk/top_k_top_p.h), not from the library: it
 * literally sorts each row (stable merge sort) and walks the sorted array.
 *
 * Per row, on values already widened to f32:
 *   s, idx = stable ascending sort; -0.0 == +0.0; NaN above +inf, NaNs equal
 *   1 <= k <= V-1: t = s[V-k]; entries below t (in that order) are masked
 *   NaN or +inf among the survivors, or no finite survivor: top-p and min-p do nothing
 *   p: e = expf(s - max) (f32), sum in double, q = (float)(e / sum),
 *      c = inclusive cumsum of q in double from the smallest; mask j < V-1 with
 *      c[j] <= 1.0f - p (computed in f32)
 *   min_p: mask kept entries with expf(s - max) < min_p (probability below
 *      min_p * max probability)
 * keep[i] = 1 for kept entries (output = input bits), 0 for masked ones (-inf).
 *
 * "Boundary margins" tell when f32 rounding could decide an entry: an implementation
 * that sums in another order (or with another exp) may legitimately differ there.
 *   margin_p: min over sorted j < V-1 holding some probability mass (exact cumulative
 *     exp sum > 0) of |c[j] - (1-p)| / ulp(1-p); ulp(0) = 2^-149.
 *   margin_min_p: min over entries still kept before min-p with exp > 0 of
 *     |expf(x-max) - min_p| / ulp(min_p).
 * Both are INFINITY where the step does not apply. Not thread-safe (static scratch).
 */
#ifndef LLMK_APPLY_TOP_K_TOP_P_REF_H
#define LLMK_APPLY_TOP_K_TOP_P_REF_H

#include <stdint.h>

typedef struct tkp_ref_args {
  int64_t k; /* applies when 1 <= k <= V-1 */
  int has_p;
  float p; /* the value as the op reads it (widened to f32) */
  int has_min_p;
  float min_p;
} tkp_ref_args;

typedef struct tkp_ref_info {
  int64_t kept;        /* entries kept */
  int64_t kept_finite; /* kept entries other than -inf */
  int special;         /* NaN or +inf among the survivors of top-k */
  int no_dist;         /* every survivor of top-k is -inf */
  double margin_p;     /* in ulps of 1-p */
  double margin_min_p; /* in ulps of min_p */
} tkp_ref_info;

/* -1, 0, 1 in the sort order: -0.0 == +0.0, NaN above +inf, every NaN equal. */
int tkp_ref_cmp(float a, float b);

/* Stable ascending argsort of x[0..V) in that order. */
void tkp_ref_argsort(const float *x, int64_t V, int64_t *idx);

/* Filters one row. keep: V bytes out. info may be NULL. */
void tkp_ref_row(const float *x, int64_t V, const tkp_ref_args *a, unsigned char *keep,
                 tkp_ref_info *info);

/* From the last tkp_ref_row call (valid until the next): the sort order idx[V] and the
 * cumulative sums c[V] (in sorted order; only filled when top-p ran, else NULL). */
const int64_t *tkp_ref_last_order(void);
const double *tkp_ref_last_cumsum(void);

/* Spacing of f32 values at |v| (2^-149 for 0 and subnormals). */
double tkp_ref_ulp(float v);

/* Index of the largest entry in the sort order, lowest index among equal ones (greedy
 * sampling; NaN above +inf). */
int64_t tkp_ref_argmax(const float *x, int64_t V);

#endif
