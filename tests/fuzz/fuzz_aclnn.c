/* SPDX-License-Identifier: Apache-2.0 */
/* The aclnn layer: aclrtMalloc'd tensors (views flush with their block's end, views at
 * element offsets, several views in one block), each entry point with decoded tensors
 * and attributes, and the misuse the layer promises to detect (docs/aclnn.md): running a
 * consumed or destroyed executor, running after a block was freed, freeing a block twice
 * or by an interior pointer. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_advance_step.h"
#include "aclnnop/aclnn_advance_step_v2.h"
#include "aclnnop/aclnn_apply_top_k_top_p.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d_v2.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "aclnnop/aclnn_top_k_top_p_sample_v2.h"
#include "fuzz_common.h"

#define NT_ 12
typedef struct call {
  int entry;
  fz_tensor t[NT_];
  aclTensor *a[NT_];
  int64_t i[10]; /* attributes */
  char *cache_mode, *scatter_mode;
  aclIntArray *strides, *offsets;
} call;

static void *acl_alloc(size_t n, size_t *n_out) {
  size_t sz = (n + 63) / 64 * 64;
  if (sz == 0) sz = 64;
  void *p = NULL;
  if (aclrtMalloc(&p, sz, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return NULL;
  *n_out = sz;
  return p;
}
static void acl_free(void *p) {
  aclrtFree(p); /* 207002 for a block the input freed already: nothing freed */
}

static aclDataType acl_dt(llmk_dtype d) {
  switch (d) {
    case LLMK_F32:
      return ACL_FLOAT;
    case LLMK_F16:
      return ACL_FLOAT16;
    case LLMK_BF16:
      return ACL_BF16;
    case LLMK_I8:
      return ACL_INT8;
    case LLMK_U8:
      return ACL_UINT8;
    case LLMK_I32:
      return ACL_INT32;
    case LLMK_I64:
      return ACL_INT64;
    case LLMK_FP8_E4M3FN:
      return ACL_FLOAT8_E4M3FN;
    case LLMK_FP8_E5M2:
      return ACL_FLOAT8_E5M2;
    default:
      return ACL_DOUBLE;
  }
}

/* The aclTensor of a decoded tensor: tensorData at the view, or at its block's start
 * with the view's element offset. */
static aclTensor *to_acl(fz_reader *r, fz_tensor *ft, bool present) {
  if (!present) return NULL;
  llmk_tensor *t = &ft->t;
  int64_t dims[25], strides[25];
  uint64_t n = t->rank < 0 ? (uint64_t)(int64_t)t->rank : (uint64_t)t->rank;
  for (int i = 0; i < 25; i++) {
    dims[i] = i < LLMK_MAX_RANK ? t->shape[i] : 1;
    strides[i] = i < LLMK_MAX_RANK ? t->strides[i] : 1;
  }
  if (t->rank > LLMK_MAX_RANK)
    for (int i = LLMK_MAX_RANK; i < 25; i++) dims[i] = 1, strides[i] = 1;
  void *data = t->data;
  int64_t off = 0;
  char *blk = fz_block_of(ft);
  size_t es = llmk_dtype_size(t->dtype);
  if (blk && data && es && (fz_u8(r) & 1) && ((char *)data - blk) % (int64_t)es == 0) {
    off = ((char *)data - blk) / (int64_t)es;
    data = blk;
  }
  return aclCreateTensor(dims, n, acl_dt(t->dtype), strides, off, ACL_FORMAT_ND, NULL, 0,
                         data);
}

static int plan(void *arg, size_t *ws, void **p) {
  call *c = arg;
  aclTensor **a = c->a;
  uint64_t w = 0;
  aclOpExecutor **ex = (aclOpExecutor **)p;
  int st;
  switch (c->entry) {
    case 0:
      st = aclnnApplyTopKTopPGetWorkspaceSize(a[0], a[1], a[2], a[3], &w, ex);
      break;
    case 1:
      st = aclnnAdvanceStepGetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], a[5], c->i[0],
                                            c->i[1], c->i[2], &w, ex);
      break;
    case 2:
      st = aclnnAdvanceStepV2GetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                              a[7], c->i[0], c->i[1], c->i[2], &w, ex);
      break;
    case 3:
      st = aclnnInplaceFusedCausalConv1dGetWorkspaceSize(
          a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
          c->i[0], c->i[1], c->i[2], c->i[3], c->i[4], c->i[5], c->i[6], &w, ex);
      break;
    case 4:
      st = aclnnInplaceFusedCausalConv1dV2GetWorkspaceSize(
          a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
          c->i[0], c->i[1], c->i[2], c->i[3], c->i[4], c->i[5], c->i[6], c->i[7], &w, ex);
      break;
    case 6:
      st = aclnnTopKTopPSampleV2GetWorkspaceSize(
          a[0], a[1], a[2], a[3], a[4], 1e-8, c->i[0] & 1, c->i[1], c->i[2],
          (c->i[0] & 2) != 0, (c->i[0] & 4) != 0, a[5], a[6], a[7], a[8], &w, ex);
      break;
    default:
      st = aclnnScatterPaKvCacheGetWorkspaceSize(a[0], a[1], a[2], a[3], a[4], NULL, NULL,
                                                 NULL, c->cache_mode, c->scatter_mode,
                                                 c->strides, c->offsets, &w, ex);
  }
  *ws = (size_t)w;
  return st;
}

static aclrtStream g_stream[3];
static int exec(void *arg, void *ws, size_t n, void *p, int which) {
  call *c = arg;
  setenv("LLMK_NUM_THREADS", which == 2 ? "2" : "1", 1);
  if (which && !g_stream[which] && aclrtCreateStream(&g_stream[which]) != ACL_SUCCESS)
    fz_fail("aclrtCreateStream failed");
  aclrtStream s = g_stream[which];
  aclOpExecutor *ex = p;
  switch (c->entry) {
    case 0:
      return aclnnApplyTopKTopP(ws, n, ex, s);
    case 1:
      return aclnnAdvanceStep(ws, n, ex, s);
    case 2:
      return aclnnAdvanceStepV2(ws, n, ex, s);
    case 3:
      return aclnnInplaceFusedCausalConv1d(ws, n, ex, s);
    case 4:
      return aclnnInplaceFusedCausalConv1dV2(ws, n, ex, s);
    case 6:
      return aclnnTopKTopPSampleV2(ws, n, ex, s);
    default:
      return aclnnScatterPaKvCache(ws, n, ex, s);
  }
}
static void destroy(void *arg, void *p) {
  (void)arg;
  aclDestroyAclOpExecutor(p);
}

static const llmk_dtype half_dt[] = {LLMK_F16, LLMK_BF16, LLMK_F32};
static const llmk_dtype i64_dt[] = {LLMK_I64, LLMK_I32};
static const llmk_dtype i32_dt[] = {LLMK_I32, LLMK_I64};

static void decode(fz_reader *r, call *c, bool *present) {
  fz_tensor *t = c->t;
  int64_t s[4];
  switch (c->entry) {
    case 0: { /* logits, p, k, out */
      int64_t B = fz_int(r), V = fz_int(r);
      s[0] = B, s[1] = V;
      fz_tensor_new(r, &t[0], half_dt, 3, 2, s);
      llmk_dtype d = t[0].t.dtype;
      present[0] = present[3] = true;
      present[1] = fz_u8(r) % 3 != 0;
      present[2] = fz_u8(r) % 3 != 0;
      if (present[1]) fz_tensor_new(r, &t[1], &d, 1, 1, s);
      for (int64_t i = 0; present[1] && i < B && i < 4096; i++)
        fz_set_float(&t[1], i, (float)fz_u8(r) / 200.0f);
      if (present[2]) fz_tensor_new(r, &t[2], i32_dt, 2, 1, s);
      if (present[2]) fz_fill_index(r, &t[2], V < INT64_MAX ? V + 1 : V);
      fz_tensor_new(r, &t[3], &d, 1, 2, s);
      break;
    }
    case 1:
    case 2: { /* tokens, sampled, positions, seq_lens, slots, block_tables, spec, acc */
      int64_t ns = fz_int(r), nq = fz_int(r), bs = fz_int(r), mb = fz_int(r);
      bool spec = c->entry == 2 && fz_bool(r);
      int64_t S = spec ? fz_int(r) : 0, T = (int64_t)((uint64_t)S + 1), rows = ns;
      if (spec && __builtin_mul_overflow(ns, T, &rows)) rows = INT64_MAX;
      c->i[0] = ns, c->i[1] = nq, c->i[2] = bs;
      s[0] = ns, s[1] = mb;
      fz_tensor_new(r, &t[5], i64_dt, 2, 2, s);
      fz_fill_index(r, &t[5], 32);
      s[0] = rows;
      for (int k = 0; k < 5; k++) {
        if (k == 1) {
          int64_t s2[2] = {spec ? ns : nq, spec ? T : 1};
          fz_tensor_new(r, &t[1], i64_dt, 2, 2, s2);
          fz_fill_index(r, &t[1], 50);
        } else {
          fz_tensor_new(r, &t[k], i64_dt, 2, 1, s);
        }
        present[k] = true;
      }
      present[5] = true;
      int64_t cap;
      if (__builtin_mul_overflow(bs > 0 ? bs : 1, mb > 0 && mb < 4096 ? mb : 1, &cap))
        cap = INT64_MAX;
      fz_fill_index(r, spec ? &t[2] : &t[3], cap);
      if (spec) {
        int64_t s2[2] = {ns, S};
        fz_tensor_new(r, &t[6], i64_dt, 2, 2, s2);
        fz_tensor_new(r, &t[7], i64_dt, 2, 1, s2);
        fz_fill_index(r, &t[7], T);
        present[6] = present[7] = true;
      }
      break;
    }
    case 3:
    case 4: { /* x weight convStates qsl cacheIndices ism bias nacc nct bf bl isi */
      bool three = fz_bool(r);
      int64_t batch = fz_int(r), dim = fz_int(r), lines = fz_int(r), C = fz_int(r);
      int64_t lens[64], T = 0, nb = batch > 0 && batch <= 64 ? batch : 0;
      if (three) {
        s[0] = batch, s[1] = fz_int(r), s[2] = dim;
        fz_tensor_new(r, &t[0], half_dt, 2, 3, s);
      } else {
        for (int64_t i = 0; i < nb; i++) T += lens[i] = fz_range(r, 1, 8);
        s[0] = T, s[1] = dim;
        fz_tensor_new(r, &t[0], half_dt, 2, 2, s);
      }
      llmk_dtype d = t[0].t.dtype;
      s[0] = 3, s[1] = dim;
      fz_tensor_new(r, &t[1], &d, 1, 2, s);
      s[0] = lines, s[1] = C, s[2] = dim;
      fz_tensor_new(r, &t[2], &d, 1, 3, s);
      present[0] = present[1] = present[2] = true;
      if (!three) {
        s[0] = (int64_t)((uint64_t)batch + 1);
        fz_tensor_new(r, &t[3], i32_dt, 2, 1, s);
        int64_t acc = 0;
        fz_set_int(&t[3], 0, 0);
        for (int64_t i = 0; i < nb; i++) fz_set_int(&t[3], i + 1, acc += lens[i]);
        present[3] = true;
      }
      uint8_t opts = fz_u8(r);
      s[0] = batch;
      if (opts & 1) {
        fz_tensor_new(r, &t[4], i32_dt, 2, 1, s);
        fz_fill_index(r, &t[4], lines);
        present[4] = true;
      }
      if (opts & 2) {
        fz_tensor_new(r, &t[7], i32_dt, 2, 1, s);
        fz_fill_index(r, &t[7], 4);
        present[7] = true;
      }
      if (opts & 4) {
        fz_tensor_new(r, &t[8], i32_dt, 2, 1, s);
        fz_fill_index(r, &t[8], 8);
        present[8] = true;
      }
      c->i[0] = fz_range(r, 0, 3);           /* activationMode */
      c->i[1] = fz_bool(r) ? -1 : fz_int(r); /* padSlotId */
      c->i[2] = fz_range(r, 0, 2);           /* runMode */
      c->i[3] = three ? -1 : fz_int(r);      /* maxQueryLen */
      c->i[4] = fz_range(r, 0, 2);           /* residualConnection */
      c->i[5] = fz_bool(r) ? 0 : fz_int(r);  /* blockSize */
      c->i[6] = fz_range(r, 0, 1);           /* convMode */
      c->i[7] = fz_int(r);                   /* maxDraftTokens */
      break;
    }
    case 6: { /* logits topK topP q minPs; selectIdx topKPSelect logitsIdx sortMasked */
      static const llmk_dtype f32[] = {LLMK_F32, LLMK_F16};
      int64_t B = fz_int(r), V = fz_int(r);
      s[0] = B, s[1] = V;
      fz_tensor_new(r, &t[0], half_dt, 3, 2, s);
      llmk_dtype d = t[0].t.dtype;
      fz_tensor_new(r, &t[1], i32_dt, 2, 1, s);
      fz_fill_index(r, &t[1], V < INT64_MAX - 2 ? V + 2 : INT64_MAX);
      fz_tensor_new(r, &t[2], &d, 1, 1, s);
      for (int64_t i = 0; i < B && i < 4096; i++)
        fz_set_float(&t[2], i, (float)fz_u8(r) / 200.0f);
      present[3] = fz_u8(r) % 3 != 0;
      present[4] = fz_u8(r) % 3 != 0;
      if (present[3]) fz_tensor_new(r, &t[3], f32, 2, 2, s);
      if (present[4]) fz_tensor_new(r, &t[4], &d, 1, 1, s);
      for (int64_t i = 0; present[4] && i < B && i < 4096; i++)
        fz_set_float(&t[4], i, (float)fz_u8(r) / 200.0f);
      fz_tensor_new(r, &t[5], i64_dt, 2, 1, s);
      fz_tensor_new(r, &t[6], f32, 2, 2, s);
      fz_tensor_new(r, &t[7], i64_dt, 2, 2, s);
      fz_tensor_new(r, &t[8], f32, 2, 2, s);
      present[0] = present[1] = present[2] = true;
      for (int k = 5; k < 9; k++) present[k] = true;
      c->i[0] = fz_u8(r);  /* isNeedLogits, inputIsLogits, sampleResult */
      c->i[1] = fz_int(r); /* topKGuess */
      c->i[2] = fz_bool(r) ? 1024 : fz_int(r); /* ksMax */
      break;
    }
    default: { /* key keyCache slotMapping value valueCache */
      static char *cm[] = {NULL, "Norm", "NHSD", "PA_NZ", "norm"};
      static char *sm[] = {NULL, "None", "Nct", "Rope", "NHSD"};
      c->cache_mode = cm[fz_u8(r) % 5];
      c->scatter_mode = sm[fz_u8(r) % 5];
      int64_t T = fz_int(r), H = fz_int(r), D = fz_int(r), nb = fz_int(r), bs = fz_int(r);
      int64_t ks[3] = {T, H, D};
      llmk_dtype kdt[] = {LLMK_F16, LLMK_BF16, LLMK_I8};
      /* "NHSD" is a scatter mode (cacheMode "NHSD" is refused) */
      bool nz = c->cache_mode == cm[3];
      bool nhsd = c->scatter_mode == sm[4] && !nz;
      int64_t es = 2, ld;
      /* caches first, so that the sources and slots can view their blocks */
      if (nz) {
        ld = 32 / es;
        int64_t hd;
        if (__builtin_mul_overflow(H, D, &hd)) hd = INT64_MAX;
        s[0] = nb, s[1] = hd / ld, s[2] = bs, s[3] = ld;
      } else if (nhsd) {
        s[0] = nb, s[1] = H, s[2] = bs, s[3] = D;
      } else {
        s[0] = nb, s[1] = bs, s[2] = H, s[3] = D;
      }
      fz_tensor_new(r, &t[1], kdt, 3, 4, s);
      llmk_dtype d = t[1].t.dtype;
      fz_tensor_new(r, &t[0], &d, 1, 3, ks);
      int64_t ss[1] = {T};
      fz_tensor_new(r, &t[2], i64_dt, 2, 1, ss);
      int64_t slots;
      if (__builtin_mul_overflow(nb > 0 ? nb : 0, bs > 0 ? bs : 0, &slots))
        slots = INT64_MAX;
      fz_fill_index(r, &t[2], slots);
      present[0] = present[1] = present[2] = true;
      if (fz_u8(r) % 3) {
        fz_tensor_new(r, &t[4], &d, 1, 4, s);
        fz_tensor_new(r, &t[3], &d, 1, 3, ks);
        present[3] = present[4] = true;
      }
      if (c->scatter_mode == sm[2]) {
        int64_t v[2] = {fz_int(r), fz_int(r)}, o[2] = {fz_int(r), fz_int(r)};
        c->strides = aclCreateIntArray(v, 2);
        c->offsets = aclCreateIntArray(o, 2);
      }
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool init;
  if (!init) {
    fz_set_allocator(acl_alloc, acl_free);
    init = true;
  }
  fz_reader r = {data, size, 0};
  static call c;
  memset(&c, 0, sizeof c);
  fz_begin();
  c.entry = fz_u8(&r) % 7;
  bool present[NT_] = {false};
  decode(&r, &c, present);
  for (int i = 0; i < NT_; i++) c.a[i] = to_acl(&r, &c.t[i], present[i]);
  fz_op op = {plan, exec, destroy, &c, "aclnn"};
  int st = fz_run(&r, &op);
  /* misuse the layer promises to detect */
  uint8_t m = fz_u8(&r);
  if (st == 0 && m % 4 != 0) {
    size_t ws = 0;
    void *ex = NULL;
    if (plan(&c, &ws, &ex) != 0) fz_fail("aclnn: phase 1 refused on a repeat");
    void *w = ws ? malloc(ws) : NULL;
    if (m % 4 == 1) { /* a consumed executor */
      exec(&c, w, ws, ex, 0);
      fz_snapshot();
      if (exec(&c, w, ws, ex, 0) != ACLNN_ERR_INNER_NULLPTR)
        fz_fail("aclnn: a consumed executor ran");
      fz_check_unchanged("aclnn", "a consumed executor wrote");
    } else if (m % 4 == 2) { /* a destroyed executor */
      aclDestroyAclOpExecutor(ex);
      fz_snapshot();
      if (exec(&c, w, ws, ex, 0) != ACLNN_ERR_INNER_NULLPTR)
        fz_fail("aclnn: a destroyed executor ran");
      fz_check_unchanged("aclnn", "a destroyed executor wrote");
    } else { /* a freed block: the first tensor's */
      char *blk = fz_block_of(&c.t[0]);
      /* an empty tensor touches nothing: its block is not checked; nor is a scatter whose
       * key or keyCacheRef is empty (and value, if given, or its cache): CANN's op_api
       * answers it with success and nothing to do before any check, and so does the layer
       */
      bool noop_call = c.entry == 5 &&
                       (fz_numel(&c.t[0].t) == 0 || fz_numel(&c.t[1].t) == 0) &&
                       (!present[3] || fz_numel(&c.t[3].t) == 0 || !present[4] ||
                        fz_numel(&c.t[4].t) == 0);
      if (blk && !noop_call && fz_numel(&c.t[0].t) > 0 && !c.t[0].big &&
          !c.t[0].overflow) {
        if (aclrtFree(blk + 1) == ACL_SUCCESS)
          fz_fail("aclnn: freed an interior pointer");
        if (aclrtFree(blk) != ACL_SUCCESS)
          fz_fail("aclnn: aclrtFree of a live block failed");
        if (aclrtFree(blk) == ACL_SUCCESS) fz_fail("aclnn: freed a block twice");
        if (exec(&c, w, ws, ex, 0) == 0)
          fz_fail("aclnn: entry %d ran on a freed block (tensor 0: %d-D, %lld elements)",
                  c.entry, (int)c.t[0].t.rank, (long long)fz_numel(&c.t[0].t));
      } else {
        aclDestroyAclOpExecutor(ex);
      }
    }
    free(w);
  }
  for (int i = 0; i < NT_; i++) aclDestroyTensor(c.a[i]);
  aclDestroyIntArray(c.strides);
  aclDestroyIntArray(c.offsets);
  return 0;
}
