/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p: the team (one row split over threads) and the row steps run over
 * it: the f32 row and its keys, the largest key, counts and gathers of keys. */

#include <math.h>
#include <string.h>

#include "kernels/convert/convert-elem.h"
#include "ops/apply_top_k_top_p/internal.h"

void llmk__tkp_team_split(const team *tm, int64_t n, part_fn fn, void *arg) {
  llmk__parallel_parts(tm->ctx, tm->parts, n, fn, arg);
}

static const scratch *part_scratch(const step_job *j, int part) {
  return &j->ps[part];
}

/* Widens row r of v into row[a, b) and computes its keys; u32[part] = largest key. */
static void load_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  const char *base = llmk__view_at(j->v, j->r, 0);
  size_t esz = llmk_dtype_size(j->v->dtype), step = (size_t)j->v->s1 * esz;
  if (j->v->dtype == LLMK_F32 && j->v->s1 == 1) {
    if ((const char *)j->row != base)
      memcpy(j->row + a, base + (size_t)a * 4, (size_t)(b - a) * 4);
  } else if (j->v->s1 == 1 && j->pl->kern->widen_keys) {
    j->u32[part] = b > a
                       ? j->pl->kern->widen_keys(base + (size_t)a * 2, j->v->dtype,
                                                 j->row + a, j->keys + a, (size_t)(b - a))
                       : 0;
    return;
  } else if (j->v->s1 == 1) /* f16 / bf16: the SIMD widening of llmk_convert */
    (j->v->dtype == LLMK_F16 ? j->pl->cvt->f16_to_f32 : j->pl->cvt->bf16_to_f32)(
        j->row + a, base + (size_t)a * 2, (size_t)(b - a));
  else
    for (int64_t i = a; i < b; i++)
      j->row[i] = llmk__load_f32(base + (size_t)i * step, j->v->dtype);
  j->u32[part] = b > a ? j->pl->kern->keys(j->row + a, (size_t)(b - a), j->keys + a) : 0;
}

static void count_eq_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  j->i64[part] = (int64_t)j->pl->kern->count_eq(llmk__tkp_src_at(j->rc, a), j->rc->dt,
                                                (size_t)(b - a), j->key);
}

static void gather_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  const scratch *ps = part_scratch(j, part);
  j->i64[part] = (int64_t)j->pl->kern->gather(llmk__tkp_src_at(j->rc, a), j->rc->dt,
                                              (size_t)(b - a), j->key, UINT32_MAX,
                                              (uint32_t)a, ps->sk, ps->cidx, CAND_CAP);
}

static void max_key_part(void *arg, int part, int64_t a, int64_t b) {
  step_job *j = arg;
  j->u32[part] = j->pl->kern->max_key(llmk__tkp_src_at(j->rc, a), j->rc->dt,
                                      (size_t)(b - a), &j->f32[part]);
}

/* Row r of v into s->row / s->keys; returns the largest key. */
uint32_t llmk__tkp_team_load(const tkp_plan *pl, const team *tm, const scratch *s,
                             const llmk__view *v, int64_t r) {
  step_job j = {
      .pl = pl, .ps = tm ? tm->ps : s, .v = v, .r = r, .row = s->row, .keys = s->keys};
  llmk__tkp_team_run(tm, pl->V, load_part, &j);
  uint32_t m = 0;
  for (int p = 0; p < llmk__tkp_team_parts(tm); p++) m = j.u32[p] > m ? j.u32[p] : m;
  return m;
}

void llmk__tkp_need_keys(const tkp_plan *pl, const team *tm, const scratch *s,
                         rowctx *rc) {
  if (rc->have_keys) return;
  rc->max_key = llmk__tkp_team_load(pl, tm, s, rc->v, rc->r);
  rc->have_keys = rc->have_max = true;
}

uint32_t llmk__tkp_row_max_key(const tkp_plan *pl, const team *tm, const scratch *s,
                               rowctx *rc) {
  if (!rc->have_max) {
    step_job j = {.pl = pl, .ps = tm ? tm->ps : s, .rc = rc};
    llmk__tkp_team_run(tm, pl->V, max_key_part, &j);
    rc->max_key = 0;
    rc->min = INFINITY;
    for (int p = 0; p < llmk__tkp_team_parts(tm); p++) {
      rc->max_key = j.u32[p] > rc->max_key ? j.u32[p] : rc->max_key;
      rc->min = j.f32[p] < rc->min ? j.f32[p] : rc->min;
    }
    rc->have_max = rc->have_min = true;
  }
  return rc->max_key;
}

int64_t llmk__tkp_team_count_eq(const tkp_plan *pl, const team *tm, const scratch *s,
                                const rowctx *rc, uint32_t key) {
  step_job j = {.pl = pl, .ps = tm ? tm->ps : s, .rc = rc, .key = key};
  llmk__tkp_team_run(tm, pl->V, count_eq_part, &j);
  int64_t c = 0;
  for (int p = 0; p < llmk__tkp_team_parts(tm); p++) c += j.i64[p];
  return c;
}

/* The per-part gathers of a team (keys in ps[p].sk, indices in ps[p].cidx) one after the
 * other into okey / oidx, given their counts; returns their total (nothing is copied when
 * it is over cap). oidx may be ps[0].cidx. */
int64_t llmk__tkp_join_parts(const team *tm, const int64_t *ng, uint32_t *okey,
                             uint32_t *oidx, int64_t cap) {
  int64_t total = 0;
  for (int p = 0; p < llmk__tkp_team_parts(tm); p++) total += ng[p];
  if (!tm || total > cap) return total;
  int64_t off = 0;
  for (int p = 0; p < tm->parts; p++) {
    memmove(oidx + off, tm->ps[p].cidx, (size_t)ng[p] * 4);
    memcpy(okey + off, tm->ps[p].sk, (size_t)ng[p] * 4);
    off += ng[p];
  }
  return total;
}

/* The keys >= t of the row, in order, into okey and their indices into oidx (up to cap);
 * returns how many there are. okey is not s->sk (the parts' temporaries). */
int64_t llmk__tkp_team_gather_ge(const tkp_plan *pl, const team *tm, const rowctx *rc,
                                 uint32_t t, uint32_t *okey, uint32_t *oidx,
                                 int64_t cap) {
  if (llmk__tkp_team_parts(tm) <= 1)
    return (int64_t)pl->kern->gather(rc->src, rc->dt, (size_t)pl->V, t, UINT32_MAX, 0,
                                     okey, oidx, (size_t)cap);
  step_job j = {.pl = pl, .ps = tm->ps, .rc = rc, .key = t};
  llmk__tkp_team_run(tm, pl->V, gather_part, &j);
  return llmk__tkp_join_parts(tm, j.i64, okey, oidx, cap);
}
