/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p's own shared declarations: the plan, the scratch of a worker, the
 * team, the state of a row and its decisions, and the functions of the op's files:
 *   apply_top_k_top_p.c  entry points, plan (phase 1), value checks, phase 2 dispatch
 *   team.c               one row split over threads, and the row steps run over it
 *   top_k.c              top-k selection (radix, heap, pivot)
 *   top_p.c              the top-p boundary algorithms
 *   row.c                one row: decisions, writes, the top-p window and tie group
 *   pipeline.c           the rows of a worker, whole-row top-p rows in a pipeline
 *   sample.c             sample_top_k_top_p
 *   with_sorted.c        apply_top_k_top_p_with_sorted
 * What the kernels need (keys, masses, bins, the kernel table) is in the kernel header.
 * Every function here is prefixed llmk__tkp_ and hidden from the shared library. */
#ifndef LLMK_OPS_TKP_INTERNAL_H
#define LLMK_OPS_TKP_INTERNAL_H

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/internal.h"
#include "core/view.h"
#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/common/exp.h"
#include "kernels/convert/convert.h"

enum { MODE_FILTER, MODE_SORTED, MODE_SAMPLE, MODE_SAMPLE_EX };

typedef struct tkp_plan {
  const char *op;
  int mode;
  int64_t B, V;
  llmk__view logits, out, p, k, min_p, kept, temperature, seed, offset, ids, sv, si;
  int workers;
  size_t worker_bytes;
  bool stream; /* outputs larger than the caches: written around them */
  const llmk__tkp_kernels *kern;
  const llmk__convert_kernels *cvt; /* widening of f16 / bf16 rows */
  /* MODE_SAMPLE_EX (sample_ex.c) */
  llmk__view q, filtered;
  float eps, fill;
  int64_t k_max;
  bool q_by_rank, resoftmax;
  /* ... with CANN V2's rules (sample_top_k_top_p_ex2): min_p, kept_values / kept_index */
  bool v2, input_is_logits;
  llmk__view kvals, kidx;
} tkp_plan;

/* ---------------------------------------------------------------- scratch */

enum { HBITS = 11, HBINS = 1 << HBITS, CHUNK = 1024, CAND_CAP = 8192 };
/* mlo and mhi, one after the other; also the 4 tables of mass_bins */
#define MB_TABLE_BYTES (4 * LLMK__TKP_MB_STRIDE * 8)
#define MLO_BYTES \
  (MB_TABLE_BYTES > 2 * (HBINS + 1) * 8 ? MB_TABLE_BYTES : 2 * (HBINS + 1) * 8)
_Static_assert(HBINS == LLMK__TKP_BINS, "one bin count");
_Static_assert((HBINS + 1) * 16 <= CAND_CAP * 8, "a u128 histogram fits in cmass");

typedef struct scratch {
  float *row;          /* [V] */
  uint32_t *keys;      /* [V]: llmk__key_of(row[j]) */
  uint16_t *rowbins;   /* [V]: value bins of the top-p search */
  uint64_t *mass;      /* [CHUNK] */
  uint16_t *bins;      /* [CHUNK] */
  uint32_t *count;     /* [HBINS] */
  uint64_t *mlo, *mhi; /* [HBINS] each */
  uint32_t *ckey;      /* [CAND_CAP] */
  uint32_t *cidx;      /* [CAND_CAP]: indices of gathered entries */
  uint64_t *cmass;     /* [CAND_CAP]: also the second histogram of mass_hist_part */
  float *sx, *bx;      /* [CAND_CAP]: survivors of top-k; top-p boundary candidates */
  uint32_t *sk, *bk;   /* [CAND_CAP]: their keys */
  uint8_t *seen;       /* [V] (with_sorted: index check) */
} scratch;

__extension__ typedef unsigned __int128 u128;

/* ------------------------------------------------------------------ teams */

/* One row split over threads: `parts` contiguous ranges, each with its own scratch for
 * partial histograms and gathers; ps[0] also holds the row. Partial results are integers
 * (counts, fixed-point masses) or ordered gathers, merged in part order, so a row gives
 * the same result split or not. */
typedef struct team {
  llmk_context *ctx;
  int parts;
  const scratch *ps;
} team;

typedef llmk__part_fn part_fn; /* the core parallel API's: part index, its range */

static inline int llmk__tkp_team_parts(const team *tm) {
  return tm ? tm->parts : 1;
}

/* fn over [0, n) split into the team's parts (team.c, 2 parts or more) */
void llmk__tkp_team_split(const team *tm, int64_t n, part_fn fn, void *arg);

/* fn over [0, n) split into the team's parts (one part, [0, n), without a team; inline,
 * so that the call of a known fn on one part may be inlined as in a single file) */
static inline void llmk__tkp_team_run(const team *tm, int64_t n, part_fn fn, void *arg) {
  if (llmk__tkp_team_parts(tm) <= 1) {
    fn(arg, 0, 0, n);
    return;
  }
  llmk__tkp_team_split(tm, n, fn, arg);
}

enum { MAX_PARTS = LLMK__MAX_TASKS };
/* rows at least this long are split over threads when there are fewer rows than threads
 */
#define SPLIT_MIN_V 16384
/* the same with top-k, whose pivot decides a row of 151936 entries in about 15 us on one
 * thread: a team's handoffs cost more than the half it saves. A variable, so that the
 * op test can split shorter rows and check the team's results. */
extern int64_t llmk__tkp_split_min_v_k; /* 1 << 18 */
/* rows of at most this many entries: top-k by the heap, top-p by sorting the row */
#define SHORT_V 2048

/* ------------------------------------------------------------------- rows */

/* A row as the whole-row kernels read it: contiguous values of dtype dt (the logits'
 * row where it is, or its f32 copy in s->row). The f32 row and keys in s->row / s->keys
 * are made only for the steps that need them (llmk__tkp_need_keys); the largest key is
 * found when first needed (llmk__tkp_row_max_key), or comes from the top-k candidates. */
typedef struct rowctx {
  const void *src;
  llmk_dtype dt;
  size_t esz;
  const llmk__view *v; /* the row r of v, for llmk__tkp_need_keys */
  int64_t r;
  bool have_keys, have_max, have_min;
  uint32_t max_key;
  float min; /* the smallest value (have_min) */
} rowctx;

static inline const void *llmk__tkp_src_at(const rowctx *rc, int64_t i) {
  return (const char *)rc->src + (size_t)i * rc->esz;
}

/* The arguments and per-part results of a row step over a team. */
typedef struct step_job {
  const tkp_plan *pl;
  const scratch *ps; /* per-part scratch: ps[part] (ps[0] when there is no team) */
  const llmk__view *v;
  int64_t r;
  float *row;
  uint32_t *keys;
  uint32_t key;
  float t; /* temperature */
  const struct rowctx *rc;
  uint32_t u32[MAX_PARTS];
  int64_t i64[MAX_PARTS];
  float f32[MAX_PARTS];
} step_job;

/* ------------------------------------------------------------- decisions */

/* Level l of the radix: the digit of a key, and the shift/mask that picks it. */
static const int llmk__tkp_level_shift[3] __attribute__((unused)) = {21, 10, 0};
static const uint32_t llmk__tkp_level_mask[3]
    __attribute__((unused)) = {0x7ff, 0x7ff, 0x3ff};
static inline uint32_t llmk__tkp_prefix_mask(int l) {
  return l == 0 ? 0 : ~((1u << (llmk__tkp_level_shift[l - 1])) - 1);
}

/* The top-p boundary: the key v and count c such that the entries below v and the c
 * lowest-index entries equal to v are exactly those with cumulative mass <= target, in
 * ascending order over the survivors (key >= min_key). Mass of an entry: mass_of(e). */
typedef struct boundary {
  uint32_t key;
  int64_t masked_in_group;
} boundary;

typedef struct row_result {
  uint32_t t_key; /* top-k threshold key (0: none) */
  bool have_p;
  boundary pb; /* top-p boundary */
  float min_e; /* min-p: keep e >= min_e (0: none) */
  /* filter_one's form of min_e: keep keys >= m_key (0: none); e is monotone in the key */
  uint32_t m_key;
  float max;
  int64_t tie_cut; /* entries equal to pb.key with an index below this are masked */
  /* whole-row top-p still to be resolved among the entries with win_lo <= key <= win_hi
   * (llmk__tkp_resolve_window), below being the mass of the smaller survivors */
  bool pending;
  uint32_t win_lo, win_hi;
  u128 below, target;
  /* >= 0: s->ckey / s->cidx hold the ncand entries that top-k may keep, in index order */
  int64_t ncand;
} row_result;

static const uint16_t llmk__tkp_neg_inf16[2]
    __attribute__((unused)) = {0xfc00, 0xff80}; /* f16, bf16 */

static inline void llmk__tkp_store_neg_inf(char *e, llmk_dtype dt) {
  if (dt == LLMK_F32) {
    float f = -INFINITY;
    memcpy(e, &f, 4);
  } else {
    memcpy(e, &llmk__tkp_neg_inf16[dt == LLMK_BF16], 2);
  }
}

/* The rows of a run, claimed one at a time by its workers. */
typedef struct tkp_job {
  const tkp_plan *pl;
  char *ws;
  _Atomic int64_t next; /* the next row to claim */
} tkp_job;

/* --------------------------------------------------------------- functions */

/* team.c: the row's f32 copy and keys (team_load,
 * llmk__tkp_need_keys), its largest key, the count of a key, the gather of the keys >= t,
 * and the join of the parts' gathers */
uint32_t llmk__tkp_team_load(const tkp_plan *pl, const team *tm, const scratch *s,
                             const llmk__view *v, int64_t r);
void llmk__tkp_need_keys(const tkp_plan *pl, const team *tm, const scratch *s,
                         rowctx *rc);
uint32_t llmk__tkp_row_max_key(const tkp_plan *pl, const team *tm, const scratch *s,
                               rowctx *rc);
int64_t llmk__tkp_team_count_eq(const tkp_plan *pl, const team *tm, const scratch *s,
                                const rowctx *rc, uint32_t key);
int64_t llmk__tkp_join_parts(const team *tm, const int64_t *ng, uint32_t *okey,
                             uint32_t *oidx, int64_t cap);
int64_t llmk__tkp_team_gather_ge(const tkp_plan *pl, const team *tm, const rowctx *rc,
                                 uint32_t t, uint32_t *okey, uint32_t *oidx, int64_t cap);

/* top_k.c: the k-th largest key (radix over the row, heap over few), and the pivot */
uint32_t llmk__tkp_kth_largest(const scratch *s, int64_t V, int64_t k,
                               const uint32_t *hist0);
uint32_t llmk__tkp_select_kth(const uint32_t *keys, int64_t n, int64_t k, uint32_t *heap);
void llmk__tkp_prefetch_sample(const llmk__view *v, int64_t r, int64_t V);
bool llmk__tkp_pivot_tau(const tkp_plan *pl, const scratch *s, const rowctx *rc,
                         int64_t V, int64_t k, uint32_t *tau);

/* top_p.c: the top-p boundary algorithms, and floor((1 - p) * Z) */
boundary llmk__tkp_top_p_boundary(const tkp_plan *pl, const scratch *s, const float *x,
                                  const uint32_t *keys, int64_t n, float max,
                                  uint32_t min_key, uint32_t max_key, int64_t n_max,
                                  u128 target, u128 below);
u128 llmk__tkp_scaled_target(float thr, u128 Z);
boundary llmk__tkp_top_p_sorted(const tkp_plan *pl, const scratch *s,
                                const uint32_t *keys, int64_t n, float max,
                                uint32_t max_key, u128 target, u128 below, float thr,
                                uint32_t *pa, uint32_t *pb);
boundary llmk__tkp_top_p_search(const tkp_plan *pl, const team *tm, const scratch *s,
                                const float *x, const uint32_t *keys, int64_t n,
                                float max, uint32_t min_key, uint32_t max_key,
                                int64_t n_max, float thr);
void llmk__tkp_bins_to_window(const tkp_plan *pl, const team *tm, const scratch *s,
                              const rowctx *rc, float max, uint32_t min_key,
                              uint32_t max_key, float thr, row_result *r);
bool llmk__tkp_top_p_bins(const tkp_plan *pl, const team *tm, const scratch *s,
                          const rowctx *rc, int64_t V, float max, uint32_t min_key,
                          uint32_t max_key, float thr, row_result *r);

/* row.c: one row's decisions, its writes and masks, its pending top-p window */
void llmk__tkp_find_tie_cut(const tkp_plan *pl, const rowctx *rc, int64_t V,
                            row_result *r);
void llmk__tkp_filter_row(const tkp_plan *pl, const team *tm, const scratch *s,
                          rowctx *rc, int64_t V, bool has_k, int64_t k, bool has_p,
                          float p, bool has_minp, float min_p, int64_t ncand,
                          row_result *r);
int64_t llmk__tkp_mask_listed(const uint32_t *keys, const uint32_t *idx, int64_t n,
                              uint32_t tw, uint32_t thr, uint32_t tie_key,
                              int64_t tie_cut, char *dst, size_t dstep, llmk_dtype dt,
                              int64_t *ties);
int64_t llmk__tkp_gather_window(const tkp_plan *pl, const team *tm, const scratch *s,
                                const rowctx *rc, const row_result *r, uint32_t *widx);
void llmk__tkp_resolve_window(const tkp_plan *pl, const team *tm, const scratch *s,
                              rowctx *rc, row_result *r, const uint32_t *widx, int64_t n);
int64_t llmk__tkp_mask_tie_group(const tkp_plan *pl, const rowctx *rc,
                                 const row_result *r, char *dst, size_t dstep,
                                 llmk_dtype dt);
void llmk__tkp_filter_one(const tkp_plan *pl, const team *tm, const scratch *s0,
                          int64_t r);

/* pipeline.c: the rows a worker claims (MODE_FILTER) */
void llmk__tkp_filter_rows(const tkp_plan *pl, tkp_job *j, const scratch *s);

/* sample.c: one row of sample_top_k_top_p */
void llmk__tkp_sample_one(const tkp_plan *pl, const team *tm, const scratch *s,
                          int64_t r);

/* sample_ex.c: one row of sample_top_k_top_p_ex, on a worker's `bytes` of scratch */
void llmk__tkp_sample_ex_one(const tkp_plan *pl, void *scratch, int64_t r);
void llmk__tkp_sample_ex2_one(const tkp_plan *pl, void *scratch, int64_t r);
size_t llmk__tkp_sample_ex_bytes(int64_t V);

/* with_sorted.c: one row of apply_top_k_top_p_with_sorted */
void llmk__tkp_sorted_one(const tkp_plan *pl, const scratch *s, int64_t r);

#endif
