/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p: top-k selection. The k-th largest key by radix selection over the
 * row's keys, by a heap among few candidates, and the pivot that picks those candidates
 * from a sample of the row. */

#include <string.h>

#include "kernels/convert/convert-elem.h"
#include "ops/apply_top_k_top_p/internal.h"

/* The k-th largest key of keys[0..V) (1 <= k <= V); hist0 is the histogram of the top
 * digit. Levels after the first look only at the candidates of the chosen bin, kept in
 * the scratch when they fit. */
uint32_t llmk__tkp_kth_largest(const scratch *s, int64_t V, int64_t k,
                               const uint32_t *hist0) {
  uint32_t prefix = 0;
  int64_t need = k;
  const uint32_t *keys = s->keys;
  int64_t n = V;
  for (int l = 0; l < 3; l++) {
    uint32_t pm = llmk__tkp_prefix_mask(l), sh = (uint32_t)llmk__tkp_level_shift[l],
             dm = llmk__tkp_level_mask[l];
    const uint32_t *count = hist0;
    if (l > 0) {
      memset(s->count, 0, HBINS * 4);
      for (int64_t j = 0; j < n; j++)
        if ((keys[j] & pm) == prefix) s->count[(keys[j] >> sh) & dm]++;
      count = s->count;
    }
    uint32_t d = dm;
    for (;; d--) {
      if (count[d] >= need) break;
      need -= count[d];
    }
    prefix |= d << sh;
    if (l == 0 &&
        count[d] <
            CAND_CAP) { /* gather the candidates once (branch-free: one spare slot) */
      int64_t c = 0;
      uint32_t top = prefix;
      for (int64_t j = 0; j < V; j++) {
        s->ckey[c] = keys[j];
        c += (keys[j] >> 21) == (top >> 21);
      }
      keys = s->ckey;
      n = c;
    }
  }
  return prefix;
}

/* The k-th largest of keys[0..n) (1 <= k <= n): a min-heap of the k largest so far, in
 * heap[0..k) (n is at most CAND_CAP, k mostly small). */
uint32_t llmk__tkp_select_kth(const uint32_t *keys, int64_t n, int64_t k,
                              uint32_t *heap) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t v = keys[i];
    int64_t j;
    if (i < k) { /* sift up */
      for (j = i; j > 0 && heap[(j - 1) / 2] > v; j = (j - 1) / 2)
        heap[j] = heap[(j - 1) / 2];
    } else if (v > heap[0]) { /* replace the smallest, sift down */
      for (j = 0;;) {
        int64_t c = 2 * j + 1;
        if (c >= k) break;
        if (c + 1 < k && heap[c + 1] < heap[c]) c++;
        if (heap[c] >= v) break;
        heap[j] = heap[c];
        j = c;
      }
    } else {
      continue;
    }
    heap[j] = v;
  }
  return heap[0];
}

/* Top-k for small k: a threshold tau from a sample of the row (runs of consecutive
 * entries spread over it), its rank chosen so that about 2k + 8 V / ns entries of the row
 * lie above it (ns: the sample's size; fewer than k lie above it with a chance of about
 * 1e-7 or less for a row in random order); the caller gathers the entries >= tau (the
 * candidates, in s->ckey / s->cidx), possibly while writing the row, and when there are
 * at least k and at most CAND_CAP of them, the k-th largest is selected among them
 * (llmk__tkp_filter_row). llmk__tkp_pivot_tau returns false for rows where the sample
 * would not do. Up to 64 runs rather than 32 halve the candidates for the same odds (B =
 * 1, k = 50: 20-24% less time, in-process A/B). */
enum { RUN = 32, RUNS = 64 };

/* about 1/32 of the row, at most RUNS runs */
static int64_t sample_runs(int64_t V) {
  return V / (32 * RUN) < RUNS ? V / (32 * RUN) : RUNS;
}

static inline int64_t sample_run_at(int64_t V, int64_t runs, int64_t r) {
  return (V - RUN) * r / (runs - 1);
}

/* Asks for the cache lines of the pivot's sample of row r of v (contiguous), which the
 * next row's pivot would otherwise wait for, one miss after another. */
void llmk__tkp_prefetch_sample(const llmk__view *v, int64_t r, int64_t V) {
  int64_t runs = sample_runs(V);
  size_t esz = llmk_dtype_size(v->dtype);
  if (runs < 8 || v->s1 != 1) return;
  const char *base = llmk__view_at(v, r, 0);
  for (int64_t q = 0; q < runs; q++)
    for (int64_t j = 0; j < RUN; j += 64 / (int64_t)esz)
      __builtin_prefetch(base + (size_t)(sample_run_at(V, runs, q) + j) * esz);
}

bool llmk__tkp_pivot_tau(const tkp_plan *pl, const scratch *s, const rowctx *rc,
                         int64_t V, int64_t k, uint32_t *tau) {
  int64_t runs = sample_runs(V), ns = 0;
  if (k > (CAND_CAP - 1) / 4 || runs < 8 || V > UINT32_MAX) return false;
  for (int64_t r = 0; r < runs; r++, ns += RUN) {
    int64_t at = sample_run_at(V, runs, r);
    if (rc->dt == LLMK_F32)
      pl->kern->keys((const float *)llmk__tkp_src_at(rc, at), RUN, s->bk + ns);
    else
      for (int64_t j = 0; j < RUN; j++)
        s->bk[ns + j] =
            llmk__key_of(llmk__load_f32(llmk__tkp_src_at(rc, at + j), rc->dt));
  }
  int64_t rank = 2 * k * ns / V + 8; /* about 2k + 8 V / ns entries of the row above it */
  *tau = llmk__tkp_select_kth(s->bk, ns, rank, s->sk);
  return true;
}
