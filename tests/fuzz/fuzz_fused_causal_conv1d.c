/* SPDX-License-Identifier: Apache-2.0 */
/* fused_causal_conv1d: 2-D varlen x with query_start_loc and 3-D x, cache indices, APC
 * (block tables of lines), MTP (num_accepted_tokens), conv_mode, residual, bias,
 * activation; index values at the edges. The v2 entry (opts bits 32-128): HEAD
 * alignment, has_initial_state, cache_seqlens, with the strides the reader picks. */
#include <string.h>

#include "fuzz_common.h"

static const llmk_dtype x_dt[] = {LLMK_F32, LLMK_F16, LLMK_BF16};
static const llmk_dtype idx_dt[] = {LLMK_I32, LLMK_I64};

enum { X, W, CS, QSL, CI, NACC, NCT, BF, BL, ISI, BIAS, HIS, CSL, NT_ };
typedef struct call {
  fz_tensor t[NT_];
  llmk_tensor *p[NT_];
  int64_t pad, mql, res, bsz, mode;
  int act;
  bool v2;
  llmk_causal_conv1d_options o;
} call;

static int plan(void *arg, size_t *ws, void **p) {
  call *c = arg;
  llmk_tensor **t = c->p;
  if (c->v2) {
    c->o.has_initial_state = t[HIS];
    c->o.cache_seqlens = t[CSL];
    return llmk_fused_causal_conv1d_v2_get_workspace_size(
        t[X], t[W], t[CS], t[QSL], t[CI], t[NACC], t[NCT], t[BF], t[BL], t[ISI], t[BIAS],
        c->pad, c->mql, c->res, c->bsz, c->mode, (llmk_activation)c->act, &c->o, ws,
        (llmk_plan **)p);
  }
  return llmk_fused_causal_conv1d_get_workspace_size(
      t[X], t[W], t[CS], t[QSL], t[CI], t[NACC], t[NCT], t[BF], t[BL], t[ISI], t[BIAS],
      c->pad, c->mql, c->res, c->bsz, c->mode, (llmk_activation)c->act, ws,
      (llmk_plan **)p);
}
FZ_NATIVE_EXEC(exec, llmk_fused_causal_conv1d)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_reader r = {data, size, 0};
  static call c;
  memset(&c, 0, sizeof c);
  fz_begin();
  llmk_tensor **t = c.p;
  bool three_d = fz_bool(&r);
  int64_t batch = fz_int(&r), dim = fz_int(&r), K = fz_int(&r), lines = fz_int(&r);
  int64_t C = fz_int(&r);
  /* 1 cache_indices, 2 nacc, 4 nct, 8 APC, 16 bias; v2: 32 HEAD, 64
   * has_initial_state, 128 cache_seqlens */
  uint8_t opts = fz_u8(&r);
  int64_t mb = (opts & 8) ? fz_int(&r) : 1;
  c.pad = fz_bool(&r) ? -1 : fz_int(&r);
  c.mql = fz_bool(&r) ? -1 : fz_int(&r);
  c.res = fz_range(&r, 0, 2);
  c.bsz = (opts & 8) ? fz_int(&r) : (fz_u8(&r) == 0x77 ? fz_int(&r) : 0);
  c.mode = fz_range(&r, 0, 2);
  c.act = (int)fz_range(&r, 0, 2);
  int64_t s[3];
  int64_t lens[64], T = 0, nb = batch > 0 && batch <= 64 ? batch : 0;
  if (three_d) {
    s[0] = batch, s[1] = fz_int(&r), s[2] = dim;
    t[X] = fz_tensor_new(&r, &c.t[X], x_dt, 3, 3, s);
  } else {
    for (int64_t i = 0; i < nb; i++) {
      lens[i] = fz_range(&r, 0, 9);
      T += lens[i];
    }
    s[0] = T, s[1] = dim;
    t[X] = fz_tensor_new(&r, &c.t[X], x_dt, 3, 2, s);
  }
  llmk_dtype xd = c.t[X].t.dtype, wdt[2] = {xd, LLMK_F32};
  s[0] = K, s[1] = dim;
  t[W] = fz_tensor_new(&r, &c.t[W], wdt, 2, 2, s);
  s[0] = lines, s[1] = C, s[2] = dim;
  t[CS] = fz_tensor_new(&r, &c.t[CS], &xd, 1, 3, s);
  if (!three_d || fz_u8(&r) == 0x33) {
    s[0] = (int64_t)((uint64_t)batch + 1);
    t[QSL] = fz_tensor_new(&r, &c.t[QSL], idx_dt, 2, 1, s);
    int64_t acc = 0;
    fz_set_int(&c.t[QSL], 0, 0);
    for (int64_t i = 0; i < nb; i++) fz_set_int(&c.t[QSL], i + 1, acc += lens[i]);
    if (fz_u8(&r) == 0x44) fz_fill_index(&r, &c.t[QSL], T + 1);
  }
  s[0] = batch, s[1] = mb;
  if (opts & 1) {
    t[CI] = fz_tensor_new(&r, &c.t[CI], idx_dt, 2, (opts & 8) ? 2 : 1, s);
    fz_fill_index(&r, &c.t[CI], lines);
  }
  if (opts & 2) {
    t[NACC] = fz_tensor_new(&r, &c.t[NACC], idx_dt, 2, 1, s);
    fz_fill_index(&r, &c.t[NACC], 4);
  }
  if (opts & 4) {
    t[NCT] = fz_tensor_new(&r, &c.t[NCT], idx_dt, 2, 1, s);
    fz_fill_index(&r, &c.t[NCT], 8);
  }
  if (opts & 8) {
    t[BF] = fz_tensor_new(&r, &c.t[BF], idx_dt, 2, 1, s);
    fz_fill_index(&r, &c.t[BF], mb);
    t[BL] = fz_tensor_new(&r, &c.t[BL], idx_dt, 2, 1, s);
    fz_fill_index(&r, &c.t[BL], mb);
    t[ISI] = fz_tensor_new(&r, &c.t[ISI], idx_dt, 2, 1, s);
    fz_fill_index(&r, &c.t[ISI], mb);
  }
  if (opts & 16) {
    s[0] = dim;
    t[BIAS] = fz_tensor_new(&r, &c.t[BIAS], wdt, 2, 1, s);
  }
  c.v2 = (opts & (32 | 64 | 128)) != 0;
  c.o.struct_size = sizeof c.o;
  c.o.state_align = (opts & 32) ? LLMK_CONV_STATE_HEAD : LLMK_CONV_STATE_TAIL;
  s[0] = batch;
  if (opts & 64) {
    static const llmk_dtype his_dt[] = {LLMK_U8, LLMK_I32};
    t[HIS] = fz_tensor_new(&r, &c.t[HIS], his_dt, 2, 1, s);
    fz_fill_index(&r, &c.t[HIS], 2);
  }
  if (opts & 128) {
    t[CSL] = fz_tensor_new(&r, &c.t[CSL], idx_dt, 2, 1, s);
    fz_fill_index(&r, &c.t[CSL], 3 * (C > 0 && C < 64 ? C : 1));
  }
  fz_op op = {plan, exec, fz_plan_destroy, &c, "fused_causal_conv1d"};
  fz_run(&r, &op);
  return 0;
}
