/* SPDX-License-Identifier: Apache-2.0 */
/* sample_top_k_top_p_ex (and _ex2): one token per row from a caller-given noise tensor,
 * with the rules of CANN's fused filter-and-sample, V1 and V2
 * (include/llmk/top_k_top_p.h). Both rules share the ranking, the top-k heap and the
 * softmax below. A row is done by one worker, in a fixed order of operations, so results
 * do not depend on the threads.
 *
 * Order: entries are ranked by packed 64-bit words, key << 32 | (UINT32_MAX - index),
 * where key is the order-preserving key of the value (-0 == +0, NaN above +inf): a larger
 * word is a larger value, or an equal value with a lower index. */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/apply_top_k_top_p/internal.h"

size_t llmk__tkp_sample_ex_bytes(int64_t V) {
  return ((size_t)V * 16 + 64 + 63) / 64 * 64;
}

static inline uint64_t pack(float x, int64_t i) {
  return (uint64_t)llmk__key_of(x) << 32 | (uint64_t)(UINT32_MAX - (uint32_t)i);
}

static inline int64_t index_of(uint64_t w) {
  return (int64_t)(UINT32_MAX - (uint32_t)w);
}

static int by_word_desc(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* min-heap of packed words (the root is the worst kept) */
static void sift_down(uint64_t *h, int64_t n, int64_t i) {
  for (;;) {
    int64_t l = 2 * i + 1, m = i;
    if (l < n && h[l] < h[m]) m = l;
    if (l + 1 < n && h[l + 1] < h[m]) m = l + 1;
    if (m == i) return;
    uint64_t t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

/* The k largest of the row (k <= V), sorted best first, into c[0..k). */
static void top_k(const float *x, int64_t V, int64_t k, uint64_t *c) {
  for (int64_t i = 0; i < k; i++) c[i] = pack(x[i], i);
  for (int64_t i = k / 2 - 1; i >= 0; i--) sift_down(c, k, i);
  for (int64_t i = k; i < V; i++) {
    uint64_t wd = pack(x[i], i);
    if (wd > c[0]) {
      c[0] = wd;
      sift_down(c, k, 0);
    }
  }
  qsort(c, (size_t)k, sizeof *c, by_word_desc);
}

/* w[j] = exp(v[j] - v_max) / sum over j < n, the sum in double in order; 0 everywhere
 * when the sum is 0 or not finite. */
static void softmax(const float *v, int64_t n, float vmax, float *w) {
  double sum = 0.0;
  for (int64_t j = 0; j < n; j++) {
    w[j] = llmk__exp_nonpos(v[j] - vmax);
    sum += w[j];
  }
  if (!(sum > 0.0) || isinf(sum)) {
    for (int64_t j = 0; j < n; j++) w[j] = 0.0f;
    return;
  }
  for (int64_t j = 0; j < n; j++) w[j] = (float)((double)w[j] / sum);
}

/* The kept count: the first j + 1 where the running f32 sum of probs exceeds p. */
static int64_t top_p_count(const float *probs, int64_t n, float p) {
  float c = 0.0f;
  for (int64_t j = 0; j < n; j++) {
    c += probs[j];
    if (c >= p) return j + 1;
  }
  return n;
}

static float row_max(const float *x, int64_t n) {
  float m = x[0];
  uint32_t mk = llmk__key_of(m);
  for (int64_t i = 1; i < n; i++) {
    uint32_t ki = llmk__key_of(x[i]);
    if (ki > mk) {
      mk = ki;
      m = x[i];
    }
  }
  return m;
}

void llmk__tkp_sample_ex_one(const tkp_plan *pl, void *scratch_bytes, int64_t r) {
  int64_t V = pl->V;
  char *base = scratch_bytes;
  uint64_t *c = (uint64_t *)(void *)base;              /* [V]: ranked words */
  float *x = (float *)(void *)(base + (size_t)V * 8);  /* [V]: the row */
  float *w = (float *)(void *)(base + (size_t)V * 12); /* [V]: probabilities */
  for (int64_t i = 0; i < V; i++) x[i] = llmk__view_get_f(&pl->logits, r, i);
  int64_t k = pl->k.data ? llmk__view_get(&pl->k, r, 0) : 0;
  int64_t kcap = pl->k_max > 0 && pl->k_max < V ? pl->k_max : V;
  bool has_p = pl->p.data != NULL;
  float p = has_p ? llmk__view_get_f(&pl->p, r, 0) : 1.0f;
  bool sorted = true;
  int64_t n;
  if (k >= 1 && k <= kcap) {
    top_k(x, V, k, c);
    float *v = w; /* the k values, then their softmax in place */
    for (int64_t j = 0; j < k; j++) v[j] = x[index_of(c[j])];
    float vmax = v[0];
    softmax(v, k, vmax, w);
    n = p > 0.0f && p < 1.0f ? top_p_count(w, k, p) : k;
    for (int64_t j = 0; j < n; j++) w[j] = x[index_of(c[j])];
    softmax(w, n, vmax, w);
  } else if (has_p && !(p <= 0.0f || p >= 1.0f)) {
    softmax(x, V, row_max(x, V), w);
    for (int64_t i = 0; i < V; i++) c[i] = pack(x[i], i);
    qsort(c, (size_t)V, sizeof *c, by_word_desc);
    /* the probabilities in rank order go to x (the row is read again if needed) */
    for (int64_t j = 0; j < V; j++) x[j] = w[index_of(c[j])];
    n = top_p_count(x, V, p);
    if (pl->resoftmax) {
      softmax(x, n, x[0], w);
    } else {
      double sum = 0.0;
      for (int64_t j = 0; j < n; j++) sum += x[j];
      for (int64_t j = 0; j < n; j++)
        w[j] = sum > 0.0 && !isinf(sum) ? (float)((double)x[j] / sum) : 0.0f;
    }
    if (pl->filtered.data) /* the row again, for the kept values */
      for (int64_t i = 0; i < V; i++) x[i] = llmk__view_get_f(&pl->logits, r, i);
  } else {
    sorted = false;
    n = V;
    softmax(x, V, row_max(x, V), w);
  }
  /* the draw: the first j maximizing w_j / (|q| + eps), or w_j */
  int64_t best = 0;
  if (pl->q.data) {
    float best_score = 0.0f;
    for (int64_t j = 0; j < n; j++) {
      int64_t tok = sorted ? index_of(c[j]) : j;
      float qv = llmk__view_get_f(&pl->q, r, sorted && pl->q_by_rank ? j : tok);
      float score = w[j] / (fabsf(qv) + pl->eps);
      if (j == 0 || score > best_score) {
        best_score = score;
        best = j;
      }
    }
  } else {
    for (int64_t j = 1; j < n; j++)
      if (w[j] > w[best]) best = j;
  }
  llmk__view_set(&pl->ids, r, sorted ? index_of(c[best]) : best);
  if (pl->filtered.data) {
    for (int64_t i = 0; i < V; i++) {
      bool kept = !sorted;
      float v = kept ? x[i] : pl->fill;
      memcpy(llmk__view_at(&pl->filtered, r, i), &v, 4);
    }
    if (sorted)
      for (int64_t j = 0; j < n; j++) {
        int64_t i = index_of(c[j]);
        memcpy(llmk__view_at(&pl->filtered, r, i), &x[i], 4);
      }
  }
}

/* ------------------------------------------------ CANN V2's rules (sample_ex2) */

/* The kept count: the first j + 1 where the running f32 sum reaches p. */
static int64_t cut_at(const float *v, int64_t n, float p) {
  float c = 0.0f;
  for (int64_t j = 0; j < n; j++) {
    c += v[j];
    if (c >= p) return j + 1;
  }
  return n;
}

static int64_t first_max(const float *v, int64_t n) {
  int64_t m = 0;
  for (int64_t j = 1; j < n; j++)
    if (v[j] > v[m]) m = j;
  return m;
}

/* vals: softmax of v (in place allowed) or v itself */
static void values_of(const float *v, int64_t n, float vmax, bool softmax_them,
                      float *w) {
  if (softmax_them)
    softmax(v, n, vmax, w);
  else if (w != v)
    memcpy(w, v, (size_t)n * sizeof *w);
}

void llmk__tkp_sample_ex2_one(const tkp_plan *pl, void *scratch_bytes, int64_t r) {
  int64_t V = pl->V;
  char *base = scratch_bytes;
  uint64_t *c = (uint64_t *)(void *)base;              /* [V]: the list L, as words */
  float *x = (float *)(void *)(base + (size_t)V * 8);  /* [V]: the row */
  float *w = (float *)(void *)(base + (size_t)V * 12); /* [V]: vals, in L's order */
  for (int64_t i = 0; i < V; i++) x[i] = llmk__view_get_f(&pl->logits, r, i);
  bool il = pl->input_is_logits;
  int64_t k = pl->k.data ? llmk__view_get(&pl->k, r, 0) : 0;
  int64_t kcap = pl->k_max <= 0 ? 0 : pl->k_max < V ? pl->k_max : V;
  float p = pl->p.data ? llmk__view_get_f(&pl->p, r, 0) : 1.0f;
  bool top_p = p > 0.0f && p < 1.0f;
  int64_t n;
  if (p <= 0.0f) { /* one entry: the largest */
    top_k(x, V, 1, c);
    float v = x[index_of(c[0])];
    values_of(&v, 1, v, il, w);
    n = 1;
  } else if (k >= 1 && k <= kcap) {
    top_k(x, V, k, c);
    for (int64_t j = 0; j < k; j++) w[j] = x[index_of(c[j])];
    values_of(w, k, w[0], il, w);
    n = top_p ? cut_at(w, k, p) : k;
  } else if (top_p) {
    values_of(x, V, row_max(x, V), il, w);
    for (int64_t i = 0; i < V; i++) c[i] = pack(x[i], i);
    qsort(c, (size_t)V, sizeof *c, by_word_desc);
    /* vals into rank order, through x (the row is read again for `filtered`) */
    for (int64_t j = 0; j < V; j++) x[j] = w[index_of(c[j])];
    memcpy(w, x, (size_t)V * sizeof *w);
    n = cut_at(w, V, p);
    if (pl->filtered.data)
      for (int64_t i = 0; i < V; i++) x[i] = llmk__view_get_f(&pl->logits, r, i);
  } else { /* index order */
    for (int64_t i = 0; i < V; i++) c[i] = pack(x[i], i);
    values_of(x, V, row_max(x, V), il, w);
    n = V;
  }
  float mp = pl->min_p.data ? llmk__view_get_f(&pl->min_p, r, 0) : 0.0f;
  if (mp > 0.0f) {
    int64_t m = first_max(w, n);
    if (mp >= 1.0f) {
      c[0] = c[m];
      w[0] = w[m];
      n = 1;
    } else {
      float thd = mp * w[m];
      int64_t t = 0;
      for (int64_t j = 0; j < n; j++)
        if (w[j] >= thd) {
          c[t] = c[j];
          w[t++] = w[j];
        }
      if (t > 0) n = t;
    }
  }
  if (pl->ids.data) {
    int64_t best = 0;
    if (pl->q.data) {
      float best_score = 0.0f;
      for (int64_t j = 0; j < n; j++) {
        float score = w[j] / (fabsf(llmk__view_get_f(&pl->q, r, j)) + pl->eps);
        if (j == 0 || score > best_score) {
          best_score = score;
          best = j;
        }
      }
    } else {
      best = first_max(w, n);
    }
    llmk__view_set(&pl->ids, r, index_of(c[best]));
  }
  if (pl->filtered.data) {
    for (int64_t i = 0; i < V; i++)
      memcpy(llmk__view_at(&pl->filtered, r, i), &pl->fill, 4);
    for (int64_t j = 0; j < n; j++) {
      int64_t i = index_of(c[j]);
      memcpy(llmk__view_at(&pl->filtered, r, i), &x[i], 4);
    }
  }
  if (pl->kvals.data)
    for (int64_t j = 0; j < V; j++) {
      float v = j < n ? w[j] : 0.0f;
      memcpy(llmk__view_at(&pl->kvals, r, j), &v, 4);
    }
  if (pl->kidx.data)
    for (int64_t j = 0; j < n; j++) {
      char *at = llmk__view_at(&pl->kidx, r, j);
      int64_t i = index_of(c[j]);
      if (pl->kidx.is64) {
        memcpy(at, &i, 8);
      } else {
        int32_t i32 = (int32_t)i;
        memcpy(at, &i32, 4);
      }
    }
}
