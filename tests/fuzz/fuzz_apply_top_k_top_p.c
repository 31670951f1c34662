/* SPDX-License-Identifier: Apache-2.0 */
/* apply_top_k_top_p: the apply, min_p, with_sorted and sample entry points, with p/min_p
 * values at the edges (0, 1, outside, NaN), k at the edges, in-place and overlapping
 * outputs, sorted inputs that are (or are not) sorted and permutations. */
#include <string.h>

#include "fuzz_common.h"

static const llmk_dtype lg_dt[] = {LLMK_F32, LLMK_F16, LLMK_BF16};
static const llmk_dtype idx_dt[] = {LLMK_I32, LLMK_I64};
static const llmk_dtype i32_dt[] = {LLMK_I32};
static const llmk_dtype i64_dt[] = {LLMK_I64};
static const llmk_dtype f32_dt[] = {LLMK_F32};

enum { LG, P, K, MINP, OUT, KEPT, SV, SI, TEMP, SEED, OFF, TOK, NT_ };
typedef struct call {
  fz_tensor t[NT_];
  llmk_tensor *p[NT_];
  int entry;
} call;

static int plan(void *arg, size_t *ws, void **p) {
  call *c = arg;
  llmk_plan **pl = (llmk_plan **)p;
  llmk_tensor **t = c->p;
  switch (c->entry) {
    case 0:
      return llmk_apply_top_k_top_p_get_workspace_size(t[LG], t[P], t[K], t[OUT], ws, pl);
    case 1:
      return llmk_apply_top_k_top_p_min_p_get_workspace_size(t[LG], t[P], t[K], t[MINP],
                                                             t[OUT], t[KEPT], ws, pl);
    case 2:
      return llmk_apply_top_k_top_p_with_sorted_get_workspace_size(
          t[SV], t[SI], t[P], t[K], t[LG], t[OUT], ws, pl);
    default:
      return llmk_sample_top_k_top_p_get_workspace_size(
          t[LG], t[P], t[K], t[MINP], t[TEMP], t[SEED], t[OFF], t[TOK], ws, pl);
  }
}
FZ_NATIVE_EXEC(exec, llmk_apply_top_k_top_p)

/* Probabilities: mostly in [0, 1], now and then outside or NaN. */
static void fill_prob(fz_reader *r, fz_tensor *ft) {
  int64_t n = fz_numel(&ft->t);
  for (int64_t i = 0; i < n && i < 4096; i++) {
    uint8_t b = fz_u8(r);
    float v = b <= 0xF0   ? (float)b / 240.0f
              : b == 0xF1 ? -0.25f
              : b == 0xF2 ? 1.5f
                          : 0.0f / 0.0f;
    fz_set_float(ft, i, v);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_reader r = {data, size, 0};
  static call c;
  memset(&c, 0, sizeof c);
  fz_begin();
  c.entry = fz_u8(&r) % 4;
  int64_t B = fz_int(&r), V = fz_int(&r);
  int64_t s2[2] = {B, V}, s1[1] = {B};
  llmk_tensor **t = c.p;
  if (c.entry == 2) {
    uint8_t how = fz_u8(&r);
    t[SV] = fz_tensor_new(&r, &c.t[SV], lg_dt, 3, 2, s2);
    t[SI] = fz_tensor_new(&r, &c.t[SI], i32_dt, 1, 2, s2);
    int64_t n = fz_numel(t[SV]), v = V > 0 ? V : 1;
    for (int64_t i = 0; i < n && i < 65536; i++) {
      int64_t j = i % v; /* ascending values, a permutation of indices */
      if (how & 1)
        fz_set_float(&c.t[SV], i, (float)(j / ((how >> 2 & 3) + 1)) * 0.5f - 2.0f);
      if (how & 2) fz_set_int(&c.t[SI], i, (how & 0x10) ? v - 1 - j : j);
    }
    llmk_dtype d = c.t[SV].t.dtype;
    if (fz_bool(&r)) t[LG] = fz_tensor_new(&r, &c.t[LG], &d, 1, 2, s2);
  } else {
    t[LG] = fz_tensor_new(&r, &c.t[LG], lg_dt, 3, 2, s2);
  }
  llmk_dtype ldt = c.entry == 2 ? c.t[SV].t.dtype : c.t[LG].t.dtype;
  llmk_dtype pdt[2] = {ldt, LLMK_F32};
  t[P] = fz_tensor_opt(&r, &c.t[P], pdt, 2, 1, s1, 3);
  if (t[P]) fill_prob(&r, &c.t[P]);
  t[K] = fz_tensor_opt(&r, &c.t[K], idx_dt, 2, 1, s1, 3);
  if (t[K]) fz_fill_index(&r, &c.t[K], V < INT64_MAX ? V + 1 : V);
  if (c.entry == 1 || c.entry == 3) {
    t[MINP] = fz_tensor_opt(&r, &c.t[MINP], pdt, 2, 1, s1, 3);
    if (t[MINP]) fill_prob(&r, &c.t[MINP]);
  }
  if (c.entry == 3) {
    t[TEMP] = fz_tensor_opt(&r, &c.t[TEMP], f32_dt, 1, 1, s1, 3);
    if (t[TEMP]) fill_prob(&r, &c.t[TEMP]);
    t[SEED] = fz_tensor_new(&r, &c.t[SEED], i64_dt, 1, 1, s1);
    t[OFF] = fz_tensor_opt(&r, &c.t[OFF], i64_dt, 1, 1, s1, 3);
    t[TOK] = fz_tensor_new(&r, &c.t[TOK], idx_dt, 2, 1, s1);
  } else {
    if (c.entry != 2 && fz_u8(&r) < 0x40)
      t[OUT] = t[LG]; /* in place */
    else
      t[OUT] = fz_tensor_new(&r, &c.t[OUT], &ldt, 1, 2, s2);
    if (c.entry == 1) t[KEPT] = fz_tensor_opt(&r, &c.t[KEPT], idx_dt, 2, 1, s1, 2);
  }
  fz_op op = {plan, exec, fz_plan_destroy, &c, "apply_top_k_top_p"};
  fz_run(&r, &op);
  return 0;
}
