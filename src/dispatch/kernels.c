/* The ordered kernel lists: highest ISA first, scalar last. */
#include "dispatch/dispatch.h"
#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/fused_causal_conv1d/fused_causal_conv1d.h"
#include "kernels/kv_cache/kv_cache.h"

const llmk__convert_kernels *llmk__convert_kernels_for(llmk_isa isa) {
#if defined(LLMK_HAVE_AVX512)
  if (isa >= LLMK_ISA_AVX512) return &llmk__convert_kernels_avx512;
#endif
#if defined(LLMK_HAVE_AVX2)
  if (isa >= LLMK_ISA_AVX2) return &llmk__convert_kernels_avx2;
#endif
  (void)isa;
  return &llmk__convert_kernels_scalar;
}

/* advance_step has no AVX2 kernel: without masked 64-bit stores and conversions the
 * gather-based version did not beat the scalar one enough to be worth a variant. */
const llmk__advance_step_kernels *llmk__advance_step_kernels_for(llmk_isa isa) {
#if defined(LLMK_HAVE_AVX512)
  if (isa >= LLMK_ISA_AVX512) return &llmk__advance_step_kernels_avx512;
#endif
  (void)isa;
  return &llmk__advance_step_kernels_scalar;
}

const llmk__kv_kernels *llmk__kv_kernels_for(llmk_isa isa) {
#if defined(LLMK_HAVE_AVX512)
  if (isa >= LLMK_ISA_AVX512) return &llmk__kv_kernels_avx512;
#endif
#if defined(LLMK_HAVE_AVX2)
  if (isa >= LLMK_ISA_AVX2) return &llmk__kv_kernels_avx2;
#endif
  (void)isa;
  return &llmk__kv_kernels_scalar;
}

const llmk__tkp_kernels *llmk__tkp_kernels_for(llmk_isa isa) {
#if defined(LLMK_HAVE_AVX512)
  if (isa >= LLMK_ISA_AVX512) return &llmk__tkp_kernels_avx512;
#endif
#if defined(LLMK_HAVE_AVX2)
  if (isa >= LLMK_ISA_AVX2) return &llmk__tkp_kernels_avx2;
#endif
  (void)isa;
  return &llmk__tkp_kernels_scalar;
}

/* The conv's AVX2 kernel also serves AVX-512 machines: it is bound by the bf16/f16
 * rounding and the memory, and an AVX-512 variant has not been measured yet. */
const llmk__conv1d_kernels *llmk__conv1d_kernels_for(llmk_isa isa) {
#if defined(LLMK_HAVE_AVX2)
  if (isa >= LLMK_ISA_AVX2) return &llmk__conv1d_kernels_avx2;
#endif
  (void)isa;
  return &llmk__conv1d_kernels_scalar;
}
