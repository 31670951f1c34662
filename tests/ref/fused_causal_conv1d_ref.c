/* SPDX-License-Identifier: Apache-2.0 */
#include "fused_causal_conv1d_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_ref.h"
#include "ref_util.h"

int fcc_ref_dtype_size(fcc_ref_dtype dt) {
  return dt == FCC_REF_F32 ? 4 : 2;
}

float fcc_ref_widen(fcc_ref_dtype dt, uint32_t bits) {
  if (dt == FCC_REF_F32) {
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  /* every f16 / bf16 value is exact in f32 */
  return (float)ref_decode(dt == FCC_REF_F16 ? REF_F16 : REF_BF16, bits);
}

uint32_t fcc_ref_narrow(fcc_ref_dtype dt, float f) {
  if (dt == FCC_REF_F32) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  return ref_encode(dt == FCC_REF_F16 ? REF_F16 : REF_BF16, f);
}

uint32_t fcc_ref_load(const void *base, int64_t elem, fcc_ref_dtype dt) {
  return (uint32_t)ref_load_bits(base, elem, (size_t)fcc_ref_dtype_size(dt));
}

void fcc_ref_store(void *base, int64_t elem, fcc_ref_dtype dt, uint32_t bits) {
  ref_store_bits(base, elem, (size_t)fcc_ref_dtype_size(dt), bits);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "fused_causal_conv1d_ref: out of memory\n");
    exit(2);
  }
  return p;
}

static int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}
static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* Non-negative remainder. */
static int64_t pmod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

/* Sequence b: first logical token and length. */
static void seq_of(const fcc_ref_args *a, int64_t b, int64_t *start, int64_t *len) {
  if (a->seq_len_3d > 0) {
    *start = b * a->seq_len_3d;
    *len = a->seq_len_3d;
  } else {
    *start = a->query_start_loc[b];
    *len = a->query_start_loc[b + 1] - a->query_start_loc[b];
  }
}

/* Element offset of logical token t, channel 0. */
static int64_t x_off(const fcc_ref_args *a, int64_t t) {
  if (a->seq_len_3d > 0)
    return (t / a->seq_len_3d) * a->x_stride_b + (t % a->seq_len_3d) * a->x_stride_t;
  return t * a->x_stride_t;
}

static int64_t cs_off(const fcc_ref_args *a, int64_t line, int64_t row) {
  return line * a->cs_stride_line + row * a->cs_stride_row;
}

static int is_apc(const fcc_ref_args *a) {
  return a->block_idx_first != NULL;
}

/* Lines of sequence b (indices already validated where needed). */
static void lines_of(const fcc_ref_args *a, int64_t b, int64_t *R, int64_t *W) {
  if (is_apc(a)) {
    const int64_t *row = a->cache_indices + b * a->max_blocks;
    *R = row[a->initial_state_idx[b]];
    *W = row[a->block_idx_last[b]];
  } else {
    *R = *W = a->cache_indices ? a->cache_indices[b] : b;
  }
}

/* Step 5 boundary of fill c (of n). */
static int64_t fill_bdy(int64_t L, int64_t B, int64_t nct, int64_t n, int64_t c) {
  int64_t seo = pmod(L - (B - pmod(nct, B)), B);
  int64_t last_full = L - seo - (seo == 0 ? B : 0);
  return last_full - (n - 1 - c) * B;
}

static int line_ok(const fcc_ref_args *a, int64_t line) {
  return line == a->pad_slot_id || (line >= 0 && line < a->num_lines);
}

static int validate(const fcc_ref_args *a, int64_t *bad) {
  const int64_t B = a->batch;
  *bad = -1;
  if (a->seq_len_3d == 0) {
    const int64_t *q = a->query_start_loc;
    if (q[0] != 0) {
      *bad = 0;
      return FCC_REF_E_QSL_START;
    }
    for (int64_t b = 0; b < B; b++)
      if (q[b + 1] <= q[b]) {
        *bad = b + 1;
        return FCC_REF_E_QSL_ORDER;
      }
    if (q[B] != a->num_tokens) {
      *bad = B;
      return FCC_REF_E_QSL_END;
    }
  }
  for (int64_t b = 0; b < B; b++) {
    int64_t start, L;
    seq_of(a, b, &start, &L);
    *bad = b;
    if (a->max_query_len != -1 && L > a->max_query_len) return FCC_REF_E_MAX_QUERY_LEN;
    if (a->num_computed_tokens && a->num_computed_tokens[b] < 0) return FCC_REF_E_NCT;
    if (is_apc(a)) {
      int64_t f = a->block_idx_first[b], l = a->block_idx_last[b],
              i = a->initial_state_idx[b];
      if (f < 0 || f >= a->max_blocks || l < 0 || l >= a->max_blocks || i < 0 ||
          i >= a->max_blocks)
        return FCC_REF_E_BLOCK_IDX;
      if (i > l) return FCC_REF_E_INIT_GT_LAST;
      if (f > l) return FCC_REF_E_FIRST_GT_LAST;
    }
    int64_t R, W;
    lines_of(a, b, &R, &W);
    if (!line_ok(a, R) || !line_ok(a, W)) return FCC_REF_E_LINE;
    if (is_apc(a)) {
      const int64_t *row = a->cache_indices + b * a->max_blocks;
      int64_t f = a->block_idx_first[b], n = a->block_idx_last[b] - f;
      for (int64_t c = 0; c < n; c++) {
        if (!line_ok(a, row[f + c])) return FCC_REF_E_LINE;
        if (fill_bdy(L, a->block_size, a->num_computed_tokens[b], n, c) < 0)
          return FCC_REF_E_BDY;
      }
    }
    if (a->num_accepted_tokens && a->num_accepted_tokens[b] > a->C - a->K + 2)
      return FCC_REF_E_NACC;
  }
  /* writers[line] = sequence that writes it (-1 none); skipped sequences write and
   * read nothing; lines equal to pad_slot_id are never written. */
  int64_t *writer = xmalloc((size_t)max64(a->num_lines, 1) * sizeof *writer);
  for (int64_t i = 0; i < a->num_lines; i++) writer[i] = -1;
  int err = 0;
  for (int64_t b = 0; b < B && !err; b++) {
    int64_t R, W;
    lines_of(a, b, &R, &W);
    if (R == a->pad_slot_id) continue;
    int64_t nw = 0;
    int64_t n = is_apc(a) ? a->block_idx_last[b] - a->block_idx_first[b] : 0;
    int64_t *wl = xmalloc((size_t)(n + 1) * sizeof *wl);
    if (W != a->pad_slot_id) wl[nw++] = W;
    for (int64_t c = 0; c < n; c++) {
      int64_t F = a->cache_indices[b * a->max_blocks + a->block_idx_first[b] + c];
      if (F != a->pad_slot_id) wl[nw++] = F;
    }
    for (int64_t k = 0; k < nw && !err; k++) {
      if (writer[wl[k]] != -1) {
        *bad = b;
        err = FCC_REF_E_DUP_WRITE;
      }
      writer[wl[k]] = b;
    }
    free(wl);
  }
  for (int64_t b = 0; b < B && !err; b++) {
    int64_t R, W;
    lines_of(a, b, &R, &W);
    if (R == a->pad_slot_id) continue;
    if (writer[R] != -1 && writer[R] != b) {
      *bad = b;
      err = FCC_REF_E_READ_WRITTEN;
    }
  }
  free(writer);
  if (!err) *bad = -1;
  return err;
}

int fcc_ref_run(const fcc_ref_args *a) {
  int64_t bad;
  int err = validate(a, &bad);
  if (a->bad_batch) *a->bad_batch = bad;
  if (err) return err;

  const fcc_ref_dtype xd = a->x_dtype;
  const int es = fcc_ref_dtype_size(xd);
  const int64_t dim = a->dim, K = a->K, C = a->C;
  const int64_t total = a->seq_len_3d > 0 ? a->batch * a->seq_len_3d : a->num_tokens;

  /* Snapshots: all reads below see the values from before the call. */
  size_t x_span = 0, cs_span = 0;
  if (total > 0 && dim > 0) x_span = (size_t)(x_off(a, total - 1) + dim) * (size_t)es;
  if (a->num_lines > 0 && C > 0 && dim > 0)
    cs_span = (size_t)(cs_off(a, a->num_lines - 1, C - 1) + dim) * (size_t)es;
  void *x0 = xmalloc(x_span), *cs0 = xmalloc(cs_span);
  memcpy(x0, a->x, x_span);
  memcpy(cs0, a->conv_states, cs_span);

  float *w = xmalloc((size_t)(K * dim) * sizeof *w);
  for (int64_t k = 0; k < K; k++)
    for (int64_t d = 0; d < dim; d++)
      w[k * dim + d] = fcc_ref_widen(
          a->weight_dtype,
          fcc_ref_load(a->weight, k * a->weight_stride + d, a->weight_dtype));
  float *bias = NULL;
  if (a->bias) {
    bias = xmalloc((size_t)dim * sizeof *bias);
    for (int64_t d = 0; d < dim; d++)
      bias[d] = fcc_ref_widen(a->bias_dtype, fcc_ref_load(a->bias, d, a->bias_dtype));
  }

  for (int64_t b = 0; b < a->batch; b++) {
    int64_t start, L, R, W;
    seq_of(a, b, &start, &L);
    lines_of(a, b, &R, &W);
    /* 1. skip */
    if (a->skipped) a->skipped[b] = R == a->pad_slot_id;
    if (R == a->pad_slot_id) continue;

    /* 2. history */
    int64_t offset, H;
    int zero_hist = 0;
    if (a->num_computed_tokens && a->num_computed_tokens[b] == 0) {
      zero_hist = 1;
      offset = 0;
      H = K - 1;
    } else if (a->num_accepted_tokens) {
      offset = max64(a->num_accepted_tokens[b] - 1, 0);
      H = offset + K - 1;
    } else {
      offset = C - (K - 1);
      H = C;
    }

    /* 3. padded = history ++ x_b, raw bits */
    const int64_t Len = H + L;
    uint32_t *padded = xmalloc((size_t)(Len * dim) * sizeof *padded);
    for (int64_t r = 0; r < H; r++)
      for (int64_t d = 0; d < dim; d++)
        padded[r * dim + d] = zero_hist ? 0u : fcc_ref_load(cs0, cs_off(a, R, r) + d, xd);
    for (int64_t i = 0; i < L; i++)
      for (int64_t d = 0; d < dim; d++)
        padded[(H + i) * dim + d] = fcc_ref_load(x0, x_off(a, start + i) + d, xd);
    const uint32_t *xp = padded + offset * dim; /* K-1+L rows */

    /* 4. state update, tail-aligned */
    if (W != a->pad_slot_id) {
      int64_t M = min64(C, Len);
      for (int64_t i = 0; i < M; i++)
        for (int64_t d = 0; d < dim; d++)
          fcc_ref_store(a->conv_states, cs_off(a, W, C - M + i) + d, xd,
                        padded[(Len - M + i) * dim + d]);
    }

    /* 5. APC block fill */
    if (is_apc(a)) {
      const int64_t *row = a->cache_indices + b * a->max_blocks;
      int64_t f = a->block_idx_first[b], n = a->block_idx_last[b] - f;
      for (int64_t c = 0; c < n; c++) {
        int64_t F = row[f + c];
        if (F == a->pad_slot_id) continue;
        int64_t bdy = fill_bdy(L, a->block_size, a->num_computed_tokens[b], n, c);
        for (int64_t j = 0; j < K - 1; j++)
          for (int64_t d = 0; d < dim; d++)
            fcc_ref_store(a->conv_states, cs_off(a, F, C - (K - 1) + j) + d, xd,
                          xp[(bdy + j) * dim + d]);
      }
    }

    /* 6-9. outputs */
    int64_t r0 = 0;
    if (a->conv_mode == 1) r0 = min64(max64(K - 1 - a->num_computed_tokens[b], 0), L);
    for (int64_t i = 0; i < L; i++) {
      for (int64_t d = 0; d < dim; d++) {
        float acc = w[d] * fcc_ref_widen(xd, xp[i * dim + d]);
        for (int64_t k = 1; k < K; k++) {
          float p = w[k * dim + d] * fcc_ref_widen(xd, xp[(i + k) * dim + d]);
          acc = acc + p;
        }
        if (bias) acc = acc + bias[d];
        if (a->silu) {
          float den = 1.0f + expf(-acc);
          acc = acc / den;
        }
        if (i < r0) acc = 0.0f;
        if (a->y_act) a->y_act[(start + i) * dim + d] = acc;
        if (a->residual_connection == 1) {
          float xv = fcc_ref_widen(xd, padded[(H + i) * dim + d]);
          acc = xv + acc;
        }
        if (a->y_final) a->y_final[(start + i) * dim + d] = acc;
        fcc_ref_store(a->x, x_off(a, start + i) + d, xd, fcc_ref_narrow(xd, acc));
      }
    }
    free(padded);
  }
  free(w);
  free(bias);
  free(x0);
  free(cs0);
  return 0;
}
