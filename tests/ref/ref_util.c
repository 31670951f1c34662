/* SPDX-License-Identifier: Apache-2.0 */
#include "ref_util.h"

#include <math.h>
#include <string.h>

size_t ref_dtype_size(llmk_dtype dt) {
  switch (dt) {
    case LLMK_F32:
    case LLMK_I32:
      return 4;
    case LLMK_F16:
    case LLMK_BF16:
      return 2;
    case LLMK_I8:
    case LLMK_U8:
    case LLMK_FP8_E4M3FN:
    case LLMK_FP8_E5M2:
      return 1;
    case LLMK_I64:
      return 8;
    default:
      return 0;
  }
}

uint64_t ref_load_bits(const void *base, int64_t elem, size_t es) {
  const unsigned char *p = (const unsigned char *)base + elem * (int64_t)es;
  switch (es) {
    case 1:
      return *p;
    case 2: {
      uint16_t h;
      memcpy(&h, p, 2);
      return h;
    }
    case 4: {
      uint32_t w;
      memcpy(&w, p, 4);
      return w;
    }
    default: {
      uint64_t v;
      memcpy(&v, p, 8);
      return v;
    }
  }
}

void ref_store_bits(void *base, int64_t elem, size_t es, uint64_t bits) {
  unsigned char *p = (unsigned char *)base + elem * (int64_t)es;
  switch (es) {
    case 1:
      *p = (unsigned char)bits;
      break;
    case 2: {
      uint16_t h = (uint16_t)bits;
      memcpy(p, &h, 2);
      break;
    }
    case 4: {
      uint32_t w = (uint32_t)bits;
      memcpy(p, &w, 4);
      break;
    }
    default:
      memcpy(p, &bits, 8);
      break;
  }
}

int64_t ref_load_index(const void *base, int64_t elem, llmk_dtype dt) {
  if (dt == LLMK_I32) return (int32_t)(uint32_t)ref_load_bits(base, elem, 4);
  return (int64_t)ref_load_bits(base, elem, 8);
}

double ref_ulp(llmk_dtype dt, double v) {
  int p = dt == LLMK_F32 ? 23 : dt == LLMK_F16 ? 10 : 7;
  int emin = dt == LLMK_F32 ? -126 : dt == LLMK_F16 ? -14 : -126;
  v = fabs(v);
  int e = emin;
  if (v > 0) {
    (void)frexp(v, &e);
    e -= 1; /* v in [2^e, 2^(e+1)) */
    if (e < emin) e = emin;
  }
  return ldexp(1.0, e - p);
}
