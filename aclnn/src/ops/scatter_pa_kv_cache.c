/* SPDX-License-Identifier: Apache-2.0 */
/* aclnnScatterPaKvCache over llmk_scatter_pa_kv_cache: CANN's modes and limits for an
 * Atlas A2, then the native op. "Norm" is LLMK_KV_BLOCKS, "NHSD" the same with the cache
 * view permuted to [numBlocks, blockSize, H, D], "PA_NZ" LLMK_KV_NZ; scatter mode "Nct"
 * re-strides the key/value views; compressed modes are not supported. */
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
} scatter_attrs;

static llmk_status scatter_plan(const llmk_tensor *const *t, const void *attrs,
                                size_t *workspace_size, llmk_plan **plan) {
  const scatter_attrs *a = attrs;
  return llmk_scatter_pa_kv_cache_get_workspace_size(
      t[KEY], t[VAL], t[KC], t[VC], t[SLOT], NULL, NULL, a->layout, workspace_size, plan);
}

/* Every tensor is an input of CANN's op (the caches are "Ref" tensors). */
static const acl__op scatter_op = {
    OP, NT, 0, scatter_plan, llmk_scatter_pa_kv_cache, acl__map_status};

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

aclnnStatus aclnnScatterPaKvCacheGetWorkspaceSize(
    const aclTensor *key, aclTensor *keyCacheRef, const aclTensor *slotMapping,
    const aclTensor *value, aclTensor *valueCacheRef,
    const aclTensor *compressLensOptional, const aclTensor *compressSeqOffsetOptional,
    const aclTensor *seqLensOptional, char *cacheModeOptional, char *scatterModeOptional,
    const aclIntArray *stridesOptional, const aclIntArray *offsetsOptional,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
  if (!workspaceSize || !executor)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, OP, "workspaceSize or executor is NULL");
  *workspaceSize = 0;
  *executor = NULL;
  const aclTensor *in[NT] = {key,
                             keyCacheRef,
                             slotMapping,
                             value,
                             valueCacheRef,
                             compressLensOptional,
                             compressSeqOffsetOptional,
                             seqLensOptional};
  /* 1. NULLs: CANN's code for them is 561103 */
  if (!key || !keyCacheRef || !slotMapping)
    return acl__fail(ACLNN_ERR_INNER_NULLPTR, OP, "%s is NULL",
                     !key           ? "key"
                     : !keyCacheRef ? "keyCacheRef"
                                    : "slotMapping");
  for (int i = 0; i < NT; i++)
    if (in[i] && !acl__tensor_live(in[i]))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s is not a live aclTensor",
                       NAMES[i]);
  /* K only: value and valueCacheRef both NULL or 0-D */
  bool has_v = value && value->view_rank != 0;
  bool has_vc = valueCacheRef && valueCacheRef->view_rank != 0;
  if (has_v && !has_vc)
    return acl__fail(ACLNN_ERR_INNER_NULLPTR, OP,
                     "value is given but valueCacheRef is %s",
                     valueCacheRef ? "0-D" : "NULL");
  if (has_vc && !has_v)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "valueCacheRef is given without value");
  /* 2. modes */
  scatter_attrs a;
  bool nhsd = false;
  if (!cacheModeOptional || is(cacheModeOptional, "Norm")) {
    a.layout = LLMK_KV_BLOCKS;
  } else if (is(cacheModeOptional, "NHSD")) {
    a.layout = LLMK_KV_BLOCKS;
    nhsd = true;
  } else if (is(cacheModeOptional, "PA_NZ")) {
    a.layout = LLMK_KV_NZ;
  } else {
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "cacheMode \"%s\" is not NULL, \"Norm\", \"NHSD\" or \"PA_NZ\"",
                     cacheModeOptional);
  }
  bool nct = false;
  if (is(scatterModeOptional, "Nct")) {
    nct = true;
  } else if (is(scatterModeOptional, "Alibi") || is(scatterModeOptional, "Rope") ||
             is(scatterModeOptional, "Omni")) {
    return acl__fail(
        ACLNN_ERR_INNER, OP,
        "scatterMode \"%s\" (compressed caches) is not supported by this layer",
        scatterModeOptional);
  } else if (scatterModeOptional && !is(scatterModeOptional, "None")) {
    return acl__fail(
        ACLNN_ERR_PARAM_INVALID, OP,
        "scatterMode \"%s\" is not NULL, \"None\", \"Nct\", \"Alibi\", \"Rope\" "
        "or \"Omni\"",
        scatterModeOptional);
  }
  for (int i = CLENS; i < NT; i++)
    if (in[i])
      return acl__fail(ACLNN_ERR_INNER, OP,
                       "%s (compressed caches) is not supported by this layer", NAMES[i]);
  /* 3. dtypes: key FLOAT16, BFLOAT16 or INT8 on an Atlas A2; the rest follow */
  aclDataType dt = key->dtype;
  if (dt != ACL_FLOAT16 && dt != ACL_BF16 && dt != ACL_INT8)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "key dtype %d is not FLOAT16, BFLOAT16 or INT8 (Atlas A2)", (int)dt);
  const int same_dt[] = {KC, VAL, VC};
  for (int k = 0; k < 3; k++) {
    const aclTensor *t = in[same_dt[k]];
    if (t && t->dtype != dt)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                       "%s dtype %d differs from key dtype %d", NAMES[same_dt[k]],
                       (int)t->dtype, (int)dt);
  }
  if (slotMapping->dtype != ACL_INT32 && slotMapping->dtype != ACL_INT64)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "slotMapping dtype %d is not INT32 or INT64",
                     (int)slotMapping->dtype);
  /* 4. ranks (561002 for key/value, as CANN) and formats */
  if (key->view_rank != 3)
    return acl__fail(
        ACLNN_ERR_INNER_TILING_ERROR, OP,
        "key has %llu dims, must have 3 (4-D keys are compressed caches, not on an "
        "Atlas A2)",
        (unsigned long long)key->view_rank);
  if (value && value->view_rank != 0 && value->view_rank != 3)
    return acl__fail(ACLNN_ERR_INNER_TILING_ERROR, OP,
                     "value has %llu dims, must have 0 or 3",
                     (unsigned long long)value->view_rank);
  const aclTensor *caches[2] = {keyCacheRef, has_vc ? valueCacheRef : NULL};
  for (int k = 0; k < 2; k++) {
    const aclTensor *c = caches[k];
    if (!c) continue;
    const char *name = k ? "valueCacheRef" : "keyCacheRef";
    if (c->view_rank != 4)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s has %llu dims, must have 4", name,
                       (unsigned long long)c->view_rank);
    bool fmt_ok = acl__format_is_nd(c->format) ||
                  (a.layout == LLMK_KV_NZ && c->format == ACL_FORMAT_FRACTAL_NZ);
    if (!fmt_ok)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s: format %d is not %s", name,
                       (int)c->format,
                       a.layout == LLMK_KV_NZ ? "FRACTAL_NZ or ND" : "ND");
    if (a.layout == LLMK_KV_NZ && c->view_dims[2] >= 65535)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                       "%s: PA_NZ blockSize %lld must be < 65535", name,
                       (long long)c->view_dims[2]);
  }
  const int nd_only[] = {KEY, SLOT, VAL};
  for (int k = 0; k < 3; k++) {
    const aclTensor *t = in[nd_only[k]];
    if (t && !acl__format_is_nd(t->format))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, OP, "%s: format %d is not ND",
                       NAMES[nd_only[k]], (int)t->format);
  }
  if (slotMapping->view_rank != 1)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "slotMapping has %llu dims, must have 1",
                     (unsigned long long)slotMapping->view_rank);
  if (has_v && (value->view_dims[0] != key->view_dims[0] ||
                value->view_dims[1] != key->view_dims[1]))
    return acl__fail(ACLNN_ERR_PARAM_INVALID, OP,
                     "value [%lld, %lld, ..] must agree with key [%lld, %lld, ..]",
                     (long long)value->view_dims[0], (long long)value->view_dims[1],
                     (long long)key->view_dims[0], (long long)key->view_dims[1]);
  /* 5. the views the native op sees: Nct re-strides key/value, NHSD permutes caches */
  aclTensor kv[2], cv[2];
  const aclTensor *t[NT] = {
      key,  keyCacheRef, slotMapping, has_v ? value : NULL, has_vc ? valueCacheRef : NULL,
      NULL, NULL,        NULL};
  if (nct) {
    aclnnStatus st = nct_view(key, stridesOptional, offsetsOptional, 0, &kv[0]);
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
