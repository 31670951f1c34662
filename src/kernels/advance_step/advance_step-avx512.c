/* SPDX-License-Identifier: Apache-2.0 */
/* AVX-512 advance_step: 8 rows (entries) per step in 64-bit lanes, block ids fetched
 * with masked gathers. Plain mode takes contiguous 1-D tensors and block sizes below
 * 2^31; for other layouts and for any 8-row chunk in which a lane is out of its fast
 * range (or invalid) it hands over to the scalar rows, which give the same results and
 * the precise error message. Speculative mode: see execute_speculative. */
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

/* ---------------------------------------------------------- speculative mode
 * Blocks of 8 sequences, whose 8T entries are T vectors; lane l of vector v is entry
 * 8v + l of the block, sequence (8v + l) / T, column (8v + l) % T. Contiguous entry
 * tensors, sampled [n, T] and spec_token [n, S] row-major, T <= 8, block sizes below
 * 2^31; a lane out of its fast range, or any invalid value, hands the whole call to the
 * scalar kernel (its check gives the precise message, or its run the same results). */
enum { SPEC_ENTRIES = 4096 }; /* entries per checked chunk, whose slots are kept */

typedef struct spec_lanes {
  __m512i seq[8];   /* per vector: each lane's sequence in the block */
  __mmask8 head[8]; /* lanes of column 0 (the last accepted token goes there) */
  __m512i shift;    /* q * T for lane q: where sequence q's entries start */
} spec_lanes;

static bool spec_takes(const llmk__advance_step_args *a) {
  int64_t n = a->num_seqs, S = a->spec_len, T = S + 1, e = n * T;
  if (!a->speculative || a->flat || T > 8 || a->block_size >= INT32_MAX) return false;
  if (!(contiguous(&a->input_tokens, e) && contiguous(&a->input_positions, e) &&
        contiguous(&a->seq_lens, e) && contiguous(&a->slot_mapping, e) &&
        contiguous(&a->accepted_num, n)))
    return false;
  if ((a->sampled.s0 != T && n > 1) || (a->sampled.s1 != 1 && T > 1)) return false;
  if (S > 0 && ((a->spec_token.s0 != S && n > 1) || (a->spec_token.s1 != 1 && S > 1)))
    return false;
  /* i32 tokens from i64 sources would need a range check per token */
  return a->input_tokens.is64 || (!a->sampled.is64 && (S == 0 || !a->spec_token.is64));
}

static void spec_lanes_of(int64_t T, spec_lanes *L) {
  L->shift =
      _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(T));
  for (int v = 0; v < T; v++) {
    int64_t q[8];
    unsigned h = 0;
    for (int l = 0; l < 8; l++) {
      q[l] = (8 * v + l) / T;
      h |= (unsigned)((8 * v + l) % T == 0) << l;
    }
    L->seq[v] = _mm512_loadu_si512(q);
    L->head[v] = (__mmask8)h;
  }
}

/* Checks sequences [i0, i1) and keeps their slots and last accepted tokens; false when
 * a lane needs the scalar kernel. */
static bool spec_check(const llmk__advance_step_args *a, const spec_lanes *L, int64_t i0,
                       int64_t i1, int64_t *slots, int64_t *last) {
  int64_t T = a->spec_len + 1;
  const llmk__view *t = &a->block_tables;
  const __m512i one = _mm512_set1_epi64(1), zero = _mm512_setzero_si512();
  const __m512i lim = _mm512_set1_epi64(INT32_MAX - 1),
                i32max = _mm512_set1_epi64(INT32_MAX);
  for (int64_t i = i0; i < i1; i += 8) {
    int64_t nb = i1 - i < 8 ? i1 - i : 8, e0 = i * T;
    __mmask8 ms = lanes(nb);
    __m512i acc = load8(&a->accepted_num, i, ms);
    if ((_mm512_cmpge_epi64_mask(acc, zero) & _mm512_cmple_epi64_mask(acc, lim) & ms) !=
        ms)
      return false;
    uint64_t neg = 0; /* bit e: sampled entry e of the block is -1 */
    for (int64_t v = 0; v < T; v++) {
      int64_t left = nb * T - 8 * v;
      if (left <= 0) break;
      __mmask8 m = lanes(left);
      int64_t e = e0 + 8 * v;
      __m512i smp = load8(&a->sampled, e, m);
      neg |= (uint64_t)_mm512_mask_cmpeq_epi64_mask(m, smp, _mm512_set1_epi64(-1))
             << (8 * v);
      __m512i old = load8(&a->input_positions, e, m);
      __m512i pos = _mm512_add_epi64(
          _mm512_add_epi64(old, _mm512_permutexvar_epi64(L->seq[v], acc)), one);
      /* old and acc below 2^31: pos cannot wrap */
      __mmask8 ok = m & _mm512_cmpge_epi64_mask(old, zero) &
                    _mm512_cmple_epi64_mask(old, lim) & _mm512_cmple_epi64_mask(pos, lim);
      __m512i b;
      if (a->div.pow2) {
        b = _mm512_srlv_epi64(pos, _mm512_set1_epi64(a->div.shift));
      } else {
        __m512d quo =
            _mm512_div_pd(_mm512_cvtepi64_pd(pos), _mm512_set1_pd((double)a->block_size));
        b = _mm512_cvttpd_epi64(
            _mm512_roundscale_pd(quo, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
      }
      ok &= _mm512_cmplt_epi64_mask(b, _mm512_set1_epi64(a->max_blocks));
      __m512i rows = _mm512_add_epi64(_mm512_set1_epi64(i), L->seq[v]);
      __m512i idx = _mm512_add_epi64(
          _mm512_mullo_epi64(rows, _mm512_set1_epi64(t->s0)),
          t->s1 == 1 ? b : _mm512_mullo_epi64(b, _mm512_set1_epi64(t->s1)));
      __m512i blk;
      if (t->is64) {
        blk = _mm512_mask_i64gather_epi64(zero, ok, idx, t->data, 8);
        ok &= _mm512_cmple_epi64_mask(blk, i32max);
      } else {
        blk = _mm512_cvtepi32_epi64(
            _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), ok, idx, t->data, 4));
      }
      ok &= _mm512_cmpge_epi64_mask(blk, zero);
      __m512i slot = _mm512_add_epi64(
          _mm512_mullo_epi64(_mm512_sub_epi64(blk, b), _mm512_set1_epi64(a->block_size)),
          pos);
      if (!a->slot_mapping.is64) ok &= _mm512_cmple_epi64_mask(slot, i32max);
      if (ok != m) return false;
      _mm512_storeu_si512(slots + (e - i0 * T), slot);
    }
    /* per sequence q: f = its first -1 (T if none), by ctz of its bits of neg */
    const __m512i row = _mm512_set1_epi64(((int64_t)1 << T) - 1);
    __m512i bits = _mm512_or_si512(
        _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64((int64_t)neg), L->shift),
                         row),
        _mm512_add_epi64(row, one));
    __m512i low = _mm512_and_si512(bits, _mm512_sub_epi64(zero, bits)); /* 2^f */
    __m512i f = _mm512_sub_epi64(
        _mm512_srli_epi64(_mm512_castpd_si512(_mm512_cvtepi64_pd(low)), 52),
        _mm512_set1_epi64(1023));
    if (_mm512_mask_cmpeq_epi64_mask(ms, f, zero)) return false; /* none accepted */
    __m512i at = _mm512_add_epi64(_mm512_add_epi64(_mm512_set1_epi64(e0), L->shift),
                                  _mm512_sub_epi64(f, one));
    __m512i lastv = a->sampled.is64
                        ? _mm512_mask_i64gather_epi64(zero, ms, at, a->sampled.data, 8)
                        : _mm512_cvtepi32_epi64(_mm512_mask_i64gather_epi32(
                              _mm256_setzero_si256(), ms, at, a->sampled.data, 4));
    _mm512_storeu_si512(last + (i - i0), lastv);
  }
  return true;
}

static void spec_write(const llmk__advance_step_args *a, const spec_lanes *L, int64_t i0,
                       int64_t i1, const int64_t *slots, const int64_t *last) {
  int64_t S = a->spec_len, T = S + 1;
  const __m512i one = _mm512_set1_epi64(1);
  for (int64_t i = i0; i < i1; i += 8) {
    int64_t nb = i1 - i < 8 ? i1 - i : 8, e0 = i * T;
    __mmask8 ms = lanes(nb);
    __m512i acc = load8(&a->accepted_num, i, ms);
    __m512i lastv = _mm512_maskz_loadu_epi64(ms, last + (i - i0));
    const char *spec =
        S ? a->spec_token.data + (size_t)(i * S) * (a->spec_token.is64 ? 8 : 4) : NULL;
    for (int64_t v = 0; v < T; v++) {
      int64_t left = nb * T - 8 * v;
      if (left <= 0) break;
      __mmask8 m = lanes(left);
      int64_t e = e0 + 8 * v;
      __m512i tok = _mm512_permutexvar_epi64(L->seq[v], lastv);
      __mmask8 sm = m & (__mmask8)~L->head[v];
      if (sm) { /* the spec tokens, in order, into the other lanes */
        if (a->spec_token.is64) {
          tok = _mm512_mask_expandloadu_epi64(tok, sm, spec);
          spec += 8 * (size_t)__builtin_popcount(sm);
        } else {
          __m256i t32 = _mm256_maskz_expandloadu_epi32(sm, spec);
          tok = _mm512_mask_mov_epi64(tok, sm, _mm512_cvtepi32_epi64(t32));
          spec += 4 * (size_t)__builtin_popcount(sm);
        }
      }
      __m512i pos =
          _mm512_add_epi64(_mm512_add_epi64(load8(&a->input_positions, e, m),
                                            _mm512_permutexvar_epi64(L->seq[v], acc)),
                           one);
      store8(&a->input_tokens, e, m, tok);
      store8(&a->input_positions, e, m, pos);
      store8(&a->seq_lens, e, m, _mm512_add_epi64(pos, one));
      store8(&a->slot_mapping, e, m, _mm512_loadu_si512(slots + (e - i0 * T)));
    }
  }
}

static llmk_status execute_speculative(const llmk__advance_step_args *a) {
  int64_t n = a->num_seqs, T = a->spec_len + 1;
  spec_lanes L;
  spec_lanes_of(T, &L);
  int64_t slots[SPEC_ENTRIES], last[SPEC_ENTRIES], c = SPEC_ENTRIES / T / 8 * 8;
  int64_t i = 0;
  if (n == 0) return LLMK_SUCCESS;
  for (; i < n; i += c) /* every value checked before any write */
    if (!spec_check(a, &L, i, i + (n - i < c ? n - i : c), slots, last))
      return llmk__advance_step_kernels_scalar.execute(a);
  i -= c; /* the last chunk's slots are still kept */
  spec_write(a, &L, i, n, slots, last);
  for (int64_t j = 0; j < i; j += c) {
    spec_check(a, &L, j, j + c, slots, last); /* valid: recomputes */
    spec_write(a, &L, j, j + c, slots, last);
  }
  return LLMK_SUCCESS;
}

static llmk_status execute_avx512(const llmk__advance_step_args *a) {
  if (spec_takes(a)) return execute_speculative(a);
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
