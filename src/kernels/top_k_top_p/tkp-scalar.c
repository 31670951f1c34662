#include "kernels/top_k_top_p/tkp.h"

void llmk__tkp_masses_scalar(const float *x, const uint32_t *keys, size_t n, float max,
                          uint32_t min_key, float lo, float scale, uint64_t *mass,
                          uint16_t *bins, uint64_t *total_lo, uint64_t *total_hi) {
  uint64_t tl = 0, th = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t m = 0;
    bool live = keys[i] >= min_key;
    if (live) m = llmk__mass_of(llmk__exp_nonpos(x[i] - max));
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

static size_t gather_ge_scalar(const uint32_t *keys, size_t n, uint32_t t, uint32_t *out,
                               size_t cap) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    if (keys[i] >= t) {
      if (c < cap) out[c] = keys[i];
      c++;
    }
  return c;
}

void llmk__tkp_mass_above_scalar(const float *x, const uint32_t *keys, size_t n, float max,
                              uint32_t min_key, uint32_t tau, uint64_t *out) {
  for (size_t i = 0; i < n; i++) {
    if (keys[i] < min_key) continue;
    uint64_t m = llmk__mass_of(llmk__exp_nonpos(x[i] - max));
    out[0] += m & 0xffffffffu;
    out[1] += m >> 32;
    if (keys[i] >= tau) {
      out[2] += m & 0xffffffffu;
      out[3] += m >> 32;
      out[4]++;
    }
  }
}

size_t llmk__tkp_gather_bin_scalar(const uint16_t *bins, const float *x, const uint32_t *keys,
                                size_t n, uint16_t bin, float *ox, uint32_t *ok, size_t cap) {
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

static size_t select_scalar(const uint32_t *keys, size_t n, uint32_t t, const void *src,
                            void *dst, size_t esz, uint32_t neg_inf, bool in_place) {
  size_t kept = 0;
  if (esz == 4) {
    const uint32_t *s = src;
    uint32_t *d = dst;
    for (size_t i = 0; i < n; i++) {
      bool keep = keys[i] >= t;
      kept += keep;
      if (!keep) d[i] = neg_inf;
      else if (!in_place) d[i] = s[i];
    }
  } else {
    const uint16_t *s = src;
    uint16_t *d = dst;
    for (size_t i = 0; i < n; i++) {
      bool keep = keys[i] >= t;
      kept += keep;
      if (!keep) d[i] = (uint16_t)neg_inf;
      else if (!in_place) d[i] = s[i];
    }
  }
  return kept;
}

size_t llmk__tkp_count_eq_scalar(const uint32_t *keys, size_t n, uint32_t key) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += keys[i] == key;
  return c;
}

size_t llmk__tkp_find_eq_scalar(const uint32_t *keys, size_t n, uint32_t key, size_t nth) {
  for (size_t i = 0, seen = 0; i < n; i++)
    if (keys[i] == key && ++seen == nth) return i;
  return n;
}

const llmk__tkp_kernels llmk__tkp_kernels_scalar = {.isa = LLMK_ISA_SCALAR,
                                                    .keys = keys_scalar,
                                                    .gather_ge = gather_ge_scalar,
                                                    .gather_bin = llmk__tkp_gather_bin_scalar,
                                                    .mass_above = llmk__tkp_mass_above_scalar,
                                                    .select = select_scalar,
                                                    .masses = llmk__tkp_masses_scalar,
                                                    .count_eq = llmk__tkp_count_eq_scalar,
                                                    .find_eq = llmk__tkp_find_eq_scalar};
