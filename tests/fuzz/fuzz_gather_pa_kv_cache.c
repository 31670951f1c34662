/* SPDX-License-Identifier: Apache-2.0 */
/* gather_pa_kv_cache: every layout, K-only and K/V, fp8 dequantization with scales,
 * block tables and sequence lengths at the edges, outputs viewing other tensors. */
#include <string.h>

#include "fuzz_kv_common.h"

enum { KC, VC, BT, SEQ, KS, VS, KO, VO, NT_ };
typedef struct call {
  fz_tensor t[NT_];
  llmk_tensor *p[NT_];
  int layout;
} call;

static int plan(void *arg, size_t *ws, void **p) {
  call *c = arg;
  return llmk_gather_pa_kv_cache_get_workspace_size(
      c->p[KC], c->p[VC], c->p[BT], c->p[SEQ], c->p[KS], c->p[VS], c->p[KO], c->p[VO],
      (llmk_kv_layout)c->layout, ws, (llmk_plan **)p);
}
FZ_NATIVE_EXEC(exec, llmk_gather_pa_kv_cache)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_reader r = {data, size, 0};
  static call c;
  memset(&c, 0, sizeof c);
  fz_begin();
  c.layout = kv_layout(&r);
  int64_t B = fz_int(&r), H = fz_int(&r), Dk = fz_int(&r), Dv = fz_int(&r);
  int64_t nb = fz_int(&r), bs = fz_int(&r), mb = fz_int(&r);
  int64_t s[LLMK_MAX_RANK];
  /* the output dtype, then each cache's */
  llmk_dtype odt = kv_src_dt[fz_u8(&r) % 7];
  bool has_v = fz_u8(&r) % 4 != 0;
  llmk_dtype kcd = kv_cache_dtype(&r, odt);
  int rk = kv_cache_shape(c.layout, false, kcd, nb, bs, H, Dk, s);
  c.p[KC] = fz_tensor_new(&r, &c.t[KC], &kcd, 1, rk, s);
  if (has_v) {
    llmk_dtype vcd = kv_cache_dtype(&r, odt);
    rk = kv_cache_shape(c.layout, true, vcd, nb, bs, H, Dv, s);
    c.p[VC] = fz_tensor_new(&r, &c.t[VC], &vcd, 1, rk, s);
  }
  s[0] = B, s[1] = mb;
  c.p[BT] = fz_tensor_new(&r, &c.t[BT], kv_idx_dt, 2, 2, s);
  fz_fill_index(&r, &c.t[BT], nb);
  s[0] = B;
  c.p[SEQ] = fz_tensor_new(&r, &c.t[SEQ], kv_idx_dt, 2, 1, s);
  /* sequence lengths first, so that key_out can have their sum as its rows */
  int64_t cap, sum = 0;
  if (__builtin_mul_overflow(mb > 0 ? mb : 0, bs > 0 && bs < 1024 ? bs : 1, &cap) ||
      cap == INT64_MAX)
    cap = INT64_MAX - 1;
  int64_t n = fz_numel(&c.t[SEQ].t);
  for (int64_t i = 0; i < n && i < 4096; i++) {
    int64_t v = fz_index(&r, cap + 1);
    fz_set_int(&c.t[SEQ], i, v);
    if (v > 0 && !__builtin_add_overflow(sum, v, &sum)) continue;
  }
  c.p[KS] = kv_scale(&r, &c.t[KS], H);
  c.p[VS] = kv_scale(&r, &c.t[VS], H);
  s[0] = sum, s[1] = H, s[2] = Dk;
  c.p[KO] = fz_tensor_new(&r, &c.t[KO], &odt, 1, 3, s);
  if (has_v || fz_u8(&r) == 0x5A) {
    s[2] = Dv;
    c.p[VO] = fz_tensor_new(&r, &c.t[VO], &odt, 1, 3, s);
  }
  fz_op op = {plan, exec, fz_plan_destroy, &c, "gather_pa_kv_cache"};
  fz_run(&r, &op);
  return 0;
}
