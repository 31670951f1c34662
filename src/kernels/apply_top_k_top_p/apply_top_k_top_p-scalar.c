/* SPDX-License-Identifier: Apache-2.0 */
#include "kernels/apply_top_k_top_p/apply_top_k_top_p.h"
#include "kernels/convert/convert-elem.h"

void llmk__tkp_masses_scalar(const float *x, const uint32_t *keys, size_t n, float max,
                             uint32_t min_key, float lo, float scale, uint64_t *mass,
                             uint16_t *bins, uint64_t *total_lo, uint64_t *total_hi) {
  uint64_t tl = 0, th = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t m = 0;
    bool live = keys[i] >= min_key;
    if (live) m = llmk__mass_of(llmk__exp_nonpos_fma(x[i] - max));
    mass[i] = m;
    if (bins) bins[i] = live ? llmk__tkp_bin(x[i], lo, scale) : LLMK__TKP_BINS;
    tl += m & 0xffffffffu;
    th += m >> 32;
  }
  *total_lo += tl;
  *total_hi += th;
}

static uint32_t keys_scalar(const float *x, size_t n, uint32_t *keys) {
  uint32_t max = 0;
  for (size_t i = 0; i < n; i++) {
    keys[i] = llmk__key_of(x[i]);
    max = keys[i] > max ? keys[i] : max;
  }
  return max;
}

size_t llmk__tkp_gather_bin_scalar(const uint16_t *bins, const float *x,
                                   const uint32_t *keys, size_t n, uint16_t bin,
                                   float *ox, uint32_t *ok, size_t cap) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    if (bins[i] == bin) {
      if (c < cap) {
        ox[c] = x[i];
        ok[c] = keys[i];
      }
      c++;
    }
  return c;
}

/* entry i of a contiguous row of dtype dt, widened */
static inline float at(const void *src, llmk_dtype dt, size_t i) {
  return llmk__load_f32((const char *)src + i * llmk_dtype_size(dt), dt);
}

static float min_scalar(const void *src, llmk_dtype dt, size_t n) {
  float m = INFINITY;
  for (size_t i = 0; i < n; i++) {
    float x = at(src, dt, i);
    m = x < m ? x : m;
  }
  return m;
}

uint32_t llmk__tkp_max_key_scalar(const void *src, llmk_dtype dt, size_t n, float *min) {
  uint32_t max = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t k = llmk__key_of(at(src, dt, i));
    max = k > max ? k : max;
  }
  if (min) *min = min_scalar(src, dt, n);
  return max;
}

size_t llmk__tkp_gather_scalar(const void *src, llmk_dtype dt, size_t n, uint32_t lo,
                               uint32_t hi, uint32_t idx0, uint32_t *okey, uint32_t *oidx,
                               size_t cap) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t k = llmk__key_of(at(src, dt, i));
    if (k >= lo && k <= hi) {
      if (c < cap) {
        okey[c] = k;
        if (oidx) oidx[c] = idx0 + (uint32_t)i;
      }
      c++;
    }
  }
  return c;
}

size_t llmk__tkp_select_scalar(const void *src, llmk_dtype dt, size_t n, uint32_t t,
                               uint32_t hi, void *dst, int mode, uint32_t idx0,
                               uint32_t *okey, uint32_t *oidx, size_t cap, size_t *ng) {
  size_t kept = 0, esz = llmk_dtype_size(dt), c = 0;
  bool in_place = mode & LLMK__TKP_IN_PLACE, all = mode & LLMK__TKP_MASK_ALL;
  for (size_t i = 0; i < n; i++) {
    uint32_t k = llmk__key_of(at(src, dt, i));
    bool keep = k >= t && !all;
    kept += keep;
    if (!keep)
      llmk__store_f32((char *)dst + i * esz, dt, -INFINITY);
    else if (!in_place)
      memcpy((char *)dst + i * esz, (const char *)src + i * esz, esz);
    if (k >= t && k <= hi) {
      if (c < cap) {
        okey[c] = k;
        if (oidx) oidx[c] = idx0 + (uint32_t)i;
      }
      c++;
    }
  }
  *ng = c;
  return kept;
}

size_t llmk__tkp_count_eq_scalar(const void *src, llmk_dtype dt, size_t n, uint32_t key) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += llmk__key_of(at(src, dt, i)) == key;
  return c;
}

size_t llmk__tkp_find_eq_scalar(const void *src, llmk_dtype dt, size_t n, uint32_t key,
                                size_t nth) {
  for (size_t i = 0, seen = 0; i < n; i++)
    if (llmk__key_of(at(src, dt, i)) == key && ++seen == nth) return i;
  return n;
}

void llmk__tkp_mass_bins_scalar(const void *src, llmk_dtype dt, size_t n, float max,
                                float xmin, uint64_t *tab, llmk__tkp_rider *rd) {
  for (size_t i = 0; i < n; i++) {
    float x = at(src, dt, i);
    uint32_t e = llmk__tkp_bits(llmk__exp_nonpos_fma(x - max));
    tab[(i & 3) * LLMK__TKP_MB_STRIDE + (size_t)llmk__tkp_ebin(e)] +=
        x < xmin ? 0 : llmk__tkp_eval(e);
  }
  if (rd && rd->sel_src)
    rd->sel_kept = llmk__tkp_select_scalar(
        rd->sel_src, dt, n, rd->sel_t, rd->sel_hi, rd->sel_dst, rd->sel_mode,
        rd->sel_idx0, rd->sel_okey, rd->sel_oidx, rd->sel_cap, &rd->sel_ng);
  if (rd && rd->max_src) {
    rd->max_key = llmk__tkp_max_key_scalar(rd->max_src, dt, n, &rd->max_min);
  }
}

const llmk__tkp_kernels llmk__tkp_kernels_scalar = {
    .isa = LLMK_ISA_SCALAR,
    .keys = keys_scalar,
    .gather_bin = llmk__tkp_gather_bin_scalar,
    .masses = llmk__tkp_masses_scalar,
    .max_key = llmk__tkp_max_key_scalar,
    .gather = llmk__tkp_gather_scalar,
    .select = llmk__tkp_select_scalar,
    .count_eq = llmk__tkp_count_eq_scalar,
    .find_eq = llmk__tkp_find_eq_scalar,
    .mass_bins = llmk__tkp_mass_bins_scalar};
