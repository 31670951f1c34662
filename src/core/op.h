/* SPDX-License-Identifier: Apache-2.0 */
/* What every op's phase 1 and phase 2 share: early return on error, the dtype sets,
 * the prologue of phase 1 and the plan run of phase 2. */
#ifndef LLMK_CORE_OP_H
#define LLMK_CORE_OP_H

#include <stddef.h>

#include "core/internal.h"

#define LLMK__TRY(expr)                  \
  do {                                   \
    llmk_status st_ = (expr);            \
    if (st_ != LLMK_SUCCESS) return st_; \
  } while (0)

#define LLMK__FLOATS (LLMK__DT(LLMK_F32) | LLMK__DT(LLMK_F16) | LLMK__DT(LLMK_BF16))
#define LLMK__FP8 (LLMK__DT(LLMK_FP8_E4M3FN) | LLMK__DT(LLMK_FP8_E5M2))
#define LLMK__INTS (LLMK__DT(LLMK_I32) | LLMK__DT(LLMK_I64))

/* Phase 1's outputs cleared first, so that a refused call leaves *workspace_size == 0
 * and *plan == NULL; NULL_POINTER if either is NULL. */
static inline llmk_status llmk__phase1_begin(const char *op, size_t *workspace_size,
                                             llmk_plan **plan) {
  if (plan) *plan = NULL;
  if (workspace_size) *workspace_size = 0;
  if (!workspace_size)
    return llmk__error(LLMK_ERROR_NULL_POINTER, op, "workspace_size is NULL");
  if (!plan) return llmk__error(LLMK_ERROR_NULL_POINTER, op, "plan is NULL");
  return LLMK_SUCCESS;
}

/* Phase 2: checks the plan (live, of `op`) and the workspace, runs
 * fn(payload, workspace, ctx), then consumes the plan unless it is repeatable (also
 * when the check or fn fails). */
typedef llmk_status (*llmk__run_fn)(const void *payload, void *workspace,
                                    llmk_context *ctx);
static inline llmk_status llmk__plan_run(const char *op_name, llmk__op op,
                                         llmk_plan *plan, void *workspace,
                                         size_t workspace_size, llmk_context *ctx,
                                         llmk__run_fn fn) {
  bool live;
  llmk_status st =
      llmk__plan_begin_run(op_name, op, plan, workspace, workspace_size, &live);
  if (st == LLMK_SUCCESS) st = fn(llmk__plan_payload(plan), workspace, ctx);
  if (live) llmk__plan_end_run(plan);
  return st;
}

#endif
