/* SPDX-License-Identifier: Apache-2.0 */
/* llmk: the operators an LLM serving engine runs around every decode step, on CPUs.
 * Umbrella header; conventions in docs/api.md (installed as share/doc/llmk/api.md, the
 * per-op docs as share/doc/llmk/ops/<op>.md). */
#ifndef LLMK_LLMK_H
#define LLMK_LLMK_H

#include "llmk/advance_step.h"
#include "llmk/causal_conv1d.h"
#include "llmk/convert.h"
#include "llmk/kv_cache.h"
#include "llmk/top_k_top_p.h"
#include "llmk/types.h"
#include "llmk/version.h"

#endif
