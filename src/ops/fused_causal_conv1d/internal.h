/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of fused_causal_conv1d share: the plan and the per-sequence facts that
 * phase 2's value checks (values.c) hand to the run (run.c). */
#ifndef LLMK_OPS_FUSED_CAUSAL_CONV1D_H
#define LLMK_OPS_FUSED_CAUSAL_CONV1D_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "core/view.h"
#include "dispatch/dispatch.h"
#include "kernels/convert/convert.h"
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"
#include "llmk/causal_conv1d.h"

extern const char llmk__fcc_op[];

/* Cost-weighted bytes below which the call stays on one thread: a decode step of one
 * sequence of 8192 channels (cost 9: 147 KiB, ~10 us of work) ran 1.1-2x slower split
 * over 2 threads than on one (waking and feeding the second costs more than it saves). */
#define PARALLEL_MIN (256 * 1024)
/* the most a sequence's cost and the costs' sum count (run.c multiplies the sum by
 * at most 257 channel blocks, and by dim * esz with a check) */
#define FCC_COST_MAX (INT64_MAX / 512)

typedef struct seq_info {
  int64_t base;   /* element offset of token 0 in x */
  int64_t ybase;  /* and in y */
  int64_t L;      /* tokens */
  int64_t R, W;   /* lines read and written; W < 0: not written */
  int64_t offset; /* history offset (step 2) */
  int64_t hn;     /* history rows: offset + K-1 */
  int64_t first, nfill, last_full;
  int64_t reset; /* conv_mode 1: rows [0, reset) are zeroed */
  int64_t cost;
  int64_t nw;   /* HEAD: rows [0, nw) of W written */
  int64_t ring; /* ring: cache_seqlens[b] mod C */
  bool skip, zero_hist;
} seq_info;

typedef struct conv_plan {
  llmk_dtype dt, wdt, bdt;
  size_t esz;
  int K;
  int64_t dim, C, lines, batch, T, S; /* S: tokens per sequence of a 3-D x, else 0 */
  bool x3;                            /* x is 3-D ([batch, S, dim]; S may be 0) */
  bool noop; /* no token or no channel (batch, S or dim 0): nothing to check or write */
  char *x;
  int64_t xs0, xs1;
  char *y; /* the output: x itself when in place */
  int64_t ys0, ys1;
  char *cs;
  int64_t cs0, cs1;
  const char *w, *bias;
  int64_t ws0, bs0;
  llmk__view qsl, ci, nacc, nct, first, last, init;
  bool has_ci, has_nacc, has_nct, apc;
  int64_t max_blocks, pad, max_query_len, block_size;
  int conv_mode;
  /* the v2 entry: HEAD alignment, a ring, has_initial_state, channel strides; general:
   * run by run_general (any layout) instead of the channel-contiguous TAIL run */
  bool head, ring, has_his, general;
  llmk__view his, csl;
  int64_t xsd, ysd, csd, wsd; /* channel strides (1 outside v2) */
  unsigned flags;
  int max_parts;
  size_t off_w, off_b, off_seq, off_prefix, off_scratch, scratch_bytes, ws_size;
  const llmk__conv1d_kernels *kern;
  const llmk__convert_kernels *cvt;
} conv_plan;

static inline size_t align64(size_t n) {
  return (n + 63) & ~(size_t)63;
}

/* The cache line of sequence b's c-th APC fill block. */
static inline int64_t fill_line(const conv_plan *p, const seq_info *s, int64_t b,
                                int64_t c) {
  return llmk__view_get(&p->ci, b, s->first + c);
}

/* Every value rule, in batch order, before anything is written; fills si and prefix
 * (the cumulative cost of the sequences) and marks the written lines. */
llmk_status llmk__fcc_check_values(const conv_plan *p, uint8_t *written, seq_info *si,
                                   int64_t *prefix);

/* The run of a general plan (run_general.c). */
void llmk__fcc_run_general(const conv_plan *p, const seq_info *si, const float *w,
                           int64_t wstride, const float *bias, char *scratch,
                           llmk_context *ctx);

#endif
