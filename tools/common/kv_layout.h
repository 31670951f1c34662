/* SPDX-License-Identifier: Apache-2.0 */
/* The shape of a paged KV cache of each layout (include/llmk/kv_cache.h), for the tools
 * that allocate caches: llmk bench and llmk_ab. esz: the cache's element size. */
#ifndef LLMK_TOOLS_KV_LAYOUT_H
#define LLMK_TOOLS_KV_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "llmk/kv_cache.h"

static inline void tool_kv_cache_shape(llmk_kv_layout layout, int64_t esz, bool key,
                                       int64_t nb, int64_t bs, int64_t H, int64_t D,
                                       int *rank, int64_t *shape) {
  int64_t x = 16 / esz, ld = 32 / esz;
  if (layout == LLMK_KV_BLOCKS) {
    *rank = 4;
    int64_t s[4] = {nb, bs, H, D};
    memcpy(shape, s, sizeof s);
  } else if (layout == LLMK_KV_XSPLIT && key) {
    *rank = 5;
    int64_t s[5] = {nb, H, D / x, bs, x};
    memcpy(shape, s, sizeof s);
  } else if (layout == LLMK_KV_XSPLIT) {
    *rank = 4;
    int64_t s[4] = {nb, H, D, bs};
    memcpy(shape, s, sizeof s);
  } else {
    *rank = 4;
    int64_t s[4] = {nb, H * D / ld, bs, ld};
    memcpy(shape, s, sizeof s);
  }
}

#endif
