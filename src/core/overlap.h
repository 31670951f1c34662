/* SPDX-License-Identifier: Apache-2.0 */
/* Whether tensors share memory: the rule that a tensor an op writes may not overlap any
 * other tensor of the call (nor itself), unless the op's doc names that in-place pair.
 * Phase 1 checks it, so that index values checked in phase 2 cannot change while the
 * outputs are written (docs/api.md, "Memory"). */
#ifndef LLMK_CORE_OVERLAP_H
#define LLMK_CORE_OVERLAP_H

#include <stdbool.h>

#include "core/internal.h"

typedef enum llmk__overlap {
  LLMK__DISJOINT = 0,
  LLMK__OVERLAP = 1,
  LLMK__UNDECIDED = 2, /* too many pieces to decide within the work bound: refused */
} llmk__overlap;

/* Whether a and b (checked by llmk__check_tensor) share a byte. Exact for strided views;
 * a few compares when their byte spans are disjoint. */
llmk__overlap llmk__tensors_overlap(const llmk_tensor *a, const llmk_tensor *b);
/* Whether two elements of t share a byte (a zero stride over an extent > 1, or strides
 * that do not nest: then refused for a written tensor). */
bool llmk__tensor_self_overlaps(const llmk_tensor *t);

/* Whether a and b are the same view (data, dtype, shape and strides): the in-place
 * pairs the ops allow are of this kind. */
bool llmk__same_view(const llmk_tensor *a, const llmk_tensor *b);

/* One tensor of a call; t NULL: absent. */
typedef struct llmk__tref {
  const llmk_tensor *t;
  const char *name;
  bool written;
} llmk__tref;

/* LLMK_ERROR_OVERLAP (message naming both tensors) unless no written tensor of ts
 * self-overlaps or overlaps another tensor of ts, except the pairs in allowed (indices
 * into ts, in either order). */
llmk_status llmk__check_overlaps(const char *op, const llmk__tref *ts, int n,
                                 const int (*allowed)[2], int n_allowed);

#endif
