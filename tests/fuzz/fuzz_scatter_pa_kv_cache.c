/* SPDX-License-Identifier: Apache-2.0 */
/* scatter_pa_kv_cache: every layout, K-only and K/V, fp8 quantization with scales,
 * slot_mapping values at the edges, tensors viewing each other's memory. */
#include <string.h>

#include "fuzz_kv_common.h"

enum { KEY, VAL, KC, VC, SLOT, KS, VS, NT_ };
typedef struct call {
  fz_tensor t[NT_];
  llmk_tensor *p[NT_];
  int layout;
} call;

static int plan(void *arg, size_t *ws, void **p) {
  call *c = arg;
  return llmk_scatter_pa_kv_cache_get_workspace_size(
      c->p[KEY], c->p[VAL], c->p[KC], c->p[VC], c->p[SLOT], c->p[KS], c->p[VS],
      (llmk_kv_layout)c->layout, ws, (llmk_plan **)p);
}
FZ_NATIVE_EXEC(exec, llmk_scatter_pa_kv_cache)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_reader r = {data, size, 0};
  static call c;
  memset(&c, 0, sizeof c);
  fz_begin();
  c.layout = kv_layout(&r);
  int64_t T = fz_int(&r), H = fz_int(&r), Dk = fz_int(&r), Dv = fz_int(&r);
  int64_t nb = fz_int(&r), bs = fz_int(&r);
  int64_t s[LLMK_MAX_RANK] = {T, H, Dk};
  c.p[KEY] = fz_tensor_new(&r, &c.t[KEY], kv_src_dt, 7, 3, s);
  llmk_dtype sdt = c.t[KEY].t.dtype;
  bool has_v = fz_u8(&r) % 4 != 0;
  if (has_v) {
    s[2] = Dv;
    llmk_dtype vdt = sdt;
    c.p[VAL] = fz_tensor_new(&r, &c.t[VAL], &vdt, 1, 3, s);
  }
  llmk_dtype kcd = kv_cache_dtype(&r, sdt);
  int rk = kv_cache_shape(c.layout, false, kcd, nb, bs, H, Dk, s);
  c.p[KC] = fz_tensor_new(&r, &c.t[KC], &kcd, 1, rk, s);
  if (has_v || fz_u8(&r) == 0x5A) {
    llmk_dtype vcd = kv_cache_dtype(&r, sdt);
    rk = kv_cache_shape(c.layout, true, vcd, nb, bs, H, Dv, s);
    c.p[VC] = fz_tensor_new(&r, &c.t[VC], &vcd, 1, rk, s);
  }
  s[0] = T;
  c.p[SLOT] = fz_tensor_new(&r, &c.t[SLOT], kv_idx_dt, 2, 1, s);
  int64_t slots;
  if (__builtin_mul_overflow(nb > 0 ? nb : 0, bs > 0 ? bs : 0, &slots)) slots = INT64_MAX;
  fz_fill_index(&r, &c.t[SLOT], slots);
  c.p[KS] = kv_scale(&r, &c.t[KS], H);
  c.p[VS] = kv_scale(&r, &c.t[VS], H);
  fz_op op = {plan, exec, fz_plan_destroy, &c, "scatter_pa_kv_cache"};
  fz_run(&r, &op);
  return 0;
}
