/* SPDX-License-Identifier: Apache-2.0 */
/*
 * apply_top_k_top_p: top-k / top-p filtering of logits before sampling (CANN
 * aclnnApplyTopKTopP, vLLM apply_top_k_top_p), min-p, and sampling from the result.
 * Full description: docs/ops/apply_top_k_top_p.md.
 *
 * Semantics: exactly those of the sort-based reference, per row of V logits:
 *
 *   s, idx = sort(row, ascending, stable)             # equal values keep index order
 *   if 1 <= k[r] <= V-1: t = s[V-k]; s[s < t] = -inf  # ties with the k-th largest kept
 *   if p given:
 *     q = softmax(s)                                   # over the survivors of top-k
 *     c = inclusive cumulative sum of q, smallest first
 *     mask sorted position j when c[j] <= 1 - p[r], except j = V-1 (the largest)
 *   if min_p given (native extension, after top-k and top-p):
 *     mask entries whose probability is below min_p[r] * the largest probability
 *   out[idx[j]] = s[j]           # kept entries keep their bits; masked ones become -inf
 *
 * so that among equal values the lower indices are masked first, and the top-p boundary
 * may keep only part of a group of equal values. The op does not sort: it finds the
 * k-th value and the top-p boundary by radix selection on order-preserving keys, in a
 * few passes over each row. Probabilities are exp(x - max) in f32, accumulated exactly
 * (64-bit fixed point, so any split of a row gives the same sums); the comparison with
 * 1 - p (computed in f32, as the reference does) is exact on those sums. Where f32
 * rounding in the reference decides an entry (its cumulative sum within a few ulp of
 * 1 - p), results may differ on that entry.
 *
 * Special values (documented choices): -0.0 equals +0.0. NaN sorts above +inf (as
 * torch.sort orders it) and is never masked by top-k; when the k-th largest value is a
 * NaN, top-k masks nothing (every s < NaN is false in the reference); a row with a NaN or
 * +inf among the survivors of top-k has no defined distribution, so top-p and min-p leave
 * it unchanged (the reference's softmax is NaN there and masks nothing). A row that is
 * all -inf stays all -inf. Nothing is ever read or written outside the tensors.
 *
 * Tensors:
 *   logits [B, V]: f32, f16 or bf16; any strides.
 *   p [B]: logits' dtype, or f32; values in [0, 1] (checked in phase 2); optional.
 *   k [B]: i32 or i64; k <= 0 or k >= V disables top-k for that row; optional.
 *   At least one of p and k (or min_p) must be given.
 *   out [B, V]: logits' dtype; any strides; may be logits itself (in place, then only
 *   masked entries are written). Other overlap with logits is not allowed.
 *   V == 1: out is a copy of logits. Empty tensors: success, nothing done.
 *
 * Phase 1 statuses: LLMK_ERROR_NULL_POINTER (logits, out, workspace_size or plan NULL,
 * or p, k and min_p all NULL, a data pointer NULL with elements),
 * LLMK_ERROR_INVALID_DTYPE (logits not f32/f16/bf16, out's dtype differs, p not logits'
 * dtype or f32, k not i32/i64), LLMK_ERROR_INVALID_SHAPE (ranks, [B] / [B, V] mismatches,
 * negative strides). Phase 2: LLMK_ERROR_INVALID_VALUE, before any write, for p or min_p
 * outside [0, 1] or NaN (the message names the row and the value).
 */
#ifndef LLMK_TOP_K_TOP_P_H
#define LLMK_TOP_K_TOP_P_H

#include <math.h>

#include "llmk/types.h"

#ifdef __cplusplus
extern "C" {
#endif

LLMK_API llmk_status llmk_apply_top_k_top_p_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p /* optional */,
    const llmk_tensor *k /* optional */, const llmk_tensor *out, size_t *workspace_size,
    llmk_plan **plan);

LLMK_API llmk_status llmk_apply_top_k_top_p(void *workspace, size_t workspace_size,
                                            llmk_plan *plan, llmk_context *ctx);

/* The same with min_p [B] (p's dtype rules; values in [0, 1]; 0 keeps everything) and an
 * optional count of the entries kept in each row, kept [B] i32 or i64 (written only on
 * success). Runs with llmk_apply_top_k_top_p(). */
LLMK_API llmk_status llmk_apply_top_k_top_p_min_p_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p /* optional */,
    const llmk_tensor *k /* optional */, const llmk_tensor *min_p /* optional */,
    const llmk_tensor *out, const llmk_tensor *kept /* optional */,
    size_t *workspace_size, llmk_plan **plan);

/*
 * For callers that already sorted: sorted_value [B, V] ascending (f32/f16/bf16, stable
 * order: equal values by ascending original index), sorted_indices [B, V] i32 or i64
 * (i64 is torch.sort's; a permutation of 0..V-1 per row, checked in phase 2), p and k as
 * above, and optionally the original logits (same dtype) supplying the kept values.
 * Equal to the reference above with s = sorted_value and idx = sorted_indices:
 *   out[idx[j]] = kept ? (logits ? logits[idx[j]] : s[j]) : -inf.
 * Phase 2 also gives LLMK_ERROR_INVALID_VALUE for an index outside [0, V) or repeated,
 * and for a row of sorted_value that is not ascending (-0.0 equals +0.0; NaN sorts
 * above +inf, as torch.sort puts it).
 * Runs with llmk_apply_top_k_top_p().
 */
LLMK_API llmk_status llmk_apply_top_k_top_p_with_sorted_get_workspace_size(
    const llmk_tensor *sorted_value, const llmk_tensor *sorted_indices,
    const llmk_tensor *p /* optional */, const llmk_tensor *k /* optional */,
    const llmk_tensor *logits /* optional */, const llmk_tensor *out,
    size_t *workspace_size, llmk_plan **plan);

/*
 * Sampling: one token id per row, as vLLM's sampler draws it: y = logits / temperature
 * (f32), y filtered by top-k, top-p and min-p exactly as above, then one draw from
 * softmax(y) over the kept entries. The draw is an exponential race:
 *   token = argmax over kept j of exp(y_j - max y) / E_j,   E_j ~ Exp(1)
 * where E_j comes from a counter-based generator keyed by (seed[r], offset[r], j), so the
 * result depends on nothing but the inputs, for any thread count and ISA (ties in the
 * race go to the lower index). temperature[r] == 0 is greedy: the largest logit, the
 * lowest index among equal ones.
 *
 *   logits [B, V]: f32/f16/bf16, any strides; p, k, min_p: as above (all optional);
 *   temperature [B] f32 (optional: 1); seed [B] i64; offset [B] i64 (optional: 0);
 *   token_ids [B] i32 or i64 (out).
 * Phase 2: LLMK_ERROR_INVALID_VALUE for p/min_p outside [0, 1] or NaN, and a negative,
 * infinite or NaN temperature. A row with no finite distribution (all -inf, or NaN / +inf
 * among the survivors) gets its largest logit's token, as greedy does (NaN above +inf).
 * Runs with llmk_apply_top_k_top_p().
 */
LLMK_API llmk_status llmk_sample_top_k_top_p_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p /* optional */,
    const llmk_tensor *k /* optional */, const llmk_tensor *min_p /* optional */,
    const llmk_tensor *temperature /* optional */, const llmk_tensor *seed,
    const llmk_tensor *offset /* optional */, const llmk_tensor *token_ids,
    size_t *workspace_size, llmk_plan **plan);

/*
 * Sampling with a caller-given noise tensor, in CANN's aclnnTopKTopPSample rules (the
 * fused filter-and-sample of Ascend's ops-nn). Per row r of x = logits[r] (as f32), with
 * "sorted" meaning by value descending, equal values by ascending index:
 *
 *   top-k runs when 1 <= k[r] <= min(V, k_max) (k_max <= 0: V); other k (0, negative,
 *     larger) skip it. C = the k largest, sorted; probs_j = softmax over C (max first).
 *   top-p runs when 0 < p[r] < 1 (a row with top-k) or unless p[r] <= 0 or p[r] >= 1 (a
 *     row without: NaN runs it and cuts nothing); without top-k C = the whole row sorted
 *     and probs = softmax over the row. n = the first j + 1 at which the running f32 sum
 *     of probs over C (from the top) exceeds p[r]; V or k if it never does.
 *   neither: C = the row in index order, n = V, probs = softmax over the row.
 *   w_j (j < n): top-k rows softmax over x[C_0..C_n-1]; top-p-only rows probs
 * renormalized over the n kept, or with options->resoftmax_top_p softmax of those
 * probabilities (CANN's kernel); other rows probs. token_ids[r] = C[j*], j* = the first j
 * maximizing w_j / (|q[r][c_j]| + (float)eps), c_j = j in a sorted row with
 * options->q_by_rank, else C_j; without q the first j maximizing w_j. filtered (optional,
 * f32 [B, V]): x[i] where i = C_j, j < n; options->fill elsewhere.
 *
 * Arithmetic: exp is llmk's exp_nonpos of (value - max), f32; normalizing sums are in
 * double in C's order, each w a float quotient; so every result is the same for any
 * thread count and ISA. A row whose normalizing sum is 0 or not finite (NaN or +inf
 * logits) has w = 0 everywhere and gets C_0.
 *
 *   logits [B, V] f32/f16/bf16; p [B] logits' dtype or f32 (optional: no top-p);
 *   k [B] i32/i64 (optional: no top-k); q [B, V] f32 (optional: argmax);
 *   token_ids [B] i32/i64 (out); filtered [B, V] f32 (out, optional).
 * No value is refused (CANN's kernel takes any k and p); outputs may not overlap any
 * other tensor. Phase 1 statuses as for the other entries. Runs with
 * llmk_apply_top_k_top_p().
 */
typedef struct llmk_sample_ex_options {
  double eps;          /* added to |q| (as f32) */
  int64_t k_max;       /* top-k runs for 1 <= k <= min(V, k_max); <= 0: V */
  int q_by_rank;       /* noise of the j-th largest kept entry is q[r][j] (sorted rows) */
  int resoftmax_top_p; /* top-p-only rows draw from softmax(probabilities) */
  float fill;          /* `filtered` outside the kept entries */
} llmk_sample_ex_options;

LLMK_API llmk_status llmk_sample_top_k_top_p_ex_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p /* optional */,
    const llmk_tensor *k /* optional */, const llmk_tensor *q /* optional */,
    const llmk_sample_ex_options *options, const llmk_tensor *token_ids,
    const llmk_tensor *filtered /* optional */, size_t *workspace_size, llmk_plan **plan);

/*
 * The same sampler in the rules of CANN's aclnnTopKTopPSampleV2 (ops-nn), with min-p, a
 * switch for inputs that are already probabilities, and the kept list as outputs. Per
 * row r of x = logits[r] (as f32), "sorted" meaning value descending, equal values by
 * ascending index, and v(.) = softmax when options->input_is_logits, else the values
 * themselves:
 *
 *   p[r] <= 0:        L = the largest entry; vals = v(that value) (1 for softmax).
 *   else top-k (1 <= k[r] <= min(V, options->k_max)): L = the k[r] largest, sorted;
 *     vals = v over those k; if 0 < p[r] < 1, L is cut after the first entry at which
 *     the running f32 sum of vals (from the top) reaches p[r] (sum >= p).
 *   else 0 < p[r] < 1: L = the row sorted; vals = v over the whole row; the same cut.
 *   else (p[r] >= 1, NaN or absent): L = the row in index order; vals = v over the row.
 *   min-p, when 0 < min_p[r]: min_p[r] >= 1 keeps the first maximum of vals only; else
 *     the entries with vals >= min_p[r] * max(vals) stay, in L's order (none: L as is).
 *   token_ids[r] = L[j*], j* the first j maximizing vals_j / (|q[r][j]| + (float)eps)
 *     (q's column is the position in L); without q the first maximum of vals.
 *   filtered[r][i] = x[i] for i in L, options->fill elsewhere.
 *   kept_values[r][j] = vals_j for j < n = |L|, 0 after; kept_index[r][j] = L[j] for
 *     j < n, entries from n on not written.
 *
 * Arithmetic as in llmk_sample_top_k_top_p_ex (f32 exp, double normalizing sums in a
 * fixed order, a row whose sum is 0 or not finite has vals = 0); so results are the same
 * for any thread count and ISA.
 *
 *   logits [B, V] f32/f16/bf16; p [B], min_p [B] logits' dtype or f32 (optional);
 *   k [B] i32/i64 (optional: no top-k); q [B, V] f32 (optional); token_ids [B]
 *   i32/i64, filtered [B, V] f32, kept_values [B, V] f32, kept_index [B, V] i32/i64
 *   (outputs, each optional; no output may overlap another tensor).
 * options: struct_size must be at least LLMK_SAMPLE_EX2_OPTIONS_V1_SIZE; a larger struct
 * (a newer header) is accepted when its bytes past the fields known here are 0, else
 * LLMK_ERROR_INVALID_ATTRIBUTE. LLMK_SAMPLE_EX2_OPTIONS_INIT gives CANN's defaults.
 * No value is refused (CANN's kernel takes any k, p, min_p). Phase 1 statuses as for the
 * other entries. Runs with llmk_apply_top_k_top_p().
 */
typedef struct llmk_sample_ex2_options {
  size_t struct_size;  /* sizeof(llmk_sample_ex2_options) where the caller compiled */
  double eps;          /* added to |q| (as f32) */
  int64_t k_max;       /* top-k runs for 1 <= k <= min(V, k_max); k_max <= 0: never */
  int input_is_logits; /* vals are softmax probabilities (1) or the values (0) */
  float fill;          /* `filtered` outside the kept entries */
} llmk_sample_ex2_options;

#define LLMK_SAMPLE_EX2_OPTIONS_V1_SIZE \
  (offsetof(llmk_sample_ex2_options, fill) + sizeof(float))
#define LLMK_SAMPLE_EX2_OPTIONS_INIT \
  { sizeof(llmk_sample_ex2_options), 1e-8, 1024, 1, -INFINITY }

LLMK_API llmk_status llmk_sample_top_k_top_p_ex2_get_workspace_size(
    const llmk_tensor *logits, const llmk_tensor *p /* optional */,
    const llmk_tensor *k /* optional */, const llmk_tensor *min_p /* optional */,
    const llmk_tensor *q /* optional */, const llmk_sample_ex2_options *options,
    const llmk_tensor *token_ids /* optional */,
    const llmk_tensor *filtered /* optional */,
    const llmk_tensor *kept_values /* optional */,
    const llmk_tensor *kept_index /* optional */, size_t *workspace_size,
    llmk_plan **plan);

#ifdef __cplusplus
}
#endif

#endif
