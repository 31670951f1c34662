/* SPDX-License-Identifier: Apache-2.0 */
/* AVX-512 advance_step, plain mode: 8 rows per step in 64-bit lanes, block ids
 * fetched with masked gathers. It takes contiguous 1-D tensors and block sizes below
 * 2^31; for other layouts, for speculative mode, and for any 8-row chunk in which a
 * lane is out of its fast range (or invalid) it hands over to the scalar rows, which
 * give the same results and the precise error message. */
#include <immintrin.h>

#include "core/internal.h"
#include "dispatch/dispatch.h"
#include "kernels/advance_step/advance_step.h"

static bool contiguous(const llmk__view *v, int64_t n) {
  return v->s0 == 1 || n <= 1;
}

static bool takes(const llmk__advance_step_args *a) {
  int64_t n = a->num_queries;
  return !a->speculative && !a->flat && a->block_size < INT32_MAX &&
         contiguous(&a->seq_lens, n) && contiguous(&a->sampled, n) &&
         contiguous(&a->input_tokens, n) && contiguous(&a->input_positions, n) &&
         contiguous(&a->slot_mapping, n);
}

static inline __mmask8 lanes(int64_t left) {
  return left >= 8 ? (__mmask8)0xff : (__mmask8)((1u << left) - 1);
}

/* Masked memory access only for the last, partial chunk: on some cores masked stores
 * are much slower than plain ones. */
static inline __m512i load8(const llmk__view *v, int64_t i, __mmask8 m) {
  if (v->is64) {
    const int64_t *p = (const int64_t *)(const void *)v->data + i;
    return m == 0xff ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi64(m, p);
  }
  const int32_t *p = (const int32_t *)(const void *)v->data + i;
  return _mm512_cvtepi32_epi64(m == 0xff
                                   ? _mm256_loadu_si256((const __m256i *)(const void *)p)
                                   : _mm256_maskz_loadu_epi32(m, p));
}

static inline void store8(const llmk__view *v, int64_t i, __mmask8 m, __m512i x) {
  if (v->is64) {
    int64_t *p = (int64_t *)(void *)v->data + i;
    if (m == 0xff)
      _mm512_storeu_si512(p, x);
    else
      _mm512_mask_storeu_epi64(p, m, x);
  } else {
    int32_t *p = (int32_t *)(void *)v->data + i;
    if (m == 0xff)
      _mm256_storeu_si256((__m256i *)(void *)p, _mm512_cvtepi64_epi32(x));
    else
      _mm256_mask_storeu_epi32(p, m, _mm512_cvtepi64_epi32(x));
  }
}

typedef struct chunk {
  __m512i pos, b, blk;
  __mmask8 ok; /* lanes in the fast range and valid */
} chunk;

/* pos = seq_lens, b = pos / block_size, blk = block_tables[q][b] for rows q..q+7. */
static inline chunk load_chunk(const llmk__advance_step_args *a, int64_t q, __mmask8 m) {
  chunk c;
  c.pos = load8(&a->seq_lens, q, m);
  __mmask8 ok = m & _mm512_cmpge_epi64_mask(c.pos, _mm512_setzero_si512()) &
                _mm512_cmple_epi64_mask(c.pos, _mm512_set1_epi64(INT32_MAX - 1));
  if (a->div.pow2) {
    c.b = _mm512_srlv_epi64(c.pos, _mm512_set1_epi64(a->div.shift));
  } else {
    /* exact: pos < 2^31 in every lane that counts */
    __m512d quo =
        _mm512_div_pd(_mm512_cvtepi64_pd(c.pos), _mm512_set1_pd((double)a->block_size));
    c.b = _mm512_cvttpd_epi64(
        _mm512_roundscale_pd(quo, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
  }
  ok &= _mm512_cmplt_epi64_mask(c.b, _mm512_set1_epi64(a->max_blocks));
  const llmk__view *t = &a->block_tables;
  __m512i rows =
      _mm512_add_epi64(_mm512_set1_epi64(q), _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
  __m512i idx = _mm512_add_epi64(
      _mm512_mullo_epi64(rows, _mm512_set1_epi64(t->s0)),
      t->s1 == 1 ? c.b : _mm512_mullo_epi64(c.b, _mm512_set1_epi64(t->s1)));
  if (t->is64) {
    c.blk = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), ok, idx, t->data, 8);
    ok &= _mm512_cmple_epi64_mask(c.blk, _mm512_set1_epi64(INT32_MAX));
  } else {
    c.blk = _mm512_cvtepi32_epi64(
        _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), ok, idx, t->data, 4));
  }
  ok &= _mm512_cmpge_epi64_mask(c.blk, _mm512_setzero_si512());
  c.ok = ok;
  return c;
}

/* slot = blk * bs + (pos - b * bs); below 2^62 in the fast range */
static inline __m512i slot_of(const llmk__advance_step_args *a, const chunk *c) {
  __m512i bs = _mm512_set1_epi64(a->block_size);
  return _mm512_add_epi64(_mm512_mullo_epi64(_mm512_sub_epi64(c->blk, c->b), bs), c->pos);
}

/* Checks rows [q0, q1) (at most CHUNK_ROWS) and keeps their slots in `slots`, so that
 * the write pass needs no second gather. Lanes outside the fast range are checked
 * by the scalar rows and marked in `slow`. */
enum { CHUNK_ROWS = 1024 };

static llmk_status check_chunk(const llmk__advance_step_args *a, int64_t q0, int64_t q1,
                               int64_t *slots, __mmask8 *slow) {
  bool narrow_tokens = !a->input_tokens.is64 && a->sampled.is64;
  for (int64_t q = q0; q < q1; q += 8) {
    __mmask8 m = lanes(q1 - q);
    chunk c = load_chunk(a, q, m);
    __mmask8 ok = c.ok;
    __m512i slot = slot_of(a, &c);
    if (!a->slot_mapping.is64)
      ok &= _mm512_cmple_epi64_mask(slot, _mm512_set1_epi64(INT32_MAX));
    if (narrow_tokens) {
      __m512i tok = load8(&a->sampled, q, m);
      ok &= _mm512_cmple_epi64_mask(tok, _mm512_set1_epi64(INT32_MAX)) &
            _mm512_cmpge_epi64_mask(tok, _mm512_set1_epi64(INT32_MIN));
    }
    _mm512_storeu_si512(slots + (q - q0), slot);
    slow[(q - q0) / 8] = (__mmask8)(ok != m);
    if (LLMK__UNLIKELY(ok != m)) {
      llmk_status st = llmk__advance_step_check_rows(a, q, q + (q1 - q < 8 ? q1 - q : 8));
      if (st != LLMK_SUCCESS) return st;
    }
  }
  return LLMK_SUCCESS;
}

static void write_chunk(const llmk__advance_step_args *a, int64_t q0, int64_t q1,
                        const int64_t *slots, const __mmask8 *slow) {
  for (int64_t q = q0; q < q1; q += 8) {
    __mmask8 m = lanes(q1 - q);
    if (LLMK__UNLIKELY(slow[(q - q0) / 8])) {
      llmk__advance_step_run_rows(a, q, q + (q1 - q < 8 ? q1 - q : 8));
      continue;
    }
    __m512i pos = load8(&a->seq_lens, q, m);
    store8(&a->input_tokens, q, m, load8(&a->sampled, q, m));
    store8(&a->input_positions, q, m, pos);
    store8(&a->seq_lens, q, m, _mm512_add_epi64(pos, _mm512_set1_epi64(1)));
    store8(&a->slot_mapping, q, m, _mm512_loadu_si512(slots + (q - q0)));
  }
}

static llmk_status execute_avx512(const llmk__advance_step_args *a) {
  if (!takes(a)) return llmk__advance_step_kernels_scalar.execute(a);
  int64_t n = a->num_queries;
  int64_t slots[CHUNK_ROWS];
  __mmask8 slow[CHUNK_ROWS / 8];
  if (n <= CHUNK_ROWS) { /* one gather per row */
    llmk_status st = check_chunk(a, 0, n, slots, slow);
    if (st != LLMK_SUCCESS) return st;
    write_chunk(a, 0, n, slots, slow);
  } else { /* check everything first, then gather again while writing */
    for (int64_t q = 0; q < n; q += CHUNK_ROWS) {
      llmk_status st =
          check_chunk(a, q, q + (n - q < CHUNK_ROWS ? n - q : CHUNK_ROWS), slots, slow);
      if (st != LLMK_SUCCESS) return st;
    }
    for (int64_t q = 0; q < n; q += CHUNK_ROWS) {
      int64_t q1 = q + (n - q < CHUNK_ROWS ? n - q : CHUNK_ROWS);
      check_chunk(a, q, q1, slots, slow); /* valid: only recomputes slots */
      write_chunk(a, q, q1, slots, slow);
    }
  }
  llmk__advance_step_pad(a);
  return LLMK_SUCCESS;
}

const llmk__advance_step_kernels llmk__advance_step_kernels_avx512 = {
    .isa = LLMK_ISA_AVX512,
    .execute = execute_avx512,
};
