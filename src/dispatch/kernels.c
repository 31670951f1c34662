/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel lists of every op, from the variant lists in the kernel headers. */
#include "dispatch/dispatch.h"
#include "kernels/advance_step/advance_step.h"
#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/convert/convert.h"
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"
#include "kernels/kv_cache/kv_cache.h"

const void *llmk__kernels_pick(const llmk__kernel_list *list, llmk_isa isa) {
  for (int i = 0; i < list->count - 1; i++)
    if (llmk__kernels_isa(list->tables[i]) <= isa) return list->tables[i];
  return list->tables[list->count - 1];
}

#define TABLE_PTR(prefix, isa) (const void *)&llmk__##prefix##_kernels_##isa,
#define DEFINE_LIST(prefix, VARIANTS, ops)                            \
  static const void *const prefix##_tables[] = {VARIANTS(TABLE_PTR)}; \
  const llmk__kernel_list llmk__##prefix##_kernel_list = {            \
      ops, prefix##_tables, (int)(sizeof prefix##_tables / sizeof prefix##_tables[0])};

DEFINE_LIST(convert, LLMK__CONVERT_VARIANTS, "convert (f32 <-> f16/bf16/fp8)")
DEFINE_LIST(advance_step, LLMK__ADVANCE_STEP_VARIANTS, "advance_step")
DEFINE_LIST(kv, LLMK__KV_VARIANTS, "scatter_pa_kv_cache, gather_pa_kv_cache")
DEFINE_LIST(tkp, LLMK__TKP_VARIANTS, "apply_top_k_top_p (+ min_p, sample)")
DEFINE_LIST(conv1d, LLMK__CONV1D_VARIANTS, "fused_causal_conv1d")

const llmk__kernel_list *const llmk__kernel_lists[] = {
    &llmk__advance_step_kernel_list, &llmk__kv_kernel_list, &llmk__tkp_kernel_list,
    &llmk__conv1d_kernel_list, &llmk__convert_kernel_list};
const int llmk__kernel_list_count =
    (int)(sizeof llmk__kernel_lists / sizeof llmk__kernel_lists[0]);
