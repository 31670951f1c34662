/* SPDX-License-Identifier: Apache-2.0 */
/* Plans, with a registry of live plans so that running or destroying a consumed plan
 * is detected without touching freed memory. Freed plans also wait in a short
 * quarantine before their memory is returned, so that a stale pointer is unlikely to
 * alias a newer plan. */
#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/op.h"
#include "core/ptrset.h"

#define PLAN_MAGIC_LIVE 0x6c6d6b50u /* "Pkml" */
#define PLAN_MAGIC_DEAD 0x64616544u
#define QUARANTINE 64

struct llmk_plan {
  uint32_t magic;
  llmk__op op;
  bool repeatable;
  size_t workspace_size;
  alignas(max_align_t) unsigned char payload[];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static llmk__ptrset live_plans;
static llmk_plan *quarantine[QUARANTINE];
static size_t quarantine_next;

static bool reg_contains(const llmk_plan *p) {
  return llmk__ptrset_contains(&live_plans, p);
}

/* Caller holds reg_lock and has checked that p is live. */
static void retire_locked(llmk_plan *p) {
  llmk__ptrset_remove(&live_plans, p);
  p->magic = PLAN_MAGIC_DEAD;
  free(quarantine[quarantine_next]);
  quarantine[quarantine_next] = p;
  quarantine_next = (quarantine_next + 1) % QUARANTINE;
}

llmk_status llmk__plan_create(const char *op_name, llmk__op op, size_t payload_size,
                              size_t workspace_size, llmk_plan **plan) {
  if (payload_size > SIZE_MAX - sizeof(llmk_plan))
    return llmk__error(LLMK_ERROR_OUT_OF_MEMORY, op_name, "plan too large");
  llmk_plan *p = calloc(1, sizeof(llmk_plan) + payload_size);
  if (!p)
    return llmk__error(LLMK_ERROR_OUT_OF_MEMORY, op_name, "cannot allocate the plan");
  p->magic = PLAN_MAGIC_LIVE;
  p->op = op;
  p->workspace_size = workspace_size;
  pthread_mutex_lock(&reg_lock);
  bool ok = llmk__ptrset_insert(&live_plans, p);
  pthread_mutex_unlock(&reg_lock);
  if (!ok) {
    free(p);
    return llmk__error(LLMK_ERROR_OUT_OF_MEMORY, op_name, "cannot register the plan");
  }
  *plan = p;
  return LLMK_SUCCESS;
}

void *llmk__plan_payload(llmk_plan *plan) {
  return plan->payload;
}
size_t llmk__plan_workspace_size(const llmk_plan *plan) {
  return plan->workspace_size;
}

llmk_status llmk__plan_begin_run(const char *op_name, llmk__op op, llmk_plan *plan,
                                 const void *workspace, size_t workspace_size,
                                 bool *live) {
  *live = false;
  if (!plan) return llmk__error(LLMK_ERROR_INVALID_PLAN, op_name, "plan is NULL");
  pthread_mutex_lock(&reg_lock);
  bool found = reg_contains(plan);
  pthread_mutex_unlock(&reg_lock);
  if (!found)
    return llmk__error(LLMK_ERROR_INVALID_PLAN, op_name,
                       "plan %p is not a live plan (already consumed or destroyed?)",
                       (void *)plan);
  *live = true;
  if (plan->magic != PLAN_MAGIC_LIVE || plan->op != op)
    return llmk__error(LLMK_ERROR_INVALID_PLAN, op_name, "plan was made for another op");
  if (workspace_size < plan->workspace_size)
    return llmk__error(LLMK_ERROR_WORKSPACE_TOO_SMALL, op_name,
                       "workspace_size=%zu is less than the required %zu", workspace_size,
                       plan->workspace_size);
  if (plan->workspace_size > 0 && !workspace)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op_name,
                       "workspace is NULL but %zu bytes are required",
                       plan->workspace_size);
  return LLMK_SUCCESS;
}

void llmk__plan_end_run(llmk_plan *plan) {
  if (plan->repeatable) return;
  pthread_mutex_lock(&reg_lock);
  if (reg_contains(plan)) retire_locked(plan);
  pthread_mutex_unlock(&reg_lock);
}

llmk_status llmk_plan_set_repeatable(llmk_plan *plan) {
  if (!plan)
    return llmk__error(LLMK_ERROR_INVALID_PLAN, "plan_set_repeatable", "plan is NULL");
  pthread_mutex_lock(&reg_lock);
  bool found = reg_contains(plan);
  if (found) plan->repeatable = true;
  pthread_mutex_unlock(&reg_lock);
  if (!found)
    return llmk__error(LLMK_ERROR_INVALID_PLAN, "plan_set_repeatable",
                       "plan %p is not a live plan", (void *)plan);
  return LLMK_SUCCESS;
}

llmk_status llmk_plan_destroy(llmk_plan *plan) {
  if (!plan) return LLMK_SUCCESS;
  pthread_mutex_lock(&reg_lock);
  bool found = reg_contains(plan);
  if (found) retire_locked(plan);
  pthread_mutex_unlock(&reg_lock);
  if (!found)
    return llmk__error(LLMK_ERROR_INVALID_PLAN, "plan_destroy",
                       "plan %p is not a live plan (already consumed or destroyed?)",
                       (void *)plan);
  return LLMK_SUCCESS;
}
