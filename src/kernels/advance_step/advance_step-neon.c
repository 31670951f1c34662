/* SPDX-License-Identifier: Apache-2.0 */
/* NEON advance_step (aarch64), plain mode: 4 rows per step in two registers of 64-bit
 * lanes. A64 has no gather, so the 4 block ids are loaded one by one into lanes; the
 * range checks, the division by block_size, the slot arithmetic and the i32 <-> i64
 * conversions stay in vectors. Like the AVX-512 kernel it takes contiguous 1-D tensors
 * and block sizes below 2^31, and hands over to the scalar rows for other layouts, for
 * the last num_queries % 4 rows, and for any 4-row step with a lane out of its fast
 * range (or invalid), so that results and error messages are the scalar code's.
 * Speculative mode (and CANN's flat lookup) is the scalar kernel's: a sequence there is
 * spec_len + 1 rows (a few) with its own accepted_num and a search for its first
 * rejected token, so 2-lane vectors would be mostly tails. */
#include <arm_neon.h>

#include "core/internal.h"
#include "dispatch/dispatch.h"
#include "kernels/advance_step/advance_step.h"

enum { STEP = 4, CHUNK_ROWS = 1024 };

static bool contiguous(const llmk__view *v, int64_t n) {
  return v->s0 == 1 || n <= 1;
}

/* max_blocks > 0: a lane out of range then reads block 0 of its row, which exists */
static bool takes(const llmk__advance_step_args *a) {
  int64_t n = a->num_queries;
  return !a->speculative && !a->flat && a->block_size < INT32_MAX && a->max_blocks > 0 &&
         contiguous(&a->seq_lens, n) && contiguous(&a->sampled, n) &&
         contiguous(&a->input_tokens, n) && contiguous(&a->input_positions, n) &&
         contiguous(&a->slot_mapping, n);
}

typedef struct consts {
  uint64x2_t pos_max, i32_max;
  int64x2_t shift, max_blocks, i32_min;
  float64x2_t bs_f;
  int32x2_t bs;
  bool pow2, narrow_tokens, narrow_slots;
} consts;

static consts consts_of(const llmk__advance_step_args *a) {
  consts k;
  k.pos_max = vdupq_n_u64(INT32_MAX - 1);
  k.i32_max = vdupq_n_u64(INT32_MAX);
  k.i32_min = vdupq_n_s64(INT32_MIN);
  k.shift = vdupq_n_s64(-(int64_t)a->div.shift);
  k.max_blocks = vdupq_n_s64(a->max_blocks);
  k.bs_f = vdupq_n_f64((double)a->block_size);
  k.bs = vdup_n_s32((int32_t)a->block_size);
  k.pow2 = a->div.pow2;
  k.narrow_tokens = !a->input_tokens.is64 && a->sampled.is64;
  k.narrow_slots = !a->slot_mapping.is64;
  return k;
}

/* rows q..q+3 of a contiguous view, sign-extended: q..q+1 in x[0], q+2..q+3 in x[1] */
static inline void load4(const llmk__view *v, int64_t q, int64x2_t x[2]) {
  if (v->is64) {
    const int64_t *p = (const int64_t *)(const void *)v->data + q;
    x[0] = vld1q_s64(p);
    x[1] = vld1q_s64(p + 2);
  } else {
    int32x4_t y = vld1q_s32((const int32_t *)(const void *)v->data + q);
    x[0] = vmovl_s32(vget_low_s32(y));
    x[1] = vmovl_high_s32(y);
  }
}

/* an i32 view keeps the low 32 bits, as llmk__view_set */
static inline void store4(const llmk__view *v, int64_t q, const int64x2_t x[2]) {
  if (v->is64) {
    int64_t *p = (int64_t *)(void *)v->data + q;
    vst1q_s64(p, x[0]);
    vst1q_s64(p + 2, x[1]);
  } else {
    vst1q_s32((int32_t *)(void *)v->data + q, vmovn_high_s64(vmovn_s64(x[0]), x[1]));
  }
}

static inline int64x2_t div2(const consts *k, int64x2_t pos) {
  if (k->pow2)
    return vreinterpretq_s64_u64(vshlq_u64(vreinterpretq_u64_s64(pos), k->shift));
  /* exact for 0 <= pos < 2^31 and block_size < 2^31: a quotient that is not an integer
   * is at least 1/block_size from one, more than the rounding to double moves it, so
   * truncation gives floor(pos / block_size) as llmk__div does */
  return vcvtq_s64_f64(vdivq_f64(vcvtq_f64_s64(pos), k->bs_f));
}

/* Whether rows q..q+3 are all in the fast range and valid; their slots in slots[0..3]. */
static inline bool step_ok(const consts *k, const llmk__advance_step_args *a, int64_t q,
                           int64_t *slots) {
  int64x2_t pos[2], tok[2] = {vdupq_n_s64(0), vdupq_n_s64(0)};
  load4(&a->seq_lens, q, pos);
  if (k->narrow_tokens) load4(&a->sampled, q, tok);
  uint64x2_t all = vdupq_n_u64(UINT64_MAX);
  for (int h = 0; h < 2; h++) {
    int64x2_t p = pos[h];
    /* unsigned: a negative pos is out of range too */
    uint64x2_t ok = vcleq_u64(vreinterpretq_u64_s64(p), k->pos_max);
    int64x2_t b = div2(k, p);
    ok = vandq_u64(ok, vcltq_s64(b, k->max_blocks));
    b = vandq_s64(b, vreinterpretq_s64_u64(ok)); /* block 0 where the lookup is invalid */
    const llmk__view *t = &a->block_tables;
    int64x2_t blk = vdupq_n_s64(llmk__view_get(t, q + 2 * h, vgetq_lane_s64(b, 0)));
    blk = vsetq_lane_s64(llmk__view_get(t, q + 2 * h + 1, vgetq_lane_s64(b, 1)), blk, 1);
    ok = vandq_u64(ok, vcleq_u64(vreinterpretq_u64_s64(blk), k->i32_max));
    /* blk - b and block_size fit i32, so the product is exact in 64 bits */
    int64x2_t slot = vmlal_s32(p, vmovn_s64(vsubq_s64(blk, b)), k->bs);
    if (k->narrow_slots)
      ok = vandq_u64(ok, vcleq_u64(vreinterpretq_u64_s64(slot), k->i32_max));
    if (k->narrow_tokens)
      ok = vandq_u64(ok, vandq_u64(vcgeq_s64(tok[h], k->i32_min),
                                   vcleq_s64(tok[h], vreinterpretq_s64_u64(k->i32_max))));
    vst1q_s64(slots + 2 * h, slot);
    all = vandq_u64(all, ok);
  }
  return vminvq_u32(vreinterpretq_u32_u64(all)) == UINT32_MAX;
}

/* Checks rows [q0, q1) (at most CHUNK_ROWS, a multiple of STEP) and keeps their slots,
 * so that the write pass needs no second lookup. Steps with a lane outside the fast
 * range are checked by the scalar rows and marked in `slow`. */
static llmk_status check_chunk(const consts *k, const llmk__advance_step_args *a,
                               int64_t q0, int64_t q1, int64_t *slots, bool *slow) {
  for (int64_t q = q0; q < q1; q += STEP) {
    bool fast = step_ok(k, a, q, slots + (q - q0));
    slow[(q - q0) / STEP] = !fast;
    if (LLMK__UNLIKELY(!fast)) {
      llmk_status st = llmk__advance_step_check_rows(a, q, q + STEP);
      if (st != LLMK_SUCCESS) return st;
    }
  }
  return LLMK_SUCCESS;
}

static void write_chunk(const llmk__advance_step_args *a, int64_t q0, int64_t q1,
                        const int64_t *slots, const bool *slow) {
  for (int64_t q = q0; q < q1; q += STEP) {
    if (LLMK__UNLIKELY(slow[(q - q0) / STEP])) {
      llmk__advance_step_run_rows(a, q, q + STEP);
      continue;
    }
    int64x2_t pos[2], x[2];
    load4(&a->seq_lens, q, pos);
    load4(&a->sampled, q, x);
    store4(&a->input_tokens, q, x);
    store4(&a->input_positions, q, pos);
    x[0] = vaddq_s64(pos[0], vdupq_n_s64(1));
    x[1] = vaddq_s64(pos[1], vdupq_n_s64(1));
    store4(&a->seq_lens, q, x);
    x[0] = vld1q_s64(slots + (q - q0));
    x[1] = vld1q_s64(slots + (q - q0) + 2);
    store4(&a->slot_mapping, q, x);
  }
}

static llmk_status execute_neon(const llmk__advance_step_args *args) {
  if (!takes(args)) return llmk__advance_step_kernels_scalar.execute(args);
  /* a local copy: the stores could alias *args (see llmk__advance_step_run_rows) */
  const llmk__advance_step_args local = *args, *a = &local;
  const consts k = consts_of(a);
  int64_t n = a->num_queries, nv = n - n % STEP;
  int64_t slots[CHUNK_ROWS];
  bool slow[CHUNK_ROWS / STEP];
  for (int64_t q = 0; q < nv; q += CHUNK_ROWS) {
    int64_t q1 = q + (nv - q < CHUNK_ROWS ? nv - q : CHUNK_ROWS);
    llmk_status st = check_chunk(&k, a, q, q1, slots, slow);
    if (st != LLMK_SUCCESS) return st;
  }
  llmk_status st = llmk__advance_step_check_rows(a, nv, n);
  if (st != LLMK_SUCCESS) return st;
  /* everything is valid: past one chunk, the lookups are done again while writing */
  for (int64_t q = 0; q < nv; q += CHUNK_ROWS) {
    int64_t q1 = q + (nv - q < CHUNK_ROWS ? nv - q : CHUNK_ROWS);
    if (nv > CHUNK_ROWS) check_chunk(&k, a, q, q1, slots, slow);
    write_chunk(a, q, q1, slots, slow);
  }
  llmk__advance_step_run_rows(a, nv, n);
  llmk__advance_step_pad(a);
  return LLMK_SUCCESS;
}

const llmk__advance_step_kernels llmk__advance_step_kernels_neon = {
    .isa = LLMK_ISA_NEON,
    .execute = execute_neon,
};
