/* SPDX-License-Identifier: Apache-2.0 */
/* Every table of llmk__advance_step_kernel_list that this CPU runs gives the scalar
 * table's results, bit for bit: execute() on args as phase 1 of the op builds them
 * (llmk__divider_make of block_size, views of i32 or i64 tensors of the shapes phase 1
 * checks), in plain mode (num_queries <= num_seqs, padding rows) and speculative mode,
 * with contiguous and strided views, row counts around the 8-row chunks and past the
 * 1024-row check blocks, block sizes from 1 to past 2^31 (powers of two and not), values
 * at the int32 / int64 limits; and on inputs the kernels refuse (negative lengths, blocks
 * past max_blocks, negative block ids, int64 overflow, values that do not fit i32
 * outputs): the same status and message, and nothing written. Each variant runs on its
 * own copies of every tensor; every buffer (the gaps of strided views included) is
 * compared, the inputs must be unchanged and the guard zones intact. */
#include <inttypes.h>

#include "kernel_list.h"
#include "kernels/advance_step/advance_step.h"
#include "test_util.h"

static const llmk__advance_step_kernels *const S = &llmk__advance_step_kernels_scalar;

enum { TOK, SAMPLED, POS, LENS, SLOTS, TABLES, SPEC, ACC, NT };
static const char *const names[NT] = {"input_tokens", "sampled",      "input_positions",
                                      "seq_lens",     "slot_mapping", "block_tables",
                                      "spec_token",   "accepted_num"};

typedef struct tens {
  bool present, is64;
  int64_t n0, n1, s0, s1; /* shape and strides in elements */
  size_t elems;           /* the buffer: every element the view reaches, and gaps */
  tu_buf proto, a, b;     /* the original, the scalar run's, the variant's */
} tens;

static tens t[NT];
static int64_t num_seqs, num_queries, block_size, spec_len;
static bool speculative;

static void set_elem(tens *v, int64_t i, int64_t j, int64_t value) {
  int64_t off = i * v->s0 + j * v->s1;
  if (v->is64)
    memcpy((char *)v->proto.data + off * 8, &value, 8);
  else {
    int32_t x = (int32_t)value;
    memcpy((char *)v->proto.data + off * 4, &x, 4);
  }
}

static int64_t get_elem(const tens *v, int64_t i, int64_t j) {
  int64_t off = i * v->s0 + j * v->s1;
  if (v->is64) {
    int64_t x;
    memcpy(&x, (const char *)v->proto.data + off * 8, 8);
    return x;
  }
  int32_t x;
  memcpy(&x, (const char *)v->proto.data + off * 4, 4);
  return x;
}

static int64_t lim_of(const tens *v) {
  return v->is64 ? INT64_MAX : INT32_MAX;
}

/* a view of shape [n0, n1] (n1 = 1: 1-D) with random dtype and strides; its buffer of
 * random bytes */
static void make(tens *v, int64_t n0, int64_t n1, bool strided) {
  v->present = true;
  v->is64 = tu_rand_range(0, 1);
  v->n0 = n0;
  v->n1 = n1;
  v->s1 = strided ? tu_rand_range(1, 3) : 1;
  v->s0 = n1 * v->s1 + (strided ? tu_rand_range(0, 3) : 0);
  if (n1 == 1 && !strided) v->s1 = tu_rand_range(0, 1) ? 1 : 0; /* [n, 1]: s1 unused */
  int64_t last = n0 > 0 && n1 > 0 ? (n0 - 1) * v->s0 + (n1 - 1) * v->s1 : -1;
  v->elems = (size_t)(last + 1 + tu_rand_range(0, 2));
  size_t bytes = v->elems * (v->is64 ? 8 : 4);
  v->proto = tu_buf_alloc(bytes);
  v->a = tu_buf_alloc(bytes);
  v->b = tu_buf_alloc(bytes);
  unsigned char *p = v->proto.data;
  for (size_t i = 0; i < bytes; i++) p[i] = (unsigned char)tu_rand_u64();
}

static void release(void) {
  for (int i = 0; i < NT; i++)
    if (t[i].present) {
      tu_buf_free(&t[i].proto);
      tu_buf_free(&t[i].a);
      tu_buf_free(&t[i].b);
      t[i].present = false;
    }
}

static llmk__view view(const tens *v, const tu_buf *b) {
  llmk__view r = {0};
  if (!v->present) return r;
  r.data = b->data;
  r.is64 = v->is64;
  r.dtype = v->is64 ? LLMK_I64 : LLMK_I32;
  r.s0 = v->s0;
  r.s1 = v->n1 > 1 || v == &t[SAMPLED] || v == &t[TABLES] || v == &t[SPEC] ? v->s1 : 0;
  return r;
}

static llmk__advance_step_args args_of(int which) {
  llmk__advance_step_args a;
  memset(&a, 0, sizeof a);
  llmk__view *dst[NT] = {&a.input_tokens, &a.sampled,      &a.input_positions,
                         &a.seq_lens,     &a.slot_mapping, &a.block_tables,
                         &a.spec_token,   &a.accepted_num};
  for (int i = 0; i < NT; i++) *dst[i] = view(&t[i], which ? &t[i].b : &t[i].a);
  a.num_seqs = num_seqs;
  a.num_queries = num_queries;
  a.block_size = block_size;
  a.max_blocks = t[TABLES].n1;
  a.spec_len = spec_len;
  a.speculative = speculative;
  a.div = llmk__divider_make(block_size);
  return a;
}

static int64_t rand_upto(int64_t hi) { /* [0, hi], often small, sometimes hi */
  if (hi <= 0) return 0;
  switch (tu_rand_range(0, 5)) {
    case 0:
      return hi;
    case 1:
      return tu_rand_range(0, hi);
    default:
      return tu_rand_range(0, hi < 3000 ? hi : 3000);
  }
}

static int64_t rand_block_size(void) {
  static const int64_t bs[] = {1,
                               2,
                               3,
                               4,
                               7,
                               8,
                               16,
                               100,
                               128,
                               1000,
                               1 << 20,
                               (1 << 20) + 1,
                               INT32_MAX - 1,
                               INT32_MAX,
                               (int64_t)1 << 31,
                               ((int64_t)1 << 33) + 5,
                               (int64_t)1 << 40};
  return bs[tu_rand_range(0, (int64_t)(sizeof bs / sizeof bs[0]) - 1)];
}

/* a valid (position, block id) for the lookup of a row, given the dtypes: pos <= pos_lim,
 * pos / bs < max_blocks, slot = blk * bs + pos % bs <= slot_lim; false if none found */
static bool valid_lookup(int64_t pos_lo, int64_t pos_lim, int64_t slot_lim,
                         int64_t blk_lim, int64_t *pos, int64_t *blk) {
  int64_t M = t[TABLES].n1, top;
  if (M == 0) return false;
  if (__builtin_mul_overflow(M, block_size, &top)) top = INT64_MAX;
  top = top - 1 < pos_lim ? top - 1 : pos_lim;
  if (top < pos_lo) return false;
  for (int tries = 0; tries < 8; tries++) {
    int64_t p = pos_lo + rand_upto(top - pos_lo);
    if (tries > 4) p = pos_lo;
    int64_t off = p % block_size;
    if (off > slot_lim) continue;
    int64_t bl = (slot_lim - off) / block_size;
    bl = bl < blk_lim ? bl : blk_lim;
    *pos = p;
    *blk = rand_upto(bl);
    return true;
  }
  return false;
}

/* the position row q's lookup k uses (-1 if it overflows) */
static int64_t looked_up(const tens *lens, int64_t q, int64_t k) {
  int64_t pos = get_elem(lens, k, 0);
  if (speculative && (__builtin_add_overflow(pos, get_elem(&t[ACC], q, 0), &pos) ||
                      __builtin_add_overflow(pos, 1, &pos)))
    return -1;
  return pos;
}

/* one random fault in a random row (speculative: of a random sequence) */
static void inject_fault(void) {
  int64_t rows = speculative ? num_seqs : num_queries;
  if (rows == 0) return;
  int64_t q = tu_rand_range(0, rows - 1), M = t[TABLES].n1;
  int kind = (int)tu_rand_range(0, 7);
  tens *lens = speculative ? &t[POS] : &t[LENS];
  int64_t j = speculative ? tu_rand_range(0, spec_len) : 0;
  int64_t k = speculative ? q * (spec_len + 1) + j : q;
  switch (kind) {
    case 0: /* negative length / old position */
      set_elem(lens, k, 0, -tu_rand_range(1, 3));
      break;
    case 1: /* past max_blocks */
      if (block_size <= INT32_MAX / 16)
        set_elem(lens, k, 0, M * block_size + tu_rand_range(0, 3 * block_size));
      break;
    case 2: { /* a negative block id where the row looks */
      int64_t pos = looked_up(lens, q, k);
      if (pos >= 0 && pos / block_size < M)
        set_elem(&t[TABLES], q, pos / block_size, -tu_rand_range(1, 5));
      break;
    }
    case 3: { /* block id * block_size overflows int64 (or the i32 slot) */
      int64_t pos = looked_up(lens, q, k);
      if (pos >= 0 && pos / block_size < M)
        set_elem(&t[TABLES], q, pos / block_size,
                 t[TABLES].is64 && block_size == 1 ? INT64_MAX - tu_rand_range(0, 2)
                 : t[TABLES].is64 ? INT64_MAX / block_size + tu_rand_range(0, 2)
                                  : INT32_MAX - tu_rand_range(0, 2));
      break;
    }
    case 4: /* a token that does not fit an i32 input_tokens */
      if (speculative && spec_len > 0)
        set_elem(&t[SPEC], q, tu_rand_range(0, spec_len - 1),
                 (int64_t)INT32_MAX + tu_rand_range(1, 9));
      else if (speculative)
        set_elem(&t[SAMPLED], q, 0, (int64_t)INT32_MAX + tu_rand_range(1, 9));
      else
        set_elem(&t[SAMPLED], q, 0,
                 tu_rand_range(0, 1) ? (int64_t)INT32_MAX + 1 : (int64_t)INT32_MIN - 1);
      break;
    case 5: /* the length at the top of its dtype: pos + 1 does not fit */
      set_elem(lens, k, 0, lim_of(lens) - tu_rand_range(0, 1));
      break;
    case 6: /* speculative: a row with no accepted token, a negative accepted_num */
      if (speculative) {
        if (tu_rand_range(0, 1))
          set_elem(&t[SAMPLED], q, 0, -1);
        else
          set_elem(&t[ACC], q, 0, -tu_rand_range(1, 3));
      } else {
        set_elem(lens, k, 0, INT64_MIN);
      }
      break;
    default: /* a huge accepted_num: the position overflows */
      if (speculative)
        set_elem(&t[ACC], q, 0, lim_of(&t[ACC]) - tu_rand_range(0, 2));
      else
        set_elem(lens, k, 0, (int64_t)INT32_MAX + tu_rand_range(0, 2));
  }
}

static long accepted, refused;

/* the block id of (row, b): the smallest one any row asked for (rows may share a table
 * row when its stride is 0), so that every valid lookup stays valid */
static void set_block(int64_t row, int64_t b, int64_t blk) {
  int64_t cur = get_elem(&t[TABLES], row, b);
  if (cur < 0 || blk < cur) set_elem(&t[TABLES], row, b, blk);
}

static void build_case(int rep) {
  speculative = rep % 3 == 2;
  bool strided = tu_rand_range(0, 2) == 0;
  num_seqs = rep % 50 == 7 ? tu_rand_range(1020, 2100) : tu_rand_range(0, 40);
  num_queries =
      speculative || tu_rand_range(0, 1) ? num_seqs : tu_rand_range(0, num_seqs);
  spec_len = speculative ? tu_rand_range(0, 4) : 0;
  block_size = rand_block_size();
  int64_t M = tu_rand_range(0, 12) ? tu_rand_range(1, 8) : 0, T = spec_len + 1;
  int64_t len = speculative ? num_seqs * T : num_seqs;
  make(&t[TOK], len, 1, strided && tu_rand_range(0, 1));
  make(&t[POS], len, 1, strided && tu_rand_range(0, 1));
  make(&t[LENS], len, 1, strided && tu_rand_range(0, 1));
  make(&t[SLOTS], len, 1, strided && tu_rand_range(0, 1));
  make(&t[SAMPLED], speculative ? num_seqs : num_queries, speculative ? T : 1,
       strided && tu_rand_range(0, 1));
  make(&t[TABLES], num_seqs, M, strided || tu_rand_range(0, 1));
  if (tu_rand_range(0, 9) == 0) t[TABLES].s0 = 0; /* every row the same table */
  if (speculative) {
    make(&t[SPEC], num_seqs, spec_len, strided && tu_rand_range(0, 1));
    make(&t[ACC], num_seqs, 1, strided && tu_rand_range(0, 1));
  }
  bool i32pos = !t[POS].is64 || !t[LENS].is64;
  int64_t pos_lim = i32pos ? INT32_MAX - 1 : INT64_MAX - 2;
  int64_t slot_lim = lim_of(&t[SLOTS]), blk_lim = lim_of(&t[TABLES]);
  for (int64_t i = 0; i < num_seqs; i++)
    for (int64_t b = 0; b < M; b++) set_elem(&t[TABLES], i, b, -1);
  int64_t tok_lim = t[TOK].is64 ? INT64_MAX : INT32_MAX;
  if (!t[SAMPLED].is64) tok_lim = INT32_MAX;
  if (speculative && !t[SPEC].is64) tok_lim = tok_lim < INT32_MAX ? tok_lim : INT32_MAX;
  for (int64_t i = 0; i < num_seqs; i++) {
    if (!speculative) {
      if (i >= num_queries) continue;
      int64_t pos, blk;
      if (!valid_lookup(0, pos_lim, slot_lim, blk_lim, &pos, &blk)) continue;
      set_elem(&t[LENS], i, 0, pos);
      set_block(i, pos / block_size, blk);
      int64_t tok = rand_upto(tok_lim);
      set_elem(&t[SAMPLED], i, 0, tu_rand_range(0, 3) ? tok : -1 - rand_upto(tok_lim));
      continue;
    }
    int64_t acc = tu_rand_range(0, 7) ? tu_rand_range(0, 10) : rand_upto(pos_lim / 2);
    if (!t[ACC].is64 && acc > INT32_MAX) acc = INT32_MAX;
    set_elem(&t[ACC], i, 0, acc);
    int64_t f = tu_rand_range(1, T + 1); /* first -1 at f (none if f > T) */
    for (int64_t j = 0; j < T; j++)
      set_elem(&t[SAMPLED], i, j, j == f ? -1 : rand_upto(tok_lim));
    for (int64_t s = 0; s < spec_len; s++) set_elem(&t[SPEC], i, s, rand_upto(tok_lim));
    for (int64_t j = 0; j < T; j++) {
      int64_t pos, blk;
      if (!valid_lookup(acc + 1, pos_lim, slot_lim, blk_lim, &pos, &blk)) continue;
      set_elem(&t[POS], i * T + j, 0, pos - acc - 1);
      set_block(i, pos / block_size, blk);
    }
  }
  /* the entries no row looks up: -1 or any value (kernels must not read them) */
  for (int64_t i = 0; i < num_seqs; i++)
    for (int64_t b = 0; b < M; b++)
      if (get_elem(&t[TABLES], i, b) == -1 && tu_rand_range(0, 1))
        set_elem(&t[TABLES], i, b, (int64_t)tu_rand_u64());
  if (rep % 4 == 3) {
    inject_fault();
    if (tu_rand_range(0, 3) == 0) inject_fault();
  }
}

static const char *ok_name(llmk_status st) {
  return st == LLMK_SUCCESS ? "success" : "refused";
}

static void run_case(const llmk__advance_step_kernels *k, int rep) {
  for (int i = 0; i < NT; i++)
    if (t[i].present) {
      memcpy(t[i].a.data, t[i].proto.data, t[i].proto.size);
      memcpy(t[i].b.data, t[i].proto.data, t[i].proto.size);
    }
  llmk__advance_step_args aa = args_of(0), ab = args_of(1);
  llmk_status sa = S->execute(&aa);
  static char msg[1024];
  snprintf(msg, sizeof msg, "%s", sa == LLMK_SUCCESS ? "" : llmk_last_error());
  llmk_status sb = k->execute(&ab);
  const char *mb = sb == LLMK_SUCCESS ? "" : llmk_last_error();
  sa == LLMK_SUCCESS ? accepted++ : refused++;
  char what[300];
  snprintf(what, sizeof what,
           "%s rep %d: %s num_seqs=%" PRId64 " num_queries=%" PRId64 " S=%" PRId64
           " block_size=%" PRId64 " max_blocks=%" PRId64
           " dtypes tok/pos/lens/slot/tab "
           "%d%d%d%d%d, strides %" PRId64 "/%" PRId64 "/%" PRId64 "/%" PRId64 "/%" PRId64
           "x%" PRId64,
           llmk_isa_name(k->isa), rep, speculative ? "speculative" : "plain", num_seqs,
           num_queries, spec_len, block_size, t[TABLES].n1, t[TOK].is64, t[POS].is64,
           t[LENS].is64, t[SLOTS].is64, t[TABLES].is64, t[TOK].s0, t[POS].s0, t[LENS].s0,
           t[SLOTS].s0, t[TABLES].s0, t[TABLES].s1);
  TU_CHECK(sa == sb && !strcmp(msg, mb), "%s: scalar %s (%s), %s %s (%s)", what,
           ok_name(sa), msg, llmk_isa_name(k->isa), ok_name(sb), mb);
  bool same = true, guards = true, untouched = true;
  const char *first = NULL;
  for (int i = 0; i < NT; i++) {
    if (!t[i].present) continue;
    bool eq = !memcmp(t[i].a.data, t[i].b.data, t[i].proto.size);
    if (!eq && !first) first = names[i];
    same = same && eq;
    guards = guards && tu_buf_check(&t[i].a) && tu_buf_check(&t[i].b);
    bool input = i == SAMPLED || i == TABLES || i == SPEC || i == ACC;
    if (input || sa != LLMK_SUCCESS)
      untouched = untouched && !memcmp(t[i].a.data, t[i].proto.data, t[i].proto.size);
    if (input || sb != LLMK_SUCCESS)
      untouched = untouched && !memcmp(t[i].b.data, t[i].proto.data, t[i].proto.size);
  }
  TU_CHECK(same && guards && untouched, "%s: %s%s%s", what,
           same ? "" : "outputs differ, first in ", same ? "" : first,
           !guards      ? "; guard zone overwritten"
           : !untouched ? "; an input, or an output of a refused call, was written"
                        : "");
}

static void check_table(const void *table) {
  const llmk__advance_step_kernels *k = table;
  for (int rep = 0; rep < 12000; rep++) {
    build_case(rep);
    run_case(k, rep);
    release();
  }
}

int main(void) {
  tu_seed(0xad5);
  kl_each(&llmk__advance_step_kernel_list, check_table);
  printf("cases accepted by the scalar kernel: %ld, refused: %ld\n", accepted, refused);
  return tu_finish("test_advance_step_kernels");
}
