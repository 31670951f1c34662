#include "kernels/top_k_top_p/tkp.h"

static void masses_scalar(const float *x, size_t n, float max, uint32_t min_key, uint64_t *mass,
                          uint64_t *total_lo, uint64_t *total_hi) {
  uint64_t lo = 0, hi = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t m = 0;
    if (llmk__key_of(x[i]) >= min_key) m = llmk__mass_of(llmk__exp_nonpos(x[i] - max));
    mass[i] = m;
    lo += m & 0xffffffffu;
    hi += m >> 32;
  }
  *total_lo += lo;
  *total_hi += hi;
}

const llmk__tkp_kernels llmk__tkp_kernels_scalar = {.isa = LLMK_ISA_SCALAR,
                                                    .masses = masses_scalar};
