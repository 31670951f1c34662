/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnScatterPaKvCache over llmk_scatter_pa_kv_cache: CANN's checks for an Atlas A2 in
 * CANN's order (its op_api: NULLs, 561103, an empty call a no-op, then ranks and dtypes,
 * 161002; its tiling: modes, then ranks, shapes and limits per template, 561002), then
 * the native op.
 *   cacheMode NULL, "" or "Norm": LLMK_KV_BLOCKS, caches [numBlocks, blockSize, H, D],
 *     with scatterMode NULL, "" or "None"; "Nct" (the key/value views re-strided by
 *     stridesOptional / offsetsOptional); "NHSD" (caches [numBlocks, H, blockSize, D]:
 *     the same layout over a view with dims 1 and 2 swapped; key and value of one
 *     dtype, head sizes of a multiple of 32 bytes, H <= 4095, one token's key and value
 *     within the 195584 bytes of unified buffer); "Alibi", "Rope", "Omni" (CANN's
 *     scenarios 4 and 5: caches [numBlocks, blockSize, 1, D], index tensors [B * H],
 *     seqLens [B]) over llmk_scatter_pa_kv_cache_compressed; see compressed() below.
 *   cacheMode "PA_NZ": LLMK_KV_NZ; scatterMode is not read (CANN's tiling ignores it);
 *     key and value may have different dtypes (an INT8 value only with an INT8 key).
 * Any other cacheMode or scatterMode, K-only calls in NHSD, PA_NZ or a compressed
 * mode, 4-D keys or values (scenario 3, an Ascend 910_95 form) and numBlocks *
 * blockSize < the number of tokens (every mode) are tiling errors, 561002. The
 * compress tensors must have slotMapping's dtype in every mode (CANN's op_api, 161002)
 * and are not read outside the compressed modes, as CANN's tiling ignores them there. */
#include <string.h>

#include "acl_internal.h"

/* CANN's header declares these without ACLNN_API; the library is built with hidden
 * visibility, so export them here. */
#pragma GCC visibility push(default)
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#pragma GCC visibility pop

/* The layout of aclIntArray in meta.cpp (no getter of the values exists). */
struct aclIntArray {
  uint64_t size;
  int64_t *values;
};

enum { KEY, KC, SLOT, VAL, VC, CLENS, COFF, SLENS, NT };

static const char OP[] = "aclnnScatterPaKvCache";
static const char *const NAMES[NT] = {"key",
                                      "keyCacheRef",
                                      "slotMapping",
                                      "value",
                                      "valueCacheRef",
                                      "compressLensOptional",
                                      "compressSeqOffsetOptional",
                                      "seqLensOptional"};

typedef struct scatter_attrs {
  llmk_kv_layout layout;
  int compress; /* llmk_kv_compress of "Alibi", "Rope", "Omni"; 0 otherwise */
} scatter_attrs;

static llmk_status scatter_plan(const llmk_tensor *const *t, const void *attrs,
                                size_t *workspace_size, llmk_plan **plan) {
  const scatter_attrs *a = attrs;
  if (a->compress)
    return llmk_scatter_pa_kv_cache_compressed_get_workspace_size(
        t[KEY], t[VAL], t[KC], t[VC], t[SLOT], t[CLENS], t[COFF], t[SLENS],
        (llmk_kv_compress)a->compress, workspace_size, plan);
  return llmk_scatter_pa_kv_cache_get_workspace_size(
      t[KEY], t[VAL], t[KC], t[VC], t[SLOT], NULL, NULL, a->layout, workspace_size, plan);
}

/* Every tensor is an input of CANN's op (the caches are "Ref" tensors). */
static const acl__op scatter_op = {
    OP, NT, 0, scatter_plan, llmk_scatter_pa_kv_cache, acl__map_status};

/* CANN's op_api answers a call whose key (or keyCacheRef) has no elements, and whose
 * value is absent or empty too, with success and nothing to do, before any other check.
 */
static const acl__op empty_op = {
    OP, NT, 0, acl__noop_plan, acl__noop_run, acl__map_status};

/* 0 when a dim is 0; a product past INT64_MAX saturates (it is only compared with 0) */
static int64_t numel(const aclTensor *t) {
  int64_t n = 1;
  for (uint64_t d = 0; d < t->view_rank; d++)
    if (t->view_dims[d] == 0) return 0;
  for (uint64_t d = 0; d < t->view_rank; d++)
    if (__builtin_mul_overflow(n, t->view_dims[d], &n)) return INT64_MAX;
  return n;
}

static bool is(const char *s, const char *lit) {
  return s && strcmp(s, lit) == 0;
}

/* "Nct": token stride and start offset of key (which = 0) or value (1). */
static aclnnStatus nct_view(const aclTensor *src, const aclIntArray *strides,
                            const aclIntArray *offsets, int which, aclTensor *out) {
  if (!strides || !offsets || strides->size != 2 || offsets->size != 2)
    return acl__fail(
        ACLNN_ERR_PARAM_INVALID, OP,
        "scatterMode \"Nct\" needs stridesOptional and offsetsOptional of 2 values");
  int64_t s = strides->values[which], o = offsets->values[which];
  if (s <= 0 || o < 0)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "\"Nct\" %s stride %lld must be > 0 and offset %lld >= 0",
                     which ? "value" : "key", (long long)s, (long long)o);
  *out = *src;
  out->strides[0] = s;
  if (__builtin_add_overflow(out->offset, o, &out->offset))
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "\"Nct\" offset %lld overflows",
                     (long long)o);
  return ACLNN_SUCCESS;
}

/* NULL, "" or `lit` */
static bool is_or_empty(const char *s, const char *lit) {
  return !s || !*s || strcmp(s, lit) == 0;
}

static bool dtype_ok(aclDataType dt) {
  return dt == ACL_FLOAT16 || dt == ACL_BF16 || dt == ACL_INT8;
}

/* a * b, or INT64_MAX where that overflows (operands >= 0) */
static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* The unified buffer of an Atlas A2 core less CANN's 1 KiB reserve: NHSD's limit on one
 * token's key and value. */
#define NHSD_UB_BYTES (196608 - 1024)
#define NHSD_MAX_HEADS 4095

/* "Alibi", "Rope", "Omni" (CANN's scenarios 4 and 5 on an Atlas A2): the tiling's
 * checks in its order (dtypes, ranks, shapes: 561002), formats (161002), then
 * llmk_scatter_pa_kv_cache_compressed (index shapes 161002, index values in phase 2).
 * Called with value and valueCacheRef both given. */
static aclnnStatus compressed(const aclTensor *const *in, int mode, const char *name,
                              uint64_t *workspaceSize, aclOpExecutor **executor) {
  const aclTensor *key = in[KEY], *kc = in[KC], *val = in[VAL], *vc = in[VC];
  if (mode != LLMK_KV_COMPRESS_ALIBI)
    for (int k = 0; k < 2; k++) {
      const aclTensor *t = k ? val : key;
      if (t->dtype != ACL_FLOAT16 && t->dtype != ACL_BF16)
        return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                         "%s dtype %d: scatterMode \"%s\" takes FLOAT16 or BFLOAT16",
                         k ? "value" : "key", (int)t->dtype, name);
    }
  const int rank_of[] = {KEY, 3, KC, 4, SLOT, 1, VAL, 3, VC, 4};
  for (int k = 0; k < 10; k += 2)
    if (in[rank_of[k]]->view_rank != (uint64_t)rank_of[k + 1])
      return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                       "%s has %llu dims, must have %d (scatterMode \"%s\")",
                       NAMES[rank_of[k]], (unsigned long long)in[rank_of[k]]->view_rank,
                       rank_of[k + 1], name);
  const int need[] = {CLENS, SLENS, COFF};
  for (int k = 0; k < (mode == LLMK_KV_COMPRESS_ALIBI ? 2 : 3); k++) {
    const aclTensor *t = in[need[k]];
    if (!t)
      return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP, "scatterMode \"%s\" needs %s",
                       name, NAMES[need[k]]);
    if (k < 2 && t->view_rank != 1)
      return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP, "%s has %llu dims, must have 1",
                       NAMES[need[k]], (unsigned long long)t->view_rank);
  }
  const int64_t *kd = key->view_dims, *cd = kc->view_dims, *vd = val->view_dims,
                *wd = vc->view_dims;
  if (sat_mul(cd[0], cd[1]) < kd[0])
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "numBlocks %lld * blockSize %lld is smaller than the %lld tokens",
                     (long long)cd[0], (long long)cd[1], (long long)kd[0]);
  if (cd[3] != kd[2] || wd[3] != vd[2])
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "cache head sizes %lld / %lld must be key's %lld / value's %lld",
                     (long long)cd[3], (long long)wd[3], (long long)kd[2],
                     (long long)vd[2]);
  if (vd[0] != kd[0] || vd[1] != kd[1])
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "value [%lld, %lld, ..] must agree with key [%lld, %lld, ..]",
                     (long long)vd[0], (long long)vd[1], (long long)kd[0],
                     (long long)kd[1]);
  if (wd[0] != cd[0] || wd[1] != cd[1] || wd[2] != cd[2])
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "valueCacheRef [%lld, %lld, %lld, ..] must agree with keyCacheRef "
                     "[%lld, %lld, %lld, ..]",
                     (long long)wd[0], (long long)wd[1], (long long)wd[2],
                     (long long)cd[0], (long long)cd[1], (long long)cd[2]);
  if (cd[2] != 1)
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "keyCacheRef dim 2 is %lld, must be 1 (scatterMode \"%s\")",
                     (long long)cd[2], name);
  for (int i = 0; i < NT; i++)
    if (in[i] && !acl__format_is_nd(in[i]->format))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s: format %d is not ND", NAMES[i],
                       (int)in[i]->format);
  scatter_attrs a = {LLMK_KV_BLOCKS, mode};
  const aclTensor *t[NT] = {key,
                            kc,
                            in[SLOT],
                            val,
                            vc,
                            in[CLENS],
                            mode == LLMK_KV_COMPRESS_ALIBI ? NULL : in[COFF],
                            in[SLENS]};
  return acl__executor_create(&scatter_op, t, &a, sizeof a, workspaceSize, executor);
}

#define TILING(...) acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP, __VA_ARGS__)

/* The tiling's rank checks of one template, in its order: names[i] must have rank[i]
 * dims (alt[i] too where non-zero). */
static aclnnStatus ranks_are(const aclTensor *const *in, const int *idx, const int *rank,
                             const int *alt, int n, const char *what) {
  for (int k = 0; k < n; k++) {
    uint64_t r = in[idx[k]]->view_rank;
    if (r != (uint64_t)rank[k] && !(alt && alt[k] && r == (uint64_t)alt[k]))
      return TILING("%s has %llu dims, must have %d (%s)", NAMES[idx[k]],
                    (unsigned long long)r, rank[k], what);
  }
  return ACLNN_SUCCESS;
}

/* dims a[i] == b[j], or a tiling error naming both */
#define SAME(ta, i, tb, j)                                                          \
  do {                                                                              \
    if (in[ta]->view_dims[i] != in[tb]->view_dims[j])                               \
      return TILING("%s.shape[%d]=%lld must equal %s.shape[%d]=%lld", NAMES[ta], i, \
                    (long long)in[ta]->view_dims[i], NAMES[tb], j,                  \
                    (long long)in[tb]->view_dims[j]);                               \
  } while (0)

#define ROOM(nb, bs, T)                                                                \
  do {                                                                                 \
    if (sat_mul(nb, bs) < (T))                                                         \
      return TILING("numBlocks %lld * blockSize %lld is smaller than the %lld tokens", \
                    (long long)(nb), (long long)(bs), (long long)(T));                 \
  } while (0)

/* CANN's tiling of the uncompressed templates on an Atlas A2 (561002): the ranks, then
 * the shapes, then the template's limits, each in its order. has_v: value and
 * valueCacheRef are read ("K only" otherwise, Norm and Nct). */
static aclnnStatus tiling_shapes(const aclTensor *const *in, bool has_v, bool nhsd,
                                 bool pa_nz) {
  const int64_t *kd = in[KEY]->view_dims, *cd = in[KC]->view_dims;
  int64_t T = kd[0], H = kd[1], Dk = kd[2], nb = cd[0];
  int64_t esk = (int64_t)llmk_dtype_size(acl__native_dtype(in[KEY]->dtype));
  aclnnStatus st;
  if (nhsd) {
    const int idx[5] = {SLOT, KC, KEY, VC, VAL}, rank[5] = {1, 4, 3, 4, 3};
    if ((st = ranks_are(in, idx, rank, NULL, 5, "scatterMode \"NHSD\""))) return st;
    int64_t Dv = in[VAL]->view_dims[2], bs = cd[2];
    if (sat_mul(Dk, esk) % 32 || sat_mul(Dv, esk) % 32)
      return TILING(
          "NHSD: head sizes %lld (key) and %lld (value) must be multiples of "
          "32 bytes",
          (long long)Dk, (long long)Dv);
    SAME(KC, 1, KEY, 1);
    if (H > NHSD_MAX_HEADS)
      return TILING("NHSD: %lld heads, at most %d", (long long)H, NHSD_MAX_HEADS);
    ROOM(nb, bs, T);
    SAME(VC, 2, KC, 2);
    SAME(VC, 1, KC, 1);
    SAME(VAL, 0, KEY, 0);
    SAME(VAL, 1, KEY, 1);
    SAME(KC, 3, KEY, 2);
    SAME(VC, 3, VAL, 2);
    SAME(VC, 0, KC, 0);
    int64_t hk = sat_mul(H, Dk), hv = sat_mul(H, Dv);
    int64_t row = hk > INT64_MAX - hv ? INT64_MAX : sat_mul(hk + hv, esk);
    if (row > NHSD_UB_BYTES)
      return TILING(
          "NHSD: one token's key and value take %lld bytes, more than the %d "
          "of the unified buffer",
          (long long)row, NHSD_UB_BYTES);
    if (sat_mul(bs, Dk) > (int64_t)UINT32_MAX || sat_mul(bs, Dv) > (int64_t)UINT32_MAX)
      return TILING("NHSD: blockSize %lld * head size %lld exceeds UINT32_MAX",
                    (long long)bs, (long long)(Dk > Dv ? Dk : Dv));
    return ACLNN_SUCCESS;
  }
  if (pa_nz) {
    /* CANN's tiling takes 5-D caches too ([numBlocks, H, D / ld, blockSize, ld]); the
     * native layout has no such form: refused below (161002) */
    const int idx[5] = {KEY, KC, SLOT, VAL, VC}, rank[5] = {3, 4, 1, 3, 4},
              alt[5] = {0, 5, 0, 0, 5};
    if ((st = ranks_are(in, idx, rank, alt, 5, "cacheMode \"PA_NZ\""))) return st;
    const int64_t *wd = in[VC]->view_dims;
    int kr = (int)in[KC]->view_rank, vr = (int)in[VC]->view_rank;
    int64_t Dv = in[VAL]->view_dims[2], bs = cd[kr - 2];
    int64_t esv = (int64_t)llmk_dtype_size(acl__native_dtype(in[VAL]->dtype));
    int64_t ldk = 32 / esk, ldv = 32 / esv;
    if (bs > UINT16_MAX)
      return TILING("PA_NZ: blockSize %lld exceeds 65535", (long long)bs);
    ROOM(nb, bs, T);
    SAME(VAL, 0, KEY, 0);
    SAME(VAL, 1, KEY, 1);
    SAME(VC, 0, KC, 0);
    if (wd[vr - 2] != bs)
      return TILING("PA_NZ: valueCacheRef's blockSize %lld must be keyCacheRef's %lld",
                    (long long)wd[vr - 2], (long long)bs);
    if (cd[kr - 1] != ldk || wd[vr - 1] != ldv)
      return TILING(
          "PA_NZ: the caches' last dims %lld / %lld must be 32 bytes of "
          "elements, %lld / %lld",
          (long long)cd[kr - 1], (long long)wd[vr - 1], (long long)ldk, (long long)ldv);
    int64_t wk = kr == 4 ? sat_mul(H, Dk) / ldk : H,
            wv = vr == 4 ? sat_mul(H, Dv) / ldv : H;
    if (cd[1] != wk || wd[1] != wv)
      return TILING(
          "PA_NZ: the caches' dim 1 %lld / %lld must be %lld / %lld (H * D / "
          "ld)",
          (long long)cd[1], (long long)wd[1], (long long)wk, (long long)wv);
    if (sat_mul(Dk, esk) % 32 || sat_mul(Dv, esv) % 32)
      return TILING(
          "PA_NZ: head sizes %lld (key) and %lld (value) must be multiples of "
          "32 bytes",
          (long long)Dk, (long long)Dv);
    return ACLNN_SUCCESS;
  }
  const int idx[5] = {KEY, KC, SLOT, VAL, VC}, rank[5] = {3, 4, 1, 3, 4};
  if ((st = ranks_are(in, idx, rank, NULL, has_v ? 5 : 3,
                      has_v ? "cacheMode \"Norm\"" : "K only")))
    return st;
  ROOM(nb, cd[1], T);
  SAME(KC, 2, KEY, 1);
  SAME(KC, 3, KEY, 2);
  if (!has_v) return ACLNN_SUCCESS;
  SAME(VC, 3, VAL, 2);
  SAME(VAL, 0, KEY, 0);
  SAME(VAL, 1, KEY, 1);
  SAME(VC, 0, KC, 0);
  SAME(VC, 1, KC, 1);
  SAME(VC, 2, KC, 2);
  return ACLNN_SUCCESS;
}

aclnnStatus aclnnScatterPaKvCacheGetWorkspaceSize(
    const aclTensor *key, aclTensor *keyCacheRef, const aclTensor *slotMapping,
    const aclTensor *value, aclTensor *valueCacheRef,
    const aclTensor *compressLensOptional, const aclTensor *compressSeqOffsetOptional,
    const aclTensor *seqLensOptional, char *cacheModeOptional, char *scatterModeOptional,
    const aclIntArray *stridesOptional, const aclIntArray *offsetsOptional,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
  if (workspaceSize) *workspaceSize = 0;
  if (executor) *executor = NULL;
  const aclTensor *in[NT] = {key,
                             keyCacheRef,
                             slotMapping,
                             value,
                             valueCacheRef,
                             compressLensOptional,
                             compressSeqOffsetOptional,
                             seqLensOptional};
  /* 1. NULLs: CANN's op_api answers all of them with 561103 */
  if (!key || !keyCacheRef || !slotMapping || !workspaceSize || !executor)
    return acl__fail(ACLNN_ERR_INNER_NULLPTR, OP, "%s is NULL",
                     !key             ? "key"
                     : !keyCacheRef   ? "keyCacheRef"
                     : !slotMapping   ? "slotMapping"
                     : !workspaceSize ? "workspaceSize"
                                      : "executor");
  if (value && !valueCacheRef)
    return acl__fail(ACLNN_ERR_INNER_NULLPTR, OP,
                     "value is given but valueCacheRef is NULL");
  for (int i = 0; i < NT; i++)
    if (in[i] && !acl__tensor_live(in[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s is not a live aclTensor",
                       NAMES[i]);
  /* 2. empty: success and nothing to do, before any other check (CANN's op_api) */
  if ((numel(key) == 0 || numel(keyCacheRef) == 0) &&
      (!value || numel(value) == 0 || numel(valueCacheRef) == 0)) {
    const aclTensor *none[NT] = {0};
    return acl__executor_create(&empty_op, none, NULL, 0, workspaceSize, executor);
  }
  /* K only, as CANN's tiling decides it: valueCacheRef NULL or 0-D (a value beside a
   * 0-D valueCacheRef is not read) */
  bool has_v = valueCacheRef && valueCacheRef->view_rank != 0;
  /* 3. ranks, as CANN's op_api checks them (161002): key 3-D or 4-D, value 0-D, 3-D or
   * 4-D (4-D is the compressed caches' form, refused by the tiling below) */
  if (key->view_rank != 3 && key->view_rank != 4)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "key has %llu dims, must have 3",
                     (unsigned long long)key->view_rank);
  if (value && value->view_rank != 0 && value->view_rank != 3 && value->view_rank != 4)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "value has %llu dims, must have 0 or 3",
                     (unsigned long long)value->view_rank);
  /* 4. dtypes, as CANN's op_api checks them (161002): FLOAT16, BFLOAT16 or INT8 on an
   * Atlas A2; each cache has its source's dtype; key and value share one unless the
   * cache mode is "PA_NZ" */
  bool pa_nz = is(cacheModeOptional, "PA_NZ");
  const int src_dt[4] = {KEY, KC, VAL, VC};
  for (int k = 0; k < 4; k++) {
    const aclTensor *t = in[src_dt[k]];
    if (t && !dtype_ok(t->dtype))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                       "%s dtype %d is not FLOAT16, BFLOAT16 or INT8 (Atlas A2)",
                       NAMES[src_dt[k]], (int)t->dtype);
  }
  if (slotMapping->dtype != ACL_INT32 && slotMapping->dtype != ACL_INT64)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "slotMapping dtype %d is not INT32 or INT64",
                     (int)slotMapping->dtype);
  if (keyCacheRef->dtype != key->dtype)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "keyCacheRef dtype %d differs from key dtype %d",
                     (int)keyCacheRef->dtype, (int)key->dtype);
  if (value && valueCacheRef->dtype != value->dtype)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "valueCacheRef dtype %d differs from value dtype %d",
                     (int)valueCacheRef->dtype, (int)value->dtype);
  if (value && !pa_nz && value->dtype != key->dtype)
    return acl__fail(
        ACLNN_ERR_PARAM_INVALID, OP,
        "value dtype %d differs from key dtype %d (only \"PA_NZ\" allows it)",
        (int)value->dtype, (int)key->dtype);
  for (int i = CLENS; i < NT; i++)
    if (in[i] && in[i]->dtype != slotMapping->dtype)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                       "%s dtype %d differs from slotMapping dtype %d", NAMES[i],
                       (int)in[i]->dtype, (int)slotMapping->dtype);
  /* 5. modes, as CANN's tiling reads them (561002): under "PA_NZ" scatterMode is not
   * read at all */
  scatter_attrs a = {LLMK_KV_BLOCKS, 0};
  bool nct = false, nhsd = false;
  if (pa_nz) {
    a.layout = LLMK_KV_NZ;
  } else if (is_or_empty(cacheModeOptional, "Norm")) {
    a.layout = LLMK_KV_BLOCKS;
    if (is(scatterModeOptional, "Nct")) {
      nct = true;
    } else if (is(scatterModeOptional, "NHSD")) {
      nhsd = true;
    } else if (is(scatterModeOptional, "Alibi") || is(scatterModeOptional, "Rope") ||
               is(scatterModeOptional, "Omni")) {
      int mode = is(scatterModeOptional, "Alibi")  ? LLMK_KV_COMPRESS_ALIBI
                 : is(scatterModeOptional, "Rope") ? LLMK_KV_COMPRESS_ROPE
                                                   : LLMK_KV_COMPRESS_OMNI;
      if (!has_v)
        return TILING(
            "scatterMode \"%s\" needs value and valueCacheRef (K only is "
            "\"Norm\" with scatterMode \"None\" or \"Nct\")",
            scatterModeOptional);
      if (!value) return TILING("valueCacheRef is given without value");
      return compressed(in, mode, scatterModeOptional, workspaceSize, executor);
    } else if (!is_or_empty(scatterModeOptional, "None")) {
      return TILING(
          "scatterMode \"%s\" is not \"\", \"None\", \"Nct\", \"NHSD\", "
          "\"Alibi\", \"Rope\" or \"Omni\"",
          scatterModeOptional);
    }
  } else {
    return TILING("cacheMode \"%s\" is not \"\", \"Norm\" or \"PA_NZ\"",
                  cacheModeOptional);
  }
  if (!has_v && (pa_nz || nhsd))
    return TILING(
        "%s needs value and valueCacheRef (K only is \"Norm\" with scatterMode "
        "\"None\" or \"Nct\")",
        pa_nz ? "cacheMode \"PA_NZ\"" : "scatterMode \"NHSD\"");
  /* the tiling reads value's descriptor whenever valueCacheRef has dims */
  if (has_v && !value) return TILING("valueCacheRef is given without value");
  /* the compress tensors, past the op_api's dtype check, are not read outside the
   * compressed modes (CANN's tiling ignores them there) */
  if (has_v && value->dtype == ACL_INT8 && key->dtype != ACL_INT8)
    return TILING("an INT8 value needs an INT8 key (key dtype %d)", (int)key->dtype);
  /* 6. the tiling's ranks, shapes and limits (561002) */
  aclnnStatus st = tiling_shapes(in, has_v, nhsd, pa_nz);
  if (st) return st;
  /* 7. what the native layouts cannot take (161002): 5-D NZ caches; formats */
  const aclTensor *caches[2] = {keyCacheRef, has_v ? valueCacheRef : NULL};
  for (int k = 0; k < 2; k++) {
    const aclTensor *c = caches[k];
    if (!c) continue;
    const char *name = k ? "valueCacheRef" : "keyCacheRef";
    if (c->view_rank != 4)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                       "%s has %llu dims: only 4-D PA_NZ caches are supported", name,
                       (unsigned long long)c->view_rank);
    bool fmt_ok = acl__format_is_nd(c->format) ||
                  (a.layout == LLMK_KV_NZ && c->format == ACL_FORMAT_FRACTAL_NZ);
    if (!fmt_ok)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s: format %d is not %s", name,
                       (int)c->format,
                       a.layout == LLMK_KV_NZ ? "FRACTAL_NZ or ND" : "ND");
  }
  const int nd_only[] = {KEY, SLOT, VAL};
  for (int k = 0; k < 3; k++) {
    const aclTensor *t = in[nd_only[k]];
    if (t && (k < 2 || has_v) && !acl__format_is_nd(t->format))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s: format %d is not ND",
                       NAMES[nd_only[k]], (int)t->format);
  }
  /* 8. the views the native op sees: Nct re-strides key/value, NHSD permutes caches */
  aclTensor kv[2], cv[2];
  const aclTensor *t[NT] = {
      key,  keyCacheRef, slotMapping, has_v ? value : NULL, has_v ? valueCacheRef : NULL,
      NULL, NULL,        NULL};
  if (nct) {
    st = nct_view(key, stridesOptional, offsetsOptional, 0, &kv[0]);
    if (!st && has_v) st = nct_view(value, stridesOptional, offsetsOptional, 1, &kv[1]);
    if (st) return st;
    t[KEY] = &kv[0];
    if (has_v) t[VAL] = &kv[1];
  }
  if (nhsd) {
    const int idx[2] = {KC, VC};
    for (int k = 0; k < 2; k++) {
      if (!t[idx[k]]) continue;
      cv[k] = *t[idx[k]];
      int64_t d1 = cv[k].view_dims[1], s1 = cv[k].strides[1];
      cv[k].view_dims[1] = cv[k].view_dims[2], cv[k].strides[1] = cv[k].strides[2];
      cv[k].view_dims[2] = d1, cv[k].strides[2] = s1;
      t[idx[k]] = &cv[k];
    }
  }
  /* the executor keeps descriptors, not these local copies */
  return acl__executor_create(&scatter_op, t, &a, sizeof a, workspaceSize, executor);
}

aclnnStatus aclnnScatterPaKvCache(void *workspace, uint64_t workspaceSize,
                                  aclOpExecutor *executor, aclrtStream stream) {
  return acl__executor_run(&scatter_op, workspace, workspaceSize, executor, stream);
}
