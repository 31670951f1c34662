/* SPDX-License-Identifier: Apache-2.0 */
/* advance_step: plain and speculative decode steps against advance_step_ref (tests/ref),
 * every tensor i64, or (plain) seq_lens and block_tables i32 as vLLM passes them. The op
 * updates seq_lens (plain) or input_positions (speculative) in place, so each timing
 * sample starts from the saved inputs.
 * Plain cases also time get_workspace_size + run (a plan per call) and a bare loop of
 * the same dtypes that checks nothing: the floor of the op's work.
 * Bytes per call: every tensor element read or written once, and one block-table entry
 * per row. */
#include <stdio.h>
#include <string.h>

#include "advance_step_ref.h"
#include "bench.h"

typedef struct as_case {
  bool quick;
  bool spec;
  int64_t num_seqs, S, block_size, max_blocks;
  bool i32;   /* plain: seq_lens and block_tables i32 */
  int target; /* issue 23.6, on 1 thread: 1 plain <= 1 us; 2 speculative >= 5x the
               * reference and <= 3 us */
  bool small; /* the smallest shape: also the whole call (small calls) */
} as_case;

static const as_case cases[] = {
    {true, false, 1024, 0, 16, 256, false, 1, false},
    {true, false, 1024, 0, 16, 512, true, 1, false},
    {true, true, 256, 3, 16, 256, false, 0, false},
    {true, true, 1024, 1, 16, 256, false, 2, false},
    {true, false, 1, 0, 16, 256, false, 0, true},
    {false, false, 256, 0, 16, 256, false, 0, false},
    {false, false, 4096, 0, 16, 256, false, 0, false},
    {false, true, 1024, 3, 128, 64, false, 0, false},
};

/* At most this many calls per timing sample: the block tables leave room for them. */
enum { MAX_INNER = 200 };

/* One set of buffers (the op's or the reference's); rows = num_seqs * T. */
typedef struct as_bufs {
  int64_t *tokens, *sampled, *positions, *seq_lens, *slots, *tables, *spec, *accepted;
} as_bufs;

typedef struct as_state {
  const as_case *c;
  int64_t rows, T;
  as_bufs op, ref;
  int64_t *init; /* the in/out tensor's initial values (seq_lens or input_positions) */
  llmk_plan *plan;
  size_t ws;
  llmk_context *ctx;
  llmk_tensor t[8]; /* tokens, sampled, positions, seq_lens, slots, tables, spec, acc */
} as_state;

/* Arrays at staggered offsets of one arena: arrays that start at the same offset modulo
 * 4 KiB make loads wait on unrelated stores (4K aliasing). */
static int64_t *carve(unsigned char **p, size_t elems) {
  int64_t *r = (int64_t *)(void *)*p;
  size_t bytes = (elems * 8 + 4095) / 4096 * 4096 + 576;
  *p += bytes;
  return r;
}

static size_t arena_size(int64_t rows, int64_t num_seqs, int64_t T, int64_t S,
                         int64_t max_blocks) {
  size_t e =
      (size_t)(5 * rows + num_seqs * T + num_seqs * S + num_seqs + num_seqs * max_blocks);
  return e * 8 + 8 * (4096 + 576);
}

static void carve_all(as_bufs *b, unsigned char *arena, const as_case *c, int64_t rows,
                      int64_t T) {
  unsigned char *p = arena;
  b->tokens = carve(&p, (size_t)rows);
  b->sampled = carve(&p, (size_t)(c->num_seqs * T));
  b->positions = carve(&p, (size_t)rows);
  b->seq_lens = carve(&p, (size_t)rows);
  b->slots = carve(&p, (size_t)rows);
  b->spec = carve(&p, (size_t)(c->num_seqs * c->S + 1));
  b->accepted = carve(&p, (size_t)c->num_seqs);
  b->tables = carve(&p, (size_t)(c->num_seqs * c->max_blocks));
}

static int64_t *inout(as_bufs *b, const as_case *c) {
  return c->spec ? b->positions : b->seq_lens;
}

static int reset_op(void *arg) {
  as_state *s = arg;
  if (s->c->i32) {
    int32_t *lens = (int32_t *)(void *)s->op.seq_lens;
    for (int64_t i = 0; i < s->rows; i++) lens[i] = (int32_t)s->init[i];
  } else {
    memcpy(inout(&s->op, s->c), s->init, (size_t)s->rows * 8);
  }
  return 0;
}

static int reset_ref(void *arg) {
  as_state *s = arg;
  memcpy(inout(&s->ref, s->c), s->init, (size_t)s->rows * 8);
  return 0;
}

static int run_op(void *arg) {
  as_state *s = arg;
  return llmk_advance_step(NULL, s->ws, s->plan, s->ctx) != LLMK_SUCCESS;
}

/* A plan per call: phase 1 and phase 2, as a caller without a repeatable plan runs it. */
static int run_plan_and_op(void *arg) {
  as_state *s = arg;
  const as_case *c = s->c;
  size_t ws;
  llmk_plan *p;
  return llmk_advance_step_get_workspace_size(
             &s->t[0], &s->t[1], &s->t[2], &s->t[3], &s->t[4], &s->t[5],
             c->spec ? &s->t[6] : NULL, c->spec ? &s->t[7] : NULL, c->num_seqs,
             c->num_seqs, c->block_size, &ws, &p) != LLMK_SUCCESS ||
         llmk_advance_step(NULL, ws, p, NULL) != LLMK_SUCCESS;
}

/* The whole call on the context's threads, a fresh plan each time (small calls). */
static int run_whole(void *arg) {
  as_state *s = arg;
  const as_case *c = s->c;
  size_t ws;
  llmk_plan *p;
  return llmk_advance_step_get_workspace_size(
             &s->t[0], &s->t[1], &s->t[2], &s->t[3], &s->t[4], &s->t[5],
             c->spec ? &s->t[6] : NULL, c->spec ? &s->t[7] : NULL, c->num_seqs,
             c->num_seqs, c->block_size, &ws, &p) != LLMK_SUCCESS ||
         llmk_advance_step(NULL, ws, p, s->ctx) != LLMK_SUCCESS;
}

/* The floor: the plain step's loop with the case's dtypes, no checks. */
static int run_bare(void *arg) {
  as_state *s = arg;
  const as_case *c = s->c;
  as_bufs *b = &s->op;
  const int64_t bs = c->block_size, mb = c->max_blocks;
  if (c->i32) {
    int32_t *lens = (int32_t *)(void *)b->seq_lens, *tab = (int32_t *)(void *)b->tables;
    for (int64_t q = 0; q < c->num_seqs; q++) {
      int64_t pos = lens[q];
      b->tokens[q] = b->sampled[q];
      b->positions[q] = pos;
      lens[q] = (int32_t)(pos + 1);
      b->slots[q] = (int64_t)tab[q * mb + pos / bs] * bs + pos % bs;
    }
  } else {
    for (int64_t q = 0; q < c->num_seqs; q++) {
      int64_t pos = b->seq_lens[q];
      b->tokens[q] = b->sampled[q];
      b->positions[q] = pos;
      b->seq_lens[q] = pos + 1;
      b->slots[q] = b->tables[q * mb + pos / bs] * bs + pos % bs;
    }
  }
  __asm__ volatile("" ::: "memory");
  return 0;
}

static int run_ref(void *arg) {
  as_state *s = arg;
  const as_case *c = s->c;
  as_bufs *b = &s->ref;
  if (c->spec)
    return advance_step_ref_spec(c->num_seqs, c->S, c->block_size, c->max_blocks,
                                 b->sampled, b->spec, b->accepted, b->tables, b->tokens,
                                 b->positions, b->seq_lens, b->slots) != 0;
  return advance_step_ref_plain(c->num_seqs, c->num_seqs, c->block_size, c->max_blocks,
                                b->sampled, b->tables, b->tokens, b->positions,
                                b->seq_lens, b->slots) != 0;
}

static void run_case(bench_env *env, const as_case *c, const char *shape) {
  bench_result r;
  bench_result_init(&r, "advance_step", shape, c->i32 ? "i64+i32 lens/tables" : "i64");
  as_state s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.ctx = env->ctx;
  s.T = c->spec ? c->S + 1 : 1;
  s.rows = c->num_seqs * s.T;
  size_t asz = arena_size(s.rows, c->num_seqs, s.T, c->S, c->max_blocks);
  unsigned char *arena_op = bench_alloc(asz, 0), *arena_ref = bench_alloc(asz, 0);
  carve_all(&s.op, arena_op, c, s.rows, s.T);
  carve_all(&s.ref, arena_ref, c, s.rows, s.T);
  s.init = bench_alloc((size_t)s.rows * 8, 0);

  bench_rng rng = {0x5eed0001u + (uint64_t)c->num_seqs};
  const int64_t room = (MAX_INNER * s.T + c->block_size - 1) / c->block_size + 8;
  const int64_t max_pos = (c->max_blocks - room) * c->block_size;
  as_bufs *b = &s.op;
  for (int64_t i = 0; i < c->num_seqs * c->max_blocks; i++)
    b->tables[i] = (int64_t)bench_rand_below(&rng, 100000);
  if (!c->spec) {
    for (int64_t q = 0; q < c->num_seqs; q++) {
      s.init[q] = (int64_t)bench_rand_below(&rng, (uint64_t)max_pos);
      b->sampled[q] = (int64_t)bench_rand_below(&rng, 150000);
    }
  } else {
    for (int64_t i = 0; i < c->num_seqs; i++) {
      int64_t base = (int64_t)bench_rand_below(&rng, (uint64_t)max_pos);
      int64_t f = 1 + (int64_t)bench_rand_below(&rng, (uint64_t)s.T); /* first -1 */
      for (int64_t j = 0; j < s.T; j++) {
        s.init[i * s.T + j] = base + j;
        b->sampled[i * s.T + j] = j < f ? (int64_t)bench_rand_below(&rng, 150000) : -1;
      }
      for (int64_t j = 0; j < c->S; j++)
        b->spec[i * c->S + j] = (int64_t)bench_rand_below(&rng, 150000);
      b->accepted[i] = f - 1;
    }
  }
  memcpy(inout(b, c), s.init, (size_t)s.rows * 8);
  memcpy(arena_ref, arena_op, asz); /* same offsets: the reference's copy */
  if (c->i32) {                     /* narrowed in place, front to back */
    int32_t *tab = (int32_t *)(void *)b->tables;
    for (int64_t i = 0; i < c->num_seqs * c->max_blocks; i++)
      tab[i] = (int32_t)b->tables[i];
    reset_op(&s);
  }

  int64_t n[1] = {s.rows}, samp[2] = {c->num_seqs, s.T},
          tab[2] = {c->num_seqs, c->max_blocks};
  int64_t spec_shape[2] = {c->num_seqs, c->S}, acc[1] = {c->num_seqs};
  llmk_dtype ldt = c->i32 ? LLMK_I32 : LLMK_I64;
  llmk_tensor_init(&s.t[0], LLMK_I64, 1, n, NULL, b->tokens);
  llmk_tensor_init(&s.t[1], LLMK_I64, 2, samp, NULL, b->sampled);
  llmk_tensor_init(&s.t[2], LLMK_I64, 1, n, NULL, b->positions);
  llmk_tensor_init(&s.t[3], ldt, 1, n, NULL, b->seq_lens);
  llmk_tensor_init(&s.t[4], LLMK_I64, 1, n, NULL, b->slots);
  llmk_tensor_init(&s.t[5], ldt, 2, tab, NULL, b->tables);
  llmk_tensor_init(&s.t[6], LLMK_I64, 2, spec_shape, NULL, b->spec);
  llmk_tensor_init(&s.t[7], LLMK_I64, 1, acc, NULL, b->accepted);
  llmk_status st = llmk_advance_step_get_workspace_size(
      &s.t[0], &s.t[1], &s.t[2], &s.t[3], &s.t[4], &s.t[5], c->spec ? &s.t[6] : NULL,
      c->spec ? &s.t[7] : NULL, c->num_seqs, c->num_seqs, c->block_size, &s.ws, &s.plan);
  if (st == LLMK_SUCCESS) st = llmk_plan_set_repeatable(s.plan);
  if (st != LLMK_SUCCESS || s.ws != 0) {
    char msg[160];
    snprintf(msg, sizeof msg, "setup: %s",
             st ? llmk_last_error() : "unexpected workspace");
    bench_add_error(env, &r, msg);
    goto done;
  }

  /* the check: the op on its buffers, the reference on its copy, compared exactly */
  st = llmk_advance_step(NULL, s.ws, s.plan, s.ctx);
  int ref_rc = run_ref(&s);
  if (st != LLMK_SUCCESS || ref_rc != 0) {
    r.check = st != LLMK_SUCCESS ? BENCH_CHECK_ERROR : BENCH_CHECK_FAIL;
    snprintf(
        r.note, sizeof r.note, "%s",
        st != LLMK_SUCCESS ? llmk_last_error() : "the reference rejected the inputs");
  } else {
    size_t rb = (size_t)s.rows * 8;
    bool lens_differ = memcmp(s.op.seq_lens, s.ref.seq_lens, rb) != 0;
    if (c->i32) { /* widened */
      const int32_t *lens = (const int32_t *)(const void *)s.op.seq_lens;
      lens_differ = false;
      for (int64_t i = 0; i < s.rows; i++) lens_differ |= lens[i] != s.ref.seq_lens[i];
    }
    const char *bad = memcmp(s.op.tokens, s.ref.tokens, rb)         ? "input_tokens"
                      : memcmp(s.op.positions, s.ref.positions, rb) ? "input_positions"
                      : lens_differ                                 ? "seq_lens"
                      : memcmp(s.op.slots, s.ref.slots, rb)         ? "slot_mapping"
                                                                    : NULL;
    if (bad) {
      r.check = BENCH_CHECK_FAIL;
      snprintf(r.note, sizeof r.note, "%s differs from the reference", bad);
    }
  }

  /* plain, per row: sampled read, tokens, positions, slots written (8 bytes each), the
   * length read and written and one block-table entry read (8 or 4 bytes each) */
  double bytes =
      c->spec ? (double)s.rows * 48 + (double)c->num_seqs * 8 * (double)(s.T + c->S + 1)
              : (double)c->num_seqs * (c->i32 ? 44 : 56);
  bench_timing op = bench_time(env, run_op, reset_op, &s, bytes, 11, MAX_INNER);
  bench_timing ref = bench_time_only(env, run_ref, reset_ref, &s, 5, MAX_INNER);
  bench_one_thread(env, &r, run_op, reset_op, &s, &s.ctx, 11, MAX_INNER);
  if (c->small && r.check == BENCH_CHECK_OK)
    bench_small_call(env, &r, run_whole, reset_op, &s, MAX_INNER);
  if (c->target == 1) bench_target_want_1t(&r, BENCH_T_TIME, "23.6", 1e-6);
  if (c->target == 2) {
    bench_target_want_1t(&r, BENCH_T_SPEEDUP, "23.6", 5.0);
    bench_target_want_1t(&r, BENCH_T_TIME, "23.6", 3e-6);
  }
  if (!c->spec && !c->small && r.check == BENCH_CHECK_OK) {
    bench_timing full =
        bench_time_only(env, run_plan_and_op, reset_op, &s, 11, MAX_INNER);
    bench_timing bare = bench_time_only(env, run_bare, reset_op, &s, 11, MAX_INNER);
    if (!full.status)
      bench_add_extra(&r, "get_workspace_size + run (a plan per call, 1 thread)",
                      full.median, full.min);
    if (!bare.status)
      bench_add_extra(&r, "bare loop (same dtypes, no checks): the floor", bare.median,
                      bare.min);
  }
  bench_add(env, &r, &op, &ref, bytes);
done:
  llmk_plan_destroy(s.plan);
  bench_free(arena_op);
  bench_free(arena_ref);
  bench_free(s.init);
}

void bench_advance_step(bench_env *env) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const as_case *c = &cases[i];
    if (env->quick && !c->quick) continue;
    char shape[96];
    if (c->spec)
      snprintf(shape, sizeof shape, "spec num_seqs=%lld S=%lld bs=%lld",
               (long long)c->num_seqs, (long long)c->S, (long long)c->block_size);
    else
      snprintf(shape, sizeof shape, "plain num_seqs=%lld bs=%lld", (long long)c->num_seqs,
               (long long)c->block_size);
    if (bench_want(env, "advance_step", shape, LLMK_DTYPE_INVALID,
                   c->i32 ? "i64+i32 lens/tables" : "i64"))
      run_case(env, c, shape);
  }
}
