/* SPDX-License-Identifier: Apache-2.0 */
/* advance_step: plain, speculative and flat-lookup calls decoded from bytes. */
#include <string.h>

#include "fuzz_common.h"

static const llmk_dtype idx_dt[] = {LLMK_I64, LLMK_I32};

enum { TOK, SAMP, POS, SEQ, SLOT, BT, SPEC, ACC, NT_ };

typedef struct call {
  fz_tensor t[NT_];
  int mode; /* 0 plain, 1 speculative, 2 flat */
  int64_t ns, nq, bs;
} call;

static llmk_tensor *tp(call *c, int i) {
  return c->t[i].buf < 0 && !c->t[i].t.data && c->t[i].t.rank == 0 &&
                 c->t[i].t.dtype == LLMK_DTYPE_INVALID
             ? NULL
             : &c->t[i].t;
}

static int plan(void *arg, size_t *ws, void **p) {
  call *c = arg;
  llmk_plan **pl = (llmk_plan **)p;
  if (c->mode == 2)
    return llmk_advance_step_flat_get_workspace_size(
        &c->t[TOK].t, &c->t[SAMP].t, &c->t[POS].t, &c->t[SEQ].t, &c->t[SLOT].t,
        &c->t[BT].t, c->ns, c->nq, c->bs, ws, pl);
  return llmk_advance_step_get_workspace_size(
      &c->t[TOK].t, &c->t[SAMP].t, &c->t[POS].t, &c->t[SEQ].t, &c->t[SLOT].t, &c->t[BT].t,
      c->mode == 1 ? tp(c, SPEC) : NULL, c->mode == 1 ? tp(c, ACC) : NULL, c->ns, c->nq,
      c->bs, ws, pl);
}
FZ_NATIVE_EXEC(exec, llmk_advance_step)

static int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? (int64_t)((uint64_t)a * (uint64_t)b) : r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_reader r = {data, size, 0};
  static call c;
  memset(&c, 0, sizeof c);
  fz_begin();
  c.mode = fz_u8(&r) % 3;
  c.ns = fz_int(&r);
  c.nq = fz_bool(&r) ? fz_int(&r) : c.ns;
  c.bs = fz_int(&r);
  int64_t mb = fz_int(&r);
  int64_t S = c.mode == 1 ? fz_int(&r) : 0;
  int64_t T = (int64_t)((uint64_t)S + 1);
  int64_t rows = c.mode == 1 ? mul(c.ns, T) : c.ns;
  int64_t s_bt[2] = {c.ns, mb};
  fz_tensor_new(&r, &c.t[BT], idx_dt, 2, 2, s_bt);
  int64_t s_samp[2] = {c.mode == 1 ? c.ns : c.nq, c.mode == 1 ? T : 1};
  fz_tensor_new(&r, &c.t[SAMP], idx_dt, 2, fz_bool(&r) && c.mode != 1 ? 1 : 2, s_samp);
  int64_t s_rows[1] = {rows};
  fz_tensor_new(&r, &c.t[SEQ], idx_dt, 2, 1, s_rows);
  fz_tensor_new(&r, &c.t[POS], idx_dt, 2, 1, s_rows);
  fz_tensor_new(&r, &c.t[TOK], idx_dt, 2, 1, s_rows);
  fz_tensor_new(&r, &c.t[SLOT], idx_dt, 2, 1, s_rows);
  if (c.mode == 1) {
    int64_t s_spec[2] = {c.ns, S};
    if (fz_u8(&r) != 0xAA) fz_tensor_new(&r, &c.t[SPEC], idx_dt, 2, 2, s_spec);
    int64_t s_acc[1] = {c.ns};
    if (fz_u8(&r) != 0xAA) fz_tensor_new(&r, &c.t[ACC], idx_dt, 2, 1, s_acc);
  }
  int64_t bs = c.bs > 0 ? c.bs : 1, mbv = mb > 0 ? mb : 1;
  fz_fill_index(&r, &c.t[BT], 64);
  fz_fill_index(&r, &c.t[SAMP], 100);
  if (c.mode == 1) {
    fz_fill_index(&r, &c.t[POS], mul(bs, mbv));
    fz_fill_index(&r, &c.t[SPEC], 100);
    fz_fill_index(&r, &c.t[ACC], T > 0 ? T : 1);
  } else {
    fz_fill_index(&r, &c.t[SEQ], mul(bs, mbv));
  }
  fz_op op = {plan, exec, fz_plan_destroy, &c, "advance_step"};
  fz_run(&r, &op);
  return 0;
}
