/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p_with_sorted: rows already sorted ascending, with their indices. */

#include <string.h>

#include "kernels/convert/convert-elem.h"
#include "ops/apply_top_k_top_p/internal.h"

/* Widens row r of v into row[0..V). */
static void load_row(const llmk__view *v, int64_t r, int64_t V, float *row) {
  const char *base = llmk__view_at(v, r, 0);
  size_t esz = llmk_dtype_size(v->dtype), step = (size_t)v->s1 * esz;
  if (v->dtype == LLMK_F32 && v->s1 == 1)
    memcpy(row, base, (size_t)V * 4);
  else
    for (int64_t j = 0; j < V; j++)
      row[j] = llmk__load_f32(base + (size_t)j * step, v->dtype);
}

void llmk__tkp_sorted_one(const tkp_plan *pl, const scratch *s, int64_t r) {
  int64_t V = pl->V;
  load_row(&pl->sv, r, V, s->row);
  bool has_k = pl->k.data != NULL, has_p = pl->p.data != NULL;
  int64_t k = has_k ? llmk__view_get(&pl->k, r, 0) : 0,
          first = 0; /* sorted positions < first: masked */
  if (has_k && k >= 1 && k <= V - 1) {
    uint32_t t = llmk__key_of(s->row[V - k]);
    if (t != LLMK__KEY_NAN)
      while (first < V && llmk__key_of(s->row[first]) < t) first++;
  }
  float max = s->row[V - 1];
  uint32_t max_key = llmk__key_of(max);
  bool finite = max_key < LLMK__KEY_PINF && max_key > LLMK__KEY_NINF;
  int64_t pfirst = first;
  if (has_p && finite) {
    float thr = 1.0f - llmk__view_get_f(&pl->p, r, 0);
    if (thr <= 0.0f) { /* p == 1: only entries of probability exactly 0 go */
      while (pfirst < V - 1 && llmk__exp_nonpos_fma(s->row[pfirst] - max) == 0.0f)
        pfirst++;
    } else { /* the masses by the kernels, a chunk at a time (keys >= 0: all taken) */
      pl->kern->keys(s->row + first, (size_t)(V - first), s->keys + first);
      uint64_t tlo = 0, thi = 0;
      for (int64_t j0 = first; j0 < V; j0 += CHUNK) {
        size_t c = (size_t)(V - j0 < CHUNK ? V - j0 : CHUNK);
        pl->kern->masses(s->row + j0, s->keys + j0, c, max, 0, 0, 0, s->mass, NULL, &tlo,
                         &thi);
      }
      u128 target = llmk__tkp_scaled_target(thr, ((u128)thi << 32) + tlo), cum = 0;
      for (int64_t j0 = first; pfirst < V - 1; j0 += CHUNK) { /* the masses again */
        size_t c = (size_t)(V - j0 < CHUNK ? V - j0 : CHUNK);
        uint64_t unused_lo = 0, unused_hi = 0;
        pl->kern->masses(s->row + j0, s->keys + j0, c, max, 0, 0, 0, s->mass, NULL,
                         &unused_lo, &unused_hi);
        size_t i = 0;
        for (; i < c && pfirst < V - 1; i++, pfirst++) {
          cum += s->mass[i];
          if (cum > target) break;
        }
        if (i < c) break;
      }
    }
  }
  size_t esz = llmk_dtype_size(pl->out.dtype);
  bool values = pl->logits.data != NULL;
  for (int64_t j = 0; j < V; j++) {
    int64_t idx = llmk__view_get(&pl->si, r, j);
    char *dst = (char *)llmk__view_at(&pl->out, r, idx);
    if (j < pfirst)
      llmk__tkp_store_neg_inf(dst, pl->out.dtype);
    else
      memcpy(dst,
             values ? llmk__view_at(&pl->logits, r, idx) : llmk__view_at(&pl->sv, r, j),
             esz);
  }
}
