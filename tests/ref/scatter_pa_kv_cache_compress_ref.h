/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Naive reference of the compressed writes of scatter_pa_kv_cache (CANN's
 * aclnnScatterPaKvCache scatterMode "Alibi", "Rope", "Omni"), written from CANN's
 * description of the scenarios, not from the library: for each (sequence, head) pair
 * the list of source rows is built first (a token, or the mean of a window), then the
 * rows go to consecutive slots one element at a time. Tensors are plain llmk_tensor
 * descriptors; nothing of the library is called.
 */
#ifndef LLMK_SCATTER_PA_KV_CACHE_COMPRESS_REF_H
#define LLMK_SCATTER_PA_KV_CACHE_COMPRESS_REF_H

#include "llmk/types.h"

enum { CZREF_ALIBI = 1, CZREF_ROPE = 2, CZREF_OMNI = 3 };

/* Writes key (and value, if not NULL) into the caches as the mode says. Returns 0, or
 * -1 (nothing written) where an index value is outside what the mode allows. */
int czref_scatter(int mode, const llmk_tensor *key, const llmk_tensor *value,
                  llmk_tensor *key_cache, llmk_tensor *value_cache,
                  const llmk_tensor *slots, const llmk_tensor *lens,
                  const llmk_tensor *offs, const llmk_tensor *seq_lens);

#endif
