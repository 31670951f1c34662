/* SPDX-License-Identifier: Apache-2.0 */
/* Executors: a native plan plus the native descriptors of the op's tensors, with a
 * registry of live executors so that a consumed or destroyed executor is detected
 * without touching freed memory (as src/core/plan.c does for plans). */
#include <pthread.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_internal.h"

#define EXECUTOR_MAGIC 0x63657845u
#define EXECUTOR_DEAD 0x64616544u
#define QUARANTINE 64

typedef struct slot {
  bool present;        /* false: the optional tensor was NULL at phase 1 */
  bool in_block;       /* the view lay in an aclrtMalloc block: check it at each run */
  llmk_tensor desc;    /* native descriptor; desc.data = storage + view offset */
  size_t offset_bytes; /* view offset, bytes */
  size_t span;         /* bytes the view may touch from desc.data (0: empty) */
} slot;

struct aclOpExecutor {
  uint32_t magic;
  const acl__op *op;
  bool repeatable;
  bool dirty; /* an address changed: the native plan must be made again */
  llmk_plan *plan;
  size_t workspace_size;
  int num_slots;
  slot slots[ACL__MAX_SLOTS];
  alignas(max_align_t) unsigned char attrs[ACL__MAX_ATTRS];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static llmk__ptrset live;
static aclOpExecutor *quarantine[QUARANTINE];
static size_t quarantine_next;

aclnnStatus acl__map_status(llmk_status status) {
  switch (status) {
    case LLMK_SUCCESS:
      return ACLNN_SUCCESS;
    case LLMK_ERROR_NULL_POINTER:
      return ACLNN_ERR_PARAM_NULLPTR;
    case LLMK_ERROR_INVALID_DTYPE:
    case LLMK_ERROR_INVALID_SHAPE:
    case LLMK_ERROR_INVALID_ATTRIBUTE:
    case LLMK_ERROR_INVALID_VALUE:
    case LLMK_ERROR_WORKSPACE_TOO_SMALL:
    case LLMK_ERROR_OVERLAP:
      return ACLNN_ERR_PARAM_INVALID;
    case LLMK_ERROR_INVALID_PLAN:
      return ACLNN_ERR_INNER_NULLPTR;
    default:
      return ACLNN_ERR_INNER;
  }
}

/* Frees the executor's memory later (quarantine), so that a stale pointer is unlikely
 * to alias a newer executor. Caller holds reg_lock and has removed e from `live`. */
static void retire_locked(aclOpExecutor *e) {
  e->magic = EXECUTOR_DEAD;
  free(quarantine[quarantine_next]);
  quarantine[quarantine_next] = e;
  quarantine_next = (quarantine_next + 1) % QUARANTINE;
}

static void retire(aclOpExecutor *e) {
  llmk_plan_destroy(e->plan);
  e->plan = NULL;
  pthread_mutex_lock(&reg_lock);
  retire_locked(e);
  pthread_mutex_unlock(&reg_lock);
}

/* Bytes the view may touch from its first element, and the check of the whole
 * storage range against the allocation it starts in. */
static aclnnStatus view_span(const char *op, const char *name, const aclTensor *t,
                             size_t es, size_t *span) {
  uint64_t last = 0;
  for (uint64_t d = 0; d < t->view_rank; d++) {
    if (t->view_dims[d] == 0) {
      *span = 0;
      return ACLNN_SUCCESS;
    }
  }
  for (uint64_t d = 0; d < t->view_rank; d++) {
    uint64_t step;
    if (__builtin_mul_overflow((uint64_t)(t->view_dims[d] - 1), (uint64_t)t->strides[d],
                               &step) ||
        __builtin_add_overflow(last, step, &last))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s: the view's span overflows",
                       name);
  }
  uint64_t bytes;
  if (__builtin_add_overflow(last, 1, &last) ||
      __builtin_mul_overflow(last, es, &bytes) || bytes > SIZE_MAX / 2)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s: the view's span overflows", name);
  *span = (size_t)bytes;
  return ACLNN_SUCCESS;
}

/* The view [data + offset, data + offset + span) must stay inside the block that
 * `storage` lies in, if any. */
static aclnnStatus check_block(const char *op, const char *name, const void *storage,
                               size_t offset_bytes, size_t span, bool *in_block) {
  size_t room;
  *in_block = false;
  if (!storage || !acl__mem_room(storage, &room)) return ACLNN_SUCCESS;
  *in_block = true;
  if (span && (offset_bytes > room || span > room - offset_bytes))
    return acl__fail(
        ACLNN_ERR_PARAM_INVALID, op,
        "%s: the view (offset %zu bytes, span %zu bytes) does not fit in the %zu "
        "bytes left in its aclrtMalloc block",
        name, offset_bytes, span, room);
  return ACLNN_SUCCESS;
}

static aclnnStatus fill_slot(const char *op, int index, const aclTensor *t, slot *s) {
  char name[32];
  snprintf(name, sizeof name, "tensor %d", index);
  memset(s, 0, sizeof *s);
  if (!t) return ACLNN_SUCCESS;
  if (t->magic != ACL__TENSOR_MAGIC) /* the entry points checked the caller's are live */
    return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s is not a live aclTensor", name);
  llmk_dtype dt = acl__native_dtype(t->dtype);
  if (dt == LLMK_DTYPE_INVALID)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s: dtype %d is not supported", name,
                     (int)t->dtype);
  if (t->view_rank > LLMK_MAX_RANK)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s: %llu dims, at most %d", name,
                     (unsigned long long)t->view_rank, LLMK_MAX_RANK);
  for (uint64_t d = 0; d < t->view_rank; d++)
    if (t->strides[d] < 0)
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s: stride[%llu]=%lld is negative",
                       name, (unsigned long long)d, (long long)t->strides[d]);
  size_t es = llmk_dtype_size(dt);
  if (t->offset < 0 || (uint64_t)t->offset > SIZE_MAX / 2 / es)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, op, "%s: offset %lld is invalid", name,
                     (long long)t->offset);
  aclnnStatus st = view_span(op, name, t, es, &s->span);
  if (st) return st;
  s->offset_bytes = (size_t)t->offset * es;
  if (s->span && !t->data)
    return acl__fail(ACLNN_ERR_PARAM_NULLPTR, op, "%s has elements but no data", name);
  st = check_block(op, name, t->data, s->offset_bytes, s->span, &s->in_block);
  if (st) return st;
  s->present = true;
  s->desc.dtype = dt;
  s->desc.rank = (int32_t)t->view_rank;
  for (uint64_t d = 0; d < t->view_rank; d++) {
    s->desc.shape[d] = t->view_dims[d];
    s->desc.strides[d] = t->strides[d];
  }
  s->desc.data = t->data ? (char *)t->data + s->offset_bytes : NULL;
  return ACLNN_SUCCESS;
}

static llmk_status make_plan(aclOpExecutor *e, size_t *ws, llmk_plan **plan) {
  const llmk_tensor *t[ACL__MAX_SLOTS];
  for (int i = 0; i < e->num_slots; i++)
    t[i] = e->slots[i].present ? &e->slots[i].desc : NULL;
  llmk_status st = e->op->plan(t, e->attrs, ws, plan);
  if (st == LLMK_SUCCESS) st = llmk_plan_set_repeatable(*plan); /* the executor owns it */
  return st;
}

aclnnStatus acl__executor_create(const acl__op *op, const aclTensor *const *tensors,
                                 const void *attrs, size_t attr_size,
                                 uint64_t *workspace_size, aclOpExecutor **executor) {
  int n = op->num_inputs + op->num_outputs;
  if (n > ACL__MAX_SLOTS || attr_size > ACL__MAX_ATTRS)
    return acl__fail(ACLNN_ERR_INNER, op->name, "too many tensors or attributes");
  aclOpExecutor *e = calloc(1, sizeof *e);
  if (!e) return acl__fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, op->name, "out of memory");
  e->op = op;
  e->num_slots = n;
  if (attr_size) memcpy(e->attrs, attrs, attr_size);
  for (int i = 0; i < n; i++) {
    aclnnStatus st = fill_slot(op->name, i, tensors[i], &e->slots[i]);
    if (st) {
      free(e);
      return st;
    }
  }
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status nst = make_plan(e, &ws, &plan);
  if (nst != LLMK_SUCCESS) {
    llmk_plan_destroy(plan);
    free(e);
    return acl__fail_native(op->map(nst));
  }
  e->plan = plan;
  e->workspace_size = ws;
  e->magic = EXECUTOR_MAGIC;
  pthread_mutex_lock(&reg_lock);
  bool ok = llmk__ptrset_insert(&live, e);
  pthread_mutex_unlock(&reg_lock);
  if (!ok) {
    llmk_plan_destroy(plan);
    free(e);
    return acl__fail(ACLNN_ERR_INNER_CREATE_EXECUTOR, op->name,
                     "cannot register the executor");
  }
  *workspace_size = ws;
  *executor = e;
  return ACLNN_SUCCESS;
}

static aclnnStatus run_live(const acl__op *op, void *workspace, uint64_t workspace_size,
                            aclOpExecutor *e, aclrtStream stream) {
  /* by name: an entry point may make executors of more than one acl__op (its empty
   * calls' no-op, say); the executor's own op runs them */
  if (e->op != op && strcmp(e->op->name, op->name) != 0)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, op->name, "the executor was made by %s",
                     e->op->name);
  op = e->op;
  for (int i = 0; i < e->num_slots; i++) {
    const slot *s = &e->slots[i];
    bool in_block;
    if (s->present && s->in_block && s->span &&
        (check_block(op->name, "tensor", s->desc.data, 0, s->span, &in_block) ||
         !in_block))
      return acl__fail(ACLNN_ERR_PARAM_INVALID, op->name,
                       "tensor %d: its aclrtMalloc block was freed or is too small now",
                       i);
  }
  if (e->dirty) {
    llmk_plan_destroy(e->plan);
    e->plan = NULL;
    size_t ws = 0;
    llmk_status nst = make_plan(e, &ws, &e->plan);
    if (nst != LLMK_SUCCESS) {
      llmk_plan_destroy(e->plan);
      e->plan = NULL;
      return acl__fail_native(op->map(nst));
    }
    e->workspace_size = ws;
    e->dirty = false;
  }
  if (!e->plan) return acl__fail(ACLNN_ERR_INNER, op->name, "the executor has no plan");
  llmk_context *ctx;
  void *token;
  if (acl__stream_acquire(stream, &ctx, &token) != ACL_SUCCESS)
    return acl__fail(ACLNN_ERR_PARAM_INVALID, op->name, "stream %p is not a live stream",
                     stream);
  llmk_status nst = op->run(workspace, (size_t)workspace_size, e->plan, ctx);
  acl__stream_release(token);
  return nst == LLMK_SUCCESS ? ACLNN_SUCCESS : acl__fail_native(op->map(nst));
}

aclnnStatus acl__executor_run(const acl__op *op, void *workspace, uint64_t workspace_size,
                              aclOpExecutor *executor, aclrtStream stream) {
  if (!executor) return acl__fail(ACLNN_ERR_INNER_NULLPTR, op->name, "executor is NULL");
  pthread_mutex_lock(&reg_lock);
  bool found = llmk__ptrset_contains(&live, executor);
  bool consume = found && !executor->repeatable;
  if (consume) llmk__ptrset_remove(&live, executor); /* no second run can start */
  pthread_mutex_unlock(&reg_lock);
  if (!found)
    return acl__fail(
        ACLNN_ERR_INNER_NULLPTR, op->name,
        "executor %p is not live (consumed by an earlier run, or destroyed); "
        "call aclSetAclOpExecutorRepeatable to run an executor again",
        (void *)executor);
  aclnnStatus st = run_live(op, workspace, workspace_size, executor, stream);
  if (consume) retire(executor);
  return st;
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor) {
  static const char *W = "aclSetAclOpExecutorRepeatable";
  if (!executor) return acl__fail(ACLNN_ERR_INNER_NULLPTR, W, "executor is NULL");
  pthread_mutex_lock(&reg_lock);
  bool found = llmk__ptrset_contains(&live, executor);
  if (found) executor->repeatable = true;
  pthread_mutex_unlock(&reg_lock);
  if (!found)
    return acl__fail(ACLNN_ERR_INNER_NULLPTR, W, "executor %p is not live",
                     (void *)executor);
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor) {
  static const char *W = "aclDestroyAclOpExecutor";
  if (!executor) return acl__fail(ACLNN_ERR_INNER_NULLPTR, W, "executor is NULL");
  pthread_mutex_lock(&reg_lock);
  bool found = llmk__ptrset_remove(&live, executor);
  pthread_mutex_unlock(&reg_lock);
  if (!found)
    return acl__fail(ACLNN_ERR_INNER_NULLPTR, W,
                     "executor %p is not live (consumed by its run, or destroyed)",
                     (void *)executor);
  retire(executor);
  return ACLNN_SUCCESS;
}

enum group { INPUTS, OUTPUTS, ALL };

static aclnnStatus set_addr(const char *where, aclOpExecutor *e, size_t index,
                            enum group g, aclTensor *tensor, void *addr) {
  if (!e || !tensor)
    return acl__fail(ACLNN_ERR_INNER_NULLPTR, where, "executor or tensor is NULL");
  aclnnStatus st = ACLNN_SUCCESS;
  pthread_mutex_lock(&reg_lock);
  bool found = llmk__ptrset_contains(&live, e);
  int first = 0, count = 0;
  if (found) {
    first = g == OUTPUTS ? e->op->num_inputs : 0;
    count = g == INPUTS    ? e->op->num_inputs
            : g == OUTPUTS ? e->op->num_outputs
                           : e->num_slots;
  }
  if (!found) {
    st = acl__fail(ACLNN_ERR_INNER_NULLPTR, where, "executor %p is not live", (void *)e);
  } else if (!e->repeatable) {
    st = acl__fail(ACLNN_ERR_PARAM_INVALID, where,
                   "the executor is not repeatable (aclSetAclOpExecutorRepeatable)");
  } else if (index >= (size_t)count) {
    st = acl__fail(ACLNN_ERR_PARAM_INVALID, where, "index %zu is out of range [0, %d)",
                   index, count);
  } else {
    slot *s = &e->slots[first + (int)index];
    bool in_block = false;
    if (!s->present) {
      st = acl__fail(ACLNN_ERR_PARAM_INVALID, where,
                     "tensor %zu was NULL at phase 1: its address cannot be set", index);
    } else if (s->span && !addr) {
      st = acl__fail(ACLNN_ERR_PARAM_NULLPTR, where,
                     "addr is NULL for a tensor with elements");
    } else {
      st = check_block(where, "tensor", addr, s->offset_bytes, s->span, &in_block);
    }
    if (st == ACLNN_SUCCESS) {
      s->desc.data = addr ? (char *)addr + s->offset_bytes : NULL;
      s->in_block = in_block;
      e->dirty = true;
      tensor->data = addr;
    }
  }
  pthread_mutex_unlock(&reg_lock);
  return st;
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index,
                                  aclTensor *tensor, void *addr) {
  return set_addr("aclSetInputTensorAddr", executor, index, INPUTS, tensor, addr);
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index,
                                   aclTensor *tensor, void *addr) {
  return set_addr("aclSetOutputTensorAddr", executor, index, OUTPUTS, tensor, addr);
}

aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index,
                             aclTensor *tensor, void *addr) {
  return set_addr("aclSetTensorAddr", executor, index, ALL, tensor, addr);
}

/* The no-op of an empty call: a native scatter of no token (no workspace, no write). */
static uint16_t noop_cell;

llmk_status acl__noop_plan(const llmk_tensor *const *t, const void *attrs,
                           size_t *workspace_size, llmk_plan **plan) {
  (void)t, (void)attrs;
  const int64_t kd[3] = {0, 1, 1}, cd[4] = {1, 1, 1, 1}, sd[1] = {0};
  llmk_tensor k, c, s;
  llmk_tensor_init(&k, LLMK_F16, 3, kd, NULL, &noop_cell);
  llmk_tensor_init(&c, LLMK_F16, 4, cd, NULL, &noop_cell);
  llmk_tensor_init(&s, LLMK_I32, 1, sd, NULL, &noop_cell);
  return llmk_scatter_pa_kv_cache_get_workspace_size(
      &k, NULL, &c, NULL, &s, NULL, NULL, LLMK_KV_BLOCKS, workspace_size, plan);
}

llmk_status acl__noop_run(void *workspace, size_t workspace_size, llmk_plan *plan,
                          llmk_context *ctx) {
  return llmk_scatter_pa_kv_cache(workspace, workspace_size, plan, ctx);
}
