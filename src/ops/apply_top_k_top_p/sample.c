/* SPDX-License-Identifier: Apache-2.0 */
/* sample_top_k_top_p: one token per row by an exponential race over the entries that
 * apply_top_k_top_p keeps, at a temperature. */

#include <math.h>
#include <string.h>

#include "ops/apply_top_k_top_p/internal.h"

static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in (0, 1] from (seed, offset, j): a counter-based hash. */
static inline double uniform01(uint64_t seed, uint64_t offset, uint64_t j) {
  uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ull);
  h = mix64(h ^ (offset * 0xd1b54a32d192ed03ull));
  h = mix64(h ^ (j + 0x632be59bd9b4e019ull));
  return ((double)(h >> 11) + 1.0) * 0x1p-53;
}

typedef struct race_job {
  const tkp_plan *pl;
  const scratch *s;
  const row_result *rr;
  uint64_t seed, offset;
  double score[MAX_PARTS];
  int64_t best[MAX_PARTS];
} race_job;

/* Whether entry i (value x, key) is kept. */
static inline bool keep_entry(const row_result *r, float x, uint32_t key, int64_t i) {
  if (key < r->t_key) return false;
  if (r->have_p) {
    if (key < r->pb.key) return false;
    if (key == r->pb.key && i < r->tie_cut) return false;
  }
  if (r->min_e > 0.0f && llmk__exp_nonpos(x - r->max) < r->min_e) return false;
  return true;
}

/* Divides row[a, b) by the temperature and recomputes its keys; u32 max per part. */
static void scale_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  for (int64_t i = a; i < b; i++) j->row[i] = j->row[i] / j->t;
  j->u32[part] = b > a ? j->pl->kern->keys(j->row + a, (size_t)(b - a), j->keys + a) : 0;
}

/* The exponential race over the kept entries of [a, b): the best score and its index. */
static void race_part(void *arg, int part, int64_t a, int64_t b) {
  race_job *j = arg;
  const row_result *rr = j->rr;
  double best_score = -1.0;
  int64_t best = -1;
  for (int64_t i = a; i < b; i++) {
    float y = j->s->row[i];
    if (!keep_entry(rr, y, j->s->keys[i], i)) continue;
    double q = (double)llmk__exp_nonpos(y - rr->max);
    if (q <= 0.0) continue;
    double u = uniform01(j->seed, j->offset, (uint64_t)i);
    /* -log(u) >= 1 - u: skip the log when even that bound cannot win (with a margin, so
     * that rounding can never skip an entry that would win) */
    if (best_score >= 0.0 && q <= best_score * (1.0 - u) * (1.0 - 0x1p-40)) continue;
    double score = q / -log(u);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  j->score[part] = best_score;
  j->best[part] = best;
}

void llmk__tkp_sample_one(const tkp_plan *pl, const team *tm, const scratch *s,
                          int64_t r) {
  int64_t V = pl->V;
  float t = pl->temperature.data ? llmk__view_get_f(&pl->temperature, r, 0) : 1.0f;
  uint32_t max_key = llmk__tkp_team_load(pl, tm, s, &pl->logits, r);
  int64_t best = 0; /* greedy: the lowest index of the largest key */
  while (s->keys[best] != max_key) best++;
  bool finite = max_key < LLMK__KEY_PINF && max_key > LLMK__KEY_NINF;
  if (t > 0.0f && finite) {
    step_job sj = {
        .pl = pl, .ps = tm ? tm->ps : s, .row = s->row, .keys = s->keys, .t = t};
    llmk__tkp_team_run(tm, V, scale_part, &sj);
    uint32_t ymax = 0;
    for (int p = 0; p < llmk__tkp_team_parts(tm); p++)
      ymax = sj.u32[p] > ymax ? sj.u32[p] : ymax;
    bool has_k = pl->k.data != NULL, has_p = pl->p.data != NULL,
         has_m = pl->min_p.data != NULL;
    row_result rr;
    rowctx rc = {.src = s->row,
                 .dt = LLMK_F32,
                 .esz = 4,
                 .have_keys = true,
                 .have_max = true,
                 .max_key = ymax};
    int64_t k = has_k ? llmk__view_get(&pl->k, r, 0) : 0, ncand = -1;
    uint32_t tau;
    if (has_k && k >= 1 && k <= V - 1 && llmk__tkp_pivot_tau(pl, s, &rc, V, k, &tau))
      ncand = llmk__tkp_team_gather_ge(pl, tm, &rc, tau, s->ckey, s->cidx, CAND_CAP);
    llmk__tkp_filter_row(pl, tm, s, &rc, V, has_k, k, has_p,
                         has_p ? llmk__view_get_f(&pl->p, r, 0) : 0, has_m,
                         has_m ? llmk__view_get_f(&pl->min_p, r, 0) : 0, ncand, &rr);
    if (rr.pending)
      llmk__tkp_resolve_window(pl, tm, s, &rc, &rr, s->cidx,
                               llmk__tkp_gather_window(pl, tm, s, &rc, &rr, s->cidx));
    race_job rj = {
        .pl = pl,
        .s = s,
        .rr = &rr,
        .seed = (uint64_t)llmk__view_get(&pl->seed, r, 0),
        .offset = pl->offset.data ? (uint64_t)llmk__view_get(&pl->offset, r, 0) : 0};
    llmk__tkp_team_run(tm, V, race_part, &rj);
    double best_score = -1.0;
    for (int p = 0; p < llmk__tkp_team_parts(tm);
         p++) /* parts in index order: ties keep the lower */
      if (rj.best[p] >= 0 && rj.score[p] > best_score) {
        best_score = rj.score[p];
        best = rj.best[p];
      }
  }
  llmk__view_set(&pl->ids, r, best);
}
